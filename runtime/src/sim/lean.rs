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
//!
//! An instant in which one domain alone has an edge, and that domain has
//! one runner, no stage register and at most one FIFO, is one operation
//! (`Op::Solo` and its FIFO-side variants): one dispatch does the edge, the
//! call, the register words, the FIFO side and the end of the instant,
//! from the domain's [`Solo`] entry. Two clocks coupled by a FIFO spend
//! most instants so. The loop indexes its tables without bounds checks:
//! the program records how far its indices reach, and each replay checks
//! that once against the tables before it starts.

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
    /// Per domain, its whole instant when it alone has an edge (used by
    /// the `Solo` operations of the domains where [`Solo::of`] applies).
    solos: Vec<Solo>,
    /// How far the operations' indices reach (see [`Reach::fits`]).
    reach: Reach,
}

/// What an instant of one domain alone does, for `Op::Solo` and its
/// variants: its one runner, its register words and its one FIFO (the
/// operation says which side of it commits, or none).
#[derive(Clone, Copy, Debug, Default)]
struct Solo {
    runner: u32,
    /// Register words `words.0..words.1`.
    words: (u32, u32),
    /// The FIFO to commit (unused by `Op::Solo`).
    fifo: u32,
    /// While `replay_lean` runs: the domain's next edge index (the
    /// calendar's `next_cycle`, copied in and written back), kept beside
    /// the domain's solo entry so an edge touches one table, not three.
    next: u64,
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
    /// stage register, at most one FIFO; with the side of that FIFO.
    fn of(d: u32, plan: &DomainPlan, fifos: &[CdcFifo]) -> Option<(Solo, Side)> {
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
        let solo = Solo {
            runner: small(plan.runners.start)?,
            words: (small(plan.regs.start)?, small(plan.regs.end)?),
            fifo,
            next: 0,
        };
        Some((solo, side))
    }
}

/// One past the largest index the program's operations use in each table
/// the loop reaches: [`Simulation::replay_lean`] checks these against the
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
    /// The instant ends; the next is this many ticks later.
    End(u64),
    /// A whole instant of domain `.0` alone (its [`Solo`] entry) with no
    /// FIFO to commit: the edge, the runner, the register words, then as
    /// `End(.1)`.
    Solo(u32, u64),
    /// `Solo` committing the writer's side of the domain's FIFO.
    SoloWriter(u32, u64),
    /// `Solo` committing the reader's side of the domain's FIFO.
    SoloReader(u32, u64),
    /// `Solo` committing both sides of the domain's FIFO.
    SoloBoth(u32, u64),
    /// `Solo` whose runner is called as its native group function (as
    /// `EdgeNative`); the three below likewise.
    SoloNative(u32, u64),
    /// `SoloWriter` with a native runner.
    SoloWriterNative(u32, u64),
    /// `SoloReader` with a native runner.
    SoloReaderNative(u32, u64),
    /// `SoloBoth` with a native runner.
    SoloBothNative(u32, u64),
    /// The list's last operation: back to the first.
    Wrap,
}

