//! Sparse commits for large registers.
//!
//! A register's commit copies its next slots onto its current ones: for a
//! memory modelled as a register array (`reg m: [u16; 1048576]`) that is a
//! copy of the whole array on every tick, however few elements the tick
//! wrote. But a next slot the tick did not write still equals its current
//! slot (both start at the initial value, and every commit makes them
//! equal again), so copying only the written slots gives the same state.
//!
//! [`sparse_commits`] turns the commit of each register of at least
//! [`MIN_SLOTS`] slots that the tick writes in few places into a
//! [`Commit::Sparse`]: the slots written at constant positions, and for
//! each store at a run-time index a new local that the store's index is
//! computed into (the store then reads it), so the commit knows which
//! element that store wrote. A local starts every tick at 0, so a store
//! that did not run makes the commit copy element 0, a no-op. The commit
//! copies nothing for an index out of range (the store wrote nothing and
//! faulted).
//!
//! Evaluation order is unchanged: a store evaluates its index before its
//! value and checks the range last, and the index now goes to its local
//! just before the store.

use super::validate::type_of;
use super::{Commit, Expr, Indexed, LocalId, Program, SlotId, SparseCommit, SparseIndex, Stmt};

/// Registers with fewer slots keep their whole copy: it is as cheap, and
/// the code generators keep small registers' values in machine registers.
pub const MIN_SLOTS: u32 = 64;

/// Makes the commits of unit `u`'s large, sparsely written registers
/// sparse (see the module documentation). Registers written in place
/// ([`super::opt::in_place_registers`]) copy nothing already and are left
/// alone.
pub fn sparse_commits(p: &mut Program, u: usize) {
    let unit = &p.units[u];
    // The registers worth it: (commit index, next range).
    let candidates: Vec<(usize, SlotId, u32)> = unit
        .commits
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            Commit::Copy { from, to, count } if from != to && *count >= MIN_SLOTS => {
                Some((i, *from, *count))
            }
            _ => None,
        })
        .collect();
    if candidates.is_empty() {
        return;
    }
    let mut writes = Writes::default();
    collect(&unit.body, &mut writes, false);
    let mut chosen: Vec<(usize, SlotId, u32)> = Vec::new();
    for &(i, from, count) in &candidates {
        let end = u64::from(from) + u64::from(count);
        let inside = |s: SlotId| u64::from(s) >= u64::from(from) && u64::from(s) < end;
        let statics = writes.stores.iter().filter(|s| inside(**s)).count();
        let mut dynamic = 0;
        let mut clean = !writes
            .looped
            .iter()
            .any(|(first, last)| u64::from(*first) < end && *last >= u64::from(from));
        for (first, last) in &writes.indexed {
            let overlaps = u64::from(*first) < end && *last >= u64::from(from);
            let contained = inside(*first) && *last < end;
            if overlaps && !contained {
                clean = false;
            }
            dynamic += usize::from(contained);
        }
        // Four written slots per slot of the register or more: the whole
        // copy costs about as much.
        if clean && (statics + dynamic) * 4 <= count as usize {
            chosen.push((i, from, count));
        }
    }
    if chosen.is_empty() {
        return;
    }
    let in_chosen = |s: SlotId| {
        chosen
            .iter()
            .any(|&(_, from, count)| s >= from && u64::from(s) < u64::from(from) + u64::from(count))
    };
    let mut rewrite = Rewrite {
        locals: p.units[u].locals.clone(),
        indexed: Vec::new(),
        p,
        in_chosen: &in_chosen,
        failed: false,
    };
    let body = rewrite.block(&rewrite.p.units[u].body.clone());
    if rewrite.failed {
        return;
    }
    let (locals, indexed) = (rewrite.locals, rewrite.indexed);
    let unit = &mut p.units[u];
    unit.body = body;
    unit.locals = locals;
    for (i, from, count) in chosen {
        let Commit::Copy { to, .. } = unit.commits[i] else {
            continue;
        };
        let end = u64::from(from) + u64::from(count);
        let mut slots: Vec<SlotId> = writes
            .stores
            .iter()
            .copied()
            .filter(|s| *s >= from && u64::from(*s) < end)
            .collect();
        slots.sort_unstable();
        slots.dedup();
        let indexed = indexed
            .iter()
            .filter(|x| x.base >= from && u64::from(x.base) < end)
            .cloned()
            .collect();
        unit.commits[i] = Commit::Sparse(Box::new(SparseCommit {
            from,
            to,
            count,
            slots,
            indexed,
        }));
    }
}

/// Every slot the body stores to: plain stores, and indexed stores as
/// the first and last slot their index can reach.
#[derive(Default)]
struct Writes {
    stores: Vec<SlotId>,
    indexed: Vec<(SlotId, u64)>,
    /// Indexed stores in loops: one store writes a slot per iteration, so
    /// a local cannot tell the commit which; their registers keep the
    /// whole copy.
    looped: Vec<(SlotId, u64)>,
}

fn collect(stmts: &[Stmt], w: &mut Writes, in_loop: bool) {
    for s in stmts {
        match s {
            Stmt::Store(slot, _) => w.stores.push(*slot),
            Stmt::StoreIndexed(ix, _) if in_loop => w.looped.push((ix.base, last_slot(ix))),
            Stmt::StoreIndexed(ix, _) => w.indexed.push((ix.base, last_slot(ix))),
            _ => {}
        }
        let in_loop = in_loop || matches!(s, Stmt::While { .. });
        for block in s.blocks() {
            collect(block, w, in_loop);
        }
    }
}

/// The last slot an indexed access can reach (its base when empty).
fn last_slot(ix: &Indexed) -> u64 {
    u64::from(ix.base) + u64::from(ix.len.saturating_sub(1)) * u64::from(ix.stride)
}

struct Rewrite<'a> {
    p: &'a Program,
    locals: Vec<super::Ty>,
    indexed: Vec<SparseIndex>,
    in_chosen: &'a dyn Fn(SlotId) -> bool,
    /// An index whose type is unknown (a malformed program): nothing is
    /// rewritten, `validate` reports it.
    failed: bool,
}

impl Rewrite<'_> {
    fn block(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            match s {
                Stmt::StoreIndexed(ix, value) if (self.in_chosen)(ix.base) => {
                    let Ok(ty) = type_of(self.p, &self.locals, &ix.index) else {
                        self.failed = true;
                        out.push(s.clone());
                        continue;
                    };
                    let local = self.locals.len() as LocalId;
                    self.locals.push(ty);
                    self.indexed.push(SparseIndex {
                        local,
                        base: ix.base,
                        stride: ix.stride,
                        len: ix.len,
                    });
                    out.push(Stmt::Assign(local, (*ix.index).clone()));
                    let ix = Indexed {
                        index: Box::new(Expr::Local(local)),
                        ..ix.clone()
                    };
                    out.push(Stmt::StoreIndexed(ix, value.clone()));
                }
                Stmt::If { cond, then, els } => out.push(Stmt::If {
                    cond: cond.clone(),
                    then: self.block(then),
                    els: self.block(els),
                }),
                _ => out.push(s.clone()),
            }
        }
        out
    }
}

/// Runs [`sparse_commits`] on every unit.
pub fn sparse_all(p: &mut Program) {
    for u in 0..p.units.len() {
        sparse_commits(p, u);
    }
}
