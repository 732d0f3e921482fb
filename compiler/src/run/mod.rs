//! Compiling and running a design end to end: front end, lowering, engine,
//! runtime, stop conditions, drain, and a report (what `chronc run` prints).

pub mod print;
mod time_arg;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chronon_lang::diag::Diagnostic;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_runtime::{DomainId, Drain, Picos, RunLimit, Stop};
use serde::Serialize;

use crate::config::ExecConfig;
use crate::lower::lower_for_run;
use crate::parallel;
use crate::record::{ParallelRecording, RecordOptions, Recording, RecordingSummary};
use crate::simulate::{EngineKind, Simulator};

pub use print::{PrintBuffer, PrintTo};
pub use time_arg::parse_time;

/// When the run stops (besides `finish` and faults, which always stop it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// After edges `0..count` of a domain (by name; default the first clock).
    Cycles {
        /// Number of edges.
        count: u64,
        /// Domain name.
        domain: Option<String>,
    },
    /// Every instant at or before this time (picoseconds).
    Until(Picos),
    /// Only at `finish` or a fault.
    Finish,
}

/// Everything `chronc run` can be asked.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Top system.
    pub top: Option<String>,
    /// Top-level parameter overrides `(NAME, VALUE)`.
    pub params: Vec<(String, String)>,
    /// Which engine.
    pub engine: EngineKind,
    /// Stop condition.
    pub stop: StopAt,
    /// Drain after stopping, with this instant limit.
    pub drain: Option<u64>,
    /// The run seed: what `random()` draws from (see
    /// [`crate::lower::random`]); recorded in the report.
    pub seed: u64,
    /// How the design is compiled and run (never what it computes).
    pub exec: ExecConfig,
    /// Set (by `chronc`'s SIGINT and SIGTERM handler) to stop the run at
    /// the end of the instant being run: the run stops with reason
    /// `interrupted`, skips any drain and closes every recording on a
    /// whole record.
    pub interrupt: Option<&'static AtomicBool>,
    /// Report every register's final value ([`RunReport::registers`]).
    pub dump_state: bool,
    /// Where the lines of `print` statements go.
    pub print: PrintTo,
}

impl RunOptions {
    /// A run of the top system (or the one there is) on `engine` until
    /// `stop`, with every other choice at its default: no parameter
    /// overrides, no drain, seed [`crate::lower::random::DEFAULT_SEED`],
    /// the default execution configuration, no interrupt flag, no register
    /// dump, and `print` lines dropped ([`PrintTo::Quiet`]: a library
    /// caller asks for them; `chronc` does).
    pub fn new(engine: EngineKind, stop: StopAt) -> RunOptions {
        RunOptions {
            top: None,
            params: Vec::new(),
            engine,
            stop,
            drain: None,
            seed: crate::lower::random::DEFAULT_SEED,
            exec: ExecConfig::default(),
            interrupt: None,
            dump_state: false,
            print: PrintTo::Quiet,
        }
    }
}

/// Why a run could not start.
#[derive(Debug)]
pub enum RunError {
    /// The front end reported errors; render them like `chronc check`.
    Compile(Vec<Diagnostic>),
    /// A design the back end or runtime rejects, or a bad option.
    Setup(String),
}

/// Per-domain results.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DomainReport {
    /// Domain name.
    pub name: String,
    /// Edges processed.
    pub edges: u64,
}

/// A runtime fault, as reported.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FaultReport {
    /// Stable code.
    pub code: &'static str,
    /// Unit instance path.
    pub unit: String,
    /// The construct (`array index`, a stage register's name, an assert's
    /// message, a port's path), without its place: see `location`.
    pub construct: String,
    /// Domain name.
    pub domain: String,
    /// Local cycle.
    pub cycle: u64,
    /// Exact time: `W ps`, or `W ps + R/D ps` in lowest terms.
    pub time: String,
    /// Source location `file:line:col` of the faulting statement: the
    /// assert, the index, the stage register's write, retain or read, or
    /// the refused `send`.
    pub location: Option<String>,
    /// The whole message, with the location.
    pub message: String,
    /// What to do about it.
    pub help: String,
    /// The faulting statement's source span, for the snippet `chronc run`
    /// prints ([`RunReport::fault_diagnostics`]).
    #[serde(skip)]
    pub source: Option<chronon_lang::span::Span>,
}

