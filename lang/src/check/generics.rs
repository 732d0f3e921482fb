//! Type parameters of units and systems: `unit Queue<T: type, N: u32 = 4>`
//! takes a type for `T` (`inst q: Queue<T = Packet> on c;`), which its
//! body uses wherever a type stands. A parameter is a type parameter when
//! its declared type is `type`; its value is a [`Value::Type`] in the
//! [`Params`] the body is checked with, so a unit specialization is keyed
//! by its types as by its values. Arguments and defaults are parsed as
//! expressions, as every generic argument is, and read back as types here:
//! a name (`u16`, `Packet`, an outer `T`) or an array `[T; N]`.

use super::*;

/// Whether `g` is a type parameter (`T: type`).
pub fn is_type_param(g: &ast::GenericParam) -> bool {
    matches!(&g.ty.kind, ast::TypeExprKind::Named(id) if id.name == "type")
}

/// `e` read as a type, if it has a type's shape.
fn expr_as_type(e: &ast::Expr) -> Option<ast::TypeExpr> {
    let kind = match &e.kind {
        A::Name(id) => ast::TypeExprKind::Named(id.clone()),
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
