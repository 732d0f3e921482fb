//! A packed mirror of narrow registers for the run-ahead loop of a quiet
//! group: the vector code's lanes without the `u64` slot layout.
//!
//! Every slot is a canonical `u64` (`docs/architecture.md`, the IR), so an
//! `i32x4` group of the SLP vectorizer (`jit/simd.rs`) loads four slots as
//! two 16-byte loads narrowed by a shuffle and stores them widened again
//! (three lane conversions beside six operations per four pipeline
//! stages). Here the run-ahead form (`jit/edges.rs`) of a group that makes
//! no host call copies the slots of at most 32 bits that its code touches
//! into a stack array of `u32` once per call (*pack*), runs its edges on
//! that array, where a group is one plain `i32x4` load and store, and
//! copies the slots it stores back at the end (*unpack*). This is exact:
//! such a group's code is the only thing that runs during the call (no
//! host call, so no trace, fault, FIFO, channel or observer sees the
//! state mid-call; registers are visible only to their own unit, and the
//! runtime reads the state only after the call returns), the canonical
//! value of a type of at most 32 bits is its `u32`, and a slot not stored
//! keeps its value.
//!
//! A small mirror (at most [`MAX_REGISTER_QUADS`] quads of 16 bytes, every
//! group storing a whole quad) is kept in vector registers instead: one
//! `i32x4` variable per quad, carried from edge to edge, a group's input
//! one quad or two neighbouring quads' lanes (`palignr`), a scalar slot
//! one lane. A short pipeline's edges then no longer wait for the stores
//! of the edge before (16-byte loads spanning two stores, which the store
//! buffer cannot forward), so runs of [`MIN_REGISTER_GROUPS`] groups are
//! vectorized there rather than `simd::MIN_GROUPS`.
//!
//! The loop is compiled twice: packed, taken when the call runs at least
//! [`MIN_EDGES`] edges, and as before for shorter calls (the instant
//! loop's one-edge calls), where packing would cost more than it saves.
//! Only groups whose code makes at least `simd::MIN_GROUPS` `i32x4` groups
//! of packed slots (or [`MIN_REGISTER_GROUPS`] in registers) get the
//! packed copy; [`crate::jit::JitConfig::packed`] turns it off.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{
    ConstantData, Endianness, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value, types,
};
use cranelift_frontend::Variable;

use super::Gen;
use super::simd::{MIN_GROUPS, Task, planned_tasks, vector_flags};
use crate::ir::{Commit, Expr, Program, SlotId, Stmt};

/// The fewest edges a call must run to take the packed loop: packing and
/// unpacking cost about as much as one or two edges of the group's code.
pub(super) const MIN_EDGES: i64 = 8;

/// The most 16-byte quads of a mirror kept in vector registers across
/// edges (the x86-64 back end has 16; the loop needs a few more).
const MAX_REGISTER_QUADS: u32 = 10;

/// The fewest `i32x4` groups a mirror in registers is made for: a run of
/// 4 groups (a 16-stage pipeline) is then worth vectorizing, as its
/// edges no longer wait for stores.
const MIN_REGISTER_GROUPS: usize = 4;

/// Where a group's packed slots live in the mirror.
pub(super) struct Layout {
    /// Byte offset of each packed slot in the mirror.
    offsets: HashMap<SlotId, i32>,
    /// The packed slots, in slot order (packed at entry).
    slots: Vec<SlotId>,
    /// The packed slots the code stores, in slot order (unpacked at exit).
    stored: Vec<SlotId>,
    /// The mirror's size in bytes.
    bytes: u32,
    /// Whether the mirror's quads are kept in vector registers.
    registers: bool,
}

/// The mirror while the packed loop is generated.
pub(super) struct Mirror {
    home: Home,
    offsets: HashMap<SlotId, i32>,
}

/// Where the mirror is.
enum Home {
    /// A stack slot at this address, computed before the loop.
    Memory(Value),
    /// One `i32x4` variable per 16 bytes: values carried from edge to
    /// edge in registers, for mirrors of at most [`MAX_REGISTER_QUADS`]
    /// quads whose groups all store whole quads.
    Registers(Vec<Variable>),
}