/// A counter's final value.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CounterReport {
    /// Unit instance path.
    pub unit: String,
    /// Counter name.
    pub name: String,
    /// Value.
    pub value: u64,
}

/// A register's final value (`chronc run --dump-state`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RegisterReport {
    /// Unit instance path.
    pub unit: String,
    /// The register's name in its unit, with the element or field of an
    /// array or struct register (`mem[3]`, `pkt.len`).
    pub name: String,
    /// Its value: a number, negative for a signed register whose sign bit
    /// is set; a hexadecimal string for a value wider than 64 bits.
    pub value: crate::simulate::RegisterValue,
}

/// The result of a run. Everything but `wall_seconds` and `edges_per_second`
/// is deterministic.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// The top system.
    pub top: String,
    /// Engine used.
    pub engine: String,
    /// Seed.
    pub seed: u64,
    /// Why the run stopped: `finished`, `limit`, `fault`, `time-overflow`,
    /// `recording-failed`, `print-failed`, `interrupted`, or `empty` (no
    /// unit instance: stopped before the first instant).
    pub stop: String,
    /// Drain outcome, when asked.
    pub drain: Option<String>,
    /// Instants processed.
    pub instants: u64,
    /// Simulated time of the last instant, exact.
    pub time: String,
    /// Per domain.
    pub domains: Vec<DomainReport>,
    /// Counters.
    pub counters: Vec<CounterReport>,
    /// Every register's final value, when [`RunOptions::dump_state`] asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers: Option<Vec<RegisterReport>>,
    /// Faults of the stopping instant.
    pub faults: Vec<FaultReport>,
    /// Digest of the final state (equal across engines).
    pub state_digest: String,
    /// Wall-clock seconds of the run itself.
    pub wall_seconds: f64,
    /// Edges of all domains per wall-clock second.
    pub edges_per_second: f64,
    /// What was recorded, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<RecordingSummary>,
    /// Why `print` output stopped (a write error), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub print_error: Option<String>,
    /// How many workers ran, how the components were placed, or why the
    /// run was serial.
    pub parallel: crate::parallel::ParallelReport,
}

impl RunReport {
    /// Whether the run ended cleanly (no fault, no overflow, drained if asked).
    pub fn is_clean(&self) -> bool {
        self.faults.is_empty()
            && self.stop != "time-overflow"
            && self.stop != "interrupted"
            && self.recording.as_ref().is_none_or(|r| r.error.is_none())
            && self.print_error.is_none()
            && self
                .drain
                .as_deref()
                .is_none_or(|d| d.starts_with("drained"))
    }

    /// Each fault with a source span as a diagnostic (code, the faulting
    /// statement labelled with unit, domain, cycle and time, help), for
    /// `chronc run` to print as it prints compile errors.
    pub fn fault_diagnostics(&self) -> Vec<chronon_lang::diag::Diagnostic> {
        self.faults
            .iter()
            .filter_map(|f| {
                let span = f.source?;
                // The message without its location: the snippet shows it.
                let message = match &f.location {
                    Some(at) => f
                        .message
                        .replace(&format!(" (at {at})"), "")
                        .replace(&format!(" at {at}"), ""),
                    None => f.message.clone(),
                };
                let message = message
                    .strip_prefix(&format!("[{}] ", f.code))
                    .unwrap_or(&message)
                    .to_string();
                let label = format!("faulted here, cycle {} of `{}`", f.cycle, f.domain);
                Some(
                    chronon_lang::diag::Diagnostic::error(f.code, message, span, label)
                        .with_help(f.help.clone()),
                )
            })
            .collect()
    }
}

