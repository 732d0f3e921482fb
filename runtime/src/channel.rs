//! Same-domain channels with latency, capacity, send rate and credits (contract §4).
//!
//! Each connection is a ring of `capacity` items stamped with their arrival
//! cycle. The ring holds exactly the items sent and not yet received, so credit
//! is `len + freed_this_cycle < capacity`: items received in this cycle keep
//! counting until the next edge (cycle-strict credit return), and items sent
//! earlier in this tick count at once (so a port with rate `R > 1` never exceeds
//! the capacity). Per-cycle counters are stamped with the cycle they belong to,
//! so channels need no commit step.

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

/// One connection from an output port to an input port.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) latency: u64,
    capacity: u32,
    width: usize,
    items: Vec<u64>,
    arrivals: Vec<u64>,
    head: u32,
    len: u32,
    freed_cycle: u64,
    freed: u32,
}

impl Connection {
    pub(crate) fn new(latency: u64, capacity: u32, width: usize) -> Self {
        Connection {
            latency,
            capacity,
            width,
            items: vec![0; capacity as usize * width],
            arrivals: vec![0; capacity as usize],
            head: 0,
            len: 0,
            freed_cycle: NO_CYCLE,
            freed: 0,
        }
    }

    #[inline]
    fn has_credit(&self, cycle: u64) -> bool {
        let freed = if self.freed_cycle == cycle {
            self.freed
        } else {
            0
        };
        self.len + freed < self.capacity
    }

    #[inline]
    fn push(&mut self, cycle: u64, item: &[u64]) {
        let mut slot = self.head + self.len;
        if slot >= self.capacity {
            slot -= self.capacity;
        }
        let at = slot as usize * self.width;
        copy_item(&mut self.items[at..at + self.width], item);
        // An arrival beyond u64 can never be received; saturating keeps it unreachable.
        self.arrivals[slot as usize] = cycle.saturating_add(self.latency);
        self.len += 1;
    }

    /// The arrival cycle of the head item, if there is one.
    #[inline]
    fn head_arrival(&self) -> Option<u64> {
        (self.len > 0).then(|| self.arrivals[self.head as usize])
    }

    #[inline]
    fn head_item(&self) -> &[u64] {
        let at = self.head as usize * self.width;
        &self.items[at..at + self.width]
    }

    #[inline]
    fn pop(&mut self, cycle: u64) {
        self.head += 1;
        if self.head == self.capacity {
            self.head = 0;
        }
        self.len -= 1;
        if self.freed_cycle != cycle {
            self.freed_cycle = cycle;
            self.freed = 0;
        }
        self.freed += 1;
    }
}

/// An output port: its send rate and the connections it fans out to.
#[derive(Debug)]
pub(crate) struct OutputPort {
    pub(crate) name: String,
    pub(crate) width: usize,
    rate: u32,
    pub(crate) connections: Vec<u32>,
    sent_cycle: u64,
    sent: u32,
}

/// An input port: the connections it merges, in declaration order.
#[derive(Debug)]
pub(crate) struct InputPort {
    pub(crate) width: usize,
    pub(crate) connections: Vec<u32>,
}

/// All ports and connections of a design.
#[derive(Debug, Default)]
pub(crate) struct Channels {
    pub(crate) outputs: Vec<OutputPort>,
    pub(crate) inputs: Vec<InputPort>,
    pub(crate) connections: Vec<Connection>,
}

impl Channels {
    pub(crate) fn add_output(&mut self, name: String, width: usize, rate: u32) -> u32 {
        self.outputs.push(OutputPort {
            name,
            width,
            rate,
            connections: Vec::new(),
            sent_cycle: NO_CYCLE,
            sent: 0,
        });
        (self.outputs.len() - 1) as u32
    }

    pub(crate) fn add_input(&mut self, width: usize) -> u32 {
        self.inputs.push(InputPort {
            width,
            connections: Vec::new(),
        });
        (self.inputs.len() - 1) as u32
    }

    pub(crate) fn connect(&mut self, from: u32, to: u32, latency: u64, capacity: u32) -> u32 {
        let width = self.outputs[from as usize].width;
        self.connections
            .push(Connection::new(latency, capacity, width));
        let id = (self.connections.len() - 1) as u32;
        self.outputs[from as usize].connections.push(id);
        self.inputs[to as usize].connections.push(id);
        id
    }

    /// `can_send()` of an output port at `cycle` (contract §4).
    #[inline]
    pub(crate) fn can_send(&self, port: usize, cycle: u64) -> bool {
        let out = &self.outputs[port];
        let sent = if out.sent_cycle == cycle { out.sent } else { 0 };
        sent < out.rate
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
        if out.sent_cycle != cycle {
            out.sent_cycle = cycle;
            out.sent = 0;
        }
        out.sent += 1;
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
