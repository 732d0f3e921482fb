//! Latency-0 channels compiled as wires: the value a unit sends is passed
//! in a machine register to the unit that receives it, inside one inline
//! group function (issue 16: "a `latency 0` channel whose producer sends
//! exactly once per edge and whose consumer receives exactly once per edge
//! becomes a plain value passed between the two units' code").
//!
//! Why it is exact. A channel qualifies when its latency is 0, it is the
//! only connection of both its ports (no fan-in, no fan-out, no CDC FIFO on
//! the output), both units are in the same inline group with the sender
//! first (the runtime's order puts a latency-0 sender first), the sender's
//! code has exactly one operation on the port, a `send` or `try_send` at the
//! top level of its tick (run at every edge, not inside an `if`), and the
//! receiver's code exactly one, a `recv` at the top level. Then at every
//! edge the ring is empty when the sender runs (by induction: whatever was
//! sent at an edge was received at that edge), its rate and capacity are at
//! least 1 and nothing has been freed yet in the cycle, so the send is
//! accepted, and the receive then gets exactly that item (latency 0: it has
//! arrived). Ticks run to their end even when one faults, and runs stop
//! only between instants, so both always run. The channel's state in the
//! runtime stays empty, as the reference's is between instants.
//!
//! The sender's item values are SSA values of the group function; the
//! receiver's locals take them, `try_send` answers 1 and the receive's
//! flag is 1. The send's top-level block dominates the receiver's code in
//! the same edge, so the values are defined wherever they are used.

use std::collections::{HashMap, HashSet};

use crate::ir::{PortId, Program, RecvKind, Stmt};

/// The channels of one inline group compiled as wires.
#[derive(Debug, Default)]
pub(crate) struct Wires {
    /// Wired output ports, and the input each feeds.
    feeds: HashMap<PortId, PortId>,
    /// Wired input ports.
    fed: HashSet<PortId>,
}

/// The port `s` operates on, if it is a port operation.
fn port_of(s: &Stmt) -> Option<PortId> {
    match s {
        Stmt::CanSend { port, .. }
        | Stmt::Send { port, .. }
        | Stmt::Recv { port, .. }
        | Stmt::Request { port, .. }
        | Stmt::Valid { port, .. } => Some(*port),
        _ => None,
    }
}

/// Whether `body` operates on `port` exactly once, at its top level, with
/// a statement `want` accepts.
fn once_at_top(body: &[Stmt], port: PortId, want: impl Fn(&Stmt) -> bool) -> bool {
    let mut uses = 0;
    crate::ir::walk::visit_stmts(body, &mut |s| uses += usize::from(port_of(s) == Some(port)));
    uses == 1 && body.iter().any(|s| port_of(s) == Some(port) && want(s))
}

impl Wires {
    /// The channels of `program` that the inline group `members` (in
    /// order) may compile as wires (see the module doc for the rules).
    pub(crate) fn of(program: &Program, members: &[u32]) -> Wires {
        let position: HashMap<u32, usize> =
            members.iter().enumerate().map(|(k, &u)| (u, k)).collect();
        let mut ends: HashMap<PortId, usize> = HashMap::new();
        for c in &program.channels {
            *ends.entry(c.from).or_default() += 1;
            *ends.entry(c.to).or_default() += 1;
        }
        for f in &program.fifos {
            *ends.entry(f.from).or_default() += 1;
        }
        let mut wires = Wires::default();
        for c in &program.channels {
            let (p, q) = (
                program.ports[c.from as usize].unit,
                program.ports[c.to as usize].unit,
            );
            let in_order = matches!(
                (position.get(&p), position.get(&q)),
                (Some(a), Some(b)) if a < b
            );
            let words = program.ports[c.from as usize].item.len();
            let qualifies = c.latency == 0
                && ends[&c.from] == 1
                && ends[&c.to] == 1
                && in_order
                && words == program.ports[c.to as usize].item.len()
                && once_at_top(
                    &program.units[p as usize].body,
                    c.from,
                    |s| matches!(s, Stmt::Send { value, .. } if value.len() == words),
                )
                && once_at_top(
                    &program.units[q as usize].body,
                    c.to,
                    |s| matches!(s, Stmt::Recv { kind: RecvKind::Recv, dst, .. } if dst.len() == words),
                );
            if qualifies {
                wires.feeds.insert(c.from, c.to);
                wires.fed.insert(c.to);
            }
        }
        wires
    }

    /// The input a wired output feeds.
    pub(crate) fn feeds(&self, out: PortId) -> Option<PortId> {
        self.feeds.get(&out).copied()
    }

    /// Whether `input` is fed by a wire.
    pub(crate) fn is_fed(&self, input: PortId) -> bool {
        self.fed.contains(&input)
    }

    /// Whether `s` is a wired operation (it neither calls the host nor
    /// can be refused).
    pub(crate) fn wired(&self, s: &Stmt) -> bool {
        match s {
            Stmt::Send { port, .. } => self.feeds.contains_key(port),
            Stmt::Recv { port, .. } => self.fed.contains(port),
            _ => false,
        }
    }

    /// How many channels are wires.
    pub(crate) fn len(&self) -> usize {
        self.feeds.len()
    }
}
