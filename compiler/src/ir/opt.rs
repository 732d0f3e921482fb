//! Optimizations of a valid program, run by lowering so that both engines
//! execute the same, cheaper code. Each keeps every observable: what the
//! runtime sees (sends, receives, traces, faults, in order), and the value
//! of every register and counter after each tick. Only the register *next*
//! slots of registers written in place stop changing (see
//! [`in_place_registers`]).
//!
//! - [`fuse_can_send`]: `if tx.can_send() { tx.send(v); ... }` makes one
//!   host call, `try_send(v)`, instead of two.
//! - [`fold_constants`]: locals that hold a constant (unrolled loop
//!   indices) are replaced by it, constant operations are evaluated,
//!   indexed accesses with a constant in-range index become plain slot
//!   accesses, conditionals with a constant condition keep only the branch
//!   taken and asserts that cannot fail disappear.
//! - [`in_place_registers`]: a register whose slots are only ever written at
//!   known positions stores straight into its current slots; a read that
//!   comes after the first write reads a local holding the value from
//!   before the edge, and its commit becomes a no-op (`from == to`).

use std::collections::HashMap;

use super::{Commit, Expr, Indexed, LocalId, Program, SlotId, Stmt, Ty, eval};

/// Runs every optimization on every unit of `p`.
pub fn optimize(p: &mut Program) {
    for u in 0..p.units.len() {
        fuse_can_send(p, u);
        fold_constants(p, u);
        in_place_registers(p, u);
    }
}

/// Fuses a `can_send` with the `send` its branch starts with, in unit `u`.
///
/// `l = p.can_send(); if l { a; p.send(v); rest } else { els }` becomes
/// `a; l = p.try_send(v); if l { rest } else { els }`, where `a` is a run
/// of local assignments (an inlined function computing `v`). A host's
/// `try_send` sends exactly when `can_send` would have answered true
/// (contract §4 and §5: the same credit check, nothing in between), so the
/// runtime sees the same send. What changes is that `a` and `v` are
/// evaluated before the check, which is unobservable when they cannot
/// fault (no indexed load), do not read `l`, and the locals `a` assigns
/// are read nowhere outside the branch.
pub fn fuse_can_send(p: &mut Program, u: usize) {
    let locals = p.units[u].locals.len();
    let body = &mut p.units[u].body;
    // Most units send nothing: skip counting their reads.
    let mut any = false;
    for s in body.iter() {
        s.visit(&mut |s| any |= matches!(s, Stmt::CanSend { .. }));
    }
    if !any {
        return;
    }
    let mut reads = vec![0; locals];
    for s in body.iter() {
        count_reads(s, &mut reads);
    }
    fuse_block(body, &reads);
}

/// Adds the reads of each local in `s` (nested blocks included) to `reads`.
fn count_reads(s: &Stmt, reads: &mut [u32]) {
    s.exprs(&mut |e| {
        e.visit(&mut |e| {
            if let Expr::Local(l) = e {
                reads[*l as usize] += 1;
            }
        })
    });
}

/// The length of the prefix of `then` that can move ahead of a fused
/// `send` of `port` (checking `dst`), if a `send` follows it.
fn fusable_prefix(then: &[Stmt], port: u32, dst: LocalId, reads: &[u32]) -> Option<usize> {
    let j = then.iter().position(|s| !matches!(s, Stmt::Assign(..)))?;
    let Stmt::Send {
        port: sent,
        value,
        dst: None,
        ..
    } = &then[j]
    else {
        return None;
    };
    if *sent != port || !value.iter().all(|v| fault_free_without(v, dst)) {
        return None;
    }
    let mut inside = vec![0; reads.len()];
    for s in then {
        count_reads(s, &mut inside);
    }
    let movable = then[..j].iter().all(|s| match s {
        Stmt::Assign(l, e) => {
            *l != dst && fault_free_without(e, dst) && reads[*l as usize] == inside[*l as usize]
        }
        _ => false,
    });
    movable.then_some(j)
}

fn fuse_block(stmts: &mut Vec<Stmt>, reads: &[u32]) {
    let mut out = Vec::with_capacity(stmts.len());
    let mut it = std::mem::take(stmts).into_iter().peekable();
    while let Some(mut s) = it.next() {
        match &mut s {
            Stmt::If { then, els, .. } => {
                fuse_block(then, reads);
                fuse_block(els, reads);
            }
            Stmt::While { head, body, .. } => {
                fuse_block(head, reads);
                fuse_block(body, reads);
            }
            _ => {}
        }
        if let Stmt::CanSend { port, dst } = s
            && let Some(Stmt::If { cond, then, .. }) = it.peek_mut()
            && *cond == Expr::Local(dst)
            && let Some(j) = fusable_prefix(then, port, dst, reads)
        {
            out.extend(then.drain(..j));
            let Stmt::Send { value, .. } = then.remove(0) else {
                unreachable!("fusable_prefix found a send");
            };
            // A `try_send` reports no fault, so the `send`'s site goes.
            out.push(Stmt::Send {
                port,
                value,
                dst: Some(dst),
                fault: None,
            });
            continue;
        }
        out.push(s);
    }
    *stmts = out;
}

