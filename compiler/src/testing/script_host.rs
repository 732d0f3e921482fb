//! A deterministic stand-in host for differential tests of the engines:
//! it answers every call from a seeded pseudo-random stream and logs every
//! call with its arguments, so two engines can be compared call by call.

use crate::host::Host;
use crate::ir::{FaultId, PortId, Program, TraceId, Ty};

use super::rng::Rng;

/// One logged host call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `can_send(port)` and its answer.
    CanSend(PortId, bool),
    /// `send(port, item, required)` and its answer.
    Send(PortId, Vec<u64>, Option<FaultId>, bool),
    /// `recv(port, remove)` and what it gave.
    Recv(PortId, bool, Option<Vec<u64>>),
    /// `request(port)` and its answer.
    Request(PortId, bool),
    /// `valid(port)` and its answer.
    Valid(PortId, bool),
    /// `take(port)` and what it gave.
    Take(PortId, Option<Vec<u64>>),
    /// A trace event.
    Trace(TraceId, Vec<u64>),
    /// A fault.
    Fault(FaultId),
    /// `finish`.
    Finish,
}

/// Answers calls from a seeded stream and logs them.
pub struct ScriptHost {
    rng: Rng,
    items: Vec<Vec<Ty>>,
    /// Every call so far, in order.
    pub log: Vec<Call>,
}

impl ScriptHost {
    /// A host for `program` whose answers follow `seed`.
    pub fn new(program: &Program, seed: u64) -> Self {
        ScriptHost {
            rng: Rng::new(seed),
            items: program.ports.iter().map(|p| p.item.clone()).collect(),
            log: Vec::new(),
        }
    }

    fn answer(&mut self) -> bool {
        self.rng.below(4) != 0
    }

    fn item(&mut self, port: PortId, out: &mut [u64]) -> Vec<u64> {
        let tys = &self.items[port as usize];
        let values: Vec<u64> = tys.iter().map(|ty| self.rng.next() & ty.mask()).collect();
        out.copy_from_slice(&values);
        values
    }
}

impl Host for ScriptHost {
    fn can_send(&mut self, port: PortId) -> bool {
        let a = self.answer();
        self.log.push(Call::CanSend(port, a));
        a
    }

    fn send(&mut self, port: PortId, item: &[u64], required: Option<FaultId>) -> bool {
        let a = self.answer();
        self.log.push(Call::Send(port, item.to_vec(), required, a));
        a
    }

    fn recv(&mut self, port: PortId, remove: bool, item: &mut [u64]) -> bool {
        let got = self.answer().then(|| self.item(port, item));
        let ok = got.is_some();
        self.log.push(Call::Recv(port, remove, got));
        ok
    }

    fn request(&mut self, port: PortId) -> bool {
        let a = self.answer();
        self.log.push(Call::Request(port, a));
        a
    }

    fn valid(&mut self, port: PortId) -> bool {
        let a = self.answer();
        self.log.push(Call::Valid(port, a));
        a
    }

    fn take(&mut self, port: PortId, item: &mut [u64]) -> bool {
        let got = self.answer().then(|| self.item(port, item));
        let ok = got.is_some();
        self.log.push(Call::Take(port, got));
        ok
    }

    fn trace(&mut self, trace: TraceId, args: &[u64]) {
        self.log.push(Call::Trace(trace, args.to_vec()));
    }

    fn fault(&mut self, fault: FaultId) {
        self.log.push(Call::Fault(fault));
    }

    fn finish(&mut self) {
        self.log.push(Call::Finish);
    }
}
