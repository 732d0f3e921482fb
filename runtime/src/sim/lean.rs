//! The lean pattern loop: pattern-mode instants of runs with no trace sink.
//!
//! Domains coupled by a CDC FIFO or a channel cannot run ahead, so every
//! instant goes through an instant loop. Without a sink nothing observes
//! an instant from outside (no records, FIFO events, commit calls or
//! watched occupancies), so the loop needs only what changes state: per
//! pattern position, the domain edges with their runners and register
//! words, the stage registers and the FIFO sides to commit. [`LeanProgram`]
//! holds exactly that, flattened at build time (one record per position,
//! FIFO commits already split by side), and [`Simulation::replay_lean`]
//! walks it with the calendar's replay: the same work in the same order as
//! [`Simulation::step`] (contract order inside an instant: the domains'
//! units in declaration order, each domain's registers right after its
//! units, then stage registers, then FIFOs), so the result is the same bit
//! for bit, and a stop still ends the run after its instant.

use super::{DomainPlan, ReplayEnd, Simulation};
use crate::calendar::Calendar;
use crate::fifo::CdcFifo;

/// Per pattern position, what an unobserved instant does (see the module
/// documentation); built when the calendar replays a pattern.
pub(super) struct LeanProgram {
    positions: Vec<LeanPosition>,
    edges: Vec<LeanEdge>,
    stages: Vec<u32>,
    fifos: Vec<FifoSide>,
}

/// One pattern position: ranges of the program's lists.
#[derive(Clone, Copy)]
struct LeanPosition {
    edges: (u32, u32),
    stages: (u32, u32),
    fifos: (u32, u32),
}

/// One domain edge: its runners and register words (ranges).
#[derive(Clone, Copy)]
struct LeanEdge {
    domain: u32,
    runners: (u32, u32),
    regs: (u32, u32),
}

/// A FIFO commit with the sides that have an edge at the instant.
#[derive(Clone, Copy)]
enum FifoSide {
    Writer(u32),
    Reader(u32),
    Both(u32),
}

impl LeanProgram {
    /// The most list entries the program may hold (memory bound: a long
    /// pattern with many domains falls back to the replay loop).
    const MAX_ENTRIES: usize = 1 << 22;

    /// The program for the calendar's pattern, if it has one that is not
    /// too long, and the design's indices fit in 32 bits.
    pub(super) fn build(
        calendar: &Calendar,
        plans: &[DomainPlan],
        fifos: &[CdcFifo],
    ) -> Option<LeanProgram> {
        let positions = calendar.pattern_domains()?;
        let entries: usize = positions
            .iter()
            .flat_map(|ds| {
                ds.iter().map(|&d| {
                    let p = &plans[d as usize];
                    1 + p.stages.len() + p.fifos.len()
                })
            })
            .sum();
        if entries > Self::MAX_ENTRIES {
            return None;
        }
        let small = |n: usize| u32::try_from(n).ok();
        let mut program = LeanProgram {
            positions: Vec::with_capacity(positions.len()),
            edges: Vec::new(),
            stages: Vec::new(),
            fifos: Vec::new(),
        };
        for domains in positions {
            let (e0, s0, f0) = (
                program.edges.len(),
                program.stages.len(),
                program.fifos.len(),
            );
            for &d in domains {
                let plan = &plans[d as usize];
                program.edges.push(LeanEdge {
                    domain: d,
                    runners: (small(plan.runners.start)?, small(plan.runners.end)?),
                    regs: (small(plan.regs.start)?, small(plan.regs.end)?),
                });
                program.stages.extend_from_slice(&plan.stages);
            }
            // FIFOs after every domain's stages, each once, in the order
            // `step` commits them (the sides' order does not matter: a
            // commit samples both pointers as they were before it).
            let mut seen: Vec<u32> = Vec::new();
            for &d in domains {
                for &f in &plans[d as usize].fifos {
                    if seen.contains(&f) {
                        continue;
                    }
                    seen.push(f);
                    let fifo = &fifos[f as usize];
                    let (w, r) = (
                        domains.contains(&fifo.writer_domain),
                        domains.contains(&fifo.reader_domain),
                    );
                    program.fifos.push(match (w, r) {
                        (true, true) => FifoSide::Both(f),
                        (true, false) => FifoSide::Writer(f),
                        _ => FifoSide::Reader(f),
                    });
                }
            }
            program.positions.push(LeanPosition {
                edges: (small(e0)?, small(program.edges.len())?),
                stages: (small(s0)?, small(program.stages.len())?),
                fifos: (small(f0)?, small(program.fifos.len())?),
            });
        }
        Some(program)
    }
}

/// A `(start, end)` pair as a range.
#[inline(always)]
fn span((start, end): (u32, u32)) -> std::ops::Range<usize> {
    start as usize..end as usize
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
        let mut ctx = crate::tick::TickCtx::at_edge(&mut *core, &metas[..], 0, 0, 0);
        let mut done = *instants;
        let end = calendar.replay(last_tick, |position, time, cycles| {
            let at = program.positions[position];
            for edge in &program.edges[span(at.edges)] {
                ctx.domain = edge.domain;
                ctx.cycle = cycles[edge.domain as usize];
                ctx.time = time;
                for runner in &mut runners[span(edge.runners)] {
                    ctx.set_group(runner.metas.start, runner.metas.len(), &runner.first);
                    match runner.native {
                        Some(native) => ctx.call_native(native),
                        None => runner.tick.tick(&mut ctx),
                    }
                }
                // A domain's registers commit right after its units (only
                // they read them), as in `step`.
                let core = &mut *ctx.core;
                let regs = span(edge.regs);
                let (cur, next) = (&mut core.cur[regs.clone()], &core.next[regs]);
                if let ([c], [n]) = (&mut *cur, next) {
                    *c = *n;
                } else {
                    cur.copy_from_slice(next);
                }
            }
            let core = &mut *ctx.core;
            for &s in &program.stages[span(at.stages)] {
                core.stages[s as usize].commit();
            }
            for &side in &program.fifos[span(at.fifos)] {
                match side {
                    FifoSide::Writer(f) => core.fifos[f as usize].commit_writer(),
                    FifoSide::Reader(f) => core.fifos[f as usize].commit_reader(),
                    FifoSide::Both(f) => core.fifos[f as usize].commit(true, true),
                }
            }
            done += 1;
            core.stop_requested
        });
        *instants = done;
        // Without a sink nothing is traced (`TickCtx::trace` pushes only
        // while tracing), so the buffer is empty; `step` clears it too.
        core.trace.clear();
        end
    }
}
