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

/// `W ps`, or `W ps + R/D ps` with `R/D` in lowest terms: the same text for
/// the same time whatever other clocks set the design's ticks per ps (run
/// summaries and fault reports; never on a hot path).
impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (ps, rem) = self.split_ps();
        if rem == 0 {
            return write!(f, "{ps} ps");
        }
        let (mut a, mut b) = (rem, self.ticks_per_ps);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        write!(f, "{ps} ps + {}/{} ps", rem / a, self.ticks_per_ps / a)
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

    /// The kinds in either set.
    pub fn union(self, other: FifoKinds) -> FifoKinds {
        FifoKinds(self.0 | other.0)
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
    /// instant's commits, in the slot of `domain`: the first domain
    /// (declaration order) of the instant with a side of the FIFO.
    fn fifo_occupancy(&mut self, fifo: u32, domain: u32, time: Timestamp, occupancy: u32) {
        let _ = (fifo, domain, time, occupancy);
    }

    /// A domain's edge has been evaluated and committed: registers, stage
    /// registers and FIFOs hold their values after the edge.
    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        let _ = (domain, cycle, time);
    }

    /// Whether the sink failed and the run must stop; asked at the first
    /// instant after the sink is installed and then every
    /// [`TraceSink::stop_poll_interval`] instants. The run stops with
    /// `Stop::SinkStopped` once the instant has completed.
    fn stop_requested(&self) -> bool {
        false
    }

    /// How many instants apart [`TraceSink::stop_requested`] is asked (at
    /// least 1; the default, 1, asks every instant): a sink that may stop
    /// the run that many instants late saves a call per instant. Asked
    /// once, when the sink is installed.
    fn stop_poll_interval(&self) -> u32 {
        1
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
    /// A FIFO event from a tick: what the record's domain, unit and cycle
    /// and the instant's time do not give. Kept this small (the event is
    /// built when handed over) so that a record is 40 bytes to write,
    /// sort and read, not the 112 of a whole [`FifoEvent`].
    Fifo {
        fifo: u32,
        kind: FifoEventKind,
        occupancy: u32,
        txn: u64,
    },
}

/// The records of the instant being evaluated.
#[derive(Debug)]
pub(crate) struct TraceBuffer {
    pending: Vec<Pending>,
    /// FIFO tick events derived at commit from stamps
    /// ([`TraceBuffer::push_derived`]), merged into `pending`'s order when
    /// handed over (a sort of both was a tenth of the main thread).
    derived: Vec<Pending>,
    /// Whether `derived` is in canonical order.
    derived_in_order: bool,
    /// The instant's record counter: every buffered record, and every FIFO
    /// operation of a stamping FIFO ([`CdcFifo::set_stamping`]), takes the
    /// next value as its sequence number, so a FIFO event derived at
    /// commit sorts where the operation ran. In its own allocation because
    /// JIT code increments it through the address
    /// [`TraceBuffer::seq_ptr`] gives; reset with the buffer.
    seq: std::ptr::NonNull<u32>,
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

impl Drop for TraceBuffer {
    fn drop(&mut self) {
        // SAFETY: `seq` came from `Box::into_raw` in `new` and is freed
        // only here; native code uses it only inside the simulation's ticks.
        drop(unsafe { Box::from_raw(self.seq.as_ptr()) });
    }
}

impl TraceBuffer {
    pub(crate) fn new() -> Self {
        TraceBuffer {
            pending: Vec::with_capacity(256),
            derived: Vec::with_capacity(64),
            derived_in_order: true,
            seq: std::ptr::NonNull::from(Box::leak(Box::new(0u32))),
            args: Vec::with_capacity(1024),
            in_order: true,
            commits: Vec::new(),
            watch: OccupancyWatch::default(),
        }
    }

    /// The record counter's address, for stamping FIFOs' native code (see
    /// [`crate::ffi::fifo_layout`]); the same for the buffer's life.
    pub(crate) fn seq_ptr(&self) -> *mut u32 {
        self.seq.as_ptr()
    }

    /// Takes the next sequence number of the instant.
    #[inline(always)]
    pub(crate) fn next_seq(&mut self) -> u32 {
        // SAFETY: the counter is this buffer's allocation; native code
        // writes it only inside a tick, when the runtime holds no
        // reference into it (this is a plain read and write, no reference
        // is kept).
        unsafe {
            let seq = self.seq.as_ptr().read();
            self.seq.as_ptr().write(seq.wrapping_add(1));
            seq
        }
    }

    /// Restarts the sequence numbers (a new instant).
    #[inline(always)]
    fn reset_seq(&mut self) {
        // SAFETY: as in `next_seq`.
        unsafe { self.seq.as_ptr().write(0) };
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
                sink.fifo_occupancy(f, domain, time, occupancy);
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
        let seq = self.next_seq();
        self.push_payload(
            domain,
            rank,
            unit,
            cycle,
            Payload::Trace { event, args },
            seq,
        );
    }

    /// Buffers a FIFO event from a tick of unit `unit` (path rank `rank`);
    /// returns its sequence number.
    #[inline]
    pub(crate) fn push_fifo(&mut self, rank: u32, event: FifoEvent) -> u32 {
        let seq = self.next_seq();
        let payload = Payload::Fifo {
            fifo: event.fifo,
            kind: event.kind,
            occupancy: event.occupancy,
            txn: event.txn,
        };
        self.push_payload(event.domain, rank, event.unit, event.cycle, payload, seq);
        seq
    }

