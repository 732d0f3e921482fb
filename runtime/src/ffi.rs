//! `extern "C"` entry points for native (JIT-compiled) ticks.
//!
//! Every function takes the opaque `ctx` pointer a [`NativeTickFn`](crate::NativeTickFn)
//! received, checks its ids, never unwinds, and answers with a status code:
//! [`CHRONON_FALSE`] / [`CHRONON_TRUE`] for questions and operations that can be
//! refused, [`CHRONON_OK`] for the rest, and [`CHRONON_BAD_ID`] for an id that
//! does not exist (a compiler bug; nothing is changed). Item pointers point to
//! `width` words of the port, FIFO or stage register concerned.

use crate::design::{AssertId, FifoId, InPort, OutPort, StageId};
use crate::tick::TickCtx;
use core::ffi::c_void;

/// The answer "no" / "refused" (also "done" for operations without an answer).
pub const CHRONON_FALSE: u32 = 0;
/// The answer "yes" / "done".
pub const CHRONON_TRUE: u32 = 1;
/// Success of an operation without an answer.
pub const CHRONON_OK: u32 = 0;
/// An id that the design does not have.
pub const CHRONON_BAD_ID: u32 = u32::MAX;

/// Reborrows the context.
///
/// # Safety
/// `ctx` must be the pointer passed to the running native tick.
unsafe fn context<'a>(ctx: *mut c_void) -> &'a mut TickCtx<'a> {
    // SAFETY: the caller passes the live `TickCtx` the native tick was given; it
    // is not otherwise borrowed while the native code runs.
    unsafe { &mut *ctx.cast::<TickCtx<'a>>() }
}

fn answer(b: bool) -> u32 {
    if b { CHRONON_TRUE } else { CHRONON_FALSE }
}

/// Builds a `width`-word slice from an item pointer.
///
/// # Safety
/// `item` must point to `width` readable words.
unsafe fn words<'a>(item: *const u64, width: usize) -> &'a [u64] {
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts(item, width) }
}

/// # Safety
/// `out` must point to `width` writable words.
unsafe fn words_mut<'a>(out: *mut u64, width: usize) -> &'a mut [u64] {
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts_mut(out, width) }
}

/// Channel `can_send()`.
///
/// # Safety
/// `ctx` is the native tick's context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_can_send(ctx: *mut c_void, port: u32) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    if port as usize >= ctx.core.channels.outputs.len() {
        return CHRONON_BAD_ID;
    }
    answer(ctx.can_send(OutPort(port)))
}

/// Channel `try_send(item)` (`fault != 0`: `send(item)`, a refusal is a runtime fault).
///
/// # Safety
/// `ctx` is the native tick's context; `item` points to the port's width in words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_send(
    ctx: *mut c_void,
    port: u32,
    item: *const u64,
    fault: u32,
) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    let Some(p) = ctx.core.channels.outputs.get(port as usize) else {
        return CHRONON_BAD_ID;
    };
    // SAFETY: forwarded contract.
    let item = unsafe { words(item, p.width) };
    answer(if fault != 0 {
        ctx.send(OutPort(port), item)
    } else {
        ctx.try_send(OutPort(port), item)
    })
}

/// Channel `recv()` into `out`.
///
/// # Safety
/// `ctx` is the native tick's context; `out` points to the port's width in words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_recv(ctx: *mut c_void, port: u32, out: *mut u64) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    let Some(p) = ctx.core.channels.inputs.get(port as usize) else {
        return CHRONON_BAD_ID;
    };
    // SAFETY: forwarded contract.
    let out = unsafe { words_mut(out, p.width) };
    answer(ctx.recv(InPort(port), out))
}

