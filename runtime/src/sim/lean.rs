//! The lean pattern loop: pattern-mode instants of runs with no trace sink.
//!
//! Domains coupled by a CDC FIFO or a channel cannot run ahead, so every
//! instant goes through an instant loop. Without a sink nothing observes
//! an instant from outside (no records, FIFO events, commit calls or
//! watched occupancies), so the loop needs only what changes state: per
//! pattern position, the domain edges with their runners and register
//! words, the stage registers and the FIFO sides to commit. [`LeanProgram`]
//! holds exactly that, flattened at build time into one list of operations
//! for the whole hyperperiod (each instant's ending with the step to the
//! next, FIFO commits already split by side), and
//! [`Simulation::replay_lean`] runs through it, wrapping around, on the
//! calendar's replay cursor: the same work in the same order as
//! [`Simulation::step`] (contract order inside an instant: the domains'
//! units in declaration order, each domain's registers right after its
//! units, then stage registers, then FIFOs), so the result is the same bit
//! for bit, and a stop still ends the run after its instant.

use super::{DomainPlan, ReplayEnd, Runner, Simulation};
use crate::calendar::Calendar;
use crate::fifo::CdcFifo;
use crate::tick::TickCtx;

/// Per pattern position, what an unobserved instant does (see the module
/// documentation) as a flat list of operations; built when the calendar
/// replays a pattern.
pub(super) struct LeanProgram {
    /// Every position's operations in pattern order, each position's ending
    /// with [`Op::End`]: the loop runs on from one instant into the next.
    ops: Vec<Op>,
    /// Per position, the index of its first operation (increasing).
    starts: Vec<u32>,
    /// The shortest distance between two consecutive instants (> 0).
    min_step: u128,
}

/// One step of an instant, in the order `step` does them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// A domain's edge begins: its cycle moves on (the calendar's count)
    /// and the context acts in it.
    Edge(u32),
    /// Calls a runner's tick.
    Tick(u32),
    /// Calls a runner's native group function.
    Native(u32),
    /// `Edge` then `Tick`, for a domain with one runner.
    EdgeTick(u32, u32),
    /// `Edge` then `Native`, for a domain with one runner.
    EdgeNative(u32, u32),
    /// Commits one register word (next to current).
    Word(u32),
    /// Commits register words `start..end`.
    Words(u32, u32),
    /// Commits a stage register.
    Stage(u32),
    /// Commits a FIFO whose writer alone has an edge.
    Writer(u32),
    /// Commits a FIFO whose reader alone has an edge.
    Reader(u32),
    /// Commits a FIFO both of whose sides have an edge.
    Both(u32),
    /// The instant ends; the next is this many ticks later.
    End(u64),
}

impl LeanProgram {
    /// The most operations the program may hold (memory bound: a long
    /// pattern with many domains falls back to the replay loop).
    const MAX_OPS: usize = 1 << 22;

    /// The program for the calendar's pattern, if it has one that is not
    /// too long, the design's indices fit in 32 bits and every step
    /// between two instants in 64 (else runs use the replay loop).
    pub(super) fn build(
        calendar: &Calendar,
        plans: &[DomainPlan],
        runners: &[Runner],
        fifos: &[CdcFifo],
    ) -> Option<LeanProgram> {
        let positions = calendar.pattern_domains()?;
        let steps = calendar.pattern_steps()?;
        let min_step = steps.iter().copied().min()?.max(1);
        let bound: usize = positions
            .iter()
            .flat_map(|ds| {
                ds.iter().map(|&d| {
                    let p = &plans[d as usize];
                    2 + p.runners.len() + p.stages.len() + p.fifos.len()
                })
            })
            .sum();
        if bound > Self::MAX_OPS {
            return None;
        }
        let small = |n: usize| u32::try_from(n).ok();
        let mut starts = Vec::with_capacity(positions.len());
        let mut ops = Vec::with_capacity(bound + positions.len());
        for (domains, step) in positions.into_iter().zip(steps) {
            starts.push(small(ops.len())?);
            for &d in domains {
                let plan = &plans[d as usize];
                let calls = plan.runners.clone().map(|r| {
                    let r32 = small(r)?;
                    Some(match runners[r].native {
                        Some(_) => Op::Native(r32),
                        None => Op::Tick(r32),
                    })
                });
                let calls: Option<Vec<Op>> = calls.collect();
                match calls?[..] {
                    [Op::Tick(r)] => ops.push(Op::EdgeTick(d, r)),
                    [Op::Native(r)] => ops.push(Op::EdgeNative(d, r)),
                    ref calls => {
                        ops.push(Op::Edge(d));
                        ops.extend_from_slice(calls);
                    }
                }
                // A domain's registers commit right after its units (only
                // they read them), as in `step`.
                let regs = &plan.regs;
                match regs.len() {
                    0 => {}
                    1 => ops.push(Op::Word(small(regs.start)?)),
                    _ => ops.push(Op::Words(small(regs.start)?, small(regs.end)?)),
                }
            }
            for &d in domains {
                ops.extend(plans[d as usize].stages.iter().map(|&s| Op::Stage(s)));
            }
            // FIFOs after every stage register, each once, in the order
            // `step` commits them (the order does not matter: a commit
            // samples both pointers as they were before it).
            let first = ops.len();
            for &d in domains {
                for &f in &plans[d as usize].fifos {
                    let fifo = &fifos[f as usize];
                    let (w, r) = (
                        domains.contains(&fifo.writer_domain),
                        domains.contains(&fifo.reader_domain),
                    );
                    let op = match (w, r) {
                        (true, true) => Op::Both(f),
                        (true, false) => Op::Writer(f),
                        _ => Op::Reader(f),
                    };
                    if !ops[first..].contains(&op) {
                        ops.push(op);
                    }
                }
            }
            ops.push(Op::End(u64::try_from(step).ok()?));
        }
        Some(LeanProgram {
            ops,
            starts,
            min_step,
        })
    }
}