    /// Buffers a FIFO tick event derived at commit from a stamping FIFO's
    /// state (see [`FifoEvent`] for the fields): `seq` is the number its
    /// operation took during the tick, so it is handed over among the
    /// unit's records where the operation ran.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_derived(
        &mut self,
        (domain, rank, unit, cycle): (u32, u32, u32, u64),
        seq: u32,
        fifo: u32,
        kind: FifoEventKind,
        txn: u64,
        occupancy: u32,
    ) {
        if let Some(last) = self.derived.last()
            && (last.domain, last.rank, last.seq) > (domain, rank, seq)
        {
            self.derived_in_order = false;
        }
        self.derived.push(Pending {
            domain,
            rank,
            seq,
            unit,
            cycle,
            payload: Payload::Fifo {
                fifo,
                kind,
                occupancy,
                txn,
            },
        });
    }

    #[inline]
    fn push_payload(
        &mut self,
        domain: u32,
        rank: u32,
        unit: u32,
        cycle: u64,
        payload: Payload,
        seq: u32,
    ) {
        // Sequence numbers grow through the instant, so records pushed
        // during the ticks are in order unless (domain, rank) falls.
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
        // Keys are unique (seq), so an unstable, allocation-free sort is exact.
        if !self.in_order {
            self.pending
                .sort_unstable_by_key(|p| (p.domain, p.rank, p.seq));
        }
        if !self.derived_in_order {
            self.derived
                .sort_unstable_by_key(|p| (p.domain, p.rank, p.seq));
        }
    }

    /// Hands record `p` (its trace arguments in `args`) to `sink`.
    #[inline(always)]
    fn emit(p: &Pending, args: &[u64], time: Timestamp, sink: &mut dyn TraceSink) {
        match p.payload {
            Payload::Trace { event, args: range } => sink.record(&TraceRecord {
                domain: p.domain,
                unit: p.unit,
                cycle: p.cycle,
                time,
                event,
                args: &args[range.0 as usize..range.1 as usize],
            }),
            Payload::Fifo {
                fifo,
                kind,
                occupancy,
                txn,
            } => sink.fifo(&FifoEvent {
                fifo,
                kind,
                domain: p.domain,
                cycle: p.cycle,
                time,
                unit: p.unit,
                txn,
                occupancy,
            }),
        }
    }

    /// Hands over, in canonical order, the records of `pending` from
    /// `*next` and of `derived` from `*next_derived` whose domain is at
    /// most `domain` (both lists sorted; a merge).
    #[inline(always)]
    fn emit_through(
        &self,
        domain: u32,
        (next, next_derived): (&mut usize, &mut usize),
        time: Timestamp,
        sink: &mut dyn TraceSink,
    ) {
        let key = |p: &Pending| (p.domain, p.rank, p.seq);
        loop {
            let p = self.pending.get(*next).filter(|p| p.domain <= domain);
            let d = self
                .derived
                .get(*next_derived)
                .filter(|d| d.domain <= domain);
            let record = match (p, d) {
                (Some(p), Some(d)) if key(p) < key(d) => {
                    *next += 1;
                    p
                }
                (_, Some(d)) => {
                    *next_derived += 1;
                    d
                }
                (Some(p), None) => {
                    *next += 1;
                    p
                }
                (None, None) => return,
            };
            Self::emit(record, &self.args, time, sink);
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
        if self.pending.is_empty() && self.commits.is_empty() && self.derived.is_empty() {
            // Nothing recorded in the instant (a sink that takes commit
            // calls and watched occupancies only): no sort, merge or clear
            // (stamping FIFOs may have counted operations of unwanted kinds).
            self.reset_seq();
            for (domain, cycle) in edges {
                self.watched_changes(domain, time, fifos, sink);
                if commits {
                    sink.domain_committed(domain, cycle, time);
                }
            }
            return;
        }
        self.sort();
        let (mut next, mut next_derived) = (0, 0);
        for (domain, cycle) in edges {
            self.emit_through(domain, (&mut next, &mut next_derived), time, sink);
            if !self.commits.is_empty() {
                sink.commit_events(domain, time, &self.commits);
            }
            self.watched_changes(domain, time, fifos, sink);
            if commits {
                sink.domain_committed(domain, cycle, time);
            }
        }
        self.emit_through(u32::MAX, (&mut next, &mut next_derived), time, sink);
        self.clear();
    }

    /// Hands the instant's records to `sink` in canonical order and clears the buffer.
    pub(crate) fn flush(&mut self, time: Timestamp, sink: &mut dyn TraceSink) {
        self.sort();
        self.emit_through(u32::MAX, (&mut 0, &mut 0), time, sink);
        self.clear();
    }

    /// Drops the buffered records.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.derived.clear();
        self.derived_in_order = true;
        self.args.clear();
        self.commits.clear();
        self.in_order = true;
        self.reset_seq();
    }

    /// Whether nothing is buffered.
    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty() && self.derived.is_empty()
    }
}