/// Channel `peek()` into `out`.
///
/// # Safety
/// `ctx` is the native tick's context; `out` points to the port's width in words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_peek(ctx: *mut c_void, port: u32, out: *mut u64) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    let Some(p) = ctx.core.channels.inputs.get(port as usize) else {
        return CHRONON_BAD_ID;
    };
    // SAFETY: forwarded contract.
    let out = unsafe { words_mut(out, p.width) };
    match ctx.peek(InPort(port)) {
        Some(item) => {
            out.copy_from_slice(item);
            CHRONON_TRUE
        }
        None => CHRONON_FALSE,
    }
}

pub use crate::channel::{ChanState, SendState};

/// Byte offsets of [`ChanState`]'s and [`SendState`]'s fields, for native
/// code that runs a channel port's common operations inline through the
/// addresses [`Simulation::chan_send_state`](crate::Simulation::chan_send_state)
/// and [`Simulation::chan_recv_state`](crate::Simulation::chan_recv_state) give.
///
/// Rules for such code (the inline form of [`chronon_can_send`],
/// [`chronon_send`], [`chronon_recv`] and [`chronon_peek`]):
/// - it touches a port's state only while a tick of the port's unit runs;
///   the cycle of that tick is the word at `SEND_CYCLE` (writer) or
///   `RECV_CYCLE` (reader), read at each operation;
/// - a send goes inline only where `SINGLE` is non-null (the port has one
///   connection), else through the host; the reader's side is given only
///   for an input with one connection;
/// - per-cycle counters hold the cycle they count in (`SENT_CYCLE`,
///   `FREED_CYCLE`): a counter of another cycle counts as 0, and the first
///   update in a cycle stores the cycle and restarts the count;
/// - `can_send()` is `sent < RATE` and `LEN + freed < CAPACITY`; an
///   accepted send counts in `SENT`, stores the item at ring slot
///   `(HEAD + LEN) mod CAPACITY` (word `slot * WIDTH` of `ITEMS`), its
///   arrival `cycle + LATENCY` (saturating) at `ARRIVALS[slot]`, and adds 1
///   to `LEN`; a refused `send` (which faults) calls the host;
/// - an item is ready when `LEN > 0` and `ARRIVALS[HEAD] <= cycle`; `peek`
///   reads it, `recv` also moves `HEAD` on (wrapping at `CAPACITY`), takes 1
///   from `LEN` and counts 1 in `FREED`.
///
/// Done this way, an operation has exactly the effect of the matching
/// [`TickCtx`] method.
pub mod chan_layout {
    use super::{ChanState, SendState};
    use core::mem::offset_of;

    /// `*mut u64` ([`ChanState`]): the ring of `capacity * width` words.
    pub const ITEMS: i32 = offset_of!(ChanState, items) as i32;
    /// `*mut u64` ([`ChanState`]): the ring slots' arrival cycles.
    pub const ARRIVALS: i32 = offset_of!(ChanState, arrivals) as i32;
    /// `*const u64` ([`ChanState`]): the reader's cycle cell.
    pub const RECV_CYCLE: i32 = offset_of!(ChanState, recv_cycle) as i32;
    /// `u64` ([`ChanState`]): edges from a send to its arrival.
    pub const LATENCY: i32 = offset_of!(ChanState, latency) as i32;
    /// `u64` ([`ChanState`]): the cycle `FREED` counts in.
    pub const FREED_CYCLE: i32 = offset_of!(ChanState, freed_cycle) as i32;
    /// `u32` ([`ChanState`]): ring slots.
    pub const CAPACITY: i32 = offset_of!(ChanState, capacity) as i32;
    /// `u32` ([`ChanState`]): the oldest item's slot.
    pub const HEAD: i32 = offset_of!(ChanState, head) as i32;
    /// `u32` ([`ChanState`]): items in the ring.
    pub const LEN: i32 = offset_of!(ChanState, len) as i32;
    /// `u32` ([`ChanState`]): items received in cycle `FREED_CYCLE`.
    pub const FREED: i32 = offset_of!(ChanState, freed) as i32;
    /// `*const u64` ([`SendState`]): the writer's cycle cell.
    pub const SEND_CYCLE: i32 = offset_of!(SendState, send_cycle) as i32;
    /// `*mut ChanState` ([`SendState`]): the one connection, or null.
    pub const SINGLE: i32 = offset_of!(SendState, single) as i32;
    /// `u64` ([`SendState`]): the cycle `SENT` counts in.
    pub const SENT_CYCLE: i32 = offset_of!(SendState, sent_cycle) as i32;
    /// `u32` ([`SendState`]): sends in cycle `SENT_CYCLE`.
    pub const SENT: i32 = offset_of!(SendState, sent) as i32;
    /// `u32` ([`SendState`]): sends allowed per edge.
    pub const RATE: i32 = offset_of!(SendState, rate) as i32;
}

