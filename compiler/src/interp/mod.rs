//! The reference engine: a direct tree-walking interpreter of the IR.
//!
//! Evaluation order, which faults make observable and which the JIT
//! follows exactly: operands left to right; a `Select` evaluates its
//! condition, then only the chosen arm; a statement evaluates its index or
//! pipe first, then its values, then checks ranges.

use std::sync::Arc;

use crate::engine::{Engine, commit_stage};
use crate::host::Host;
use crate::ir::{Commit, Expr, Indexed, Program, RecvKind, Stmt, eval};

/// Interprets a program's units.
pub struct Interpreter {
    program: Arc<Program>,
    locals: Vec<u64>,
    item: Vec<u64>,
}

impl Interpreter {
    /// Prepares an interpreter for `program` (which must validate).
    pub fn new(program: Arc<Program>) -> Self {
        Interpreter {
            program,
            locals: Vec::new(),
            item: Vec::new(),
        }
    }

    /// Runs one unit's tick and its commits.
    fn run_unit(&mut self, state: &mut [u64], unit: u32, host: &mut dyn Host) {
        let program = &*self.program;
        let u = &program.units[unit as usize];
        self.locals.clear();
        self.locals.resize(u.locals.len(), 0);
        let mut frame = Frame {
            program,
            locals: &mut self.locals,
            item: &mut self.item,
            state,
            host,
        };
        frame.block(&u.body);
        for c in &u.commits {
            match c {
                Commit::Copy { from, to, count } => {
                    let (from, to, count) = (*from as usize, *to as usize, *count as usize);
                    frame.state.copy_within(from..from + count, to);
                }
                Commit::Stage(s) => commit_stage(&program.stages[*s as usize], frame.state),
                Commit::Sparse(c) => commit_sparse(c, frame.locals, frame.state),
            }
        }
    }
}

impl Engine for Interpreter {
    fn tick_unit(&mut self, state: &mut [u64], unit: u32, host: &mut dyn Host) {
        self.run_unit(state, unit, host);
    }
}

struct Frame<'a> {
    program: &'a Program,
    locals: &'a mut Vec<u64>,
    item: &'a mut Vec<u64>,
    state: &'a mut [u64],
    host: &'a mut dyn Host,
}

