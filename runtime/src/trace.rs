//! Trace records and the pluggable sink they go to.
//!
//! A tick emits a record (event id + `u64` arguments) through its context. The
//! records of one instant are buffered in preallocated storage, put in canonical
//! order (domain declaration order, unit instance path order, program order;
//! contract §7) and handed to the sink when the instant's evaluate phase ends.
//! After warm-up the buffer no longer grows, so tracing does not allocate.

use crate::calendar::TimeBase;
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

/// Receives trace records in canonical order. Called once per record, never
/// from inside a tick.
pub trait TraceSink {
    /// Takes one record.
    fn record(&mut self, record: &TraceRecord<'_>);
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
    event: u32,
    args: (u32, u32),
}

/// The records of the instant being evaluated.
#[derive(Debug)]
pub(crate) struct TraceBuffer {
    pending: Vec<Pending>,
    args: Vec<u64>,
    in_order: bool,
}

impl TraceBuffer {
    pub(crate) fn new() -> Self {
        TraceBuffer {
            pending: Vec::with_capacity(256),
            args: Vec::with_capacity(1024),
            in_order: true,
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
        let seq = self.pending.len() as u32;
        if let Some(last) = self.pending.last()
            && (last.domain, last.rank) > (domain, rank)
        {
            self.in_order = false;
        }
        let from = self.args.len() as u32;
        self.args.extend_from_slice(args);
        self.pending.push(Pending {
            domain,
            rank,
            seq,
            unit,
            cycle,
            event,
            args: (from, self.args.len() as u32),
        });
    }

    /// Hands the instant's records to `sink` in canonical order and clears the buffer.
    pub(crate) fn flush(&mut self, time: Timestamp, sink: &mut dyn TraceSink) {
        if !self.in_order {
            // Keys are unique (seq), so an unstable, allocation-free sort is exact.
            self.pending
                .sort_unstable_by_key(|p| (p.domain, p.rank, p.seq));
        }
        for p in &self.pending {
            sink.record(&TraceRecord {
                domain: p.domain,
                unit: p.unit,
                cycle: p.cycle,
                time,
                event: p.event,
                args: &self.args[p.args.0 as usize..p.args.1 as usize],
            });
        }
        self.clear();
    }

    /// Drops the buffered records.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
        self.args.clear();
        self.in_order = true;
    }

    /// Whether nothing is buffered.
    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}
