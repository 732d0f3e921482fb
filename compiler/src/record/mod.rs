//! Native recording of a run: builds the recorders' schema from the lowered
//! program, creates the writers `chronc run` asks for (text logs, Perfetto,
//! VCD, counter CSV), each behind its own [`BufferedRecorder`] thread, and
//! feeds them from the runtime's trace sink.

mod filter;
mod keyed;
mod schema;
mod sink;
mod warnings;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use chronon_record::buffer::{BufferConfig, BufferedRecorder, Mode};
use chronon_record::csv::CsvWriter;
use chronon_record::perfetto::{PerfettoConfig, PerfettoWriter};
use chronon_record::text::TextWriter;
use chronon_record::vcd::{VcdConfig, VcdWriter};
use chronon_record::{DropCounts, RecordError, Recorder, Schema, Time};
use chronon_runtime::{Picos, TimeBase};
use serde::Serialize;

use crate::ir::Program;
use crate::simulate::Simulator;

pub use filter::TraceFilter;
pub use keyed::{RecordPlan, WorkerRecording};
pub use schema::{ProgramSchema, program_schema};

use sink::{Inner, RecordingSink};

/// Writers, each with the name reports give it.
pub type Writers = Vec<(String, Box<dyn Recorder>)>;

/// What to record and where (the `chronc run` recording flags).
#[derive(Clone, Debug, Default)]
pub struct RecordOptions {
    /// `--trace DIR`: per-domain text logs and a manifest.
    pub trace_dir: Option<PathBuf>,
    /// `--perfetto FILE`.
    pub perfetto: Option<PathBuf>,
    /// `--perfetto-compress`: zlib packet batches.
    pub perfetto_compress: bool,
    /// `--vcd FILE`.
    pub vcd: Option<PathBuf>,
    /// `--vcd-signals PATTERN`: globs over `<unit>.<register>`; empty: all.
    pub vcd_signals: Vec<String>,
    /// `--counters FILE`: counter samples as CSV.
    pub counters: Option<PathBuf>,
    /// `--counter-interval N`: sample at every `N`th edge (cycle 0, N, 2N...).
    pub counter_interval: u64,
    /// `--trace-filter`.
    pub filter: TraceFilter,
    /// `--trace-ticks`: a tick activity slice per unit edge (Perfetto).
    pub ticks: bool,
    /// `--lossy`: drop (and count) records instead of slowing the run.
    pub lossy: bool,
}

impl RecordOptions {
    /// How many writers the options ask for (each runs on its own
    /// thread).
    pub fn writers(&self) -> usize {
        [
            self.trace_dir.is_some(),
            self.perfetto.is_some(),
            self.vcd.is_some(),
            self.counters.is_some(),
        ]
        .into_iter()
        .filter(|&w| w)
        .count()
    }

    /// Whether any output is asked for.
    pub fn any(&self) -> bool {
        self.writers() > 0
    }
}

/// What a finished recording reports.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RecordingSummary {
    /// The outputs written.
    pub outputs: Vec<String>,
    /// Records dropped by lossy buffers, summed over the outputs.
    pub dropped: u64,
    /// Dropped records by kind (summed over the outputs).
    pub dropped_by_kind: DropCountsReport,
    /// The first writer error; the run stopped because of it.
    pub error: Option<String>,
    /// Options that record nothing for this design (see
    /// `record::warnings`), one sentence each.
    pub warnings: Vec<String>,
}

/// [`DropCounts`] in the report.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, Default)]
pub struct DropCountsReport {
    /// Trace events.
    pub trace: u64,
    /// FIFO events.
    pub fifo: u64,
    /// Counter samples.
    pub counter: u64,
    /// Unit ticks.
    pub tick: u64,
    /// Signal changes.
    pub signal: u64,
}

/// A recording attached to a simulator; call [`Recording::finish`] after
/// the run.
pub struct Recording {
    inner: Rc<RefCell<Inner>>,
    outputs: Vec<String>,
    warnings: Vec<String>,
}

impl Recording {
    /// Creates the writers `options` asks for and installs the sink.
    pub fn attach(
        sim: &mut Simulator,
        design: &str,
        options: &RecordOptions,
    ) -> Result<Recording, String> {
        with_standard_writers(options, |make| {
            Self::attach_with(sim, design, options, make)
        })
    }

    /// Like [`Recording::attach`] with writers made by `make` from the
    /// schema (each named for reports), e.g. to inject a failing output.
    pub fn attach_with(
        sim: &mut Simulator,
        design: &str,
        options: &RecordOptions,
        make: impl FnOnce(&Schema) -> Result<Writers, RecordError>,
    ) -> Result<Recording, String> {
        let tpp = sim.sim.time_base().ticks_per_ps();
        let Spawned {
            tpp,
            schema,
            outputs,
            warnings,
            recorders,
        } = Spawned::new(sim.program(), design, options, tpp, make)?;
        let inner = Rc::new(RefCell::new(Inner::new(
            sim.program(),
            &schema,
            options,
            recorders,
            sim.state_view(),
            (tpp, None),
        )));
        inner.borrow_mut().initial_signals();
        sim.sim
            .set_trace_sink(Box::new(RecordingSink::new(inner.clone())));
        Ok(Recording {
            inner,
            outputs,
            warnings,
        })
    }

