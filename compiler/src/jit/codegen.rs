//! Translation of units' IR into one Cranelift function.
//!
//! Every value is an `i64` in canonical form (zero-extended from its
//! width); operations sign-extend where their meaning needs it and mask
//! their results.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    BlockArg, FuncRef, Function, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Type,
    Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use std::collections::HashMap;

use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::host_abi::idx;
use super::{JitError, err};

// FIFO operations inline: a child module, so it extends `Gen`.
#[path = "fifo.rs"]
mod fifo;

// Channel operations inline, likewise.
#[path = "chan.rs"]
mod chan;

// The per-port table entries both load.
#[path = "entries.rs"]
mod entries;

/// The SLP vectorizer (`jit/simd.rs`), a child module so that it extends
/// [`Gen`].
#[path = "simd.rs"]
pub(super) mod simd;

/// The packed mirror of narrow registers in run-ahead loops
/// (`jit/packed.rs`), a child module so that it extends [`Gen`].
#[path = "packed.rs"]
pub(super) mod packed;
use crate::ir::eval;
use crate::ir::{BinOp, Commit, Expr, Indexed, LocalId, Program, RecvKind, SlotId, Stmt, Ty, UnOp};

const I64: Type = types::I64;

/// Registers of at least this many slots commit in a loop
/// ([`Gen::copy_loop`]); shorter ones are copied slot by slot, which
/// keeps their values in registers for the code that follows.
const COPY_LOOP_MIN: u32 = 64;

/// Builds into `func` one function that runs `units` in order; with
/// `code.simd`, runs of isomorphic statements become vector code
/// ([`simd`]). With `unobserved`, the function is for runs in which every
/// FIFO that `units` operate on is bound inline and unobserved (the
/// runtime's lean loop, which runs only with no trace sink): its FIFO
/// operations neither test their table entry nor whether the FIFO is
/// observed, and only a `send`, which may fault, keeps its host call (see
/// the `fifo` module).
#[allow(clippy::too_many_arguments)]
pub(super) fn function(
    module: &mut JITModule,
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    program: &Program,
    units: &[u32],
    imports: &[FuncId],
    buf_words: u32,
    code: super::CodeOptions,
    wires: &super::Wires,
    unobserved: bool,
) -> Result<bool, JitError> {
    let form = super::edges::Form::Once;
    function_in(
        module, func, fctx, program, units, imports, buf_words, code, wires, form, unobserved,
    )
}

/// The FIFO ports whose operations `units` run inline: those an
/// `unobserved` [`function`] of them assumes bound (none: it would equal
/// the other).
pub(super) fn fifo_ports(program: &Program, units: &[u32]) -> Vec<u32> {
    fifo::ports(program, units)
}

/// [`function`] in the given form: once, or as the run-ahead loop over
/// edges of `super::edges` (signature `(state, ctx, n) -> edges done`);
/// `unobserved` as for [`function`]. Both return whether the code calls
/// the host anywhere (else it never reads its context's tick cell).
#[allow(clippy::too_many_arguments)]
pub(super) fn function_in(
    module: &mut JITModule,
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    program: &Program,
    units: &[u32],
    imports: &[FuncId],
    buf_words: u32,
    code: super::CodeOptions,
    wires: &super::Wires,
    form: super::edges::Form,
    unobserved: bool,
) -> Result<bool, JitError> {
    let ptr = module.target_config().pointer_type();
    let frontend = module.target_config();
    let host: Vec<FuncRef> = imports
        .iter()
        .map(|id| module.declare_func_in_func(*id, func))
        .collect();
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let state = b.block_params(entry)[0];
    let ctx = b.block_params(entry)[1];
    let mut g = Gen {
        b,
        p: program,
        state,
        ctx,
        ptr,
        host,
        buf: None,
        buf_words,
        vars: Vec::new(),
        known: HashMap::new(),
        consts: HashMap::new(),
        fifo_entries: entries::Entries::default(),
        chan_entries: entries::Entries::default(),
        fan_in: HashMap::new(),
        wires,
        wire_values: HashMap::new(),
        fifo_join_block: None,
        fifo_host_block: None,
        unobserved,
        simd: code.simd,
        packed: None,
        host_calls: false,
    };
    g.fifo_prepare(units);
    g.chan_prepare(units);
    // A quiet group's long calls run on packed registers (`jit/packed.rs`).
    let layout = match form {
        super::edges::Form::Edges { next_edge: false } if code.simd && code.packed => {
            packed::layout(program, units)
        }
        _ => None,
    };
    if let Some(layout) = &layout {
        let (plain, packed) = (g.b.create_block(), g.b.create_block());
        let n = g.b.block_params(entry)[2];
        let long =
            g.b.ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, packed::MIN_EDGES);
        g.b.ins().brif(long, packed, &[], plain, &[]);
        g.b.switch_to_block(plain);
        g.units_in_form(units, entry, form, None);
        g.b.switch_to_block(packed);
        g.pack(layout);
    }
    g.units_in_form(units, entry, form, layout.as_ref());
    g.b.seal_all_blocks();
    g.b.finalize(frontend);
    if buf_words > u32::MAX / 8 {
        return Err(err("item buffer too large"));
    }
    Ok(g.host_calls)
}

