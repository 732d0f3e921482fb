//! Trace records and the pluggable sink they go to.
//!
//! A tick emits a record (event id + `u64` arguments) through its context. The
//! records of one instant are buffered in preallocated storage, put in canonical
//! order (domain declaration order, unit instance path order, program order;
//! contract §7) and handed to the sink when the instant's evaluate phase ends.
//! After warm-up the buffer no longer grows, so tracing does not allocate.

use crate::calendar::TimeBase;
use crate::fifo::CdcFifo;
use crate::time::{Picos, TimeError};

/// An exact instant time: a tick count of the design's time base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Ticks since time 0.
    pub ticks: u128,
    /// Ticks per picosecond.
    pub ticks_per_ps: u128,
}

impl Timestamp {
    /// The exact time in picoseconds.
    pub fn picos(&self) -> Result<Picos, TimeError> {
        TimeBase::from_ticks_per_ps(self.ticks_per_ps).to_picos(self.ticks)
    }

    /// Whole picoseconds (rounded down) and the exact remainder in ticks.
    pub fn split_ps(&self) -> (u128, u128) {
        (
            self.ticks / self.ticks_per_ps,
            self.ticks % self.ticks_per_ps,
        )
    }
}

/// One trace record, as a sink sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord<'a> {
    /// The domain of the unit that emitted it (index in declaration order).
    pub domain: u32,
    /// The emitting unit.
    pub unit: u32,
    /// The domain's local cycle.
    pub cycle: u64,
    /// The exact time of the instant.
    pub time: Timestamp,
    /// The event name id (the compiler's table).
    pub event: u32,
    /// The event's arguments.
    pub args: &'a [u64],
}

/// What happened to a CDC FIFO item or flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FifoEventKind {
    /// A write was accepted (writer's tick).
    Write,
    /// The synchronized write pointer passed the item: the reader can see it
    /// (reader commit). `empty` deasserts at the first such instant.
    Visible,
    /// A registered `request()` was accepted (reader's tick).
    Read,
    /// The item entered the output register, or became the FWFT head (reader commit).
    Output,
    /// `take()` or FWFT `recv()` consumed the item (reader's tick).
    Consume,
    /// `full` asserted (writer commit).
    Full,
    /// `full` deasserted (writer commit).
    NotFull,
    /// `empty` asserted (reader commit).
    Empty,
    /// `empty` deasserted (reader commit).
    NotEmpty,
}

/// A CDC FIFO event, tied to a transaction: the item's sequence number in
/// the FIFO (0 for the first item written). A flag change carries the
/// transaction that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FifoEvent {
    /// The FIFO (builder id).
    pub fifo: u32,
    /// What happened.
    pub kind: FifoEventKind,
    /// The side's domain (writer or reader).
    pub domain: u32,
    /// The side's local cycle.
    pub cycle: u64,
    /// The exact time of the instant.
    pub time: Timestamp,
    /// The unit whose tick acted (tick events); the side's unit for commit events.
    pub unit: u32,
    /// Transaction id.
    pub txn: u64,
    /// Items in storage after the event.
    pub occupancy: u32,
}

impl FifoEventKind {
    /// Every kind, in declaration order.
    pub const ALL: [FifoEventKind; 9] = [
        FifoEventKind::Write,
        FifoEventKind::Visible,
        FifoEventKind::Read,
        FifoEventKind::Output,
        FifoEventKind::Consume,
        FifoEventKind::Full,
        FifoEventKind::NotFull,
        FifoEventKind::Empty,
        FifoEventKind::NotEmpty,
    ];
}

/// A set of [`FifoEventKind`]s, one bit per kind (bit `kind as u16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct FifoKinds(pub u16);

impl FifoKinds {
    /// No kind.
    pub const NONE: FifoKinds = FifoKinds(0);
    /// Every kind.
    pub const ALL: FifoKinds = FifoKinds((1 << FifoEventKind::ALL.len()) - 1);

    /// Whether `kind` is in the set.
    #[inline(always)]
    pub fn contains(self, kind: FifoEventKind) -> bool {
        self.0 & (1 << kind as u16) != 0
    }

