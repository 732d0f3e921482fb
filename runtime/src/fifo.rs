//! The CDC FIFO: the classic asynchronous FIFO of contract §5, as a deterministic
//! digital model.
//!
//! Pointers are binary counters modulo `2 * depth` (the extra bit is the wrap
//! bit); each side passes its pointer through an `S`-flop synchronizer to the
//! other side. Hardware Gray-codes the pointer before the synchronizer; this
//! model has no metastability, so a Gray encode and decode around the flops is
//! the identity and the rings hold the binary pointer directly. A synchronizer
//! is a ring of `S` entries holding the last `S` sampled values, so a shift is
//! one store and the tail (the last flop) is the oldest entry: O(1) per edge
//! for any `S`.
//!
//! During evaluate, operations only record intent (pending write, accepted
//! read, take); [`CdcFifo::commit`] applies both sides of one instant at once,
//! sampling each side's pointer as it was before the instant, so a pointer
//! committed at `t` is never seen by the other side at `t`.

use crate::channel::copy_item;
use crate::trace::{FifoEvent, FifoEventKind, Timestamp};

/// The read port kind of a CDC FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPort {
    /// Registered read (the default): `request()`, then `valid()`/`take()` from the next edge.
    Registered,
    /// First-word fall-through: `recv()`/`peek()` read the head combinationally.
    Fwft,
}

/// The smallest and largest allowed depth.
pub const FIFO_DEPTH_RANGE: (u32, u32) = (2, 1 << 30);
/// The smallest and largest allowed synchronizer length.
pub const FIFO_SYNC_RANGE: (u32, u32) = (2, 64);

/// An `S`-flop synchronizer as a ring of the last `S` sampled values.
#[derive(Debug, Clone)]
struct Synchronizer {
    flops: Vec<u32>,
    /// Where the next sample goes; it also holds the current tail (the oldest value).
    pos: usize,
}

impl Synchronizer {
    fn new(stages: u32) -> Self {
        Synchronizer {
            flops: vec![0; stages as usize],
            pos: 0,
        }
    }

    /// Shifts `sample` in; returns the tail as it was before the shift.
    #[inline]
    fn shift(&mut self, sample: u32) -> u32 {
        let before = self.flops[self.pos];
        self.flops[self.pos] = sample;
        self.pos += 1;
        if self.pos == self.flops.len() {
            self.pos = 0;
        }
        before
    }
}

/// One CDC FIFO.
#[derive(Debug)]
pub(crate) struct CdcFifo {
    pub(crate) name: String,
    pub(crate) writer_domain: u32,
    pub(crate) reader_domain: u32,
    pub(crate) read_port: ReadPort,
    pub(crate) width: usize,
    depth: u32,
    /// `2 * depth - 1`: pointers wrap modulo `2 * depth`.
    pointer_mask: u32,
    storage: Vec<u64>,
    write_ptr: u32,
    read_ptr: u32,
    /// The read pointer as seen by the writer, and the write pointer as seen by the reader.
    read_sync: Synchronizer,
    write_sync: Synchronizer,
    full: bool,
    empty: bool,
    write_pending: bool,
    read_pending: bool,
    output: Vec<u64>,
    output_valid: bool,
    taken: bool,
    /// The instant this FIFO was last committed, so coincident edges commit once.
    pub(crate) committed_instant: u64,
    /// The synchronizer tails last seen by the writer (read pointer) and the
    /// reader (write pointer); only observed commits use them.
    read_tail: u32,
    write_tail: u32,
    /// Transaction bookkeeping for observed runs (see [`CdcFifo::commit_observed`]).
    pub(crate) txns: Txns,
    /// The writer and reader units, named by commit events.
    pub(crate) units: (u32, u32),
}

/// Absolute item counts that turn pointer moves into transaction ids.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Txns {
    /// Writes committed.
    pub(crate) writes: u64,
    /// Reads (registered requests or FWFT receives) committed.
    pub(crate) reads: u64,
    /// Writes the reader's synchronizer has passed on.
    seen_by_reader: u64,
    /// Reads the writer's synchronizer has passed on.
    seen_by_writer: u64,
    /// The item in the output register.
    pub(crate) output: u64,
    /// The next FWFT head to report as `Output`.
    next_head: u64,
}