/// The slots a group's code reads and writes, if it is made only of
/// assignments, stores, branches and register copies (no host call, no
/// indexed access, no stage register).
#[derive(Default)]
struct Access {
    loaded: HashSet<SlotId>,
    stored: HashSet<SlotId>,
}

impl Access {
    fn stmts(&mut self, stmts: &[Stmt]) -> Option<()> {
        for s in stmts {
            match s {
                Stmt::Assign(_, e) => self.expr(e)?,
                Stmt::Store(slot, e) => {
                    self.expr(e)?;
                    self.stored.insert(*slot);
                }
                Stmt::If { cond, then, els } => {
                    self.expr(cond)?;
                    self.stmts(then)?;
                    self.stmts(els)?;
                }
                _ => return None,
            }
        }
        Some(())
    }

    fn expr(&mut self, e: &Expr) -> Option<()> {
        let mut ok = true;
        e.visit(&mut |x| match x {
            Expr::Load(s) => {
                self.loaded.insert(*s);
            }
            Expr::LoadIndexed(_) => ok = false,
            _ => {}
        });
        ok.then_some(())
    }

    fn commit(&mut self, c: &Commit) -> Option<()> {
        match c {
            // Written in place: the code generator copies nothing.
            Commit::Copy { from, to, .. } if from == to => Some(()),
            Commit::Copy { from, to, count } => {
                self.loaded.extend(*from..from + count);
                self.stored.extend(*to..to + count);
                Some(())
            }
            Commit::Stage(_) | Commit::Sparse(_) => None,
        }
    }
}

/// The mirror's layout for the run-ahead loop of a group of `units` that
/// makes no host call, or `None` where it does not pay (fewer than
/// `MIN_GROUPS` `i32x4` groups over packed slots) or does not apply.
pub(super) fn layout(program: &Program, units: &[u32]) -> Option<Layout> {
    let mut access = Access::default();
    for &u in units {
        let unit = program.units.get(u as usize)?;
        access.stmts(&unit.body)?;
        for c in &unit.commits {
            access.commit(c)?;
        }
    }
    let narrow = |s: &SlotId| {
        program
            .slots
            .get(*s as usize)
            .is_some_and(|slot| slot.ty.width <= 32)
    };
    let mut slots: Vec<SlotId> = access
        .loaded
        .iter()
        .chain(&access.stored)
        .copied()
        .filter(narrow)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    slots.sort_unstable();
    let rank: HashMap<SlotId, usize> = slots.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    // The first slot's rank of every `i32x4` group over packed slots, when
    // runs of `min` groups are vectorized; and whether every group is one.
    let firsts = |min: usize| {
        let (mut firsts, mut all) = (Vec::new(), true);
        for &u in units {
            planned_tasks(&program.units[u as usize].body, min, &mut |_, t| {
                if let Task::Vector(g) = t {
                    if g.narrow && g.stride == 1 && (0..4).all(|j| rank.contains_key(&(g.slot + j)))
                    {
                        firsts.push(rank[&g.slot]);
                    } else {
                        all = false;
                    }
                }
            });
        }
        (firsts, all)
    };
    // Start the mirror so that most groups store 16-byte aligned (their
    // loads, a slot lower in a pipeline, then are not).
    let pad = |firsts: &[usize]| {
        let mut phases = [0usize; 4];
        for r in firsts {
            phases[r % 4] += 1;
        }
        let common = (0..4).max_by_key(|p| (phases[*p], 4 - p)).unwrap_or(0);
        (4 - common) % 4
    };
    let bytes = |pad: usize| (4 * (slots.len() + pad) as u32).next_multiple_of(16);
    // In registers: small mirrors whose groups all store whole quads (not
    // planned at all for larger ones: planning costs a pass over the code).
    let (small, all) = if bytes(0) / 16 <= MAX_REGISTER_QUADS {
        firsts(MIN_REGISTER_GROUPS)
    } else {
        (Vec::new(), false)
    };
    let registers = all
        && small.len() >= MIN_REGISTER_GROUPS
        && bytes(pad(&small)) / 16 <= MAX_REGISTER_QUADS
        && small.iter().all(|r| (r + pad(&small)) % 4 == 0);
    let firsts = if registers {
        small
    } else {
        firsts(MIN_GROUPS).0
    };
    if !registers && firsts.len() < MIN_GROUPS {
        return None;
    }
    let pad = pad(&firsts);
    let offsets = slots
        .iter()
        .map(|s| (*s, 4 * (rank[s] + pad) as i32))
        .collect();
    let mut stored: Vec<SlotId> = slots
        .iter()
        .copied()
        .filter(|s| access.stored.contains(s))
        .collect();
    stored.sort_unstable();
    let bytes = bytes(pad);
    Some(Layout {
        offsets,
        slots,
        stored,
        bytes,
        registers,
    })
}

