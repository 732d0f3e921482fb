//! The runtime trace sink that turns runtime events into recorder records,
//! applies the filter, samples counters and register changes at commits,
//! and stops the run on the first writer error.

use std::cell::RefCell;
use std::rc::Rc;

use chronon_record::Interest;
use chronon_record::buffer::BufferedRecorder;
use chronon_record::vcd::glob_match;
use chronon_record::{
    CounterRecord, FifoEventKind, FifoInterest, FifoRecord, RecordError, Recorder, SignalRecord,
    TickRecord, Time, TraceRecord,
};
use chronon_runtime::{FifoEvent, FifoKinds, Observation, Timestamp, TraceSink};

use super::RecordOptions;
use super::filter::TraceFilter;
use super::schema::ProgramSchema;
use crate::ir::Program;
use crate::simulate::StateView;

/// The runtime's FIFO event kinds as the recorders name them.
fn kind(k: chronon_runtime::FifoEventKind) -> FifoEventKind {
    use chronon_runtime::FifoEventKind as R;
    match k {
        R::Write => FifoEventKind::Write,
        R::Visible => FifoEventKind::Visible,
        R::Read => FifoEventKind::Read,
        R::Output => FifoEventKind::Output,
        R::Consume => FifoEventKind::Consume,
        R::Full => FifoEventKind::Full,
        R::NotFull => FifoEventKind::NotFull,
        R::Empty => FifoEventKind::Empty,
        R::NotEmpty => FifoEventKind::NotEmpty,
    }
}

/// What the writers take of the FIFOs, from their [`FifoInterest`]s: the
/// FIFO events (text, Perfetto), or the committed occupancy at the end of
/// each instant (VCD's `<fifo>.occupancy`), which the runtime computes
/// itself (`Observation::occupancy_watch`) so that no FIFO event is
/// produced for it.
#[derive(Debug, PartialEq, Eq)]
struct FifoTakers {
    /// Some writer takes every FIFO event.
    events: bool,
    /// Per FIFO: whether some occupancy writer dumps it (a FIFO missing
    /// from a writer's list is dumped: its buffer passes it unfiltered).
    occupancy: Vec<bool>,
}

impl FifoTakers {
    /// The union of `interests` over `fifos` FIFOs.
    fn of<'a>(interests: impl Iterator<Item = &'a FifoInterest>, fifos: usize) -> FifoTakers {
        let mut takers = FifoTakers {
            events: false,
            occupancy: vec![false; fifos],
        };
        for interest in interests {
            match interest {
                FifoInterest::None => {}
                FifoInterest::All => takers.events = true,
                FifoInterest::Occupancy(list) => {
                    for (f, o) in takers.occupancy.iter_mut().enumerate() {
                        *o |= list.get(f).copied().unwrap_or(true);
                    }
                }
            }
        }
        takers
    }
}

/// Where the sink's records go: a writer's [`BufferedRecorder`] in a
/// serial run, a worker's keyed capture in a parallel one
/// (`super::keyed`). Generic rather than a trait object, so the serial
/// sink's calls stay inlined.
pub(super) trait Out {
    /// What the writer behind it takes.
    fn interest(&self) -> &Interest;
    /// Whether the writer has failed (one atomic load at most).
    fn writer_failed(&self) -> bool;
    /// See [`Recorder::trace`].
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError>;
    /// See [`Recorder::fifo`].
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError>;
    /// See [`Recorder::counter`].
    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError>;
    /// See [`Recorder::tick`].
    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError>;
    /// See [`Recorder::signal`].
    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError>;
}

impl Out for BufferedRecorder {
    #[inline(always)]
    fn interest(&self) -> &Interest {
        BufferedRecorder::interest(self)
    }
    #[inline(always)]
    fn writer_failed(&self) -> bool {
        BufferedRecorder::writer_failed(self)
    }
    #[inline(always)]
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        Recorder::trace(self, r)
    }
    #[inline(always)]
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        Recorder::fifo(self, r)
    }
    #[inline(always)]
    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        Recorder::counter(self, r)
    }
    #[inline(always)]
    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        Recorder::tick(self, r)
    }
    #[inline(always)]
    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        Recorder::signal(self, r)
    }
}