impl CdcFifo {
    pub(crate) fn new(
        name: String,
        writer_domain: u32,
        reader_domain: u32,
        depth: u32,
        sync: u32,
        width: usize,
        read_port: ReadPort,
    ) -> Self {
        CdcFifo {
            name,
            writer_domain,
            reader_domain,
            read_port,
            width,
            depth,
            pointer_mask: 2 * depth - 1,
            storage: vec![0; depth as usize * width],
            write_ptr: 0,
            read_ptr: 0,
            read_sync: Synchronizer::new(sync),
            write_sync: Synchronizer::new(sync),
            full: false,
            empty: true,
            write_pending: false,
            read_pending: false,
            output: vec![0; width],
            output_valid: false,
            taken: false,
            committed_instant: u64::MAX,
            read_tail: 0,
            write_tail: 0,
            txns: Txns::default(),
            units: (0, 0),
        }
    }

    #[inline]
    fn slot(&self, pointer: u32) -> usize {
        (pointer & (self.depth - 1)) as usize * self.width
    }

    /// Writer: `can_send()`.
    #[inline]
    pub(crate) fn can_send(&self) -> bool {
        !self.full && !self.write_pending
    }

    /// Writer: stores `item` if `can_send()`. The slot at the write pointer is free
    /// (not full), and the reader cannot see it before the pointer is committed
    /// and synchronized, so storing now is the same as storing at commit.
    #[inline]
    pub(crate) fn try_send(&mut self, item: &[u64]) -> bool {
        if !self.can_send() {
            return false;
        }
        let at = self.slot(self.write_ptr);
        copy_item(&mut self.storage[at..at + self.width], item);
        self.write_pending = true;
        true
    }

    /// Writer: whether this edge has written.
    #[inline]
    pub(crate) fn write_pending(&self) -> bool {
        self.write_pending
    }

    /// Writer: the registered `full` flag.
    pub(crate) fn full(&self) -> bool {
        self.full
    }

    /// Reader: the registered `empty` flag.
    pub(crate) fn empty(&self) -> bool {
        self.empty
    }

    /// Registered reader: `request()`.
    #[inline]
    pub(crate) fn request(&mut self) -> bool {
        let register_free = !self.output_valid || self.taken;
        let accepted = self.read_port == ReadPort::Registered
            && !self.empty
            && !self.read_pending
            && register_free;
        if accepted {
            self.read_pending = true;
        }
        accepted
    }

    /// Registered reader: `valid()`, the output register as it was before the edge.
    #[inline]
    pub(crate) fn valid(&self) -> bool {
        self.output_valid
    }

    /// Registered reader: `take()`; returns whether an item was taken into `out`.
    #[inline]
    pub(crate) fn take(&mut self, out: &mut [u64]) -> bool {
        if !self.output_valid || self.taken {
            return false;
        }
        copy_item(out, &self.output);
        self.taken = true;
        true
    }

    /// FWFT reader: `peek()`, the head item if one may be received now.
    #[inline]
    pub(crate) fn peek(&self) -> Option<&[u64]> {
        if self.read_port != ReadPort::Fwft || self.empty || self.read_pending {
            return None;
        }
        let at = self.slot(self.read_ptr);
        Some(&self.storage[at..at + self.width])
    }

    /// FWFT reader: `recv()`; at most one per edge.
    #[inline]
    pub(crate) fn recv(&mut self, out: &mut [u64]) -> bool {
        match self.peek() {
            Some(item) => {
                copy_item(out, item);
                self.read_pending = true;
                true
            }
            None => false,
        }
    }

