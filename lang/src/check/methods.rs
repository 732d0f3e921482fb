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
        let A::Name(id) = &recv.kind else {
            let r = self.check(recv, None);
            if r.ty != Type::Error {
                self.err(TypeError::UnknownMethod {
                    span: m.span,
                    method: m.name.clone(),
                    what: format!("a value of type `{}`", r.ty),
                    available: "methods exist only on ports and stage registers",
                });
            }
            return MethodResult::Error;
        };
        let resolved = self.resolve(id);
        let (member, idx) = match resolved {
            Resolved::Member(mm @ (Member::Port | Member::Stage), i) => (mm, i),
            Resolved::Unknown => {
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
        let port = self.unit.as_ref().expect("ports exist only in ticks").ports[idx].clone();
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
            "recv" => mk(ExprKind::Recv(idx), opt),
            "peek" => mk(ExprKind::Peek(idx), opt),
            "take" => mk(ExprKind::Take(idx), opt),
            "request" => mk(ExprKind::Request(idx), Type::Bool),
            "valid" => mk(ExprKind::Valid(idx), Type::Bool),
            "can_send" => mk(ExprKind::CanSend(idx), Type::Bool),
            "send" => {
                let v = self.check(&args[0], Some(&port.ty));
                if v.ty == Type::Error {
                    return MethodResult::Error;
                }
                return MethodResult::Stmt(StmtKind::Send {
                    port: idx,
                    value: v,
                });
            }
            _ => {
                let v = self.check(&args[0], Some(&port.ty));
                if v.ty == Type::Error {
                    return MethodResult::Error;
                }
                mk(ExprKind::TrySend(idx, Box::new(v)), Type::Bool)
            }
        })
    }
}
