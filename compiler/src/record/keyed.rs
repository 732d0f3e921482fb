//! A parallel worker's recording: the serial run's sink over its own
//! units, writing keyed records instead of feeding writers, so that the
//! main thread can merge every worker's records into exactly the serial
//! run's order (`crate::parallel::records`).
//!
//! The key of a record is where the serial run hands it over:
//! the instant (its time in ticks, plus one, so the initial register
//! values at key time 0 come first), then, within the instant, the slot of
//! the domain the runtime was flushing (declaration order), then a phase
//! and a position within it:
//!
//! | phase | records | position |
//! |---|---|---|
//! | 0 | traces and tick FIFO events (write, read, consume) | the acting unit's path rank |
//! | 1 | FIFO commit events | the first domain of the instant with a side of the FIFO, then the FIFO |
//! | 2 | watched FIFO occupancy | the rank of the FIFO's unit in the slot's domain, then the FIFO |
//! | 3 | counter samples | the counter |
//! | 4 | tick slices | the unit |
//! | 5 | register changes | the signal |
//!
//! which is the runtime's order (`runtime/src/trace.rs`,
//! `TraceBuffer::flush_observed`: per domain its records by (rank,
//! sequence), its FIFO commit events in commit order, its watched FIFOs by
//! (rank, FIFO), then the commit call, whose counters, ticks and signals
//! come in id order). A unit, its FIFOs and its counters belong to one
//! worker, so no two workers share a key, and a worker's own records of one
//! key keep their order in its stream.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use chronon_record::buffer::FifoFilter;
use chronon_record::keyed::{Key, KeyedStream};
use chronon_record::{
    CounterRecord, FifoRecord, Interest, RecordError, SignalRecord, TickRecord, TraceRecord,
};
use chronon_runtime::{FifoEvent, Observation, Timestamp, TraceRecord as RuntimeRecord, TraceSink};

use super::RecordOptions;
use super::schema::ProgramSchema;
use super::sink::{Inner, Out, RecordingSink};
use crate::ir::Program;
use crate::run::print::path_ranks;
use crate::simulate::Simulator;

/// What every worker builds its recording from: shared, read-only.
pub struct RecordPlan {
    pub(super) schema: ProgramSchema,
    pub(super) options: RecordOptions,
    pub(super) ticks_per_ps: u64,
    /// Per writer (in the main thread's order), what it takes.
    pub(super) interests: Vec<Interest>,
}

/// Where the sink is in the instant it hands over; set by [`KeyedSink`]
/// before each call into the serial sink.
#[derive(Clone, Copy, Default)]
struct Base {
    /// The instant's ticks plus one (0: the initial values).
    time: u128,
    /// The domain slot.
    slot: u32,
    /// The phase (see the module doc); 0 for traces and tick FIFO events.
    phase: u8,
    /// The position within a commit or occupancy phase.
    major: u64,
}

/// The phases of an instant's slot (see the module doc).
const TICKS: u8 = 0;
const COMMITS: u8 = 1;
const OCCUPANCY: u8 = 2;
const COUNTERS: u8 = 3;
const TICK_SLICES: u8 = 4;
const SIGNALS: u8 = 5;

impl Base {
    #[inline(always)]
    fn key(&self, phase: u8, major: u64) -> Key {
        Key {
            time: self.time,
            order: u128::from(self.slot) << 72 | u128::from(phase) << 64 | u128::from(major),
        }
    }
}

/// One writer's capture in a worker: its records, keyed, filtered by the
/// writer's interest as its buffer would (the merge copies them to the
/// buffer as they are).
pub struct KeyedCapture {
    interest: Interest,
    fifo_filter: FifoFilter,
    stream: KeyedStream,
    base: Rc<Cell<Base>>,
    ranks: Rc<[u32]>,
    /// Per schema signal, its unit's domain: the initial values come
    /// domain by domain (`Inner::initial_signals`).
    signal_domains: Rc<[u32]>,
    /// Records of key times at or before this one are not kept (a worker
    /// that runs again has handed them over already).
    skip_through: Option<u128>,
}

impl KeyedCapture {
    /// The base of the record at hand, `None` when it is not kept.
    #[inline(always)]
    fn base(&self) -> Option<Base> {
        let base = self.base.get();
        match self.skip_through {
            Some(s) if base.time <= s => None,
            _ => Some(base),
        }
    }

    #[inline(always)]
    fn rank(&self, unit: u32) -> u64 {
        u64::from(self.ranks.get(unit as usize).copied().unwrap_or(u32::MAX))
    }
}