    /// Commits one instant: `writer_edge`/`reader_edge` say which sides have an edge.
    #[inline]
    pub(crate) fn commit(&mut self, writer_edge: bool, reader_edge: bool) {
        let write_before = self.write_ptr;
        let read_before = self.read_ptr;
        if writer_edge {
            if self.write_pending {
                self.write_ptr = (self.write_ptr + 1) & self.pointer_mask;
                self.write_pending = false;
            }
            let tail = self.read_sync.shift(read_before);
            self.read_tail = tail;
            self.full = (self.write_ptr.wrapping_sub(tail) & self.pointer_mask) == self.depth;
        }
        if reader_edge {
            if self.read_pending {
                if self.read_port == ReadPort::Registered {
                    let at = self.slot(read_before);
                    copy_item(&mut self.output, &self.storage[at..at + self.width]);
                    self.output_valid = true;
                }
                self.read_ptr = (self.read_ptr + 1) & self.pointer_mask;
                self.read_pending = false;
            } else if self.taken {
                self.output_valid = false;
            }
            self.taken = false;
            let tail = self.write_sync.shift(write_before);
            self.write_tail = tail;
            self.empty = tail == self.read_ptr;
        }
    }

    /// Items in storage, counting this instant's pending write and read.
    pub(crate) fn occupancy(&self) -> u32 {
        let t = &self.txns;
        (t.writes + u64::from(self.write_pending) - t.reads - u64::from(self.read_pending)) as u32
    }

    /// [`CdcFifo::commit`], and the events it caused pushed to `out`: the
    /// writer's `Full`/`NotFull`; the reader's `Output` (registered), one
    /// `Visible` per item the synchronized write pointer passed, `Empty`/
    /// `NotEmpty`, and the new FWFT head's `Output`. `sides` gives each
    /// side's domain, cycle and unit (for the event records).
    pub(crate) fn commit_observed(
        &mut self,
        id: u32,
        writer_edge: Option<(u64, u32)>,
        reader_edge: Option<(u64, u32)>,
        out: &mut Vec<FifoEvent>,
    ) {
        let (full, empty) = (self.full, self.empty);
        let (write_pending, read_pending) = (self.write_pending, self.read_pending);
        self.commit(writer_edge.is_some(), reader_edge.is_some());
        let mask = u64::from(self.pointer_mask);
        let t = &mut self.txns;
        let mut event = |kind, domain, (cycle, unit): (u64, u32), txn, occupancy| {
            out.push(FifoEvent {
                fifo: id,
                kind,
                domain,
                cycle,
                time: Timestamp {
                    ticks: 0,
                    ticks_per_ps: 1,
                },
                unit,
                txn,
                occupancy,
            });
        };
        if let Some(side) = writer_edge {
            if write_pending {
                t.writes += 1;
            }
            t.seen_by_writer += (u64::from(self.read_tail).wrapping_sub(t.seen_by_writer)) & mask;
            let occupancy = (t.writes - t.reads) as u32;
            if self.full != full {
                let (kind, txn) = if self.full {
                    (FifoEventKind::Full, t.writes - 1)
                } else {
                    (FifoEventKind::NotFull, t.seen_by_writer.saturating_sub(1))
                };
                event(kind, self.writer_domain, side, txn, occupancy);
            }
        }
        if let Some(side) = reader_edge {
            let domain = self.reader_domain;
            if read_pending {
                t.reads += 1;
            }
            let occupancy = (t.writes - t.reads) as u32;
            if read_pending && self.read_port == ReadPort::Registered {
                t.output = t.reads - 1;
                event(FifoEventKind::Output, domain, side, t.output, occupancy);
            }
            let seen = t.seen_by_reader
                + ((u64::from(self.write_tail).wrapping_sub(t.seen_by_reader)) & mask);
            for txn in t.seen_by_reader..seen {
                event(FifoEventKind::Visible, domain, side, txn, occupancy);
            }
            t.seen_by_reader = seen;
            if self.empty != empty {
                let (kind, txn) = if self.empty {
                    (FifoEventKind::Empty, t.reads.saturating_sub(1))
                } else {
                    (FifoEventKind::NotEmpty, t.reads)
                };
                event(kind, domain, side, txn, occupancy);
            }
            if self.read_port == ReadPort::Fwft && !self.empty && t.next_head <= t.reads {
                event(FifoEventKind::Output, domain, side, t.reads, occupancy);
                t.next_head = t.reads + 1;
            }
        }
    }
}
