//! Methods on ports, FIFO ends and stage registers (`send`, `recv`,
//! `request`, `write`, ...).

use super::*;

impl<'e> BodyCx<'e> {
    pub(super) fn method(
        &mut self,
        recv: &ast::Expr,
        m: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> MethodResult {
        let (id, element) = match &recv.kind {
            A::Name(id) => (id, None),
            A::Index(base, i) => match &base.kind {
                A::Name(id) if self.names_port_array(id) => (id, Some(&**i)),
                _ => return self.no_method(recv, m),
            },
            _ => return self.no_method(recv, m),
        };
        let resolved = self.resolve(id);
        let (member, idx, sel) = match (resolved, element) {
            (Resolved::Member(Member::PortArray, k), Some(i)) => {
                let Some(sel) = self.port_element(k, i) else {
                    return MethodResult::Error;
                };
                let first = self
                    .unit
                    .as_ref()
                    .expect("ports exist only in ticks")
                    .port_arrays[k]
                    .first;
                (Member::Port, first, sel)
            }
            (Resolved::Member(Member::PortArray, _), None) => {
                self.err(TypeError::PortArrayIndex {
                    span: id.span,
                    array: id.name.clone(),
                    message: format!("`{}` is a port array: name one element", id.name),
                    label: "a port array".into(),
                });
                return MethodResult::Error;
            }
            (Resolved::Member(mm @ (Member::Port | Member::Stage), i), _) => {
                (mm, i, PortSel::One(i))
            }
            (Resolved::Unknown, _) => {
                if self.kind != BodyKind::Tick {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "a port or stage register operation",
                    });
                } else {
                    self.unknown_name(id);
                }
                return MethodResult::Error;
            }
            _ => {
                let r = self.check(recv, None);
                if r.ty != Type::Error {
                    self.err(TypeError::UnknownMethod {
                        span: m.span,
                        method: m.name.clone(),
                        what: format!("`{}`", id.name),
                        available: "methods exist only on ports and stage registers",
                    });
                }
                return MethodResult::Error;
            }
        };
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        if member == Member::Stage {
            let st = self
                .unit
                .as_ref()
                .expect("stage members exist only in ticks")
                .stages[idx]
                .clone();
            let want_args = match m.name.as_str() {
                "valid" | "read" | "retain" => 1,
                "write" => 2,
                _ => {
                    self.err(TypeError::UnknownMethod {
                        span: m.span,
                        method: m.name.clone(),
                        what: format!("stage register `{}`", st.name),
                        available: "valid(p), read(p), write(p, v), retain(p)",
                    });
                    return MethodResult::Error;
                }
            };
            if args.len() != want_args {
                self.err(TypeError::ArgCount {
                    span,
                    what: format!("`{}`", m.name),
                    expected: want_args,
                    found: args.len(),
                });
                return MethodResult::Error;
            }
            let pipe = self.index(&args[0]);
            if let ExprKind::Const(Value::Int(k)) = pipe.kind
                && k >= i128::from(st.pipes)
            {
                self.err(TypeError::IndexOutOfRange {
                    span: args[0].span,
                    index: k,
                    len: u64::from(st.pipes),
                });
                return MethodResult::Error;
            }
            if pipe.ty == Type::Error {
                return MethodResult::Error;
            }
            return match m.name.as_str() {
                "valid" => {
                    MethodResult::Value(mk(ExprKind::StageValid(idx, Box::new(pipe)), Type::Bool))
                }
                "read" => {
                    MethodResult::Value(mk(ExprKind::StageRead(idx, Box::new(pipe)), st.ty.clone()))
                }
                "retain" => {
                    self.note_stage(idx, &pipe, span);
                    MethodResult::Stmt(StmtKind::StageRetain { stage: idx, pipe })
                }
                _ => {
                    let v = self.check(&args[1], Some(&st.ty));
                    if v.ty == Type::Error {
                        return MethodResult::Error;
                    }
                    self.note_stage(idx, &pipe, span);
                    MethodResult::Stmt(StmtKind::StageWrite {
                        stage: idx,
                        pipe,
                        value: v,
                    })
                }
            };
        }
        let mut port = self.unit.as_ref().expect("ports exist only in ticks").ports[idx].clone();
        if element.is_some() {
            // Messages name the array, not its element 0.
            port.name = id.name.clone();
        }
        let (kind_word, available, help): (&'static str, &'static str, &'static str) = match port
            .kind
        {
            PortKind::ChannelIn => (
                "channel input",
                "recv(), peek()",
                "a channel input is read with `recv()` or `peek()`; `request()`/`valid()`/`take()` belong to `cdc` inputs",
            ),
            PortKind::CdcRegistered => (
                "registered CDC input",
                "request(), valid(), take()",
                "a registered `cdc` input is read with `request()`, then `valid()`/`take()`; declare it `cdc fwft` to use `recv()`",
            ),
            PortKind::CdcFwft => (
                "fwft CDC input",
                "recv(), peek()",
                "a `cdc fwft` input is read with `recv()` or `peek()`",
            ),
            PortKind::Out { .. } => (
                "output",
                "can_send(), send(v), try_send(v)",
                "an output is written with `send(v)` or `try_send(v)`; inputs are read",
            ),
        };
        let all = [
            "recv", "peek", "request", "valid", "take", "can_send", "send", "try_send",
        ];
        // Whole names: a substring test let `v()` pass as `recv()`.
        let allowed = available
            .split(", ")
            .any(|a| a.split('(').next() == Some(m.name.as_str()));
        if !allowed {
            if all.contains(&m.name.as_str()) {
                self.err(TypeError::WrongSide {
                    span: m.span,
                    method: m.name.clone(),
                    port: port.name.clone(),
                    kind: kind_word,
                    help,
                });
            } else {
                self.err(TypeError::UnknownMethod {
                    span: m.span,
                    method: m.name.clone(),
                    what: format!("{kind_word} `{}`", port.name),
                    available,
                });
            }
            return MethodResult::Error;
        }
        let n_args = usize::from(matches!(m.name.as_str(), "send" | "try_send"));
        if args.len() != n_args {
            self.err(TypeError::ArgCount {
                span,
                what: format!("`{}`", m.name),
                expected: n_args,
                found: args.len(),
            });
            return MethodResult::Error;
        }
        let opt = Type::Option(Box::new(port.ty.clone()));
        MethodResult::Value(match m.name.as_str() {
            "recv" => mk(ExprKind::Recv(sel), opt),
            "peek" => mk(ExprKind::Peek(sel), opt),
            "take" => mk(ExprKind::Take(sel), opt),
            "request" => mk(ExprKind::Request(sel), Type::Bool),
            "valid" => mk(ExprKind::Valid(sel), Type::Bool),
            "can_send" => mk(ExprKind::CanSend(sel), Type::Bool),
            "send" => {
                let v = self.check(&args[0], Some(&port.ty));
                if v.ty == Type::Error {
                    return MethodResult::Error;
                }
                return MethodResult::Stmt(StmtKind::Send {
                    port: sel,
                    value: v,
                });
            }
            _ => {
                let v = self.check(&args[0], Some(&port.ty));
                if v.ty == Type::Error {
                    return MethodResult::Error;
                }
                mk(ExprKind::TrySend(sel, Box::new(v)), Type::Bool)
            }
        })
    }

