//! The engines' [`Host`] on top of the runtime's [`TickCtx`].

use std::cell::Cell;
use std::ffi::c_void;

use chronon_runtime::ffi::FifoState;
use chronon_runtime::{AssertId, FifoId, InPort, OutPort, Simulation, TickCtx};

use crate::host::Host;
use crate::ir::{FaultId, PortId, Program, TraceId};

/// What an IR port is in the runtime.
pub(crate) enum Link {
    /// An output: its channel port and the CDC FIFOs it writes (fan-out is
    /// all-or-none across both).
    Out {
        /// The runtime output port.
        port: OutPort,
        /// FIFOs written by this port.
        fifos: Vec<FifoId>,
    },
    /// A channel input.
    In(InPort),
    /// A CDC FIFO read port (`None` when nothing writes it).
    FifoIn(Option<FifoId>),
}

/// What JIT group functions call the runtime through: the program's links
/// and fault sites, and the context of the group tick now running.
pub(crate) struct RuntimeBinding {
    /// The running group tick's `TickCtx` (set by each group call; stale
    /// between them, and only read during one).
    pub(super) tick: Cell<*mut c_void>,
    pub(super) links: Vec<Link>,
    pub(super) faults: Vec<AssertId>,
    /// Per IR port: for an output that feeds one CDC FIFO and no channel,
    /// the FIFO, the runtime port and whether its send rate is 1.
    pub(super) fifo_outs: Vec<Option<(FifoId, OutPort, bool)>>,
    /// Per IR port, trace point and fault site: its unit's index in its
    /// group, for inline groups (one context for all their units).
    pub(super) port_member: Vec<u32>,
    pub(super) trace_member: Vec<u32>,
    pub(super) fault_member: Vec<u32>,
    /// Per IR port, the CDC FIFO state inline group functions operate on
    /// directly (their contexts' [`crate::jit::HostCtx::fifos`]), or null:
    /// filled by [`RuntimeBinding::bind_fifos`] once the runtime exists.
    pub(super) fifo_table: Box<[Cell<*mut FifoState>]>,
    /// [`crate::config::ExecConfig::inline_fifo`]: off, every entry stays
    /// null, so one binary measures the inline form against host calls.
    pub(super) inline_fifo: bool,
    /// Per IR port, the channel state inline code operates on directly
    /// (their contexts' [`crate::jit::HostCtx::chans`]), or null: filled by
    /// [`RuntimeBinding::bind_chans`] once the runtime exists.
    pub(super) chan_table: Box<[Cell<*mut c_void>]>,
    /// [`crate::config::ExecConfig::inline_channel`]: off, every entry of
    /// `chan_table` stays null.
    pub(super) inline_channel: bool,
}

impl RuntimeBinding {
    /// A FIFO or channel table of `ports` null entries (every operation
    /// calls the host).
    pub(super) fn no_fifo_table<T>(ports: usize) -> Box<[Cell<*mut T>]> {
        (0..ports)
            .map(|_| Cell::new(std::ptr::null_mut()))
            .collect()
    }

    /// The FIFO table for inline group contexts.
    pub(super) fn fifo_table_ptr(&self) -> *const *mut FifoState {
        // `Cell<T>` has `T`'s layout; the table is never resized.
        self.fifo_table.as_ptr().cast()
    }

    /// The channel table for group contexts.
    pub(super) fn chan_table_ptr(&self) -> *const *mut c_void {
        // `Cell<T>` has `T`'s layout; the table is never resized.
        self.chan_table.as_ptr().cast()
    }

    /// Gives JIT code the address of each channel port state it may
    /// operate on directly: an output that feeds exactly one connection
    /// and no CDC FIFO (its send state), an input with exactly one
    /// connection (that connection's state); items of at least one word.
    /// The runtime's states follow `runtime::channel` field for field, so
    /// an inline operation equals [`BoundHost`]'s (`jit/chan.rs`).
    ///
    /// Without [`RuntimeBinding::inline_channel`] every entry stays null.
    /// Returns how many port entries it filled, and how many fan-ins.
    pub(super) fn bind_chans(&self, sim: &Simulation, program: &Program) -> (usize, usize) {
        let mut bound = 0;
        for (i, entry) in self.chan_table.iter().enumerate() {
            let words = program.ports.get(i).map_or(0, |p| p.item.len());
            let state = match self.links.get(i) {
                _ if !self.inline_channel || words == 0 => None,
                Some(Link::Out { port, fifos }) if fifos.is_empty() => {
                    sim.chan_send_state(*port).map(|s| s.cast::<c_void>())
                }
                Some(Link::In(port)) => sim.chan_recv_state(*port).map(|s| s.cast::<c_void>()),
                _ => None,
            };
            bound += usize::from(state.is_some());
            entry.set(state.unwrap_or(std::ptr::null_mut()));
        }
        let mut fan_ins = 0;
        // A fan-in input's connections, in their slots past the ports'
        // (`jit::chan::fan_in_slots`): all of them, or none when the
        // runtime's connections are not the ones the code was made for.
        for (port, slots) in crate::jit::fan_in_slots(program) {
            let states = match self.links.get(port as usize) {
                Some(Link::In(p)) if self.inline_channel => sim.chan_fan_in(*p),
                _ => None,
            };
            let Some(states) = states.filter(|s| s.len() == slots.len()) else {
                continue;
            };
            for (slot, state) in slots.zip(states) {
                if let Some(entry) = self.chan_table.get(slot as usize) {
                    entry.set(state.cast::<c_void>());
                }
            }
            fan_ins += 1;
        }
        (bound, fan_ins)
    }

