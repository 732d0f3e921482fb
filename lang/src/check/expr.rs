//! Expressions: literals, names, operators, casts, fields, indices,
//! calls, struct and array values.

use super::*;

impl<'e> BodyCx<'e> {
    /// Checks an expression, with the type the context expects if it knows one.
    pub(super) fn check(&mut self, e: &ast::Expr, want: Option<&Type>) -> Expr {
        let span = e.span;
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        match &e.kind {
            A::Int(v, suffix) => self.int_literal(v, suffix, want, span),
            A::Bool(b) => self.expect(mk(ExprKind::Const(Value::Bool(*b)), Type::Bool), want),
            A::Name(id) => self.name(id, want, span),
            A::EnumValue(en, var) => self.enum_value(en, var, want, span),
            A::Unary(op, a) => self.unary(op, a, want, span),
            A::Binary(op, l, r) => self.binary(*op, l, r, want, span),
            A::Cast(a, t) => self.cast(a, t, want, span),
            A::Field(a, f) => self.field(a, f, want, span),
            A::Index(a, i) => self.index_expr(a, i, want, span),
            A::Method(recv, m, args) => {
                let r = self.method(recv, m, args, span);
                match r {
                    MethodResult::Value(e) => self.expect(e, want),
                    MethodResult::Stmt(_) => {
                        self.err(TypeError::NoValue {
                            span,
                            method: m.name.clone(),
                        });
                        err_expr(span)
                    }
                    MethodResult::Error => err_expr(span),
                }
            }
            A::Call(f, args) => self.call(f, args, want, span),
            A::StructLit(name, fields) => self.struct_literal(name, fields, want, span),
            A::ArrayLit(elems) => self.array_literal(elems, want, span),
            A::ArrayRepeat(v, n) => self.array_repeat(v, n, want, span),
            A::Slice(a, kind, l, r) => self.slice((a, *kind), (l, r), want, span),
            A::Concat(parts) => self.concat(None, parts, want, span),
            A::Replicate(n, parts) => self.concat(Some(n), parts, want, span),
            A::Str(_) => {
                self.err(TypeError::StringValue { span });
                err_expr(span)
            }
            // A type given for a value parameter (`N = u<8>`).
            A::TypeArg(t) => {
                let name = self.type_here(t).to_string();
                self.err(ResolveError::WrongKind {
                    span,
                    name,
                    expected: "value",
                    found: "type",
                });
                err_expr(span)
            }
        }
    }

    /// An integer literal, typed by its suffix or the context.
    fn int_literal(
        &mut self,
        v: &BigInt,
        suffix: &Option<(bool, u32)>,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let ty = match (suffix, want) {
            (Some((signed, width)), _) => Type::Int {
                signed: *signed,
                width: *width,
            },
            (None, Some(t)) if t.is_int() => t.clone(),
            (None, Some(Type::Error)) => return err_expr(span),
            (None, Some(t)) => {
                self.err(TypeError::Mismatch {
                    span,
                    expected: t.to_string(),
                    found: "integer".into(),
                });
                return err_expr(span);
            }
            (None, None) => {
                self.err(TypeError::CannotInfer { span });
                return err_expr(span);
            }
        };
        if !fits_big(v, &ty) {
            self.err(TypeError::LiteralOverflow {
                span,
                value: v.clone(),
                ty: ty.to_string(),
            });
            return err_expr(span);
        }
        self.expect(mk(ExprKind::Const(Value::int(v.clone())), ty), want)
    }