    /// A method called on something that is neither a port nor a stage
    /// register.
    fn no_method(&mut self, recv: &ast::Expr, m: &ast::Ident) -> MethodResult {
        let r = self.check(recv, None);
        if r.ty != Type::Error {
            self.err(TypeError::UnknownMethod {
                span: m.span,
                method: m.name.clone(),
                what: format!("a value of type `{}`", r.ty),
                available: "methods exist only on ports and stage registers",
            });
        }
        MethodResult::Error
    }

    /// Whether `id` names a port array here (not a local or parameter
    /// that shadows it).
    fn names_port_array(&self, id: &ast::Ident) -> bool {
        let n = id.name.as_str();
        !self.scopes.iter().any(|s| s.contains_key(n))
            && !self.params.contains_key(n)
            && self
                .unit
                .as_ref()
                .is_some_and(|u| u.port_arrays.iter().any(|a| a.name == n))
    }

    /// Element `i` of port array `k`: a constant index in range, or one
    /// that reads only constants and unassigned loop variables and is in
    /// range in every iteration of those loops.
    fn port_element(&mut self, k: usize, i: &ast::Expr) -> Option<PortSel> {
        let index = self.index(i);
        if index.ty == Type::Error {
            return None;
        }
        let u = self.unit.as_ref().expect("ports exist only in ticks");
        let (first, len, array) = (
            u.port_arrays[k].first,
            u.port_arrays[k].len,
            u.port_arrays[k].name.clone(),
        );
        if let Ok(v) = eval(&index) {
            let v = v.as_int().unwrap_or(-1);
            if !(0..i128::from(len)).contains(&v) {
                self.err(TypeError::IndexOutOfRange {
                    span: i.span,
                    index: v,
                    len: u64::from(len),
                });
                return None;
            }
            return Some(PortSel::One(first + v as usize));
        }
        let mut vars = Vec::new();
        if let Err(what) = loop_index(&index, &mut vars) {
            self.err(TypeError::PortArrayIndex {
                span: i.span,
                array: array.clone(),
                message: format!(
                    "the element of port array `{array}` must be known when the loops are unrolled"
                ),
                label: format!("this reads {what}"),
            });
            return None;
        }
        let mut loops = Vec::new();
        for v in vars {
            match self.loops.iter().find(|l| l.slot == v) {
                Some(l) if !l.assigned => loops.push((v, l.start, l.end)),
                found => {
                    let name = self.locals[v].name.clone();
                    let label = if found.is_some() {
                        format!("`{name}` is assigned in its loop")
                    } else {
                        format!("`{name}` is a run-time value")
                    };
                    self.err(TypeError::PortArrayIndex {
                        span: i.span,
                        array: array.clone(),
                        message: format!(
                            "the element of port array `{array}` must be known when the loops are unrolled"
                        ),
                        label,
                    });
                    return None;
                }
            }
        }
        // Every iteration of the loops it reads: the checker's unroll
        // limit bounds their product.
        let mut at: Vec<i128> = loops.iter().map(|l| l.1).collect();
        if loops.iter().any(|l| l.2 <= l.1) {
            return Some(PortSel::Element {
                first,
                len,
                index: Box::new(index),
            });
        }
        loop {
            let value = |l: usize| {
                loops
                    .iter()
                    .position(|x| x.0 == l)
                    .map(|p| Value::Int(at[p]))
            };
            let v = eval_with(&index, &value).ok().and_then(|v| v.as_int());
            if !v.is_some_and(|v| (0..i128::from(len)).contains(&v)) {
                let at = loops
                    .iter()
                    .zip(&at)
                    .map(|(l, k)| format!("{} = {k}", self.locals[l.0].name))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.err(TypeError::IndexOutOfRangeAt {
                    span: i.span,
                    index: v.unwrap_or(-1),
                    len: u64::from(len),
                    at,
                });
                return None;
            }
            // The next iteration, the last loop fastest.
            let mut d = loops.len();
            loop {
                if d == 0 {
                    return Some(PortSel::Element {
                        first,
                        len,
                        index: Box::new(index),
                    });
                }
                d -= 1;
                at[d] += 1;
                if at[d] < loops[d].2 {
                    break;
                }
                at[d] = loops[d].1;
            }
        }
    }
}

/// The locals an index reads, when it is built only of constants, locals,
/// and unary, binary and cast operations; else what else it reads.
fn loop_index(e: &Expr, vars: &mut Vec<usize>) -> Result<(), &'static str> {
    match &e.kind {
        ExprKind::Const(_) => Ok(()),
        ExprKind::Local(l) => {
            if !vars.contains(l) {
                vars.push(*l);
            }
            Ok(())
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => loop_index(a, vars),
        ExprKind::Binary(_, a, b) => {
            loop_index(a, vars)?;
            loop_index(b, vars)
        }
        ExprKind::Reg(_) => Err("a register"),
        ExprKind::Call(..) => Err("a function call"),
        _ => Err("a run-time value"),
    }
}
