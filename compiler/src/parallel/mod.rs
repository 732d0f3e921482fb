//! Parallel runs (contract §7): a design's components (units joined by
//! channels or CDC FIFOs, directly or not) are independent, so each worker
//! thread runs its share of them on its own simulator, and the workers'
//! results are merged into exactly the serial run's: the same instants,
//! cycles, stop, faults, counters and state.
//!
//! - [`plan`]: the components, their static cost, their placement, and why
//!   a run stays serial;
//! - `worker`: the threads and the horizon protocol that makes every stop
//!   land on the serial run's instant.
//!
//! - `lines`: the workers' `print` lines merged into the serial order;
//! - `records`: the workers' recordings merged into the serial order, so
//!   every writer writes the serial run's bytes.
//!
//! A `--drain` after the stop runs on the workers in rounds
//! (`worker::drain_rounds`). What is not parallel yet: clusters of one
//! component (units joined by a channel of latency >= 1 or a CDC FIFO) run
//! on one worker.

mod lines;
pub mod plan;
mod records;
mod tee;
mod worker;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use chronon_runtime::{Drain, Fault, Picos, Stop, Timestamp};
use serde::Serialize;

use chronon_record::RecordError;

use crate::config::ExecConfig;
use crate::ir::Program;
use crate::record::ParallelRecording;
use plan::Component;

/// How a run used workers, as reported.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ParallelReport {
    /// Workers that ran.
    pub workers: usize,
    /// The design's components.
    pub components: usize,
    /// Why the run was serial; `None` when it was parallel.
    pub serial_reason: Option<String>,
    /// Per worker: how many components and units it ran, and its share of
    /// the static cost (0 to 1).
    pub placement: Vec<WorkerShare>,
    /// How a `finish` is kept exact: `none` (no component can finish, or
    /// a serial run), `leader` or `rerun` ([`plan::FinishRule`]).
    pub finish: plan::FinishRule,
    /// Workers that ran a second time to stop exactly where another
    /// worker's stop or the interrupt stopped the run (not
    /// deterministic: it depends on how far each worker had run).
    pub reruns: usize,
    /// Wall-clock milliseconds the planner took (not deterministic).
    pub plan_ms: f64,
}

/// One worker's share of a parallel run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WorkerShare {
    /// Components it ran.
    pub components: usize,
    /// Units it ran.
    pub units: usize,
    /// Its part of the design's static cost.
    pub cost_share: f64,
}

impl ParallelReport {
    /// A serial run's report.
    pub fn serial(components: usize, why: String, plan_ms: f64) -> Self {
        ParallelReport {
            workers: 1,
            components,
            serial_reason: Some(why),
            placement: Vec::new(),
            finish: plan::FinishRule::None,
            reruns: 0,
            plan_ms,
        }
    }

    /// The summary's line: how many workers and why.
    pub fn line(&self) -> String {
        match &self.serial_reason {
            Some(why) => format!("workers: 1 (serial: {why})"),
            None => format!(
                "workers: {} ({} components; units per worker {}{})",
                self.workers,
                self.components,
                self.placement
                    .iter()
                    .map(|w| w.units.to_string())
                    .collect::<Vec<_>>()
                    .join(" + "),
                match self.finish {
                    plan::FinishRule::None => "",
                    plan::FinishRule::Leader => "; `finish` on worker 0, which leads",
                    plan::FinishRule::Rerun => "; workers past a `finish` run again to it",
                }
            ),
        }
    }
}

/// A parallel run's merged result: what the serial run would have ended
/// with.
pub struct Merged {
    /// The whole state.
    pub state: Vec<u64>,
    /// Edges per domain.
    pub edges: Vec<u64>,
    /// Instants done.
    pub instants: u64,
    /// The last instant's time.
    pub now: Timestamp,
    /// How the run stopped.
    pub end: End,
    /// The faults of the stopping instant (a drained run: of the drain's
    /// last instant), in the serial run's order.
    pub faults: Vec<Fault>,
    /// How the drain ended, when the run drained.
    pub drain: Option<Drain>,
    /// The report's parallel part.
    pub report: ParallelReport,
    /// When the workers, all built, started running.
    pub started: std::time::Instant,
    /// The print output's first write error.
    pub print_error: Option<String>,
    /// The recording, every record through the final instant written;
    /// the caller, who knows where the run stopped, finishes it.
    pub recording: Option<MergedRecording>,
}

