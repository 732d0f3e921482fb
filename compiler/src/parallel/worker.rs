//! The workers of a parallel run and the protocol that keeps their stops
//! exact.
//!
//! Each worker builds its own simulator for its components
//! ([`Simulator::for_units`]: every domain, so every worker walks the same
//! instants) on its own thread, and runs it in slices of simulated time up
//! to a shared horizon: the earliest stop known. The horizon starts at the
//! run's limit (`--until`, `--cycles`) and only falls: a worker that stops
//! (`finish`, a fault, a time overflow) lowers it to its stop's instant,
//! and an interrupt lowers it to the latest instant any worker has
//! finished. Components never exchange data, so a worker never waits for
//! another's results, with one exception: under
//! [`super::plan::FinishRule::Leader`] the components that can `finish`
//! all run on worker 0, the leader, and the others never pass its time,
//! so a `finish` never leaves a worker beyond it. Otherwise a stop can:
//! a worker that ran past the final horizon runs again from the start,
//! alone, to exactly the horizon (the run is deterministic, so its second
//! run is its first cut short). With `--drain`, the workers then drain in
//! rounds ([`drain_rounds`]), and a worker that ran again first has the
//! merges drop what it handed over past the horizon.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chronon_runtime::{DomainId, Fault, Picos, RunLimit, Stop, Timestamp};

use super::lines::{Handoff, LineMerge, QUEUED_LINES, WorkerLines};
use super::records::{QUEUED_RECORDS, RecordHandoff, RecordMerge, WorkerRecords};
use super::tee::Tee;
use crate::config::ExecConfig;
use crate::ir::Program;
use crate::record::{RecordPlan, WorkerRecording};
use crate::run::print::{PrintBatch, PrintCapture};
use crate::simulate::Simulator;

/// The lines and records a slice should hand over at most: a slice that
/// hands over more halves the next one's length.
const HANDOFF_ITEMS: usize = 1 << 14;

/// What one worker ends with.
pub(crate) struct WorkerEnd {
    /// The whole state array (only its components' slots moved).
    pub state: Vec<u64>,
    /// Edges done per domain.
    pub edges: Vec<u64>,
    /// Instants done.
    pub instants: u64,
    /// The last instant's time.
    pub now: Timestamp,
    /// Its own stop at the final horizon, if it stopped there.
    pub stop: Option<Stop>,
    /// The faults of that stop.
    pub faults: Vec<Fault>,
    /// Whether it ran again to cut an overshoot.
    pub rerun: bool,
    /// How the drain ended, when the run drained.
    pub drain: Option<DrainEnd>,
}

/// Why the horizon is where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// The run's limit (or no horizon at all).
    Limit,
    /// A worker stopped there.
    Stopped,
    /// The user interrupted the run.
    Interrupted,
}

struct State {
    /// The earliest stop known; `None`: none yet.
    horizon: Option<Picos>,
    why: Why,
    /// The leader's progress: every instant at or before it is done.
    leader: Option<Picos>,
    leader_done: bool,
    /// Workers still in their run loop.
    running: usize,
    /// An interrupt is being handled: running workers pause.
    interrupt: bool,
    paused: usize,
    /// Each worker's last instant, as it last reported it.
    nows: Vec<Option<Picos>>,
    failed: Option<String>,
    /// Workers whose simulator is built; they start together, once all
    /// are, so the run's wall time leaves compiling out.
    built: usize,
    go: bool,
    /// Per worker: print lines handed over and not yet written (see
    /// [`super::lines`]).
    queued: Vec<usize>,
    /// Per worker: records handed over and not yet written (see
    /// [`super::records`]).
    queued_records: Vec<usize>,
    /// The drain's round in progress (see [`drain_rounds`]).
    drain: DrainRound,
}

/// How a round of a parallel drain ended (see [`drain_rounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrainStep {
    /// Every worker drains one more instant.
    Continue,
    /// Every channel and FIFO is empty.
    Drained,
    /// The instant limit was reached with this many items in flight.
    Limit(u64),
    /// An instant stopped the drain (the workers' ends say how).
    Stopped,
}

