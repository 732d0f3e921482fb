//! The replay loop: pattern-mode instants through a program precomputed
//! for the calendar's pattern.
//!
//! Once the calendar replays its pattern, every instant's work is known
//! ahead: per pattern position, the domain edges with their runners and
//! register words, the stage registers and the FIFO sides to commit.
//! [`ReplayProgram`] holds exactly that, flattened at build time into one
//! list of operations for the whole hyperperiod (each instant's ending
//! with the step to the next, FIFO commits already split by side), and
//! [`Simulation::replay`] runs through it, wrapping around, on the
//! calendar's replay cursor: the same work in the same order as
//! [`Simulation::step`] (contract order inside an instant: the domains'
//! units in declaration order, each domain's registers right after its
//! units, then stage registers, then FIFOs), so the result is the same bit
//! for bit, and a stop still ends the run after its instant.
//!
//! One loop serves runs with and without a trace sink, compiled twice by
//! its `OBSERVED` parameter. Unobserved (no sink: nothing sees an instant
//! from outside), an instant ends with the step to the next and the JIT's
//! unobserved group variants run. Observed, each instant's end also
//! hands its records to the sink (with the commit calls and watched
//! occupancies it asked for) and polls it for a stop; runs whose sink
//! takes FIFO events keep the checked step, which derives them.
//!
//! An instant in which one domain alone has an edge, and that domain has
//! one runner, no stage register and at most one FIFO, is one operation
//! (`Op::Solo`): one dispatch does the edge, the call, the register words,
//! the FIFO side and the end of the instant, from the domain's [`Solo`]
//! entry. Two clocks coupled by a FIFO spend most instants so. The loop
//! indexes its tables without bounds checks: the program records how far
//! its indices reach, and each replay checks that once against the tables
//! before it starts.

use super::{DomainPlan, Runner, Simulation};
use crate::RuntimeConfig;
use crate::Timestamp;
use crate::calendar::Calendar;
use crate::fifo::CdcFifo;
use crate::tick::TickCtx;
use crate::trace::TraceSink;

/// Why [`Simulation::replay`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReplayEnd {
    /// The next instant is after the limit.
    Limit,
    /// A unit or the sink asked to stop (after its instant).
    Stop,
    /// Not in pattern mode, or the next step might overflow a cycle index
    /// or the time: the caller takes one checked step instead.
    Fallback,
}

/// Per pattern position, what an instant does (see the module
/// documentation) as a flat list of operations; built when the calendar
/// replays a pattern.
pub(super) struct ReplayProgram {
    /// Every position's operations in pattern order, each position's ending
    /// with [`Op::End`] or being one [`Op::Solo`]: the loop runs on from one
    /// instant into the next.
    ops: Vec<Op>,
    /// Per position, the index of its first operation (increasing).
    starts: Vec<u32>,
    /// The shortest distance between two consecutive instants (> 0).
    min_step: u128,
    /// Per domain, its whole instant when it alone has an edge (used by
    /// `Op::Solo` for the domains where [`Solo::of`] applies).
    solos: Vec<Solo>,
    /// The domains with an edge at each `Op::End`'s instant,
    /// `edge_domains[span.0..span.1]` for its span: what an observed
    /// instant's commit calls name.
    edge_domains: Vec<u32>,
    /// How far the operations' indices reach (see [`Reach::fits`]).
    reach: Reach,
}

/// What an instant of one domain alone does, for `Op::Solo`: its one
/// runner, its register words and its one FIFO's side to commit.
#[derive(Clone, Copy, Debug)]
struct Solo {
    runner: u32,
    /// Register words `words.0..words.1`.
    words: (u32, u32),
    /// The FIFO to commit (unused with [`Side::None`]).
    fifo: u32,
    /// Which side of `fifo` commits.
    side: Side,
    /// How the runner is called.
    call: Call,
    /// While `replay` runs: the domain's next edge index (the calendar's
    /// `next_cycle`, copied in and written back), kept beside the domain's
    /// solo entry so an edge touches one table, not three.
    next: u64,
}

