//! The context of one body (a tick or a function): locals and their
//! scopes, name resolution inside it, `random()`, and expected types.

use super::*;

impl<'e> BodyCx<'e> {
    pub(super) fn new(
        env: &'e mut Env,
        module: usize,
        params: Params,
        unit: Option<UnitInfo>,
        kind: BodyKind,
    ) -> Self {
        BodyCx {
            env,
            module,
            params,
            unit,
            kind,
            locals: Vec::new(),
            scopes: Vec::new(),
            used_members: FxHashSet::default(),
            stage_writes: HashMap::new(),
            random_sites: 0,
            local_reads: Vec::new(),
            lets: Vec::new(),
            loops: Vec::new(),
            pipe_exprs: HashMap::new(),
        }
    }

    /// W0304 for every `let` whose value is never read; called once the
    /// whole body is checked.
    pub(super) fn lint_unused_lets(&mut self) {
        for &(l, span) in &self.lets {
            if self.local_reads[l] == 0 {
                self.env.diags.push(
                    TypeError::UnusedLocal {
                        span,
                        name: self.locals[l].name.clone(),
                    }
                    .into_diagnostic(),
                );
            }
        }
    }

    pub(super) fn err(&mut self, e: impl IntoDiagnostic) {
        self.env.diags.push(e.into_diagnostic());
    }

    /// Checks a compile-time integer expression: unsuffixed literals alone
    /// take `i64`, anything else its own type.
    pub(super) fn check_integer(&mut self, e: &ast::Expr) -> Expr {
        if self.is_untyped(e) {
            let i64_type = Type::Int {
                signed: true,
                width: 64,
            };
            self.check(e, Some(&i64_type))
        } else {
            self.check(e, None)
        }
    }

    /// A compile-time integer written inside a body: checked here, so that a
    /// local or register in it is reported as "not constant" rather than unknown.
    pub(super) fn const_here(&mut self, e: &ast::Expr, what: &'static str) -> Option<i128> {
        let te = self.check_integer(e);
        if te.ty == Type::Error {
            return None;
        }
        if !te.ty.is_int() {
            self.err(TypeError::Mismatch {
                span: e.span,
                expected: "an integer".into(),
                found: te.ty.to_string(),
            });
            return None;
        }
        match eval(&te) {
            Ok(v) => v.as_int(),
            Err(_) => {
                self.err(TypeError::NotConstant { span: e.span, what });
                None
            }
        }
    }

    /// Resolves a type written inside a body (array lengths may not read state).
    pub(super) fn type_here(&mut self, t: &ast::TypeExpr) -> Type {
        match &t.kind {
            ast::TypeExprKind::Array(elem, len) => {
                let elem = self.type_here(elem);
                match self.const_here(len, "an array length") {
                    Some(n)
                        if (1..=1 << 20).contains(&n)
                            && elem.bit_width().saturating_mul(n as u64) <= MAX_TYPE_BITS =>
                    {
                        Type::Array(Box::new(elem), n as u32)
                    }
                    Some(n) if (1..=1 << 20).contains(&n) => {
                        self.err(TypeError::OutOfRange {
                            span: len.span,
                            what: "array length",
                            value: n,
                            range: "small enough that the whole array has at most 2^24 bits",
                        });
                        Type::Error
                    }
                    Some(n) => {
                        self.err(TypeError::OutOfRange {
                            span: len.span,
                            what: "array length",
                            value: n,
                            range: "in 1..=1048576",
                        });
                        Type::Error
                    }
                    None => Type::Error,
                }
            }
            ast::TypeExprKind::SizedInt { signed, width } => {
                let n = self.const_here(width, "an integer width");
                match super::env::sized_int(*signed, n, width.span) {
                    Ok(t) => t,
                    Err(e) => {
                        if let Some(e) = e {
                            self.err(e);
                        }
                        Type::Error
                    }
                }
            }
            ast::TypeExprKind::Named(_) | ast::TypeExprKind::Generic { .. } => {
                self.env.resolve_type(self.module, &self.params, t)
            }
        }
    }