    /// Ends the recording: flushes every writer, reports drops and the
    /// first error. Removes the sink from `sim`. The run stopped at its last
    /// instant (a `finish`, a fault, an edge count); see
    /// [`Recording::finish_at`] for a run bounded by a time.
    pub fn finish(self, sim: &mut Simulator) -> RecordingSummary {
        self.finish_at(sim, None)
    }

    /// [`Recording::finish`] for a run that went on to `bound` (a `--until`
    /// time it reached; `None` otherwise): the writers learn that the run
    /// stopped at the later of its last instant and `bound`, so Perfetto's
    /// tick slices end there and not at edges the run never reached, even
    /// when the trace filter dropped the last records.
    pub fn finish_at(self, sim: &mut Simulator, bound: Option<&Picos>) -> RecordingSummary {
        drop(sim.sim.take_trace_sink());
        let stop = stop_time(sim.sim.time_base(), sim.sim.now().ticks, bound);
        let mut inner = self.inner.borrow_mut();
        let error = inner.error.take();
        summarize(
            &mut inner.recorders,
            stop,
            error,
            self.outputs,
            self.warnings,
        )
    }
}

/// When a run that did its last instant at `last` (ticks of `base`) and
/// went on to `bound` (a `--until` time it reached) stopped: the later of
/// the two (see [`Recording::finish_at`]).
pub fn stop_time(base: TimeBase, last: u128, bound: Option<&Picos>) -> Option<Time> {
    let bound = bound.and_then(|t| base.floor_ticks(t).ok().flatten());
    let ticks = bound.map_or(last, |b| b.max(last));
    // The base fits a u64: the recording checked it when it started.
    u64::try_from(base.ticks_per_ps())
        .ok()
        .and_then(|tpp| Time::new(ticks, tpp))
}

/// Tells every writer where the run stopped, finishes it and sums up its
/// drops; `error` is the first error already seen.
fn summarize(
    recorders: &mut [BufferedRecorder],
    stop: Option<Time>,
    mut error: Option<RecordError>,
    outputs: Vec<String>,
    warnings: Vec<String>,
) -> RecordingSummary {
    let mut dropped = DropCounts::default();
    for r in recorders {
        if let Some(at) = stop {
            // Only kept by the buffer, for its writer: cannot fail.
            let _ = r.stop_at(at);
        }
        let d = r.dropped();
        dropped.trace += d.trace;
        dropped.fifo += d.fifo;
        dropped.counter += d.counter;
        dropped.tick += d.tick;
        dropped.signal += d.signal;
        if let Err(e) = r.finish(&DropCounts::default())
            && error.is_none()
        {
            error = Some(e);
        }
    }
    RecordingSummary {
        outputs,
        dropped: dropped.total(),
        dropped_by_kind: DropCountsReport {
            trace: dropped.trace,
            fifo: dropped.fifo,
            counter: dropped.counter,
            tick: dropped.tick,
            signal: dropped.signal,
        },
        error: error.map(|e| e.to_string()),
        warnings,
    }
}

/// The writers of a recording, each on its own thread, and what they
/// were made from.
struct Spawned {
    tpp: u64,
    schema: ProgramSchema,
    outputs: Vec<String>,
    warnings: Vec<String>,
    recorders: Vec<BufferedRecorder>,
}

impl Spawned {
    /// The writers `make` makes from `program`'s schema (times in ticks of
    /// `tpp` per ps), each behind a buffer of `options`' mode.
    fn new(
        program: &Program,
        design: &str,
        options: &RecordOptions,
        tpp: u128,
        make: impl FnOnce(&Schema) -> Result<Writers, RecordError>,
    ) -> Result<Spawned, String> {
        let tpp = u64::try_from(tpp)
            .map_err(|_| "the clocks' common time base is too fine to record".to_string())?;
        let schema = program_schema(program, design, tpp)?;
        let warnings = warnings::warnings(&schema.schema, options);
        let writers = make(&schema.schema).map_err(|e| e.to_string())?;
        let config = BufferConfig {
            mode: if options.lossy {
                Mode::Lossy
            } else {
                Mode::Lossless
            },
            ..BufferConfig::default()
        };
        let outputs = writers.iter().map(|(n, _)| n.clone()).collect();
        let recorders = writers
            .into_iter()
            .map(|(_, w)| BufferedRecorder::spawn(w, config))
            .collect();
        Ok(Spawned {
            tpp,
            schema,
            outputs,
            warnings,
            recorders,
        })
    }
}

