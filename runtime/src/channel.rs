//! Same-domain channels with latency, capacity, send rate and credits (contract §4).
//!
//! Each connection is a ring of `capacity` items stamped with their arrival
//! cycle. The ring holds exactly the items sent and not yet received, so credit
//! is `len + freed_this_cycle < capacity`: items received in this cycle keep
//! counting until the next edge (cycle-strict credit return), and items sent
//! earlier in this tick count at once (so a port with rate `R > 1` never exceeds
//! the capacity). Per-cycle counters are stamped with the cycle they belong to,
//! so channels need no commit step.
//!
//! Why the hot state is `#[repr(C)]` and allocated apart: native ticks run
//! the common operations of a port with one connection as loads and stores
//! (see [`crate::ffi::chan_layout`]), so a connection's ring and counters
//! ([`ChanState`]) and an output port's send counters ([`SendState`]) have
//! fixed layouts and addresses for the simulation's life, and each domain's
//! current cycle lives in a cell those states point to (written by the
//! runtime before each of the domain's edges, see [`Channels::set_cycle`]).

use std::ptr::NonNull;

use crate::fifo::{alloc_words, free_words};

/// Copies an item: one-word items (the common case) without a `memcpy` call.
#[inline(always)]
pub(crate) fn copy_item(dst: &mut [u64], src: &[u64]) {
    if let ([d], [v]) = (&mut *dst, src) {
        *d = *v;
    } else {
        dst.copy_from_slice(src);
    }
}

/// Marks a per-cycle counter as belonging to no cycle yet.
const NO_CYCLE: u64 = u64::MAX;

/// The hot state of one connection: its ring of items with their arrival
/// cycles and its per-cycle credit counter.
///
/// Native code reaches the fields at the offsets of
/// [`crate::ffi::chan_layout`], by the rules written there.
#[repr(C)]
#[derive(Debug)]
pub struct ChanState {
    /// `capacity * width` words: ring slot `s` at word `s * width`.
    pub(crate) items: *mut u64,
    /// `capacity` arrival cycles, one per ring slot.
    pub(crate) arrivals: *mut u64,
    /// The reader's domain's cycle cell (the cycle of its running edge).
    pub(crate) recv_cycle: *const u64,
    /// Edges from a send to its arrival.
    pub(crate) latency: u64,
    /// The cycle `freed` counts in.
    pub(crate) freed_cycle: u64,
    /// Ring slots.
    pub(crate) capacity: u32,
    /// Words per item.
    pub(crate) width: u32,
    /// The ring slot of the oldest item.
    pub(crate) head: u32,
    /// Items in the ring.
    pub(crate) len: u32,
    /// Items received in cycle `freed_cycle` (their credit returns at the next edge).
    pub(crate) freed: u32,
}

/// The send counters of one output port, and its one connection if it
/// has exactly one.
///
/// Native code reaches the fields at the offsets of
/// [`crate::ffi::chan_layout`], by the rules written there.
#[repr(C)]
#[derive(Debug)]
pub struct SendState {
    /// The writer's domain's cycle cell (the cycle of its running edge).
    pub(crate) send_cycle: *const u64,
    /// The port's connection when it has exactly one, else null.
    pub(crate) single: *mut ChanState,
    /// The cycle `sent` counts in.
    pub(crate) sent_cycle: u64,
    /// Items sent in cycle `sent_cycle`.
    pub(crate) sent: u32,
    /// Sends allowed per edge.
    pub(crate) rate: u32,
}

/// Moves `value` to the heap for good; [`free_box`] gives it back.
fn leak<T>(value: T) -> NonNull<T> {
    NonNull::from(Box::leak(Box::new(value)))
}

/// Frees an allocation of [`leak`].
///
/// # Safety
/// `ptr` came from `leak` and is not used afterwards.
unsafe fn free_box<T>(ptr: NonNull<T>) {
    // SAFETY: rebuilds the box `leak` leaked.
    drop(unsafe { Box::from_raw(ptr.as_ptr()) });
}