pub use crate::fifo::FifoState;

/// Byte offsets of [`FifoState`]'s fields, for native code that runs a CDC
/// FIFO's common operations inline through the address
/// [`Simulation::fifo_state`](crate::Simulation::fifo_state) gives.
///
/// Rules for such code (the inline form of [`chronon_fifo`]):
/// - it reads and writes the state only while a tick of the FIFO's writer
///   (`STORAGE`, `WRITE_PTR`, `SLOT_MASK`, `FULL`, `WRITE_PENDING`) or
///   reader (`OUTPUT`, `READ_PTR`, `SLOT_MASK`, `EMPTY`, `READ_PENDING`,
///   `OUTPUT_VALID`, `TAKEN`, `FWFT`) runs, and only the fields of its side;
/// - flags are bytes holding 0 or 1, pointers are `u32` modulo twice the
///   depth, and item `p` of the ring is at word `(p & slot_mask) * width`
///   of `storage`;
/// - when `OBSERVED` is non-zero, a sink records FIFO events: `try_send`,
///   `send`, `request`, `take` and `recv` must call the host
///   ([`chronon_fifo`]) instead, which records them; `can_send`, `valid`,
///   `peek`, `full` and `empty` record nothing and may stay inline;
/// - a refused `send` (which faults) calls the host.
///
/// Done this way, an operation has exactly the effect of the matching
/// [`TickCtx`] method.
pub mod fifo_layout {
    use super::FifoState;
    use core::mem::offset_of;

    /// `*mut u64`: the ring of `depth * width` words.
    pub const STORAGE: i32 = offset_of!(FifoState, storage) as i32;
    /// `*mut u64`: the registered read port's output register.
    pub const OUTPUT: i32 = offset_of!(FifoState, output) as i32;
    /// `u32`: the write pointer.
    pub const WRITE_PTR: i32 = offset_of!(FifoState, write_ptr) as i32;
    /// `u32`: the read pointer.
    pub const READ_PTR: i32 = offset_of!(FifoState, read_ptr) as i32;
    /// `u32`: `depth - 1`.
    pub const SLOT_MASK: i32 = offset_of!(FifoState, slot_mask) as i32;
    /// `u8`: the writer's registered `full` flag; `WRITE_PENDING` is the
    /// next byte, so a 16-bit load of both is zero exactly when `can_send()`.
    pub const FULL: i32 = offset_of!(FifoState, full) as i32;
    /// `u8`: the writer has written at this edge (set it when writing).
    pub const WRITE_PENDING: i32 = offset_of!(FifoState, write_pending) as i32;
    /// `u8`: a sink records FIFO events (see the rules above).
    pub const OBSERVED: i32 = offset_of!(FifoState, observed) as i32;
    /// `u8`: the reader's registered `empty` flag.
    pub const EMPTY: i32 = offset_of!(FifoState, empty) as i32;
    /// `u8`: a read was accepted at this edge (set it when accepting).
    pub const READ_PENDING: i32 = offset_of!(FifoState, read_pending) as i32;
    /// `u8`: the output register held an item before the edge.
    pub const OUTPUT_VALID: i32 = offset_of!(FifoState, output_valid) as i32;
    /// `u8`: `take()` emptied the output register at this edge (set it when taking).
    pub const TAKEN: i32 = offset_of!(FifoState, taken) as i32;
    /// `u8`: 1 for a first-word-fall-through read port.
    pub const FWFT: i32 = offset_of!(FifoState, fwft) as i32;
    /// `u8`: with `OBSERVED`, 1 when the FIFO stamps its operations: code
    /// that knows it may run `try_send`, `send`, `request`, `take` and
    /// `recv` inline and, for an accepted one, store the counter at `SEQ`
    /// in the operation's stamp (`WRITE_SEQ`; `READ_SEQ` for `request`
    /// and `recv`; `TAKE_SEQ` for `take`) and increment it; the commit
    /// then derives the event. Code that does not know it calls the host.
    pub const STAMP: i32 = offset_of!(FifoState, stamp) as i32;
    /// `*mut u32`: the instant's record counter, while `STAMP` is 1.
    pub const SEQ: i32 = offset_of!(FifoState, seq) as i32;
    /// `u32`: the accepted write's stamp.
    pub const WRITE_SEQ: i32 = offset_of!(FifoState, write_seq) as i32;
    /// `u32`: the accepted request's or FWFT receive's stamp.
    pub const READ_SEQ: i32 = offset_of!(FifoState, read_seq) as i32;
    /// `u32`: the registered take's stamp.
    pub const TAKE_SEQ: i32 = offset_of!(FifoState, take_seq) as i32;