/// Called now and then during long runs with the edges done so far.
pub type Progress<'a> = &'a mut dyn FnMut(u64, Duration);

/// Compiles `sources` and runs the design.
pub fn run(
    sources: &mut SourceMap,
    options: &RunOptions,
    progress: Progress<'_>,
) -> Result<RunReport, RunError> {
    run_recorded(sources, options, &RecordOptions::default(), progress)
}

/// [`run`], recording what `recording` asks for (see [`crate::record`]).
pub fn run_recorded(
    sources: &mut SourceMap,
    options: &RunOptions,
    recording: &RecordOptions,
    progress: Progress<'_>,
) -> Result<RunReport, RunError> {
    let compiled = compile(
        sources,
        &CompileOptions {
            top: options.top.clone(),
            params: options.params.clone(),
            require_top: true,
        },
    );
    let has_errors = compiled.has_errors();
    let design = match compiled.design {
        Some(d) if !has_errors => d,
        _ => return Err(RunError::Compile(compiled.diagnostics)),
    };
    let program = lower_for_run(
        &design,
        sources,
        options.seed,
        (options.exec.ir_opt, options.exec.reroll),
    )
    .map_err(|e| match e {
        crate::lower::LowerError::Limit(d) => RunError::Compile(vec![d]),
        crate::lower::LowerError::Internal(e) => RunError::Setup(e),
    })?;
    let program = Arc::new(program);
    let plan_started = Instant::now();
    let mut components = parallel::plan::components(&program);
    let decision = match &options.stop {
        StopAt::Cycles { count: 0, .. } => {
            parallel::plan::Plan::Serial("`--cycles 0` runs nothing".into())
        }
        _ => parallel::plan::plan(
            &program,
            &mut components,
            &options.exec.parallel,
            parallel::plan::RunShape {
                jit: options.engine == EngineKind::Jit,
                writers: recording.writers(),
                duration_ns: duration_ns(&program, &options.stop),
            },
        ),
    };
    let plan_ms = plan_started.elapsed().as_secs_f64() * 1e3;
    let plan = match decision {
        parallel::plan::Plan::Parallel(plan) => plan,
        parallel::plan::Plan::Serial(why) => {
            let mut report = run_serial(program, &design.top, options, recording, progress)?;
            report.parallel = parallel::ParallelReport::serial(components.len(), why, plan_ms);
            return Ok(report);
        }
    };
    let horizon = horizon(&program, &options.stop)?;
    let base = time_base(&program)?;
    let recording = match recording.any() {
        true => Some(
            ParallelRecording::create(&program, base, &design.top, recording)
                .map_err(RunError::Setup)?,
        ),
        false => None,
    };
    let outputs = parallel::Outputs {
        print: options.print.writer(&program),
        recording,
    };
    let period = program.domains[0].period_ps;
    let phase = program.domains[0].phase_ps;
    let merged = parallel::run(
        &program,
        &options.exec,
        &components,
        &plan,
        (horizon, options.drain),
        options.interrupt,
        outputs,
        plan_ms,
        &mut |t, took| {
            // Edges of the first domain at or before `t`, for the bar.
            let edges = t
                .filter(|t| *t >= phase)
                .map_or(0, |t| ((t - phase) / period).to_integer() + 1);
            progress(u64::try_from(edges).unwrap_or(0), took);
        },
    )
    .map_err(RunError::Setup)?;
    if merged.now.ticks_per_ps != base.ticks_per_ps() {
        return Err(RunError::Setup(
            "internal error: the workers' time base is not the design's".into(),
        ));
    }
    // A `--until` run that reached its bound ran to that time.
    let bound = match (&options.stop, &merged.end) {
        (StopAt::Until(t), parallel::End::Stopped(Stop::LimitReached)) => Some(t),
        _ => None,
    };
    let recorded = merged.recording.map(|mut r| {
        let stop = crate::record::stop_time(base, merged.now.ticks, bound);
        r.end.finish(&mut r.recorders, stop, r.error)
    });
    let wall = merged.started.elapsed().as_secs_f64();
    let recording_failed = recorded.as_ref().is_some_and(|r| r.error.is_some());
    let why = match &merged.end {
        parallel::End::Stopped(stop) => stop_name(stop),
        // A failed recording or print output stops the run the way an
        // interrupt does.
        parallel::End::Interrupted if recording_failed => "recording-failed",
        parallel::End::Interrupted if merged.print_error.is_some() => "print-failed",
        parallel::End::Interrupted => "interrupted",
    };
    let facts = Facts {
        program: &program,
        edges: merged.edges.clone(),
        instants: merged.instants,
        now: merged.now,
        faults: &merged.faults,
        state: std::borrow::Cow::Borrowed(&merged.state),
    };
    let drain = merged.drain.as_ref().map(drain_line);
    let mut report = report(&facts, &design.top, options, why, drain, wall);
    report.parallel = merged.report;
    report.print_error = merged.print_error;
    report.recording = recorded;
    Ok(report)
}

