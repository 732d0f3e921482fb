//! CDC FIFO operations as loads and stores on the runtime's FIFO state.
//!
//! A bound run gives every JIT function (an inline group's, or a unit
//! shape's called by a larger group), through its context's
//! [`HostCtx::fifos`](crate::jit::HostCtx::fifos) table, the address of
//! the runtime's [`FifoState`](chronon_runtime::ffi::FifoState) behind each
//! IR port it may run inline (null for the others: see
//! `simulate::RuntimeBinding::bind_fifos`). The code generator loads the
//! entries of the ports its units use once, at the function's entry, and
//! emits each FIFO operation on such a port as:
//!
//! - entry null: the host call, as before;
//! - else the operation itself, following `runtime::fifo::CdcFifo` field for
//!   field (the layout is [`chronon_runtime::ffi::fifo_layout`]), except where the runtime's rules
//!   ask for the host: a sink records FIFO events (`observed`) for an
//!   operation that records one, or a refused `send`, which faults.
//!
//! So an operation has the same effect either way, and the interpreter (which
//! always calls the host) stays the reference.
//!
//! An inline group with FIFO operations is compiled a second time for
//! unobserved runs (`Gen::unobserved`, see `codegen::function`): there
//! each operation is the inline path alone, with no null or `observed`
//! test and no host call, except a `send`'s refusal, which faults through
//! the host. The runtime's replay loop calls it (it runs only with no sink,
//! so no FIFO is observed), and only where the binding gives every FIFO
//! port of the group an entry (`RuntimeBinding::fifo_to_bind`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, Value, types};

use chronon_runtime::ffi::fifo_layout as at;

use super::{Gen, I64, flags};
use crate::ir::{PortId, Program, RecvKind, Stmt};
use crate::jit::host_abi::idx;

/// Whether operations on `port` are emitted inline with a host-call
/// fallback: an end of a CDC FIFO, or any port of a unit shape (a
/// program with no port table: its ports are relative, and instances of
/// one shape may connect a port to a FIFO or to a channel, so the entry
/// decides at run time). Which ports the run binds is the runtime
/// binding's choice; the others keep the fallback.
fn fifo_port(p: &Program, port: PortId) -> bool {
    p.ports.is_empty() || p.fifos.iter().any(|f| f.from == port || f.to == port)
}

/// Collects the FIFO ports named by operations in `stmts`.
fn used_ports(p: &Program, stmts: &[Stmt], out: &mut Vec<PortId>) {
    crate::ir::walk::visit_stmts(stmts, &mut |s| match s {
        Stmt::CanSend { port, .. }
        | Stmt::Send { port, .. }
        | Stmt::Recv { port, .. }
        | Stmt::Request { port, .. }
        | Stmt::Valid { port, .. }
            if fifo_port(p, *port) && !out.contains(port) =>
        {
            out.push(*port);
        }
        _ => {}
    });
}

/// The FIFO ports that operations of `units` name, in first-use order.
pub(super) fn ports(p: &Program, units: &[u32]) -> Vec<PortId> {
    let mut ports = Vec::new();
    for &u in units {
        used_ports(p, &p.units[u as usize].body, &mut ports);
    }
    ports
}