impl Default for Solo {
    fn default() -> Self {
        Solo {
            runner: 0,
            words: (0, 0),
            fifo: 0,
            side: Side::None,
            call: Call::Tick,
            next: 0,
        }
    }
}

/// How an `Op::Solo` calls its runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    /// Its tick.
    Tick,
    /// Its native group function (unobserved: the variant for runs with
    /// no sink).
    Native,
    /// Its native group function; unobserved, the variant that never
    /// reaches the context ([`crate::tick::NativeGroup::unobserved_is_blind`]),
    /// called without setting the context's edge and unit fields, which
    /// are set only if it faults (nothing else reads them before the next
    /// edge sets them again). [`RuntimeConfig::blind_calls`] allows it.
    Blind,
}

/// The side of a FIFO a domain commits when it alone has an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    None,
    Writer,
    Reader,
    Both,
}

impl Solo {
    /// Domain `d`'s solo instant, if it fits one operation: one runner, no
    /// stage register, at most one FIFO.
    fn of(
        d: u32,
        plan: &DomainPlan,
        runners: &[Runner],
        fifos: &[CdcFifo],
        config: &RuntimeConfig,
    ) -> Option<Solo> {
        let small = |n: usize| u32::try_from(n).ok();
        if plan.runners.len() != 1 || !plan.stages.is_empty() || plan.fifos.len() > 1 {
            return None;
        }
        let (fifo, side) = match plan.fifos[..] {
            [] => (0, Side::None),
            [f] => {
                let fifo = fifos.get(f as usize)?;
                let side = match (fifo.writer_domain == d, fifo.reader_domain == d) {
                    (true, true) => Side::Both,
                    (true, false) => Side::Writer,
                    (false, true) => Side::Reader,
                    (false, false) => return None,
                };
                (f, side)
            }
            _ => return None,
        };
        Some(Solo {
            runner: small(plan.runners.start)?,
            words: (small(plan.regs.start)?, small(plan.regs.end)?),
            fifo,
            side,
            call: match runners.get(plan.runners.start)?.native {
                None => Call::Tick,
                Some(group) if config.blind_calls && group.unobserved_is_blind() => Call::Blind,
                Some(_) => Call::Native,
            },
            next: 0,
        })
    }
}

/// One past the largest index the program's operations use in each table
/// the loop reaches: [`Simulation::replay`] checks these against the
/// tables once per call and then indexes them without bounds checks.
#[derive(Clone, Copy, Debug, Default)]
struct Reach {
    domains: usize,
    runners: usize,
    words: usize,
    stages: usize,
    fifos: usize,
}

impl Reach {
    /// Widens the reach of `table` to cover `index`.
    fn cover(table: &mut usize, index: usize) {
        *table = (*table).max(index + 1);
    }

    /// Widens the reach to the words `a..b`.
    fn cover_words(&mut self, a: u32, b: u32) {
        self.words = self.words.max(b as usize).max(a as usize);
    }

    /// Whether every index the program uses is inside tables of these
    /// lengths.
    fn fits(
        &self,
        domains: usize,
        runners: usize,
        words: usize,
        stages: usize,
        fifos: usize,
    ) -> bool {
        self.domains <= domains
            && self.runners <= runners
            && self.words <= words
            && self.stages <= stages
            && self.fifos <= fifos
    }
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
    /// The instant ends; the next is `.1` ticks later. `.0` is its edges'
    /// span of [`ReplayProgram::edge_domains`] (start, then length).
    End((u32, u32), u64),
    /// A whole instant of domain `.0` alone (its [`Solo`] entry): the
    /// edge, the runner, the register words, the FIFO side, then as
    /// `End` with step `.1`.
    Solo(u32, u64),
    /// The list's last operation: back to the first.
    Wrap,
}

impl Op {
    /// Whether the operation ends an instant (the loop may wrap after it).
    fn ends_instant(self) -> bool {
        matches!(self, Op::End(..) | Op::Solo(..))
    }
}

