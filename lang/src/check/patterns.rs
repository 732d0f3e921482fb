//! `match` and its patterns, and the places (`r`, `r.f`, `r[i]`) that
//! writes and assignments target.

use super::*;

impl<'e> BodyCx<'e> {
    pub(super) fn match_stmt(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[(Vec<Pattern>, ast::Block)],
        span: Span,
    ) -> Option<StmtKind> {
        let sc = self.check(scrutinee, None);
        if sc.ty == Type::Error {
            return None;
        }
        if let Type::Option(inner) = &sc.ty {
            let inner = (**inner).clone();
            let mut some: Option<(usize, Vec<Stmt>)> = None;
            let mut none: Option<Vec<Stmt>> = None;
            let mut exits = Vec::new();
            let (mut some_seen, mut none_seen) = (false, false);
            for (pats, body) in arms {
                for p in pats {
                    match p {
                        Pattern::Some(n) => {
                            self.scopes.push(FxHashMap::default());
                            let l = self.declare(n, inner.clone());
                            let (b, exit) = self.branch(body);
                            exits.push(exit);
                            self.scopes.pop();
                            some_seen = true;
                            some.get_or_insert((l, b));
                        }
                        Pattern::None(_) | Pattern::Wildcard(_) => {
                            let (b, exit) = self.branch(body);
                            exits.push(exit);
                            if matches!(p, Pattern::Wildcard(_)) {
                                some_seen = true;
                            }
                            none_seen = true;
                            none.get_or_insert(b);
                        }
                        other => self.err(TypeError::BadPattern {
                            span: other.span(),
                            expected: sc.ty.to_string(),
                        }),
                    }
                }
            }
            self.join_branches(exits, some_seen && none_seen);
            let (binding, then) = match some {
                Some(x) => x,
                // No `Some` arm: the value is bound to a local nothing reads.
                None => (self.new_local("_", inner), Vec::new()),
            };
            return Some(StmtKind::IfSome {
                binding,
                value: sc,
                then,
                otherwise: none.unwrap_or_default(),
            });
        }
        if !matches!(sc.ty, Type::Int { .. } | Type::Bool | Type::Enum(_)) {
            self.err(TypeError::BadOperand {
                span: scrutinee.span,
                op: "match".into(),
                ty: sc.ty.to_string(),
            });
            return None;
        }
        let mut out_arms = Vec::new();
        let mut default: Option<Vec<Stmt>> = None;
        let mut exits = Vec::new();
        let mut covered: HashSet<BigInt> = HashSet::new();
        // First pattern per value, and the `_` arm, for W0305.
        let mut first_at: FxHashMap<BigInt, Span> = FxHashMap::default();
        let mut wildcard_at: Option<Span> = None;
        for (pats, body) in arms {
            if let (Some(w), Some(p)) = (wildcard_at.take(), pats.first()) {
                self.err(TypeError::ShadowedPattern {
                    span: w,
                    earlier: p.span(),
                    wildcard_not_last: true,
                });
            }
            let mut values = Vec::new();
            let mut wildcard = false;
            for p in pats {
                let before = values.len();
                match (p, &sc.ty) {
                    (Pattern::Wildcard(ws), _) => {
                        wildcard = true;
                        wildcard_at = Some(*ws);
                    }
                    (Pattern::Int(v, suffix, ps), Type::Int { .. }) => {
                        if let Some((signed, width)) = suffix
                            && (Type::Int {
                                signed: *signed,
                                width: *width,
                            }) != sc.ty
                        {
                            self.err(TypeError::Mismatch {
                                span: *ps,
                                expected: sc.ty.to_string(),
                                found: format!("{}{}", if *signed { "i" } else { "u" }, width),
                            });
                            continue;
                        }
                        if !fits_big(v, &sc.ty) {
                            self.err(TypeError::LiteralOverflow {
                                span: *ps,
                                value: v.clone(),
                                ty: sc.ty.to_string(),
                            });
                        }
                        values.push(v.clone());
                    }
                    (Pattern::Bool(b, _), Type::Bool) => values.push(BigInt::from(u8::from(*b))),
                    (Pattern::Enum(en, var), Type::Enum(et)) if en.name == et.name => {
                        match et.variants.iter().position(|v| *v == var.name) {
                            Some(i) => values.push(BigInt::from(i)),
                            None => {
                                let suggestion =
                                    did_you_mean(&var.name, et.variants.iter().map(String::as_str))
                                        .map(str::to_string);
                                self.err(ResolveError::UnknownName {
                                    span: var.span,
                                    name: format!("{}::{}", en.name, var.name),
                                    kind: "variant",
                                    suggestion,
                                });
                            }
                        }
                    }
                    (other, _) => self.err(TypeError::BadPattern {
                        span: other.span(),
                        expected: sc.ty.to_string(),
                    }),
                }
                if let Some(v) = values.get(before) {
                    match first_at.get(v) {
                        Some(&earlier) => self.err(TypeError::ShadowedPattern {
                            span: p.span(),
                            earlier,
                            wildcard_not_last: false,
                        }),
                        None => {
                            first_at.insert(v.clone(), p.span());
                        }
                    }
                }
            }
            let (b, exit) = self.branch(body);
            exits.push(exit);
            covered.extend(values.iter().cloned());
            if wildcard {
                if default.is_none() {
                    default = Some(b.clone());
                }
                if !values.is_empty() {
                    out_arms.push(d::MatchArm { values, body: b });
                }
            } else {
                out_arms.push(d::MatchArm { values, body: b });
            }
        }
        let _ = span;
        let every_value = match &sc.ty {
            Type::Bool => covered.len() == 2,
            Type::Enum(et) => covered.len() == et.variants.len(),
            _ => false,
        };
        self.join_branches(exits, default.is_some() || every_value);
        Some(StmtKind::Match {
            scrutinee: sc,
            arms: out_arms,
            default: default.unwrap_or_default(),
        })
    }