/// The recording's state, shared by the sink and the [`super::Recording`].
pub(super) struct Inner<R: Out = BufferedRecorder> {
    pub(super) recorders: Vec<R>,
    pub(super) error: Option<RecordError>,
    /// Whether any writer takes trace events (each writer's buffer checks
    /// again; this spares the conversion when none does).
    trace_wanted: bool,
    fifo_takers: FifoTakers,
    filter: TraceFilter,
    ticks_per_ps: u64,
    state: StateView,
    unit_kept: Vec<bool>,
    event_kept: Vec<bool>,
    fifo_kind_kept: [bool; 9],
    /// FIFO events: kept when the writer or the reader unit is kept.
    fifo_kept: Vec<bool>,
    /// Per FIFO: the kinds (bit `kind as u16`) whose events are kept, 0
    /// for a FIFO not kept: one load and one bit test per event instead of
    /// two bounds-checked lookups.
    fifo_kinds: Vec<u16>,
    /// Whether the filter has a time window (else no time is compared).
    windowed: bool,
    /// Which recorders take which records.
    takers: Takers,
    /// Per domain: `(schema counter, slot)` of kept counters.
    counters: Vec<Vec<(u32, u32)>>,
    interval: u64,
    /// Per domain: kept units, for tick slices (empty when ticks are off).
    tick_units: Vec<Vec<u32>>,
    /// Per domain: the dumped registers as runs of consecutive slots that
    /// are consecutive schema signals, so a commit compares whole runs of
    /// words with the shadow instead of one register at a time.
    signals: Vec<Vec<SignalRun>>,
    /// Last dumped value per state slot (only dumped slots are used).
    shadow: Vec<u64>,
    /// The initial values' changes (see [`Inner::initial_signals`]).
    changes: Vec<(u32, u64)>,
    /// Per domain: [`SIGNALS_ONLY`] with dumped registers only and one
    /// signal writer, else [`EVERY_EDGE`] with tick slices or dumped
    /// registers, else [`COUNTERS`] with counters, else 0 (see
    /// [`Inner::commit_due`]).
    edge_work: Vec<u8>,
}

/// Indices into [`Inner::recorders`] of the recorders that take each kind
/// of record, known when the recording starts: a record goes straight to
/// its takers instead of asking every recorder's interest per record.
#[derive(Debug, Default, PartialEq, Eq)]
struct Takers {
    trace: Vec<usize>,
    /// Recorders that take every FIFO event (text, Perfetto).
    fifo_events: Vec<usize>,
    /// Recorders that take a FIFO's occupancy only (VCD).
    occupancy: Vec<usize>,
    counter: Vec<usize>,
    tick: Vec<usize>,
    signal: Vec<usize>,
}

impl Takers {
    fn of<R: Out>(recorders: &[R]) -> Takers {
        let mut t = Takers::default();
        for (i, r) in recorders.iter().enumerate() {
            let interest = r.interest();
            let lists = [
                (interest.trace, &mut t.trace),
                (
                    matches!(interest.fifo, FifoInterest::All),
                    &mut t.fifo_events,
                ),
                (
                    matches!(interest.fifo, FifoInterest::Occupancy(_)),
                    &mut t.occupancy,
                ),
                (interest.counter, &mut t.counter),
                (interest.tick, &mut t.tick),
                (interest.signal, &mut t.signal),
            ];
            for (takes, list) in lists {
                if takes {
                    list.push(i);
                }
            }
        }
        t
    }
}

/// Hands a record to the recorders `takers` names; the first error stops
/// recording (later records are not queued).
#[inline(always)]
fn feed<R: Out>(
    recorders: &mut [R],
    takers: &[usize],
    error: &mut Option<RecordError>,
    mut f: impl FnMut(&mut R) -> Result<(), RecordError>,
) {
    if error.is_some() {
        return;
    }
    for &i in takers {
        if let Some(r) = recorders.get_mut(i)
            && let Err(e) = f(r)
        {
            *error = Some(e);
            return;
        }
    }
}

