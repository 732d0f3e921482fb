//! The engines' view of everything outside a unit's own state: channels,
//! CDC FIFOs, traces, faults and `finish`.
//!
//! Both engines make exactly the same calls, in the same order, with the
//! same arguments; the differential tests compare these call sequences.

use crate::ir::{FaultId, PortId, TraceId};

/// Services a unit's tick needs from the runtime.
///
/// Item fields travel as canonical 64-bit words, one per flattened field.
pub trait Host {
    /// `port.can_send()`.
    fn can_send(&mut self, port: PortId) -> bool;
    /// Sends `item` on `port` if it can; returns whether it was sent. For a
    /// `send` (not `try_send`), `required` is its fault site: a refusal is
    /// a fault that the host reports itself, naming that site.
    fn send(&mut self, port: PortId, item: &[u64], required: Option<FaultId>) -> bool;
    /// Removes (`remove`) or peeks the head of an input port (channel or fwft
    /// CDC); writes it to `item` and returns whether there was one.
    fn recv(&mut self, port: PortId, remove: bool, item: &mut [u64]) -> bool;
    /// Registered CDC read: `port.request()`.
    fn request(&mut self, port: PortId) -> bool;
    /// Registered CDC read: `port.valid()`.
    fn valid(&mut self, port: PortId) -> bool;
    /// Registered CDC read: `port.take()`; writes the item to `item`.
    fn take(&mut self, port: PortId, item: &mut [u64]) -> bool;
    /// Records a trace event with canonical argument values.
    fn trace(&mut self, trace: TraceId, args: &[u64]);
    /// Records a fault; the run stops at the end of the instant.
    fn fault(&mut self, fault: FaultId);
    /// Records `finish`; the run stops at the end of the instant.
    fn finish(&mut self);
}
