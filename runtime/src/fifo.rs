//! The CDC FIFO: the classic asynchronous FIFO of contract §5, as a deterministic
//! digital model.
//!
//! Pointers are binary counters modulo `2 * depth` (the extra bit is the wrap
//! bit); each side passes its pointer through an `S`-flop synchronizer to the
//! other side. Hardware Gray-codes the pointer before the synchronizer; this
//! model has no metastability, so a Gray encode and decode around the flops is
//! the identity and the rings hold the binary pointer directly. A synchronizer
//! is a ring of the last samples indexed by a wrapping count, so a shift is
//! one store and the tail (the last flop) is the sample taken `S` shifts ago:
//! O(1) per edge for any `S`, with no bounds check or wrap test.
//!
//! During evaluate, operations only record intent (pending write, accepted
//! read, take); [`CdcFifo::commit`] applies both sides of one instant at once,
//! sampling each side's pointer as it was before the instant, so a pointer
//! committed at `t` is never seen by the other side at `t`.
//!
//! What a tick's operations read and write (storage, pointers, flags, the
//! output register and this edge's intent) is a [`FifoState`] with a fixed
//! `#[repr(C)]` layout in its own allocation, so JIT-compiled ticks can run
//! the common operations as loads and stores through its address (see
//! [`crate::ffi::fifo_layout`]) instead of calling the host.

use std::ptr::NonNull;

use crate::channel::copy_item;
use crate::trace::{FifoEvent, FifoEventKind, FifoKinds, Timestamp, TraceBuffer};

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

/// Entries of a synchronizer's ring: a power of two above twice the largest
/// `S`, so an index is a mask (no bounds check, no wrap test) and the value
/// last shifted out is still there for observed commits.
const RING: usize = 128;
const _: () = assert!(RING.is_power_of_two() && RING > 2 * FIFO_SYNC_RANGE.1 as usize - 1);

/// An `S`-flop synchronizer as a ring of the last samples: the tail (the
/// last flop) is the sample taken `S` shifts ago.
#[derive(Debug, Clone)]
struct Synchronizer {
    flops: Box<[u32; RING]>,
    /// Samples taken so far (wrapping), so the next goes to `pos % RING`.
    pos: u32,
    stages: u32,
}

impl Synchronizer {
    fn new(stages: u32) -> Self {
        Synchronizer {
            flops: Box::new([0; RING]),
            pos: 0,
            stages,
        }
    }

    #[inline(always)]
    fn at(&self, back: u32) -> u32 {
        self.flops[self.pos.wrapping_sub(back) as usize & (RING - 1)]
    }

    /// Shifts `sample` in; returns the tail as it was before the shift.
    #[inline(always)]
    fn shift(&mut self, sample: u32) -> u32 {
        let before = self.at(self.stages);
        self.flops[self.pos as usize & (RING - 1)] = sample;
        self.pos = self.pos.wrapping_add(1);
        before
    }

    /// The tail the last shift returned (0 before any).
    fn last_tail(&self) -> u32 {
        self.at(self.stages + 1)
    }
}

