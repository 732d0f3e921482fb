//! Channel operations as loads and stores on the runtime's channel state.
//!
//! A bound run gives every JIT function, through its context's
//! [`HostCtx::chans`](crate::jit::HostCtx::chans) table, the address of
//! the runtime's state behind each IR port whose channel operations may run
//! inline (null for the others: see `simulate::RuntimeBinding::bind_chans`):
//! an output's [`SendState`](chronon_runtime::ffi::SendState) (its one
//! connection reached through it), an input's one connection's
//! [`ChanState`](chronon_runtime::ffi::ChanState). The code generator loads
//! the entries of the ports its units use once, at the function's entry, and
//! emits each `can_send`, `send`, `try_send`, `recv` and `peek` on such a
//! port as a branch on the entry:
//!
//! - null: the operation as before (the FIFO form of the `fifo` module where
//!   the port may be a FIFO's, else the host call);
//! - else the operation itself, following `runtime::channel` field for field
//!   (layout and rules: [`chronon_runtime::ffi::chan_layout`]), except a
//!   refused `send`, which faults through the host.
//!
//! An input with several connections (a fan-in: four ALUs into one
//! writeback) has no entry of its own; in a program whose ports are
//! absolute, its connections' states sit in slots past the ports'
//! ([`crate::jit::fan_in_slots`]), and `recv` and `peek` pick the
//! connection whose head item arrived first, ties to the earlier
//! connection (contract §4's merge order, as the runtime's
//! `ready_connection`), then run the one-connection code on it.
//!
//! Why: a design of many small units joined by channels spent most of its
//! time in host calls (issue 16: 86% of a 16-stage channel pipeline's
//! samples were the send and receive calls). Channels record no events, so
//! unlike a FIFO's, their inline form needs no observed test. The
//! interpreter always calls the host and stays the reference.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, Value, types};

use chronon_runtime::ffi::chan_layout as at;

use super::{Gen, I64, flags};
use crate::ir::{PortId, Program, RecvKind, Stmt};
use crate::jit::host_abi::idx;

/// Whether operations on `port` are emitted with an inline channel path:
/// an end of a channel, or any port of a unit shape (whose ports are
/// relative: the entry decides at run time).
fn chan_port(p: &Program, port: PortId) -> bool {
    p.ports.is_empty() || p.channels.iter().any(|c| c.from == port || c.to == port)
}

/// The port of a channel operation `s` with at least one item word (a
/// zero-word item always takes the host path).
fn chan_op_port(p: &Program, s: &Stmt) -> Option<PortId> {
    let port = match s {
        Stmt::CanSend { port, .. } => *port,
        Stmt::Send { port, value, .. } if !value.is_empty() => *port,
        Stmt::Recv {
            port, kind, dst, ..
        } if *kind != RecvKind::Take && !dst.is_empty() => *port,
        _ => return None,
    };
    chan_port(p, port).then_some(port)
}

/// The channel ports that operations of `units` name, in first-use order.
fn ports(p: &Program, units: &[u32]) -> Vec<PortId> {
    let mut ports = Vec::new();
    for &u in units {
        crate::ir::walk::visit_stmts(&p.units[u as usize].body, &mut |s| {
            if let Some(port) = chan_op_port(p, s)
                && !ports.contains(&port)
            {
                ports.push(port);
            }
        });
    }
    ports
}

