//! What a unit's tick sees: [`TickCtx`], and the [`Tick`] trait units implement.
//!
//! Registers: `reg(i)` reads the value from before the edge; `set_reg(i, v)`
//! writes the value for after it (last write wins). The runtime keeps two copies
//! of every register word (current and next) and copies next over current for
//! the domains that had an edge, at commit.
//!
//! Ids (ports, FIFOs, stage registers, counters, assertions) are the ones the
//! [`DesignBuilder`](crate::DesignBuilder) returned for this unit; using another
//! unit's id is a compiler bug, not checked on the hot path.

use crate::design::{AssertId, FifoId, InPort, OutPort, StageId};
use crate::fault::FaultKind;
use crate::fifo::{SEQ_PUSHED, StampOp};
use crate::sim::{Core, SlotMeta};
use crate::stage::StageWrite;
use crate::trace::{FifoEvent, FifoEventKind, Timestamp};

/// A unit's behaviour at an edge of its domain.
pub trait Tick {
    /// Runs one tick.
    fn tick(&mut self, ctx: &mut TickCtx<'_>);

    /// A native function that does what [`Tick::tick`] does, for the
    /// runtime to call directly (no dynamic dispatch, no Rust frame): it is
    /// called as `function(ctx, data)` with `ctx` the `TickCtx` (for the
    /// [`crate::ffi`] entry points) and returns 0 or a fault status, as a
    /// [`NativeTickFn`] does. `None` (the default): the runtime calls `tick`.
    /// (Building a [`NativeGroup`] is `unsafe`: its maker vouches for it.)
    fn native(&self) -> Option<NativeGroup> {
        None
    }

    /// Whether this tick may stop the run (`finish`, a fault, a non-zero
    /// native status). Run-ahead (see [`Tick::tick_edges`]) lets a domain
    /// whose ticks cannot stop run after the one domain whose ticks can,
    /// bounded by its stop. `true` (the default) is always safe; `false`
    /// is a promise: a tick that says so and stops anyway makes the other
    /// domains' state at the stop inexact.
    fn can_stop(&self) -> bool {
        true
    }

    /// Runs up to `n >= 1` consecutive edges of the tick's domain in one
    /// call (run-ahead, contract §7) and returns how many it completed; it
    /// stops early after an edge at which a stop (`finish`, a fault) was
    /// requested. The runtime calls it only when nothing else can observe
    /// the domain between those edges: no other domain exchanges data with
    /// it, no trace sink is installed, and stops land on the exact instant
    /// (see `docs/architecture.md`, "Run-ahead").
    ///
    /// Each edge must do what [`Tick::tick`] does followed by
    /// [`TickCtx::next_edge`] (which commits the domain's registers, stage
    /// registers and FIFOs, and moves the context's cycle and time to the
    /// next edge), as the default does. The runtime copies the domain's
    /// register words from next to current once more after the call, so a
    /// tick of a domain without stage registers or FIFOs may keep its
    /// registers in locals, skip `next_edge`, compute cycles itself, and
    /// write the registers once at the end.
    fn tick_edges(&mut self, ctx: &mut TickCtx<'_>, n: u64) -> u64 {
        let mut done = 0;
        loop {
            self.tick(ctx);
            done += 1;
            if !ctx.next_edge() || done >= n {
                return done;
            }
        }
    }

    /// A native function that does what [`Tick::tick_edges`] does, for the
    /// runtime to call directly; `None` (the default): the runtime calls
    /// `tick_edges`, or [`Tick::native`] once per edge when offered.
    fn native_edges(&self) -> Option<NativeEdges> {
        None
    }
}

/// A native run-ahead function: `first` and `data` as for a
/// [`NativeGroupFn`]; runs up to `n >= 1` consecutive edges, each as the
/// group function, calling [`TickCtx::next_edge`] (through the context)
/// between two edges, and returns how many it completed (fewer than `n`
/// only after an edge at which `next_edge` said to stop). When it ran all
/// `n`, the runtime calls `next_edge` after the last one itself, so a call
/// with `n = 1` is one plain edge (what the instant loop needs too).
pub type NativeEdgesFn = unsafe extern "C" fn(
    first: *mut core::ffi::c_void,
    data: *mut core::ffi::c_void,
    n: u64,
) -> u64;

/// What [`Tick::native_edges`] offers: a function and its data pointer,
/// called like a [`NativeGroup`].
#[derive(Debug, Clone, Copy)]
pub struct NativeEdges {
    function: NativeEdgesFn,
    first: *mut core::ffi::c_void,
    data: *mut core::ffi::c_void,
    context_slot: *mut *mut core::ffi::c_void,
}

impl NativeEdges {
    /// Wraps `function` and `data`: called as `function(ctx, data, n)` with
    /// `ctx` the `TickCtx` (for the [`crate::ffi`] entry points, among
    /// them `chronon_next_edge`).
    ///
    /// # Safety
    /// As [`NativeGroup::new`], and the function must do per edge what
    /// [`Tick::tick_edges`] requires (see [`NativeEdges::with_context_slot`]).
    pub unsafe fn new(function: NativeEdgesFn, data: *mut core::ffi::c_void) -> Self {
        NativeEdges {
            function,
            first: core::ptr::null_mut(),
            data,
            context_slot: core::ptr::null_mut(),
        }
    }