/// The hot part of a CDC FIFO: everything its tick operations touch.
///
/// The layout is `#[repr(C)]` and stable within a build: native code reaches
/// the fields at the offsets of [`crate::ffi::fifo_layout`]. Flags are bytes
/// holding 0 or 1. The writer's three flag bytes (`full`, `write_pending`,
/// `observed`) are adjacent so one 16-bit load answers `can_send()`.
#[repr(C)]
#[derive(Debug)]
pub struct FifoState {
    /// `depth * width` words: item `i` of the ring at `(i & slot_mask) * width`.
    pub(crate) storage: *mut u64,
    /// The registered read port's output register (`width` words).
    pub(crate) output: *mut u64,
    /// The write pointer, modulo `2 * depth`.
    pub(crate) write_ptr: u32,
    /// The read pointer, modulo `2 * depth`.
    pub(crate) read_ptr: u32,
    /// `depth - 1`: a pointer's slot index.
    pub(crate) slot_mask: u32,
    /// Words per item.
    pub(crate) width: u32,
    /// The writer's registered `full` flag.
    pub(crate) full: u8,
    /// Whether the writer has written at this edge (one write per edge).
    pub(crate) write_pending: u8,
    /// Whether a sink records FIFO events: native code then calls the host
    /// for the operations that record one.
    pub(crate) observed: u8,
    /// The reader's registered `empty` flag.
    pub(crate) empty: u8,
    /// Whether the reader has accepted a request (or FWFT receive) at this edge.
    pub(crate) read_pending: u8,
    /// Whether the output register holds an item (as before the edge).
    pub(crate) output_valid: u8,
    /// Whether `take()` emptied the output register at this edge.
    pub(crate) taken: u8,
    /// 1 for a first-word-fall-through read port.
    pub(crate) fwft: u8,
    /// 1 when the FIFO stamps its operations instead of recording events
    /// from the tick ([`CdcFifo::set_stamping`]): native code that knows
    /// this byte may then run `try_send`, `send`, `request`, `take` and
    /// `recv` inline and store the sequence number below.
    pub(crate) stamp: u8,
    /// While stamping: the trace buffer's record counter (see
    /// `TraceBuffer::seq_ptr`); null otherwise.
    pub(crate) seq: *mut u32,
    /// While stamping: the sequence number the accepted write of this edge
    /// took (valid while `write_pending`), [`SEQ_PUSHED`] set when its
    /// event was already recorded from the tick.
    pub(crate) write_seq: u32,
    /// Likewise for the accepted request or FWFT receive (`read_pending`).
    pub(crate) read_seq: u32,
    /// Likewise for the registered `take` (`taken`).
    pub(crate) take_seq: u32,
}

/// Set in a [`FifoState`] stamp whose event the tick recorded itself (a
/// unit other than the FIFO's side acted): the commit derives no event
/// from it and uses it only to order the FIFO's operations.
pub(crate) const SEQ_PUSHED: u32 = 1 << 31;

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
    /// The hot state, owned by this FIFO (allocated in [`CdcFifo::new`],
    /// freed in `drop`), with its storage and output register. Rust reaches
    /// it only through [`CdcFifo::st`] and [`CdcFifo::st_mut`]; native code
    /// through the address [`CdcFifo::state_ptr`] hands out, only while a
    /// tick runs, when no reference from those two is alive.
    state: NonNull<FifoState>,
    /// The read pointer as seen by the writer, and the write pointer as seen by the reader.
    read_sync: Synchronizer,
    write_sync: Synchronizer,
    /// The instant this FIFO was last committed, so coincident edges commit once.
    pub(crate) committed_instant: u64,
    /// Transaction bookkeeping for observed runs (see [`CdcFifo::commit_observed`]).
    pub(crate) txns: Txns,
    /// The writer and reader units, named by commit events.
    pub(crate) units: (u32, u32),
    /// The event kinds the sink takes from this FIFO (none: unobserved).
    pub(crate) kinds: FifoKinds,
    /// The writer's and reader's instance path ranks, for the tick events
    /// a stamping FIFO derives at commit.
    pub(crate) ranks: (u32, u32),
}

/// Which stamp of a [`FifoState`] an operation sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StampOp {
    /// `try_send`/`send` (`write_seq`).
    Write,
    /// `request` or FWFT `recv` (`read_seq`).
    Read,
    /// Registered `take` (`take_seq`).
    Take,
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

/// Moves `words` to the heap and returns the allocation's first word;
/// [`free_words`] with the same length gives it back.
pub(crate) fn alloc_words(words: usize) -> *mut u64 {
    Box::into_raw(vec![0u64; words].into_boxed_slice()).cast::<u64>()
}

/// Frees an allocation of [`alloc_words`].
///
/// # Safety
/// `ptr` came from `alloc_words(words)` and is not used afterwards.
pub(crate) unsafe fn free_words(ptr: *mut u64, words: usize) {
    // SAFETY: rebuilds the boxed slice `alloc_words` leaked, same length.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, words)) });
}