/// One connection from an output port to an input port.
#[derive(Debug)]
pub(crate) struct Connection {
    /// The hot state, owned by this connection (made in
    /// [`Connection::new`], freed in `drop`). Rust reaches it only through
    /// [`Connection::st`] and [`Connection::st_mut`]; native code through
    /// [`Channels::chan_state`]'s address, only while a tick runs, when no
    /// reference from those two is alive.
    state: NonNull<ChanState>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: the allocations are this connection's, made in `new` with
        // these sizes; native code holding their addresses runs only inside
        // the simulation's ticks, never after it is dropped.
        unsafe {
            let st = self.state.as_ref();
            let (capacity, width) = (st.capacity as usize, st.width as usize);
            free_words(st.items, capacity * width);
            free_words(st.arrivals, capacity);
            free_box(self.state);
        }
    }
}

impl Connection {
    fn new(latency: u64, capacity: u32, width: usize, recv_cycle: *const u64) -> Self {
        Connection {
            state: leak(ChanState {
                items: alloc_words(capacity as usize * width),
                arrivals: alloc_words(capacity as usize),
                recv_cycle,
                latency,
                freed_cycle: NO_CYCLE,
                capacity,
                width: width as u32,
                head: 0,
                len: 0,
                freed: 0,
            }),
        }
    }

    #[inline(always)]
    fn st(&self) -> &ChanState {
        // SAFETY: the allocation is this connection's and live; native code
        // writes it only during a tick, while no Rust reference to it exists
        // (the runtime holds none across a call into a tick).
        unsafe { self.state.as_ref() }
    }

    #[inline(always)]
    fn st_mut(&mut self) -> &mut ChanState {
        // SAFETY: as in `st`; `&mut self` makes this the only Rust reference.
        unsafe { self.state.as_mut() }
    }

    /// Items sent and not yet received.
    fn len(&self) -> u32 {
        self.st().len
    }

    #[inline]
    fn has_credit(&self, cycle: u64) -> bool {
        let st = self.st();
        let freed = if st.freed_cycle == cycle { st.freed } else { 0 };
        st.len + freed < st.capacity
    }

    #[inline]
    fn push(&mut self, cycle: u64, item: &[u64]) {
        let st = self.st_mut();
        let mut slot = st.head + st.len;
        if slot >= st.capacity {
            slot -= st.capacity;
        }
        let width = st.width as usize;
        // SAFETY: `slot < capacity`, so the item's words and the arrival
        // lie inside the ring's allocations; no other reference to them is
        // alive (`&mut self`).
        unsafe {
            let at = st.items.add(slot as usize * width);
            copy_item(std::slice::from_raw_parts_mut(at, width), item);
            // An arrival beyond u64 can never be received; saturating keeps it unreachable.
            *st.arrivals.add(slot as usize) = cycle.saturating_add(st.latency);
        }
        st.len += 1;
    }

    /// The arrival cycle of the head item, if there is one.
    #[inline]
    fn head_arrival(&self) -> Option<u64> {
        let st = self.st();
        // SAFETY: `head < capacity` when the ring holds an item.
        (st.len > 0).then(|| unsafe { *st.arrivals.add(st.head as usize) })
    }

    #[inline]
    fn head_item(&self) -> &[u64] {
        let st = self.st();
        let width = st.width as usize;
        // SAFETY: `head < capacity`: its item's words lie inside the ring,
        // which lives as long as `self` and is written only through `&mut self`.
        unsafe { std::slice::from_raw_parts(st.items.add(st.head as usize * width), width) }
    }

    #[inline]
    fn pop(&mut self, cycle: u64) {
        let st = self.st_mut();
        st.head += 1;
        if st.head == st.capacity {
            st.head = 0;
        }
        st.len -= 1;
        if st.freed_cycle != cycle {
            st.freed_cycle = cycle;
            st.freed = 0;
        }
        st.freed += 1;
    }
}

/// An output port: its send counters and the connections it fans out to.
#[derive(Debug)]
pub(crate) struct OutputPort {
    pub(crate) name: String,
    pub(crate) width: usize,
    pub(crate) connections: Vec<u32>,
    /// Owned as [`Connection::state`] is.
    send: NonNull<SendState>,
}