impl ReplayProgram {
    /// The most operations the program may hold (memory bound: a longer
    /// pattern with many domains runs in checked steps).
    const MAX_OPS: usize = 1 << 22;

    /// The program for the calendar's pattern, if it has one that is not
    /// too long, the design's indices fit in 32 bits and every step
    /// between two instants in 64 (else every instant is a checked step).
    pub(super) fn build(
        calendar: &Calendar,
        plans: &[DomainPlan],
        runners: &[Runner],
        fifos: &[CdcFifo],
        config: &RuntimeConfig,
    ) -> Option<ReplayProgram> {
        let positions = calendar.pattern_domains()?;
        let steps = calendar.pattern_steps()?;
        let min_step = steps.iter().copied().min()?.max(1);
        let bound: usize = positions
            .iter()
            .flat_map(|ds| {
                ds.iter().map(|&d| {
                    let p = &plans[d as usize];
                    3 + p.runners.len() + p.stages.len() + p.fifos.len()
                })
            })
            .sum();
        if bound > Self::MAX_OPS {
            return None;
        }
        let small = |n: usize| u32::try_from(n).ok();
        let mut solos = vec![Solo::default(); plans.len()];
        let mut has_solo = vec![false; plans.len()];
        let mut reach = Reach {
            domains: plans.len(),
            ..Reach::default()
        };
        for (d, plan) in plans.iter().enumerate() {
            if let Some(solo) = Solo::of(small(d)?, plan, runners, fifos, config) {
                Reach::cover(&mut reach.runners, solo.runner as usize);
                reach.cover_words(solo.words.0, solo.words.1);
                if solo.side != Side::None {
                    Reach::cover(&mut reach.fifos, solo.fifo as usize);
                }
                solos[d] = solo;
                has_solo[d] = true;
            }
        }
        let mut starts = Vec::with_capacity(positions.len());
        let mut ops = Vec::with_capacity(bound + positions.len() + 1);
        let mut edge_domains = Vec::new();
        for (domains, step) in positions.into_iter().zip(steps) {
            starts.push(small(ops.len())?);
            let step = u64::try_from(step).ok()?;
            if let [d] = domains[..]
                && has_solo.get(d as usize).copied().unwrap_or(false)
            {
                ops.push(Op::Solo(d, step));
                continue;
            }
            for &d in domains {
                let plan = &plans[d as usize];
                let calls = plan.runners.clone().map(|r| {
                    let r32 = small(r)?;
                    Reach::cover(&mut reach.runners, r);
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
                let (a, b) = (small(regs.start)?, small(regs.end)?);
                reach.cover_words(a, b);
                match regs.len() {
                    0 => {}
                    1 => ops.push(Op::Word(a)),
                    _ => ops.push(Op::Words(a, b)),
                }
            }
            for &d in domains {
                for &s in &plans[d as usize].stages {
                    Reach::cover(&mut reach.stages, s as usize);
                    ops.push(Op::Stage(s));
                }
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
                        Reach::cover(&mut reach.fifos, f as usize);
                        ops.push(op);
                    }
                }
            }
            let span = (small(edge_domains.len())?, small(domains.len())?);
            edge_domains.extend_from_slice(domains);
            ops.push(Op::End(span, step));
        }
        // The loop relies on these (see `replay`): every position starts
        // inside the list, before the `Wrap` that ends it, after the last
        // instant's end; so the operation after any other is inside the
        // list.
        let inside = starts.iter().all(|&s| (s as usize) < ops.len());
        if !inside || !ops.last().is_some_and(|op| op.ends_instant()) {
            return None;
        }
        ops.push(Op::Wrap);
        Some(ReplayProgram {
            ops,
            starts,
            min_step,
            solos,
            edge_domains,
            reach,
        })
    }
}