/// The common time base of `program`'s clocks, as its simulators have it.
fn time_base(program: &crate::ir::Program) -> Result<chronon_runtime::TimeBase, RunError> {
    let clocks = program
        .domains
        .iter()
        .map(|d| chronon_runtime::Clock::new(d.period_ps, d.phase_ps))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| RunError::Setup(e.to_string()))?;
    chronon_runtime::calendar::time_base(&clocks)
        .map(|(base, _)| base)
        .map_err(|e| RunError::Setup(e.to_string()))
}

/// The report's line for how a drain ended.
fn drain_line(drain: &Drain) -> String {
    match drain {
        Drain::Drained { instants } => format!("drained after {instants} instants"),
        Drain::LimitReached { in_flight } => {
            format!("drain limit reached with {in_flight} items in flight")
        }
        Drain::Stopped(stop) => format!("stopped while draining: {}", stop_name(stop)),
    }
}

/// Simulated nanoseconds a run lasts, when its limit says.
fn duration_ns(program: &crate::ir::Program, stop: &StopAt) -> Option<f64> {
    let ratio = |t: &Picos| *t.numer() as f64 / *t.denom() as f64 / 1000.0;
    match stop {
        StopAt::Until(t) => Some(ratio(t)),
        StopAt::Cycles { count, domain } => {
            let d = program
                .domains
                .iter()
                .find(|d| domain.as_deref().is_none_or(|n| d.name == n))?;
            Some(ratio(&d.period_ps) * *count as f64)
        }
        StopAt::Finish => None,
    }
}

/// The time of the run's last instant when its limit says (`None`: until
/// `finish` or a fault).
fn horizon(program: &crate::ir::Program, stop: &StopAt) -> Result<Option<Picos>, RunError> {
    match stop {
        StopAt::Until(t) => Ok(Some(*t)),
        StopAt::Finish => Ok(None),
        StopAt::Cycles { count, domain } => {
            let d = match domain {
                None => 0,
                Some(n) => program
                    .domains
                    .iter()
                    .position(|d| &d.name == n)
                    .ok_or_else(|| RunError::Setup(format!("no clock domain named `{n}`")))?,
            };
            let d = &program.domains[d];
            let clock = chronon_runtime::Clock::new(d.period_ps, d.phase_ps)
                .map_err(|e| RunError::Setup(e.to_string()))?;
            // Edges 0..count: every instant up to edge count - 1's. An
            // edge past exact time's range is never reached: the serial
            // run stops at the time overflow first, and so does each
            // worker without a horizon.
            Ok(clock.edge_time(count.saturating_sub(1)).ok())
        }
    }
}