    /// Gives JIT code the address of each FIFO it may operate on directly:
    /// the write port of a FIFO that has no channel and a send rate of at
    /// least one (so the channel side of a send is exactly the FIFO's one
    /// write per edge, as in [`BoundHost::send`]'s fast path), and every
    /// FIFO read port; items of at least one word (the runtime stores a
    /// zero-word item as one word, which only the host path writes).
    ///
    /// Without [`RuntimeBinding::inline_fifo`] every entry stays null.
    pub(super) fn bind_fifos(&self, sim: &Simulation, program: &Program) {
        for (i, entry) in self.fifo_table.iter().enumerate() {
            let state = self
                .fifo_to_bind(program, i)
                .and_then(|f| sim.fifo_state(f));
            entry.set(state.unwrap_or(std::ptr::null_mut()));
        }
    }

    /// The FIFO [`RuntimeBinding::bind_fifos`] gives port `i`'s entry
    /// (None: the entry stays null), known before the runtime exists.
    pub(super) fn fifo_to_bind(&self, program: &Program, i: usize) -> Option<FifoId> {
        if !self.inline_fifo {
            return None;
        }
        let port = program.ports.get(i)?;
        let fifo = match self.links.get(i) {
            Some(Link::FifoIn(Some(f))) => Some(*f),
            Some(Link::Out { .. }) if port.rate >= 1 => self.fifo_outs[i].map(|(f, _, _)| f),
            _ => None,
        };
        let words = |p: PortId| program.ports[p as usize].item.len();
        let same_width = program
            .fifos
            .iter()
            .any(|f| (f.from as usize == i || f.to as usize == i) && words(f.from) == words(f.to));
        fifo.filter(|_| !port.item.is_empty() && same_width)
    }

    /// After an edge of a run-ahead loop: the running tick context's
    /// [`TickCtx::next_edge`].
    ///
    /// # Safety
    /// As [`RuntimeBinding::host`]: only while a group tick of this binding
    /// runs, with no other borrow of its context.
    pub(crate) unsafe fn next_edge(&self) -> bool {
        // SAFETY: guaranteed by the caller.
        let ctx = unsafe { &mut *self.tick.get().cast::<TickCtx<'static>>() };
        ctx.next_edge()
    }

    /// The host for the running group's unit `member`.
    ///
    /// # Safety
    /// Only while a group tick of this binding runs (`tick` is its live,
    /// otherwise unborrowed `TickCtx`), and the result must be dropped before
    /// the tick returns.
    #[inline(always)]
    pub(crate) unsafe fn host(&self, member: u32) -> BoundHost<'_> {
        BoundHost {
            binding: self,
            member,
        }
    }
}

/// The host of one unit of a running JIT group: the runtime's `TickCtx`,
/// acting as that unit. The common operations (a send to a channel and at
/// most one FIFO, a FIFO take, request or valid) go straight to the
/// runtime; the rest, and every refusal, go through [`CtxHost`], so the
/// outcome and the fault reported are the same as the interpreter's.
pub(crate) struct BoundHost<'a> {
    binding: &'a RuntimeBinding,
    member: u32,
}