/// Calls `runner`'s tick as its units.
#[inline(always)]
fn tick(ctx: &mut TickCtx<'_>, runner: &mut Runner) {
    // `end - start`, not `len()`: a runner's range is never reversed, and
    // `len` would test that at every call.
    let len = runner.metas.end - runner.metas.start;
    ctx.set_group(runner.metas.start, len, &runner.first);
    runner.tick.tick(ctx);
}

/// Calls `runner`'s native group function (built only for runners with
/// one): unobserved, its variant for runs with no sink (no FIFO is then
/// observed: `CdcFifo::set_observed` follows the sink).
#[inline(always)]
fn native<const OBSERVED: bool>(ctx: &mut TickCtx<'_>, runner: &Runner) {
    let len = runner.metas.end - runner.metas.start;
    ctx.set_group(runner.metas.start, len, &runner.first);
    if let Some(native) = runner.native {
        match OBSERVED {
            true => ctx.call_native(native),
            false => ctx.call_native_unobserved(native),
        }
    }
}

/// An observed instant's end, as in `step`: its records to the sink (with
/// the commit calls and watched occupancies it asked for, after every
/// commit of the instant), then the sink's stop poll. `edges` are the
/// instant's domain edges.
#[inline(always)]
fn observe_instant(
    ctx: &mut TickCtx<'_>,
    sink: &mut dyn TraceSink,
    edges: impl Iterator<Item = (u32, u64)>,
) {
    let core = &mut *ctx.core;
    let stamp = Timestamp {
        ticks: ctx.time,
        ticks_per_ps: core.ticks_per_ps,
    };
    if core.observe {
        core.trace
            .flush_observed(stamp, edges, core.commits, &core.fifos, sink);
    } else if !core.trace.is_empty() {
        core.trace.flush(stamp, sink);
    }
    if core.stop_poll_due() && sink.stop_requested() {
        core.sink_stopped = true;
        core.stop_requested = true;
    }
}

impl Simulation {
    /// Runs pattern-mode instants up to `last_tick` with the replay program
    /// (see the module documentation), in its observed form while a sink
    /// is installed; only when [`Simulation::runs_replay`].
    pub(super) fn replay(&mut self, last_tick: u128) -> ReplayEnd {
        match self.sink.is_some() {
            true => self.replay_in::<true>(last_tick),
            false => self.replay_in::<false>(last_tick),
        }
    }