impl Gen<'_> {
    /// At the function's entry: the channel table entries of the channel
    /// ports that `units` use but not as wires (entries do not change
    /// during a call).
    pub(super) fn chan_prepare(&mut self, units: &[u32]) {
        let offset = std::mem::offset_of!(super::super::HostCtx<'static>, chans) as i32;
        let mut ports = ports(self.p, units);
        ports.retain(|&port| self.wires.feeds(port).is_none() && !self.wires.is_fed(port));
        // A unit shape's ports are relative: its fan-ins take the host.
        if !self.p.ports.is_empty() && ports.iter().any(|&p| self.fan_in_recv(p)) {
            for (port, slots) in crate::jit::fan_in_slots(self.p) {
                if ports.contains(&port) {
                    ports.extend(slots.clone());
                    self.fan_in.insert(port, slots);
                }
            }
        }
        self.chan_entries =
            super::entries::Entries::prepare(&mut self.b, self.ptr, self.ctx, offset, ports);
    }

    /// Whether `port` may be a fan-in input (several connections in); the
    /// slots say which are.
    fn fan_in_recv(&self, port: PortId) -> bool {
        (self.p.ports.get(port as usize)).is_some_and(|p| p.kind == crate::ir::PortKind::In)
    }

    /// Emits `s` if it is a channel operation on a port prepared above;
    /// returns whether it did (else the caller emits it).
    pub(super) fn chan_stmt(&mut self, s: &Stmt) -> bool {
        let Some(port) = chan_op_port(self.p, s) else {
            return false;
        };
        // A fan-in's connections: the first entry decides (all are bound
        // or none), the first ready head is the one to take.
        let fan_in = match (s, self.fan_in.get(&port).cloned()) {
            (Stmt::Recv { .. }, Some(slots)) => slots
                .map(|slot| self.chan_entries.get(&mut self.b, self.ptr, slot))
                .collect::<Option<Vec<Value>>>(),
            _ => None,
        };
        let entry = match &fan_in {
            Some(conns) => conns[0],
            None => match self.chan_entries.get(&mut self.b, self.ptr, port) {
                Some(entry) => entry,
                None => return false,
            },
        };
        // A send's item is computed once, before the branch.
        let values: Vec<Value> = match s {
            Stmt::Send { value, .. } => value.iter().map(|e| self.expr(e)).collect(),
            _ => Vec::new(),
        };
        let (inline, other, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(entry, inline, &[], other, &[]);
        let before = self.facts();
        self.b.switch_to_block(inline);
        let entry = match &fan_in {
            Some(conns) => self.chan_first_ready(conns),
            None => entry,
        };
        self.chan_inline(s, entry, port, &values);
        self.b.ins().jump(done, &[]);
        let after_inline = self.set_facts(before.clone());
        self.b.switch_to_block(other);
        match s {
            Stmt::Send { dst, fault, .. } => {
                let sent = match self.fifo_entries.get(&mut self.b, self.ptr, port) {
                    // A unit shape's port may be a FIFO's: its form.
                    Some(fifo) => {
                        self.fifo_send(fifo, port, &values, dst.is_some(), *fault);
                        self.fifo_join(0).0
                    }
                    None => self.chan_send_host(port, &values, *fault),
                };
                if let Some(d) = dst {
                    self.set_flag(*d, sent);
                }
            }
            _ => {
                if !self.fifo_stmt(s) {
                    self.plain_stmt(s);
                }
            }
        }
        self.b.ins().jump(done, &[]);
        let after_other = self.facts();
        self.join(&before, [&after_inline, &after_other]);
        self.b.switch_to_block(done);
        true
    }

    /// The inline form of channel operation `s` on `port`, whose entry is
    /// `state` (non-null); `values`: a send's item.
    fn chan_inline(&mut self, s: &Stmt, state: Value, port: PortId, values: &[Value]) {
        match s {
            Stmt::CanSend { dst, .. } => {
                let (ok, _) = self.chan_can_send(state);
                let ok = self.b.ins().uextend(types::I32, ok);
                self.set_flag(*dst, ok);
            }
            Stmt::Send { dst, fault, .. } => {
                let done = self.chan_join_block(0);
                self.chan_send(state, port, values, dst.is_some(), *fault, done);
                self.b.switch_to_block(done);
                if let Some(d) = dst {
                    let sent = self.b.block_params(done)[0];
                    self.set_flag(*d, sent);
                }
            }
            Stmt::Recv { kind, ok, dst, .. } => {
                let words = dst.len();
                let done = self.chan_join_block(words);
                self.chan_recv(state, *kind, words, done);
                self.b.switch_to_block(done);
                let params = self.b.block_params(done).to_vec();
                let got = params[0];
                self.set_flag(*ok, got);
                for (l, fresh) in dst.iter().zip(&params[1..]) {
                    let var = self.vars[*l as usize];
                    let old = self.b.use_var(var);
                    let v = self.b.ins().select(got, *fresh, old);
                    self.define(*l, v);
                }
            }
            _ => unreachable!("chan_op_port admits only channel operations"),
        }
    }

    /// Of a fan-in's connections `conns` (declaration order, none null),
    /// the one whose head item arrived first and has arrived, ties to the
    /// earlier (the runtime's `ready_connection`); the first when none has.
    fn chan_first_ready(&mut self, conns: &[Value]) -> Value {
        // One reader, one cycle cell for all.
        let cycle = self.chan_cycle(conns[0], at::RECV_CYCLE);
        let mut best = conns[0];
        let mut best_arrival = self.b.ins().iconst(I64, -1);
        for &conn in conns {
            let head = self.chan_head(conn, cycle);
            let first = self
                .b
                .ins()
                .icmp(IntCC::UnsignedLessThan, head.arrival, best_arrival);
            let (ready, arrival) = (head.ready, head.arrival);
            let better = self.b.ins().band(ready, first);
            best = self.b.ins().select(better, conn, best);
            best_arrival = self.b.ins().select(better, arrival, best_arrival);
        }
        best
    }

    /// A join block for an operation: its `i32` result and `words` item words.
    fn chan_join_block(&mut self, words: usize) -> Block {
        let done = self.b.create_block();
        self.b.append_block_param(done, types::I32);
        for _ in 0..words {
            self.b.append_block_param(done, I64);
        }
        done
    }

    /// The cycle of the running edge, from the state's cycle cell at
    /// `field`.
    fn chan_cycle(&mut self, state: Value, field: i32) -> Value {
        let cell = self.b.ins().load(self.ptr, flags(), state, field);
        self.b.ins().load(I64, flags(), cell, 0)
    }

    /// `can_send()` on the output whose [`SendState`] is `send`: an `i8`
    /// flag, and `(cycle, sent count in this cycle, connection)` for a send
    /// that follows.
    ///
    /// [`SendState`]: chronon_runtime::ffi::SendState
    fn chan_can_send(&mut self, send: Value) -> (Value, (Value, Value, Value)) {
        let cycle = self.chan_cycle(send, at::SEND_CYCLE);
        let sent_cycle = self.b.ins().load(I64, flags(), send, at::SENT_CYCLE);
        let sent = self.b.ins().load(types::I32, flags(), send, at::SENT);
        let rate = self.b.ins().load(types::I32, flags(), send, at::RATE);
        let this_cycle = self.b.ins().icmp(IntCC::Equal, sent_cycle, cycle);
        let zero = self.b.ins().iconst(types::I32, 0);
        let sent = self.b.ins().select(this_cycle, sent, zero);
        let rate_ok = self.b.ins().icmp(IntCC::UnsignedLessThan, sent, rate);
        let conn = self.b.ins().load(self.ptr, flags(), send, at::SINGLE);
        let len = self.b.ins().load(types::I32, flags(), conn, at::LEN);
        let freed = self.chan_freed(conn, cycle);
        let held = self.b.ins().iadd(len, freed);
        let capacity = self.b.ins().load(types::I32, flags(), conn, at::CAPACITY);
        let credit = self.b.ins().icmp(IntCC::UnsignedLessThan, held, capacity);
        let ok = self.b.ins().band(rate_ok, credit);
        (ok, (cycle, sent, conn))
    }

    /// Items the connection `conn` freed in `cycle` (its counter of another
    /// cycle counts as 0).
    fn chan_freed(&mut self, conn: Value, cycle: Value) -> Value {
        let freed_cycle = self.b.ins().load(I64, flags(), conn, at::FREED_CYCLE);
        let freed = self.b.ins().load(types::I32, flags(), conn, at::FREED);
        let this_cycle = self.b.ins().icmp(IntCC::Equal, freed_cycle, cycle);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.ins().select(this_cycle, freed, zero)
    }

    /// `send`/`try_send` inline, ending in a jump to `done` with whether it
    /// was sent; a refused `send` calls the host, which faults at the
    /// relative fault site `fault`.
    fn chan_send(
        &mut self,
        send: Value,
        port: PortId,
        values: &[Value],
        try_send: bool,
        fault: Option<u32>,
        done: Block,
    ) {
        let (ok, (cycle, sent, conn)) = self.chan_can_send(send);
        let (write, refused) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ok, write, &[], refused, &[]);
        self.b.switch_to_block(write);
        let sent = self.b.ins().iadd_imm_s(sent, 1);
        self.b.ins().store(flags(), cycle, send, at::SENT_CYCLE);
        self.b.ins().store(flags(), sent, send, at::SENT);
        // The ring slot after the last item.
        let head = self.b.ins().load(types::I32, flags(), conn, at::HEAD);
        let len = self.b.ins().load(types::I32, flags(), conn, at::LEN);
        let capacity = self.b.ins().load(types::I32, flags(), conn, at::CAPACITY);
        let slot = self.b.ins().iadd(head, len);
        let wraps = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, slot, capacity);
        let wrapped = self.b.ins().isub(slot, capacity);
        let slot = self.b.ins().select(wraps, wrapped, slot);
        let slot = self.b.ins().uextend(I64, slot);
        let items = self.b.ins().load(self.ptr, flags(), conn, at::ITEMS);
        let offset = self.b.ins().imul_imm_s(slot, values.len() as i64 * 8);
        let addr = self.b.ins().iadd(items, offset);
        for (i, v) in values.iter().enumerate() {
            self.b.ins().store(flags(), *v, addr, i as i32 * 8);
        }
        // Its arrival, saturating as the runtime's.
        let latency = self.b.ins().load(I64, flags(), conn, at::LATENCY);
        let arrival = self.b.ins().iadd(cycle, latency);
        let overflow = self.b.ins().icmp(IntCC::UnsignedLessThan, arrival, cycle);
        let never = self.b.ins().iconst(I64, -1);
        let arrival = self.b.ins().select(overflow, never, arrival);
        let arrivals = self.b.ins().load(self.ptr, flags(), conn, at::ARRIVALS);
        let offset = self.b.ins().ishl_imm_s(slot, 3);
        let addr = self.b.ins().iadd(arrivals, offset);
        self.b.ins().store(flags(), arrival, addr, 0);
        let len = self.b.ins().iadd_imm_s(len, 1);
        self.b.ins().store(flags(), len, conn, at::LEN);
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().jump(done, &[one.into()]);
        self.b.switch_to_block(refused);
        if try_send {
            let zero = self.b.ins().iconst(types::I32, 0);
            self.b.ins().jump(done, &[zero.into()]);
        } else {
            let r = self.chan_send_host(port, values, fault);
            self.b.ins().jump(done, &[r.into()]);
        }
    }

    /// The host call of a `send`/`try_send`: whether it was sent.
    fn chan_send_host(&mut self, port: PortId, values: &[Value], fault: Option<u32>) -> Value {
        let addr = self.fill_buffer(values);
        let id = self.i32(port);
        let required = self.i32(crate::jit::host_abi::send_site(fault));
        let len = self.i32(values.len() as u32);
        self.call_result(idx::SEND, &[id, required, addr, len])
    }

    /// The head of connection `conn` at `cycle` (the reader's).
    fn chan_head(&mut self, conn: Value, cycle: Value) -> Head {
        let head = self.b.ins().load(types::I32, flags(), conn, at::HEAD);
        let len = self.b.ins().load(types::I32, flags(), conn, at::LEN);
        let slot = self.b.ins().uextend(I64, head);
        let arrivals = self.b.ins().load(self.ptr, flags(), conn, at::ARRIVALS);
        let offset = self.b.ins().ishl_imm_s(slot, 3);
        let addr = self.b.ins().iadd(arrivals, offset);
        let arrival = self.b.ins().load(I64, flags(), addr, 0);
        let held = self.b.ins().icmp_imm_s(IntCC::NotEqual, len, 0);
        let arrived = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, arrival, cycle);
        let ready = self.b.ins().band(held, arrived);
        Head {
            head,
            len,
            slot,
            arrival,
            ready,
        }
    }

    /// `recv`/`peek` inline on the connection `conn`, ending in a jump to
    /// `done` with whether an item was ready and its `words` (read whether
    /// or not: the head slot is always inside the ring; the caller selects).
    fn chan_recv(&mut self, conn: Value, kind: RecvKind, words: usize, done: Block) {
        let cycle = self.chan_cycle(conn, at::RECV_CYCLE);
        let Head {
            head,
            len,
            slot,
            ready,
            ..
        } = self.chan_head(conn, cycle);
        let ready = self.b.ins().uextend(types::I32, ready);
        let items = self.b.ins().load(self.ptr, flags(), conn, at::ITEMS);
        let offset = self.b.ins().imul_imm_s(slot, words as i64 * 8);
        let addr = self.b.ins().iadd(items, offset);
        let mut args = vec![BlockArg::from(ready)];
        for i in 0..words {
            let w = self.b.ins().load(I64, flags(), addr, i as i32 * 8);
            args.push(w.into());
        }
        if kind == RecvKind::Peek {
            self.b.ins().jump(done, &args);
            return;
        }
        let pop = self.b.create_block();
        self.b.ins().brif(ready, pop, &[], done, &args);
        self.b.switch_to_block(pop);
        let capacity = self.b.ins().load(types::I32, flags(), conn, at::CAPACITY);
        let next = self.b.ins().iadd_imm_s(head, 1);
        let wraps = self.b.ins().icmp(IntCC::Equal, next, capacity);
        let zero = self.b.ins().iconst(types::I32, 0);
        let next = self.b.ins().select(wraps, zero, next);
        self.b.ins().store(flags(), next, conn, at::HEAD);
        let len = self.b.ins().iadd_imm_s(len, -1);
        self.b.ins().store(flags(), len, conn, at::LEN);
        let freed = self.chan_freed(conn, cycle);
        let freed = self.b.ins().iadd_imm_s(freed, 1);
        self.b.ins().store(flags(), cycle, conn, at::FREED_CYCLE);
        self.b.ins().store(flags(), freed, conn, at::FREED);
        self.b.ins().jump(done, &args);
    }
}

/// A connection's oldest item as inline code sees it.
struct Head {
    /// Its ring slot (`i32`), and the same as an `i64` index.
    head: Value,
    slot: Value,
    /// Items in the ring (`i32`).
    len: Value,
    /// Its arrival cycle (`i64`; stale when the ring is empty).
    arrival: Value,
    /// Whether it is there and has arrived (`i8`).
    ready: Value,
}