/// The serial run: one simulator, [`drive`], drain, recording.
fn run_serial(
    program: Arc<crate::ir::Program>,
    top: &str,
    options: &RunOptions,
    recording: &RecordOptions,
    progress: Progress<'_>,
) -> Result<RunReport, RunError> {
    let mut sim = Simulator::with_config(program, options.engine, &options.exec)
        .map_err(|e| RunError::Setup(e.to_string()))?;
    let recorder = match recording.any() {
        true => Some(Recording::attach(&mut sim, top, recording).map_err(RunError::Setup)?),
        false => None,
    };
    let printed = attach_print(&mut sim, &options.print);
    let started = Instant::now();
    let end = drive(&mut sim, &options.stop, options.interrupt, progress)?;
    let stop = match end {
        Ended::Stopped(stop) => stop,
        Ended::Interrupted | Ended::Empty => {
            let print_error = finish_print(&mut sim, &printed);
            let recorded = recorder.map(|r| r.finish_at(&mut sim, None));
            let wall = started.elapsed().as_secs_f64();
            let why = match end {
                Ended::Empty => "empty",
                _ => "interrupted",
            };
            let mut report = report(&Facts::of(&sim), top, options, why, None, wall);
            report.recording = recorded;
            report.print_error = print_error;
            return Ok(report);
        }
    };
    let drain = options.drain.map(|limit| drain_line(&sim.sim.drain(limit)));
    // A `--until` run that reached its bound ran to that time.
    let bound = match (&options.stop, &stop) {
        (StopAt::Until(t), Stop::LimitReached) => Some(t),
        _ => None,
    };
    let print_error = finish_print(&mut sim, &printed);
    let recorded = recorder.map(|r| r.finish_at(&mut sim, bound));
    let wall = started.elapsed().as_secs_f64();
    // A sink stop that the recording did not cause was the print output's.
    let why = match &stop {
        Stop::SinkStopped
            if print_error.is_some() && recorded.iter().all(|r| r.error.is_none()) =>
        {
            "print-failed"
        }
        stop => stop_name(stop),
    };
    let mut report = report(&Facts::of(&sim), top, options, why, drain, wall);
    report.recording = recorded;
    report.print_error = print_error;
    Ok(report)
}

/// Installs the print sink in front of whatever sink is there (a
/// recording's) when the design prints and `to` is not quiet; returns
/// where its write error will be kept.
fn attach_print(sim: &mut Simulator, to: &PrintTo) -> Option<print::PrintError> {
    let out = to.writer(sim.program())?;
    let error = print::PrintError::default();
    let inner = sim.sim.take_trace_sink();
    let sink = print::PrintSink::new(sim.program(), out, inner, error.clone());
    sim.sim.set_trace_sink(Box::new(sink));
    Some(error)
}

/// Removes and drops the print sink, which flushes it; its write error,
/// if any. A recording's sink it wrapped is dropped with it, as
/// `Recording::finish_at` (called next) would drop it: the recording's
/// state lives in the `Recording`, not in its sink.
fn finish_print(sim: &mut Simulator, printed: &Option<print::PrintError>) -> Option<String> {
    let error = printed.as_ref()?;
    drop(sim.sim.take_trace_sink());
    error.borrow_mut().take()
}

/// What a report is made of: a serial simulator's end, or a parallel
/// run's merged one.
struct Facts<'a> {
    program: &'a crate::ir::Program,
    edges: Vec<u64>,
    instants: u64,
    now: chronon_runtime::Timestamp,
    faults: &'a [chronon_runtime::Fault],
    state: std::borrow::Cow<'a, [u64]>,
}

impl<'a> Facts<'a> {
    fn of(sim: &'a Simulator) -> Facts<'a> {
        Facts {
            program: sim.program(),
            edges: (0..sim.program().domains.len())
                .map(|d| sim.sim.edges_done(DomainId(d as u32)))
                .collect(),
            instants: sim.sim.instants_done(),
            now: sim.sim.now(),
            faults: sim.sim.faults(),
            state: std::borrow::Cow::Owned(sim.state().to_vec()),
        }
    }
}

/// How [`drive`] ended.
enum Ended {
    /// The runtime stopped: a stop condition, `finish`, a fault...
    Stopped(Stop),
    /// The interrupt flag was set; the run stopped between two instants.
    Interrupted,
    /// The design has no unit instance (`-p N=0` on its only loop): no
    /// instant can do anything, so the run stops before the first.
    Empty,
}

fn stop_name(stop: &Stop) -> &'static str {
    match stop {
        Stop::Finished => "finished",
        Stop::LimitReached => "limit",
        Stop::Fault(_) => "fault",
        Stop::TimeOverflow(_) => "time-overflow",
        Stop::SinkStopped => "recording-failed",
    }
}