impl Frame<'_> {
    /// Resolves an indexed access to a slot, or reports its fault.
    fn index(&mut self, ix: &Indexed) -> Option<usize> {
        let i = self.expr(&ix.index);
        if i < u64::from(ix.len) {
            Some(ix.base as usize + i as usize * ix.stride as usize)
        } else {
            self.host.fault(ix.fault);
            None
        }
    }

    fn expr(&mut self, e: &Expr) -> u64 {
        match e {
            Expr::Const(_, v) => *v,
            Expr::Local(l) => self.locals[*l as usize],
            Expr::Load(s) => self.state[*s as usize],
            Expr::LoadIndexed(ix) => self.index(ix).map_or(0, |s| self.state[s]),
            Expr::Unary(op, ty, a) => {
                let a = self.expr(a);
                eval::unary(*op, *ty, a)
            }
            Expr::Binary(op, ty, a, b) => {
                let a = self.expr(a);
                let b = self.expr(b);
                eval::binary(*op, *ty, a, b)
            }
            Expr::Cast { from, to, arg } => {
                let a = self.expr(arg);
                eval::cast(*from, *to, a)
            }
            Expr::Select { cond, then, els } => {
                if self.expr(cond) != 0 {
                    self.expr(then)
                } else {
                    self.expr(els)
                }
            }
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> Vec<u64> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    /// Checks a stage pipe index and its once-per-tick rule, faulting with
    /// the statement's `sites`; marks the pipe touched.
    fn claim_pipe(&mut self, stage: u32, pipe: u64, sites: u32) -> Option<usize> {
        let st = &self.program.stages[stage as usize];
        if pipe >= u64::from(st.pipes) {
            self.host.fault(sites + st.pipes);
            return None;
        }
        let touched = st.touched as usize + pipe as usize;
        if self.state[touched] != 0 {
            self.host.fault(sites + pipe as u32);
            return None;
        }
        self.state[touched] = 1;
        Some(pipe as usize)
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(l, e) => {
                let v = self.expr(e);
                self.locals[*l as usize] = v;
            }
            Stmt::Store(slot, e) => {
                let v = self.expr(e);
                self.state[*slot as usize] = v;
            }
            Stmt::StoreIndexed(ix, e) => {
                let i = self.expr(&ix.index);
                let v = self.expr(e);
                if i < u64::from(ix.len) {
                    self.state[ix.base as usize + i as usize * ix.stride as usize] = v;
                } else {
                    self.host.fault(ix.fault);
                }
            }
            Stmt::If { cond, then, els } => {
                if self.expr(cond) != 0 {
                    self.block(then);
                } else {
                    self.block(els);
                }
            }
            Stmt::While { head, cond, body } => loop {
                self.block(head);
                if self.expr(cond) == 0 {
                    break;
                }
                self.block(body);
            },
            Stmt::StageWrite {
                stage,
                pipe,
                value,
                sites,
            } => {
                let pipe = self.expr(pipe);
                let values = self.exprs(value);
                if let Some(p) = self.claim_pipe(*stage, pipe, *sites) {
                    let st = &self.program.stages[*stage as usize];
                    let k = st.item.len();
                    self.state[st.valid_next as usize + p] = 1;
                    let base = st.value_next as usize + p * k;
                    self.state[base..base + k].copy_from_slice(&values);
                }
            }
            Stmt::StageRetain { stage, pipe, sites } => {
                let pipe = self.expr(pipe);
                if let Some(p) = self.claim_pipe(*stage, pipe, *sites) {
                    let st = &self.program.stages[*stage as usize];
                    let k = st.item.len();
                    self.state[st.valid_next as usize + p] = self.state[st.valid as usize + p];
                    let from = st.value as usize + p * k;
                    self.state
                        .copy_within(from..from + k, st.value_next as usize + p * k);
                }
            }
            Stmt::CanSend { port, dst } => {
                let ok = self.host.can_send(*port);
                self.locals[*dst as usize] = u64::from(ok);
            }
            Stmt::Send {
                port,
                value,
                dst,
                fault,
            } => {
                let values = self.exprs(value);
                let sent = self.host.send(*port, &values, *fault);
                if let Some(d) = dst {
                    self.locals[*d as usize] = u64::from(sent);
                }
            }
            Stmt::Recv {
                port,
                kind,
                ok,
                dst,
            } => {
                self.item.clear();
                self.item.resize(dst.len(), 0);
                let got = match kind {
                    RecvKind::Recv => self.host.recv(*port, true, self.item),
                    RecvKind::Peek => self.host.recv(*port, false, self.item),
                    RecvKind::Take => self.host.take(*port, self.item),
                };
                self.locals[*ok as usize] = u64::from(got);
                if got {
                    for (l, v) in dst.iter().zip(self.item.iter()) {
                        self.locals[*l as usize] = *v;
                    }
                }
            }
            Stmt::Request { port, dst } => {
                let ok = self.host.request(*port);
                self.locals[*dst as usize] = u64::from(ok);
            }
            Stmt::Valid { port, dst } => {
                let ok = self.host.valid(*port);
                self.locals[*dst as usize] = u64::from(ok);
            }
            Stmt::Trace { trace, args } => {
                let values = self.exprs(args);
                self.host.trace(*trace, &values);
            }
            Stmt::Assert { cond, fault } => {
                if self.expr(cond) == 0 {
                    self.host.fault(*fault);
                }
            }
            Stmt::Finish => self.host.finish(),
        }
    }
}

/// A [`Commit::Sparse`]: copies the next slots the tick wrote (the others
/// equal their current slots already).
fn commit_sparse(c: &crate::ir::SparseCommit, locals: &[u64], state: &mut [u64]) {
    let shift = |s: usize| s - c.from as usize + c.to as usize;
    for &s in &c.slots {
        state[shift(s as usize)] = state[s as usize];
    }
    for x in &c.indexed {
        let i = locals[x.local as usize];
        if i < u64::from(x.len) {
            let s = x.base as usize + i as usize * x.stride as usize;
            state[shift(s)] = state[s];
        }
    }
}