/// Whether evaluating `e` can neither fault nor read local `l`.
fn fault_free_without(e: &Expr, l: LocalId) -> bool {
    let mut ok = true;
    e.visit(&mut |e| {
        if matches!(e, Expr::LoadIndexed(_)) || *e == Expr::Local(l) {
            ok = false;
        }
    });
    ok
}

/// Folds constants in unit `u` (see the module doc).
pub fn fold_constants(p: &mut Program, u: usize) {
    let unit = &mut p.units[u];
    let body = std::mem::take(&mut unit.body);
    let mut f = Fold {
        locals: &unit.locals,
        consts: HashMap::new(),
    };
    let mut out = Vec::with_capacity(body.len());
    f.block(body, &mut out);
    unit.body = out;
}

/// The slot a constant in-range index selects.
fn constant_slot(ix: &Indexed) -> Option<SlotId> {
    match *ix.index {
        Expr::Const(_, i) if i < u64::from(ix.len) => Some(ix.base + i as u32 * ix.stride),
        _ => None,
    }
}

struct Fold<'a> {
    locals: &'a [Ty],
    /// Locals known to hold a constant at the current point, on every path.
    consts: HashMap<LocalId, u64>,
}

impl Fold<'_> {
    /// Folds a boxed expression, reusing its allocation.
    fn boxed(&self, mut e: Box<Expr>) -> Box<Expr> {
        let inner = std::mem::replace(&mut *e, Expr::Const(Ty::BOOL, 0));
        *e = self.expr(inner);
        e
    }

    fn indexed(&self, ix: Indexed) -> Indexed {
        Indexed {
            index: self.boxed(ix.index),
            ..ix
        }
    }

    fn expr(&self, e: Expr) -> Expr {
        match e {
            Expr::Const(..) | Expr::Load(_) => e,
            Expr::Local(l) => match self.consts.get(&l) {
                Some(v) => Expr::Const(self.locals[l as usize], *v),
                None => e,
            },
            Expr::LoadIndexed(ix) => {
                let ix = self.indexed(ix);
                // An out-of-range constant index still faults at run time.
                constant_slot(&ix).map_or(Expr::LoadIndexed(ix), Expr::Load)
            }
            Expr::Unary(op, ty, a) => match self.expr(*a) {
                Expr::Const(_, v) => Expr::Const(ty, eval::unary(op, ty, v)),
                a => Expr::Unary(op, ty, Box::new(a)),
            },
            Expr::Binary(op, ty, a, b) => match (self.expr(*a), self.expr(*b)) {
                (Expr::Const(_, x), Expr::Const(_, y)) => {
                    let rty = if op.is_comparison() { Ty::BOOL } else { ty };
                    Expr::Const(rty, eval::binary(op, ty, x, y))
                }
                (a, b) => Expr::Binary(op, ty, Box::new(a), Box::new(b)),
            },
            Expr::Cast { from, to, arg } => match self.expr(*arg) {
                Expr::Const(_, v) => Expr::Const(to, eval::cast(from, to, v)),
                arg => Expr::Cast {
                    from,
                    to,
                    arg: Box::new(arg),
                },
            },
            // Only the chosen arm is evaluated, so the other one (and any
            // fault it could raise) can go.
            Expr::Select { cond, then, els } => match self.expr(*cond) {
                Expr::Const(_, c) => self.expr(if c != 0 { *then } else { *els }),
                cond => Expr::Select {
                    cond: Box::new(cond),
                    then: self.boxed(then),
                    els: self.boxed(els),
                },
            },
        }
    }

    fn forget(&mut self, l: LocalId) {
        self.consts.remove(&l);
    }

    fn block(&mut self, stmts: Vec<Stmt>, out: &mut Vec<Stmt>) {
        for s in stmts {
            self.stmt(s, out);
        }
    }

    fn stmt(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        let s = match s {
            Stmt::Assign(l, e) => {
                let e = self.expr(e);
                match e {
                    Expr::Const(_, v) => self.consts.insert(l, v),
                    _ => self.consts.remove(&l),
                };
                Stmt::Assign(l, e)
            }
            Stmt::Store(slot, e) => Stmt::Store(slot, self.expr(e)),
            Stmt::StoreIndexed(ix, e) => {
                // The index is evaluated first; a constant one has no
                // effect to keep in order.
                let ix = self.indexed(ix);
                let e = self.expr(e);
                match constant_slot(&ix) {
                    Some(slot) => Stmt::Store(slot, e),
                    None => Stmt::StoreIndexed(ix, e),
                }
            }
            Stmt::If { cond, then, els } => {
                let cond = self.expr(cond);
                if let Expr::Const(_, c) = cond {
                    // Blocks open no scope: the branch taken runs in place.
                    self.block(if c != 0 { then } else { els }, out);
                    return;
                }
                let before = self.consts.clone();
                let mut t = Vec::with_capacity(then.len());
                self.block(then, &mut t);
                let after_then = std::mem::replace(&mut self.consts, before);
                let mut e = Vec::with_capacity(els.len());
                self.block(els, &mut e);
                self.consts
                    .retain(|l, v| after_then.get(l).is_some_and(|w| w == v));
                Stmt::If {
                    cond,
                    then: t,
                    els: e,
                }
            }
            Stmt::While { head, cond, body } => {
                // The back edge brings whatever the loop assigns: those
                // locals are unknown from the top of the loop on.
                for s in head.iter().chain(&body) {
                    s.visit(&mut |s| s.own_defs(&mut |l| self.forget(l)));
                }
                let mut h = Vec::with_capacity(head.len());
                self.block(head, &mut h);
                let cond = self.expr(*cond);
                if matches!(cond, Expr::Const(_, 0)) {
                    out.extend(h);
                    return;
                }
                // The loop leaves only from its test.
                let at_test = self.consts.clone();
                let mut b = Vec::with_capacity(body.len());
                self.block(body, &mut b);
                self.consts = at_test;
                Stmt::While {
                    head: h,
                    cond: Box::new(cond),
                    body: b,
                }
            }
            Stmt::StageWrite {
                stage,
                pipe,
                value,
                sites,
            } => Stmt::StageWrite {
                stage,
                pipe: self.expr(pipe),
                value: value.into_iter().map(|v| self.expr(v)).collect(),
                sites,
            },
            Stmt::StageRetain { stage, pipe, sites } => Stmt::StageRetain {
                stage,
                pipe: self.expr(pipe),
                sites,
            },
            Stmt::CanSend { port, dst } => {
                self.forget(dst);
                Stmt::CanSend { port, dst }
            }
            Stmt::Send {
                port,
                value,
                dst,
                fault,
            } => {
                let value = value.into_iter().map(|v| self.expr(v)).collect();
                if let Some(d) = dst {
                    self.forget(d);
                }
                Stmt::Send {
                    port,
                    value,
                    dst,
                    fault,
                }
            }
            Stmt::Recv {
                port,
                kind,
                ok,
                dst,
            } => {
                self.forget(ok);
                for l in &dst {
                    self.forget(*l);
                }
                Stmt::Recv {
                    port,
                    kind,
                    ok,
                    dst,
                }
            }
            Stmt::Request { port, dst } => {
                self.forget(dst);
                Stmt::Request { port, dst }
            }
            Stmt::Valid { port, dst } => {
                self.forget(dst);
                Stmt::Valid { port, dst }
            }
            Stmt::Trace { trace, args } => Stmt::Trace {
                trace,
                args: args.into_iter().map(|a| self.expr(a)).collect(),
            },
            Stmt::Assert { cond, fault } => {
                let cond = self.expr(cond);
                if matches!(cond, Expr::Const(_, c) if c != 0) {
                    return;
                }
                Stmt::Assert { cond, fault }
            }
            Stmt::Finish => Stmt::Finish,
        };
        out.push(s);
    }
}