impl BoundHost<'_> {
    /// For an inline group's shared context: takes the unit from the
    /// operation's port, trace or fault (`id` in `table`).
    #[inline(always)]
    fn resolve(&mut self, table: &[u32], id: u32) {
        if self.member == crate::jit::DERIVE_MEMBER {
            self.member = table.get(id as usize).copied().unwrap_or(0);
        }
    }

    /// The tick context, acting as this unit.
    #[inline(always)]
    fn ctx(&mut self) -> &mut TickCtx<'static> {
        // SAFETY: `RuntimeBinding::host`'s contract: `tick` is the running
        // group tick's context, reached only through this host for now
        // (host calls do not nest).
        let ctx = unsafe { &mut *self.binding.tick.get().cast::<TickCtx<'static>>() };
        ctx.enter(self.member as usize);
        ctx
    }

    /// The tick context for an operation that can neither fault nor name
    /// the unit unless FIFO events are recorded: it acts as this unit only
    /// then (entering costs more than the operation itself).
    #[inline(always)]
    fn ctx_quiet(&mut self) -> &mut TickCtx<'static> {
        // SAFETY: as in `BoundHost::ctx`.
        let ctx = unsafe { &mut *self.binding.tick.get().cast::<TickCtx<'static>>() };
        if ctx.observing() {
            ctx.enter(self.member as usize);
        }
        ctx
    }

    /// The general adapter, for everything without a fast path.
    #[inline(always)]
    fn general(&mut self) -> CtxHost<'_, 'static> {
        let binding = self.binding;
        CtxHost {
            ctx: self.ctx(),
            links: &binding.links,
            faults: &binding.faults,
        }
    }

    /// The FIFO read port behind `port`, if it is one.
    #[inline(always)]
    fn fifo_in(&self, port: PortId) -> Option<FifoId> {
        match self.binding.links.get(port as usize) {
            Some(Link::FifoIn(f)) => *f,
            _ => None,
        }
    }
}

impl Host for BoundHost<'_> {
    #[inline]
    fn can_send(&mut self, port: PortId) -> bool {
        let binding = self.binding;
        self.resolve(&binding.port_member, port);
        self.general().can_send(port)
    }

    #[inline]
    fn send(&mut self, port: PortId, item: &[u64], required: Option<FaultId>) -> bool {
        let binding = self.binding;
        self.resolve(&binding.port_member, port);
        if let Some(&Some((fifo, out, rate_one))) = self.binding.fifo_outs.get(port as usize)
            && !item.is_empty()
        {
            // One FIFO and a channel port with no connections: the channel
            // accepts whenever the FIFO does (it has taken no item in this
            // tick then), so only the FIFO is asked; its one write per edge
            // stands for the channel's count of sends in this tick.
            if self.ctx_quiet().fifo_try_send(fifo, item) {
                return true;
            }
            if let Some(site) = required {
                // As `CtxHost::send`: the channel is the first refusing
                // link once its rate is used up, else the FIFO.
                let ctx = self.ctx();
                if rate_one && ctx.fifo_written(fifo) {
                    ctx.send_refused(out);
                } else {
                    ctx.fifo_send(fifo, item);
                }
                ctx.locate_fault(binding.faults[site as usize]);
            }
            return false;
        }
        let links = &self.binding.links;
        if let Some(Link::Out { port: out, fifos }) = links.get(port as usize)
            && !item.is_empty()
            && fifos.len() <= 1
        {
            let (out, fifo) = (*out, fifos.first().copied());
            // Channel sends name no unit; FIFO writes only when observed.
            let ctx = self.ctx_quiet();
            // Accepted by every link: the same sends as `CtxHost::send`. A
            // refusal changes nothing and falls through to it.
            let sent = match fifo {
                None => ctx.try_send(out, item),
                Some(f) => {
                    ctx.fifo_can_send(f) && ctx.try_send(out, item) && {
                        ctx.fifo_try_send(f, item);
                        true
                    }
                }
            };
            // `try_send` refused: nothing was sent and nothing changed, as
            // in `CtxHost::send`; only `send` goes on to report the fault.
            if sent || required.is_none() {
                return sent;
            }
        }
        self.general().send(port, item, required)
    }

    #[inline]
    fn recv(&mut self, port: PortId, remove: bool, item: &mut [u64]) -> bool {
        let binding = self.binding;
        self.resolve(&binding.port_member, port);
        self.general().recv(port, remove, item)
    }

    #[inline]
    fn request(&mut self, port: PortId) -> bool {
        let binding = self.binding;
        self.resolve(&binding.port_member, port);
        match self.fifo_in(port) {
            Some(f) => self.ctx_quiet().fifo_request(f),
            None => false,
        }
    }

    #[inline]
    fn valid(&mut self, port: PortId) -> bool {
        let binding = self.binding;
        self.resolve(&binding.port_member, port);
        match self.fifo_in(port) {
            Some(f) => self.ctx_quiet().fifo_valid(f),
            None => false,
        }
    }

    #[inline]
    fn take(&mut self, port: PortId, item: &mut [u64]) -> bool {
        let binding = self.binding;
        self.resolve(&binding.port_member, port);
        match self.fifo_in(port) {
            Some(f) if !item.is_empty() => self.ctx_quiet().fifo_take(f, item),
            _ => self.general().take(port, item),
        }
    }

    fn trace(&mut self, trace: TraceId, args: &[u64]) {
        // No sink takes traces (a VCD-only recording): nothing to buffer,
        // so no unit to enter and no id to map.
        // SAFETY: as in `BoundHost::ctx`; only read, nothing entered.
        let ctx = unsafe { &*self.binding.tick.get().cast::<TickCtx<'static>>() };
        if !ctx.tracing() {
            return;
        }
        let binding = self.binding;
        self.resolve(&binding.trace_member, trace);
        self.general().trace(trace, args);
    }

    fn fault(&mut self, fault: FaultId) {
        let binding = self.binding;
        self.resolve(&binding.fault_member, fault);
        self.general().fault(fault);
    }

    fn finish(&mut self) {
        // `finish` names no unit: any of the group's will do.
        self.resolve(&[], 0);
        self.general().finish();
    }
}