    /// A function called as `function(first, data, n)` after the runtime
    /// has stored the `TickCtx` pointer at `context_slot`.
    ///
    /// # Safety
    /// As [`NativeGroup::with_context_slot`], and the function must do
    /// what [`NativeEdgesFn`] says. It may leave out [`TickCtx::next_edge`]
    /// between edges only if nothing it does reads the context's cycle or
    /// time or touches runtime state (ports, FIFOs, registers, stage
    /// registers, traces, faults), and it then runs all `n` edges.
    pub unsafe fn with_context_slot(
        function: NativeEdgesFn,
        first: *mut core::ffi::c_void,
        data: *mut core::ffi::c_void,
        context_slot: *mut *mut core::ffi::c_void,
    ) -> Self {
        NativeEdges {
            function,
            first,
            data,
            context_slot,
        }
    }
}

/// A native group function: `ctx` is the running `TickCtx`, `data` what
/// the [`Tick`] that offered it said. Returns 0, or a status that faults.
pub type NativeGroupFn =
    unsafe extern "C" fn(ctx: *mut core::ffi::c_void, data: *mut core::ffi::c_void) -> u32;

/// What [`Tick::native`] offers: a function and its data pointer.
#[derive(Debug, Clone, Copy)]
pub struct NativeGroup {
    function: NativeGroupFn,
    /// What the replay loop calls instead, called the same way: `function`
    /// unless [`NativeGroup::with_unobserved`] says otherwise.
    unobserved: NativeGroupFn,
    /// The first argument, unless the context goes there (null).
    first: *mut core::ffi::c_void,
    data: *mut core::ffi::c_void,
    /// Where to store the context before each call (null: nowhere).
    context_slot: *mut *mut core::ffi::c_void,
    /// Whether `unobserved` may reach the context (false only where
    /// [`NativeGroup::with_unobserved`] says it never does).
    unobserved_reads_context: bool,
}

impl NativeGroup {
    /// Wraps `function` and `data`.
    ///
    /// # Safety
    /// Calling `function(ctx, data)` with a tick's live `TickCtx` must do
    /// what that tick's [`Tick::tick`] does, reach the context only through
    /// the [`crate::ffi`] entry points (or the same `TickCtx` methods) during
    /// the call, never unwind, and `data` must stay valid while the tick that
    /// returns this lives.
    pub unsafe fn new(function: NativeGroupFn, data: *mut core::ffi::c_void) -> Self {
        NativeGroup {
            function,
            unobserved: function,
            first: core::ptr::null_mut(),
            data,
            context_slot: core::ptr::null_mut(),
            unobserved_reads_context: true,
        }
    }