impl Op {
    /// Whether the operation ends an instant (the loop may wrap after it).
    fn ends_instant(self) -> bool {
        matches!(
            self,
            Op::End(_)
                | Op::Solo(..)
                | Op::SoloWriter(..)
                | Op::SoloReader(..)
                | Op::SoloBoth(..)
                | Op::SoloNative(..)
                | Op::SoloWriterNative(..)
                | Op::SoloReaderNative(..)
                | Op::SoloBothNative(..)
        )
    }
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
        let mut solos = vec![Solo::default(); plans.len()];
        let mut solo_sides = vec![None; plans.len()];
        let mut reach = Reach {
            domains: plans.len(),
            ..Reach::default()
        };
        for (d, plan) in plans.iter().enumerate() {
            if let Some((solo, side)) = Solo::of(small(d)?, plan, fifos) {
                Reach::cover(&mut reach.runners, solo.runner as usize);
                reach.cover_words(solo.words.0, solo.words.1);
                if side != Side::None {
                    Reach::cover(&mut reach.fifos, solo.fifo as usize);
                }
                solos[d] = solo;
                solo_sides[d] = Some(side);
            }
        }
        let mut starts = Vec::with_capacity(positions.len());
        let mut ops = Vec::with_capacity(bound + positions.len() + 1);
        for (domains, step) in positions.into_iter().zip(steps) {
            starts.push(small(ops.len())?);
            let step = u64::try_from(step).ok()?;
            if let [d] = domains[..]
                && let Some(side) = solo_sides.get(d as usize).copied().flatten()
            {
                // Which call is chosen here, once, not per instant.
                let native = runners[solos[d as usize].runner as usize].native.is_some();
                ops.push(match (side, native) {
                    (Side::None, false) => Op::Solo(d, step),
                    (Side::Writer, false) => Op::SoloWriter(d, step),
                    (Side::Reader, false) => Op::SoloReader(d, step),
                    (Side::Both, false) => Op::SoloBoth(d, step),
                    (Side::None, true) => Op::SoloNative(d, step),
                    (Side::Writer, true) => Op::SoloWriterNative(d, step),
                    (Side::Reader, true) => Op::SoloReaderNative(d, step),
                    (Side::Both, true) => Op::SoloBothNative(d, step),
                });
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
            ops.push(Op::End(step));
        }
        // The loop relies on these (see `replay_lean`): every position
        // starts inside the list, before the `Wrap` that ends it, after
        // the last instant's end; so the operation after any other is
        // inside the list.
        let inside = starts.iter().all(|&s| (s as usize) < ops.len());
        if !inside || !ops.last().is_some_and(|op| op.ends_instant()) {
            return None;
        }
        ops.push(Op::Wrap);
        Some(LeanProgram {
            ops,
            starts,
            min_step,
            solos,
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
/// one), in its variant for unobserved runs: the lean loop runs only with
/// no sink installed ([`Simulation::lean_ready`]), so no FIFO is observed.
#[inline(always)]
fn native(ctx: &mut TickCtx<'_>, runner: &Runner) {
    let len = runner.metas.end - runner.metas.start;
    ctx.set_group(runner.metas.start, len, &runner.first);
    if let Some(native) = runner.native {
        ctx.call_native_unobserved(native);
    }
}

/// Edge `cycle` of domain `d` calls `runner`'s native group function in
/// its variant for unobserved runs, as [`native`] after the edge's context
/// fields are set; where the variant never reaches the context
/// ([`crate::tick::NativeGroup::unobserved_is_blind`]) the context's edge
/// and unit fields are set only if it faults (nothing else reads them
/// before the next edge sets them again).
#[inline(always)]
fn edge_native(ctx: &mut TickCtx<'_>, runner: &Runner, d: u32, cycle: u64) {
    match runner.native {
        Some(group) if group.unobserved_is_blind() => {
            ctx.core.channels.set_cycle(d, cycle);
            let status = TickCtx::call_native_unobserved_blind(group);
            if status != 0 {
                ctx.cycle = cycle;
                ctx.domain = d;
                let len = runner.metas.end - runner.metas.start;
                ctx.set_group(runner.metas.start, len, &runner.first);
                ctx.fault_status(status);
            }
        }
        _ => {
            ctx.enter_edge(d, cycle);
            native(ctx, runner);
        }
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
        let (ops, starts, solos) = (
            &program.ops[..],
            &program.starts[..],
            &mut program.solos[..],
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
        // A domain's edge begins: its cycle moves on (the calendar's count;
        // cannot overflow: the cursor's budget) and the context acts in it.
        macro_rules! edge {
            ($d:expr) => {{
                let n = count!($d);
                ctx.enter_edge($d as u32, n);
            }};
        }
        // Domain `d`'s edge count moves on; the edge's cycle.
        macro_rules! count {
            ($d:expr) => {{
                let d = $d as usize;
                // SAFETY: `d < reach.domains <= solos.len()` (checked above).
                let entry = unsafe { solos.get_unchecked_mut(d) };
                let n = entry.next;
                entry.next = n + 1;
                n
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
        // The instant ends; the next is `step` ticks later.
        macro_rules! end {
            ($step:expr) => {{
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
        // Domain `d`'s whole instant from its solo entry, its runner called
        // by `$call` (`tick` or `native`), up to its FIFO side (the caller
        // commits that, then ends the instant).
        macro_rules! solo {
            ($d:expr, tick) => {{
                let d = $d;
                // SAFETY: `d < reach.domains <= solos.len()` (checked above).
                let solo = unsafe { *solos.get_unchecked(d as usize) };
                edge!(d);
                tick(&mut ctx, runner!(solo.runner));
                words!(solo.words.0, solo.words.1);
                solo
            }};
            ($d:expr, native) => {{
                let d = $d;
                // SAFETY: `d < reach.domains <= solos.len()` (checked above).
                let solo = unsafe { *solos.get_unchecked(d as usize) };
                let n = count!(d);
                edge_native(&mut ctx, runner!(solo.runner), d, n);
                // A native runner's registers usually live in its own
                // state (no words here): that case first.
                let (a, b) = solo.words;
                if b > a {
                    words!(a, b);
                }
                solo
            }};
        }
        // A whole `Solo` instant: `solo!`, then the FIFO commit named (none
        // for `Op::Solo`), then the instant's end.
        macro_rules! solo_instant {
            ($d:expr, $step:expr, $call:ident) => {{
                solo!($d, $call);
                end!($step);
            }};
            ($d:expr, $step:expr, $call:ident, $commit:ident($($arg:expr),*)) => {{
                let solo = solo!($d, $call);
                fifo!(solo.fifo).$commit($($arg),*);
                end!($step);
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
                Op::Solo(d, step) => solo_instant!(d, step, tick),
                Op::SoloWriter(d, step) => solo_instant!(d, step, tick, commit_writer()),
                Op::SoloReader(d, step) => solo_instant!(d, step, tick, commit_reader()),
                Op::SoloBoth(d, step) => solo_instant!(d, step, tick, commit(true, true)),
                Op::SoloNative(d, step) => solo_instant!(d, step, native),
                Op::SoloWriterNative(d, step) => {
                    solo_instant!(d, step, native, commit_writer())
                }
                Op::SoloReaderNative(d, step) => {
                    solo_instant!(d, step, native, commit_reader())
                }
                Op::SoloBothNative(d, step) => solo_instant!(d, step, native, commit(true, true)),
                Op::Edge(d) => edge!(d),
                Op::EdgeTick(d, r) => {
                    edge!(d);
                    tick(&mut ctx, runner!(r));
                }
                Op::EdgeNative(d, r) => {
                    edge!(d);
                    native(&mut ctx, runner!(r));
                }
                Op::Tick(r) => tick(&mut ctx, runner!(r)),
                Op::Native(r) => native(&mut ctx, runner!(r)),
                Op::Word(w) => {
                    let core = &mut *ctx.core;
                    // SAFETY: `w < reach.words <= cur.len(), next.len()`
                    // (checked above).
                    unsafe {
                        *core.cur.get_unchecked_mut(w as usize) =
                            *core.next.get_unchecked(w as usize)
                    };
                }
                Op::Words(a, b) => words!(a, b),
                // SAFETY: `s < reach.stages <= stages.len()` (checked above).
                Op::Stage(s) => unsafe { ctx.core.stages.get_unchecked_mut(s as usize) }.commit(),
                Op::Writer(f) => fifo!(f).commit_writer(),
                Op::Reader(f) => fifo!(f).commit_reader(),
                Op::Both(f) => fifo!(f).commit(true, true),
                Op::End(step) => end!(step),
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
        // Without a sink nothing is traced (`TickCtx::trace` pushes only
        // while tracing), so the buffer is empty; `step` clears it too.
        core.trace.clear();
        end
    }
}