/// Adapts one tick's context.
pub(crate) struct CtxHost<'a, 'b> {
    pub ctx: &'a mut TickCtx<'b>,
    pub links: &'a [Link],
    pub faults: &'a [AssertId],
}

impl CtxHost<'_, '_> {
    /// After a refused `send` that the runtime has reported: names the
    /// statement's fault site `required` as the fault's source; answers
    /// false (nothing was sent).
    #[cold]
    fn located(&mut self, required: Option<FaultId>) -> bool {
        if let Some(site) = required {
            self.ctx.locate_fault(self.faults[site as usize]);
        }
        false
    }
}

impl Host for CtxHost<'_, '_> {
    #[inline]
    fn can_send(&mut self, port: PortId) -> bool {
        match &self.links[port as usize] {
            Link::Out { port, fifos } => {
                self.ctx.can_send(*port) && fifos.iter().all(|f| self.ctx.fifo_can_send(*f))
            }
            _ => false,
        }
    }

    #[inline]
    fn send(&mut self, port: PortId, item: &[u64], required: Option<FaultId>) -> bool {
        let Link::Out { port: out, fifos } = &self.links[port as usize] else {
            return false;
        };
        let empty = [0u64];
        let item = if item.is_empty() { &empty[..] } else { item };
        let channel_ok = self.ctx.can_send(*out);
        let blocked_fifo = fifos.iter().find(|f| !self.ctx.fifo_can_send(**f));
        match (channel_ok, blocked_fifo) {
            (true, None) => {
                let sent = self.ctx.try_send(*out, item);
                for f in fifos {
                    self.ctx.fifo_try_send(*f, item);
                }
                sent
            }
            // Refused: `send` reports the first blocked link as the fault,
            // at its site; nothing is sent anywhere.
            (_, _) if required.is_none() => false,
            (false, _) => {
                self.ctx.send(*out, item);
                self.located(required)
            }
            (true, Some(f)) => {
                self.ctx.fifo_send(*f, item);
                self.located(required)
            }
        }
    }

    #[inline]
    fn recv(&mut self, port: PortId, remove: bool, item: &mut [u64]) -> bool {
        let got = match (&self.links[port as usize], remove) {
            (Link::In(p), true) => return recv_into(item, |buf| self.ctx.recv(*p, buf)),
            (Link::In(p), false) => self.ctx.peek(*p),
            (Link::FifoIn(Some(f)), true) => {
                return recv_into(item, |buf| self.ctx.fifo_recv(*f, buf));
            }
            (Link::FifoIn(Some(f)), false) => self.ctx.fifo_peek(*f),
            _ => None,
        };
        match got {
            Some(words) => {
                copy_item(item, words);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn request(&mut self, port: PortId) -> bool {
        match &self.links[port as usize] {
            Link::FifoIn(Some(f)) => self.ctx.fifo_request(*f),
            _ => false,
        }
    }

    #[inline]
    fn valid(&mut self, port: PortId) -> bool {
        match &self.links[port as usize] {
            Link::FifoIn(Some(f)) => self.ctx.fifo_valid(*f),
            _ => false,
        }
    }

    #[inline]
    fn take(&mut self, port: PortId, item: &mut [u64]) -> bool {
        match &self.links[port as usize] {
            Link::FifoIn(Some(f)) => recv_into(item, |buf| self.ctx.fifo_take(*f, buf)),
            _ => false,
        }
    }

    fn trace(&mut self, trace: TraceId, args: &[u64]) {
        self.ctx.trace(trace, args);
    }

    fn fault(&mut self, fault: FaultId) {
        self.ctx.raise(self.faults[fault as usize]);
    }

    fn finish(&mut self) {
        self.ctx.finish();
    }
}

/// Items of no fields still travel as one word in the runtime.
fn recv_into(item: &mut [u64], read: impl FnOnce(&mut [u64]) -> bool) -> bool {
    if item.is_empty() {
        let mut word = [0u64];
        read(&mut word)
    } else {
        read(item)
    }
}

fn copy_item(item: &mut [u64], words: &[u64]) {
    let n = item.len().min(words.len());
    item[..n].copy_from_slice(&words[..n]);
}