    /// The width of a place's integer whose bits are written; `None`
    /// (reported) when the place is not an integer or already a bit range.
    fn writable_bits(
        &mut self,
        path: &[PlaceElem],
        ty: &Type,
        op: &str,
        span: Span,
    ) -> Option<u32> {
        if matches!(path.last(), Some(PlaceElem::Bits(_))) {
            self.err(TypeError::BadSlice {
                span,
                message:
                    "bits of a bit select or slice cannot be written: write bits of the whole value"
                        .into(),
            });
            return None;
        }
        match ty {
            Type::Int { width, .. } => Some(*width),
            Type::Error => None,
            other => {
                self.err(TypeError::BadOperand {
                    span,
                    op: op.into(),
                    ty: other.to_string(),
                });
                None
            }
        }
    }

    /// Resolves the root and path of a written place; returns the element type.
    pub(super) fn place(&mut self, p: &ast::Expr) -> Option<(Resolved, Vec<PlaceElem>, Type)> {
        match &p.kind {
            A::Name(id) => {
                let r = self.resolve(id);
                let ty = match &r {
                    Resolved::Local(l) => {
                        // Written, not read: `resolve` counted a read.
                        self.local_reads[*l] -= 1;
                        self.locals[*l].ty.clone()
                    }
                    Resolved::Member(Member::Reg, i) => self
                        .unit
                        .as_ref()
                        .map_or(Type::Error, |u| u.regs[*i].ty.clone()),
                    Resolved::Unknown => {
                        self.unknown_name(id);
                        return None;
                    }
                    _ => Type::Error,
                };
                Some((r, Vec::new(), ty))
            }
            A::Field(base, f) => {
                let (r, mut path, ty) = self.place(base)?;
                match &ty {
                    Type::Struct(st) => match st.fields.iter().position(|(n, _)| *n == f.name) {
                        Some(i) => {
                            path.push(PlaceElem::Field(i));
                            Some((r, path, st.fields[i].1.clone()))
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
                            None
                        }
                    },
                    Type::Error => Some((r, path, Type::Error)),
                    other => {
                        self.err(TypeError::UnknownField {
                            span: f.span,
                            name: f.name.clone(),
                            ty: other.to_string(),
                            suggestion: None,
                        });
                        None
                    }
                }
            }
            A::Slice(base, kind, l, h) => {
                let (r, mut path, ty) = self.place(base)?;
                let n = self.writable_bits(&path, &ty, super::bits::slice_op(*kind), p.span)?;
                let sel = self.slice_range(&ty.to_string(), n, *kind, (l, h), p.span)?;
                let width = sel.width;
                path.push(PlaceElem::Bits(sel));
                Some((r, path, Type::uint(width)))
            }
            A::Index(base, i) => {
                let (r, mut path, ty) = self.place(base)?;
                if ty.is_int() {
                    let n = self.writable_bits(&path, &ty, "[]", p.span)?;
                    let sel = self.bit_position(&ty.to_string(), n, i)?;
                    path.push(PlaceElem::Bits(sel));
                    return Some((r, path, Type::uint(1)));
                }
                let idx = self.index(i);
                match &ty {
                    Type::Array(t, n) => {
                        if let ExprKind::Const(Value::Int(k)) = idx.kind
                            && k >= i128::from(*n)
                        {
                            self.err(TypeError::IndexOutOfRange {
                                span: i.span,
                                index: k,
                                len: u64::from(*n),
                            });
                        }
                        path.push(PlaceElem::Index(idx));
                        Some((r, path, (**t).clone()))
                    }
                    Type::Error => Some((r, path, Type::Error)),
                    other => {
                        self.err(TypeError::BadOperand {
                            span: p.span,
                            op: "[]".into(),
                            ty: other.to_string(),
                        });
                        None
                    }
                }
            }
            _ => None,
        }
    }
}
