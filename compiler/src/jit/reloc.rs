//! Position-independent unit code, so instances of one unit share one
//! native function.
//!
//! A unit's code is rewritten relative to bases: slots relative to the
//! lowest slot it touches (the JIT function receives the state pointer
//! already offset), ports and traces relative to the lowest it names (the
//! host adds the base back), stage registers as indices into the unit's own
//! list, fault sites as indices into a per-instance table. Units whose
//! rewritten code is equal share one compiled function.

use std::collections::HashMap;

use crate::ir::{Commit, Expr, Indexed, Program, Stage, Stmt, Ty, Unit};

/// The relocated form of a unit: equal shapes share code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Shape {
    locals: Vec<Ty>,
    body: Vec<Stmt>,
    commits: Vec<Commit>,
    stages: Vec<StageShape>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct StageShape {
    pipes: u32,
    item: Vec<Ty>,
    slots: [u32; 5],
}

/// How one instance maps its shape's relative ids back to the program's.
#[derive(Clone, Debug, Default)]
pub(super) struct Reloc {
    /// Added to every slot.
    pub slot_base: u32,
    /// Added to every port id.
    pub port_base: u32,
    /// Added to every trace id.
    pub trace_base: u32,
    /// Relative fault index to program fault id.
    pub faults: Vec<u32>,
}

#[derive(Default)]
struct Rewriter {
    slot_base: u32,
    port_base: u32,
    trace_base: u32,
    stages: HashMap<u32, u32>,
    /// Pipes of each program stage the unit names.
    pipes: HashMap<u32, u32>,
    faults: HashMap<u32, u32>,
    fault_list: Vec<u32>,
}

impl Rewriter {
    fn fault(&mut self, f: u32) -> u32 {
        let next = self.fault_list.len() as u32;
        *self.faults.entry(f).or_insert_with(|| {
            self.fault_list.push(f);
            next
        })
    }

    /// A stage statement's `pipes + 1` sites, kept consecutive (the code
    /// adds the pipe to the first): a statement's sites are its own, so
    /// either all are new here or all were mapped together before.
    fn stage_sites(&mut self, stage: u32, first: u32) -> u32 {
        let relative = self.fault(first);
        for k in 1..=self.pipes[&stage] {
            self.fault(first + k);
        }
        relative
    }

    fn indexed(&mut self, ix: &Indexed) -> Indexed {
        Indexed {
            base: ix.base - self.slot_base,
            stride: ix.stride,
            len: ix.len,
            index: Box::new(self.expr(&ix.index)),
            fault: self.fault(ix.fault),
        }
    }