/// A parallel run's recording: the writers, which the main thread feeds
/// with its merge of the workers' keyed records
/// (`crate::parallel::records`), and the plan each worker builds its own
/// sink from ([`WorkerRecording::attach`]).
pub struct ParallelRecording {
    /// The writers, in the plan's order.
    pub recorders: Vec<BufferedRecorder>,
    /// What the workers record.
    pub plan: RecordPlan,
    /// What the summary reports besides the writers' ends.
    pub end: RecordingEnd,
}

/// The outputs' names and the warnings, for the summary of a recording
/// whose writers live elsewhere (a parallel run's merge).
pub struct RecordingEnd {
    outputs: Vec<String>,
    warnings: Vec<String>,
}

impl RecordingEnd {
    /// Ends the recording as [`Recording::finish_at`] does: the run
    /// stopped at `stop`; `error` is the first writer error already seen.
    pub fn finish(
        self,
        recorders: &mut [BufferedRecorder],
        stop: Option<Time>,
        error: Option<RecordError>,
    ) -> RecordingSummary {
        summarize(recorders, stop, error, self.outputs, self.warnings)
    }
}

impl ParallelRecording {
    /// Creates the writers `options` asks for, for a run of `program`
    /// whose clocks share `base`.
    pub fn create(
        program: &Program,
        base: TimeBase,
        design: &str,
        options: &RecordOptions,
    ) -> Result<ParallelRecording, String> {
        let spawned = with_standard_writers(options, |make| {
            Spawned::new(program, design, options, base.ticks_per_ps(), make)
        })?;
        Ok(ParallelRecording {
            plan: RecordPlan {
                schema: spawned.schema,
                options: options.clone(),
                ticks_per_ps: spawned.tpp,
                interests: spawned
                    .recorders
                    .iter()
                    .map(|r| r.interest().clone())
                    .collect(),
            },
            recorders: spawned.recorders,
            end: RecordingEnd {
                outputs: spawned.outputs,
                warnings: spawned.warnings,
            },
        })
    }
}

/// Creates the missing folders above the output file `path`, as the text
/// writer does for its directory: every output follows that one rule.
fn folder_for(path: &Path) -> Result<(), RecordError> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => std::fs::create_dir_all(parent).map_err(|source| RecordError::Io {
            path: path.to_owned(),
            source,
        }),
        None => Ok(()),
    }
}

/// What `start` returns when given the maker of the writers `options`
/// names. Every output that cannot be created is reported, not just the
/// first: the first is the error, the others follow it, one a line.
fn with_standard_writers<T>(
    options: &RecordOptions,
    start: impl FnOnce(&mut dyn FnMut(&Schema) -> Result<Writers, RecordError>) -> Result<T, String>,
) -> Result<T, String> {
    let mut others = Vec::new();
    start(&mut |schema| standard_writers(schema, options, &mut others)).map_err(|first| {
        others
            .iter()
            .fold(first, |all, e| format!("{all}\nerror: {e}"))
    })
}

/// The writers `options` names, in a fixed order: text, Perfetto, VCD, CSV.
/// Where some cannot be created, the first such error, with the others'
/// pushed on `others`.
fn standard_writers(
    schema: &Schema,
    options: &RecordOptions,
    others: &mut Vec<RecordError>,
) -> Result<Writers, RecordError> {
    let mut writers: Writers = Vec::new();
    let mut first = None;
    let mut add = |path: &Path, writer: Result<Box<dyn Recorder>, RecordError>| match writer {
        Ok(w) => writers.push((path.display().to_string(), w)),
        Err(e) if first.is_none() => first = Some(e),
        Err(e) => others.push(e),
    };
    if let Some(dir) = &options.trace_dir {
        add(
            dir,
            TextWriter::create(dir, schema).map(|w| Box::new(w) as _),
        );
    }
    if let Some(path) = &options.perfetto {
        let config = PerfettoConfig {
            compress: options.perfetto_compress,
            tick_slices: options.ticks,
        };
        add(
            path,
            folder_for(path)
                .and_then(|()| PerfettoWriter::create(path, schema, config))
                .map(|w| Box::new(w) as _),
        );
    }
    if let Some(path) = &options.vcd {
        let config = VcdConfig {
            patterns: options.vcd_signals.clone(),
        };
        add(
            path,
            folder_for(path)
                .and_then(|()| VcdWriter::create(path, schema, &config))
                .map(|w| Box::new(w) as _),
        );
    }
    if let Some(path) = &options.counters {
        add(
            path,
            folder_for(path)
                .and_then(|()| CsvWriter::create(path, schema))
                .map(|w| Box::new(w) as _),
        );
    }
    match first {
        Some(e) => Err(e),
        None => Ok(writers),
    }
}