    /// A function called as `function(first, data)` after the runtime has
    /// stored the `TickCtx` pointer at `context_slot` (for code whose first
    /// argument is its own, such as a state pointer).
    ///
    /// # Safety
    /// As [`NativeGroup::new`], with the context reached through
    /// `context_slot`, which must be valid for writes while the tick lives.
    pub unsafe fn with_context_slot(
        function: NativeGroupFn,
        first: *mut core::ffi::c_void,
        data: *mut core::ffi::c_void,
        context_slot: *mut *mut core::ffi::c_void,
    ) -> Self {
        NativeGroup {
            function,
            unobserved: function,
            first,
            data,
            context_slot,
            unobserved_reads_context: true,
        }
    }

    /// The same, with `unobserved` called instead of the function (with
    /// the same arguments) where no trace sink is installed: the replay loop
    /// (`sim::replay`), whose runs record nothing, so no CDC FIFO is
    /// observed (`CdcFifo::set_observed` follows the sink).
    ///
    /// `reads_context` false says that `unobserved` never reaches the
    /// context (it makes no host call): the replay loop then neither stores
    /// the context in the slot nor sets the context's edge and unit fields
    /// for the call, and sets them only if it returns a fault status.
    ///
    /// # Safety
    /// As for the function, and `unobserved` must do what the function
    /// does whenever no FIFO is observed; with `reads_context` false it
    /// must not read the context slot or call any entry point, and must
    /// take the context-slot form ([`NativeGroup::with_context_slot`]).
    pub unsafe fn with_unobserved(self, unobserved: NativeGroupFn, reads_context: bool) -> Self {
        NativeGroup {
            unobserved,
            unobserved_reads_context: reads_context || self.context_slot.is_null(),
            ..self
        }
    }

    /// Whether [`TickCtx::call_native_unobserved_blind`] may call this
    /// group's variant (see [`NativeGroup::with_unobserved`]).
    #[inline(always)]
    pub(crate) fn unobserved_is_blind(&self) -> bool {
        !self.unobserved_reads_context
    }
}

impl<F: FnMut(&mut TickCtx<'_>)> Tick for F {
    fn tick(&mut self, ctx: &mut TickCtx<'_>) {
        self(ctx)
    }
}

/// A native (e.g. JIT-compiled) tick: `ctx` is the `TickCtx` to pass to the
/// `chronon_*` entry points of [`crate::ffi`], `cur` the unit's registers before
/// the edge, `next` the registers after it (both the unit's register count
/// long). Returns 0, or a non-zero status that stops the run with a fault.
pub type NativeTickFn =
    unsafe extern "C" fn(ctx: *mut core::ffi::c_void, cur: *const u64, next: *mut u64) -> u32;

/// A [`Tick`] that calls a native function.
#[derive(Debug, Clone, Copy)]
pub struct NativeTick {
    function: NativeTickFn,
}

impl NativeTick {
    /// Wraps `function`.
    ///
    /// # Safety
    /// `function` must be safe to call with the arguments described on
    /// [`NativeTickFn`], must only touch the unit's `cur`/`next` words and call
    /// the `chronon_*` entry points with the `ctx` it was given, and must not unwind.
    pub unsafe fn new(function: NativeTickFn) -> Self {
        NativeTick { function }
    }
}

impl Tick for NativeTick {
    fn tick(&mut self, ctx: &mut TickCtx<'_>) {
        let range = ctx.slot.reg_base..ctx.slot.reg_base + ctx.slot.reg_len;
        let cur = ctx.core.cur[range.clone()].as_ptr();
        let next = ctx.core.next[range].as_mut_ptr();
        let raw = (ctx as *mut TickCtx<'_>).cast::<core::ffi::c_void>();
        // SAFETY: `NativeTick::new`'s contract: the function reads `cur` and writes
        // `next` within the unit's register range, both live for the call, and uses
        // `raw` only through the `chronon_*` entry points while `ctx` is borrowed here.
        let status = unsafe { (self.function)(raw, cur, next) };
        if status != 0 {
            ctx.fault(FaultKind::TickStatus { status }, String::new());
        }
    }
}

/// Everything a tick can do, for one unit at one edge.
pub struct TickCtx<'a> {
    pub(crate) core: &'a mut Core,
    pub(crate) domain: u32,
    pub(crate) cycle: u64,
    pub(crate) time: u128,
    /// The unit acting (one copy of its [`SlotMeta`] per entered unit).
    pub(crate) slot: SlotMeta,
    /// Every unit's [`SlotMeta`]; the running tick's units are
    /// `metas[group_start..group_start + group_len]` (see [`TickCtx::enter`]).
    pub(crate) metas: &'a [SlotMeta],
    pub(crate) group_start: usize,
    pub(crate) group_len: usize,
}

impl<'a> TickCtx<'a> {
    /// A context for edge `cycle` of `domain` at `time`, before any unit is
    /// entered (the runners set the unit fields).
    #[inline(always)]
    pub(crate) fn at_edge(
        core: &'a mut Core,
        metas: &'a [SlotMeta],
        domain: u32,
        cycle: u64,
        time: u128,
    ) -> Self {
        core.channels.set_cycle(domain, cycle);
        TickCtx {
            domain,
            cycle,
            time,
            slot: SlotMeta {
                unit: 0,
                rank: 0,
                reg_base: 0,
                reg_len: 0,
                counter_base: 0,
                counter_len: 0,
            },
            metas,
            group_start: 0,
            group_len: 0,
            core,
        }
    }