/// [`Inner::edge_work`]: the domain has work at every edge.
const EVERY_EDGE: u8 = 2;
/// [`Inner::edge_work`]: the domain has counters only (sampled every `interval` edges).
const COUNTERS: u8 = 1;
/// [`Inner::edge_work`]: the domain has dumped registers, no counters and
/// no tick slices, and one writer takes signals (a VCD): its edges go
/// straight to [`dump_changes`] ([`Inner::dump_only`]).
const SIGNALS_ONLY: u8 = 3;

/// Registers `slot..slot + len`, schema signals `signal..signal + len`.
#[derive(Clone, Copy, Debug)]
struct SignalRun {
    slot: u32,
    signal: u32,
    len: u32,
}

/// Groups `(schema signal, slot)` pairs (in schema order) into runs.
fn signal_runs(pairs: &[(u32, u32)]) -> Vec<SignalRun> {
    let mut runs: Vec<SignalRun> = Vec::new();
    for &(signal, slot) in pairs {
        match runs.last_mut() {
            Some(r) if r.slot + r.len == slot && r.signal + r.len == signal => r.len += 1,
            _ => runs.push(SignalRun {
                slot,
                signal,
                len: 1,
            }),
        }
    }
    runs
}

impl<R: Out> Inner<R> {
    /// The sink's state for `recorders`; `active`, when given, are the
    /// units whose records it makes (a parallel worker's), all when not.
    pub(super) fn new(
        program: &Program,
        schema: &ProgramSchema,
        options: &RecordOptions,
        recorders: Vec<R>,
        state: StateView,
        (ticks_per_ps, active): (u64, Option<&[bool]>),
    ) -> Inner<R> {
        let filter = options.filter.clone();
        let domains = program.domains.len();
        let unit_kept: Vec<bool> = program
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| {
                filter.keeps_unit(&u.path) && active.is_none_or(|a| a.get(i) == Some(&true))
            })
            .collect();
        let event_kept = program
            .traces
            .iter()
            // A `print`'s records belong to the print output alone.
            .map(|t| t.print.is_none() && filter.keeps_event(&t.name))
            .collect();
        let fifo_kind_kept = FifoEventKind::ALL.map(|k| filter.keeps_event(k.name()));
        let fifo_kept: Vec<bool> = program
            .fifos
            .iter()
            .map(|f| {
                let unit = |p: u32| program.ports[p as usize].unit as usize;
                unit_kept[unit(f.from)] || unit_kept[unit(f.to)]
            })
            .collect();
        let kept_kinds = FifoEventKind::ALL
            .iter()
            .filter(|&&k| fifo_kind_kept[k as usize])
            .fold(0u16, |bits, &k| bits | 1 << k as u16);
        let fifo_kinds = fifo_kept
            .iter()
            .map(|&kept| if kept { kept_kinds } else { 0 })
            .collect();
        let windowed = filter.from.is_some() || filter.to.is_some();
        let mut counters = vec![Vec::new(); domains];
        if options.counters.is_some() || options.trace_dir.is_some() || options.perfetto.is_some() {
            for (i, c) in schema.counters.iter().enumerate() {
                if unit_kept[c.unit as usize] {
                    let d = program.units[c.unit as usize].domain as usize;
                    counters[d].push((i as u32, c.slot));
                }
            }
        }
        let mut tick_units = vec![Vec::new(); domains];
        if options.ticks {
            for (u, unit) in program.units.iter().enumerate() {
                if unit_kept[u] {
                    tick_units[unit.domain as usize].push(u as u32);
                }
            }
        }
        let mut signals: Vec<Vec<(u32, u32)>> = vec![Vec::new(); domains];
        if options.vcd.is_some() {
            for (i, s) in schema.signals.iter().enumerate() {
                let info = &schema.schema.signals[i];
                let unit = &program.units[s.unit as usize];
                let full = format!("{}.{}", unit.path, info.name);
                let selected = options.vcd_signals.is_empty()
                    || options.vcd_signals.iter().any(|p| glob_match(p, &full));
                if selected && unit_kept[s.unit as usize] {
                    signals[unit.domain as usize].push((i as u32, s.slot));
                }
            }
        }
        let slots = state.read(<[u64]>::len);
        let trace_wanted = recorders.iter().any(|r| r.interest().trace);
        let takers = Takers::of(&recorders);
        let fifo_takers = FifoTakers::of(
            recorders.iter().map(|r| &r.interest().fifo),
            program.fifos.len(),
        );
        let one_signal_taker = takers.signal.len() == 1;
        let edge_work = (0..domains)
            .map(|d| {
                if one_signal_taker
                    && tick_units[d].is_empty()
                    && counters[d].is_empty()
                    && !signals[d].is_empty()
                {
                    SIGNALS_ONLY
                } else if !tick_units[d].is_empty() || !signals[d].is_empty() {
                    EVERY_EDGE
                } else if !counters[d].is_empty() {
                    COUNTERS
                } else {
                    0
                }
            })
            .collect();
        Inner {
            edge_work,
            recorders,
            error: None,
            trace_wanted,
            fifo_takers,
            filter,
            ticks_per_ps,
            state,
            unit_kept,
            event_kept,
            fifo_kind_kept,
            fifo_kept,
            fifo_kinds,
            windowed,
            takers,
            counters,
            interval: options.counter_interval.max(1),
            tick_units,
            signals: signals.iter().map(|p| signal_runs(p)).collect(),
            shadow: vec![0; slots],
            changes: Vec::new(),
        }
    }

    #[inline]
    fn time(&self, t: Timestamp) -> Time {
        // The tick base fits a u64 (checked when the recording was attached).
        Time::new(t.ticks, self.ticks_per_ps).unwrap_or(Time::ZERO)
    }

    /// `t` as a [`Time`] when the filter's time window keeps it (no
    /// comparison without a window).
    #[inline(always)]
    fn window(&self, t: Timestamp) -> Option<Time> {
        let time = self.time(t);
        (!self.windowed || self.filter.keeps_time(time)).then_some(time)
    }

    /// `e`'s kind, if the filter keeps that kind for its FIFO.
    #[inline(always)]
    fn kept_fifo_kind(&self, e: &FifoEvent) -> Option<FifoEventKind> {
        let kind = kind(e.kind);
        let kinds = self.fifo_kinds.get(e.fifo as usize).copied().unwrap_or(0);
        (kinds & 1 << kind as u16 != 0).then_some(kind)
    }

    /// Hands FIFO event `e` (of kept `kind`, at `time`) to the writers
    /// that take FIFO events.
    #[inline(always)]
    fn feed_fifo(&mut self, e: &FifoEvent, kind: FifoEventKind, time: Time) {
        let record = FifoRecord {
            fifo: e.fifo,
            kind,
            cycle: e.cycle,
            time,
            unit: e.unit,
            txn: e.txn,
            occupancy: e.occupancy,
        };
        self.feed_takers(|t| &t.fifo_events, |w| w.fifo(&record));
    }

    /// Hands a record to the recorders `pick` names (see [`feed`]).
    #[inline(always)]
    fn feed_takers(
        &mut self,
        pick: impl FnOnce(&Takers) -> &[usize],
        f: impl FnMut(&mut R) -> Result<(), RecordError>,
    ) {
        let Inner {
            recorders,
            takers,
            error,
            ..
        } = self;
        feed(recorders, pick(takers), error, f);
    }

    /// Dumps every selected register's initial value at time 0.
    pub(super) fn initial_signals(&mut self) {
        let Inner {
            state,
            signals,
            shadow,
            changes,
            ..
        } = self;
        changes.clear();
        state.read(|state| {
            for run in signals.iter().flatten() {
                let slots = run.slot as usize..(run.slot + run.len) as usize;
                shadow[slots.clone()].copy_from_slice(&state[slots.clone()]);
                changes.extend((run.signal..).zip(state[slots].iter().copied()));
            }
        });
        self.emit_changes(Time::ZERO);
    }

    /// Hands the collected signal changes to the writers.
    fn emit_changes(&mut self, time: Time) {
        let Inner {
            changes,
            recorders,
            takers,
            error,
            ..
        } = self;
        for &(signal, value) in changes.iter() {
            feed(recorders, &takers.signal, error, |r| {
                r.signal(&SignalRecord {
                    signal,
                    time,
                    value,
                })
            });
        }
    }

    /// What the runtime must produce for the writers (see
    /// [`RecordingSink::observation`](TraceSink::observation)).
    fn observation(&self, fifos: usize) -> Observation {
        let kept_kinds = chronon_runtime::FifoEventKind::ALL
            .iter()
            .filter(|&&k| self.fifo_kind_kept[kind(k) as usize])
            .fold(FifoKinds::NONE, |set, &k| set.with(k));
        let kept = |f: usize| self.fifo_kept.get(f).copied().unwrap_or(false);
        let fifo = (0..fifos)
            .map(|f| {
                if self.fifo_takers.events && kept(f) {
                    kept_kinds
                } else {
                    FifoKinds::NONE
                }
            })
            .collect();
        // Dumped occupancy is a signal, not an event: the event kinds the
        // filter keeps do not apply to it, the units it keeps do.
        let occupancy_watch = (0..fifos)
            .map(|f| kept(f) && self.fifo_takers.occupancy.get(f).copied().unwrap_or(false))
            .collect();
        let commits = (0..self.counters.len()).any(|d| {
            !self.counters[d].is_empty()
                || !self.tick_units[d].is_empty()
                || !self.signals[d].is_empty()
        });
        Observation {
            traces: self.trace_wanted,
            fifo,
            commits,
            occupancy_watch,
        }
    }

    /// Whether [`Inner::committed`] has anything to do at this edge of
    /// `domain`: counters due, tick slices or dumped registers (one
    /// bounds-checked load; three measured 20 instructions per edge).
    #[inline]
    fn commit_due(&self, domain: u32, cycle: u64) -> bool {
        match self.edge_work.get(domain as usize) {
            Some(&EVERY_EDGE | &SIGNALS_ONLY) => true,
            Some(&COUNTERS) => self.interval == 1 || cycle.is_multiple_of(self.interval),
            _ => false,
        }
    }

    /// Whether counters of domain `d` are sampled at its `cycle`.
    #[inline]
    fn counters_due(&self, d: usize, cycle: u64) -> bool {
        // No division per domain edge for the common interval of 1.
        !self.counters[d].is_empty() && (self.interval == 1 || cycle.is_multiple_of(self.interval))
    }

    /// [`Inner::committed`] for a [`SIGNALS_ONLY`] domain: its changed
    /// registers to the one signal writer, with none of the counter, tick
    /// and taker look-ups (a VCD run's commit call: 223 -> 185
    /// instructions per domain edge, `dump_changes` inlined included).
    #[inline(always)]
    fn dump_only(&mut self, domain: u32, time: Timestamp) {
        if let Some(time) = self.window(time) {
            self.dump_signals(domain as usize, time);
        }
    }

    /// Hands the changed registers of `d` to the writers that take
    /// signals, and updates the shadow.
    #[inline(always)]
    fn dump_signals(&mut self, d: usize, time: Time) {
        // One borrow of the state per domain edge; a change goes to the
        // writers as it is found (no list of changes in between).
        let Inner {
            state,
            signals,
            shadow,
            recorders,
            takers,
            error,
            ..
        } = self;
        let Some(runs) = signals.get(d) else {
            return;
        };
        if error.is_some() {
            return;
        }
        if let [only] = takers.signal[..]
            && let Some(r) = recorders.get_mut(only)
        {
            // The usual case, one VCD: a plain loop with the writer at
            // hand (the general one below keeps a dozen references live
            // and spilled them per edge).
            if let Err(e) = state.read(|state| dump_changes(state, runs, shadow, r, time)) {
                *error = Some(e);
            }
            return;
        }
        dump_to_every(state, runs, shadow, recorders, takers, error, time);
    }

    fn committed(&mut self, domain: u32, cycle: u64, time: Time) {
        let d = domain as usize;
        if self.counters_due(d, cycle) {
            let Inner {
                state,
                counters,
                recorders,
                takers,
                error,
                ..
            } = self;
            for &(counter, slot) in &counters[d] {
                let value = state.read(|s| s[slot as usize]);
                feed(recorders, &takers.counter, error, |r| {
                    r.counter(&CounterRecord {
                        counter,
                        cycle,
                        time,
                        value,
                    })
                });
            }
        }
        let Inner {
            tick_units,
            recorders,
            takers,
            error,
            ..
        } = self;
        for &unit in &tick_units[d] {
            feed(recorders, &takers.tick, error, |r| {
                r.tick(&TickRecord { unit, cycle, time })
            });
        }
        if self.signals[d].is_empty() {
            return;
        }
        self.dump_signals(d, time);
    }
}