/// What the workers have reported in a drain's round, and the last
/// round's decision.
#[derive(Default)]
struct DrainRound {
    reported: usize,
    in_flight: u64,
    stopped: bool,
    decided: Option<(u64, DrainStep)>,
}

/// How a worker's drain ended: instants drained, the decision that ended
/// it, and its own stop if its last instant stopped it.
pub(crate) type DrainEnd = (u64, DrainStep, Option<Stop>);

/// What the workers share.
pub(crate) struct Coord {
    state: Mutex<State>,
    wake: Condvar,
}

impl Coord {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked poisons nothing we read inconsistently:
        // every update is one assignment.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.wake.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    fn fail(&self, why: String) {
        let mut s = self.lock();
        s.failed.get_or_insert(why);
        self.wake.notify_all();
    }
}

/// One worker's share and how it runs.
pub(crate) struct Job {
    /// Its units.
    pub active: Vec<bool>,
    /// Whether it is the leader.
    pub leads: bool,
    /// Whether there is a leader to follow.
    pub follows: bool,
    /// Where its `print` lines go, when the run prints.
    pub print: Option<WorkerLines>,
    /// Where its records go, when the run records.
    pub record: Option<WorkerRecords>,
}

/// The main thread's merges of what the workers hand over.
pub(crate) struct Merges<'a> {
    /// The `print` lines, when the run prints.
    pub lines: Option<&'a mut LineMerge>,
    /// The recording, when the run records, and what the workers record.
    pub records: Option<(&'a mut RecordMerge, &'a RecordPlan)>,
}