impl Gen<'_> {
    /// At the function's entry: the FIFO table entries of the FIFO ports
    /// that `units` use (entries do not change during a call).
    pub(super) fn fifo_prepare(&mut self, units: &[u32]) {
        let offset = std::mem::offset_of!(super::super::HostCtx<'static>, fifos) as i32;
        let ports = ports(self.p, units);
        self.fifo_entries =
            super::entries::Entries::prepare(&mut self.b, self.ptr, self.ctx, offset, ports);
    }

    /// Emits `s` if it is an operation on a FIFO port prepared above;
    /// returns whether it did (else the caller emits the host call).
    pub(super) fn fifo_stmt(&mut self, s: &Stmt) -> bool {
        let (port, entry) = match s {
            Stmt::CanSend { port, .. }
            | Stmt::Send { port, .. }
            | Stmt::Recv { port, .. }
            | Stmt::Request { port, .. }
            | Stmt::Valid { port, .. } => match self.fifo_entries.get(&mut self.b, self.ptr, *port)
            {
                Some(entry) => (*port, entry),
                None => return false,
            },
            _ => return false,
        };
        match s {
            Stmt::CanSend { dst, .. } => {
                self.fifo_op(entry, 0, |g, fifo, done| {
                    // `can_send()`: neither `full` nor written at this edge.
                    let flags16 = g.b.ins().uload16(types::I32, flags(), fifo, at::FULL);
                    let free = g.b.ins().icmp_imm_s(IntCC::Equal, flags16, 0);
                    let free = g.b.ins().uextend(types::I32, free);
                    g.b.ins().jump(done, &[free.into()]);
                });
                if !self.unobserved {
                    let id = self.i32(port);
                    let r = self.call_result(idx::CAN_SEND, &[id]);
                    self.fifo_done(r, &[]);
                }
                let (r, _) = self.fifo_join(0);
                self.set_flag(*dst, r);
            }
            Stmt::Send {
                value, dst, fault, ..
            } => {
                let values: Vec<Value> = value.iter().map(|e| self.expr(e)).collect();
                let try_send = dst.is_some();
                self.fifo_send(entry, port, &values, try_send, *fault);
                let (sent, _) = self.fifo_join(0);
                if let Some(d) = dst {
                    self.set_flag(*d, sent);
                }
            }
            Stmt::Request { dst, .. } => {
                self.fifo_request(entry, port);
                let (r, _) = self.fifo_join(0);
                self.set_flag(*dst, r);
            }
            Stmt::Valid { dst, .. } => {
                self.fifo_op(entry, 0, |g, fifo, done| {
                    let v =
                        g.b.ins()
                            .uload8(types::I32, flags(), fifo, at::OUTPUT_VALID);
                    g.b.ins().jump(done, &[v.into()]);
                });
                if !self.unobserved {
                    let id = self.i32(port);
                    let r = self.call_result(idx::VALID, &[id]);
                    self.fifo_done(r, &[]);
                }
                let (r, _) = self.fifo_join(0);
                self.set_flag(*dst, r);
            }
            Stmt::Recv { kind, ok, dst, .. } => {
                let words = dst.len();
                self.fifo_recv(entry, port, *kind, words);
                let (got, fresh) = self.fifo_join(words);
                self.set_flag(*ok, got);
                for (l, fresh) in dst.iter().zip(fresh) {
                    let var = self.vars[*l as usize];
                    let old = self.b.use_var(var);
                    let v = self.b.ins().select(got, fresh, old);
                    self.define(*l, v);
                }
            }
            // Not a FIFO operation: returned above.
            _ => return false,
        }
        true
    }

    /// Opens the join block of an operation (an `i32` result and `words`
    /// item words) and branches on the entry: non-null runs `fast` (which
    /// ends by jumping to the join), null leaves the builder in the
    /// fallback block, where the caller emits the host call and calls
    /// [`Gen::fifo_done`]. In an unobserved function (entries never null)
    /// it runs `fast` alone, and the caller emits no host call.
    fn fifo_op(&mut self, entry: Value, words: usize, fast: impl FnOnce(&mut Self, Value, Block)) {
        let done = self.b.create_block();
        self.b.append_block_param(done, types::I32);
        for _ in 0..words {
            self.b.append_block_param(done, I64);
        }
        if self.unobserved {
            fast(self, entry, done);
            self.fifo_join_block = Some(done);
            return;
        }
        let inline = self.b.create_block();
        let host = self.b.create_block();
        self.b.ins().brif(entry, inline, &[], host, &[]);
        self.b.switch_to_block(inline);
        fast(self, entry, done);
        self.b.switch_to_block(host);
        self.fifo_join_block = Some(done);
    }

    /// Ends the host-call path of an operation: jumps to its join.
    fn fifo_done(&mut self, result: Value, words: &[Value]) {
        let done = self.fifo_join_block.expect("an operation is open");
        let mut args = vec![result.into()];
        args.extend(words.iter().map(|w| BlockArg::from(*w)));
        self.b.ins().jump(done, &args);
    }

    /// Continues after an operation: its result and item words.
    pub(super) fn fifo_join(&mut self, words: usize) -> (Value, Vec<Value>) {
        let done = self.fifo_join_block.take().expect("an operation is open");
        self.b.switch_to_block(done);
        let params = self.b.block_params(done).to_vec();
        debug_assert_eq!(params.len(), words + 1);
        (params[0], params[1..].to_vec())
    }

    /// The address of word 0 of the item at the pointer at `ptr_field`.
    fn fifo_slot(&mut self, fifo: Value, ptr_field: i32, width: usize) -> Value {
        let pointer = self.b.ins().load(types::I32, flags(), fifo, ptr_field);
        let mask = self.b.ins().load(types::I32, flags(), fifo, at::SLOT_MASK);
        let slot = self.b.ins().band(pointer, mask);
        let slot = self.b.ins().uextend(I64, slot);
        let offset = self.b.ins().imul_imm_s(slot, width as i64 * 8);
        let storage = self.b.ins().load(self.ptr, flags(), fifo, at::STORAGE);
        self.b.ins().iadd(storage, offset)
    }

    /// `send`/`try_send`: stores the item at the write pointer and marks the
    /// edge written when `can_send()` and no sink records events; a refused
    /// `try_send` answers 0; the rest (recorded, or a refused `send`, which
    /// faults, at the relative fault site `fault`) calls the host.
    pub(super) fn fifo_send(
        &mut self,
        entry: Value,
        port: PortId,
        values: &[Value],
        try_send: bool,
        fault: Option<u32>,
    ) {
        let values = values.to_vec();
        if self.unobserved {
            // Refused: a `try_send` answers 0, a `send` faults (the host's).
            self.fifo_op(entry, 0, |g, fifo, done| {
                let busy = g.b.ins().uload16(types::I32, flags(), fifo, at::FULL);
                let write = g.b.create_block();
                if try_send {
                    let zero = g.b.ins().iconst(types::I32, 0);
                    g.b.ins().brif(busy, done, &[zero.into()], write, &[]);
                } else {
                    let host = g.b.create_block();
                    g.b.ins().brif(busy, host, &[], write, &[]);
                    g.fifo_host_block = Some(host);
                }
                g.b.switch_to_block(write);
                let one = g.fifo_write(fifo, &values);
                g.b.ins().jump(done, &[one.into()]);
            });
            let Some(host) = self.fifo_host_block.take() else {
                return;
            };
            self.b.switch_to_block(host);
            self.send_call(port, &values, fault);
            return;
        }
        self.fifo_op(entry, 0, |g, fifo, done| {
            let busy = g.b.ins().uload16(types::I32, flags(), fifo, at::FULL);
            let observed = g.b.ins().uload8(types::I32, flags(), fifo, at::OBSERVED);
            let other = g.b.ins().bor(busy, observed);
            let write = g.b.create_block();
            let not_now = g.b.create_block();
            g.b.ins().brif(other, not_now, &[], write, &[]);
            g.b.switch_to_block(write);
            let one = g.fifo_write(fifo, &values);
            g.b.ins().jump(done, &[one.into()]);
            // Refused, or recorded: a refused `try_send` changes nothing and
            // records nothing; a refused `send` faults (the host's); a
            // stamping FIFO writes inline and stamps; the rest calls the
            // host, which records.
            g.b.switch_to_block(not_now);
            let host = g.b.create_block();
            let observed = g.b.create_block();
            g.fifo_host_block = Some(host);
            if try_send {
                let zero = g.b.ins().iconst(types::I32, 0);
                g.b.ins().brif(busy, done, &[zero.into()], observed, &[]);
            } else {
                g.b.ins().brif(busy, host, &[], observed, &[]);
            }
            g.b.switch_to_block(observed);
            let stamped = g.b.create_block();
            let stamp = g.b.ins().uload8(types::I32, flags(), fifo, at::STAMP);
            g.b.ins().brif(stamp, stamped, &[], host, &[]);
            g.b.switch_to_block(stamped);
            let one = g.fifo_write(fifo, &values);
            g.fifo_stamp(fifo, at::WRITE_SEQ);
            g.b.ins().jump(done, &[one.into()]);
        });
        // Both the null entry and the inline path's fallback call the host.
        let fallback = self.fifo_host_block.take().expect("set by the inline path");
        self.b.ins().jump(fallback, &[]);
        self.b.switch_to_block(fallback);
        self.send_call(port, &values, fault);
    }

    /// The host call of a `send`/`try_send` (the relative fault site
    /// `fault`), ending in a jump to the open operation's join.
    fn send_call(&mut self, port: PortId, values: &[Value], fault: Option<u32>) {
        let addr = self.fill_buffer(values);
        let id = self.i32(port);
        let required = self.i32(crate::jit::host_abi::send_site(fault));
        let len = self.i32(values.len() as u32);
        let sent = self.call_result(idx::SEND, &[id, required, addr, len]);
        self.fifo_done(sent, &[]);
    }

    /// Stores `values` at the write pointer's slot and marks the edge
    /// written (a `send` known to be accepted); returns the constant 1.
    fn fifo_write(&mut self, fifo: Value, values: &[Value]) -> Value {
        let addr = self.fifo_slot(fifo, at::WRITE_PTR, values.len());
        for (i, v) in values.iter().enumerate() {
            self.b.ins().store(flags(), *v, addr, i as i32 * 8);
        }
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().istore8(flags(), one, fifo, at::WRITE_PENDING);
        one
    }

    /// Registered `request()`: accepted when not `empty`, not already
    /// accepted at this edge, and the output register is free (not valid,
    /// or taken earlier in this tick); a recorded run calls the host.
    fn fifo_request(&mut self, entry: Value, port: PortId) {
        if self.unobserved {
            self.fifo_op(entry, 0, |g, fifo, done| g.request_inline(fifo, done, None));
            return;
        }
        self.fifo_op(entry, 0, |g, fifo, done| {
            let (host, stamped) = g.fifo_unless_observed(fifo);
            g.request_inline(fifo, done, None);
            g.b.switch_to_block(stamped);
            g.request_inline(fifo, done, Some(at::READ_SEQ));
            g.fifo_host_block = Some(host);
        });
        let fallback = self.fifo_host_block.take().expect("set by the inline path");
        self.b.ins().jump(fallback, &[]);
        self.b.switch_to_block(fallback);
        let id = self.i32(port);
        let r = self.call_result(idx::REQUEST, &[id]);
        self.fifo_done(r, &[]);
    }

    /// The inline `request()` of [`Gen::fifo_request`], ending in a jump to
    /// `done`; with `stamp`, an accepted request also stamps that field.
    fn request_inline(&mut self, fifo: Value, done: Block, stamp: Option<i32>) {
        let g = self;
        let byte = |g: &mut Self, field| g.b.ins().uload8(types::I32, flags(), fifo, field);
        let empty = byte(g, at::EMPTY);
        let pending = byte(g, at::READ_PENDING);
        let fwft = byte(g, at::FWFT);
        let valid = byte(g, at::OUTPUT_VALID);
        let taken = byte(g, at::TAKEN);
        let blocked = g.b.ins().bor(empty, pending);
        let blocked = g.b.ins().bor(blocked, fwft);
        let not_taken = g.b.ins().bxor_imm_s(taken, 1);
        let occupied = g.b.ins().band(valid, not_taken);
        let blocked = g.b.ins().bor(blocked, occupied);
        let accepted = g.b.ins().icmp_imm_s(IntCC::Equal, blocked, 0);
        let accepted = g.b.ins().uextend(types::I32, accepted);
        let pending = g.b.ins().bor(pending, accepted);
        g.b.ins().istore8(flags(), pending, fifo, at::READ_PENDING);
        g.fifo_finish(fifo, done, stamp, accepted, &[accepted.into()]);
    }

    /// `take()` (registered), `recv()` and `peek()` (FWFT): the item words
    /// of the output register or the head slot, and whether there was one;
    /// `take` and `recv` of a recorded run call the host.
    fn fifo_recv(&mut self, entry: Value, port: PortId, kind: RecvKind, words: usize) {
        if self.unobserved {
            self.fifo_op(entry, words, |g, fifo, done| {
                g.recv_inline(fifo, done, kind, words, None);
            });
            return;
        }
        self.fifo_op(entry, words, |g, fifo, done| {
            if kind == RecvKind::Peek {
                g.recv_inline(fifo, done, kind, words, None);
                return;
            }
            let (host, stamped) = g.fifo_unless_observed(fifo);
            g.recv_inline(fifo, done, kind, words, None);
            g.b.switch_to_block(stamped);
            let field = if kind == RecvKind::Take {
                at::TAKE_SEQ
            } else {
                at::READ_SEQ
            };
            g.recv_inline(fifo, done, kind, words, Some(field));
            g.fifo_host_block = Some(host);
        });
        if let Some(fallback) = self.fifo_host_block.take() {
            self.b.ins().jump(fallback, &[]);
            self.b.switch_to_block(fallback);
        }
        let buf = self.buf();
        let addr = self.b.ins().stack_addr(self.ptr, buf, 0);
        let id = self.i32(port);
        let len = self.i32(words as u32);
        let got = match kind {
            RecvKind::Recv | RecvKind::Peek => {
                let remove = self.i32(u32::from(kind == RecvKind::Recv));
                self.call_result(idx::RECV, &[id, remove, addr, len])
            }
            RecvKind::Take => self.call_result(idx::TAKE, &[id, addr, len]),
        };
        let fresh: Vec<Value> = (0..words)
            .map(|i| self.b.ins().stack_load(self.ptr, I64, buf, i as i32 * 8))
            .collect();
        self.fifo_done(got, &fresh);
    }

    /// The inline `take`/`recv`/`peek` of [`Gen::fifo_recv`], ending in a
    /// jump to `done`; with `stamp`, an item taken or received also
    /// stamps that field.
    fn recv_inline(
        &mut self,
        fifo: Value,
        done: Block,
        kind: RecvKind,
        words: usize,
        stamp: Option<i32>,
    ) {
        let g = self;
        let byte = |g: &mut Self, field| g.b.ins().uload8(types::I32, flags(), fifo, field);
        let (got, item, flag, flag_now) = if kind == RecvKind::Take {
            // An item in the output register, not taken at this edge.
            let valid = byte(g, at::OUTPUT_VALID);
            let taken = byte(g, at::TAKEN);
            let not_taken = g.b.ins().bxor_imm_s(taken, 1);
            let got = g.b.ins().band(valid, not_taken);
            let item = g.b.ins().load(g.ptr, flags(), fifo, at::OUTPUT);
            (got, item, at::TAKEN, taken)
        } else {
            // FWFT: not `empty` and nothing received at this edge.
            let empty = byte(g, at::EMPTY);
            let pending = byte(g, at::READ_PENDING);
            let fwft = byte(g, at::FWFT);
            let blocked = g.b.ins().bor(empty, pending);
            let free = g.b.ins().icmp_imm_s(IntCC::Equal, blocked, 0);
            let free = g.b.ins().uextend(types::I32, free);
            let got = g.b.ins().band(free, fwft);
            let item = g.fifo_slot(fifo, at::READ_PTR, words);
            (got, item, at::READ_PENDING, pending)
        };
        // Loaded whether or not there is an item (the words are
        // readable either way); the caller selects on `got`.
        let mut args = vec![got.into()];
        for i in 0..words {
            let w = g.b.ins().load(I64, flags(), item, i as i32 * 8);
            args.push(w.into());
        }
        if kind != RecvKind::Peek {
            let now = g.b.ins().bor(flag_now, got);
            g.b.ins().istore8(flags(), now, fifo, flag);
        }
        g.fifo_finish(fifo, done, stamp, got, &args);
    }

    /// Ends an inline operation: jumps to `done` with `args`; with
    /// `stamp`, first stamps that field when `accepted` is non-zero.
    fn fifo_finish(
        &mut self,
        fifo: Value,
        done: Block,
        stamp: Option<i32>,
        accepted: Value,
        args: &[BlockArg],
    ) {
        let Some(field) = stamp else {
            self.b.ins().jump(done, args);
            return;
        };
        let stamp_block = self.b.create_block();
        self.b.ins().brif(accepted, stamp_block, &[], done, args);
        self.b.switch_to_block(stamp_block);
        self.fifo_stamp(fifo, field);
        self.b.ins().jump(done, args);
    }

    /// Stamps the operation at `field` of a stamping FIFO: the instant's
    /// record counter (at `SEQ`) into the field, then the counter plus
    /// one back (what `TickCtx` does for the interpreter; the FIFO's
    /// commit derives the event).
    fn fifo_stamp(&mut self, fifo: Value, field: i32) {
        let counter = self.b.ins().load(self.ptr, flags(), fifo, at::SEQ);
        let seq = self.b.ins().load(types::I32, flags(), counter, 0);
        self.b.ins().store(flags(), seq, fifo, field);
        let next = self.b.ins().iadd_imm_s(seq, 1);
        self.b.ins().store(flags(), next, counter, 0);
    }

    /// Branches on whether a sink records FIFO events: not, the builder
    /// continues in the plain inline path; recorded, to the returned
    /// `stamped` block when the FIFO stamps its operations, else to the
    /// returned `host` block. Returns `(host, stamped)`.
    fn fifo_unless_observed(&mut self, fifo: Value) -> (Block, Block) {
        let observed = self.b.ins().uload8(types::I32, flags(), fifo, at::OBSERVED);
        let host = self.b.create_block();
        let stamped = self.b.create_block();
        let check = self.b.create_block();
        let inline = self.b.create_block();
        self.b.ins().brif(observed, check, &[], inline, &[]);
        self.b.switch_to_block(check);
        let stamp = self.b.ins().uload8(types::I32, flags(), fifo, at::STAMP);
        self.b.ins().brif(stamp, stamped, &[], host, &[]);
        self.b.switch_to_block(inline);
        (host, stamped)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::sync::Arc;

    use chronon_lang::span::SourceMap;
    use chronon_lang::{CompileOptions, compile};
    use chronon_runtime::{DomainId, FifoEvent, RunLimit, TraceRecord, TraceSink};

    use crate::lower::lower;
    use crate::simulate::{EngineKind, Simulator};

    /// A writer and a reader with pseudo-random stalls (so the FIFO runs
    /// full and empty), two-word items, a second `try_send`/`take`/
    /// `request`/`recv` per edge (always refused), and counters of every
    /// answer. `send` uses `send` (a refusal faults) instead of
    /// `try_send` after `can_send`.
    fn design(fwft: bool, depth: u32, sync: u32, clocks: (&str, &str), send: bool) -> String {
        let write = if send {
            "if go || tx.can_send() { tx.send(P { a: n, b: n as u16 }); n <= n + 1; sent += 1; }"
        } else {
            "if go { if tx.try_send(P { a: n, b: n as u16 }) { n <= n + 1; sent += 1; } \
             else { refused += 1; } \
             if tx.try_send(P { a: 7, b: 7 }) { dup += 1; } }"
        };
        let reader = if fwft {
            "unit R { in rx: P cdc fwft; reg y: u32 = 7; counter sum; counter got; counter peeks; counter dup;\n\
             tick { y <= y * 1103515245 + 12345;\n\
             if let Some(v) = rx.peek() { peeks += v.a as u64 + 1; }\n\
             if (y >> 9) % 3 != 0 {\n\
               if let Some(v) = rx.recv() { sum += (v.a as u64) * 3 + v.b as u64; got += 1; }\n\
               if let Some(v) = rx.recv() { dup += 1 + v.a as u64; }\n\
               if let Some(v) = rx.peek() { peeks += 1000000 + v.a as u64; }\n\
             } } }"
        } else {
            "unit R { in rx: P cdc; reg y: u32 = 7; counter sum; counter got; counter acc; counter valids; counter dup;\n\
             tick { y <= y * 1103515245 + 12345;\n\
             if rx.valid() { valids += 1; }\n\
             if (y >> 9) % 3 != 0 {\n\
               if let Some(v) = rx.take() { sum += (v.a as u64) * 3 + v.b as u64; got += 1; }\n\
               if let Some(v) = rx.take() { dup += 1 + v.a as u64; }\n\
             }\n\
             if (y >> 5) % 4 != 0 { if rx.request() { acc += 1; } if rx.request() { dup += 1; } }\n\
             if rx.valid() { valids += 1000; } } }"
        };
        format!(
            "struct P {{ a: u32, b: u16 }}\n\
             clock wclk = {w};\nclock rclk = {r};\n\
             unit W {{ out tx: P; reg n: u32 = 0; reg x: u32 = 1;\n\
             counter sent; counter refused; counter free; counter dup;\n\
             tick {{ x <= x * 1103515245 + 12345; let go: bool = (x >> 7) % 4 != 0;\n\
             if tx.can_send() {{ free += 1; }}\n{write} }} }}\n\
             {reader}\n\
             system Top {{ inst w: W on wclk; inst r: R on rclk;\n\
             cdc w.tx -> r.rx depth {depth} sync {sync}; }}\n",
            w = clocks.0,
            r = clocks.1,
        )
    }

    /// Records FIFO events (observing commits makes JIT code call the host
    /// for the operations that record one).
    struct Events(Rc<RefCell<Vec<FifoEvent>>>);

    impl TraceSink for Events {
        fn record(&mut self, _: &TraceRecord<'_>) {}
        fn observes_commits(&self) -> bool {
            true
        }
        fn fifo(&mut self, event: &FifoEvent) {
            self.0.borrow_mut().push(*event);
        }
    }

    fn simulator(text: &str, engine: EngineKind) -> Simulator {
        let mut sources = SourceMap::new();
        sources.add("t.chr".to_string(), text.to_string());
        let options = CompileOptions {
            require_top: true,
            ..CompileOptions::default()
        };
        let compiled = compile(&mut sources, &options);
        let Some(design) = compiled.design else {
            panic!("{:#?}\n{text}", compiled.diagnostics);
        };
        let program = Arc::new(lower(&design, &sources).expect("lowers"));
        Simulator::new(program, engine).expect("builds")
    }

    /// Runs `text` on both engines instant by instant (and, with
    /// `observe`, with a sink that records FIFO events), comparing stops,
    /// state digests and events; returns the interpreter's counters. Each
    /// engine runs twice: FIFO operations stamped (the JIT's inline
    /// operations, events derived at commit) and recording their events
    /// as they run (the JIT's host calls).
    fn agree(text: &str, instants: u64, observe: bool) -> Vec<(String, String, u64)> {
        let engines = [
            EngineKind::Interp,
            EngineKind::Jit,
            EngineKind::Interp,
            EngineKind::Jit,
        ];
        let mut sims = engines.map(|e| simulator(text, e));
        let events = [(); 4].map(|_| Rc::new(RefCell::new(Vec::new())));
        if observe {
            for (i, (s, e)) in sims.iter_mut().zip(&events).enumerate() {
                s.sim.set_fifo_stamps(i < 2);
                s.sim.set_trace_sink(Box::new(Events(e.clone())));
            }
        }
        for instant in 0..instants {
            let s = &sims[0];
            let next = (0..s.program().domains.len() as u32)
                .filter_map(|d| {
                    s.sim
                        .edge_time(DomainId(d), s.sim.edges_done(DomainId(d)))
                        .ok()
                })
                .min()
                .expect("a clock");
            let stops = sims.each_mut().map(|s| s.sim.run(RunLimit::Time(next)));
            for k in 1..4 {
                assert_eq!(
                    stops[0], stops[k],
                    "stop at instant {instant}, run {k}\n{text}"
                );
                assert_eq!(
                    sims[0].digest(),
                    sims[k].digest(),
                    "state at instant {instant}, run {k}\n{text}"
                );
                assert_eq!(sims[0].sim.in_flight(), sims[k].sim.in_flight(), "{text}");
                assert_eq!(*events[0].borrow(), *events[k].borrow(), "run {k}\n{text}");
            }
            if stops[0] != chronon_runtime::Stop::LimitReached {
                break;
            }
        }
        if observe {
            assert!(!events[0].borrow().is_empty(), "no FIFO events\n{text}");
        }
        sims[0].counters()
    }

    fn counter(counters: &[(String, String, u64)], name: &str) -> u64 {
        counters
            .iter()
            .find(|c| c.1 == name)
            .map(|c| c.2)
            .expect("counter exists")
    }

    /// Registered and FWFT reads, depths 2 and 16, S = 2, 3 and 5, fast
    /// and slow writers: the JIT's inline operations agree with the
    /// interpreter after every instant, with and without FIFO events
    /// recorded; the runs reach full and empty and move items.
    #[test]
    fn inline_fifo_operations_agree_with_the_interpreter() {
        for fwft in [false, true] {
            for (depth, sync) in [(2, 2), (2, 3), (16, 2), (4, 5)] {
                for clocks in [
                    ("1 GHz", "1 GHz"),
                    ("1326 MHz phase 137 ps", "914 MHz"),
                    ("300 MHz", "1 GHz phase 1 ps"),
                ] {
                    let text = design(fwft, depth, sync, clocks, false);
                    let c = agree(&text, 1500, false);
                    assert!(counter(&c, "got") > 20, "{c:?}\n{text}");
                    // The writers not slower than their reader fill it.
                    if clocks.0 != "300 MHz" {
                        assert!(counter(&c, "refused") > 0, "{c:?}\n{text}");
                    }
                    // A second write, read or request in one edge: refused.
                    let dups: u64 = c.iter().filter(|c| c.1 == "dup").map(|c| c.2).sum();
                    assert_eq!(dups, 0, "{c:?}");
                    agree(&text, 400, true);
                }
            }
        }
    }

    /// Domains of more units than the JIT inlines into one function: their
    /// groups call shared unit-shape functions, whose FIFO operations run
    /// inline through the instance's slice of the table, and whose channel
    /// operations (null entries) call the host; registered and FWFT reads.
    #[test]
    fn large_groups_run_fifo_operations_like_the_interpreter() {
        let text = "clock a = 1 GHz;\nclock b = 700 MHz phase 13 ps;\n\
            unit W<K: u32 = 0> { out tx: u32; out ch: u32; reg n: u32 = 0; reg x: u32 = 1;\n\
            counter sent; counter dup;\n\
            tick { x <= x * 1103515245 + 12345 + K;\n\
            if ((x >> 7) + K) % 4 != 0 { if tx.try_send(n * 7 + K) { n <= n + 1; sent += 1; }\n\
            if tx.try_send(1) { dup += 1; } }\n\
            if tx.can_send() { ch.try_send(n); } } }\n\
            unit S { in rx: u32; counter got; tick { if let Some(v) = rx.recv() { got += v as u64 + 1; } } }\n\
            unit R { in rx: u32 cdc; reg y: u32 = 7; counter sum; counter valids;\n\
            tick { y <= y * 1103515245 + 12345; if rx.valid() { valids += 1; }\n\
            if (y >> 9) % 3 != 0 { if let Some(v) = rx.take() { sum += v as u64 + 1; } }\n\
            rx.request(); } }\n\
            unit F { in rx: u32 cdc fwft; reg y: u32 = 3; counter sum; counter peeks;\n\
            tick { y <= y * 1103515245 + 12345; if let Some(v) = rx.peek() { peeks += v as u64; }\n\
            if (y >> 9) % 3 != 0 { if let Some(v) = rx.recv() { sum += v as u64 + 1; } } } }\n\
            system Top {\n\
            for i in 0..10 { inst w[i]: W<K = i> on a; inst r[i]: R on b;\n\
            cdc w[i].tx -> r[i].rx depth 4 sync 3; inst s[i]: S on a; connect w[i].ch -> s[i].rx; }\n\
            for i in 0..10 { inst v[i]: W<K = i + 10> on a; inst f[i]: F on b;\n\
            cdc v[i].tx -> f[i].rx depth 2 sync 2; inst t[i]: S on a; connect v[i].ch -> t[i].rx; }\n\
            }\n";
        let c = agree(text, 800, false);
        let total = |name: &str| -> u64 { c.iter().filter(|c| c.1 == name).map(|c| c.2).sum() };
        assert!(total("sum") > 0 && total("got") > 0, "{c:?}");
        assert_eq!(total("dup"), 0, "{c:?}");
        agree(text, 200, true);
    }

    /// The next instant of `s`: its domains' earliest next edge.
    fn next_instant(s: &Simulator) -> chronon_runtime::Picos {
        (0..s.program().domains.len() as u32)
            .filter_map(|d| {
                s.sim
                    .edge_time(DomainId(d), s.sim.edges_done(DomainId(d)))
                    .ok()
            })
            .min()
            .expect("a clock")
    }

    /// The replay loop calls each inline group's variant for unobserved runs
    /// (`codegen::function_unobserved`: no entry or observation test, no
    /// host path but a `send`'s): registered and FWFT reads, depths 2 and
    /// 16, runs that fill and empty the FIFO, `try_send` and `send` (which
    /// faults); a sink of FIFO events attached mid-run leaves the replay
    /// loop for checked steps (the ordinary functions, which call the host
    /// to record) and removing it comes back; the JIT equals the interpreter (no replay loop) after every
    /// instant.
    #[test]
    fn unobserved_variants_agree_in_the_replay_loop_and_around_a_sink() {
        let cases = [
            ("1 GHz", "1 GHz", false),
            ("1326 MHz phase 137 ps", "914 MHz", false),
            ("300 MHz", "1 GHz phase 1 ps", false),
            ("1 GHz", "250 MHz", true),
        ];
        for fwft in [false, true] {
            for (depth, sync) in [(2, 2), (16, 3)] {
                for (w, r, send) in cases {
                    let text = design(fwft, depth, sync, (w, r), send);
                    let mut jit = simulator(&text, EngineKind::Jit);
                    let mut interp = simulator(&text, EngineKind::Interp);
                    jit.sim.set_run_ahead(false);
                    interp.sim.set_run_ahead(false);
                    interp.sim.set_replay_loop(false);
                    let events = Rc::new(RefCell::new(Vec::new()));
                    let mut faulted = false;
                    for instant in 0..1500 {
                        if instant == 400 {
                            jit.sim.set_trace_sink(Box::new(Events(events.clone())));
                        }
                        if instant == 700 {
                            assert!(jit.sim.take_trace_sink().is_some());
                        }
                        let sink = (400..700).contains(&instant);
                        assert_eq!(jit.sim.runs_replay(), !sink, "instant {instant}\n{text}");
                        let next = next_instant(&interp);
                        let stop = jit.sim.run(RunLimit::Time(next));
                        assert_eq!(stop, interp.sim.run(RunLimit::Time(next)), "{text}");
                        assert_eq!(jit.digest(), interp.digest(), "instant {instant}\n{text}");
                        assert_eq!(jit.sim.in_flight(), interp.sim.in_flight(), "{text}");
                        if stop != chronon_runtime::Stop::LimitReached {
                            faulted = matches!(stop, chronon_runtime::Stop::Fault(_));
                            break;
                        }
                    }
                    let c = interp.counters();
                    // Both boundaries: the writer refused (full) or
                    // faulted, the reader got items and missed (empty).
                    assert_eq!(faulted, send, "{c:?}\n{text}");
                    if !send {
                        assert!(!events.borrow().is_empty(), "no FIFO events\n{text}");
                        assert!(counter(&c, "got") > 20, "{c:?}\n{text}");
                        if w != "300 MHz" {
                            assert!(counter(&c, "refused") > 0, "{c:?}\n{text}");
                        }
                        let dups: u64 = c.iter().filter(|c| c.1 == "dup").map(|c| c.2).sum();
                        assert_eq!(dups, 0, "{c:?}");
                    }
                }
            }
        }
    }

    /// A variant exists only for inline groups with FIFO operations, and
    /// names the FIFO ports it assumes bound; it says it calls the host
    /// exactly where it does: the writer's `send` (its refusal faults
    /// through the host), not `try_send`, `take`, `request` or counters.
    #[test]
    fn unobserved_variants_only_where_they_differ() {
        for send in [false, true] {
            let text = design(false, 4, 2, ("1 GHz", "700 MHz"), send);
            let sim = simulator(&text, EngineKind::Interp);
            let program = sim.program();
            let fifo = &program.fifos[0];
            let jit = crate::jit::Jit::compile_with_groups(
                program,
                crate::jit::JitConfig::default(),
                &[vec![0], vec![1], vec![]],
            )
            .expect("compiles");
            for (g, port, calls_host) in [(0, fifo.from, send), (1, fifo.to, false)] {
                let (_, ports, calls) = jit.unobserved_group(g).expect("a variant");
                assert_eq!(ports, [port]);
                assert_eq!(calls, calls_host, "group {g}, send {send}");
            }
            assert!(jit.unobserved_group(2).is_none());
        }
    }

    /// `send` on a full FIFO faults on both engines at the same instant.
    #[test]
    fn inline_send_refusal_faults_like_the_interpreter() {
        for fwft in [false, true] {
            let text = design(fwft, 2, 3, ("1 GHz", "250 MHz"), true);
            let mut sim = simulator(&text, EngineKind::Jit);
            let stop = sim
                .sim
                .run(RunLimit::Time(chronon_runtime::Picos::from_integer(
                    1_000_000,
                )));
            assert!(matches!(stop, chronon_runtime::Stop::Fault(_)), "{stop:?}");
            agree(&text, 2000, false);
            agree(&text, 2000, true);
        }
    }
}