/// The general case of [`Inner::dump_signals`]: the changed registers of
/// `runs` to every writer that takes signals (out of line, so that the
/// one-writer path inlined into the commit call stays small).
#[inline(never)]
fn dump_to_every<R: Out>(
    state: &StateView,
    runs: &[SignalRun],
    shadow: &mut [u64],
    recorders: &mut [R],
    takers: &Takers,
    error: &mut Option<RecordError>,
    time: Time,
) {
    state.read(|state| {
        for run in runs {
            let slots = run.slot as usize..(run.slot + run.len) as usize;
            let (now, last) = (&state[slots.clone()], &mut shadow[slots]);
            // A word loop, not `now != last`: runs are a few words, and
            // the slice comparison is a `memcmp` call per run.
            for (k, (&value, l)) in now.iter().zip(last.iter_mut()).enumerate() {
                if value != *l {
                    *l = value;
                    let signal = run.signal + k as u32;
                    feed(recorders, &takers.signal, error, |r| {
                        r.signal(&SignalRecord {
                            signal,
                            time,
                            value,
                        })
                    });
                }
            }
        }
    });
}

/// Hands `recorder` the dumped registers of `runs` that differ from
/// `shadow`, and updates `shadow`.
#[inline(always)]
fn dump_changes<R: Out>(
    state: &[u64],
    runs: &[SignalRun],
    shadow: &mut [u64],
    recorder: &mut R,
    time: Time,
) -> Result<(), RecordError> {
    for run in runs {
        let slots = run.slot as usize..(run.slot + run.len) as usize;
        let (Some(now), Some(last)) = (state.get(slots.clone()), shadow.get_mut(slots)) else {
            continue;
        };
        // A word loop, not `now != last`: runs are a few words, and the
        // slice comparison is a `memcmp` call per run.
        for (k, (&value, l)) in now.iter().zip(last.iter_mut()).enumerate() {
            if value != *l {
                *l = value;
                recorder.signal(&SignalRecord {
                    signal: run.signal + k as u32,
                    time,
                    value,
                })?;
            }
        }
    }
    Ok(())
}

