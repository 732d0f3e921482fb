//! Statements and blocks, and how the stage-register writes of branches
//! join.

use super::*;

impl<'e> BodyCx<'e> {
    pub(super) fn block(&mut self, b: &ast::Block) -> Vec<Stmt> {
        self.scopes.push(FxHashMap::default());
        let mut out = Vec::new();
        let mut ended: Option<Span> = None;
        for s in &b.stmts {
            if let Some(after) = ended.take() {
                self.err(TypeError::Unreachable {
                    span: s.span,
                    after,
                });
            }
            if let Some(st) = self.stmt(s) {
                if matches!(st.kind, StmtKind::Return(_) | StmtKind::Finish) {
                    ended = Some(st.span);
                }
                out.push(st);
            }
        }
        self.scopes.pop();
        out
    }

    /// Checks a block that runs on some paths only. Returns its statements
    /// and the stage pipes written on every path through it; the path state
    /// is left as it was before the block.
    pub(super) fn branch(&mut self, b: &ast::Block) -> (Vec<Stmt>, StageSet) {
        let saved = self.stage_writes.clone();
        let r = self.block(b);
        let exit = std::mem::replace(&mut self.stage_writes, saved);
        (r, exit)
    }

    /// After a branching statement: when one of the branches always runs,
    /// a pipe written by every branch is written on every path from here.
    pub(super) fn join_branches(&mut self, exits: Vec<StageSet>, exhaustive: bool) {
        if !exhaustive {
            return;
        }
        let mut exits = exits.into_iter();
        let Some(mut joined) = exits.next() else {
            return;
        };
        for other in exits {
            joined.retain(|k, _| other.contains_key(k));
        }
        self.stage_writes = joined;
    }