    // The 16-bit `can_send()` load relies on these being adjacent.
    const _: () = assert!(WRITE_PENDING == FULL + 1);
}

/// The CDC FIFO operations [`chronon_fifo`] performs.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FifoOp {
    /// Writer `can_send()`.
    CanSend = 0,
    /// Writer `try_send(item)`.
    TrySend = 1,
    /// Writer `send(item)` (refusal is a fault).
    Send = 2,
    /// Reader `request()`.
    Request = 3,
    /// Reader `valid()`.
    Valid = 4,
    /// Reader `take()` into the item buffer.
    Take = 5,
    /// FWFT reader `recv()` into the item buffer.
    Recv = 6,
    /// FWFT reader `peek()` into the item buffer.
    Peek = 7,
    /// Writer `full` flag.
    Full = 8,
    /// Reader `empty` flag.
    Empty = 9,
}

/// One CDC FIFO operation (`op` is a [`FifoOp`]); `item` is read or written
/// as the operation needs and may be null for the others.
///
/// # Safety
/// `ctx` is the native tick's context; for operations with an item, `item`
/// points to the FIFO's width in words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_fifo(ctx: *mut c_void, fifo: u32, op: u32, item: *mut u64) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    let Some(f) = ctx.core.fifos.get(fifo as usize) else {
        return CHRONON_BAD_ID;
    };
    let width = f.width;
    let id = FifoId(fifo);
    // SAFETY: the caller guarantees `item` (`width` words) for operations
    // with an item, the only ones that call this closure.
    let item_in = || unsafe { words(item, width) };
    // SAFETY: as for `item_in`; the words are written only through this one.
    let item_out = || unsafe { words_mut(item, width) };
    match op {
        0 => answer(ctx.fifo_can_send(id)),
        1 => answer(ctx.fifo_try_send(id, item_in())),
        2 => answer(ctx.fifo_send(id, item_in())),
        3 => answer(ctx.fifo_request(id)),
        4 => answer(ctx.fifo_valid(id)),
        5 => answer(ctx.fifo_take(id, item_out())),
        6 => answer(ctx.fifo_recv(id, item_out())),
        7 => match ctx.fifo_peek(id) {
            Some(head) => {
                item_out().copy_from_slice(head);
                CHRONON_TRUE
            }
            None => CHRONON_FALSE,
        },
        8 => answer(ctx.fifo_full(id)),
        9 => answer(ctx.fifo_empty(id)),
        _ => CHRONON_BAD_ID,
    }
}