impl Drop for OutputPort {
    fn drop(&mut self) {
        // SAFETY: made in `add_output`; native code holding the address runs
        // only inside the simulation's ticks.
        unsafe { free_box(self.send) };
    }
}

impl OutputPort {
    #[inline(always)]
    fn send(&self) -> &SendState {
        // SAFETY: as in `Connection::st`.
        unsafe { self.send.as_ref() }
    }

    #[inline(always)]
    fn send_mut(&mut self) -> &mut SendState {
        // SAFETY: as in `Connection::st_mut`.
        unsafe { self.send.as_mut() }
    }
}

/// An input port: the connections it merges, in declaration order.
#[derive(Debug)]
pub(crate) struct InputPort {
    pub(crate) width: usize,
    pub(crate) connections: Vec<u32>,
    /// Its domain (whose cycle cell [`ChanState::recv_cycle`] points to).
    domain: u32,
}

/// All ports and connections of a design, and each domain's cycle cell.
#[derive(Debug)]
pub(crate) struct Channels {
    pub(crate) outputs: Vec<OutputPort>,
    pub(crate) inputs: Vec<InputPort>,
    pub(crate) connections: Vec<Connection>,
    /// One word per domain: the cycle of its running (or last) edge.
    cycles: NonNull<u64>,
    domains: usize,
}

impl Drop for Channels {
    fn drop(&mut self) {
        // SAFETY: made in `new` with this length; native code reading the
        // cells runs only inside the simulation's ticks. The ports and
        // connections pointing at them are dropped with `self`.
        unsafe { free_words(self.cycles.as_ptr(), self.domains) };
    }
}

impl Channels {
    /// No ports yet, for a design of `domains` clock domains.
    pub(crate) fn new(domains: usize) -> Self {
        let cycles = alloc_words(domains);
        Channels {
            outputs: Vec::new(),
            inputs: Vec::new(),
            connections: Vec::new(),
            cycles: NonNull::new(cycles).unwrap_or(NonNull::dangling()),
            domains,
        }
    }

    /// The address of `domain`'s cycle cell (dangling-safe for no domains:
    /// never read then).
    fn cycle_cell(&self, domain: u32) -> *const u64 {
        debug_assert!((domain as usize) < self.domains || self.domains == 0);
        self.cycles.as_ptr().wrapping_add(domain as usize)
    }

    /// Makes `cycle` the cycle of `domain`'s running edge, for native code
    /// that reads it through a [`ChanState`] or [`SendState`].
    #[inline(always)]
    pub(crate) fn set_cycle(&mut self, domain: u32, cycle: u64) {
        if (domain as usize) < self.domains {
            // SAFETY: in bounds (checked); the cells are this value's and
            // read by native code only while a tick runs, which is not now
            // (`&mut self`), or through the host's own reborrow.
            unsafe { *self.cycles.as_ptr().add(domain as usize) = cycle };
        }
    }

    pub(crate) fn add_output(&mut self, name: String, width: usize, rate: u32, domain: u32) -> u32 {
        let send = leak(SendState {
            send_cycle: self.cycle_cell(domain),
            single: std::ptr::null_mut(),
            sent_cycle: NO_CYCLE,
            sent: 0,
            rate,
        });
        self.outputs.push(OutputPort {
            name,
            width,
            connections: Vec::new(),
            send,
        });
        (self.outputs.len() - 1) as u32
    }

    pub(crate) fn add_input(&mut self, width: usize, domain: u32) -> u32 {
        self.inputs.push(InputPort {
            width,
            connections: Vec::new(),
            domain,
        });
        (self.inputs.len() - 1) as u32
    }

    pub(crate) fn connect(&mut self, from: u32, to: u32, latency: u64, capacity: u32) -> u32 {
        let out = &self.outputs[from as usize];
        let recv_cycle = self.cycle_cell(self.inputs[to as usize].domain);
        let conn = Connection::new(latency, capacity, out.width, recv_cycle);
        self.connections.push(conn);
        let id = (self.connections.len() - 1) as u32;
        let out = &mut self.outputs[from as usize];
        out.connections.push(id);
        let single = match out.connections[..] {
            [c] => self.connections[c as usize].state.as_ptr(),
            _ => std::ptr::null_mut(),
        };
        out.send_mut().single = single;
        self.inputs[to as usize].connections.push(id);
        id
    }