impl Out for KeyedCapture {
    fn interest(&self) -> &Interest {
        &self.interest
    }
    fn writer_failed(&self) -> bool {
        false
    }
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        let Some(base) = self.base().filter(|_| self.interest.trace) else {
            return Ok(());
        };
        let key = base.key(TICKS, self.rank(r.unit));
        self.stream.trace(key, r)
    }
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        // The filter sees every record, kept or not, as the serial run's.
        if !self.fifo_filter.passes(r) {
            return Ok(());
        }
        let Some(base) = self.base() else {
            return Ok(());
        };
        let key = match base.phase {
            TICKS => base.key(TICKS, self.rank(r.unit)),
            phase => base.key(phase, base.major),
        };
        self.stream.fifo(key, r);
        Ok(())
    }
    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        let Some(base) = self.base().filter(|_| self.interest.counter) else {
            return Ok(());
        };
        let key = base.key(COUNTERS, u64::from(r.counter));
        self.stream.counter(key, r);
        Ok(())
    }
    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        let Some(base) = self.base().filter(|_| self.interest.tick) else {
            return Ok(());
        };
        let key = base.key(TICK_SLICES, u64::from(r.unit));
        self.stream.tick(key, r);
        Ok(())
    }
    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        let Some(mut base) = self.base().filter(|_| self.interest.signal) else {
            return Ok(());
        };
        if base.time == 0 {
            base.slot = self
                .signal_domains
                .get(r.signal as usize)
                .copied()
                .unwrap_or(u32::MAX);
        }
        let key = base.key(SIGNALS, u64::from(r.signal));
        self.stream.signal(key, r);
        Ok(())
    }
}

/// A worker's end of the recording: takes its keyed records out.
pub struct WorkerRecording {
    inner: Rc<RefCell<Inner<KeyedCapture>>>,
}

impl WorkerRecording {
    /// Installs a keyed recording of `active`'s units on `sim` (a worker's
    /// simulator, [`Simulator::for_units`]), as the serial
    /// [`super::Recording`] would for the whole design; returns its end
    /// and the sink, for the caller to install (alone or beside others).
    /// Records of the instants at or before `skip_through` (ticks) are
    /// not kept: a worker that runs again has handed them over already.
    pub fn attach(
        plan: &RecordPlan,
        sim: &Simulator,
        active: &[bool],
        skip_through: Option<u128>,
    ) -> (WorkerRecording, Box<dyn TraceSink>) {
        let program = sim.program();
        let base = Rc::new(Cell::new(Base::default()));
        let ranks: Rc<[u32]> = path_ranks(program).into();
        let signal_domains: Rc<[u32]> = plan
            .schema
            .signals
            .iter()
            .map(|s| program.units[s.unit as usize].domain)
            .collect();
        let captures = plan
            .interests
            .iter()
            .map(|interest| KeyedCapture {
                interest: interest.clone(),
                fifo_filter: FifoFilter::new(&interest.fifo),
                stream: KeyedStream::new(),
                base: base.clone(),
                ranks: ranks.clone(),
                signal_domains: signal_domains.clone(),
                // Key times are ticks + 1; the initial values' is 0.
                skip_through: skip_through.map(|t| t.saturating_add(1)),
            })
            .collect();
        let inner = Rc::new(RefCell::new(Inner::new(
            program,
            &plan.schema,
            &plan.options,
            captures,
            sim.state_view(),
            (plan.ticks_per_ps, Some(active)),
        )));
        // At key time 0, before every instant.
        inner.borrow_mut().initial_signals();
        let sink = KeyedSink::new(program, active, RecordingSink::new(inner.clone()), base);
        (WorkerRecording { inner }, Box::new(sink))
    }

    /// Moves each writer's records since the last call into `into` (one
    /// stream per writer, in the plan's order), leaving the streams
    /// `fresh` gives in their place; returns how many records moved.
    pub fn take(
        &self,
        into: &mut Vec<KeyedStream>,
        mut fresh: impl FnMut() -> KeyedStream,
    ) -> usize {
        let mut inner = self.inner.borrow_mut();
        let mut moved = 0;
        for capture in &mut inner.recorders {
            moved += capture.stream.records();
            into.push(std::mem::replace(&mut capture.stream, fresh()));
        }
        moved
    }
}

/// The worker's sink: sets the key's base for each call and hands it to
/// the serial sink, with the worker's FIFO ids as the design's.
struct KeyedSink {
    inner: RecordingSink<KeyedCapture>,
    base: Rc<Cell<Base>>,
    /// Per worker FIFO: the design's FIFO.
    fifos: Vec<u32>,
    /// Per design FIFO: (writer domain, writer rank), (reader domain,
    /// reader rank).
    sides: Vec<[(u32, u32); 2]>,
    /// Per domain: the key time of its last commit call.
    committed: Vec<u128>,
    /// A run of one FIFO's commit events, with the design's FIFO id.
    events: Vec<FifoEvent>,
}

