//! Type parameters of units and systems: `unit Queue<T: type, N: u32 = 4>`
//! takes a type for `T` (`inst q: Queue<T = Packet> on c;`), which its
//! body uses wherever a type stands. A parameter is a type parameter when
//! its declared type is `type`; its value is a [`Value::Type`] in the
//! [`Params`] the body is checked with, so a unit specialization is keyed
//! by its types as by its values. Arguments and defaults are parsed as
//! expressions, as every generic argument is, and read back as types here:
//! a name (`u16`, `Packet`, an outer `T`) or an array `[T; N]`.
//!
//! A function's parameters (`fn parity<W: u32>(x: u<W>) -> bool`) are
//! inferred at each call from the arguments' types ([`BodyCx::generic_call`]),
//! and each set of values is a function of its own, checked on its own.

use super::*;

/// Whether `g` is a type parameter (`T: type`).
pub fn is_type_param(g: &ast::GenericParam) -> bool {
    matches!(&g.ty.kind, ast::TypeExprKind::Named(id) if id.name == "type")
}

/// `e` read as a type, if it has a type's shape.
fn expr_as_type(e: &ast::Expr) -> Option<ast::TypeExpr> {
    let kind = match &e.kind {
        A::Name(id) => ast::TypeExprKind::Named(id.clone()),
        A::TypeArg(t) => return Some((**t).clone()),
        A::ArrayRepeat(elem, n) => {
            ast::TypeExprKind::Array(Box::new(expr_as_type(elem)?), n.clone())
        }
        _ => return None,
    };
    Some(ast::TypeExpr { kind, span: e.span })
}

impl Env {
    /// The type that generic argument (or default) `e` names, in `module`
    /// with `params` (E0338 when `e` is not a type; the type's own errors
    /// otherwise).
    pub fn type_arg(&mut self, module: usize, params: &Params, e: &ast::Expr) -> Option<Type> {
        let Some(t) = expr_as_type(e) else {
            self.diags
                .push(TypeError::NotAType { span: e.span }.into_diagnostic());
            return None;
        };
        let ty = self.resolve_type(module, params, &t);
        (ty != Type::Error).then_some(ty)
    }

    /// The value of parameter `g` from argument `e`: a type for a type
    /// parameter, else a constant of the parameter's type.
    pub fn param_arg(
        &mut self,
        module: usize,
        params: &Params,
        g: &ast::GenericParam,
        ty: &Type,
        e: &ast::Expr,
        what: &'static str,
    ) -> Option<Value> {
        match is_type_param(g) {
            true => self.type_arg(module, params, e).map(Value::Type),
            false => self.const_expr(module, params, e, ty, what),
        }
    }

    /// The declared type of parameter `g` (`Type::Error` for a type
    /// parameter, whose value is itself a type).
    pub fn param_type(&mut self, module: usize, params: &Params, g: &ast::GenericParam) -> Type {
        match is_type_param(g) {
            true => Type::Error,
            false => self.resolve_type(module, params, &g.ty),
        }
    }
}

/// Whether a parameter's written type may depend on the function's
/// generic parameters (then its argument is checked without an expected
/// type, and compared once the parameters are known).
fn may_mention(t: &ast::TypeExpr, generic: &dyn Fn(&str) -> bool) -> bool {
    match &t.kind {
        ast::TypeExprKind::Named(id) => generic(&id.name),
        ast::TypeExprKind::SizedInt { .. }
        | ast::TypeExprKind::Array(..)
        | ast::TypeExprKind::Generic { .. } => true,
    }
}