/// Edges per progress slice at most: long enough to be cheap, short enough
/// to update a progress line a few times a second.
const SLICE: u64 = 1 << 16;

/// The wall time a slice should take at most, so an interrupt is seen
/// soon: slices of slow designs shrink (to one edge) until they fit, and
/// grow back to [`SLICE`] when they are quick.
const SLICE_WALL: Duration = Duration::from_millis(20);

fn domain_named(sim: &Simulator, name: Option<&str>) -> Result<DomainId, RunError> {
    match name {
        None => Ok(DomainId(0)),
        Some(n) => sim
            .program()
            .domains
            .iter()
            .position(|d| d.name == n)
            .map(|i| DomainId(i as u32))
            .ok_or_else(|| RunError::Setup(format!("no clock domain named `{n}`"))),
    }
}

/// Runs to the stop condition in slices (limits are absolute, so slicing
/// does not change the result), reporting progress and looking at
/// `interrupt` between slices.
fn drive(
    sim: &mut Simulator,
    stop: &StopAt,
    interrupt: Option<&AtomicBool>,
    progress: Progress<'_>,
) -> Result<Ended, RunError> {
    if sim.program().domains.is_empty() {
        return Err(RunError::Setup("the design has no clock domain".into()));
    }
    if sim.program().units.is_empty() {
        return Ok(Ended::Empty);
    }
    let started = Instant::now();
    let (domain, target_edges, until) = match stop {
        StopAt::Cycles { count, domain } => {
            (domain_named(sim, domain.as_deref())?, Some(*count), None)
        }
        StopAt::Until(t) => (DomainId(0), None, Some(*t)),
        StopAt::Finish => (DomainId(0), None, None),
    };
    let interrupted = || interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed));
    let mut slice = SLICE;
    loop {
        if interrupted() {
            return Ok(Ended::Interrupted);
        }
        let slice_started = Instant::now();
        let done = sim.sim.edges_done(domain);
        let mut next = done.saturating_add(slice);
        if let Some(target) = target_edges {
            next = next.min(target);
        }
        let last_slice = match (target_edges, until) {
            (Some(target), _) => next >= target,
            (None, Some(t)) => sim
                .sim
                .edge_time(domain, next)
                .map_or(true, |edge| edge > t),
            (None, None) => false,
        };
        let limit = match (last_slice, until) {
            (true, Some(t)) => RunLimit::Time(t),
            _ => RunLimit::Edges {
                domain,
                count: next,
            },
        };
        let result = sim.sim.run(limit);
        if result != Stop::LimitReached || last_slice {
            return Ok(Ended::Stopped(result));
        }
        let took = slice_started.elapsed();
        if took > SLICE_WALL {
            slice = (slice / 2).max(1);
        } else if took < SLICE_WALL / 4 {
            slice = (slice * 2).min(SLICE);
        }
        progress(sim.sim.edges_done(domain), started.elapsed());
    }
}