    /// [`Simulation::replay`], observed (a sink is installed) or not.
    #[inline(never)]
    fn replay_in<const OBSERVED: bool>(&mut self, last_tick: u128) -> ReplayEnd {
        let Simulation {
            calendar,
            core,
            runners,
            metas,
            replay: Some(program),
            instants,
            sink,
            ..
        } = self
        else {
            return ReplayEnd::Fallback;
        };
        // Observed exactly while a sink is installed.
        let mut sink: Option<&mut dyn TraceSink> = sink.as_deref_mut();
        if sink.is_some() != OBSERVED {
            return ReplayEnd::Fallback;
        }
        let Some(mut cursor) = calendar.replay_cursor() else {
            return ReplayEnd::Fallback;
        };
        let (ops, starts, solos, edge_domains) = (
            &program.ops[..],
            &program.starts[..],
            &mut program.solos[..],
            &program.edge_domains[..],
        );
        let (cycle, next_cycle) = (&mut *cursor.cycle, &mut *cursor.next_cycle);
        // Everything the loop indexes unchecked (see the SAFETY notes
        // below) is checked here once: the program's reach against the
        // tables, the solo entries (one per domain), the start position.
        let words = core.cur.len().min(core.next.len());
        let domains = cycle.len().min(next_cycle.len()).min(solos.len());
        let fits = program.reach.fits(
            domains,
            runners.len(),
            words,
            core.stages.len(),
            core.fifos.len(),
        );
        // `build` makes both true; checked here too (two comparisons per
        // call) so that the loop's invariant below rests on this function.
        let wraps = ops.last() == Some(&Op::Wrap);
        let Some(&start) = starts
            .get(cursor.position)
            .filter(|&&s| fits && wraps && (s as usize) < ops.len())
        else {
            return ReplayEnd::Fallback;
        };
        // The loop counts edges in the solo table (see `Solo::next`).
        for (entry, &n) in solos.iter_mut().zip(next_cycle.iter()) {
            entry.next = n;
        }
        let mut ctx = TickCtx::at_edge(&mut *core, &metas[..], 0, 0, 0);
        let time = cursor.upcoming;
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
        // The instant's time lives in the context only (the ticks read it
        // there; one copy, not a local beside it).
        ctx.time = time;
        let mut ran = 0u64;
        // The next operation, as a pointer into `ops` (one register for
        // the loop's position, not a base and an index). Invariant at the
        // top of the loop: `next` points into `ops` (the start is inside
        // the list and the last operation is `Wrap`, after which `next` is
        // the first: both checked above; any other operation is followed
        // by one).
        let first = ops.as_ptr();
        // SAFETY: `start < ops.len()` (checked above).
        let mut next = unsafe { first.add(start as usize) };
        // Domain `d`'s solo entry.
        macro_rules! solo {
            ($d:expr) => {{
                // SAFETY: `d < reach.domains <= solos.len()` (checked above).
                unsafe { solos.get_unchecked_mut($d as usize) }
            }};
        }
        // Domain `d`'s edge count moves on; the edge's cycle (cannot
        // overflow: the cursor's budget).
        macro_rules! count {
            ($d:expr) => {{
                let entry = solo!($d);
                let n = entry.next;
                entry.next = n + 1;
                n
            }};
        }
        // A domain's edge begins: its cycle moves on and the context acts
        // in it.
        macro_rules! edge {
            ($d:expr) => {{
                let n = count!($d);
                ctx.enter_edge($d as u32, n);
            }};
        }
        // Runner `r`, as a `&mut Runner`.
        macro_rules! runner {
            ($r:expr) => {{
                // SAFETY: `r < reach.runners <= runners.len()` (checked above).
                unsafe { runners.get_unchecked_mut($r as usize) }
            }};
        }
        // Commits register words `a..b` (next to current).
        macro_rules! words {
            ($a:expr, $b:expr) => {{
                let (a, b) = ($a as usize, $b as usize);
                let core = &mut *ctx.core;
                // SAFETY: `a <= b <= reach.words <= cur.len(), next.len()`
                // (checked above; `build` takes ranges of the plans).
                unsafe {
                    if b == a + 1 {
                        *core.cur.get_unchecked_mut(a) = *core.next.get_unchecked(a);
                    } else if b > a {
                        core.cur
                            .get_unchecked_mut(a..b)
                            .copy_from_slice(core.next.get_unchecked(a..b));
                    }
                }
            }};
        }
        // FIFO `f`, as a `&mut CdcFifo`.
        macro_rules! fifo {
            ($f:expr) => {{
                // SAFETY: `f < reach.fifos <= fifos.len()` (checked above).
                unsafe { ctx.core.fifos.get_unchecked_mut($f as usize) }
            }};
        }
        // The instant ends (observed: its records go to the sink, whose
        // edges `$edges` yields); the next is `step` ticks later.
        macro_rules! end {
            ($step:expr, $edges:expr) => {{
                if OBSERVED && let Some(sink) = sink.as_deref_mut() {
                    observe_instant(&mut ctx, sink, $edges);
                }
                ran += 1;
                // Cannot overflow: the cursor's budget counted the steps.
                ctx.time += u128::from($step);
                if ctx.core.stop_requested {
                    break ReplayEnd::Stop;
                }
                if ctx.time > bound {
                    break past(ctx.time);
                }
            }};
        }
        let end = loop {
            // SAFETY: `next` points into `ops` (the loop's invariant,
            // above), so reading it is in bounds and the operation after
            // it is still inside the list or one past its end (never read:
            // the last operation is `Wrap`).
            let op = unsafe { *next };
            // SAFETY: as above: one past `next` is inside the list or its end.
            next = unsafe { next.add(1) };
            match op {
                Op::Solo(d, step) => {
                    let entry = solo!(d);
                    let n = entry.next;
                    entry.next = n + 1;
                    let Solo {
                        runner: r,
                        words: (a, b),
                        fifo: f,
                        side,
                        call,
                        ..
                    } = *entry;
                    let runner = runner!(r);
                    match (call, runner.native) {
                        (Call::Blind, Some(group)) if !OBSERVED => {
                            ctx.core.channels.set_cycle(d, n);
                            let status = TickCtx::call_native_unobserved_blind(group);
                            if status != 0 {
                                ctx.enter_edge(d, n);
                                let len = runner.metas.end - runner.metas.start;
                                ctx.set_group(runner.metas.start, len, &runner.first);
                                ctx.fault_status(status);
                            }
                        }
                        (Call::Tick, _) => {
                            ctx.enter_edge(d, n);
                            tick(&mut ctx, runner);
                        }
                        _ => {
                            ctx.enter_edge(d, n);
                            native::<OBSERVED>(&mut ctx, runner);
                        }
                    }
                    // A native runner's registers usually live in its own
                    // state (no words here): that case first.
                    if b > a {
                        words!(a, b);
                    }
                    match side {
                        Side::None => {}
                        Side::Writer => fifo!(f).commit_writer(),
                        Side::Reader => fifo!(f).commit_reader(),
                        Side::Both => fifo!(f).commit(true, true),
                    }
                    end!(step, std::iter::once((d, n)));
                }
                Op::Edge(d) => edge!(d),
                Op::EdgeTick(d, r) => {
                    edge!(d);
                    tick(&mut ctx, runner!(r));
                }
                Op::EdgeNative(d, r) => {
                    edge!(d);
                    native::<OBSERVED>(&mut ctx, runner!(r));
                }
                Op::Tick(r) => tick(&mut ctx, runner!(r)),
                Op::Native(r) => native::<OBSERVED>(&mut ctx, runner!(r)),
                Op::Word(w) => words!(w, w + 1),
                Op::Words(a, b) => words!(a, b),
                // SAFETY: `s < reach.stages <= stages.len()` (checked above).
                Op::Stage(s) => unsafe { ctx.core.stages.get_unchecked_mut(s as usize) }.commit(),
                Op::Writer(f) => fifo!(f).commit_writer(),
                Op::Reader(f) => fifo!(f).commit_reader(),
                Op::Both(f) => fifo!(f).commit(true, true),
                Op::End((at, len), step) => {
                    // Built from `edge_domains`' own length (checked
                    // indexing: observed runs only, once per instant).
                    let span = at as usize..(at + len) as usize;
                    let edges = edge_domains[span]
                        .iter()
                        .map(|&d| (d, solos[d as usize].next - 1));
                    end!(step, edges)
                }
                // The pattern wraps around (once per hyperperiod: the
                // instants' ends need no test of their own).
                Op::Wrap => next = first,
            }
        };
        let time = ctx.time;
        // `i` is the next instant's first operation (or the final `Wrap`,
        // before the first).
        // SAFETY: `next` points into `ops`, after `first` (the invariant).
        let mut i = unsafe { next.offset_from(first) } as usize;
        if i == ops.len() - 1 {
            i = 0;
        }
        // The edge counts back to the calendar: a domain that had an edge
        // has its latest edge's cycle and the next index.
        for ((entry, c), n) in solos
            .iter()
            .zip(cycle.iter_mut())
            .zip(next_cycle.iter_mut())
        {
            if entry.next != *n {
                *c = entry.next - 1;
                *n = entry.next;
            }
        }
        cursor.position = starts
            .binary_search(&(i as u32))
            .expect("the loop ends between instants");
        cursor.upcoming = time;
        cursor.finish(ran > 0);
        *instants += ran;
        if !OBSERVED {
            // Without a sink nothing is traced (`TickCtx::trace` pushes
            // only while tracing), so the buffer is empty; `step` clears it
            // too.
            core.trace.clear();
        }
        end
    }
}