    pub(super) fn declare(&mut self, name: &ast::Ident, ty: Type) -> usize {
        let id = self.new_local(&name.name, ty);
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.name.clone(), id);
        }
        id
    }

    /// A new local, in no scope: the one place that grows `locals`, so its
    /// read counts (`local_reads`) always have an entry per local.
    pub(super) fn new_local(&mut self, name: &str, ty: Type) -> usize {
        let id = self.locals.len();
        self.locals.push(d::Local {
            name: name.to_string(),
            ty,
        });
        self.local_reads.push(0);
        id
    }

    pub(super) fn resolve(&mut self, ident: &ast::Ident) -> Resolved {
        let n = ident.name.as_str();
        for s in self.scopes.iter().rev() {
            if let Some(id) = s.get(n) {
                self.local_reads[*id] += 1;
                return Resolved::Local(*id);
            }
        }
        if let Some((t, v)) = self.params.get(n) {
            return Resolved::Value(t.clone(), v.clone());
        }
        if let Some(u) = &self.unit {
            let found = u
                .ports
                .iter()
                .position(|p| p.name == n)
                .map(|i| (Member::Port, i))
                .or_else(|| {
                    u.port_arrays
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::PortArray, i))
                })
                .or_else(|| {
                    u.regs
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::Reg, i))
                })
                .or_else(|| {
                    u.stages
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::Stage, i))
                })
                .or_else(|| {
                    u.counters
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::Counter, i))
                });
            if let Some((m, i)) = found {
                self.used_members.insert((m, i));
                return Resolved::Member(m, i);
            }
        }
        match self.env.lookup(self.module, n) {
            Some(item) => match &self.env.items[item].item {
                Item::Const(_) => match self.env.const_value(item, ident.span) {
                    Some((t, v)) => Resolved::Value(t, v),
                    None => Resolved::Value(Type::Error, Value::Int(0)),
                },
                other => Resolved::Other(item_kind(other)),
            },
            None => Resolved::Unknown,
        }
    }

    pub(super) fn unknown_name(&mut self, ident: &ast::Ident) {
        let mut extra: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        extra.extend(self.params.keys().cloned());
        if let Some(u) = &self.unit {
            extra.extend(u.ports.iter().map(|p| p.name.clone()));
            extra.extend(u.regs.iter().map(|p| p.name.clone()));
            extra.extend(u.stages.iter().map(|p| p.name.clone()));
            extra.extend(u.counters.iter().map(|p| p.name.clone()));
        }
        self.env.unknown(self.module, ident, "name", &extra);
    }

    /// Whether an expression is built from unsuffixed literals only.
    pub(super) fn is_untyped(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            A::Int(_, None) => true,
            // `random()` takes its type from the context, like a literal.
            // `clog2(n)` is a constant like a literal.
            A::Call(f, args) => (args.is_empty() && self.is_random(f)) || self.is_clog2(f),
            A::Unary(UnOp::Neg | UnOp::BitNot, a) => self.is_untyped(a),
            A::Binary(op, a, b) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                self.is_untyped(a) && (matches!(op, BinOp::Shl | BinOp::Shr) || self.is_untyped(b))
            }
            _ => false,
        }
    }

    /// Whether a call of `f` is the `clog2` builtin (an item of that name
    /// in scope shadows it).
    pub(super) fn is_clog2(&self, f: &ast::Ident) -> bool {
        f.name == "clog2" && !self.env.scopes[self.module].contains_key(&f.name)
    }

    /// Whether a call of `f` is the `random()` builtin: an item of that
    /// name in scope shadows it.
    pub(super) fn is_random(&self, f: &ast::Ident) -> bool {
        f.name == "random" && !self.env.scopes[self.module].contains_key(&f.name)
    }

    /// `random()`: a tick-only value of the integer or `bool` type its
    /// context expects (E0325 otherwise), numbered by call site.
    pub(super) fn random(&mut self, args: &[ast::Expr], want: Option<&Type>, span: Span) -> Expr {
        if self.kind != BodyKind::Tick {
            self.err(TypeError::UnitOpInFn {
                span,
                what: "`random()`",
            });
            return err_expr(span);
        }
        if !args.is_empty() {
            self.err(TypeError::ArgCount {
                span,
                what: "`random()`".into(),
                expected: 0,
                found: args.len(),
            });
            return err_expr(span);
        }
        let ty = match want {
            Some(Type::Error) => return err_expr(span),
            Some(t) if t.is_int() || *t == Type::Bool => t.clone(),
            other => {
                self.err(TypeError::RandomType {
                    span,
                    found: other.map(|t| t.to_string()),
                });
                return err_expr(span);
            }
        };
        let site = self.random_sites;
        self.random_sites += 1;
        Expr {
            kind: ExprKind::Random(site),
            ty,
            span,
        }
    }

    pub(super) fn expect(&mut self, e: Expr, want: Option<&Type>) -> Expr {
        if let Some(w) = want
            && *w != e.ty
            && e.ty != Type::Error
            && *w != Type::Error
        {
            self.err(TypeError::Mismatch {
                span: e.span,
                expected: w.to_string(),
                found: e.ty.to_string(),
            });
            return err_expr(e.span);
        }
        e
    }
}