/// Runs `jobs` on one thread each; returns each worker's end, why the
/// final horizon is where it is, and when the workers started running
/// (all built).
pub(crate) fn run(
    program: &Arc<Program>,
    config: &ExecConfig,
    jobs: Vec<Job>,
    horizon: Option<Picos>,
    (interrupt, drain): (Option<&AtomicBool>, Option<u64>),
    merges: Merges<'_>,
    progress: &mut dyn FnMut(Option<Picos>, Duration),
) -> Result<(Vec<WorkerEnd>, Why, Instant), String> {
    let Merges { mut lines, records } = merges;
    let (mut records, record_plan) = match records {
        Some((merge, plan)) => (Some(merge), Some(plan)),
        None => (None, None),
    };
    let n = jobs.len();
    let coord = Coord {
        state: Mutex::new(State {
            horizon,
            why: Why::Limit,
            leader: None,
            leader_done: !jobs.iter().any(|j| j.leads),
            running: n,
            interrupt: false,
            paused: 0,
            nows: vec![None; n],
            failed: None,
            built: 0,
            go: false,
            queued: vec![0; n],
            queued_records: vec![0; n],
            drain: DrainRound::default(),
        }),
        wake: Condvar::new(),
    };
    let step = min_period(program) * Picos::from_integer(64);
    let mut started = Instant::now();
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .into_iter()
            .enumerate()
            .map(|(ix, job)| {
                let (coord, program) = (&coord, program.clone());
                std::thread::Builder::new()
                    .name(format!("chronon-worker-{ix}"))
                    .spawn_scoped(scope, move || {
                        // A panic is a failure the others must hear of, or
                        // they would wait for this worker forever.
                        let end = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            let run = (&program, config, record_plan);
                            work(ix, run, (&job, n, drain), coord, step)
                        }))
                        .unwrap_or_else(|panic| {
                            let what = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            Err(format!("internal error: worker {ix} panicked: {what}"))
                        });
                        if let Err(e) = &end {
                            coord.fail(e.clone());
                        }
                        end
                    })
                    .map_err(|e| format!("cannot start a worker thread: {e}"))
            })
            .collect();
        {
            let mut s = coord.lock();
            while s.built < n && s.failed.is_none() {
                s = coord.wait(s);
            }
            s.go = true;
            started = Instant::now();
            coord.wake.notify_all();
        }
        let mut handled = false;
        // Printing and recording workers hand over per slice: look for
        // what they hand over often.
        let poll = match lines.is_some() || records.is_some() {
            true => Duration::from_millis(2),
            false => Duration::from_millis(20),
        };
        loop {
            let written = lines.as_deref_mut().map(LineMerge::pump);
            let recorded = records.as_deref_mut().map(RecordMerge::pump);
            let output_failed = lines.as_ref().is_some_and(|l| l.error.is_some())
                || records.as_ref().is_some_and(|r| r.failed());
            let mut s = coord.lock();
            let mut wake = false;
            let State {
                queued,
                queued_records,
                ..
            } = &mut *s;
            for (written, queued) in [(written, queued), (recorded, queued_records)] {
                if let Some(written) = written
                    && written.iter().any(|&w| w > 0)
                {
                    // What a worker cut (it ran again) was counted and is
                    // never written: counts only fall to zero.
                    for (q, w) in queued.iter_mut().zip(written) {
                        *q = q.saturating_sub(w);
                    }
                    wake = true;
                }
            }
            if wake {
                coord.wake.notify_all();
            }
            if s.running == 0 || s.failed.is_some() {
                break;
            }
            // A print output or a recording that fails stops the run as
            // an interrupt does: at one instant every worker can reach.
            let interrupted = interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
            if !handled && (interrupted || output_failed) {
                handled = true;
                s.interrupt = true;
                coord.wake.notify_all();
            }
            if s.interrupt && s.paused == s.running {
                // Every worker is between two slices: the latest instant
                // any has done is one every worker can reach.
                let latest = s.nows.iter().flatten().max().copied();
                if let Some(t) = latest
                    && s.horizon.is_none_or(|h| t < h)
                {
                    s.horizon = Some(t);
                    s.why = Why::Interrupted;
                }
                if latest.is_none() {
                    // Nothing ran yet: stop before the first instant.
                    s.horizon = Some(Picos::from_integer(-1));
                    s.why = Why::Interrupted;
                }
                s.interrupt = false;
                coord.wake.notify_all();
            }
            let slowest = s
                .nows
                .iter()
                .map(|t| t.unwrap_or(Picos::from_integer(0)))
                .min();
            let (g, _) = coord
                .wake
                .wait_timeout(s, poll)
                .unwrap_or_else(|e| e.into_inner());
            drop(g);
            progress(slowest, started.elapsed());
        }
        let ends: Vec<Result<WorkerEnd, String>> = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err("a worker panicked".into())),
                Err(e) => {
                    coord.fail(e.clone());
                    Err(e)
                }
            })
            .collect();
        let s = coord.lock();
        if let Some(e) = &s.failed {
            return Err(e.clone());
        }
        let ends = ends.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok((ends, s.why, started))
    })
}

fn min_period(program: &Program) -> Picos {
    program
        .domains
        .iter()
        .map(|d| d.period_ps)
        .min()
        .unwrap_or_else(|| Picos::from_integer(1))
}

fn picos(t: Timestamp) -> Result<Picos, String> {
    t.picos().map_err(|e| e.to_string())
}

/// A small seeded generator for the chaos mode.
struct Chaos(u64);