/// Calls `runner`'s tick as its units.
#[inline(always)]
fn tick(ctx: &mut TickCtx<'_>, runner: &mut Runner) {
    ctx.set_group(runner.metas.start, runner.metas.len(), &runner.first);
    runner.tick.tick(ctx);
}

/// Calls `runner`'s native group function (built only for runners with one).
#[inline(always)]
fn native(ctx: &mut TickCtx<'_>, runner: &Runner) {
    ctx.set_group(runner.metas.start, runner.metas.len(), &runner.first);
    if let Some(native) = runner.native {
        ctx.call_native(native);
    }
}

impl Simulation {
    /// Whether [`Simulation::run`] may use the lean loop now: it is on,
    /// built, and no sink is installed.
    pub(super) fn lean_ready(&self) -> bool {
        self.lean_enabled && self.lean.is_some() && self.sink.is_none()
    }

    /// Runs pattern-mode instants up to `last_tick` with the lean program
    /// (see the module documentation); only when [`Simulation::lean_ready`].
    #[inline(never)]
    pub(super) fn replay_lean(&mut self, last_tick: u128) -> ReplayEnd {
        let Simulation {
            calendar,
            core,
            runners,
            metas,
            lean: Some(program),
            instants,
            ..
        } = self
        else {
            return ReplayEnd::Fallback;
        };
        let Some(mut cursor) = calendar.replay_cursor() else {
            return ReplayEnd::Fallback;
        };
        let mut ctx = TickCtx::at_edge(&mut *core, &metas[..], 0, 0, 0);
        let (ops, starts) = (&program.ops[..], &program.starts[..]);
        let (cycle, next_cycle) = (&mut *cursor.cycle, &mut *cursor.next_cycle);
        let mut time = cursor.upcoming;
        // The cursor's budget as a time: consecutive instants are at least
        // `min_step` apart, so at most `budget` instants lie at or before
        // `upcoming + (budget - 1) * min_step` (saturated, at most `budget`
        // lie at or before any tick: the budget counts the steps to the
        // end of time). One comparison per instant checks both.
        let Some(steps) = cursor.budget.checked_sub(1) else {
            return ReplayEnd::Fallback;
        };
        let by_budget = time.saturating_add(u128::from(steps).saturating_mul(program.min_step));
        let bound = last_tick.min(by_budget);
        let past = |time: u128| {
            if time > last_tick {
                ReplayEnd::Limit
            } else {
                ReplayEnd::Fallback
            }
        };
        if time > bound {
            return past(time);
        }
        ctx.time = time;
        let mut ran = 0u64;
        let mut i = starts[cursor.position] as usize;
        let end = loop {
            let op = ops[i];
            i += 1;
            // A domain's edge begins: its cycle moves on (the calendar's
            // count; cannot overflow: the cursor's budget) and the context
            // acts in it.
            let mut edge = |d: u32| {
                let n = next_cycle[d as usize];
                cycle[d as usize] = n;
                next_cycle[d as usize] = n + 1;
                ctx.domain = d;
                ctx.cycle = n;
            };
            match op {
                Op::Edge(d) => edge(d),
                Op::EdgeTick(d, r) => {
                    edge(d);
                    tick(&mut ctx, &mut runners[r as usize]);
                }
                Op::EdgeNative(d, r) => {
                    edge(d);
                    native(&mut ctx, &runners[r as usize]);
                }
                Op::Tick(r) => tick(&mut ctx, &mut runners[r as usize]),
                Op::Native(r) => native(&mut ctx, &runners[r as usize]),
                Op::Word(w) => {
                    let core = &mut *ctx.core;
                    core.cur[w as usize] = core.next[w as usize];
                }
                Op::Words(a, b) => {
                    let core = &mut *ctx.core;
                    let words = a as usize..b as usize;
                    core.cur[words.clone()].copy_from_slice(&core.next[words]);
                }
                Op::Stage(s) => ctx.core.stages[s as usize].commit(),
                Op::Writer(f) => ctx.core.fifos[f as usize].commit_writer(),
                Op::Reader(f) => ctx.core.fifos[f as usize].commit_reader(),
                Op::Both(f) => ctx.core.fifos[f as usize].commit(true, true),
                Op::End(step) => {
                    ran += 1;
                    // Cannot overflow: the cursor's budget counted the steps.
                    time += u128::from(step);
                    if i == ops.len() {
                        i = 0;
                    }
                    if ctx.core.stop_requested {
                        break ReplayEnd::Stop;
                    }
                    if time > bound {
                        break past(time);
                    }
                    ctx.time = time;
                }
            }
        };
        // `i` is the next instant's first operation.
        cursor.position = starts
            .binary_search(&(i as u32))
            .expect("the loop ends between instants");
        cursor.upcoming = time;
        cursor.finish(ran > 0);
        *instants += ran;
        // Without a sink nothing is traced (`TickCtx::trace` pushes only
        // while tracing), so the buffer is empty; `step` clears it too.
        core.trace.clear();
        end
    }
}