/// The slots an indexed access may touch, as an inclusive range.
fn span(ix: &Indexed) -> (SlotId, SlotId) {
    (ix.base, ix.base + ix.stride * (ix.len.max(1) - 1))
}

fn overlaps((lo, hi): (SlotId, SlotId), from: SlotId, count: u32) -> bool {
    lo < from + count && from <= hi
}

/// Where the register slots `lo..lo + len` are accessed in a unit's
/// body, by top-level statement (vectors, not maps: this runs for every
/// unit instance).
struct Accesses {
    lo: SlotId,
    /// Per slot: the first top-level statement with a plain store to it.
    first_store: Vec<usize>,
    /// Per slot: the last top-level statement with a plain load of it.
    last_load: Vec<usize>,
    /// Indexed loads: the range and the top-level statement.
    indexed_loads: Vec<((SlotId, SlotId), usize)>,
    /// Indexed stores: the range.
    indexed_stores: Vec<(SlotId, SlotId)>,
}

const NONE: usize = usize::MAX;

impl Accesses {
    fn at(v: &[usize], lo: SlotId, slot: SlotId) -> Option<usize> {
        let i = slot.checked_sub(lo)? as usize;
        v.get(i).copied().filter(|t| *t != NONE)
    }

    fn first_store(&self, slot: SlotId) -> Option<usize> {
        Self::at(&self.first_store, self.lo, slot)
    }

