//! The engines' [`Host`] on top of the runtime's [`TickCtx`].

use std::cell::Cell;
use std::ffi::c_void;

use chronon_runtime::{AssertId, FifoId, InPort, OutPort, TickCtx};

use crate::host::Host;
use crate::ir::{FaultId, PortId, TraceId};

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
    /// The running group tick's `TickCtx` (null outside one).
    pub(super) tick: Cell<*mut c_void>,
    pub(super) links: Vec<Link>,
    pub(super) faults: Vec<AssertId>,
}

impl RuntimeBinding {
    /// The host for the running group's unit `member`: acts as that unit and
    /// adapts the tick's context.
    ///
    /// # Safety
    /// Only while a group tick of this binding runs (`tick` is its live,
    /// otherwise unborrowed `TickCtx`), and the result must be dropped before
    /// the tick returns.
    #[inline(always)]
    pub(crate) unsafe fn host(&self, member: u32) -> CtxHost<'_, 'static> {
        // SAFETY: guaranteed by the caller; the tick context is only reached
        // through this one host at a time (host calls do not nest).
        let ctx = unsafe { &mut *self.tick.get().cast::<TickCtx<'static>>() };
        ctx.enter(member as usize);
        CtxHost {
            ctx,
            links: &self.links,
            faults: &self.faults,
        }
    }
}

/// Adapts one tick's context.
pub(crate) struct CtxHost<'a, 'b> {
    pub ctx: &'a mut TickCtx<'b>,
    pub links: &'a [Link],
    pub faults: &'a [AssertId],
}

impl Host for CtxHost<'_, '_> {
    fn can_send(&mut self, port: PortId) -> bool {
        match &self.links[port as usize] {
            Link::Out { port, fifos } => {
                self.ctx.can_send(*port) && fifos.iter().all(|f| self.ctx.fifo_can_send(*f))
            }
            _ => false,
        }
    }

    fn send(&mut self, port: PortId, item: &[u64], required: bool) -> bool {
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
            // Refused: `send` reports the first blocked link as the fault;
            // nothing is sent anywhere.
            (false, _) => required && self.ctx.send(*out, item),
            (true, Some(f)) => required && self.ctx.fifo_send(*f, item),
        }
    }

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

    fn request(&mut self, port: PortId) -> bool {
        match &self.links[port as usize] {
            Link::FifoIn(Some(f)) => self.ctx.fifo_request(*f),
            _ => false,
        }
    }

    fn valid(&mut self, port: PortId) -> bool {
        match &self.links[port as usize] {
            Link::FifoIn(Some(f)) => self.ctx.fifo_valid(*f),
            _ => false,
        }
    }

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
