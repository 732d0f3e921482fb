//! Functions (checked once, on first use, recursion reported) and unit
//! specializations (a unit's members and tick checked once per set of
//! parameter values).

use super::*;

impl Env {
    /// The checked function for an item with these parameter values
    /// (empty unless it is generic), checking it on first use.
    pub fn function(&mut self, item: ItemId, params: &Params, call_site: Span) -> Option<usize> {
        let key = (item, param_key(params));
        if let Some(id) = self.fn_ids.get(&key) {
            return *id;
        }
        if let Some(pos) = self.fn_stack.iter().position(|x| *x == item) {
            let mut cycle: Vec<String> = self.fn_stack[pos..]
                .iter()
                .map(|i| self.items[*i].item.name().name.clone())
                .collect();
            cycle.push(self.items[item].item.name().name.clone());
            self.diags.push(
                ResolveError::Recursion {
                    span: call_site,
                    cycle,
                }
                .into_diagnostic(),
            );
            return None;
        }
        let Item::Fn(f) = self.items[item].item.clone() else {
            return None;
        };
        self.fn_stack.push(item);
        let first_diag = self.diags.len();
        let module = self.items[item].module;
        let ret = self.resolve_type(module, params, &f.ret);
        let mut cx = BodyCx::new(
            self,
            module,
            params.clone(),
            None,
            BodyKind::Fn(ret.clone()),
        );
        cx.scopes.push(FxHashMap::default());
        let mut param_ids = Vec::new();
        for (n, t) in &f.params {
            let ty = cx.env.resolve_type(module, params, t);
            param_ids.push(cx.declare(n, ty));
        }
        let body = cx.block(&f.body);
        cx.lint_unused_lets();
        let locals = std::mem::take(&mut cx.locals);
        drop(cx);
        if !ends_in_return(&body) {
            self.diags.push(
                TypeError::MissingReturn {
                    span: f.name.span,
                    name: f.name.name.clone(),
                }
                .into_diagnostic(),
            );
        }
        self.fn_stack.pop();
        if !params.is_empty() {
            // A generic function's errors may come from its parameters'
            // values: each names the call that chose them too.
            let mut values: Vec<String> = params
                .iter()
                .map(|(n, (_, v))| format!("{n} = {v}"))
                .collect();
            values.sort();
            let message = format!(
                "in `{}` with {}, called here",
                f.name.name,
                values.join(", ")
            );
            for d in &mut self.diags[first_diag..] {
                d.labels.push(crate::diag::Label {
                    span: call_site,
                    message: message.clone(),
                    primary: false,
                });
            }
        }
        let id = self.functions.len();
        self.functions.push(d::Function {
            name: f.name.name.clone(),
            params: param_ids,
            locals,
            ret,
            body,
            span: f.name.span,
        });
        self.fn_ids.insert(key, Some(id));
        Some(id)
    }

    /// A function's parameter and result types with these parameter
    /// values.
    pub(super) fn fn_signature(
        &mut self,
        item: ItemId,
        params: &Params,
    ) -> Option<(Vec<Type>, Type)> {
        let Item::Fn(f) = self.items[item].item.clone() else {
            return None;
        };
        let module = self.items[item].module;
        let ps = f
            .params
            .iter()
            .map(|(_, t)| self.resolve_type(module, params, t))
            .collect();
        Some((ps, self.resolve_type(module, params, &f.ret)))
    }