    fn last_load(&self, slot: SlotId) -> Option<usize> {
        Self::at(&self.last_load, self.lo, slot)
    }
}

fn accesses(body: &[Stmt], lo: SlotId, len: usize) -> Accesses {
    let mut a = Accesses {
        lo,
        first_store: vec![NONE; len],
        last_load: vec![NONE; len],
        indexed_loads: Vec::new(),
        indexed_stores: Vec::new(),
    };
    let index = |slot: SlotId| {
        slot.checked_sub(lo)
            .map(|i| i as usize)
            .filter(|i| *i < len)
    };
    for (t, top) in body.iter().enumerate() {
        top.visit(&mut |s| match s {
            Stmt::Store(slot, _) => {
                if let Some(i) = index(*slot)
                    && a.first_store[i] == NONE
                {
                    a.first_store[i] = t;
                }
            }
            Stmt::StoreIndexed(ix, _) => a.indexed_stores.push(span(ix)),
            _ => {}
        });
        top.exprs(&mut |e| {
            e.visit(&mut |e| match e {
                Expr::Load(slot) => {
                    if let Some(i) = index(*slot) {
                        a.last_load[i] = t;
                    }
                }
                Expr::LoadIndexed(ix) => a.indexed_loads.push((span(ix), t)),
                _ => {}
            })
        });
    }
    a
}

/// Writes registers of unit `u` in place where that is safe.
///
/// A register's current slots are read only by its own unit (IR
/// guarantee), so storing the new value straight into them is invisible
/// outside the tick; inside it, every read that may come after the first
/// write must still see the value from before the edge. For a register
/// with slots `cur` and `next`, this applies when nothing reads `next`,
/// nothing stores to `cur`, no indexed store may touch either, and no
/// indexed load of `cur` may come after its first write. Then each
/// `Store(next + j, e)` becomes `Store(cur + j, e)`; when a read of
/// `cur + j` follows the top-level statement `T` with the first such
/// store (or sits inside `T`, unless `T` is that plain store, which
/// evaluates its value first), a new local takes `cur + j` just before
/// `T` and every read from `T` on uses it. The commit becomes a copy of
/// `cur` onto itself, which the engines skip, so the register still lists
/// its slots for the recorders.
pub fn in_place_registers(p: &mut Program, u: usize) {
    let unit = &p.units[u];
    let registers = |c: &Commit| matches!(c, Commit::Copy { from, to, .. } if from != to);
    if !unit.commits.iter().any(registers) {
        return;
    }
    // The window of slots the registers occupy, current and next.
    let (mut lo, mut hi) = (SlotId::MAX, 0);
    for c in &unit.commits {
        if let Commit::Copy { from, to, count } = c {
            lo = lo.min(*from).min(*to);
            hi = hi.max(from + count).max(to + count);
        }
    }
    let a = accesses(&unit.body, lo, hi.saturating_sub(lo) as usize);
    // For each rewritten next slot: its current slot.
    let mut store_to: HashMap<SlotId, SlotId> = HashMap::new();
    // Snapshots: current slot -> (first top-level statement, local).
    let mut snapshot: HashMap<SlotId, (usize, LocalId)> = HashMap::new();
    let mut new_locals = Vec::new();
    let mut commits = unit.commits.clone();
    for c in &mut commits {
        let Commit::Copy { from, to, count } = c else {
            continue;
        };
        let (next, cur, count) = (*from, *to, *count);
        if next == cur {
            continue;
        }
        let slots = || (0..count).map(|j| (next + j, cur + j));
        let first = slots().filter_map(|(n, _)| a.first_store(n)).min();
        let unsafe_register = slots()
            .any(|(n, c)| a.last_load(n).is_some() || a.first_store(c).is_some())
            || a.indexed_stores
                .iter()
                .any(|r| overlaps(*r, next, count) || overlaps(*r, cur, count))
            || a.indexed_loads.iter().any(|(r, t)| {
                overlaps(*r, next, count)
                    || (overlaps(*r, cur, count) && first.is_some_and(|f| *t >= f))
            });
        if unsafe_register {
            continue;
        }
        for (n, c) in slots() {
            store_to.insert(n, c);
            let (Some(t), Some(last)) = (a.first_store(n), a.last_load(c)) else {
                continue;
            };
            let plain_store_first = matches!(&unit.body[t], Stmt::Store(s, _) if *s == n);
            if last > t || (last == t && !plain_store_first) {
                let local = (unit.locals.len() + new_locals.len()) as LocalId;
                new_locals.push(p.slots[c as usize].ty);
                snapshot.insert(c, (t, local));
            }
        }
        *from = cur;
    }
    if store_to.is_empty() {
        return;
    }
    let unit = &mut p.units[u];
    unit.commits = commits;
    unit.locals.extend(new_locals);
    // Snapshots to take before each top-level statement.
    let mut before: HashMap<usize, Vec<(SlotId, LocalId)>> = HashMap::new();
    for (&c, &(t, l)) in &snapshot {
        before.entry(t).or_default().push((c, l));
    }
    let body = std::mem::take(&mut unit.body);
    let mut out = Vec::with_capacity(body.len() + snapshot.len());
    for (t, mut s) in body.into_iter().enumerate() {
        if let Some(mut snaps) = before.remove(&t) {
            snaps.sort_unstable();
            out.extend(
                snaps
                    .into_iter()
                    .map(|(c, l)| Stmt::Assign(l, Expr::Load(c))),
            );
        }
        let reads = |slot: SlotId| match snapshot.get(&slot) {
            Some(&(first, l)) if t >= first => Some(l),
            _ => None,
        };
        rewrite(&mut s, &store_to, &reads);
        out.push(s);
    }
    unit.body = out;
}