    /// Moves the context to edge `cycle` of `domain` (the channels' cycle
    /// cell too, which native channel operations read).
    #[inline(always)]
    pub(crate) fn enter_edge(&mut self, domain: u32, cycle: u64) {
        self.domain = domain;
        self.cycle = cycle;
        self.core.channels.set_cycle(domain, cycle);
    }

    /// Calls a native group function with this context.
    #[inline(always)]
    pub(crate) fn call_native(&mut self, native: NativeGroup) {
        self.call_native_fn(native, native.function);
    }

    /// Calls a native group function's variant for runs with no trace
    /// sink ([`NativeGroup::with_unobserved`]): only the replay loop, which
    /// runs only while none is installed, calls this.
    #[inline(always)]
    pub(crate) fn call_native_unobserved(&mut self, native: NativeGroup) {
        debug_assert!(!self.core.fifo_observed, "replay loop with FIFOs observed");
        self.call_native_fn(native, native.unobserved);
    }

    /// Calls `native`'s variant for unobserved runs where it never reaches
    /// the context ([`NativeGroup::unobserved_is_blind`]): no context is
    /// stored and none is needed for the call. Returns its status (non-zero:
    /// the caller sets the context's edge and unit, then faults with
    /// [`TickCtx::fault_status`]).
    #[inline(always)]
    pub(crate) fn call_native_unobserved_blind(native: NativeGroup) -> u32 {
        debug_assert!(native.unobserved_is_blind());
        // SAFETY: `NativeGroup::with_unobserved`'s contract: a blind variant
        // takes `first` and `data` (the context-slot form) and never reads
        // the context, so none need be stored.
        unsafe { (native.unobserved)(native.first, native.data) }
    }

    /// Faults with a native function's non-zero `status`.
    #[cold]
    pub(crate) fn fault_status(&mut self, status: u32) {
        self.fault(FaultKind::TickStatus { status }, String::new());
    }