    /// The set with `kind` added.
    pub fn with(self, kind: FifoEventKind) -> FifoKinds {
        FifoKinds(self.0 | (1 << kind as u16))
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// What a sink observes besides nothing at all; the runtime asks once, when
/// the sink is installed ([`TraceSink::observation`]), and produces only
/// that: a FIFO with no kind wanted runs unobserved (the JIT's inline
/// operations, no commit bookkeeping), an unwanted kind is never built, and
/// a sink that wants no FIFO event keeps the pattern-mode replay loop.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observation {
    /// Whether the sink takes trace records ([`TraceSink::record`]); when
    /// not, ticks' traces are not even buffered.
    pub traces: bool,
    /// Per FIFO (builder id), the event kinds the sink takes; a FIFO past
    /// the end of the list: none.
    pub fifo: Vec<FifoKinds>,
    /// Whether the sink takes one [`TraceSink::domain_committed`] call per
    /// domain edge.
    pub commits: bool,
    /// Per FIFO (by index; a FIFO past the end: no): whether the sink takes
    /// the FIFO's committed occupancy (items written minus items consumed,
    /// both committed) at the end of each instant in which it changed,
    /// through [`TraceSink::fifo_occupancy`]: at most one value per FIFO
    /// and instant, whatever the order of the domains or of the calls in a
    /// tick, compared from 0 when the sink is installed. Independent of the
    /// FIFO's events (`fifo`): a FIFO watched and not observed runs with no
    /// event observation at all (the JIT's inline operations, the replay
    /// loop).
    pub occupancy_watch: Vec<bool>,
}

impl Observation {
    /// Trace records only (what a plain sink gets).
    pub fn traces_only() -> Observation {
        Observation {
            traces: true,
            fifo: Vec::new(),
            commits: false,
            occupancy_watch: Vec::new(),
        }
    }

    /// Everything: trace records, every event of each of `fifos` FIFOs and
    /// the commit calls.
    pub fn everything(fifos: usize) -> Observation {
        Observation {
            traces: true,
            fifo: vec![FifoKinds::ALL; fifos],
            commits: true,
            occupancy_watch: Vec::new(),
        }
    }

    /// The kinds wanted of FIFO `fifo`.
    pub fn kinds(&self, fifo: usize) -> FifoKinds {
        self.fifo.get(fifo).copied().unwrap_or(FifoKinds::NONE)
    }
}

/// Receives trace records in canonical order. Called once per record, never
/// from inside a tick.
///
/// What else it gets is what [`TraceSink::observation`] asks for: CDC FIFO
/// events (per FIFO and kind) and one [`TraceSink::domain_committed`] call
/// per domain edge. Per instant and domain (declaration order) it then
/// sees: the domain's trace records and tick FIFO events in canonical
/// order, the domain's FIFO commit events, then `domain_committed`.
pub trait TraceSink {
    /// Takes one record.
    fn record(&mut self, record: &TraceRecord<'_>);

    /// Whether the sink wants every FIFO event and the commit calls: the
    /// default [`TraceSink::observation`] asks for everything when `true`,
    /// for trace records only when `false`.
    fn observes_commits(&self) -> bool {
        false
    }

    /// What the sink observes, for a design of `fifos` CDC FIFOs; asked
    /// once, when it is installed. The runtime does no work for what is
    /// not asked for.
    fn observation(&self, fifos: usize) -> Observation {
        if self.observes_commits() {
            Observation::everything(fifos)
        } else {
            Observation::traces_only()
        }
    }

    /// Takes one CDC FIFO event.
    fn fifo(&mut self, event: &FifoEvent) {
        let _ = event;
    }

    /// The instant's FIFO commit events of `domain`: those of `events`
    /// whose domain is `domain`, in order, all at `time`. The default
    /// hands each to [`TraceSink::fifo`] with its time set; a sink may
    /// override it to do its per-call set-up once per domain instead of
    /// once per event.
    fn commit_events(&mut self, domain: u32, time: Timestamp, events: &[FifoEvent]) {
        for e in events.iter().filter(|e| e.domain == domain) {
            self.fifo(&FifoEvent { time, ..*e });
        }
    }

    /// A watched FIFO's committed occupancy changed in the instant at
    /// `time` (see [`Observation::occupancy_watch`]); called after the
    /// instant's commits, in the slot of the first domain (declaration
    /// order) of the instant with a side of the FIFO.
    fn fifo_occupancy(&mut self, fifo: u32, time: Timestamp, occupancy: u32) {
        let _ = (fifo, time, occupancy);
    }

    /// A domain's edge has been evaluated and committed: registers, stage
    /// registers and FIFOs hold their values after the edge.
    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        let _ = (domain, cycle, time);
    }