/// The stage register operations [`chronon_stage`] performs.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageOp {
    /// `valid(p)`.
    Valid = 0,
    /// `read(p)` into the item buffer (answers whether the pipe is valid).
    Read = 1,
    /// `write(p, item)`.
    Write = 2,
    /// `retain(p)`.
    Retain = 3,
}

/// One stage register operation (`op` is a [`StageOp`]).
///
/// # Safety
/// `ctx` is the native tick's context; for `Read` and `Write`, `item` points to
/// the stage register's width in words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_stage(
    ctx: *mut c_void,
    stage: u32,
    pipe: u32,
    op: u32,
    item: *mut u64,
) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    let Some(s) = ctx.core.stages.get(stage as usize) else {
        return CHRONON_BAD_ID;
    };
    let pipe = pipe as usize;
    if pipe >= s.pipes() {
        return CHRONON_BAD_ID;
    }
    let width = s.read(0).len();
    let id = StageId(stage);
    match op {
        0 => answer(ctx.stage_valid(id, pipe)),
        1 => {
            // SAFETY: forwarded contract.
            let out = unsafe { words_mut(item, width) };
            out.copy_from_slice(ctx.stage_read(id, pipe));
            answer(ctx.stage_valid(id, pipe))
        }
        // SAFETY: forwarded contract.
        2 => answer(ctx.stage_write(id, pipe, unsafe { words(item, width) })),
        3 => answer(ctx.stage_retain(id, pipe)),
        _ => CHRONON_BAD_ID,
    }
}

/// Adds `delta` to the unit's counter `index`.
///
/// # Safety
/// `ctx` is the native tick's context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_count(ctx: *mut c_void, index: u32, delta: u64) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    if index as usize >= ctx.slot.counter_len {
        return CHRONON_BAD_ID;
    }
    ctx.count(index as usize, delta);
    CHRONON_OK
}

/// Emits a trace record with `len` argument words at `args` (may be null if `len` is 0).
///
/// # Safety
/// `ctx` is the native tick's context; `args` points to `len` words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_trace(
    ctx: *mut c_void,
    event: u32,
    args: *const u64,
    len: u32,
) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    let args = if len == 0 {
        &[][..]
    } else {
        // SAFETY: forwarded contract.
        unsafe { words(args, len as usize) }
    };
    ctx.trace(event, args);
    CHRONON_OK
}

/// `finish`.
///
/// # Safety
/// `ctx` is the native tick's context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_finish(ctx: *mut c_void) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { context(ctx) }.finish();
    CHRONON_OK
}

/// In a native run-ahead function ([`crate::NativeEdges`]), after an
/// edge: [`TickCtx::next_edge`] (commit, next cycle and time).
/// `CHRONON_TRUE` to run the next edge, `CHRONON_FALSE` to stop.
///
/// # Safety
/// `ctx` is the native tick's context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_next_edge(ctx: *mut c_void) -> u32 {
    // SAFETY: forwarded contract.
    if unsafe { context(ctx) }.next_edge() {
        CHRONON_TRUE
    } else {
        CHRONON_FALSE
    }
}

/// Raises the declared fault site `assertion` (an assertion or another
/// checked construct), reported with its declared kind.
///
/// # Safety
/// `ctx` is the native tick's context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_assert_failed(ctx: *mut c_void, assertion: u32) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    if assertion as usize >= ctx.core.assertions.len() {
        return CHRONON_BAD_ID;
    }
    ctx.raise(AssertId(assertion));
    CHRONON_OK
}

/// In a group tick, acts as the group's unit `k` from now on (see
/// [`TickCtx::enter`]).
///
/// # Safety
/// `ctx` is the native tick's context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn chronon_enter(ctx: *mut c_void, k: u32) -> u32 {
    // SAFETY: forwarded contract.
    let ctx = unsafe { context(ctx) };
    if ctx.enter(k as usize) {
        CHRONON_OK
    } else {
        CHRONON_BAD_ID
    }
}