    /// Checks a unit with concrete parameters and builds its specialization.
    pub fn unit_spec(&mut self, item: ItemId, params: Params) -> d::UnitSpec {
        let Item::Unit(u) = self.items[item].item.clone() else {
            unreachable!("unit_spec is called on units")
        };
        let module = self.items[item].module;
        let mut info = UnitInfo::default();
        let mut names: HashMap<String, Span> = HashMap::new();
        let mut ticks = Vec::new();
        for m in &u.members {
            let name = match m {
                UnitMember::Port { name, .. }
                | UnitMember::Reg { name, .. }
                | UnitMember::Stage { name, .. }
                | UnitMember::Counter { name, .. } => name,
                UnitMember::Tick { body, span } => {
                    ticks.push((body, *span));
                    continue;
                }
            };
            if let Some(prev) = names.insert(name.name.clone(), name.span) {
                self.diags.push(
                    ResolveError::Duplicate {
                        span: name.span,
                        name: name.name.clone(),
                        previous: prev,
                    }
                    .into_diagnostic(),
                );
                continue;
            }
            match m {
                UnitMember::Port {
                    dir,
                    name,
                    len,
                    ty,
                    kind,
                    span,
                } => {
                    let ty = self.resolve_type(module, &params, ty);
                    let kind = self.port_kind(module, &params, *dir, kind, name, *span);
                    let port = |element: String| d::Port {
                        name: element,
                        dir: *dir,
                        ty: ty.clone(),
                        kind: kind.clone(),
                        span: name.span,
                    };
                    match len {
                        None => info.ports.push(port(name.name.clone())),
                        Some(e) => {
                            let n = self.port_array_len(module, &params, e);
                            info.port_arrays.push(PortArray {
                                name: name.name.clone(),
                                first: info.ports.len(),
                                len: n,
                                span: name.span,
                            });
                            for i in 0..n {
                                info.ports.push(port(format!("{}[{i}]", name.name)));
                            }
                        }
                    }
                }
                UnitMember::Reg { name, ty, init, .. } => {
                    let ty = self.resolve_type(module, &params, ty);
                    let init = match init {
                        Some(e) if ty != Type::Error => self
                            .const_expr(module, &params, e, &ty, "a register's initial value")
                            .unwrap_or_else(|| Value::zero(&ty)),
                        _ => Value::zero(&ty),
                    };
                    info.regs.push(d::Reg {
                        name: name.name.clone(),
                        ty,
                        init,
                        span: name.span,
                    });
                }
                UnitMember::Stage {
                    name, ty, pipes, ..
                } => {
                    let ty = self.resolve_type(module, &params, ty);
                    let n = match pipes {
                        Some(e) => self
                            .const_int(module, &params, e, "a pipe count")
                            .unwrap_or(1),
                        None => 1,
                    };
                    if !(1..=1024).contains(&n) {
                        let span = pipes.as_ref().map_or(name.span, |e| e.span);
                        self.diags.push(
                            TypeError::OutOfRange {
                                span,
                                what: "pipe count",
                                value: n,
                                range: "in 1..=1024",
                            }
                            .into_diagnostic(),
                        );
                    }
                    info.stages.push(d::Stage {
                        name: name.name.clone(),
                        ty,
                        pipes: n.clamp(1, 1024) as u32,
                        span: name.span,
                    });
                }
                UnitMember::Counter { name, .. } => info.counters.push(d::Counter {
                    name: name.name.clone(),
                    span: name.span,
                }),
                UnitMember::Tick { .. } => {}
            }
        }
        if let [_, (_, second), ..] = ticks.as_slice() {
            self.diags.push(
                ResolveError::Duplicate {
                    span: *second,
                    name: "tick".into(),
                    previous: ticks[0].1,
                }
                .into_diagnostic(),
            );
        }
        let n_ports = info.ports.len();
        let n_regs = info.regs.len();
        let n_stages = info.stages.len();
        let n_counters = info.counters.len();
        let mut cx = BodyCx::new(self, module, params.clone(), Some(info), BodyKind::Tick);
        cx.scopes.push(FxHashMap::default());
        let tick = match ticks.first() {
            Some((body, _)) => cx.block(body),
            None => Vec::new(),
        };
        cx.lint_unused_lets();
        let locals = std::mem::take(&mut cx.locals);
        let used = std::mem::take(&mut cx.used_members);
        let random_sites = cx.random_sites;
        let info = cx.unit.take().expect("unit info is set for ticks");
        drop(cx);
        let mut warnings = Vec::new();
        let in_array = |i: usize| {
            info.port_arrays
                .iter()
                .any(|a| (a.first..a.first + a.len as usize).contains(&i))
        };
        let unused_ports = info
            .ports
            .iter()
            .enumerate()
            .take(n_ports)
            .filter(|(i, _)| !in_array(*i) && !used.contains(&(Member::Port, *i)))
            .map(|(_, p)| (&p.name, p.span))
            .chain(
                info.port_arrays
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !used.contains(&(Member::PortArray, *k)))
                    .map(|(_, a)| (&a.name, a.span)),
            );
        for (name, span) in unused_ports {
            if !name.starts_with('_') {
                warnings.push(
                    TypeError::UnusedPort {
                        span,
                        name: name.clone(),
                    }
                    .into_diagnostic(),
                );
            }
        }
        let state = info
            .regs
            .iter()
            .enumerate()
            .take(n_regs)
            .map(|(i, r)| (Member::Reg, i, "register", &r.name, r.span))
            .chain(
                info.stages
                    .iter()
                    .enumerate()
                    .take(n_stages)
                    .map(|(i, s)| (Member::Stage, i, "stage register", &s.name, s.span)),
            )
            .chain(
                info.counters
                    .iter()
                    .enumerate()
                    .take(n_counters)
                    .map(|(i, c)| (Member::Counter, i, "counter", &c.name, c.span)),
            );
        for (kind, i, what, name, span) in state {
            if !used.contains(&(kind, i)) && !name.starts_with('_') {
                warnings.push(
                    TypeError::UnusedState {
                        span,
                        what,
                        name: name.clone(),
                    }
                    .into_diagnostic(),
                );
            }
        }
        self.diags.extend(warnings);
        let param_list = match &self.items[item].item {
            Item::Unit(u) => u
                .params
                .iter()
                .filter_map(|p| {
                    params
                        .get(&p.name.name)
                        .map(|(_, v)| (p.name.name.clone(), v.clone()))
                })
                .collect(),
            _ => Vec::new(),
        };
        d::UnitSpec {
            unit: u.name.name.clone(),
            params: param_list,
            ports: info.ports,
            regs: info.regs,
            stages: info.stages,
            counters: info.counters,
            locals,
            tick,
            random_sites,
            span: u.name.span,
        }
    }

    /// The element count of a port array: a constant in 1..=[`MAX_PORT_ARRAY`]
    /// (one when it is not, after reporting it).
    fn port_array_len(&mut self, module: usize, params: &Params, e: &ast::Expr) -> u32 {
        let n = self
            .const_int(module, params, e, "a port array length")
            .unwrap_or(1);
        if !(1..=i128::from(MAX_PORT_ARRAY)).contains(&n) {
            self.diags.push(
                TypeError::OutOfRange {
                    span: e.span,
                    what: "port array length",
                    value: n,
                    range: "in 1..=4096",
                }
                .into_diagnostic(),
            );
            return 1;
        }
        n as u32
    }

    /// What a port declared `dir` with `kind` is; a rate out of range, a
    /// rate on an input or `cdc` on an output is reported and replaced.
    fn port_kind(
        &mut self,
        module: usize,
        params: &Params,
        dir: Dir,
        kind: &PortKindAst,
        name: &ast::Ident,
        span: Span,
    ) -> PortKind {
        match (dir, kind) {
            (Dir::In, PortKindAst::Plain) => PortKind::ChannelIn,
            (Dir::In, PortKindAst::Cdc) => PortKind::CdcRegistered,
            (Dir::In, PortKindAst::CdcFwft) => PortKind::CdcFwft,
            (Dir::Out, PortKindAst::Rate(e)) => {
                let r = self
                    .const_int(module, params, e, "a send rate")
                    .unwrap_or(1);
                if !(1..=1024).contains(&r) {
                    self.diags.push(
                        TypeError::OutOfRange {
                            span: e.span,
                            what: "send rate",
                            value: r,
                            range: "in 1..=1024",
                        }
                        .into_diagnostic(),
                    );
                }
                PortKind::Out {
                    rate: r.clamp(1, 1024) as u32,
                }
            }
            (Dir::Out, PortKindAst::Plain) => PortKind::Out { rate: 1 },
            (Dir::In, PortKindAst::Rate(_)) => {
                self.diags.push(
                    TypeError::WrongSide {
                        span,
                        method: "rate".into(),
                        port: name.name.clone(),
                        kind: "input",
                        help: "`rate` belongs on output ports",
                    }
                    .into_diagnostic(),
                );
                PortKind::ChannelIn
            }
            (Dir::Out, _) => {
                self.diags.push(
                    TypeError::WrongSide {
                        span,
                        method: "cdc".into(),
                        port: name.name.clone(),
                        kind: "output",
                        help: "the reader declares `cdc`; an output feeds a FIFO as it is",
                    }
                    .into_diagnostic(),
                );
                PortKind::Out { rate: 1 }
            }
        }
    }
}
