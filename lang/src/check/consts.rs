//! Global constants and compile-time integer expressions, each evaluated
//! once, with cycles reported (E0205).

use super::*;

impl Env {
    /// The value of a global constant, evaluated once.
    pub fn const_value(&mut self, item: ItemId, use_site: Span) -> Option<(Type, Value)> {
        if let Some(v) = self.consts.get(&item) {
            return v.clone();
        }
        let Item::Const(c) = self.items[item].item.clone() else {
            return None;
        };
        if let Some(pos) = self.const_stack.iter().position(|x| *x == item) {
            let mut path: Vec<String> = self.const_stack[pos..]
                .iter()
                .map(|i| self.items[*i].item.name().name.clone())
                .collect();
            path.push(c.name.name.clone());
            self.diags.push(
                ResolveError::ConstCycle {
                    span: use_site,
                    path,
                }
                .into_diagnostic(),
            );
            self.consts.insert(item, None);
            return None;
        }
        self.const_stack.push(item);
        let module = self.items[item].module;
        let ty = self.resolve_type(module, &Params::new(), &c.ty);
        let v = self.const_expr(module, &Params::new(), &c.value, &ty, "a constant");
        self.const_stack.pop();
        let r = v.map(|v| (ty, v));
        self.consts.insert(item, r.clone());
        r
    }

    /// Checks `e` against `ty` in a constant context and evaluates it.
    pub fn const_expr(
        &mut self,
        module: usize,
        params: &Params,
        e: &ast::Expr,
        ty: &Type,
        what: &'static str,
    ) -> Option<Value> {
        let mut cx = BodyCx::new(self, module, params.clone(), None, BodyKind::Const);
        let te = cx.check(e, Some(ty));
        drop(cx);
        if te.ty == Type::Error {
            return None;
        }
        match eval(&te) {
            Ok(v) => Some(v),
            Err(EvalError::NotConstant) => {
                self.diags
                    .push(TypeError::NotConstant { span: e.span, what }.into_diagnostic());
                None
            }
            Err(EvalError::IndexOutOfRange) => {
                self.diags.push(
                    TypeError::IndexOutOfRange {
                        span: e.span,
                        index: -1,
                        len: 0,
                    }
                    .into_diagnostic(),
                );
                None
            }
        }
    }

    /// A constant integer of any integer type (untyped literals are taken as `u64`...`i64` as needed).
    pub fn const_int(
        &mut self,
        module: usize,
        params: &Params,
        e: &ast::Expr,
        what: &'static str,
    ) -> Option<i128> {
        let mut cx = BodyCx::new(self, module, params.clone(), None, BodyKind::Const);
        let te = cx.check_integer(e);
        drop(cx);
        if te.ty == Type::Error {
            return None;
        }
        if !te.ty.is_int() {
            self.diags.push(
                TypeError::Mismatch {
                    span: e.span,
                    expected: "an integer".into(),
                    found: te.ty.to_string(),
                }
                .into_diagnostic(),
            );
            return None;
        }
        match eval(&te) {
            Ok(v) => v.as_int(),
            Err(_) => {
                self.diags
                    .push(TypeError::NotConstant { span: e.span, what }.into_diagnostic());
                None
            }
        }
    }
}