/// Redirects stores by `store_to` and loads to the locals `reads` names.
fn rewrite(
    s: &mut Stmt,
    store_to: &HashMap<SlotId, SlotId>,
    reads: &dyn Fn(SlotId) -> Option<LocalId>,
) {
    let fix = |e: &mut Expr| rewrite_expr(e, reads);
    match s {
        Stmt::Assign(_, e) => fix(e),
        Stmt::Store(slot, e) => {
            fix(e);
            if let Some(c) = store_to.get(slot) {
                *slot = *c;
            }
        }
        Stmt::StoreIndexed(ix, e) => {
            fix(&mut ix.index);
            fix(e);
        }
        Stmt::If {
            cond,
            then: a,
            els: b,
        } => {
            fix(cond);
            for s in a.iter_mut().chain(b.iter_mut()) {
                rewrite(s, store_to, reads);
            }
        }
        Stmt::While { cond, head, body } => {
            fix(cond);
            for s in head.iter_mut().chain(body.iter_mut()) {
                rewrite(s, store_to, reads);
            }
        }
        Stmt::StageWrite { pipe, value, .. } => {
            fix(pipe);
            value.iter_mut().for_each(fix);
        }
        Stmt::StageRetain { pipe, .. } => fix(pipe),
        Stmt::Send { value, .. } => value.iter_mut().for_each(fix),
        Stmt::Trace { args, .. } => args.iter_mut().for_each(fix),
        Stmt::Assert { cond, .. } => fix(cond),
        Stmt::CanSend { .. }
        | Stmt::Recv { .. }
        | Stmt::Request { .. }
        | Stmt::Valid { .. }
        | Stmt::Finish => {}
    }
}