    /// Whether the sink failed and the run must stop; asked once per instant
    /// while the sink is installed. The run stops with
    /// `Stop::SinkStopped` once the instant has completed.
    fn stop_requested(&self) -> bool {
        false
    }
}

/// An owned trace record, as [`MemorySink`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRecord {
    /// See [`TraceRecord::domain`].
    pub domain: u32,
    /// See [`TraceRecord::unit`].
    pub unit: u32,
    /// See [`TraceRecord::cycle`].
    pub cycle: u64,
    /// See [`TraceRecord::time`].
    pub time: Timestamp,
    /// See [`TraceRecord::event`].
    pub event: u32,
    /// See [`TraceRecord::args`].
    pub args: Vec<u64>,
}

/// A sink that keeps every record in memory (for tests and small runs).
#[derive(Debug, Default, Clone)]
pub struct MemorySink {
    /// The records received so far, in order.
    pub records: Vec<OwnedRecord>,
}

impl TraceSink for MemorySink {
    fn record(&mut self, r: &TraceRecord<'_>) {
        self.records.push(OwnedRecord {
            domain: r.domain,
            unit: r.unit,
            cycle: r.cycle,
            time: r.time,
            event: r.event,
            args: r.args.to_vec(),
        });
    }
}

/// A buffered record of the current instant.
#[derive(Debug, Clone, Copy)]
struct Pending {
    domain: u32,
    rank: u32,
    seq: u32,
    unit: u32,
    cycle: u64,
    payload: Payload,
}

/// What a buffered record is.
#[derive(Debug, Clone, Copy)]
enum Payload {
    /// A design trace: event id and the range of its arguments.
    Trace { event: u32, args: (u32, u32) },
    /// A FIFO event from a tick (time filled in at flush).
    Fifo(FifoEvent),
}

/// The records of the instant being evaluated.
#[derive(Debug)]
pub(crate) struct TraceBuffer {
    pending: Vec<Pending>,
    args: Vec<u64>,
    in_order: bool,
    /// FIFO commit events of the instant, in commit order (their time is
    /// the instant's, handed to the sink at flush).
    pub(crate) commits: Vec<FifoEvent>,
    /// FIFOs whose committed occupancy is compared at their sides' edges
    /// instead of observing their events.
    watch: OccupancyWatch,
}

/// Per domain, the watched FIFOs with a side in it, in the domain's tick
/// order (unit rank, then FIFO), and per FIFO the occupancy last handed
/// over.
#[derive(Debug, Default)]
struct OccupancyWatch {
    by_domain: Vec<Vec<u32>>,
    last: Vec<u32>,
}

impl TraceBuffer {
    pub(crate) fn new() -> Self {
        TraceBuffer {
            pending: Vec::with_capacity(256),
            args: Vec::with_capacity(1024),
            in_order: true,
            commits: Vec::new(),
            watch: OccupancyWatch::default(),
        }
    }

    /// Watches the committed occupancy of the FIFOs `by_domain` lists (per
    /// domain, those with a side in it, in tick order), from an occupancy
    /// of 0, for `fifos` FIFOs; empty lists: none.
    pub(crate) fn set_occupancy_watch(&mut self, by_domain: Vec<Vec<u32>>, fifos: usize) {
        self.watch = OccupancyWatch {
            by_domain,
            last: vec![0; fifos],
        };
    }

    /// Hands `sink` the changes of the watched FIFOs of `domain`'s slot.
    /// Called after the instant's commits, so a FIFO whose two sides share
    /// the instant shows its final value once, in the first of its
    /// domains' slots (the later one then sees no change).
    #[inline]
    fn watched_changes(
        &mut self,
        domain: u32,
        time: Timestamp,
        fifos: &[CdcFifo],
        sink: &mut dyn TraceSink,
    ) {
        let Some(watched) = self.watch.by_domain.get(domain as usize) else {
            return;
        };
        for &f in watched {
            let occupancy = fifos[f as usize].committed_occupancy();
            let last = &mut self.watch.last[f as usize];
            if *last != occupancy {
                *last = occupancy;
                sink.fifo_occupancy(f, time, occupancy);
            }
        }
    }