    /// A name: a local, a constant or parameter, or a unit member.
    fn name(&mut self, id: &ast::Ident, want: Option<&Type>, span: Span) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        match self.resolve(id) {
            Resolved::Local(l) => {
                let ty = self.locals[l].ty.clone();
                self.expect(mk(ExprKind::Local(l), ty), want)
            }
            Resolved::Value(_, Value::Type(_)) => {
                self.err(ResolveError::WrongKind {
                    span,
                    name: id.name.clone(),
                    expected: "value",
                    found: "type parameter",
                });
                err_expr(span)
            }
            Resolved::Value(t, v) => {
                if t == Type::Error {
                    return err_expr(span);
                }
                self.expect(mk(ExprKind::Const(v), t), want)
            }
            Resolved::Member(Member::Reg, i) => {
                let ty = self
                    .unit
                    .as_ref()
                    .map_or(Type::Error, |u| u.regs[i].ty.clone());
                self.expect(mk(ExprKind::Reg(i), ty), want)
            }
            Resolved::Member(m, _) => {
                let (what, help) = match m {
                    Member::Port => ("port", PORT_HELP),
                    Member::PortArray => (
                        "port array",
                        "name one element and use its methods: `rx[i].recv()`, `tx[i].send(v)`",
                    ),
                    Member::Stage => (
                        "stage register",
                        "read a pipe with `s.read(p)` and test it with `s.valid(p)`",
                    ),
                    _ => (
                        "counter",
                        "counters are written with `+=` and reported at the end of a run",
                    ),
                };
                self.err(TypeError::NotAValue {
                    span,
                    name: id.name.clone(),
                    what,
                    help,
                });
                err_expr(span)
            }
            Resolved::Other(what) => {
                self.err(TypeError::NotAValue {
                    span,
                    name: id.name.clone(),
                    what,
                    help: "only constants, parameters, locals and registers have values",
                });
                err_expr(span)
            }
            Resolved::Unknown => {
                self.unknown_name(id);
                err_expr(span)
            }
        }
    }

    /// `E::V`.
    fn enum_value(
        &mut self,
        en: &ast::Ident,
        var: &ast::Ident,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let Some(item) = self.env.lookup(self.module, &en.name) else {
            // `m::K`: an item of a module a `use` names, when no item of
            // that name is in scope (an enum's value wins otherwise).
            if self
                .env
                .aliases
                .contains_key(&(self.module, en.name.clone()))
            {
                let path = ast::Ident {
                    name: format!("{}::{}", en.name, var.name),
                    span: en.span.to(var.span),
                };
                let e = ast::Expr {
                    kind: A::Name(path),
                    span,
                };
                return self.check(&e, want);
            }
            self.env.unknown(self.module, en, "enum", &[]);
            return err_expr(span);
        };
        let ty = self.env.item_type(item, en);
        let Type::Enum(et) = &ty else {
            return err_expr(span);
        };
        match et.variants.iter().position(|v| *v == var.name) {
            Some(i) => self.expect(mk(ExprKind::Const(Value::Int(i as i128)), ty.clone()), want),
            None => {
                let suggestion = did_you_mean(&var.name, et.variants.iter().map(String::as_str))
                    .map(str::to_string);
                self.err(ResolveError::UnknownName {
                    span: var.span,
                    name: format!("{}::{}", en.name, var.name),
                    kind: "variant",
                    suggestion,
                });
                err_expr(span)
            }
        }
    }

    /// `-a`, `!a`, `~a`.
    fn unary(&mut self, op: &UnOp, a: &ast::Expr, want: Option<&Type>, span: Span) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        if op.is_reduction() {
            return self.reduction(*op, a, want, span);
        }
        let a = self.check(a, want);
        if a.ty == Type::Error {
            return a;
        }
        let ok = match op {
            UnOp::Not => a.ty == Type::Bool,
            _ => a.ty.is_int(),
        };
        if !ok {
            self.err(TypeError::BadOperand {
                span,
                op: op.symbol().into(),
                ty: a.ty.to_string(),
            });
            return err_expr(span);
        }
        let ty = a.ty.clone();
        mk(ExprKind::Unary(*op, Box::new(a)), ty)
    }

    /// `a as T`.
    fn cast(&mut self, a: &ast::Expr, t: &ast::TypeExpr, want: Option<&Type>, span: Span) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let to = self.env.resolve_type(self.module, &self.params, t);
        let a = if self.is_untyped(a) {
            self.check(a, Some(&to))
        } else {
            self.check(a, None)
        };
        if a.ty == Type::Error || to == Type::Error {
            return err_expr(span);
        }
        // A struct and an integer of its total width (`check/packing.rs`).
        let struct_width = |t: &Type| match t {
            Type::Struct(_) => packing::packed_width(t),
            _ => None,
        };
        match (&a.ty, &to) {
            (Type::Struct(_), Type::Int { width, .. }) if struct_width(&a.ty) == Some(*width) => {
                return self.expect(packing::struct_to_int(a, to, span), want);
            }
            (Type::Int { width, .. }, Type::Struct(_)) if struct_width(&to) == Some(*width) => {
                return self.expect(packing::int_to_struct(a, to, span), want);
            }
            (Type::Struct(_), _) | (_, Type::Struct(_)) => {
                let (s, other) = match &a.ty {
                    Type::Struct(_) => (&a.ty, &to),
                    _ => (&to, &a.ty),
                };
                self.err(TypeError::StructCast {
                    span,
                    from: a.ty.to_string(),
                    to: to.to_string(),
                    bits: struct_width(s),
                    other_int: other.is_int(),
                });
                return err_expr(span);
            }
            _ => {}
        }
        let ok = to.is_int() && matches!(a.ty, Type::Int { .. } | Type::Bool | Type::Enum(_));
        if !ok {
            self.err(TypeError::BadCast {
                span,
                from: a.ty.to_string(),
                to: to.to_string(),
            });
            return err_expr(span);
        }
        self.expect(mk(ExprKind::Cast(Box::new(a)), to), want)
    }

    /// `a.f` on a struct value.
    fn field(&mut self, a: &ast::Expr, f: &ast::Ident, want: Option<&Type>, span: Span) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        // `p.count` with no `p` here is most often another instance's
        // register: say how units talk rather than guess a similar name.
        if let A::Name(id) = &a.kind
            && matches!(self.resolve(id), Resolved::Unknown)
        {
            // A name whose item failed to parse was reported already.
            if self.env.broken.contains(&id.name) {
                return err_expr(span);
            }
            self.err(ResolveError::ForeignMember {
                span: id.span,
                name: id.name.clone(),
                field: f.name.clone(),
            });
            return err_expr(span);
        }
        let a = self.check(a, None);
        match &a.ty {
            Type::Struct(st) => match st.fields.iter().position(|(n, _)| *n == f.name) {
                Some(i) => {
                    let ty = st.fields[i].1.clone();
                    self.expect(mk(ExprKind::Field(Box::new(a), i), ty), want)
                }
                None => {
                    let suggestion =
                        did_you_mean(&f.name, st.fields.iter().map(|(n, _)| n.as_str()))
                            .map(str::to_string);
                    self.err(TypeError::UnknownField {
                        span: f.span,
                        name: f.name.clone(),
                        ty: st.name.clone(),
                        suggestion,
                    });
                    err_expr(span)
                }
            },
            Type::Error => err_expr(span),
            other => {
                self.err(TypeError::UnknownField {
                    span: f.span,
                    name: f.name.clone(),
                    ty: other.to_string(),
                    suggestion: None,
                });
                err_expr(span)
            }
        }
    }

    /// `a[i]` on an array value, or bit `i` of an integer.
    fn index_expr(
        &mut self,
        a: &ast::Expr,
        i: &ast::Expr,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let a = self.check(a, None);
        if let Type::Int { width, .. } = a.ty {
            return self.bit_select(a, width, i, want, span);
        }
        let idx = self.index(i);
        match &a.ty {
            Type::Array(t, n) => {
                let ty = (**t).clone();
                if let ExprKind::Const(Value::Int(k)) = idx.kind
                    && k >= i128::from(*n)
                {
                    self.err(TypeError::IndexOutOfRange {
                        span: i.span,
                        index: k,
                        len: u64::from(*n),
                    });
                }
                self.expect(mk(ExprKind::Index(Box::new(a), Box::new(idx)), ty), want)
            }
            Type::Error => err_expr(span),
            other => {
                self.err(TypeError::BadOperand {
                    span,
                    op: "[]".into(),
                    ty: other.to_string(),
                });
                err_expr(span)
            }
        }
    }

    /// A function call (or `random()`).
    fn call(
        &mut self,
        f: &ast::Ident,
        args: &[ast::Expr],
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        if self.is_clog2(f) {
            return self.clog2(args, want, span);
        }
        if self.kind == BodyKind::Const {
            self.err(TypeError::NotConstant {
                span,
                what: "a function call in a constant",
            });
            return err_expr(span);
        }
        if self.is_random(f) {
            return self.random(args, want, span);
        }
        if self.is_print(f) {
            self.err(TypeError::NoValue {
                span,
                method: "print".into(),
            });
            return err_expr(span);
        }
        let Some(item) = self.env.lookup(self.module, &f.name) else {
            self.env.unknown(self.module, f, "function", &[]);
            return err_expr(span);
        };
        if !matches!(self.env.items[item].item, Item::Fn(_)) {
            let found = item_kind(&self.env.items[item].item);
            self.err(ResolveError::WrongKind {
                span: f.span,
                name: f.name.clone(),
                expected: "function",
                found,
            });
            return err_expr(span);
        }
        let Item::Fn(def) = &self.env.items[item].item else {
            return err_expr(span);
        };
        let (expected, generic) = (def.params.len(), !def.generics.is_empty());
        if expected != args.len() {
            self.err(TypeError::ArgCount {
                span,
                what: format!("function `{}`", f.name),
                expected,
                found: args.len(),
            });
            return err_expr(span);
        }
        let (targs, params, ret) = if !generic {
            let Some((ps, ret)) = self.env.fn_signature(item, &Params::new()) else {
                return err_expr(span);
            };
            let targs: Vec<Expr> = args
                .iter()
                .zip(&ps)
                .map(|(a, t)| self.check(a, Some(t)))
                .collect();
            (targs, Params::new(), ret)
        } else {
            let Item::Fn(def) = self.env.items[item].item.clone() else {
                return err_expr(span);
            };
            match self.generic_call(item, &def, args, span) {
                Some(call) => call,
                None => return err_expr(span),
            }
        };
        let Some(fid) = self.env.function(item, &params, f.span) else {
            return err_expr(span);
        };
        if targs.iter().any(|a| a.ty == Type::Error) {
            return err_expr(span);
        }
        self.expect(mk(ExprKind::Call(fid, targs), ret), want)
    }

    /// `S { f: e, ... }`.
    fn struct_literal(
        &mut self,
        name: &ast::Ident,
        fields: &[(ast::Ident, ast::Expr)],
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let Some(item) = self.env.lookup(self.module, &name.name) else {
            self.env.unknown(self.module, name, "struct", &[]);
            return err_expr(span);
        };
        let ty = match &self.env.items[item].item {
            // A generic struct's literal has the type its context wants
            // (`let p: Pair<T = u8> = Pair { ... }`), or its defaults.
            Item::Struct(s) if !s.params.is_empty() => match want {
                Some(Type::Struct(w))
                    if w.name == name.name || w.name.starts_with(&format!("{}<", name.name)) =>
                {
                    Type::Struct(w.clone())
                }
                _ if s.params.iter().all(|g| g.default.is_some()) => self.env.item_type(item, name),
                _ => {
                    self.err(TypeError::UnknownStructParams {
                        span: name.span,
                        name: name.name.clone(),
                    });
                    return err_expr(span);
                }
            },
            _ => self.env.item_type(item, name),
        };
        let Type::Struct(st) = &ty else {
            if ty != Type::Error {
                self.err(ResolveError::WrongKind {
                    span: name.span,
                    name: name.name.clone(),
                    expected: "struct",
                    found: "type",
                });
            }
            return err_expr(span);
        };
        let mut vals: Vec<Option<Expr>> = vec![None; st.fields.len()];
        let mut bad = false;
        for (fname, fe) in fields {
            match st.fields.iter().position(|(n, _)| *n == fname.name) {
                Some(i) => {
                    let v = self.check(fe, Some(&st.fields[i].1));
                    bad |= v.ty == Type::Error;
                    if vals[i].is_some() {
                        self.err(TypeError::StructLiteral {
                            span: fname.span,
                            message: format!("field `{}` is given twice", fname.name),
                        });
                        bad = true;
                    }
                    vals[i] = Some(v);
                }
                None => {
                    let suggestion =
                        did_you_mean(&fname.name, st.fields.iter().map(|(n, _)| n.as_str()))
                            .map(str::to_string);
                    self.err(TypeError::UnknownField {
                        span: fname.span,
                        name: fname.name.clone(),
                        ty: st.name.clone(),
                        suggestion,
                    });
                    bad = true;
                }
            }
        }
        let missing: Vec<&str> = st
            .fields
            .iter()
            .zip(&vals)
            .filter(|(_, v)| v.is_none())
            .map(|((n, _), _)| n.as_str())
            .collect();
        if !missing.is_empty() && !bad {
            self.err(TypeError::StructLiteral {
                span,
                message: format!("missing field(s) {} of `{}`", missing.join(", "), st.name),
            });
            return err_expr(span);
        }
        if bad {
            return err_expr(span);
        }
        let vals = vals
            .into_iter()
            .map(|v| v.expect("every field given"))
            .collect();
        self.expect(mk(ExprKind::StructLit(vals), ty.clone()), want)
    }

    /// `[a, b, ...]`.
    fn array_literal(&mut self, elems: &[ast::Expr], want: Option<&Type>, span: Span) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let elem_want = match want {
            Some(Type::Array(t, _)) => Some((**t).clone()),
            Some(Type::Error) => Some(Type::Error),
            _ => None,
        };
        let mut out = Vec::new();
        let mut et = elem_want;
        for el in elems {
            let v = self.check(el, et.as_ref());
            if et.is_none() && v.ty != Type::Error {
                et = Some(v.ty.clone());
            }
            out.push(v);
        }
        if out.iter().any(|v| v.ty == Type::Error) || elems.is_empty() {
            if elems.is_empty() {
                self.err(TypeError::OutOfRange {
                    span,
                    what: "array length",
                    value: 0,
                    range: "in 1..=1048576",
                });
            }
            return err_expr(span);
        }
        let ty = Type::Array(Box::new(et.unwrap_or(Type::Error)), out.len() as u32);
        self.expect(mk(ExprKind::ArrayLit(out), ty), want)
    }

    /// `[v; N]`.
    fn array_repeat(
        &mut self,
        v: &ast::Expr,
        n: &ast::Expr,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        let elem_want = match want {
            Some(Type::Array(t, _)) => Some((**t).clone()),
            Some(Type::Error) => Some(Type::Error),
            _ => None,
        };
        let v = self.check(v, elem_want.as_ref());
        let count = self.const_here(n, "an array length");
        match count {
            Some(c)
                if (1..=1 << 20).contains(&c)
                    && v.ty != Type::Error
                    && v.ty.bit_width().saturating_mul(c as u64) > MAX_TYPE_BITS =>
            {
                self.err(TypeError::OutOfRange {
                    span: n.span,
                    what: "array length",
                    value: c,
                    range: "small enough that the whole array has at most 2^24 bits",
                });
                err_expr(span)
            }
            Some(c) if (1..=1 << 20).contains(&c) && v.ty != Type::Error => {
                let ty = Type::Array(Box::new(v.ty.clone()), c as u32);
                self.expect(mk(ExprKind::ArrayRepeat(Box::new(v), c as u32), ty), want)
            }
            Some(c) if !(1..=1 << 20).contains(&c) => {
                self.err(TypeError::OutOfRange {
                    span: n.span,
                    what: "array length",
                    value: c,
                    range: "in 1..=1048576",
                });
                err_expr(span)
            }
            _ => err_expr(span),
        }
    }

    /// `clog2(n)`: the bits needed for `n` distinct values (the ceiling
    /// of log2 `n`, 0 for `n <= 1`), of a constant `n`, as a constant of
    /// the type the context wants (`u32` with none).
    fn clog2(&mut self, args: &[ast::Expr], want: Option<&Type>, span: Span) -> Expr {
        let [n] = args else {
            self.err(TypeError::ArgCount {
                span,
                what: "`clog2`".into(),
                expected: 1,
                found: args.len(),
            });
            return err_expr(span);
        };
        let c = self.index(n);
        if c.ty == Type::Error {
            return err_expr(span);
        }
        let Some(v) = eval(&c).ok().and_then(|v| v.as_int()) else {
            self.err(TypeError::NotConstant {
                span: n.span,
                what: "the argument of `clog2`",
            });
            return err_expr(span);
        };
        let bits = if v <= 1 {
            0
        } else {
            128 - (v - 1).leading_zeros()
        };
        let ty = match want {
            Some(t) if t.is_int() => t.clone(),
            _ => Type::uint(32),
        };
        let e = Expr {
            kind: ExprKind::Const(Value::Int(i128::from(bits))),
            ty,
            span,
        };
        self.expect(e, want)
    }

    /// An array index, pipe number or bit position: any unsigned integer
    /// of at most 64 bits; literals are `u32`.
    pub(super) fn index(&mut self, i: &ast::Expr) -> Expr {
        let idx = if self.is_untyped(i) {
            self.check(i, Some(&Type::uint(32)))
        } else {
            self.check(i, None)
        };
        let narrow = idx.ty.scalar_bits().is_some_and(|w| w <= 64);
        if idx.ty != Type::Error && !(idx.ty.is_unsigned() && narrow) {
            self.err(TypeError::Mismatch {
                span: i.span,
                expected: "an unsigned integer of at most 64 bits".into(),
                found: idx.ty.to_string(),
            });
            return err_expr(i.span);
        }
        fold(idx)
    }

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        l: &ast::Expr,
        r: &ast::Expr,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        use BinOp::*;
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        match op {
            Or | And => {
                let a = self.check(l, Some(&Type::Bool));
                let b = self.check(r, Some(&Type::Bool));
                if a.ty == Type::Error || b.ty == Type::Error {
                    return err_expr(span);
                }
                self.expect(
                    mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), Type::Bool),
                    want,
                )
            }
            Shl | Shr => {
                let a = if self.is_untyped(l) {
                    self.check(l, want.filter(|t| t.is_int()))
                } else {
                    self.check(l, None)
                };
                let b = self.index(r);
                if a.ty == Type::Error || b.ty == Type::Error {
                    return err_expr(span);
                }
                if !a.ty.is_int() {
                    self.err(TypeError::BadOperand {
                        span: l.span,
                        op: op.symbol().into(),
                        ty: a.ty.to_string(),
                    });
                    return err_expr(span);
                }
                let ty = a.ty.clone();
                self.expect(mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty), want)
            }
            _ => {
                let cmp = op.is_comparison();
                let operand_want = if cmp {
                    None
                } else {
                    want.filter(|t| t.is_int() || **t == Type::Bool)
                };
                let (a, b) = match (self.is_untyped(l), self.is_untyped(r)) {
                    (true, false) => {
                        let b = self.check(r, operand_want);
                        let a = self.check(l, Some(&b.ty).filter(|t| **t != Type::Error));
                        (a, b)
                    }
                    (true, true) if operand_want.is_none() => {
                        let a = self.check(l, None);
                        (a, err_expr(span))
                    }
                    (_, r_untyped) => {
                        let a = self.check(l, operand_want);
                        if a.ty == Type::Error && r_untyped {
                            return err_expr(span);
                        }
                        let b = self.check(r, Some(&a.ty).filter(|t| **t != Type::Error));
                        (a, b)
                    }
                };
                if a.ty == Type::Error || b.ty == Type::Error {
                    return err_expr(span);
                }
                let ok = match op {
                    // Structs and arrays compare scalar by scalar (the
                    // lowering and the constant evaluator do that).
                    Eq | Ne => matches!(
                        a.ty,
                        Type::Int { .. }
                            | Type::Bool
                            | Type::Enum(_)
                            | Type::Struct(_)
                            | Type::Array(..)
                    ),
                    // `bool` orders `false < true`, as Verilog compares one
                    // bit and Rust orders `bool`.
                    Lt | Le | Gt | Ge => a.ty.is_int() || a.ty == Type::Bool,
                    BitOr | BitXor | BitAnd => a.ty.is_int() || a.ty == Type::Bool,
                    _ => a.ty.is_int(),
                };
                if !ok {
                    self.err(TypeError::BadOperand {
                        span,
                        op: op.symbol().into(),
                        ty: a.ty.to_string(),
                    });
                    return err_expr(span);
                }
                if matches!(op, Div | Rem)
                    && let Some(width) = a.ty.scalar_bits().filter(|w| *w > MAX_DIVIDE_BITS)
                {
                    self.err(TypeError::WideDivision {
                        span,
                        op: op.symbol(),
                        width,
                    });
                    return err_expr(span);
                }
                let ty = if cmp { Type::Bool } else { a.ty.clone() };
                let e = mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty);
                self.expect(fold(e), want)
            }
        }
    }
}