/// Words in the item buffer: enough for the largest item or trace.
pub(super) fn buffer_words(p: &Program) -> u32 {
    let items = p.ports.iter().map(|x| x.item.len());
    let traces = p.traces.iter().map(|t| t.args.len());
    items.chain(traces).max().unwrap_or(0).max(1) as u32
}

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// What the code generator knows at a point: slot values and constant locals.
type Facts = (HashMap<SlotId, Value>, HashMap<LocalId, u64>);

struct Gen<'a> {
    b: FunctionBuilder<'a>,
    p: &'a Program,
    state: Value,
    ctx: Value,
    ptr: Type,
    host: Vec<FuncRef>,
    /// The item buffer, made on first use: a function that passes no item
    /// or trace to the host then needs no stack frame.
    buf: Option<cranelift_codegen::ir::StackSlot>,
    buf_words: u32,
    vars: Vec<Variable>,
    /// What each state slot is known to hold at the current point of the
    /// code: the value last loaded from or stored to it on every path
    /// here. State is reached only through this function's pointer (the
    /// host never sees it), so only the function's own stores change it.
    known: HashMap<SlotId, Value>,
    /// Locals known to hold a constant here (unrolled loop indices), so
    /// indices computed from them select a slot at compile time.
    consts: HashMap<LocalId, u64>,
    /// The FIFO ports used here and their entries of the context's FIFO
    /// table (see the `fifo` module).
    fifo_entries: entries::Entries,
    /// The channel ports used here and their entries of the context's
    /// channel table (see the `chan` module).
    chan_entries: entries::Entries,
    /// Per fan-in input port received from here, its connections' slots
    /// of the channel table (see the `chan` module).
    fan_in: HashMap<crate::ir::PortId, std::ops::Range<u32>>,
    /// The channels compiled as wires, and per wired input the values its
    /// sender sent at this edge (see `jit/wire.rs`).
    wires: &'a super::Wires,
    wire_values: HashMap<u32, Vec<Value>>,
    /// The join block of the FIFO operation being emitted, and its path
    /// to the host call.
    fifo_join_block: Option<cranelift_codegen::ir::Block>,
    fifo_host_block: Option<cranelift_codegen::ir::Block>,
    /// Whether every prepared FIFO entry is non-null and its FIFO
    /// unobserved whenever this function runs (see [`function`]).
    unobserved: bool,
    /// Whether to vectorize runs of isomorphic statements ([`simd`]).
    simd: bool,
    /// The packed mirror while a run-ahead loop on it is generated
    /// ([`packed`]).
    packed: Option<packed::Mirror>,
    /// Whether a host call has been emitted (see [`function_in`]).
    host_calls: bool,
}

/// The value of an expression made only of constants and locals known to
/// be constant, if it is one.
fn constant(e: &Expr, consts: &HashMap<LocalId, u64>) -> Option<u64> {
    match e {
        Expr::Const(_, v) => Some(*v),
        Expr::Local(l) => consts.get(l).copied(),
        Expr::Unary(op, ty, a) => Some(eval::unary(*op, *ty, constant(a, consts)?)),
        Expr::Binary(op, ty, a, b) => Some(eval::binary(
            *op,
            *ty,
            constant(a, consts)?,
            constant(b, consts)?,
        )),
        Expr::Cast { from, to, arg } => Some(eval::cast(*from, *to, constant(arg, consts)?)),
        _ => None,
    }
}

/// The slot a constant in-range index selects.
fn constant_slot(ix: &Indexed, consts: &HashMap<LocalId, u64>) -> Option<SlotId> {
    let i = constant(&ix.index, consts)?;
    (i < u64::from(ix.len)).then(|| ix.base + i as u32 * ix.stride)
}