/// How many slots the run-ahead loop of a group of `units` keeps packed
/// (0 where it keeps none), whatever [`crate::jit::JitConfig::packed`] says: for tests
/// and reports.
pub fn packed_slots(program: &Program, units: &[u32]) -> usize {
    layout(program, units).map_or(0, |l| l.slots.len())
}

/// Whether the run-ahead loop of a group of `units` keeps its packed slots
/// in vector registers from edge to edge, whatever
/// [`crate::jit::JitConfig::packed`] says: for tests and reports.
pub fn packed_in_registers(program: &Program, units: &[u32]) -> bool {
    layout(program, units).is_some_and(|l| l.registers)
}

/// Runs of slots in `slots` (sorted): `(first, length)`, each at most 4
/// long, of consecutive slots.
fn runs(slots: &[SlotId]) -> Vec<(SlotId, u32)> {
    let mut out: Vec<(SlotId, u32)> = Vec::new();
    for &s in slots {
        match out.last_mut() {
            Some((first, len)) if *len < 4 && *first + *len == s => *len += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}

impl Gen<'_> {
    /// The fewest groups a run is vectorized for here: fewer when the
    /// mirror is in registers.
    pub(super) fn min_groups(&self) -> usize {
        match self.packed.as_ref().map(|m| &m.home) {
            Some(Home::Registers(_)) => MIN_REGISTER_GROUPS,
            _ => MIN_GROUPS,
        }
    }

    /// Makes the mirror and copies the packed slots into it; the code
    /// built next (the loop) reads and writes them there.
    pub(super) fn pack(&mut self, layout: &Layout) {
        if layout.registers {
            return self.pack_registers(layout);
        }
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            layout.bytes,
            4,
        ));
        let base = self.b.ins().stack_addr(self.ptr, slot, 0);
        for (s, len) in runs(&layout.slots) {
            let off = layout.offsets[&s];
            if len == 4 {
                let v = self.state_vload32(s);
                self.b.ins().store(vector_flags(), v, base, off);
                continue;
            }
            for j in 0..len {
                let v = self.state_load32(s + j);
                self.b
                    .ins()
                    .store(super::flags(), v, base, off + 4 * j as i32);
            }
        }
        self.packed = Some(Mirror {
            home: Home::Memory(base),
            offsets: layout.offsets.clone(),
        });
    }

    /// The low half of state slot `s`.
    fn state_load32(&mut self, s: SlotId) -> Value {
        let v = self
            .b
            .ins()
            .load(types::I64, super::flags(), self.state, s as i32 * 8);
        self.b.ins().ireduce(types::I32, v)
    }

    /// The slot at each lane of each quad of the mirror.
    fn quad_slots(layout: &Layout) -> Vec<[Option<SlotId>; 4]> {
        let mut quads = vec![[None; 4]; layout.bytes as usize / 16];
        for (s, off) in &layout.offsets {
            quads[*off as usize / 16][(*off as usize % 16) / 4] = Some(*s);
        }
        quads
    }

    /// [`Gen::pack`] into one variable per quad.
    fn pack_registers(&mut self, layout: &Layout) {
        let mut vars = Vec::new();
        for lanes in Self::quad_slots(layout) {
            let var = self.b.declare_var(types::I32X4);
            let v = match lanes {
                [Some(s), Some(a), Some(b), Some(c)] if [a, b, c] == [s + 1, s + 2, s + 3] => {
                    self.state_vload32(s)
                }
                _ => {
                    let zero = self.b.ins().iconst(types::I32, 0);
                    let mut v = self.b.ins().splat(types::I32X4, zero);
                    for (j, s) in lanes.iter().enumerate() {
                        if let Some(s) = s {
                            let x = self.state_load32(*s);
                            v = self.b.ins().insertlane(v, x, j as u8);
                        }
                    }
                    v
                }
            };
            self.b.def_var(var, v);
            vars.push(var);
        }
        self.packed = Some(Mirror {
            home: Home::Registers(vars),
            offsets: layout.offsets.clone(),
        });
    }

    /// Copies the packed slots the code stores back into the state and
    /// ends the mirror.
    pub(super) fn unpack(&mut self, layout: &Layout) {
        let Some(m) = self.packed.take() else {
            return;
        };
        match &m.home {
            Home::Memory(base) => {
                for (s, len) in runs(&layout.stored) {
                    let off = m.offsets[&s];
                    if len == 4 {
                        let v = self.b.ins().load(types::I32X4, vector_flags(), *base, off);
                        self.widen_store(s, v);
                        continue;
                    }
                    for j in 0..len {
                        let at = off + 4 * j as i32;
                        let v = self.b.ins().load(types::I32, super::flags(), *base, at);
                        self.state_store32(s + j, v);
                    }
                }
            }
            Home::Registers(vars) => {
                let stored: HashSet<SlotId> = layout.stored.iter().copied().collect();
                for (q, lanes) in Self::quad_slots(layout).into_iter().enumerate() {
                    let v = self.b.use_var(vars[q]);
                    match lanes {
                        [Some(s), Some(a), Some(b), Some(c)]
                            if [a, b, c] == [s + 1, s + 2, s + 3]
                                && (s..s + 4).all(|x| stored.contains(&x)) =>
                        {
                            self.widen_store(s, v);
                        }
                        _ => {
                            for (j, s) in lanes.iter().enumerate() {
                                if let Some(s) = s.filter(|s| stored.contains(s)) {
                                    let x = self.b.ins().extractlane(v, j as u8);
                                    self.state_store32(s, x);
                                }
                            }
                        }
                    }
                }
            }
        }
        self.known.clear();
    }

    /// Stores the four lanes of `v` into state slots `s..s + 4`.
    fn widen_store(&mut self, s: SlotId, v: Value) {
        let lo = self.b.ins().uwiden_low(v);
        let hi = self.b.ins().uwiden_high(v);
        self.b
            .ins()
            .store(vector_flags(), lo, self.state, s as i32 * 8);
        self.b
            .ins()
            .store(vector_flags(), hi, self.state, (s as i32 + 2) * 8);
    }

    /// Stores the `u32` `v` into state slot `s`, zero-extended.
    fn state_store32(&mut self, s: SlotId, v: Value) {
        let v = self.b.ins().uextend(types::I64, v);
        self.b
            .ins()
            .store(super::flags(), v, self.state, s as i32 * 8);
    }

    /// Where slot `s` is packed: its byte offset in the mirror.
    fn packed_at(&self, s: SlotId) -> Option<i32> {
        self.packed.as_ref()?.offsets.get(&s).copied()
    }

    /// Whether any of the `n` slots from `s` is packed.
    pub(super) fn any_packed(&self, s: SlotId, n: u32) -> bool {
        (0..n).any(|j| self.packed_at(s + j).is_some())
    }

    /// The mirror's offset of `slots` (four) if they are packed side by
    /// side in this order.
    fn packed_lanes(&self, slots: &[SlotId]) -> Option<i32> {
        let off = self.packed_at(*slots.first()?)?;
        (slots.len() == 4 && (1..4).all(|j| self.packed_at(slots[j]) == Some(off + 4 * j as i32)))
            .then_some(off)
    }

    /// The four `slots` as one `i32x4`, if they are packed side by side:
    /// one load from the mirror in memory; from registers, a quad or two
    /// neighbouring quads' lanes (`palignr`).
    pub(super) fn packed_vload(&mut self, slots: &[SlotId]) -> Option<Value> {
        let off = self.packed_lanes(slots)?;
        let m = self.packed.as_ref()?;
        match &m.home {
            Home::Memory(base) => {
                let base = *base;
                Some(self.b.ins().load(types::I32X4, vector_flags(), base, off))
            }
            Home::Registers(vars) => {
                let (q, k) = (off as usize / 16, off as u8 % 16);
                if k == 0 {
                    return Some(self.b.use_var(vars[q]));
                }
                let (lo, hi) = (vars[q], vars[q + 1]);
                let little = MemFlagsData::new().with_endianness(Endianness::Little);
                let lo = self.b.use_var(lo);
                let hi = self.b.use_var(hi);
                let lo = self.b.ins().bitcast(types::I8X16, little, lo);
                let hi = self.b.ins().bitcast(types::I8X16, little, hi);
                let mask: Vec<u8> = (k..k + 16).collect();
                let mask = self.b.func.dfg.immediates.push(ConstantData::from(mask));
                let bytes = self.b.ins().shuffle(lo, hi, mask);
                Some(self.b.ins().bitcast(types::I32X4, little, bytes))
            }
        }
    }

    /// Whether a group's four lanes from slot `s` can be stored as one
    /// `i32x4` into the mirror (a whole quad, when in registers).
    pub(super) fn packed_store_ok(&self, s: SlotId) -> bool {
        let Some(off) = self.packed_lanes(&[s, s + 1, s + 2, s + 3]) else {
            return false;
        };
        match self.packed.as_ref().map(|m| &m.home) {
            Some(Home::Memory(_)) => true,
            Some(Home::Registers(_)) => off % 16 == 0,
            None => false,
        }
    }

    /// Stores `v` (an `i32x4`) as slots `s..s + 4` ([`Gen::packed_store_ok`]).
    pub(super) fn packed_vstore(&mut self, s: SlotId, v: Value) {
        let off = self.packed_at(s).expect("packed_store_ok checked");
        match &self.packed.as_ref().expect("packed_store_ok checked").home {
            Home::Memory(base) => {
                let base = *base;
                self.b.ins().store(vector_flags(), v, base, off);
            }
            Home::Registers(vars) => {
                let var = vars[off as usize / 16];
                self.b.def_var(var, v);
            }
        }
    }

    /// Slot `s`'s value from memory: the mirror's `u32` or the state's
    /// `u64` (no known value reused).
    pub(super) fn fresh_load(&mut self, s: SlotId) -> Value {
        let Some(off) = self.packed_at(s) else {
            return self
                .b
                .ins()
                .load(types::I64, super::flags(), self.state, s as i32 * 8);
        };
        let v = match &self.packed.as_ref().expect("packed").home {
            Home::Memory(base) => {
                let base = *base;
                self.b.ins().load(types::I32, super::flags(), base, off)
            }
            Home::Registers(vars) => {
                let var = vars[off as usize / 16];
                let quad = self.b.use_var(var);
                self.b.ins().extractlane(quad, (off % 16 / 4) as u8)
            }
        };
        self.b.ins().uextend(types::I64, v)
    }

    /// Stores the canonical `v` to slot `s` in memory (the mirror when
    /// packed).
    pub(super) fn raw_store(&mut self, s: SlotId, v: Value) {
        let Some(off) = self.packed_at(s) else {
            self.b
                .ins()
                .store(super::flags(), v, self.state, s as i32 * 8);
            return;
        };
        let v = self.b.ins().ireduce(types::I32, v);
        match &self.packed.as_ref().expect("packed").home {
            Home::Memory(base) => {
                let base = *base;
                self.b.ins().store(super::flags(), v, base, off);
            }
            Home::Registers(vars) => {
                let var = vars[off as usize / 16];
                let quad = self.b.use_var(var);
                let quad = self.b.ins().insertlane(quad, v, (off % 16 / 4) as u8);
                self.b.def_var(var, quad);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The run-ahead loops of the vectorizer's random programs (every
    //! width and signedness; pipelines forward and backward, element-wise
    //! updates, banks that swap, gathers and record fields; through next
    //! slots and register copies, and in place after `ir::opt`), called for
    //! runs of edges short and long, against the interpreter ticking the
    //! unit edge by edge: every slot must agree after every call.

    use std::collections::HashMap;

    use super::{MIN_EDGES, packed_in_registers, packed_slots, runs};
    use crate::engine::{Engine, initial_state};
    use crate::interp::Interpreter;
    use crate::ir::{Commit, opt};
    use crate::jit::codegen::simd::tests::program;
    use crate::jit::edges::needs_next_edge;
    use crate::jit::{GroupCode, Jit, JitConfig};
    use crate::testing::script_host::ScriptHost;

    #[test]
    fn packed_loops_agree_with_the_interpreter() {
        // Per form: programs packed through next slots, and in place.
        let mut packed: HashMap<String, (usize, usize)> = HashMap::new();
        let mut widths = std::collections::HashSet::new();
        // Per form: programs packed in registers.
        let mut registers: HashMap<String, usize> = HashMap::new();
        for seed in 0..1500 {
            let (p, ty, n, form) = program(seed);
            let mut in_place = p.clone();
            opt::optimize(&mut in_place);
            for (label, q) in [("next slots", &p), ("in place", &in_place)] {
                assert!(
                    !needs_next_edge(q, &[0], &crate::jit::Wires::default()),
                    "seed {seed}: not quiet"
                );
                let slots = packed_slots(q, &[0]);
                if slots > 0 {
                    let copies = q.units[0]
                        .commits
                        .iter()
                        .any(|c| matches!(c, Commit::Copy { from, to, .. } if from != to));
                    let f = packed.entry(format!("{form:?}")).or_default();
                    f.0 += usize::from(copies);
                    f.1 += usize::from(!copies);
                    widths.insert(ty.width);
                    *registers.entry(format!("{form:?}")).or_default() +=
                        usize::from(packed_in_registers(q, &[0]));
                }
                let config = JitConfig {
                    verify: true,
                    ..JitConfig::default()
                };
                let jit = Jit::compile_with_groups_ahead(q, config, &[vec![0]], &[true])
                    .expect("compiles");
                let (GroupCode::Edges(f), mut contexts) = jit.group(0, std::ptr::null()) else {
                    panic!("seed {seed}: no run-ahead form");
                };
                let mut interp = Interpreter::new(std::sync::Arc::new(q.clone()));
                let mut host = ScriptHost::new(q, seed);
                let mut want = initial_state(q);
                let mut got = want.clone();
                // Calls below `MIN_EDGES` take the plain loop.
                for (call, edges) in [1u64, MIN_EDGES as u64, 3, 13, 7, 64].iter().enumerate() {
                    for _ in 0..*edges {
                        interp.tick_unit(&mut want, 0, &mut host);
                    }
                    // SAFETY: the group makes no host call (checked above),
                    // so its context is never read; `got` holds every slot.
                    let done = unsafe { f(got.as_mut_ptr(), contexts.as_mut_ptr(), *edges) };
                    assert_eq!(done, *edges, "seed {seed}: edges done");
                    if let Some(s) = (0..want.len()).find(|s| want[*s] != got[*s]) {
                        panic!(
                            "seed {seed} ({label}, {ty}, n = {n}, {form:?}, {slots} packed), call {call} of {edges} edges: slot {s} ({}) is {:#x} in interp, {:#x} in jit\n{}",
                            q.slots[s].name,
                            want[s],
                            got[s],
                            crate::ir::print::program(q)
                        );
                    }
                }
            }
        }
        // Every form but records (strided groups, which the mirror does not
        // speed up) was packed both ways, across narrow widths.
        for form in ["Forward", "Backward", "Elementwise", "Swap", "Gather"] {
            let f = packed.get(form).copied().unwrap_or_default();
            assert!(f.0 > 0 && f.1 > 0, "{form}: {packed:?}");
        }
        assert!(widths.len() >= 6, "packed widths: {widths:?}");
        // Short pipelines and updates kept their mirror in registers.
        for form in ["Forward", "Backward", "Elementwise", "Gather"] {
            assert!(
                registers.get(form).is_some_and(|n| *n > 0),
                "{form}: {registers:?}"
            );
        }
        assert!(widths.iter().all(|w| *w <= 32), "{widths:?}");
    }

    #[test]
    fn runs_split_at_gaps_and_after_four() {
        assert_eq!(
            runs(&[1, 2, 3, 4, 5, 7, 9, 10]),
            vec![(1, 4), (5, 1), (7, 1), (9, 2)]
        );
        assert_eq!(runs(&[]), vec![]);
    }
}