    fn expr(&mut self, e: &Expr) -> Expr {
        match e {
            Expr::Const(..) | Expr::Local(_) => e.clone(),
            Expr::Load(s) => Expr::Load(s - self.slot_base),
            Expr::LoadIndexed(ix) => Expr::LoadIndexed(self.indexed(ix)),
            Expr::Unary(op, ty, a) => Expr::Unary(*op, *ty, Box::new(self.expr(a))),
            Expr::Binary(op, ty, a, b) => {
                Expr::Binary(*op, *ty, Box::new(self.expr(a)), Box::new(self.expr(b)))
            }
            Expr::Cast { from, to, arg } => Expr::Cast {
                from: *from,
                to: *to,
                arg: Box::new(self.expr(arg)),
            },
            Expr::Select { cond, then, els } => Expr::Select {
                cond: Box::new(self.expr(cond)),
                then: Box::new(self.expr(then)),
                els: Box::new(self.expr(els)),
            },
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn block(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        let port = |r: &Self, p: u32| p - r.port_base;
        match s {
            Stmt::Assign(l, e) => Stmt::Assign(*l, self.expr(e)),
            Stmt::Store(slot, e) => Stmt::Store(slot - self.slot_base, self.expr(e)),
            Stmt::StoreIndexed(ix, e) => Stmt::StoreIndexed(self.indexed(ix), self.expr(e)),
            Stmt::If { cond, then, els } => Stmt::If {
                cond: self.expr(cond),
                then: self.block(then),
                els: self.block(els),
            },
            Stmt::While { head, cond, body } => Stmt::While {
                head: self.block(head),
                cond: Box::new(self.expr(cond)),
                body: self.block(body),
            },
            Stmt::StageWrite {
                stage,
                pipe,
                value,
                sites,
            } => Stmt::StageWrite {
                stage: self.stages[stage],
                pipe: self.expr(pipe),
                value: self.exprs(value),
                sites: self.stage_sites(*stage, *sites),
            },
            Stmt::StageRetain { stage, pipe, sites } => Stmt::StageRetain {
                stage: self.stages[stage],
                pipe: self.expr(pipe),
                sites: self.stage_sites(*stage, *sites),
            },
            Stmt::CanSend { port: p, dst } => Stmt::CanSend {
                port: port(self, *p),
                dst: *dst,
            },
            Stmt::Send {
                port: p,
                value,
                dst,
                fault,
            } => Stmt::Send {
                port: port(self, *p),
                value: self.exprs(value),
                dst: *dst,
                fault: fault.map(|f| self.fault(f)),
            },
            Stmt::Recv {
                port: p,
                kind,
                ok,
                dst,
            } => Stmt::Recv {
                port: port(self, *p),
                kind: *kind,
                ok: *ok,
                dst: dst.clone(),
            },
            Stmt::Request { port: p, dst } => Stmt::Request {
                port: port(self, *p),
                dst: *dst,
            },
            Stmt::Valid { port: p, dst } => Stmt::Valid {
                port: port(self, *p),
                dst: *dst,
            },
            Stmt::Trace { trace, args } => Stmt::Trace {
                trace: trace - self.trace_base,
                args: self.exprs(args),
            },
            Stmt::Assert { cond, fault } => Stmt::Assert {
                cond: self.expr(cond),
                fault: self.fault(*fault),
            },
            Stmt::Finish => Stmt::Finish,
        }
    }
}

/// Visits every id a unit names: (slots, ports, traces, stages).
fn scan(p: &Program, u: &Unit) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    fn expr(e: &Expr, slots: &mut Vec<u32>) {
        e.visit(&mut |e| match e {
            Expr::Load(s) => slots.push(*s),
            Expr::LoadIndexed(ix) => slots.push(ix.base),
            _ => {}
        });
    }
    let mut ids = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    crate::ir::walk::visit_stmts(&u.body, &mut |s| {
        match s {
            Stmt::Store(slot, _) => ids.0.push(*slot),
            Stmt::StoreIndexed(ix, _) => ids.0.push(ix.base),
            Stmt::StageWrite { stage, .. } | Stmt::StageRetain { stage, .. } => ids.3.push(*stage),
            Stmt::CanSend { port, .. }
            | Stmt::Recv { port, .. }
            | Stmt::Request { port, .. }
            | Stmt::Valid { port, .. }
            | Stmt::Send { port, .. } => ids.1.push(*port),
            Stmt::Trace { trace, .. } => ids.2.push(*trace),
            Stmt::Assign(..)
            | Stmt::If { .. }
            | Stmt::While { .. }
            | Stmt::Assert { .. }
            | Stmt::Finish => {}
        }
        s.own_exprs(&mut |e| expr(e, &mut ids.0));
    });
    for c in &u.commits {
        match c {
            Commit::Copy { from, to, .. } => ids.0.extend([*from, *to]),
            Commit::Stage(s) => ids.3.push(*s),
            Commit::Sparse(c) => ids.0.extend([c.from, c.to]),
        }
    }
    for s in &ids.3 {
        let st = &p.stages[*s as usize];
        ids.0
            .extend([st.valid, st.value, st.valid_next, st.value_next, st.touched]);
    }
    ids
}

/// The shape of unit `u` and how to relocate it back.
pub(super) fn relocate(p: &Program, u: u32) -> (Shape, Reloc) {
    let unit = &p.units[u as usize];
    let (slots, ports, traces, stages) = scan(p, unit);
    let mut r = Rewriter {
        slot_base: slots.iter().copied().min().unwrap_or(0),
        port_base: ports.iter().copied().min().unwrap_or(0),
        trace_base: traces.iter().copied().min().unwrap_or(0),
        ..Rewriter::default()
    };
    let mut stage_list: Vec<u32> = Vec::new();
    for s in stages {
        if let std::collections::hash_map::Entry::Vacant(slot) = r.stages.entry(s) {
            slot.insert(stage_list.len() as u32);
            stage_list.push(s);
            r.pipes.insert(s, p.stages[s as usize].pipes);
        }
    }
    let stage_shapes = stage_list
        .iter()
        .map(|s| {
            let st: &Stage = &p.stages[*s as usize];
            let b = r.slot_base;
            StageShape {
                pipes: st.pipes,
                item: st.item.clone(),
                slots: [
                    st.valid - b,
                    st.value - b,
                    st.valid_next - b,
                    st.value_next - b,
                    st.touched - b,
                ],
            }
        })
        .collect();
    let body = r.block(&unit.body);
    let commits = unit
        .commits
        .iter()
        .map(|c| match c {
            Commit::Copy { from, to, count } => Commit::Copy {
                from: from - r.slot_base,
                to: to - r.slot_base,
                count: *count,
            },
            Commit::Stage(s) => Commit::Stage(r.stages[s]),
            Commit::Sparse(c) => {
                let b = r.slot_base;
                Commit::Sparse(Box::new(crate::ir::SparseCommit {
                    from: c.from - b,
                    to: c.to - b,
                    count: c.count,
                    slots: c.slots.iter().map(|s| s - b).collect(),
                    indexed: c
                        .indexed
                        .iter()
                        .map(|x| crate::ir::SparseIndex {
                            base: x.base - b,
                            ..x.clone()
                        })
                        .collect(),
                }))
            }
        })
        .collect();
    let shape = Shape {
        locals: unit.locals.clone(),
        body,
        commits,
        stages: stage_shapes,
    };
    let reloc = Reloc {
        slot_base: r.slot_base,
        port_base: r.port_base,
        trace_base: r.trace_base,
        faults: r.fault_list,
    };
    (shape, reloc)
}

/// A one-unit program holding a shape, for the code generator.
pub(super) fn shape_program(shape: &Shape) -> Program {
    let stages = shape
        .stages
        .iter()
        .map(|s| Stage {
            unit: 0,
            name: String::new(),
            pipes: s.pipes,
            item: s.item.clone(),
            valid: s.slots[0],
            value: s.slots[1],
            valid_next: s.slots[2],
            value_next: s.slots[3],
            touched: s.slots[4],
        })
        .collect();
    Program {
        units: vec![Unit {
            path: String::new(),
            domain: 0,
            locals: shape.locals.clone(),
            body: shape.body.clone(),
            commits: shape.commits.clone(),
        }],
        stages,
        ..Program::default()
    }
}