impl Chaos {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// One worker: its run loop, then the cut to the final horizon.
fn work(
    ix: usize,
    (program, config, record_plan): (&Arc<Program>, &ExecConfig, Option<&RecordPlan>),
    (job, workers, drain): (&Job, usize, Option<u64>),
    coord: &Coord,
    step: Picos,
) -> Result<WorkerEnd, String> {
    let build =
        || Simulator::for_units(program.clone(), config, &job.active).map_err(|e| e.to_string());
    let mut sim = build()?;
    let mut captures = Captures::install(&mut sim, (job, record_plan), None);
    let hand_over = |captures: &Captures, reached: u128| captures.hand_over(ix, job, reached);
    let ticks_per_ps = Picos::from_integer(sim.sim.now().ticks_per_ps as i128);
    let ticks = |t: Picos| (t * ticks_per_ps).floor().to_integer().max(0) as u128;
    {
        let mut s = coord.lock();
        s.built += 1;
        coord.wake.notify_all();
        while !s.go && s.failed.is_none() {
            s = coord.wait(s);
        }
    }
    let mut chaos = config
        .parallel
        .chaos
        .map(|seed| Chaos(seed ^ (ix as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1));
    // Every instant at or before `reached` is done.
    let mut reached: Option<Picos> = None;
    let mut delta = step;
    let max_delta = step * Picos::from_integer(1 << 24);
    let mut stop: Option<Stop> = None;
    let mut paused = false;
    'run: loop {
        let bound = {
            let mut s = coord.lock();
            loop {
                if s.failed.is_some() {
                    return Err("another worker failed".into());
                }
                if s.interrupt && !paused {
                    paused = true;
                    s.nows[ix] = reached.map(|_| picos(sim.sim.now())).transpose()?;
                    s.paused += 1;
                    coord.wake.notify_all();
                    while s.interrupt && s.failed.is_none() {
                        s = coord.wait(s);
                    }
                    continue;
                }
                let h = s.horizon;
                if let (Some(h), Some(r)) = (h, reached)
                    && r >= h
                {
                    break 'run;
                }
                if h.is_some_and(|h| h < Picos::from_integer(0)) {
                    break 'run;
                }
                let lead = match job.follows && !s.leader_done {
                    true => Some(s.leader),
                    false => None,
                };
                let bound = match (h, lead) {
                    (h, None) => h,
                    (None, Some(l)) => l,
                    (Some(h), Some(l)) => Some(l.map_or(h, |l| l.min(h))),
                };
                // A follower waits while the leader has nothing past it,
                // and a worker whose lines wait to be written until they
                // are written (the slowest worker's always can be).
                let waiting = match (lead, bound) {
                    (Some(None), _) => true,
                    (Some(_), Some(b)) => reached.is_some_and(|r| r >= b),
                    _ => false,
                } || s.queued[ix] > QUEUED_LINES
                    || s.queued_records[ix] > QUEUED_RECORDS;
                if waiting {
                    s = coord.wait(s);
                    continue;
                }
                break bound;
            }
        };
        let base = reached.unwrap_or_else(|| Picos::from_integer(0));
        let mut slice = delta;
        if let Some(c) = chaos.as_mut() {
            slice =
                step * Picos::from_integer(1 + (c.next() % 16) as i128) / Picos::from_integer(16);
            if c.next() % 4 == 0 {
                std::thread::sleep(Duration::from_micros(c.next() % 300));
            }
        }
        let target = bound.map_or(base + slice, |b| (base + slice).min(b));
        let slice_started = Instant::now();
        match sim.sim.run(RunLimit::Time(target)) {
            Stop::LimitReached => reached = Some(target),
            other => {
                let at = picos(sim.sim.now())?;
                stop = Some(other);
                let mut s = coord.lock();
                // Counted under the lock, before the merge can write them.
                let (lines, records) = hand_over(&captures, sim.sim.now().ticks);
                s.queued[ix] += lines;
                s.queued_records[ix] += records;
                if s.horizon.is_none_or(|h| at < h) {
                    s.horizon = Some(at);
                    s.why = Why::Stopped;
                }
                coord.wake.notify_all();
                break 'run;
            }
        }
        let took = slice_started.elapsed();
        let handed = {
            let mut s = coord.lock();
            s.nows[ix] = Some(picos(sim.sim.now())?);
            // Counted under the lock, before the merge can write them.
            let (lines, records) = hand_over(&captures, ticks(target));
            s.queued[ix] += lines;
            s.queued_records[ix] += records;
            if job.leads {
                s.leader = reached;
            }
            if job.leads || lines + records > 0 {
                coord.wake.notify_all();
            }
            lines + records
        };
        // Slices of a few milliseconds: long beside a lock, short beside
        // the run, so followers trail the leader by little; and of a few
        // thousand lines and records at most, so that what a worker hands
        // over stays small and the main thread writes while it runs.
        // (Only a slice that ran its whole length says it was short; the
        // cap keeps the exact arithmetic small.)
        if handed > HANDOFF_ITEMS && delta > step {
            delta /= Picos::from_integer(2);
        } else if took < Duration::from_millis(2)
            && handed <= HANDOFF_ITEMS / 2
            && target == base + slice
            && delta < max_delta
        {
            delta *= Picos::from_integer(2);
        } else if took > Duration::from_millis(8) && delta > step {
            delta /= Picos::from_integer(2);
        }
    }
    // Out of the loop: wait for the final horizon.
    let (horizon, why) = {
        let mut s = coord.lock();
        s.running -= 1;
        s.nows[ix] = match sim.sim.instants_done() {
            0 => None,
            _ => Some(picos(sim.sim.now())?),
        };
        if job.leads {
            s.leader_done = true;
        }
        coord.wake.notify_all();
        while s.running > 0 && s.failed.is_none() {
            s = coord.wait(s);
        }
        if s.failed.is_some() {
            return Err("another worker failed".into());
        }
        (s.horizon, s.why)
    };
    let now = match sim.sim.instants_done() {
        0 => None,
        _ => Some(picos(sim.sim.now())?),
    };
    let mut rerun = false;
    let drain = drain.filter(|_| why != Why::Interrupted);
    if let (Some(h), Some(now)) = (horizon, now)
        && now > h
    {
        // Past the final horizon (another worker faulted or was
        // interrupted earlier): run again to exactly there.
        rerun = true;
        sim = build()?;
        stop = None;
        if drain.is_some() {
            // The drain goes on from the horizon: what this worker
            // handed over past it goes, and the run again hands over only
            // what comes after it.
            Captures::cut(ix, job, ticks(h));
            captures = Captures::install(&mut sim, (job, record_plan), Some(ticks(h)));
        }
        if h >= Picos::from_integer(0) {
            match sim.sim.run(RunLimit::Time(h)) {
                Stop::LimitReached => {}
                other => stop = Some(other),
            }
        }
    }
    // Only a stop at the final horizon is the run's.
    let at = match sim.sim.instants_done() {
        0 => None,
        _ => Some(picos(sim.sim.now())?),
    };
    if why != Why::Stopped || at != horizon {
        stop = None;
    }
    let drained = match drain {
        Some(max) => {
            let end = drain_rounds(&mut sim, coord, workers, max)?;
            let mut s = coord.lock();
            // Counted under the lock, before the merge can write them.
            let (lines, records) = hand_over(&captures, sim.sim.now().ticks);
            s.queued[ix] += lines;
            s.queued_records[ix] += records;
            Some(end)
        }
        None => None,
    };
    let faults = match (&stop, &drained) {
        // A drain's faults are the run's last (serial: `Simulation::drain`).
        (_, Some(_)) | (Some(Stop::Fault(_)), None) => sim.sim.faults().to_vec(),
        _ => Vec::new(),
    };
    let state = sim.state().to_vec();
    Ok(WorkerEnd {
        state,
        edges: (0..program.domains.len())
            .map(|d| sim.sim.edges_done(DomainId(d as u32)))
            .collect(),
        instants: sim.sim.instants_done(),
        now: sim.sim.now(),
        stop,
        faults,
        rerun,
        drain: drained,
    })
}

/// Drains in step with the other workers, as `Simulation::drain` drains
/// one simulator: in each round every worker reports what it has in
/// flight and whether its last instant stopped, and the last to report
/// decides for all: stop (an instant stopped), drained (nothing in flight
/// anywhere), the limit (`max` instants done), or one more instant each.
fn drain_rounds(
    sim: &mut Simulator,
    coord: &Coord,
    workers: usize,
    max: u64,
) -> Result<DrainEnd, String> {
    sim.sim.drain_begin();
    let (mut done, mut stop) = (0u64, None);
    loop {
        let in_flight = sim.sim.in_flight();
        let step = {
            let mut s = coord.lock();
            let round = &mut s.drain;
            round.reported += 1;
            round.in_flight += in_flight;
            round.stopped |= stop.is_some();
            if round.reported == workers {
                let step = match (round.stopped, round.in_flight) {
                    (true, _) => DrainStep::Stopped,
                    (false, 0) => DrainStep::Drained,
                    (false, n) if done == max => DrainStep::Limit(n),
                    _ => DrainStep::Continue,
                };
                // A worker reports the next round only once every worker
                // has read this decision (they all report before it).
                *round = DrainRound {
                    decided: Some((done, step)),
                    ..DrainRound::default()
                };
                coord.wake.notify_all();
            }
            loop {
                if s.failed.is_some() {
                    return Err("another worker failed".into());
                }
                if let Some((r, step)) = s.drain.decided
                    && r == done
                {
                    break step;
                }
                s = coord.wait(s);
            }
        };
        if step != DrainStep::Continue {
            return Ok((done, step, stop));
        }
        done += 1;
        stop = sim.sim.drain_step();
    }
}

/// Where a worker's simulator puts its print lines and records, to be
/// handed over to the main thread's merges.
struct Captures {
    batch: Option<Rc<RefCell<PrintBatch>>>,
    recording: Option<WorkerRecording>,
}

impl Captures {
    /// Installs on `sim` the sinks `job` asks for: lines when
    /// the run prints, records when it records (of `plan`); the instants at
    /// or before `skip_through` (ticks) are left out (a worker that runs
    /// again has handed them over).
    fn install(
        sim: &mut Simulator,
        (job, plan): (&Job, Option<&RecordPlan>),
        skip_through: Option<u128>,
    ) -> Captures {
        let batch = job
            .print
            .as_ref()
            .map(|_| Rc::new(RefCell::new(PrintBatch::default())));
        let print = batch.as_ref().map(|batch| {
            Box::new(PrintCapture::new(
                sim.program(),
                batch.clone(),
                skip_through,
            )) as _
        });
        let (recording, record_sink) = match (plan, &job.record) {
            (Some(plan), Some(_)) => {
                let (recording, sink) =
                    WorkerRecording::attach(plan, sim, &job.active, skip_through);
                (Some(recording), Some(sink))
            }
            _ => (None, None),
        };
        match (print, record_sink) {
            (Some(a), Some(b)) => sim.sim.set_trace_sink(Box::new(Tee(a, b))),
            (Some(one), None) | (None, Some(one)) => sim.sim.set_trace_sink(one),
            (None, None) => {}
        }
        Captures { batch, recording }
    }