impl Gen<'_> {
    fn mask(&mut self, v: Value, ty: Ty) -> Value {
        let native = match ty.width {
            8 => types::I8,
            16 => types::I16,
            32 => types::I32,
            64.. => return v,
            _ => return self.b.ins().band_imm_s(v, ty.mask() as i64),
        };
        // A zero extension from a native width is one move, where the
        // equivalent `and` needs its 32-bit mask loaded from memory.
        let narrow = self.b.ins().ireduce(native, v);
        self.b.ins().uextend(I64, narrow)
    }

    fn extend(&mut self, v: Value, ty: Ty) -> Value {
        if ty.signed && ty.width < 64 {
            let shift = i64::from(64 - ty.width);
            let up = self.b.ins().ishl_imm_s(v, shift);
            self.b.ins().sshr_imm_s(up, shift)
        } else {
            v
        }
    }

    fn bool_of(&mut self, flag: Value) -> Value {
        self.b.ins().uextend(I64, flag)
    }

    /// The units' code in `form`, from the current block to the return;
    /// with `layout`, on the packed mirror [`Gen::pack`] made, unpacked
    /// before the return.
    fn units_in_form(
        &mut self,
        units: &[u32],
        entry: cranelift_codegen::ir::Block,
        form: super::edges::Form,
        layout: Option<&packed::Layout>,
    ) {
        let edge_loop = super::edges::open_loop(&mut self.b, entry, form);
        self.known.clear();
        self.wire_values.clear();
        for &u in units {
            let unit = &self.p.units[u as usize];
            self.vars = unit
                .locals
                .iter()
                .map(|_| self.b.declare_var(I64))
                .collect();
            self.consts.clear();
            let zero = self.b.ins().iconst(I64, 0);
            for v in &self.vars {
                self.b.def_var(*v, zero);
            }
            self.body(&unit.body);
            for c in &unit.commits {
                self.commit(c);
            }
        }
        match edge_loop {
            Some(edge_loop) => {
                let (ctx, host) = (self.ctx, self.host.clone());
                self.host_calls = true;
                let done = super::edges::close_loop(&mut self.b, edge_loop, ctx, &host);
                if let Some(layout) = layout {
                    self.unpack(layout);
                }
                self.b.ins().return_(&[done]);
            }
            None => {
                let ok = self.b.ins().iconst(types::I32, 0);
                self.b.ins().return_(&[ok]);
            }
        }
    }

    fn load_slot(&mut self, slot: u32) -> Value {
        if let Some(v) = self.known.get(&slot) {
            return *v;
        }
        let v = self.fresh_load(slot);
        self.known.insert(slot, v);
        v
    }

    fn store_slot(&mut self, slot: u32, v: Value) {
        self.raw_store(slot, v);
        self.known.insert(slot, v);
    }

    /// Forgets the slots `base + i * stride` for `i < len`, which a store
    /// through a computed address may have changed.
    fn forget(&mut self, base: u32, len: u32, stride: u32) {
        if (len as usize) <= self.known.len() {
            for i in 0..len {
                self.known.remove(&(base + i * stride));
            }
        } else {
            // A large array: walk what is known rather than every element.
            let end = u64::from(base) + u64::from(len) * u64::from(stride);
            self.known.retain(|s, _| {
                !(*s >= base && u64::from(*s) < end && (s - base).is_multiple_of(stride))
            });
        }
    }

    /// Keeps only what both arms of a branch left unchanged from `before`:
    /// values an arm produced do not dominate the join.
    fn join(&mut self, before: &Facts, arms: [&Facts; 2]) {
        self.known = before
            .0
            .iter()
            .filter(|(s, v)| arms.iter().all(|a| a.0.get(s) == Some(v)))
            .map(|(s, v)| (*s, *v))
            .collect();
        self.consts = before
            .1
            .iter()
            .filter(|(l, v)| arms.iter().all(|a| a.1.get(l) == Some(v)))
            .map(|(l, v)| (*l, *v))
            .collect();
    }

    fn facts(&self) -> Facts {
        (self.known.clone(), self.consts.clone())
    }

    fn set_facts(&mut self, f: Facts) -> Facts {
        let known = std::mem::replace(&mut self.known, f.0);
        let consts = std::mem::replace(&mut self.consts, f.1);
        (known, consts)
    }

    /// Defines local `l` as `v`, which no longer holds a known constant.
    fn define(&mut self, l: LocalId, v: Value) {
        self.consts.remove(&l);
        self.b.def_var(self.vars[l as usize], v);
    }

    /// Address of slot `base + index * stride` (index already checked).
    fn slot_addr(&mut self, base: u32, index: Value, stride: u32) -> Value {
        let off = self.b.ins().imul_imm_s(index, i64::from(stride) * 8);
        let addr = self.b.ins().iadd(self.state, off);
        self.b.ins().iadd_imm_s(addr, i64::from(base) * 8)
    }

    fn call(&mut self, f: usize, args: &[Value]) -> Option<Value> {
        self.host_calls = true;
        let mut all = vec![self.ctx];
        all.extend_from_slice(args);
        let inst = self.b.ins().call(self.host[f], &all);
        self.b.inst_results(inst).first().copied()
    }

    fn i32(&mut self, v: u32) -> Value {
        self.b.ins().iconst(types::I32, i64::from(v))
    }

    fn fault(&mut self, fault: u32) {
        let id = self.i32(fault);
        self.call(idx::FAULT, &[id]);
    }

    /// Evaluates an index and branches: returns the in-range index and
    /// leaves the builder in the in-range block; the out-of-range block
    /// faults and jumps to `done`.
    fn checked_index(
        &mut self,
        ix: &Indexed,
        done: cranelift_codegen::ir::Block,
        done_args: &[Value],
    ) -> Value {
        let index = self.expr(&ix.index);
        self.checked(index, ix.len, ix.fault, done, done_args)
    }

    fn checked(
        &mut self,
        index: Value,
        len: u32,
        fault: u32,
        done: cranelift_codegen::ir::Block,
        done_args: &[Value],
    ) -> Value {
        let in_range = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, index, i64::from(len));
        let ok = self.b.create_block();
        let bad = self.b.create_block();
        self.b.ins().brif(in_range, ok, &[], bad, &[]);
        self.b.switch_to_block(bad);
        self.fault(fault);
        let args: Vec<BlockArg> = done_args.iter().map(|v| BlockArg::Value(*v)).collect();
        self.b.ins().jump(done, &args);
        self.b.switch_to_block(ok);
        index
    }

    fn expr(&mut self, e: &Expr) -> Value {
        match e {
            Expr::Const(_, v) => self.b.ins().iconst(I64, *v as i64),
            Expr::Local(l) => self.b.use_var(self.vars[*l as usize]),
            Expr::Load(s) => self.load_slot(*s),
            Expr::LoadIndexed(ix) if constant_slot(ix, &self.consts).is_some() => {
                let slot = constant_slot(ix, &self.consts).expect("guard checked the slot");
                self.load_slot(slot)
            }
            Expr::LoadIndexed(ix) => {
                let done = self.b.create_block();
                let result = self.b.append_block_param(done, I64);
                let zero = self.b.ins().iconst(I64, 0);
                let index = self.checked_index(ix, done, &[zero]);
                let addr = self.slot_addr(ix.base, index, ix.stride);
                let v = self.b.ins().load(I64, flags(), addr, 0);
                self.b.ins().jump(done, &[BlockArg::Value(v)]);
                self.b.switch_to_block(done);
                result
            }
            Expr::Unary(op, ty, a) => {
                let a = self.expr(a);
                self.unary(*op, *ty, a)
            }
            Expr::Binary(op, ty, a, b) => {
                let a = self.expr(a);
                let b = self.expr(b);
                self.binary(*op, *ty, a, b)
            }
            Expr::Cast { from, to, arg } => {
                let a = self.expr(arg);
                self.cast(*from, *to, a)
            }
            Expr::Select { cond, then, els } => {
                let c = self.expr(cond);
                let t = self.b.create_block();
                let f = self.b.create_block();
                let done = self.b.create_block();
                let result = self.b.append_block_param(done, I64);
                self.b.ins().brif(c, t, &[], f, &[]);
                // Arms that read no state leave the known values as they
                // are: no snapshot to copy and join (a select tree over a
                // large temporary array has one select per element, and a
                // snapshot per select copied every known slot).
                let reads = |e: &Expr| {
                    let mut r = false;
                    e.visit(&mut |x| r |= matches!(x, Expr::Load(_) | Expr::LoadIndexed(_)));
                    r
                };
                if !reads(then) && !reads(els) {
                    self.b.switch_to_block(t);
                    let tv = self.expr(then);
                    self.b.ins().jump(done, &[BlockArg::Value(tv)]);
                    self.b.switch_to_block(f);
                    let fv = self.expr(els);
                    self.b.ins().jump(done, &[BlockArg::Value(fv)]);
                    self.b.switch_to_block(done);
                    return result;
                }
                let before = self.facts();
                self.b.switch_to_block(t);
                let tv = self.expr(then);
                self.b.ins().jump(done, &[BlockArg::Value(tv)]);
                let after_then = self.set_facts(before.clone());
                self.b.switch_to_block(f);
                let fv = self.expr(els);
                self.b.ins().jump(done, &[BlockArg::Value(fv)]);
                let after_else = self.facts();
                self.join(&before, [&after_then, &after_else]);
                self.b.switch_to_block(done);
                result
            }
        }
    }

    fn unary(&mut self, op: UnOp, ty: Ty, a: Value) -> Value {
        let r = match op {
            UnOp::Neg => self.b.ins().ineg(a),
            UnOp::Not => self.b.ins().bnot(a),
        };
        self.mask(r, ty)
    }

    fn cast(&mut self, from: Ty, to: Ty, a: Value) -> Value {
        if to.width <= from.width {
            // Truncation: the bits a sign extension would set are masked
            // off again.
            self.mask(a, to)
        } else if from.signed {
            let wide = self.extend(a, from);
            self.mask(wide, to)
        } else {
            // A canonical unsigned value already fits the wider type.
            a
        }
    }

    fn binary(&mut self, op: BinOp, ty: Ty, a: Value, b: Value) -> Value {
        let width = i64::from(ty.width);
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let ins = self.b.ins();
                let r = match op {
                    BinOp::Add => ins.iadd(a, b),
                    BinOp::Sub => ins.isub(a, b),
                    _ => ins.imul(a, b),
                };
                self.mask(r, ty)
            }
            BinOp::MulHi => self.b.ins().umulhi(a, b),
            // Bitwise operations of canonical operands are canonical: no
            // bit above the width can become set.
            BinOp::And => self.b.ins().band(a, b),
            BinOp::Or => self.b.ins().bor(a, b),
            BinOp::Xor => self.b.ins().bxor(a, b),
            BinOp::Div | BinOp::Rem => {
                let (sa, sb) = if ty.signed {
                    (self.extend(a, ty), self.extend(b, ty))
                } else {
                    (a, b)
                };
                let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, sb, 0);
                let mut unsafe_divisor = is_zero;
                if ty.signed {
                    // i64::MIN / -1 traps in hardware; dividing by 1 instead
                    // gives the wrapped quotient MIN and remainder 0.
                    let a_min = self.b.ins().icmp_imm_s(IntCC::Equal, sa, i64::MIN);
                    let b_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, sb, -1);
                    let ovf = self.b.ins().band(a_min, b_m1);
                    unsafe_divisor = self.b.ins().bor(is_zero, ovf);
                }
                let one = self.b.ins().iconst(I64, 1);
                let divisor = self.b.ins().select(unsafe_divisor, one, sb);
                let r = match (op, ty.signed) {
                    (BinOp::Div, true) => self.b.ins().sdiv(sa, divisor),
                    (BinOp::Div, false) => self.b.ins().udiv(sa, divisor),
                    (_, true) => self.b.ins().srem(sa, divisor),
                    (_, false) => self.b.ins().urem(sa, divisor),
                };
                let by_zero = if op == BinOp::Div {
                    self.b.ins().iconst(I64, -1)
                } else {
                    sa
                };
                let r = self.b.ins().select(is_zero, by_zero, r);
                self.mask(r, ty)
            }
            BinOp::Shl => {
                let r = self.b.ins().ishl(a, b);
                let r = self.mask(r, ty);
                let too_far = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, b, width);
                let zero = self.b.ins().iconst(I64, 0);
                self.b.ins().select(too_far, zero, r)
            }
            BinOp::Shr => {
                if ty.signed {
                    let sa = self.extend(a, ty);
                    let max = self.b.ins().iconst(I64, 63);
                    let amount = self.b.ins().umin(b, max);
                    let r = self.b.ins().sshr(sa, amount);
                    self.mask(r, ty)
                } else {
                    let r = self.b.ins().ushr(a, b);
                    let too_far =
                        self.b
                            .ins()
                            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, b, width);
                    let zero = self.b.ins().iconst(I64, 0);
                    self.b.ins().select(too_far, zero, r)
                }
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let cc = match (op, ty.signed) {
                    (BinOp::Eq, _) => IntCC::Equal,
                    (BinOp::Ne, _) => IntCC::NotEqual,
                    (BinOp::Lt, true) => IntCC::SignedLessThan,
                    (BinOp::Lt, false) => IntCC::UnsignedLessThan,
                    (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
                    (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (BinOp::Gt, true) => IntCC::SignedGreaterThan,
                    (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
                    (_, true) => IntCC::SignedGreaterThanOrEqual,
                    (_, false) => IntCC::UnsignedGreaterThanOrEqual,
                };
                let (x, y) = if ty.signed {
                    (self.extend(a, ty), self.extend(b, ty))
                } else {
                    (a, b)
                };
                let flag = self.b.ins().icmp(cc, x, y);
                self.bool_of(flag)
            }
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    /// The item buffer's stack slot, made on first use.
    fn buf(&mut self) -> cranelift_codegen::ir::StackSlot {
        if let Some(buf) = self.buf {
            return buf;
        }
        let buf = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            self.buf_words * 8,
            3,
        ));
        self.buf = Some(buf);
        buf
    }

    /// Stores `values` into the item buffer and returns its address.
    fn fill_buffer(&mut self, values: &[Value]) -> Value {
        let buf = self.buf();
        for (i, v) in values.iter().enumerate() {
            self.b.ins().stack_store(self.ptr, *v, buf, i as i32 * 8);
        }
        self.b.ins().stack_addr(self.ptr, buf, 0)
    }

    fn set_flag(&mut self, dst: u32, flag32: Value) {
        let wide = self.b.ins().uextend(I64, flag32);
        let v = self.b.ins().icmp_imm_s(IntCC::NotEqual, wide, 0);
        let v = self.bool_of(v);
        self.define(dst, v);
    }

    fn call_result(&mut self, f: usize, args: &[Value]) -> Value {
        self.call(f, args).expect("host function returns a status")
    }

    fn stmt(&mut self, s: &Stmt) {
        if self.wire_stmt(s) || self.chan_stmt(s) || self.fifo_stmt(s) {
            return;
        }
        self.plain_stmt(s);
    }

    /// Emits `s` if it is a wired send or receive (`jit/wire.rs`);
    /// returns whether it did.
    fn wire_stmt(&mut self, s: &Stmt) -> bool {
        match s {
            Stmt::Send {
                port, value, dst, ..
            } => {
                let Some(to) = self.wires.feeds(*port) else {
                    return false;
                };
                let values: Vec<Value> = value.iter().map(|e| self.expr(e)).collect();
                self.wire_values.insert(to, values);
                if let Some(d) = dst {
                    let one = self.i32(1);
                    self.set_flag(*d, one);
                }
                true
            }
            Stmt::Recv { port, ok, dst, .. } if self.wires.is_fed(*port) => {
                let values = self
                    .wire_values
                    .get(port)
                    .cloned()
                    .expect("a wire's send dominates its receive");
                let one = self.i32(1);
                self.set_flag(*ok, one);
                for (l, v) in dst.iter().zip(values) {
                    self.define(*l, v);
                }
                true
            }
            _ => false,
        }
    }

    /// `s` with every port operation through the host.
    fn plain_stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(l, e) => {
                let k = constant(e, &self.consts);
                let v = self.expr(e);
                self.define(*l, v);
                if let Some(k) = k {
                    self.consts.insert(*l, k);
                }
            }
            Stmt::Store(slot, e) => {
                let v = self.expr(e);
                self.store_slot(*slot, v);
            }
            Stmt::StoreIndexed(ix, e) if constant_slot(ix, &self.consts).is_some() => {
                let slot = constant_slot(ix, &self.consts).expect("guard checked the slot");
                let v = self.expr(e);
                self.store_slot(slot, v);
            }
            Stmt::StoreIndexed(ix, e) => {
                let index = self.expr(&ix.index);
                let v = self.expr(e);
                let done = self.b.create_block();
                let index = self.checked(index, ix.len, ix.fault, done, &[]);
                let addr = self.slot_addr(ix.base, index, ix.stride);
                self.b.ins().store(flags(), v, addr, 0);
                self.forget(ix.base, ix.len, ix.stride);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond);
                let t = self.b.create_block();
                let f = self.b.create_block();
                let done = self.b.create_block();
                self.b.ins().brif(c, t, &[], f, &[]);
                let before = self.facts();
                self.b.switch_to_block(t);
                self.block(then);
                self.b.ins().jump(done, &[]);
                let after_then = self.set_facts(before.clone());
                self.b.switch_to_block(f);
                self.block(els);
                self.b.ins().jump(done, &[]);
                let after_else = self.facts();
                self.join(&before, [&after_then, &after_else]);
                self.b.switch_to_block(done);
            }
            Stmt::While { head, cond, body } => {
                let top = self.b.create_block();
                let run = self.b.create_block();
                let done = self.b.create_block();
                self.b.ins().jump(top, &[]);
                self.b.switch_to_block(top);
                // The back edge comes from code that may store any slot and
                // assign any local: nothing known before the loop holds at
                // its top.
                self.known.clear();
                self.consts.clear();
                self.block(head);
                let c = self.expr(cond);
                self.b.ins().brif(c, run, &[], done, &[]);
                // Only the top reaches `done`: what holds after the test
                // holds there.
                let at_test = self.facts();
                self.b.switch_to_block(run);
                self.block(body);
                self.b.ins().jump(top, &[]);
                self.set_facts(at_test);
                self.b.switch_to_block(done);
            }
            Stmt::StageWrite {
                stage,
                pipe,
                value,
                sites,
            } => {
                let pipe = self.expr(pipe);
                let values: Vec<Value> = value.iter().map(|e| self.expr(e)).collect();
                let st = &self.p.stages[*stage as usize];
                let k = st.item.len() as u32;
                let (valid_next, value_next) = (st.valid_next, st.value_next);
                let done = self.claim_pipe(*stage, pipe, *sites);
                let one = self.b.ins().iconst(I64, 1);
                let addr = self.slot_addr(valid_next, pipe, 1);
                self.b.ins().store(flags(), one, addr, 0);
                let addr = self.slot_addr(value_next, pipe, k);
                for (f, v) in values.iter().enumerate() {
                    self.b.ins().store(flags(), *v, addr, f as i32 * 8);
                }
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
            Stmt::StageRetain { stage, pipe, sites } => {
                let pipe = self.expr(pipe);
                let st = &self.p.stages[*stage as usize];
                let k = st.item.len() as u32;
                let (valid, valid_next, value, value_next) =
                    (st.valid, st.valid_next, st.value, st.value_next);
                let done = self.claim_pipe(*stage, pipe, *sites);
                let from = self.slot_addr(valid, pipe, 1);
                let v = self.b.ins().load(I64, flags(), from, 0);
                let to = self.slot_addr(valid_next, pipe, 1);
                self.b.ins().store(flags(), v, to, 0);
                let from = self.slot_addr(value, pipe, k);
                let to = self.slot_addr(value_next, pipe, k);
                for f in 0..k as i32 {
                    let v = self.b.ins().load(I64, flags(), from, f * 8);
                    self.b.ins().store(flags(), v, to, f * 8);
                }
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
            Stmt::CanSend { port, dst } => {
                let id = self.i32(*port);
                let r = self.call_result(idx::CAN_SEND, &[id]);
                self.set_flag(*dst, r);
            }
            Stmt::Send {
                port,
                value,
                dst,
                fault,
            } => {
                let values: Vec<Value> = value.iter().map(|e| self.expr(e)).collect();
                let addr = self.fill_buffer(&values);
                let id = self.i32(*port);
                let required = self.i32(super::host_abi::send_site(*fault));
                let len = self.i32(values.len() as u32);
                let sent = self.call_result(idx::SEND, &[id, required, addr, len]);
                if let Some(d) = dst {
                    self.set_flag(*d, sent);
                }
            }
            Stmt::Recv {
                port,
                kind,
                ok,
                dst,
            } => {
                let buf = self.buf();
                let addr = self.b.ins().stack_addr(self.ptr, buf, 0);
                let id = self.i32(*port);
                let len = self.i32(dst.len() as u32);
                let got = match kind {
                    RecvKind::Recv | RecvKind::Peek => {
                        let remove = self.i32(u32::from(*kind == RecvKind::Recv));
                        self.call_result(idx::RECV, &[id, remove, addr, len])
                    }
                    RecvKind::Take => self.call_result(idx::TAKE, &[id, addr, len]),
                };
                self.set_flag(*ok, got);
                for (i, l) in dst.iter().enumerate() {
                    let var = self.vars[*l as usize];
                    let fresh = self.b.ins().stack_load(self.ptr, I64, buf, i as i32 * 8);
                    let old = self.b.use_var(var);
                    let v = self.b.ins().select(got, fresh, old);
                    self.define(*l, v);
                }
            }
            Stmt::Request { port, dst } => {
                let id = self.i32(*port);
                let r = self.call_result(idx::REQUEST, &[id]);
                self.set_flag(*dst, r);
            }
            Stmt::Valid { port, dst } => {
                let id = self.i32(*port);
                let r = self.call_result(idx::VALID, &[id]);
                self.set_flag(*dst, r);
            }
            Stmt::Trace { trace, args } => {
                let values: Vec<Value> = args.iter().map(|e| self.expr(e)).collect();
                let addr = self.fill_buffer(&values);
                let id = self.i32(*trace);
                let len = self.i32(values.len() as u32);
                self.call(idx::TRACE, &[id, addr, len]);
            }
            Stmt::Assert { cond, fault } => {
                let c = self.expr(cond);
                let failed = self.b.create_block();
                let done = self.b.create_block();
                self.b.ins().brif(c, done, &[], failed, &[]);
                self.b.switch_to_block(failed);
                self.fault(*fault);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
            }
            Stmt::Finish => {
                self.call(idx::FINISH, &[]);
            }
        }
    }

    /// Checks a stage pipe's range and once-per-tick rule (faulting with the
    /// statement's `sites`, see [`Stmt::StageRetain`]) and marks it touched;
    /// leaves the builder in the accepted block and returns the block where
    /// all paths meet.
    fn claim_pipe(&mut self, stage: u32, pipe: Value, sites: u32) -> cranelift_codegen::ir::Block {
        let st = &self.p.stages[stage as usize];
        let (pipes, touched) = (st.pipes, st.touched);
        let (range_fault, twice_fault) = (sites + pipes, sites);
        let (valid_next, value_next, k) = (st.valid_next, st.value_next, st.item.len() as u32);
        // The caller writes the pipe's next slots through computed addresses.
        self.forget(touched, pipes, 1);
        self.forget(valid_next, pipes, 1);
        self.forget(value_next, pipes * k, 1);
        let done = self.b.create_block();
        let pipe = self.checked(pipe, pipes, range_fault, done, &[]);
        let addr = self.slot_addr(touched, pipe, 1);
        let t = self.b.ins().load(I64, flags(), addr, 0);
        let twice = self.b.create_block();
        let first = self.b.create_block();
        self.b.ins().brif(t, twice, &[], first, &[]);
        self.b.switch_to_block(twice);
        // One fault site per pipe: the site is the first plus the pipe.
        let narrow = self.b.ins().ireduce(types::I32, pipe);
        let id = self.b.ins().iadd_imm_s(narrow, i64::from(twice_fault));
        self.call(idx::FAULT, &[id]);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(first);
        let one = self.b.ins().iconst(I64, 1);
        self.b.ins().store(flags(), one, addr, 0);
        done
    }

    /// Copies slots `from..from + count` onto `to..` in a loop: code of
    /// one size for a register of any length, where the unrolled copy of a
    /// large array made the function, and Cranelift's time on it, grow
    /// with the array (a 2^20-element memory took about a minute).
    fn copy_loop(&mut self, from: SlotId, to: SlotId, count: u32) {
        let head = self.b.create_block();
        let exit = self.b.create_block();
        let off = self.b.append_block_param(head, I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(head, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(head);
        let at = self.b.ins().iadd(self.state, off);
        let v = self.b.ins().load(I64, flags(), at, from as i32 * 8);
        self.b.ins().store(flags(), v, at, to as i32 * 8);
        let next = self.b.ins().iadd_imm_s(off, 8);
        let more = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, next, i64::from(count) * 8);
        self.b
            .ins()
            .brif(more, head, &[BlockArg::Value(next)], exit, &[]);
        self.b.switch_to_block(exit);
        // The destination changed behind the known values' back.
        self.known.retain(|s, _| !(to..to + count).contains(s));
    }

    /// A [`Commit::Sparse`]: copies the next slots written at constant
    /// positions, then for each store at a run-time index the element its
    /// local names, when in range.
    fn commit_sparse(&mut self, c: &crate::ir::SparseCommit) {
        let shift = i64::from(c.to) - i64::from(c.from);
        for &s in &c.slots {
            let v = self.fresh_load(s);
            self.known.insert(s, v);
            self.store_slot((i64::from(s) + shift) as u32, v);
        }
        for x in &c.indexed {
            let index = self.b.use_var(self.vars[x.local as usize]);
            let in_range =
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThan, index, i64::from(x.len));
            let copy = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().brif(in_range, copy, &[], done, &[]);
            self.b.switch_to_block(copy);
            let at = self.slot_addr(x.base, index, x.stride);
            let v = self.b.ins().load(I64, flags(), at, 0);
            self.b.ins().store(flags(), v, at, (shift * 8) as i32);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
        }
        // Current slots changed at run-time positions.
        if !c.indexed.is_empty() {
            self.forget(c.to, c.count, 1);
        }
    }

    fn commit(&mut self, c: &Commit) {
        match c {
            // A register written in place (`ir::opt`): nothing to copy.
            Commit::Copy { from, to, .. } if from == to => {}
            Commit::Copy { from, to, count }
                if *count >= COPY_LOOP_MIN
                    && !self.any_packed(*from, *count)
                    && !self.any_packed(*to, *count) =>
            {
                self.copy_loop(*from, *to, *count);
            }
            Commit::Copy { from, to, count } => {
                for i in 0..*count {
                    // A fresh load rather than the value the body stored:
                    // keeping every register's next value live until the
                    // commit spills them all to the stack in large units.
                    let slot = from + i;
                    let v = self.fresh_load(slot);
                    self.known.insert(slot, v);
                    self.store_slot(to + i, v);
                }
            }
            Commit::Sparse(c) => self.commit_sparse(c),
            Commit::Stage(s) => {
                let st = &self.p.stages[*s as usize];
                let k = st.item.len() as u32;
                let (valid, valid_next, value, value_next, touched) =
                    (st.valid, st.valid_next, st.value, st.value_next, st.touched);
                let zero = self.b.ins().iconst(I64, 0);
                for pipe in 0..st.pipes {
                    let t = self.load_slot(touched + pipe);
                    let nv = self.load_slot(valid_next + pipe);
                    let v = self.b.ins().band(t, nv);
                    self.store_slot(valid + pipe, v);
                    if k >= COPY_LOOP_MIN {
                        // A large item (an array): a touched pipe's value
                        // copied in a loop, an untouched one left as it is
                        // (what the select per slot below does).
                        let (copy, after) = (self.b.create_block(), self.b.create_block());
                        self.b.ins().brif(t, copy, &[], after, &[]);
                        self.b.switch_to_block(copy);
                        self.copy_loop(value_next + pipe * k, value + pipe * k, k);
                        self.b.ins().jump(after, &[]);
                        self.b.switch_to_block(after);
                        self.store_slot(touched + pipe, zero);
                        continue;
                    }
                    for f in 0..k {
                        let old = self.load_slot(value + pipe * k + f);
                        let new = self.load_slot(value_next + pipe * k + f);
                        let v = self.b.ins().select(t, new, old);
                        self.store_slot(value + pipe * k + f, v);
                    }
                    self.store_slot(touched + pipe, zero);
                }
            }
        }
    }
}