/// A parallel run's recording after the merge.
pub struct MergedRecording {
    /// The writers, every record through the final instant handed to
    /// them.
    pub recorders: Vec<chronon_record::buffer::BufferedRecorder>,
    /// What the summary needs besides them.
    pub end: crate::record::RecordingEnd,
    /// The first writer error the merge saw.
    pub error: Option<RecordError>,
}

/// How a parallel run ended.
pub enum End {
    /// As a serial run's `Simulation::run` would have returned.
    Stopped(Stop),
    /// At the user's interrupt.
    Interrupted,
}

/// What a parallel run writes besides its state.
pub struct Outputs {
    /// Where the `print` lines go, in the serial run's order.
    pub print: Option<Box<dyn std::io::Write>>,
    /// The recording, whose writers get the serial run's records.
    pub recording: Option<ParallelRecording>,
}

/// Runs `plan`'s workers (components per worker, from [`plan::plan`]) on
/// one thread each, up to `horizon` (`None`: until `finish` or a fault),
/// drains (at most `drain` instants, unless interrupted) as the serial run
/// would, and merges their results and their `outputs`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    program: &Arc<Program>,
    config: &ExecConfig,
    components: &[Component],
    plan: &plan::Parallel,
    (horizon, drain): (Option<Picos>, Option<u64>),
    interrupt: Option<&AtomicBool>,
    outputs: Outputs,
    plan_ms: f64,
    progress: &mut dyn FnMut(Option<Picos>, Duration),
) -> Result<Merged, String> {
    let workers = &plan.workers;
    let leads = plan.finish == plan::FinishRule::Leader;
    let (mut lines, mut senders): (_, Vec<Option<lines::WorkerLines>>) = match outputs.print {
        Some(out) => {
            let (merge, senders) = lines::LineMerge::new(out, workers.len());
            (Some(merge), senders.into_iter().map(Some).collect())
        }
        None => (None, (0..workers.len()).map(|_| None).collect()),
    };
    // The plan is what the workers build their sinks from; the merge
    // owns the writers.
    let (mut records, mut record_ends, record_plan, record_end) = match outputs.recording {
        Some(ParallelRecording {
            recorders,
            plan,
            end,
        }) => {
            let (merge, ends) = records::RecordMerge::new(recorders, workers.len());
            let ends: Vec<Option<_>> = ends.into_iter().map(Some).collect();
            (Some(merge), ends, Some(plan), Some(end))
        }
        None => (None, (0..workers.len()).map(|_| None).collect(), None, None),
    };
    let jobs = workers
        .iter()
        .enumerate()
        .map(|(i, cs)| {
            let mut active = vec![false; program.units.len()];
            for &c in cs {
                for &u in &components[c].units {
                    active[u as usize] = true;
                }
            }
            worker::Job {
                active,
                leads: leads && i == 0,
                follows: leads && i != 0,
                print: senders[i].take(),
                record: record_ends[i].take(),
            }
        })
        .collect();
    let (ends, why, started) = worker::run(
        program,
        config,
        jobs,
        horizon,
        (interrupt, drain),
        worker::Merges {
            lines: lines.as_mut(),
            records: records.as_mut().zip(record_plan.as_ref()),
        },
        progress,
    )?;
    let total: f64 = components.iter().map(|c| c.cost).sum();
    let placement = workers
        .iter()
        .map(|cs| WorkerShare {
            components: cs.len(),
            units: cs.iter().map(|&c| components[c].units.len()).sum(),
            cost_share: match total > 0.0 {
                true => cs.iter().map(|&c| components[c].cost).sum::<f64>() / total,
                false => 0.0,
            },
        })
        .collect();
    let first = &ends[0];
    for e in &ends[1..] {
        if e.edges != first.edges || e.instants != first.instants || e.now != first.now {
            return Err(format!(
                "internal error: workers ended at different instants ({} and {})",
                first.now, e.now
            ));
        }
    }
    // Every worker ended at the final instant: the lines through it are
    // the serial run's.
    let last = (first.instants > 0).then_some(first.now.ticks);
    let print_error = lines.and_then(|l| l.finish(last));
    let recording = records.zip(record_end).map(|(merge, end)| {
        let (recorders, error) = merge.finish(last);
        MergedRecording {
            recorders,
            end,
            error,
        }
    });
    let state = merge_state(program, ends.iter().map(|e| e.state.as_slice()));
    let mut faults: Vec<Fault> = ends.iter().flat_map(|e| e.faults.iter().cloned()).collect();
    sort_faults(program, &mut faults);
    let drain = merge_drain(&ends, &faults)?;
    // The serial run reports a fault over a `finish` of the same instant.
    let stops: Vec<&Stop> = ends.iter().filter_map(|e| e.stop.as_ref()).collect();
    // Each faulting worker's stop holds its first fault; the serial run's
    // is the first of those in its order (`faults` may be a drain's).
    let mut first_faults: Vec<Fault> = stops
        .iter()
        .filter_map(|s| match s {
            Stop::Fault(f) => Some((**f).clone()),
            _ => None,
        })
        .collect();
    sort_faults(program, &mut first_faults);
    let end = match (first_faults.into_iter().next(), stops.first()) {
        (Some(fault), _) => End::Stopped(Stop::Fault(Box::new(fault))),
        (_, Some(s)) => End::Stopped((*s).clone()),
        (_, None) if why == worker::Why::Interrupted => End::Interrupted,
        (_, None) => End::Stopped(Stop::LimitReached),
    };
    Ok(Merged {
        state,
        edges: first.edges.clone(),
        instants: first.instants,
        now: first.now,
        end,
        faults,
        drain,
        report: ParallelReport {
            workers: workers.len(),
            components: components.len(),
            serial_reason: None,
            placement,
            finish: plan.finish,
            reruns: ends.iter().filter(|e| e.rerun).count(),
            plan_ms,
        },
        started,
        print_error,
        recording,
    })
}