/// Instants between two looks at the writers' failure flags.
const STOP_POLL: u32 = 64;

/// The sink installed in the runtime; shares [`Inner`] with the handle.
pub(super) struct RecordingSink<R: Out = BufferedRecorder> {
    inner: Rc<RefCell<Inner<R>>>,
}

impl<R: Out> RecordingSink<R> {
    /// The sink over `inner`.
    pub(super) fn new(inner: Rc<RefCell<Inner<R>>>) -> RecordingSink<R> {
        RecordingSink { inner }
    }
}

impl<R: Out> TraceSink for RecordingSink<R> {
    fn record(&mut self, r: &chronon_runtime::TraceRecord<'_>) {
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        if !inner.trace_wanted
            || !inner.unit_kept[r.unit as usize]
            || !inner.event_kept[r.event as usize]
        {
            return;
        }
        let Some(time) = inner.window(r.time) else {
            return;
        };
        let record = TraceRecord {
            domain: r.domain,
            cycle: r.cycle,
            time,
            unit: r.unit,
            event: r.event,
            args: r.args,
        };
        inner.feed_takers(|t| &t.trace, |w| w.trace(&record));
    }

    fn observes_commits(&self) -> bool {
        true
    }

    /// Only what some writer uses: trace records if a writer takes them;
    /// per FIFO, the kinds the filter keeps when some writer takes FIFO
    /// events, and the committed occupancy of the FIFOs an occupancy writer
    /// dumps (never their events: those show values within an instant
    /// that depend on the domains' order); commit calls if some domain has
    /// counters, tick slices or dumped registers.
    fn observation(&self, fifos: usize) -> Observation {
        self.inner.borrow().observation(fifos)
    }