impl Drop for CdcFifo {
    fn drop(&mut self) {
        let (depth, width) = (self.depth as usize, self.width);
        // SAFETY: the three allocations are this FIFO's, made in `new` with
        // these sizes; nothing uses them after the FIFO is dropped (native
        // code holding the address runs only inside the simulation's ticks).
        unsafe {
            let state = Box::from_raw(self.state.as_ptr());
            free_words(state.storage, depth * width);
            free_words(state.output, width);
        }
    }
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
        let state = Box::new(FifoState {
            storage: alloc_words(depth as usize * width),
            output: alloc_words(width),
            write_ptr: 0,
            read_ptr: 0,
            slot_mask: depth - 1,
            width: width as u32,
            full: 0,
            write_pending: 0,
            observed: 0,
            empty: 1,
            read_pending: 0,
            output_valid: 0,
            taken: 0,
            fwft: u8::from(read_port == ReadPort::Fwft),
            stamp: 0,
            seq: std::ptr::null_mut(),
            write_seq: 0,
            read_seq: 0,
            take_seq: 0,
        });
        CdcFifo {
            name,
            writer_domain,
            reader_domain,
            read_port,
            width,
            depth,
            pointer_mask: 2 * depth - 1,
            state: NonNull::from(Box::leak(state)),
            read_sync: Synchronizer::new(sync),
            write_sync: Synchronizer::new(sync),
            committed_instant: u64::MAX,
            txns: Txns::default(),
            units: (0, 0),
            kinds: FifoKinds::NONE,
            ranks: (0, 0),
        }
    }

    #[inline(always)]
    fn st(&self) -> &FifoState {
        // SAFETY: the allocation is this FIFO's and live; native code writes
        // it only during a tick, while no Rust reference to it exists (the
        // runtime holds none across a call into a tick).
        unsafe { self.state.as_ref() }
    }

    #[inline(always)]
    fn st_mut(&mut self) -> &mut FifoState {
        // SAFETY: as in `st`; `&mut self` makes this the only Rust reference.
        unsafe { self.state.as_mut() }
    }

    /// The hot state's address, for native code (see [`FifoState`]). It stays
    /// valid, and the same, for the FIFO's life.
    pub(crate) fn state_ptr(&self) -> *mut FifoState {
        self.state.as_ptr()
    }

    /// The ring's words.
    #[inline(always)]
    fn storage_mut(&mut self) -> &mut [u64] {
        let words = self.depth as usize * self.width;
        // SAFETY: `storage` holds `depth * width` words owned by this FIFO
        // (see `st`); `&mut self` makes the slice the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.st().storage, words) }
    }

    /// The item at `pointer` in the ring.
    #[inline(always)]
    fn item(&self, pointer: u32) -> &[u64] {
        let s = self.st();
        let at = (pointer & s.slot_mask) as usize * self.width;
        // SAFETY: `at + width <= depth * width` words of `storage` (see `st`).
        unsafe { std::slice::from_raw_parts(s.storage.add(at), self.width) }
    }

    /// The output register's words.
    #[inline(always)]
    fn output(&self) -> &[u64] {
        // SAFETY: `output` holds `width` words owned by this FIFO (see `st`).
        unsafe { std::slice::from_raw_parts(self.st().output, self.width) }
    }

    /// Sets the event kinds the sink takes from this FIFO, and tells native
    /// code whether FIFO operations may record events (some kind is
    /// wanted): it then calls the host for them.
    pub(crate) fn set_observed(&mut self, kinds: FifoKinds) {
        self.kinds = kinds;
        self.st_mut().observed = u8::from(!kinds.is_empty());
    }

    /// Makes an observed FIFO stamp its tick operations with the trace
    /// buffer's counter `seq` (null: stop stamping) instead of recording
    /// their events from the tick; [`CdcFifo::commit_observed`] then
    /// derives the `Write`, `Read` and `Consume` events from the stamps,
    /// the same records in the same order. The tick pays a counter
    /// increment instead of building a record, and JIT code keeps its
    /// inline operations. `ranks`: the writer's and reader's path ranks.
    pub(crate) fn set_stamping(&mut self, seq: *mut u32, ranks: (u32, u32)) {
        self.ranks = ranks;
        let s = self.st_mut();
        s.seq = seq;
        s.stamp = u8::from(!seq.is_null());
    }

    /// Whether operations are stamped (see [`CdcFifo::set_stamping`]).
    #[inline(always)]
    pub(crate) fn stamping(&self) -> bool {
        self.st().stamp != 0
    }

    /// Stores `seq` as the stamp of the operation at `field` (see
    /// [`FifoState::write_seq`]).
    #[inline(always)]
    pub(crate) fn set_stamp(&mut self, op: StampOp, seq: u32) {
        let s = self.st_mut();
        match op {
            StampOp::Write => s.write_seq = seq,
            StampOp::Read => s.read_seq = seq,
            StampOp::Take => s.take_seq = seq,
        }
    }

    /// Whether a sink observes this FIFO at all (some kind of its events
    /// is taken; a stamping FIFO is always observed): the one test the
    /// tick operations make before they finish.
    #[inline(always)]
    pub(crate) fn watched(&self) -> bool {
        self.st().observed != 0
    }

    /// The event an accepted tick operation of kind `op` records, with its
    /// transaction id from the counts before this instant's commit.
    pub(crate) fn op_event(&self, op: StampOp) -> (FifoEventKind, u64) {
        let t = &self.txns;
        match op {
            StampOp::Write => (FifoEventKind::Write, t.writes),
            StampOp::Read if self.read_port == ReadPort::Fwft => (FifoEventKind::Consume, t.reads),
            StampOp::Read => (FifoEventKind::Read, t.reads),
            StampOp::Take => (FifoEventKind::Consume, t.output),
        }
    }

    /// Whether the sink takes this FIFO's `kind` events.
    #[inline(always)]
    pub(crate) fn observes(&self, kind: FifoEventKind) -> bool {
        self.kinds.contains(kind)
    }

    /// Writer: `can_send()`.
    #[inline]
    pub(crate) fn can_send(&self) -> bool {
        let s = self.st();
        (s.full | s.write_pending) == 0
    }

    /// Writer: stores `item` if `can_send()`. The slot at the write pointer is free
    /// (not full), and the reader cannot see it before the pointer is committed
    /// and synchronized, so storing now is the same as storing at commit.
    #[inline]
    pub(crate) fn try_send(&mut self, item: &[u64]) -> bool {
        if !self.can_send() {
            return false;
        }
        let width = self.width;
        let at = (self.st().write_ptr & (self.depth - 1)) as usize * width;
        if let ([word], 1) = (item, width) {
            // The common one-word item: one store, no slice.
            // SAFETY: `at < depth` words of `storage` (see `st`).
            unsafe { *self.st().storage.add(at) = *word };
        } else {
            copy_item(&mut self.storage_mut()[at..at + width], item);
        }
        self.st_mut().write_pending = 1;
        true
    }

    /// Writer: whether this edge has written.
    #[inline]
    pub(crate) fn write_pending(&self) -> bool {
        self.st().write_pending != 0
    }

    /// Writer: the registered `full` flag.
    pub(crate) fn full(&self) -> bool {
        self.st().full != 0
    }

    /// Reader: the registered `empty` flag.
    pub(crate) fn empty(&self) -> bool {
        self.st().empty != 0
    }

    /// Registered reader: `request()`.
    #[inline]
    pub(crate) fn request(&mut self) -> bool {
        let s = self.st_mut();
        // Flags are 0 or 1: the output register is free when it holds
        // nothing or was taken at this edge. Computed without branches
        // (the tick branches once, on the answer).
        let register_free = (s.output_valid ^ 1) | s.taken;
        let accepted = (s.fwft | s.empty | s.read_pending) == 0 && register_free != 0;
        s.read_pending |= u8::from(accepted);
        accepted
    }

    /// Registered reader: `valid()`, the output register as it was before the edge.
    #[inline]
    pub(crate) fn valid(&self) -> bool {
        self.st().output_valid != 0
    }

    /// Registered reader: `take()`; returns whether an item was taken into `out`.
    #[inline]
    pub(crate) fn take(&mut self, out: &mut [u64]) -> bool {
        let s = self.st();
        // Flags are 0 or 1: valid and not yet taken, in one comparison.
        if s.output_valid <= s.taken {
            return false;
        }
        copy_item(out, self.output());
        self.st_mut().taken = 1;
        true
    }

    /// FWFT reader: `peek()`, the head item if one may be received now.
    #[inline]
    pub(crate) fn peek(&self) -> Option<&[u64]> {
        let s = self.st();
        if s.fwft == 0 || (s.empty | s.read_pending) != 0 {
            return None;
        }
        Some(self.item(s.read_ptr))
    }

    /// FWFT reader: `recv()`; at most one per edge.
    #[inline]
    pub(crate) fn recv(&mut self, out: &mut [u64]) -> bool {
        match self.peek() {
            Some(item) => {
                copy_item(out, item);
                self.st_mut().read_pending = 1;
                true
            }
            None => false,
        }
    }

    /// [`CdcFifo::commit`] of an instant where only the writer has an edge,
    /// without the generic branches (the replay loop knows the sides).
    #[inline]
    pub(crate) fn commit_writer(&mut self) {
        let (depth, mask) = (self.depth, self.pointer_mask);
        // SAFETY: as in `commit_reader_seeing`.
        let s = unsafe { &mut *self.state.as_ptr() };
        let tail = self.read_sync.shift(s.read_ptr);
        s.write_ptr = (s.write_ptr + u32::from(s.write_pending)) & mask;
        s.write_pending = 0;
        s.full = u8::from((s.write_ptr.wrapping_sub(tail) & mask) == depth);
    }

    /// [`CdcFifo::commit`] of an instant where only the reader has an edge.
    #[inline]
    pub(crate) fn commit_reader(&mut self) {
        let write_ptr = self.st().write_ptr;
        self.commit_reader_seeing(write_ptr);
    }

    /// The reader's side of a commit: `write_before` is the write pointer
    /// as it was before the instant (what its synchronizer samples).
    #[inline(always)]
    fn commit_reader_seeing(&mut self, write_before: u32) {
        let mask = self.pointer_mask;
        // SAFETY: the state is this FIFO's (see `st`); the synchronizers
        // are separate fields, so the borrows do not overlap.
        let s = unsafe { &mut *self.state.as_ptr() };
        let tail = self.write_sync.shift(write_before);
        if s.read_pending != 0 {
            if s.fwft == 0 {
                let at = (s.read_ptr & s.slot_mask) as usize * self.width;
                // SAFETY: `storage` and `output` are this FIFO's separate
                // allocations of `depth * width` and `width` words, and
                // `at + width <= depth * width`.
                unsafe {
                    if self.width == 1 {
                        *s.output = *s.storage.add(at);
                    } else {
                        std::ptr::copy_nonoverlapping(s.storage.add(at), s.output, self.width);
                    }
                }
                s.output_valid = 1;
            }
            s.read_ptr = (s.read_ptr + 1) & mask;
            s.read_pending = 0;
        } else if s.taken != 0 {
            s.output_valid = 0;
        }
        s.taken = 0;
        s.empty = u8::from(tail == s.read_ptr);
    }

    /// Commits one instant: `writer_edge`/`reader_edge` say which sides have
    /// an edge. Each side samples the other's pointer as it was before the
    /// instant: the writer's side runs first (the read pointer is still the
    /// old one), the reader's is given the old write pointer.
    #[inline]
    pub(crate) fn commit(&mut self, writer_edge: bool, reader_edge: bool) {
        let write_before = self.st().write_ptr;
        if writer_edge {
            self.commit_writer();
        }
        if reader_edge {
            self.commit_reader_seeing(write_before);
        }
    }

    /// Items written and not yet consumed (taken from the output register,
    /// or received at an FWFT port), counting this instant's operations.
    pub(crate) fn in_flight(&self) -> u64 {
        let s = self.st();
        let stored = u64::from(s.write_ptr.wrapping_sub(s.read_ptr) & self.pointer_mask)
            + u64::from(s.write_pending);
        if s.fwft != 0 {
            stored - u64::from(s.read_pending)
        } else {
            stored + u64::from(s.output_valid != 0 && s.taken == 0)
        }
    }

    /// Items in storage after the last commit (no pending write or read
    /// counted): items written minus items read out of the memory, both
    /// committed (an item in the registered output, not yet taken, is not
    /// counted); at the
    /// end of an instant, the value the occupancy watch hands over (see
    /// `Observation::occupancy_watch`).
    #[inline]
    pub(crate) fn committed_occupancy(&self) -> u32 {
        let s = self.st();
        s.write_ptr.wrapping_sub(s.read_ptr) & self.pointer_mask
    }

    /// Items in storage as a tick event of one side (`writer` or reader)
    /// reports them: the transaction counts before the instant (which
    /// start when the FIFO becomes observed: wrapping, as a release build
    /// always computed it, for a sink installed while items are in flight)
    /// and this side's own pending operation, never the other side's. The
    /// two sides of one instant act at the same time; counting whichever
    /// ticked first made a record depend on the order the clocks are
    /// declared in (contract §2, tests/contract/s2_declaration_order_*).
    pub(crate) fn side_occupancy(&self, writer: bool) -> u32 {
        let t = &self.txns;
        let committed = t.writes.wrapping_sub(t.reads);
        let counted = if writer {
            committed.wrapping_add(u64::from(self.write_pending()))
        } else {
            committed.wrapping_sub(u64::from(self.st().read_pending))
        };
        counted as u32
    }

    /// The tick events of this edge's stamped operations, pushed to
    /// `trace` with their stamps as sequence numbers: exactly what
    /// `TickCtx::fifo_event` records at the operation (transaction from
    /// the counts before this commit; occupancy counting the event's own
    /// side only, as `CdcFifo::side_occupancy` does: a take counts a read
    /// of its tick only if it ran before, as the stamps say).
    /// Called before the commit, while the pending flags hold the edge.
    #[inline]
    fn derive_tick_events(
        &self,
        id: u32,
        writer_edge: Option<(u64, u32)>,
        reader_edge: Option<(u64, u32)>,
        trace: &mut TraceBuffer,
    ) {
        let s = self.st();
        let t = &self.txns;
        let kinds = self.kinds;
        let committed = t.writes.wrapping_sub(t.reads);
        // Written plainly (no closures or options): this runs per observed
        // commit and was, written with them, 80 instructions per event.
        if let Some((cycle, _)) = writer_edge
            && s.write_pending != 0
            && s.write_seq & SEQ_PUSHED == 0
            && kinds.contains(FifoEventKind::Write)
        {
            let at = (self.writer_domain, self.ranks.0, self.units.0, cycle);
            let occupancy = committed.wrapping_add(1) as u32;
            trace.push_derived(
                at,
                s.write_seq,
                id,
                FifoEventKind::Write,
                t.writes,
                occupancy,
            );
        }
        let Some((cycle, _)) = reader_edge else {
            return;
        };
        let at = (self.reader_domain, self.ranks.1, self.units.1, cycle);
        // The reader's request (or FWFT receive) and take, in the order
        // they ran (their stamps), so the derived list stays sorted.
        let read = s.read_pending != 0;
        let take = s.taken != 0;
        let read_kind = if s.fwft != 0 {
            FifoEventKind::Consume
        } else {
            FifoEventKind::Read
        };
        let read_event = |trace: &mut TraceBuffer| {
            if s.read_seq & SEQ_PUSHED == 0 && kinds.contains(read_kind) {
                let occupancy = committed.wrapping_sub(1) as u32;
                trace.push_derived(at, s.read_seq, id, read_kind, t.reads, occupancy);
            }
        };
        if read && !(take && s.take_seq & !SEQ_PUSHED < s.read_seq & !SEQ_PUSHED) {
            read_event(trace);
            if !take {
                return;
            }
        }
        if take && s.take_seq & SEQ_PUSHED == 0 && kinds.contains(FifoEventKind::Consume) {
            // The take counts the reader's own request if that ran first.
            let read_before = read && s.read_seq & !SEQ_PUSHED < s.take_seq & !SEQ_PUSHED;
            let occupancy = committed.wrapping_sub(u64::from(read_before)) as u32;
            let kind = FifoEventKind::Consume;
            trace.push_derived(at, s.take_seq, id, kind, t.output, occupancy);
        }
        if read && take && s.take_seq & !SEQ_PUSHED < s.read_seq & !SEQ_PUSHED {
            read_event(trace);
        }
    }

    /// [`CdcFifo::commit`], and the events it caused that the sink takes
    /// (`kinds`, see [`CdcFifo::set_observed`]) pushed to `out`: the
    /// writer's `Full`/`NotFull`; the reader's `Output` (registered), one
    /// `Visible` per item the synchronized write pointer passed, `Empty`/
    /// `NotEmpty`, and the new FWFT head's `Output`. `sides` gives each
    /// side's domain, cycle and unit (for the event records).
    ///
    /// A stamping FIFO ([`CdcFifo::set_stamping`]) first derives its tick
    /// events (`Write`, `Read`, `Consume`) from this edge's stamps into
    /// `trace`'s records, as the tick would have recorded them.
    pub(crate) fn commit_observed(
        &mut self,
        id: u32,
        writer_edge: Option<(u64, u32)>,
        reader_edge: Option<(u64, u32)>,
        trace: &mut TraceBuffer,
    ) {
        if self.stamping() {
            self.derive_tick_events(id, writer_edge, reader_edge, trace);
        }
        let out = &mut trace.commits;
        let (full, empty) = (self.full(), self.empty());
        let (write_pending, read_pending) = (self.write_pending(), self.st().read_pending != 0);
        self.commit(writer_edge.is_some(), reader_edge.is_some());
        let (full_now, empty_now) = (self.full(), self.empty());
        let mask = u64::from(self.pointer_mask);
        // The synchronizer tails this commit saw (read pointer for the
        // writer, write pointer for the reader).
        let (read_tail, write_tail) = (self.read_sync.last_tail(), self.write_sync.last_tail());
        let kinds = self.kinds;
        let t = &mut self.txns;
        // Counts start when the FIFO becomes observed, so with a sink
        // installed while items are in flight they wrap (as a release
        // build always computed them; a debug build panicked).
        // The bookkeeping above and below runs for every observed FIFO (the
        // transaction ids depend on it); only the pushes are selected.
        let mut event = |kind, domain, (cycle, unit): (u64, u32), txn, occupancy| {
            if !kinds.contains(kind) {
                return;
            }
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
            t.seen_by_writer += (u64::from(read_tail).wrapping_sub(t.seen_by_writer)) & mask;
            let occupancy = t.writes.wrapping_sub(t.reads) as u32;
            if full_now != full {
                let (kind, txn) = if full_now {
                    (FifoEventKind::Full, t.writes.wrapping_sub(1))
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
            let occupancy = t.writes.wrapping_sub(t.reads) as u32;
            if read_pending && self.read_port == ReadPort::Registered {
                t.output = t.reads.wrapping_sub(1);
                event(FifoEventKind::Output, domain, side, t.output, occupancy);
            }
            let seen =
                t.seen_by_reader + ((u64::from(write_tail).wrapping_sub(t.seen_by_reader)) & mask);
            if kinds.contains(FifoEventKind::Visible) {
                for txn in t.seen_by_reader..seen {
                    event(FifoEventKind::Visible, domain, side, txn, occupancy);
                }
            }
            t.seen_by_reader = seen;
            if empty_now != empty {
                let (kind, txn) = if empty_now {
                    (FifoEventKind::Empty, t.reads.saturating_sub(1))
                } else {
                    (FifoEventKind::NotEmpty, t.reads)
                };
                event(kind, domain, side, txn, occupancy);
            }
            if self.read_port == ReadPort::Fwft && !empty_now && t.next_head <= t.reads {
                event(FifoEventKind::Output, domain, side, t.reads, occupancy);
                t.next_head = t.reads + 1;
            }
        }
    }
}