    /// Items sent and not yet received, over every connection.
    pub(crate) fn in_flight(&self) -> u64 {
        self.connections.iter().map(|c| u64::from(c.len())).sum()
    }

    /// The send state of output `port` when it has exactly one connection,
    /// for native code (layout and rules: [`crate::ffi::chan_layout`]);
    /// fixed for the simulation's life.
    pub(crate) fn send_state(&self, port: usize) -> Option<*mut SendState> {
        let out = self.outputs.get(port)?;
        (out.connections.len() == 1).then_some(out.send.as_ptr())
    }

    /// The state of input `port`'s connection when it has exactly one, for
    /// native code (layout and rules: [`crate::ffi::chan_layout`]).
    pub(crate) fn chan_state(&self, port: usize) -> Option<*mut ChanState> {
        match self.inputs.get(port)?.connections[..] {
            [c] => Some(self.connections[c as usize].state.as_ptr()),
            _ => None,
        }
    }

    /// The states of input `port`'s connections when it has several (a
    /// fan-in), in declaration order: the order [`Channels::recv`] breaks
    /// ties of arrival in (layout and rules: [`crate::ffi::chan_layout`]).
    pub(crate) fn fan_in_states(&self, port: usize) -> Option<Vec<*mut ChanState>> {
        let connections = &self.inputs.get(port)?.connections;
        (connections.len() > 1).then(|| {
            connections
                .iter()
                .map(|&c| self.connections[c as usize].state.as_ptr())
                .collect()
        })
    }

    /// `can_send()` of an output port at `cycle` (contract §4).
    #[inline]
    pub(crate) fn can_send(&self, port: usize, cycle: u64) -> bool {
        let out = &self.outputs[port];
        let send = out.send();
        let sent = if send.sent_cycle == cycle {
            send.sent
        } else {
            0
        };
        sent < send.rate
            && out
                .connections
                .iter()
                .all(|&c| self.connections[c as usize].has_credit(cycle))
    }

    /// Sends `item` to every destination or to none; returns whether it was sent.
    #[inline]
    pub(crate) fn try_send(&mut self, port: usize, cycle: u64, item: &[u64]) -> bool {
        if !self.can_send(port, cycle) {
            return false;
        }
        let out = &mut self.outputs[port];
        let send = out.send_mut();
        if send.sent_cycle != cycle {
            send.sent_cycle = cycle;
            send.sent = 0;
        }
        send.sent += 1;
        for &c in &out.connections {
            self.connections[c as usize].push(cycle, item);
        }
        true
    }

    /// The connection holding the input port's next item at `cycle`: the oldest
    /// arrival, ties broken by connection declaration order.
    #[inline]
    fn ready_connection(&self, port: usize, cycle: u64) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for &c in &self.inputs[port].connections {
            if let Some(arrival) = self.connections[c as usize].head_arrival()
                && arrival <= cycle
                && best.is_none_or(|(a, _)| arrival < a)
            {
                best = Some((arrival, c as usize));
            }
        }
        best.map(|(_, c)| c)
    }

    /// Removes the input port's next item into `out`; returns whether there was one.
    #[inline]
    pub(crate) fn recv(&mut self, port: usize, cycle: u64, out: &mut [u64]) -> bool {
        match self.ready_connection(port, cycle) {
            Some(c) => {
                let conn = &mut self.connections[c];
                copy_item(out, conn.head_item());
                conn.pop(cycle);
                true
            }
            None => false,
        }
    }

    /// The input port's next item at `cycle`, without removing it.
    #[inline]
    pub(crate) fn peek(&self, port: usize, cycle: u64) -> Option<&[u64]> {
        self.ready_connection(port, cycle)
            .map(|c| self.connections[c].head_item())
    }
}