    /// Hands the lines and records since the last call over, with every
    /// instant at or before `reached` done; returns how many of each.
    fn hand_over(&self, ix: usize, job: &Job, reached: u128) -> (usize, usize) {
        let mut lines = 0;
        if let (Some(ends), Some(batch)) = (&job.print, &self.batch) {
            let batch = std::mem::replace(&mut *batch.borrow_mut(), ends.empty_batch());
            lines = batch.lines.len();
            // The receiver lives until every worker has joined.
            let cut = None;
            let _ = ends.to_merge.send((
                ix,
                Handoff {
                    batch,
                    reached,
                    cut,
                },
            ));
        }
        let mut records = 0;
        if let (Some(ends), Some(recording)) = (&job.record, &self.recording) {
            let mut streams = Vec::new();
            records = recording.take(&mut streams, || ends.empty_stream());
            let cut = None;
            let _ = ends.to_merge.send((
                ix,
                RecordHandoff {
                    streams,
                    reached,
                    cut,
                },
            ));
        }
        (lines, records)
    }

    /// Tells the merges to drop what this worker handed over after
    /// instant `cut` (ticks): it runs again to there.
    fn cut(ix: usize, job: &Job, cut: u128) {
        if let Some(ends) = &job.print {
            let batch = ends.empty_batch();
            let h = Handoff {
                batch,
                reached: cut,
                cut: Some(cut),
            };
            let _ = ends.to_merge.send((ix, h));
        }
        if let Some(ends) = &job.record {
            let h = RecordHandoff {
                streams: Vec::new(),
                reached: cut,
                cut: Some(cut),
            };
            let _ = ends.to_merge.send((ix, h));
        }
    }
}