fn rewrite_expr(e: &mut Expr, reads: &dyn Fn(SlotId) -> Option<LocalId>) {
    match e {
        Expr::Load(slot) => {
            if let Some(l) = reads(*slot) {
                *e = Expr::Local(l);
            }
        }
        Expr::Const(..) | Expr::Local(_) => {}
        Expr::LoadIndexed(ix) => rewrite_expr(&mut ix.index, reads),
        Expr::Unary(_, _, a) | Expr::Cast { arg: a, .. } => rewrite_expr(a, reads),
        Expr::Binary(_, _, a, b) => {
            rewrite_expr(a, reads);
            rewrite_expr(b, reads);
        }
        Expr::Select { cond, then, els } => {
            rewrite_expr(cond, reads);
            rewrite_expr(then, reads);
            rewrite_expr(els, reads);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::{Engine, initial_state};
    use crate::interp::Interpreter;
    use crate::ir::{FaultId, print, validate};
    use crate::testing::random_program::random_program;
    use crate::testing::script_host::ScriptHost;

    /// Next slots that the optimized program no longer writes: those of
    /// registers whose commit became a copy onto itself.
    fn dead_next_slots(before: &Program, after: &Program) -> Vec<bool> {
        let mut dead = vec![false; before.slots.len()];
        for (ub, ua) in before.units.iter().zip(&after.units) {
            for (cb, ca) in ub.commits.iter().zip(&ua.commits) {
                if let (
                    Commit::Copy { from, count, .. },
                    Commit::Copy {
                        from: f2, to: t2, ..
                    },
                ) = (cb, ca)
                    && f2 == t2
                {
                    for s in *from..from + count {
                        dead[s as usize] = true;
                    }
                }
            }
        }
        dead
    }

    /// Runs both programs on the interpreter with the same scripted host
    /// and compares host calls and every live slot after every unit tick.
    fn same_behaviour(before: &Program, after: &Program, seed: u64) -> Result<(), String> {
        let dead = dead_next_slots(before, after);
        let mut engines = [
            Interpreter::new(Arc::new(before.clone())),
            Interpreter::new(Arc::new(after.clone())),
        ];
        let mut states = [initial_state(before), initial_state(after)];
        let mut hosts = [ScriptHost::new(before, seed), ScriptHost::new(after, seed)];
        for instant in 0..8 {
            for cluster in &before.clusters {
                for &unit in &cluster.units {
                    for i in 0..2 {
                        engines[i].tick_unit(&mut states[i], unit, &mut hosts[i]);
                    }
                    if hosts[0].log != hosts[1].log {
                        return Err(format!(
                            "instant {instant}, unit u{unit}: host calls differ"
                        ));
                    }
                    let live = |s: &usize| !dead[*s];
                    if let Some(s) = (0..dead.len())
                        .filter(live)
                        .find(|s| states[0][*s] != states[1][*s])
                    {
                        return Err(format!(
                            "instant {instant}, unit u{unit}: slot s{s} is {:#x} before, {:#x} after",
                            states[0][s], states[1][s]
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn optimized_random_programs_behave_the_same_on_both_engines() {
        let mut in_place = 0;
        let mut snapshots = 0;
        for seed in 0..400 {
            let before = random_program(seed);
            let mut after = before.clone();
            // Not `fuse_can_send`: the scripted host answers `can_send`,
            // `send` and `try_send` independently, where a real one keeps
            // them consistent (tested on designs below).
            for u in 0..after.units.len() {
                fold_constants(&mut after, u);
                in_place_registers(&mut after, u);
            }
            let text = || {
                format!(
                    "{}\n--- optimized:\n{}",
                    print::program(&before),
                    print::program(&after)
                )
            };
            if let Err(e) = validate::validate(&after) {
                panic!("seed {seed}: optimized program invalid: {e}\n{}", text());
            }
            if let Err(e) = same_behaviour(&before, &after, seed ^ 0xf01d) {
                panic!("seed {seed}: {e}\n{}", text());
            }
            if let Err(e) = crate::testing::differential::compare_engines(&after, 6, seed) {
                panic!("seed {seed}: engines differ: {e}\n{}", text());
            }
            in_place += dead_next_slots(&before, &after)
                .iter()
                .filter(|d| **d)
                .count();
            snapshots += after
                .units
                .iter()
                .zip(&before.units)
                .map(|(a, b)| a.locals.len() - b.locals.len())
                .sum::<usize>();
        }
        // The generator's programs must exercise both rewrites, or this
        // test proves nothing about them.
        assert!(in_place > 100, "only {in_place} registers written in place");
        assert!(snapshots > 50, "only {snapshots} snapshots taken");
    }

    fn unit_program(body: Vec<Stmt>, locals: Vec<Ty>, slots: usize) -> Program {
        let ty = Ty::unsigned(32);
        Program {
            slots: (0..slots)
                .map(|i| super::super::Slot {
                    name: format!("s{i}"),
                    ty,
                    init: i as u64,
                })
                .collect(),
            units: vec![super::super::Unit {
                path: "top.u".into(),
                domain: 0,
                locals,
                body,
                commits: vec![Commit::Copy {
                    from: 3,
                    to: 0,
                    count: 3,
                }],
            }],
            ..Program::default()
        }
    }

    /// An unrolled loop `r[i] <= r[i - 1] + 1` (registers `r` at slots
    /// 0..3, next at 3..6): the indices fold, the stores go in place and
    /// each `r[i - 1]` read after its write takes a snapshot.
    #[test]
    fn unrolled_pipeline_folds_and_writes_in_place() {
        let ty = Ty::unsigned(32);
        let i = 0;
        let ix = |base: u32, by: u64| Indexed {
            base,
            stride: 1,
            len: 3,
            index: Box::new(Expr::Binary(
                super::super::BinOp::Sub,
                ty,
                Box::new(Expr::Local(i)),
                Box::new(Expr::Const(ty, by)),
            )),
            fault: 0,
        };
        let mut body = vec![Stmt::Store(3, Expr::Load(2))];
        for k in 1..3 {
            body.push(Stmt::Assign(i, Expr::Const(ty, k)));
            body.push(Stmt::StoreIndexed(ix(3, 0), Expr::LoadIndexed(ix(0, 1))));
        }
        let mut p = unit_program(body, vec![ty], 6);
        optimize(&mut p);
        let u = &p.units[0];
        assert_eq!(
            u.commits,
            vec![Commit::Copy {
                from: 0,
                to: 0,
                count: 3
            }]
        );
        let text = print::program(&p);
        // r[0] and r[1] are read after their writes; r[2] is read before.
        assert_eq!(u.locals.len(), 3, "{text}");
        let stores: Vec<SlotId> = u
            .body
            .iter()
            .filter_map(|s| match s {
                Stmt::Store(slot, _) => Some(*slot),
                _ => None,
            })
            .collect();
        assert_eq!(stores, vec![0, 1, 2], "{text}");
        let mut indexed = 0;
        for s in &u.body {
            indexed += usize::from(matches!(s, Stmt::StoreIndexed(..)));
            s.exprs(&mut |e| {
                e.visit(&mut |e| {
                    indexed += usize::from(matches!(e, Expr::LoadIndexed(_)));
                })
            });
        }
        assert_eq!(indexed, 0, "an indexed access survived:\n{text}");
    }

    /// A register read through a dynamic index after it is written keeps
    /// its next slot.
    #[test]
    fn dynamic_read_after_write_keeps_the_next_slot() {
        let ty = Ty::unsigned(32);
        let body = vec![
            Stmt::Store(4, Expr::Const(ty, 7)),
            Stmt::Assign(
                0,
                Expr::LoadIndexed(Indexed {
                    base: 0,
                    stride: 1,
                    len: 3,
                    index: Box::new(Expr::Load(5)),
                    fault: 0,
                }),
            ),
        ];
        let mut p = unit_program(body, vec![ty], 6);
        let before = p.clone();
        optimize(&mut p);
        assert_eq!(p.units[0].commits, before.units[0].commits);
        assert_eq!(p.units[0].body, before.units[0].body);
    }

    /// The inverse of [`fuse_can_send`]: every `l = p.try_send(v)` followed
    /// by `if l` becomes `l = p.can_send(); if l { p.send(v); ... }`, the
    /// `send` reporting fault site `site` (it is never refused).
    fn unfuse(stmts: &mut [Stmt], site: FaultId) -> usize {
        let mut count = 0;
        for i in 0..stmts.len() {
            if let Stmt::If { then, els, .. } = &mut stmts[i] {
                count += unfuse(then, site) + unfuse(els, site);
            }
            if i + 1 < stmts.len()
                && let Stmt::Send {
                    port,
                    dst: Some(dst),
                    ..
                } = stmts[i]
                && matches!(&stmts[i + 1], Stmt::If { cond, .. } if *cond == Expr::Local(dst))
            {
                let Stmt::Send { value, .. } =
                    std::mem::replace(&mut stmts[i], Stmt::CanSend { port, dst })
                else {
                    unreachable!("matched a send above");
                };
                if let Stmt::If { then, .. } = &mut stmts[i + 1] {
                    then.insert(
                        0,
                        Stmt::Send {
                            port,
                            value,
                            dst: None,
                            fault: Some(site),
                        },
                    );
                }
                count += 1;
            }
        }
        count
    }

    /// On every example design, with the real runtime, the fused program
    /// and its unfused twin agree after every instant.
    #[test]
    fn fused_sends_behave_like_can_send_then_send_on_the_runtime() {
        use crate::simulate::{EngineKind, Simulator};
        use chronon_lang::span::SourceMap;
        use chronon_lang::{CompileOptions, compile};
        use chronon_runtime::{RunLimit, Stop};

        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .expect("examples directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "chr"))
            .collect();
        paths.sort();
        let mut fused = 0;
        for path in paths {
            let mut sources = SourceMap::new();
            let text = std::fs::read_to_string(&path).expect("readable example");
            sources.add(path.display().to_string(), text);
            let compiled = compile(
                &mut sources,
                &CompileOptions {
                    require_top: true,
                    ..CompileOptions::default()
                },
            );
            let design = compiled.design.expect("examples compile");
            let program = crate::lower::lower(&design, &sources).expect("lowers");
            let mut twin = program.clone();
            for u in 0..twin.units.len() {
                let site = twin.faults.len() as FaultId;
                twin.faults.push(crate::ir::FaultSite {
                    unit: u as u32,
                    kind: crate::ir::SiteKind::Send,
                    construct: "unfused".into(),
                    message: "an unfused send".into(),
                    span: None,
                    source: None,
                });
                fused += unfuse(&mut twin.units[u].body, site);
            }
            validate::validate(&twin).expect("the unfused twin is valid");
            let mut sims: Vec<Simulator> = [program, twin]
                .into_iter()
                .map(|p| Simulator::new(Arc::new(p), EngineKind::Interp).expect("builds"))
                .collect();
            let domain = chronon_runtime::DomainId(0);
            for edge in 1..=300 {
                let stops: Vec<Stop> = sims
                    .iter_mut()
                    .map(|s| {
                        s.sim.run(RunLimit::Edges {
                            domain,
                            count: edge,
                        })
                    })
                    .collect();
                let label = path.display();
                assert_eq!(stops[0], stops[1], "{label}: edge {edge}");
                assert_eq!(sims[0].digest(), sims[1].digest(), "{label}: edge {edge}");
                assert_eq!(
                    sims[0].counters(),
                    sims[1].counters(),
                    "{label}: edge {edge}"
                );
                if stops[0] != Stop::LimitReached {
                    break;
                }
            }
        }
        assert!(fused >= 3, "only {fused} fused sends in the examples");
    }

    /// The assignments ahead of a fused send move out of the branch only
    /// when nothing outside the branch reads what they assign.
    #[test]
    fn fusion_hoists_only_branch_local_assignments() {
        let ty = Ty::unsigned(32);
        let branch = |then_reads_only: bool| {
            let mut body = vec![
                Stmt::CanSend { port: 0, dst: 0 },
                Stmt::If {
                    cond: Expr::Local(0),
                    then: vec![
                        Stmt::Assign(1, Expr::Const(ty, 5)),
                        Stmt::Send {
                            port: 0,
                            value: vec![Expr::Local(1)],
                            dst: None,
                            fault: Some(0),
                        },
                    ],
                    els: Vec::new(),
                },
            ];
            if !then_reads_only {
                body.push(Stmt::Store(0, Expr::Local(1)));
            }
            let mut p = unit_program(body, vec![Ty::BOOL, ty], 6);
            let before = p.units[0].body.clone();
            fuse_can_send(&mut p, 0);
            (before, p.units[0].body.clone())
        };
        let (_, fused) = branch(true);
        assert_eq!(
            fused,
            vec![
                Stmt::Assign(1, Expr::Const(ty, 5)),
                Stmt::Send {
                    port: 0,
                    value: vec![Expr::Local(1)],
                    dst: Some(0),
                    fault: None,
                },
                Stmt::If {
                    cond: Expr::Local(0),
                    then: Vec::new(),
                    els: Vec::new(),
                },
            ]
        );
        let (before, kept) = branch(false);
        assert_eq!(kept, before);
    }

    /// Every example, every test design and 150 random designs, lowered
    /// with and without `ir::opt`, run in lockstep on the interpreter with
    /// the real runtime: the same stops and counters, and every slot but
    /// the dead next slots equal after every instant.
    #[test]
    fn optimized_designs_run_like_unoptimized_ones() {
        use crate::simulate::{EngineKind, Simulator};
        use chronon_lang::span::SourceMap;
        use chronon_lang::{CompileOptions, compile};
        use chronon_runtime::{DomainId, RunLimit, Stop};

        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut designs = Vec::new();
        for dir in ["examples", "tests/designs"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
                .expect("design directory")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "chr"))
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path).expect("readable design");
                designs.push((path.display().to_string(), text, 400));
            }
        }
        for seed in 0..150u64 {
            let text = crate::testing::random_design::random_design(seed);
            designs.push((format!("random{seed}"), text, 60));
        }
        let mut in_place = 0;
        for (label, text, instants) in designs {
            let mut sources = SourceMap::new();
            sources.add(format!("{label}.chr"), text);
            let compiled = compile(
                &mut sources,
                &CompileOptions {
                    require_top: true,
                    ..CompileOptions::default()
                },
            );
            let design = compiled
                .design
                .unwrap_or_else(|| panic!("{label} compiles"));
            let before = crate::lower::lower_unoptimized(&design, &sources).expect("lowers");
            let after = crate::lower::lower(&design, &sources).expect("lowers");
            let dead = dead_next_slots(&before, &after);
            in_place += dead.iter().filter(|d| **d).count();
            let mut sims: Vec<Simulator> = [before, after]
                .into_iter()
                .map(|p| Simulator::new(Arc::new(p), EngineKind::Interp).expect("builds"))
                .collect();
            for instant in 0..instants {
                let next = (0..sims[0].program().domains.len() as u32)
                    .filter_map(|d| {
                        let d = DomainId(d);
                        sims[0].sim.edge_time(d, sims[0].sim.edges_done(d)).ok()
                    })
                    .min();
                let Some(t) = next else { break };
                let stops: Vec<Stop> = sims
                    .iter_mut()
                    .map(|s| s.sim.run(RunLimit::Time(t)))
                    .collect();
                assert_eq!(stops[0], stops[1], "{label}: instant {instant}");
                assert_eq!(
                    sims[0].counters(),
                    sims[1].counters(),
                    "{label}: instant {instant}"
                );
                let (a, b) = (sims[0].state(), sims[1].state());
                if let Some(s) = (0..a.len()).find(|s| !dead[*s] && a[*s] != b[*s]) {
                    panic!(
                        "{label}: instant {instant}: slot s{s} ({}) is {:#x} unoptimized, {:#x} optimized",
                        sims[0].program().slots[s].name,
                        a[s],
                        b[s]
                    );
                }
                drop((a, b));
                if stops[0] != Stop::LimitReached {
                    break;
                }
            }
        }
        assert!(
            in_place > 100,
            "only {in_place} register slots written in place"
        );
    }
}