/// Binds the parameters that written type `t` leaves open from the
/// argument type `ty`: a type parameter from the whole type, a width
/// (`u<W>`) or an array length (`[T; N]`) written as a parameter's name.
/// The first binding of a parameter stands; a later argument that
/// disagrees fails the comparison after.
fn infer(
    t: &ast::TypeExpr,
    ty: &Type,
    type_param: &dyn Fn(&str) -> Option<bool>,
    bound: &mut HashMap<String, Value>,
) {
    let name_of = |e: &ast::Expr| match &e.kind {
        A::Name(id) if type_param(&id.name) == Some(false) => Some(id.name.clone()),
        _ => None,
    };
    match (&t.kind, ty) {
        (ast::TypeExprKind::Named(id), _) if type_param(&id.name) == Some(true) => {
            bound
                .entry(id.name.clone())
                .or_insert_with(|| Value::Type(ty.clone()));
        }
        (
            ast::TypeExprKind::SizedInt { signed, width },
            Type::Int {
                signed: s,
                width: w,
            },
        ) if signed == s => {
            if let Some(n) = name_of(width) {
                bound.entry(n).or_insert(Value::Int(i128::from(*w)));
            }
        }
        // `Pair<T = T, N = N>` against a `Pair<...>`: each argument that
        // is one of the function's parameters takes the struct's value.
        (ast::TypeExprKind::Generic { name, args }, Type::Struct(s))
            if s.name.starts_with(&format!("{}<", name.name)) =>
        {
            for (p, e) in args {
                let Some((_, v)) = s.args.iter().find(|(n, _)| *n == p.name) else {
                    continue;
                };
                match &e.kind {
                    A::Name(id) if type_param(&id.name).is_some() => {
                        bound.entry(id.name.clone()).or_insert_with(|| v.clone());
                    }
                    _ => {}
                }
            }
        }
        (ast::TypeExprKind::Array(elem, len), Type::Array(et, n)) => {
            infer(elem, et, type_param, bound);
            if let Some(name) = name_of(len) {
                bound.entry(name).or_insert(Value::Int(i128::from(*n)));
            }
        }
        _ => {}
    }
}

impl BodyCx<'_> {
    /// A call of generic function `def` (item `item`): its arguments
    /// checked, the parameter values their types give (a type parameter
    /// `T` from an argument of type `T`, a width `W` from `u<W>` or
    /// `i<W>`, a length `N` from `[T; N]`; a default for the rest), and
    /// its result type with them. `None` after an error (E0340 for a
    /// parameter no argument fixes).
    pub(super) fn generic_call(
        &mut self,
        item: ItemId,
        def: &ast::FnDef,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(Vec<Expr>, Params, Type)> {
        let module = self.env.items[item].module;
        let type_param = |n: &str| {
            def.generics
                .iter()
                .find(|g| g.name.name == n)
                .map(is_type_param)
        };
        let generic = |n: &str| type_param(n).is_some();
        let targs: Vec<Expr> = args
            .iter()
            .zip(&def.params)
            .map(|(a, (_, t))| {
                if may_mention(t, &generic) {
                    self.check(a, None)
                } else {
                    let ty = self.env.resolve_type(module, &Params::new(), t);
                    self.check(a, Some(&ty))
                }
            })
            .collect();
        if targs.iter().any(|a| a.ty == Type::Error) {
            return None;
        }
        let mut bound = HashMap::new();
        for ((_, t), a) in def.params.iter().zip(&targs) {
            infer(t, &a.ty, &type_param, &mut bound);
        }
        let mut params = Params::new();
        for g in &def.generics {
            let ty = self.env.param_type(module, &params, g);
            let value = match (bound.remove(&g.name.name), &g.default) {
                (Some(v), _) => v,
                (None, Some(d)) => {
                    self.env
                        .param_arg(module, &params, g, &ty, d, "a parameter default")?
                }
                (None, None) => {
                    self.err(TypeError::CannotInferParam {
                        span,
                        function: def.name.name.clone(),
                        param: g.name.name.clone(),
                        declared: g.name.span,
                    });
                    return None;
                }
            };
            if let Value::Int(n) = &value
                && !is_type_param(g)
                && !fits_big(&BigInt::from(*n), &ty)
            {
                self.err(TypeError::Mismatch {
                    span,
                    expected: format!("`{}` of type `{ty}`", g.name.name),
                    found: n.to_string(),
                });
                return None;
            }
            params.insert(g.name.name.clone(), (ty, value));
        }
        let (ps, ret) = self.env.fn_signature(item, &params)?;
        for (a, p) in targs.iter().zip(&ps) {
            if a.ty != *p {
                self.err(TypeError::Mismatch {
                    span: a.span,
                    expected: p.to_string(),
                    found: a.ty.to_string(),
                });
                return None;
            }
        }
        Some((targs, params, ret))
    }
}