impl KeyedSink {
    fn new(
        program: &Program,
        active: &[bool],
        inner: RecordingSink<KeyedCapture>,
        base: Rc<Cell<Base>>,
    ) -> KeyedSink {
        let ranks = path_ranks(program);
        let unit = |port: u32| program.ports[port as usize].unit as usize;
        let side = |port: u32| (program.units[unit(port)].domain, ranks[unit(port)]);
        // The worker's simulator declares the FIFOs of its own units, in
        // the design's order (`simulate::declare`).
        let fifos = (0..program.fifos.len() as u32)
            .filter(|&f| active[unit(program.fifos[f as usize].from)])
            .collect();
        KeyedSink {
            inner,
            base,
            fifos,
            sides: program
                .fifos
                .iter()
                .map(|f| [side(f.from), side(f.to)])
                .collect(),
            committed: vec![u128::MAX; program.domains.len()],
            events: Vec::new(),
        }
    }

    #[inline(always)]
    fn set(&self, time: Timestamp, slot: u32, phase: u8, major: u64) {
        self.base.set(Base {
            time: time.ticks.saturating_add(1),
            slot,
            phase,
            major,
        });
    }

    fn design_fifo(&self, fifo: u32) -> u32 {
        self.fifos.get(fifo as usize).copied().unwrap_or(u32::MAX)
    }

    /// The position of design FIFO `fifo`'s commit among the instant's
    /// (the runtime commits FIFOs domain by domain, each domain's in id
    /// order, a FIFO once, in the first of its domains with an edge now).
    fn commit_position(&self, fifo: u32, slot: u32, time: u128) -> u64 {
        let [(wd, _), (rd, _)] = self.sides[fifo as usize];
        let (low, high) = (wd.min(rd), wd.max(rd));
        let first = match slot == high && self.committed[low as usize] == time {
            true => low,
            false => slot,
        };
        u64::from(first) << 32 | u64::from(fifo)
    }
}

impl TraceSink for KeyedSink {
    fn record(&mut self, r: &RuntimeRecord<'_>) {
        self.set(r.time, r.domain, TICKS, 0);
        self.inner.record(r);
    }

    fn observes_commits(&self) -> bool {
        true
    }

    /// The serial sink's observation of the design's FIFOs, for the
    /// worker's; the commit calls whenever FIFO events are observed: the
    /// commit events' keys need to know which domains had an edge.
    fn observation(&self, fifos: usize) -> Observation {
        let all = self.inner.observation(self.sides.len());
        let design = |f: usize| self.design_fifo(f as u32) as usize;
        let fifo: Vec<_> = (0..fifos).map(|f| all.kinds(design(f))).collect();
        Observation {
            traces: all.traces,
            commits: all.commits || fifo.iter().any(|k| !k.is_empty()),
            fifo,
            occupancy_watch: (0..fifos)
                .map(|f| all.occupancy_watch.get(design(f)).copied().unwrap_or(false))
                .collect(),
        }
    }

    fn fifo(&mut self, e: &FifoEvent) {
        self.set(e.time, e.domain, TICKS, 0);
        let fifo = self.design_fifo(e.fifo);
        self.inner.fifo(&FifoEvent { fifo, ..*e });
    }

    fn commit_events(&mut self, domain: u32, time: Timestamp, events: &[FifoEvent]) {
        let mut events = events.iter().filter(|e| e.domain == domain).peekable();
        let mut run = std::mem::take(&mut self.events);
        while let Some(first) = events.next() {
            run.clear();
            run.push(*first);
            while let Some(e) = events.next_if(|e| e.fifo == first.fifo) {
                run.push(*e);
            }
            let fifo = self.design_fifo(first.fifo);
            for e in &mut run {
                e.fifo = fifo;
            }
            let position = self.commit_position(fifo, domain, time.ticks.saturating_add(1));
            self.set(time, domain, COMMITS, position);
            self.inner.commit_events(domain, time, &run);
        }
        self.events = run;
    }

    fn fifo_occupancy(&mut self, fifo: u32, domain: u32, time: Timestamp, occupancy: u32) {
        let fifo = self.design_fifo(fifo);
        let [(wd, wrank), (_, rrank)] = self.sides[fifo as usize];
        let rank = if wd == domain { wrank } else { rrank };
        self.set(
            time,
            domain,
            OCCUPANCY,
            u64::from(rank) << 32 | u64::from(fifo),
        );
        self.inner.fifo_occupancy(fifo, domain, time, occupancy);
    }

    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        if let Some(c) = self.committed.get_mut(domain as usize) {
            *c = time.ticks.saturating_add(1);
        }
        self.set(time, domain, COUNTERS, 0);
        self.inner.domain_committed(domain, cycle, time);
    }

    fn stop_requested(&self) -> bool {
        self.inner.stop_requested()
    }

    fn stop_poll_interval(&self) -> u32 {
        self.inner.stop_poll_interval()
    }
}