    /// Calls `function`, `native`'s function or its variant, with this
    /// context.
    #[inline(always)]
    fn call_native_fn(&mut self, native: NativeGroup, function: NativeGroupFn) {
        let raw = (self as *mut TickCtx<'a>).cast::<core::ffi::c_void>();
        let first = if native.context_slot.is_null() {
            raw
        } else {
            // SAFETY: `with_context_slot`'s contract: the slot is writable.
            unsafe { *native.context_slot = raw };
            native.first
        };
        // SAFETY: `NativeGroup::new`'s contract: the function does what the
        // tick would, reaching the context only through the entry points
        // while this call lasts, and `data` is live with the runner's tick.
        let status = unsafe { function(first, native.data) };
        if status != 0 {
            self.fault(FaultKind::TickStatus { status }, String::new());
        }
    }

    /// Calls a native run-ahead function for up to `n` edges; returns how
    /// many it completed.
    #[inline(always)]
    pub(crate) fn call_native_edges(&mut self, native: NativeEdges, n: u64) -> u64 {
        let raw = (self as *mut TickCtx<'a>).cast::<core::ffi::c_void>();
        let first = if native.context_slot.is_null() {
            raw
        } else {
            // SAFETY: `with_context_slot`'s contract: the slot is writable.
            unsafe { *native.context_slot = raw };
            native.first
        };
        // SAFETY: `NativeEdges`'s constructors' contract: the function runs
        // the group's edges, reaching the context only through its first
        // argument or the slot while this call lasts.
        let done = unsafe { (native.function)(first, native.data, n) };
        done.clamp(1, n)
    }

    /// Makes `metas[start..start + len]` the running tick's units and acts
    /// as the first, `first` (a copy kept with the runner: no look-up).
    #[inline(always)]
    pub(crate) fn set_group(&mut self, start: usize, len: usize, first: &SlotMeta) {
        self.group_start = start;
        self.group_len = len;
        self.act_as(first);
    }

    #[inline(always)]
    fn act_as(&mut self, m: &SlotMeta) {
        self.slot = *m;
    }

    /// In a group tick ([`DesignBuilder::set_group_tick`](crate::DesignBuilder::set_group_tick)),
    /// acts as the group's unit `k` from now on: registers, counters,
    /// traces, FIFO events and faults are that unit's. A tick starts as unit
    /// 0. Returns false, changing nothing, if the group has no unit `k`.
    #[inline]
    pub fn enter(&mut self, k: usize) -> bool {
        if k >= self.group_len {
            return false;
        }
        match self.metas.get(self.group_start + k) {
            Some(m) => {
                let m = *m;
                self.act_as(&m);
                true
            }
            None => false,
        }
    }

    /// Whether FIFO operations may record events for the sink (it takes
    /// events of some FIFO): they then name the unit acting, so a group
    /// tick that defers [`TickCtx::enter`] must enter before them.
    #[inline]
    pub fn observing(&self) -> bool {
        self.core.fifo_observed
    }

    /// Whether [`TickCtx::trace`] buffers records (the sink takes traces):
    /// a host may skip a trace's set-up when not.
    #[inline]
    pub fn tracing(&self) -> bool {
        self.core.tracing
    }

    /// The number of units the running tick acts for (1 unless it is a group tick).
    #[inline]
    pub fn group_len(&self) -> usize {
        self.group_len
    }

    /// In [`Tick::tick_edges`], after an edge: commits the domain's
    /// registers, stage registers and FIFOs (what the instant loop does
    /// after the domain's ticks) and, unless a stop (`finish`, a fault) was
    /// requested, moves the context to the domain's next edge (cycle, time,
    /// acting as the group's first unit). Returns whether to run that edge.
    /// Outside run-ahead it does nothing and returns false.
    #[inline]
    pub fn next_edge(&mut self) -> bool {
        let crate::sim::Core {
            ahead,
            edges,
            cur,
            next,
            stages,
            fifos,
            stop_requested,
            ..
        } = &mut *self.core;
        if !*ahead {
            return false;
        }
        let edge = &edges[self.domain as usize];
        let (c, n) = (&mut cur[edge.regs.clone()], &next[edge.regs.clone()]);
        for (c, n) in c.iter_mut().zip(n) {
            *c = *n;
        }
        for &s in &edge.stages {
            stages[s as usize].commit();
        }
        for &f in &edge.fifos {
            fifos[f as usize].commit(true, true);
        }
        if *stop_requested {
            return false;
        }
        self.cycle += 1;
        self.time += edge.period;
        self.core.channels.set_cycle(self.domain, self.cycle);
        if let Some(m) = self.metas.get(self.group_start).copied() {
            self.act_as(&m);
        }
        true
    }
}

impl TickCtx<'_> {
    /// The running unit.
    #[inline]
    pub fn unit(&self) -> u32 {
        self.slot.unit
    }

    /// The unit's domain.
    #[inline]
    pub fn domain(&self) -> u32 {
        self.domain
    }

    /// The domain's local cycle (edge index).
    #[inline]
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The exact time of the instant.
    #[inline]
    pub fn time(&self) -> Timestamp {
        Timestamp {
            ticks: self.time,
            ticks_per_ps: self.core.ticks_per_ps,
        }
    }

    /// Register word `i` as it was before the edge.
    #[inline]
    pub fn reg(&self, i: usize) -> u64 {
        debug_assert!(i < self.slot.reg_len, "register index beyond the unit");
        self.core.cur[self.slot.reg_base + i]
    }

    /// Writes register word `i` for after the edge (the last write wins).
    #[inline]
    pub fn set_reg(&mut self, i: usize, value: u64) {
        debug_assert!(i < self.slot.reg_len, "register index beyond the unit");
        self.core.next[self.slot.reg_base + i] = value;
    }

    /// All the unit's register words as they were before the edge.
    #[inline]
    pub fn regs(&self) -> &[u64] {
        &self.core.cur[self.slot.reg_base..self.slot.reg_base + self.slot.reg_len]
    }

    /// `can_send()` on an output port.
    #[inline(always)]
    pub fn can_send(&self, port: OutPort) -> bool {
        self.core.channels.can_send(port.0 as usize, self.cycle)
    }

    /// `try_send(v)`: sends to every destination or to none.
    #[inline(always)]
    pub fn try_send(&mut self, port: OutPort, item: &[u64]) -> bool {
        self.core
            .channels
            .try_send(port.0 as usize, self.cycle, item)
    }

    /// `send(v)`: like `try_send`, but a refused send is a runtime fault.
    #[inline]
    pub fn send(&mut self, port: OutPort, item: &[u64]) -> bool {
        let sent = self.try_send(port, item);
        if !sent {
            self.send_refused(port);
        }
        sent
    }

    /// Reports the fault of a `send(v)` on `port` that was refused: what
    /// [`TickCtx::send`] does after a refusal, for callers that checked
    /// the port themselves.
    #[cold]
    pub fn send_refused(&mut self, port: OutPort) {
        let name = self.core.channels.outputs[port.0 as usize].name.clone();
        self.fault(FaultKind::SendRefused, name);
    }

    /// `recv()` into `out`; returns whether an item was received.
    #[inline(always)]
    pub fn recv(&mut self, port: InPort, out: &mut [u64]) -> bool {
        self.core.channels.recv(port.0 as usize, self.cycle, out)
    }

    /// `recv()` of a one-word item.
    #[inline]
    pub fn recv_word(&mut self, port: InPort) -> Option<u64> {
        let mut word = [0u64];
        self.recv(port, &mut word).then_some(word[0])
    }

    /// `peek()`: the next item without removing it.
    #[inline]
    pub fn peek(&self, port: InPort) -> Option<&[u64]> {
        self.core.channels.peek(port.0 as usize, self.cycle)
    }

    /// CDC FIFO writer: `can_send()` (`!full`, at most one write per edge).
    #[inline(always)]
    pub fn fifo_can_send(&self, fifo: FifoId) -> bool {
        self.core.fifos[fifo.0 as usize].can_send()
    }

    /// CDC FIFO writer: whether this edge has already written (the one
    /// write per edge is taken).
    #[inline]
    pub fn fifo_written(&self, fifo: FifoId) -> bool {
        self.core.fifos[fifo.0 as usize].write_pending()
    }

    /// CDC FIFO writer: the registered `full` flag.
    #[inline]
    pub fn fifo_full(&self, fifo: FifoId) -> bool {
        self.core.fifos[fifo.0 as usize].full()
    }

    /// CDC FIFO reader: the registered `empty` flag.
    #[inline]
    pub fn fifo_empty(&self, fifo: FifoId) -> bool {
        self.core.fifos[fifo.0 as usize].empty()
    }

    /// CDC FIFO writer: `try_send(v)`.
    #[inline(always)]
    pub fn fifo_try_send(&mut self, fifo: FifoId, item: &[u64]) -> bool {
        // One look-up; the event only where a sink takes one (FIFO items
        // in flight are counted from the FIFO's own pointers,
        // `CdcFifo::in_flight`: JIT code writes without calling here).
        let f = &mut self.core.fifos[fifo.0 as usize];
        let sent = f.try_send(item);
        if sent && f.watched() {
            self.fifo_watched(fifo, StampOp::Write);
        }
        sent
    }

    /// CDC FIFO writer: `send(v)`; a refused send is a runtime fault.
    #[inline]
    pub fn fifo_send(&mut self, fifo: FifoId, item: &[u64]) -> bool {
        let sent = self.fifo_try_send(fifo, item);
        if !sent {
            let name = self.core.fifos[fifo.0 as usize].name.clone();
            self.fault(FaultKind::FifoSendRefused, name);
        }
        sent
    }

    /// Registered reader: `request()`; returns whether it was accepted.
    #[inline(always)]
    pub fn fifo_request(&mut self, fifo: FifoId) -> bool {
        let f = &mut self.core.fifos[fifo.0 as usize];
        let accepted = f.request();
        if accepted && f.watched() {
            self.fifo_watched(fifo, StampOp::Read);
        }
        accepted
    }

    /// Registered reader: `valid()` (the output register before the edge).
    #[inline(always)]
    pub fn fifo_valid(&self, fifo: FifoId) -> bool {
        self.core.fifos[fifo.0 as usize].valid()
    }

    /// Registered reader: `take()` into `out`; returns whether there was an item.
    #[inline(always)]
    pub fn fifo_take(&mut self, fifo: FifoId, out: &mut [u64]) -> bool {
        let f = &mut self.core.fifos[fifo.0 as usize];
        let got = f.take(out);
        if got && f.watched() {
            self.fifo_watched(fifo, StampOp::Take);
        }
        got
    }

    /// FWFT reader: `recv()` into `out` (at most one per edge).
    #[inline(always)]
    pub fn fifo_recv(&mut self, fifo: FifoId, out: &mut [u64]) -> bool {
        let f = &mut self.core.fifos[fifo.0 as usize];
        let got = f.recv(out);
        if got && f.watched() {
            self.fifo_watched(fifo, StampOp::Read);
        }
        got
    }

    /// FWFT reader: `peek()`.
    #[inline]
    pub fn fifo_peek(&self, fifo: FifoId) -> Option<&[u64]> {
        self.core.fifos[fifo.0 as usize].peek()
    }

    /// Stage register: `valid(p)` before the edge.
    #[inline]
    pub fn stage_valid(&self, stage: StageId, pipe: usize) -> bool {
        self.core.stages[stage.0 as usize].valid(pipe)
    }

    /// Stage register: `read(p)` before the edge.
    #[inline]
    pub fn stage_read(&self, stage: StageId, pipe: usize) -> &[u64] {
        self.core.stages[stage.0 as usize].read(pipe)
    }

    /// Stage register: `write(p, v)`; a second write or retain of the pipe in
    /// this tick is a runtime fault (the first one stands).
    #[inline]
    pub fn stage_write(&mut self, stage: StageId, pipe: usize, value: &[u64]) -> bool {
        let done = self.core.stages[stage.0 as usize].write(pipe, value);
        self.stage_outcome(stage, pipe, done)
    }

    /// Stage register: `retain(p)`; same rule as [`TickCtx::stage_write`].
    #[inline]
    pub fn stage_retain(&mut self, stage: StageId, pipe: usize) -> bool {
        let done = self.core.stages[stage.0 as usize].retain(pipe);
        self.stage_outcome(stage, pipe, done)
    }

    fn stage_outcome(&mut self, stage: StageId, pipe: usize, done: StageWrite) -> bool {
        if done == StageWrite::Twice {
            let name = self.core.stages[stage.0 as usize].name.clone();
            self.fault(FaultKind::StageWrittenTwice { pipe: pipe as u32 }, name);
            return false;
        }
        true
    }

    /// Adds `delta` to the unit's counter `index` (wrapping, like hardware).
    #[inline]
    pub fn count(&mut self, index: usize, delta: u64) {
        debug_assert!(
            index < self.slot.counter_len,
            "counter index beyond the unit"
        );
        let c = &mut self.core.counters[self.slot.counter_base + index];
        *c = c.wrapping_add(delta);
    }

    /// Emits a trace record (dropped if no sink is installed).
    #[inline]
    pub fn trace(&mut self, event: u32, args: &[u64]) {
        if self.core.tracing {
            self.core.trace.push(
                self.domain,
                self.slot.rank,
                self.slot.unit,
                self.cycle,
                event,
                args,
            );
        }
    }

    /// `finish`: the run stops once this instant has completed.
    #[inline]
    pub fn finish(&mut self) {
        self.core.finish = true;
        self.core.stop_requested = true;
    }

    /// Reports a failed assertion: the run stops at the end of this instant.
    pub fn assertion_failed(&mut self, assertion: AssertId) {
        self.raise(assertion);
    }

    /// Raises a declared fault site with its declared kind and construct: the
    /// run stops at the end of this instant.
    pub fn raise(&mut self, site: AssertId) {
        let (kind, construct) = self.core.assertions.get(site.0 as usize).map_or_else(
            || (FaultKind::Assertion, format!("assertion #{}", site.0)),
            |s| (s.kind.clone(), s.construct.clone()),
        );
        self.fault(kind, construct);
        self.locate_fault(site);
    }

    /// Names `site` as the source of the fault this tick has just reported
    /// (a refused `send` faults in the channel or FIFO, which know no
    /// statement; the caller knows which `send` it was). Does nothing when
    /// the last fault already names a site, or there is none.
    pub fn locate_fault(&mut self, site: AssertId) {
        if let Some(f) = self.core.faults.last_mut()
            && f.site.is_none()
        {
            f.site = Some(site);
        }
    }

    /// What an accepted operation of an observed FIFO does besides the
    /// operation itself: a stamping FIFO stamps it ([`TickCtx::fifo_stamp`]),
    /// another records its event if the sink takes that kind. Out of line
    /// so the unobserved path of the operations above is one flag test
    /// (`set_trace_sink` makes only observed FIFOs stamp).
    #[cold]
    #[inline(never)]
    fn fifo_watched(&mut self, fifo: FifoId, op: StampOp) {
        let f = &self.core.fifos[fifo.0 as usize];
        if f.stamping() {
            self.fifo_stamp(fifo, op);
            return;
        }
        let (kind, txn) = f.op_event(op);
        if f.observes(kind) {
            self.fifo_event(fifo, kind, txn);
        }
    }

    /// Stamps an accepted operation of a stamping FIFO (see
    /// `CdcFifo::set_stamping`) with the instant's next sequence number;
    /// its commit derives the event. A unit other than the FIFO's side
    /// (a hand-written tick may act for any unit) records its event here,
    /// as an unstamped FIFO does, and marks the stamp as recorded.
    fn fifo_stamp(&mut self, fifo: FifoId, op: StampOp) {
        let f = &self.core.fifos[fifo.0 as usize];
        let side = if op == StampOp::Write {
            (f.units.0, f.writer_domain)
        } else {
            (f.units.1, f.reader_domain)
        };
        let seq = if side == (self.slot.unit, self.domain) {
            self.core.trace.next_seq()
        } else {
            let (kind, txn) = f.op_event(op);
            let seq = if f.observes(kind) {
                self.fifo_event(fifo, kind, txn)
            } else {
                self.core.trace.next_seq()
            };
            seq | SEQ_PUSHED
        };
        self.core.fifos[fifo.0 as usize].set_stamp(op, seq);
    }

    /// Buffers a FIFO event of this tick (only of a kind the sink takes
    /// from the FIFO); returns its sequence number.
    #[cold]
    fn fifo_event(&mut self, fifo: FifoId, kind: FifoEventKind, txn: u64) -> u32 {
        let f = &self.core.fifos[fifo.0 as usize];
        let event = FifoEvent {
            fifo: fifo.0,
            kind,
            domain: self.domain,
            cycle: self.cycle,
            time: self.time(),
            unit: self.slot.unit,
            txn,
            occupancy: f.side_occupancy(kind == FifoEventKind::Write),
        };
        self.core.trace.push_fifo(self.slot.rank, event)
    }

    /// Records a fault of this unit at this edge.
    pub(crate) fn fault(&mut self, kind: FaultKind, construct: String) {
        let time = self.time();
        self.core
            .record_fault(kind, self.slot.unit, construct, self.cycle, time);
    }
}