    /// Buffers a record from unit `unit` (path rank `rank`) of `domain`.
    #[inline]
    pub(crate) fn push(
        &mut self,
        domain: u32,
        rank: u32,
        unit: u32,
        cycle: u64,
        event: u32,
        args: &[u64],
    ) {
        let from = self.args.len() as u32;
        self.args.extend_from_slice(args);
        let args = (from, self.args.len() as u32);
        self.push_payload(domain, rank, unit, cycle, Payload::Trace { event, args });
    }

    /// Buffers a FIFO event from a tick of unit `unit` (path rank `rank`).
    #[inline]
    pub(crate) fn push_fifo(&mut self, rank: u32, event: FifoEvent) {
        self.push_payload(
            event.domain,
            rank,
            event.unit,
            event.cycle,
            Payload::Fifo(event),
        );
    }

    #[inline]
    fn push_payload(&mut self, domain: u32, rank: u32, unit: u32, cycle: u64, payload: Payload) {
        let seq = self.pending.len() as u32;
        if let Some(last) = self.pending.last()
            && (last.domain, last.rank) > (domain, rank)
        {
            self.in_order = false;
        }
        self.pending.push(Pending {
            domain,
            rank,
            seq,
            unit,
            cycle,
            payload,
        });
    }

    fn sort(&mut self) {
        if !self.in_order {
            // Keys are unique (seq), so an unstable, allocation-free sort is exact.
            self.pending
                .sort_unstable_by_key(|p| (p.domain, p.rank, p.seq));
        }
    }

    /// Hands buffered record `i` to `sink`. A FIFO event gets its time in
    /// place and is passed where it lies: copying the record out and then
    /// the event into a new one with the time (about 100 bytes each) was
    /// a fifth of this loop's instructions per event.
    #[inline(always)]
    fn emit(&mut self, i: usize, time: Timestamp, sink: &mut dyn TraceSink) {
        let TraceBuffer { pending, args, .. } = self;
        let p = &mut pending[i];
        match &mut p.payload {
            Payload::Trace { event, args: range } => sink.record(&TraceRecord {
                domain: p.domain,
                unit: p.unit,
                cycle: p.cycle,
                time,
                event: *event,
                args: &args[range.0 as usize..range.1 as usize],
            }),
            Payload::Fifo(e) => {
                e.time = time;
                sink.fifo(e);
            }
        }
    }

    /// Hands the instant's records, FIFO commit events, the watched FIFOs'
    /// occupancy changes (after the domain's records, see
    /// [`Observation::occupancy_watch`]) and
    /// (with `commits`) per-domain commit calls to `sink`, domain by domain
    /// (`edges`: the instant's domains in declaration order with their
    /// cycles), and clears the buffer.
    pub(crate) fn flush_observed(
        &mut self,
        time: Timestamp,
        edges: impl Iterator<Item = (u32, u64)>,
        commits: bool,
        fifos: &[CdcFifo],
        sink: &mut dyn TraceSink,
    ) {
        if self.pending.is_empty() && self.commits.is_empty() {
            // Nothing recorded in the instant (a sink that takes commit
            // calls and watched occupancies only): no sort, merge or clear.
            for (domain, cycle) in edges {
                self.watched_changes(domain, time, fifos, sink);
                if commits {
                    sink.domain_committed(domain, cycle, time);
                }
            }
            return;
        }
        self.sort();
        let mut next = 0;
        for (domain, cycle) in edges {
            while self.pending.get(next).is_some_and(|p| p.domain <= domain) {
                self.emit(next, time, sink);
                next += 1;
            }
            if !self.commits.is_empty() {
                sink.commit_events(domain, time, &self.commits);
            }
            self.watched_changes(domain, time, fifos, sink);
            if commits {
                sink.domain_committed(domain, cycle, time);
            }
        }
        while next < self.pending.len() {
            self.emit(next, time, sink);
            next += 1;
        }
        self.clear();
    }

    /// Hands the instant's records to `sink` in canonical order and clears the buffer.
    pub(crate) fn flush(&mut self, time: Timestamp, sink: &mut dyn TraceSink) {
        self.sort();
        for i in 0..self.pending.len() {
            self.emit(i, time, sink);
        }
        self.clear();
    }

    /// Drops the buffered records.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.args.clear();
        self.commits.clear();
        self.in_order = true;
    }

    /// Whether nothing is buffered.
    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}