    fn fifo(&mut self, e: &FifoEvent) {
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        let Some(kind) = inner.kept_fifo_kind(e) else {
            return;
        };
        let Some(time) = inner.window(e.time) else {
            return;
        };
        inner.feed_fifo(e, kind, time);
    }

    /// One borrow and one time conversion per domain and instant for its
    /// commit events (Visible, Output, Full and Empty changes: about half
    /// of a text run's FIFO events), instead of one per event.
    fn commit_events(&mut self, domain: u32, time: Timestamp, events: &[FifoEvent]) {
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        let Some(time) = inner.window(time) else {
            return;
        };
        for e in events.iter().filter(|e| e.domain == domain) {
            if let Some(kind) = inner.kept_fifo_kind(e) {
                inner.feed_fifo(e, kind, time);
            }
        }
    }

    /// A dumped FIFO's committed occupancy at the end of an instant, for
    /// the occupancy writers only: they see the occupancy as a signal,
    /// never an event (kind, cycle, unit and transaction unused).
    fn fifo_occupancy(&mut self, fifo: u32, _domain: u32, time: Timestamp, occupancy: u32) {
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        if !inner.fifo_kept.get(fifo as usize).copied().unwrap_or(false) {
            return;
        }
        let Some(time) = inner.window(time) else {
            return;
        };
        let record = FifoRecord {
            fifo,
            kind: FifoEventKind::Write,
            cycle: 0,
            time,
            unit: 0,
            txn: 0,
            occupancy,
        };
        inner.feed_takers(|t| &t.occupancy, |w| w.fifo(&record));
    }

    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        let mut inner = self.inner.borrow_mut();
        if inner.edge_work.get(domain as usize) == Some(&SIGNALS_ONLY) {
            inner.dump_only(domain, time);
            return;
        }
        if !inner.commit_due(domain, cycle) {
            // Nothing to sample at this edge: no time conversion.
            return;
        }
        if let Some(time) = inner.window(time) {
            inner.committed(domain, cycle, time);
        }
    }

    /// Looks at the writers; asked every [`STOP_POLL`] instants
    /// ([`TraceSink::stop_poll_interval`]): a writer that failed on its
    /// thread stops the run within that many instants, not when the next
    /// batch of records is sent to it (which may be never in a quiet
    /// run). Asking every instant was 4% of the producer's instructions
    /// when this sink looked every time, and a dyn call per instant (1.3%
    /// of a text run's main thread) when it counted down itself; records
    /// after the error are not queued either way.
    fn stop_requested(&self) -> bool {
        let inner = self.inner.borrow();
        inner.error.is_some() || inner.recorders.iter().any(Out::writer_failed)
    }

    fn stop_poll_interval(&self) -> u32 {
        STOP_POLL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The union of the writers' FIFO interests: events when any writer
    /// takes every event; occupancy lists merge per FIFO, a FIFO missing
    /// from a list is dumped (that writer's buffer passes it unfiltered).
    #[test]
    fn fifo_interests_unite_per_fifo() {
        use FifoInterest as I;
        let of = |interests: &[I]| FifoTakers::of(interests.iter(), 3);
        let takers = |events, occupancy: [bool; 3]| FifoTakers {
            events,
            occupancy: occupancy.to_vec(),
        };
        assert_eq!(of(&[]), takers(false, [false; 3]));
        assert_eq!(of(&[I::None, I::None]), takers(false, [false; 3]));
        assert_eq!(
            of(&[I::Occupancy(vec![true, false, true]), I::All]),
            takers(true, [true, false, true])
        );
        assert_eq!(
            of(&[I::None, I::Occupancy(vec![true, false, false])]),
            takers(false, [true, false, false])
        );
        assert_eq!(
            of(&[
                I::Occupancy(vec![false, true, false]),
                I::Occupancy(vec![true, false]),
            ]),
            takers(false, [true, true, true])
        );
    }
}