/// How the workers' drain ended, as the serial run's would have: every
/// worker drained the same instants and ended on the same decision; a
/// stop is the first fault (`faults`, in the serial order) or else the
/// first worker's stop.
fn merge_drain(ends: &[worker::WorkerEnd], faults: &[Fault]) -> Result<Option<Drain>, String> {
    let Some(&(instants, step, _)) = ends.first().and_then(|e| e.drain.as_ref()) else {
        return Ok(None);
    };
    if ends
        .iter()
        .any(|e| e.drain.as_ref().map(|d| (d.0, d.1)) != Some((instants, step)))
    {
        return Err("internal error: workers ended their drain differently".into());
    }
    Ok(Some(match step {
        worker::DrainStep::Drained => Drain::Drained { instants },
        worker::DrainStep::Limit(in_flight) => Drain::LimitReached { in_flight },
        worker::DrainStep::Stopped => {
            let first = ends.iter().find_map(|e| e.drain.as_ref()?.2.clone());
            Drain::Stopped(match (faults.first(), first) {
                (Some(f), _) => Stop::Fault(Box::new(f.clone())),
                (None, Some(stop)) => stop,
                (None, None) => return Err("internal error: a drain stopped by nothing".into()),
            })
        }
        worker::DrainStep::Continue => {
            return Err("internal error: a drain ended to continue".into());
        }
    }))
}

/// The whole state from the workers': a slot moved only on the worker
/// that runs its unit, so each slot takes the one value that left its
/// initial one (or keeps it).
fn merge_state<'a>(program: &Program, states: impl Iterator<Item = &'a [u64]>) -> Vec<u64> {
    let mut out: Vec<u64> = program.slots.iter().map(|s| s.init).collect();
    for state in states {
        for ((o, &v), slot) in out.iter_mut().zip(state).zip(&program.slots) {
            if v != slot.init {
                *o = v;
            }
        }
    }
    out
}

/// The serial order of an instant's faults: by domain, then by the unit's
/// place in the tick order (program order within a unit is kept).
fn sort_faults(program: &Program, faults: &mut [Fault]) {
    let mut position = vec![0usize; program.units.len()];
    for (k, u) in program.clusters.iter().flat_map(|c| &c.units).enumerate() {
        position[*u as usize] = k;
    }
    let key = |f: &Fault| {
        let domain = program.domains.iter().position(|d| d.name == f.domain);
        let unit = program.units.iter().position(|u| u.path == f.unit);
        (domain, unit.map(|u| position[u]))
    };
    faults.sort_by_key(key);
}