fn report(
    facts: &Facts<'_>,
    top: &str,
    options: &RunOptions,
    stop: &str,
    drain: Option<String>,
    wall: f64,
) -> RunReport {
    let program = facts.program;
    let domains: Vec<DomainReport> = program
        .domains
        .iter()
        .zip(&facts.edges)
        .map(|(d, &edges)| DomainReport {
            name: d.name.clone(),
            edges,
        })
        .collect();
    let total_edges: u64 = domains.iter().map(|d| d.edges).sum();
    let faults = facts
        .faults
        .iter()
        .map(|f| {
            let location = crate::simulate::fault_sites::location(program, f);
            let mut message = f.to_string();
            // Compiler sites name it in their construct; this is for any
            // other construct a site may have.
            if let Some(at) = location.as_deref().filter(|at| !message.contains(at)) {
                message.push_str(&format!(" (at {at})"));
            }
            // The construct alone: `location` says where it is.
            let construct = location
                .as_deref()
                .and_then(|at| f.construct.strip_suffix(&format!(" at {at}")))
                .unwrap_or(&f.construct)
                .to_string();
            FaultReport {
                code: f.code(),
                unit: f.unit.clone(),
                construct,
                domain: f.domain.clone(),
                cycle: f.cycle,
                time: f.time.to_string(),
                location,
                message,
                help: crate::simulate::fault_sites::help(&f.kind).to_string(),
                source: crate::simulate::fault_sites::site_of(program, f).and_then(|s| s.source),
            }
        })
        .collect();
    RunReport {
        top: top.to_string(),
        engine: match options.engine {
            EngineKind::Interp => "interp".into(),
            EngineKind::Jit => "jit".into(),
        },
        seed: options.seed,
        stop: stop.to_string(),
        drain,
        instants: facts.instants,
        time: facts.now.to_string(),
        domains,
        counters: crate::simulate::counters_of(program, &facts.state)
            .into_iter()
            .map(|(unit, name, value)| CounterReport { unit, name, value })
            .collect(),
        registers: options.dump_state.then(|| {
            crate::simulate::registers_of(program, &facts.state)
                .into_iter()
                .map(|(unit, name, value)| RegisterReport { unit, name, value })
                .collect()
        }),
        faults,
        state_digest: format!("{:016x}", crate::simulate::digest_of(&facts.state)),
        wall_seconds: wall,
        edges_per_second: if wall > 0.0 {
            total_edges as f64 / wall
        } else {
            0.0
        },
        recording: None,
        print_error: None,
        parallel: parallel::ParallelReport::serial(0, String::new(), 0.0),
    }
}

impl RunReport {
    /// The readable summary; with `deterministic`, wall-clock figures are left
    /// out (for snapshots).
    pub fn summary(&self, deterministic: bool) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "top {} on {} (seed {})",
            self.top, self.engine, self.seed
        );
        let _ = writeln!(s, "stopped: {}", self.stop);
        if let Some(d) = &self.drain {
            let _ = writeln!(s, "drain: {d}");
        }
        let _ = writeln!(
            s,
            "instants: {}, simulated time: {}",
            self.instants, self.time
        );
        for d in &self.domains {
            let _ = writeln!(s, "  domain {}: {} edges", d.name, d.edges);
        }
        if !deterministic {
            let _ = writeln!(
                s,
                "wall time: {:.3} s, {:.0} edges/s",
                self.wall_seconds, self.edges_per_second
            );
            // With `--threads auto` this depends on the host's cores.
            let _ = writeln!(s, "{}", self.parallel.line());
        }
        if !self.counters.is_empty() {
            let _ = writeln!(s, "counters:");
            for c in &self.counters {
                let _ = writeln!(s, "  {}.{} = {}", c.unit, c.name, c.value);
            }
        }
        for f in &self.faults {
            let _ = writeln!(s, "fault: {}", f.message);
        }
        if let Some(r) = &self.recording {
            let d = &r.dropped_by_kind;
            let _ = writeln!(
                s,
                "recorded: {} (dropped {}: trace {}, fifo {}, counter {}, tick {}, signal {})",
                r.outputs.join(", "),
                r.dropped,
                d.trace,
                d.fifo,
                d.counter,
                d.tick,
                d.signal
            );
            if let Some(e) = &r.error {
                let _ = writeln!(s, "recording failed: {e}");
            }
            for w in &r.warnings {
                let _ = writeln!(s, "warning: {w}");
            }
        }
        if let Some(e) = &self.print_error {
            let _ = writeln!(s, "print failed: {e}");
        }
        let _ = writeln!(s, "state digest: {}", self.state_digest);
        s
    }
}