    pub(super) fn in_fn(&self) -> bool {
        matches!(self.kind, BodyKind::Fn(_))
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> Option<Stmt> {
        let span = s.span;
        let kind = match &s.kind {
            S::Let { name, ty, value } => {
                let want = ty.as_ref().map(|t| self.type_here(t));
                let v = self.check(value, want.as_ref());
                let ty = want.unwrap_or_else(|| v.ty.clone());
                let l = self.declare(name, ty);
                if !name.name.starts_with('_') {
                    self.lets.push((l, name.span));
                }
                StmtKind::AssignLocal {
                    local: l,
                    path: Vec::new(),
                    value: v,
                }
            }
            S::Assign { place, value } => self.assign(place, value)?,
            S::RegWrite { place, value } => self.reg_write(place, value, span)?,
            S::CounterAdd { name, value } => self.counter_add(name, value, span)?,
            S::If { arms, otherwise } => self.if_stmt(arms, otherwise.as_ref(), span)?,
            S::Match { scrutinee, arms } => self.match_stmt(scrutinee, arms, span)?,
            S::For {
                var,
                start,
                end,
                max: Some(max),
                body,
            } => self.runtime_for(var, start, end, max, body)?,
            S::For {
                var,
                start,
                end,
                max: None,
                body,
            } => self.for_stmt(var, start, end, body, span)?,
            S::While { cond, max, body } => self.while_stmt(cond, max.as_ref(), body, span)?,
            S::Return(e) => match &self.kind {
                BodyKind::Fn(ret) => {
                    let ret = ret.clone();
                    StmtKind::Return(self.check(e, Some(&ret)))
                }
                _ => {
                    self.err(TypeError::ReturnInTick { span });
                    return None;
                }
            },
            S::Finish => {
                if self.in_fn() {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "`finish`",
                    });
                    return None;
                }
                StmtKind::Finish
            }
            S::Assert { cond, message } => {
                if self.in_fn() {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "`assert`",
                    });
                    return None;
                }
                StmtKind::Assert {
                    cond: self.check(cond, Some(&Type::Bool)),
                    message: message.clone(),
                }
            }
            S::Trace {
                name,
                name_span,
                args,
            } => self.trace_stmt(name, *name_span, args, span)?,
            S::Expr(e) => {
                if let A::Call(f, args) = &e.kind
                    && self.is_print(f)
                {
                    self.print_stmt(args, e.span)?
                } else if let A::Method(recv, m, args) = &e.kind {
                    match self.method(recv, m, args, e.span) {
                        MethodResult::Value(v) => StmtKind::Expr(v),
                        MethodResult::Stmt(k) => k,
                        MethodResult::Error => return None,
                    }
                } else {
                    StmtKind::Expr(self.check(e, None))
                }
            }
        };
        Some(Stmt { kind, span })
    }

    /// `place = value;` on a local.
    fn assign(&mut self, place: &ast::Expr, value: &ast::Expr) -> Option<StmtKind> {
        Some({
            let (root, path, ty) = self.place(place)?;
            match root {
                Resolved::Local(l) => {
                    let v = self.check(value, Some(&ty));
                    StmtKind::AssignLocal {
                        local: l,
                        path,
                        value: v,
                    }
                }
                other => {
                    let what = resolved_word(&other);
                    self.err(TypeError::AssignNotLocal {
                        span: place.span,
                        name: place_name(place),
                        what,
                    });
                    return None;
                }
            }
        })
    }

    /// `place <= value;` on a register.
    fn reg_write(&mut self, place: &ast::Expr, value: &ast::Expr, span: Span) -> Option<StmtKind> {
        Some({
            if !matches!(self.kind, BodyKind::Tick) {
                self.err(TypeError::RegWriteOutsideTick { span });
                return None;
            }
            let (root, path, ty) = self.place(place)?;
            match root {
                Resolved::Member(Member::Reg, r) => {
                    let v = self.check(value, Some(&ty));
                    StmtKind::RegWrite {
                        reg: r,
                        path,
                        value: v,
                    }
                }
                other => {
                    let what = resolved_word(&other);
                    self.err(TypeError::WriteNotRegister {
                        span: place.span,
                        name: place_name(place),
                        what,
                    });
                    return None;
                }
            }
        })
    }

    /// `counter += value;`.
    fn counter_add(
        &mut self,
        name: &ast::Ident,
        value: &ast::Expr,
        span: Span,
    ) -> Option<StmtKind> {
        Some({
            if self.in_fn() {
                self.err(TypeError::UnitOpInFn {
                    span,
                    what: "a counter update",
                });
                return None;
            }
            match self.resolve(name) {
                Resolved::Member(Member::Counter, c) => {
                    let v = self.check(value, Some(&Type::uint(64)));
                    StmtKind::CounterAdd {
                        counter: c,
                        value: v,
                    }
                }
                Resolved::Unknown => {
                    self.unknown_name(name);
                    return None;
                }
                other => {
                    let what = resolved_word(&other);
                    self.err(ResolveError::WrongKind {
                        span: name.span,
                        name: name.name.clone(),
                        expected: "counter",
                        found: what,
                    });
                    return None;
                }
            }
        })
    }

    /// `if`/`else if`/`else`, with `if let Some(x) = e` arms; the branches' stage-register writes join.
    fn if_stmt(
        &mut self,
        arms: &[(Cond, ast::Block)],
        otherwise: Option<&ast::Block>,
        span: Span,
    ) -> Option<StmtKind> {
        Some({
            let mut exits = Vec::new();
            let (mut tail, else_exit) = match otherwise {
                Some(b) => {
                    let (body, exit) = self.branch(b);
                    (body, Some(exit))
                }
                None => (Vec::new(), None),
            };
            let mut built: Vec<(Vec<Stmt>, ArmCond)> = Vec::new();
            for (c, b) in arms {
                match c {
                    Cond::Expr(e) => {
                        let ce = self.check(e, Some(&Type::Bool));
                        let (body, exit) = self.branch(b);
                        exits.push(exit);
                        built.push((body, ArmCond::Bool(ce)));
                    }
                    Cond::LetSome(n, e) => {
                        let v = self.check(e, None);
                        let inner = match &v.ty {
                            Type::Option(t) => (**t).clone(),
                            Type::Error => Type::Error,
                            other => {
                                self.err(TypeError::Mismatch {
                                    span: e.span,
                                    expected: "an option (from recv(), peek() or take())".into(),
                                    found: other.to_string(),
                                });
                                Type::Error
                            }
                        };
                        self.scopes.push(FxHashMap::default());
                        let l = self.declare(n, inner);
                        let (body, exit) = self.branch(b);
                        exits.push(exit);
                        self.scopes.pop();
                        built.push((body, ArmCond::Some(l, v)));
                    }
                }
            }
            // The arms first, so a joined write keeps the first arm's span.
            let exhaustive = else_exit.is_some();
            exits.extend(else_exit);
            self.join_branches(exits, exhaustive);
            // Chain from the last arm backwards: else-if becomes nesting.
            let mut result: Option<StmtKind> = None;
            for (body, cond) in built.into_iter().rev() {
                let otherwise = match result.take() {
                    Some(k) => vec![Stmt { kind: k, span }],
                    None => std::mem::take(&mut tail),
                };
                result = Some(match cond {
                    ArmCond::Some(binding, value) => StmtKind::IfSome {
                        binding,
                        value,
                        then: body,
                        otherwise,
                    },
                    ArmCond::Bool(cond) => StmtKind::If {
                        cond,
                        then: body,
                        otherwise,
                    },
                });
            }
            result?
        })
    }

    /// `for var in start..end`, unrolled for the stage-register proof where it is small enough.
    fn for_stmt(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        body: &ast::Block,
        span: Span,
    ) -> Option<StmtKind> {
        Some({
            let a = self.const_here(start, "a loop bound");
            let b = self.const_here(end, "a loop bound");
            let (a, b) = (a?, b?);
            let range = 0..=i128::from(u32::MAX);
            if !range.contains(&a) || !range.contains(&b) {
                let bad = if range.contains(&a) {
                    (end.span, b)
                } else {
                    (start.span, a)
                };
                self.err(TypeError::OutOfRange {
                    span: bad.0,
                    what: "loop bound",
                    value: bad.1,
                    range: "in 0..=4294967295",
                });
                return None;
            }
            let unrolled = self
                .loops
                .iter()
                .map(|l| (l.end - l.start).max(1))
                .fold((b - a).max(0), |n, m| n.saturating_mul(m));
            let too_long = unrolled > MAX_LOOP_ITERATIONS;
            if too_long {
                self.err(TypeError::OutOfRange {
                    span: start.span.to(end.span),
                    what: "unrolled loop length",
                    value: unrolled,
                    range: "at most 4096 (the lengths of nested loops multiply)",
                });
            }
            // The body is still checked, for its own errors and uses;
            // a too-long loop counts as one iteration, so loops inside
            // it are not reported again.
            let (a, b) = if too_long { (a, a + 1) } else { (a, b) };
            self.scopes.push(FxHashMap::default());
            let v = self.declare(var, Type::uint(32));
            self.loops.push(LoopVar {
                slot: v,
                start: a,
                end: b,
                assigned: assigns(&body.stmts, &var.name),
            });
            let (body, mut exit) = self.branch(body);
            self.scopes.pop();
            // Pipes of this loop's variable, written on every path
            // through the body: one pipe per iteration, all in this tick.
            let mut unrolled: Vec<(Span, usize, PipeKey)> = Vec::new();
            exit.retain(|(stage, key), at| {
                let mine = matches!(key, PipeKey::OfLoop { var, .. } if *var == v);
                if mine {
                    unrolled.push((*at, *stage, key.clone()));
                }
                !mine
            });
            unrolled.sort_unstable_by_key(|(at, stage, _)| (at.start, *stage));
            if b - a >= 2 {
                // A pipe that does not depend on the variable, written on
                // every path through the body, is written once per
                // iteration: provably twice. Pipes written before the
                // loop were reported inside the body.
                let mut again: Vec<_> = exit
                    .iter()
                    .filter(|(k, _)| !self.stage_writes.contains_key(k))
                    .map(|(k, &at)| (at, k.clone()))
                    .collect();
                again.sort_unstable_by_key(|(at, (stage, _))| (at.start, *stage));
                for (at, (stage, key)) in again {
                    let pipe = self.pipe_value(&key, None).unwrap_or(0);
                    self.stage_twice(stage, at, span, "this loop runs it more than once", pipe);
                }
            }
            if b > a {
                // Unrolled, the loop's own pipes are constants: any of
                // them written twice (by two iterations, or also before
                // the loop or on every iteration) is provably twice.
                for (at, stage, key) in unrolled {
                    for k in a..b {
                        let Some(p) = self.pipe_value(&key, Some(k)) else {
                            break;
                        };
                        if exit.insert((stage, PipeKey::Const(p)), at).is_some() {
                            self.stage_twice(
                                stage,
                                at,
                                span,
                                "with this loop unrolled, it is written twice",
                                p,
                            );
                            break;
                        }
                    }
                }
                self.stage_writes = exit;
            }
            self.loops.pop();
            if too_long {
                return None;
            }
            StmtKind::For {
                var: v,
                start: a as u32,
                end: b as u32,
                body,
            }
        })
    }

    /// A loop's `max M`: a constant in 1..=[`MAX_LOOP_BOUND`].
    fn loop_max(&mut self, max: &ast::Expr) -> Option<u32> {
        let m = self.const_here(max, "a loop's `max`")?;
        if !(1..=i128::from(MAX_LOOP_BOUND)).contains(&m) {
            self.err(TypeError::OutOfRange {
                span: max.span,
                what: "loop bound",
                value: m,
                range: "in 1..=1048576",
            });
            return None;
        }
        Some(m as u32)
    }

    /// A run-time loop's range end or start: an unsigned integer of at
    /// most 32 bits, as a `u32`.
    fn loop_range_end(&mut self, e: &ast::Expr) -> Expr {
        let v = self.index(e);
        match v.ty.scalar_bits() {
            _ if v.ty == Type::Error => v,
            Some(w) if w <= 32 => {
                if w == 32 {
                    v
                } else {
                    let span = v.span;
                    Expr {
                        kind: ExprKind::Cast(Box::new(v)),
                        ty: Type::uint(32),
                        span,
                    }
                }
            }
            _ => {
                self.err(TypeError::Mismatch {
                    span: e.span,
                    expected:
                        "an unsigned integer of at most 32 bits (the loop variable is a `u32`)"
                            .into(),
                    found: v.ty.to_string(),
                });
                err_expr(e.span)
            }
        }
    }

    /// `for i in a..b max M { ... }`: a loop kept as a loop, its range
    /// known at run time, at most `M` iterations (more is a run-time
    /// fault).
    fn runtime_for(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        max: &ast::Expr,
        body: &ast::Block,
    ) -> Option<StmtKind> {
        let start = self.loop_range_end(start);
        let end = self.loop_range_end(end);
        let max = self.loop_max(max);
        self.scopes.push(FxHashMap::default());
        let v = self.declare(var, Type::uint(32));
        // Not in `self.loops`: nothing about its iterations is known here
        // (port array indices and stage pipes cannot follow it), and the
        // unroll limits count only unrolled loops. Stage registers it
        // writes may or may not be written: run-time checks find a pipe
        // written twice.
        let (body, _) = self.branch(body);
        self.scopes.pop();
        let max = max?;
        if start.ty == Type::Error || end.ty == Type::Error {
            return None;
        }
        Some(StmtKind::RangeLoop {
            var: v,
            start,
            end,
            max,
            body,
        })
    }

    /// `while cond max M { ... }`.
    fn while_stmt(
        &mut self,
        cond: &ast::Expr,
        max: Option<&ast::Expr>,
        body: &ast::Block,
        span: Span,
    ) -> Option<StmtKind> {
        let cond = self.check(cond, Some(&Type::Bool));
        let max = match max {
            Some(m) => self.loop_max(m),
            None => {
                self.err(TypeError::UnboundedLoop { span });
                None
            }
        };
        self.scopes.push(FxHashMap::default());
        let (body, _) = self.branch(body);
        self.scopes.pop();
        let max = max?;
        (cond.ty != Type::Error).then_some(StmtKind::While { cond, max, body })
    }

    /// `trace("name", k = e, ...)`, with its name and value count checked (E0327, E0326).
    fn trace_stmt(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Option<StmtKind> {
        Some({
            if self.in_fn() {
                self.err(TypeError::UnitOpInFn {
                    span,
                    what: "`trace`",
                });
                return None;
            }
            if let Some(problem) = trace_name_problem(name) {
                self.err(TypeError::BadTraceName {
                    span: name_span,
                    name: name.to_string(),
                    problem,
                });
            }
            let mut seen: HashMap<&str, Span> = HashMap::new();
            let mut out = Vec::new();
            // Values counted so far, the span of the arguments past the
            // limit, and the aggregates within the limit that count
            // several values each (labelled: they explain the total).
            let mut values = 0u64;
            let mut extra: Option<(Span, Option<TraceArg>)> = None;
            let mut aggregates = Vec::new();
            for (k, v) in args {
                if let Some(prev) = seen.insert(&k.name, k.span) {
                    self.err(ResolveError::Duplicate {
                        span: k.span,
                        name: k.name.clone(),
                        previous: prev,
                    });
                }
                let checked = self.check(v, None);
                let count = match (&checked.ty, &v.kind) {
                    // A literal (or arithmetic on literals) with no type
                    // to take its width from (E0302) is still one
                    // value, so the count, and E0326, stay right.
                    (Type::Error, A::Int(..) | A::Unary(..) | A::Binary(..)) => 1,
                    (ty, _) => trace_values(ty),
                };
                values = values.saturating_add(count);
                let arg_span = k.span.to(v.span);
                let described = (arg_span, checked.ty.to_string(), count);
                if values > MAX_TRACE_VALUES {
                    // The arguments past the limit share the primary
                    // label; one lone aggregate there is described in it.
                    extra = Some(match extra {
                        None => (arg_span, (count > 1).then_some(described)),
                        Some((s, _)) => (s.to(arg_span), None),
                    });
                } else if count > 1 {
                    aggregates.push(described);
                }
                out.push((k.name.clone(), checked));
            }
            if let Some((span, lone)) = extra {
                self.err(TypeError::TraceTooLarge {
                    span,
                    event: name.to_string(),
                    values,
                    limit: MAX_TRACE_VALUES,
                    lone: lone.map(|(_, ty, count)| (ty, count)),
                    aggregates,
                });
            }
            StmtKind::Trace {
                name: name.to_string(),
                args: out,
            }
        })
    }
}
