//! `random()`: a counter-based generator, lowered to ordinary IR operations.
//!
//! The value of a `random()` call is a pure function of the run seed, the
//! unit instance path, the call site, the unit's local cycle and the
//! iterations of the enclosing `for` loops (contract §7: a run is a pure
//! function of the design, its parameters and its seeds). There is no
//! generator state to advance, so evaluation order, thread count and
//! resuming a run cannot change a value.
//!
//! With `mix` the splitmix64 finalizer:
//!
//! - unit seed `U = mix(seed ^ mix(fnv1a64(path)))`, held in a slot of the
//!   unit (written at lowering, never by the tick);
//! - site key `K = mix(SITE ^ site)`, then `K = mix(K ^ (i + 1))` for each
//!   enclosing loop's iteration `i`, outermost first (a compile-time constant);
//! - the tick's stream `T = U + cycle * GOLDEN`, where `cycle` is a slot the
//!   tick increments at its end, so it equals the local cycle;
//! - the value `mix(T ^ K)`, truncated to the expression's type (the low
//!   bits; `bool` is the lowest bit).
//!
//! Lowering to existing operations (wrapping `u64` arithmetic, shifts,
//! xor, truncating casts) means both engines compute it with code that is
//! already tested bit for bit against each other, and JIT instances of one
//! unit still share their code (the seed is state, not a constant).

use crate::ir::{BinOp, Expr, Ty};

/// The run seed when none is given (`chronc run` without `--seed`).
pub const DEFAULT_SEED: u64 = 0;

/// The Weyl increment of splitmix64 (2^64 / golden ratio).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// Separates site keys from other uses of `mix`.
const SITE: u64 = 0x5EED_5EED_0000_0000;

/// The splitmix64 finalizer: a bijection of `u64` with good avalanche.
pub fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the bytes of an instance path.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The seed of one unit instance in a run.
pub fn unit_seed(seed: u64, path: &str) -> u64 {
    mix(seed ^ mix(fnv1a(path)))
}

/// The key of a call site inside the given loop iterations (outermost first).
pub fn site_key(site: u32, iterations: &[u32]) -> u64 {
    iterations.iter().fold(mix(SITE ^ u64::from(site)), |k, i| {
        mix(k ^ (u64::from(*i) + 1))
    })
}

/// The 64-bit value of `random()` at a site and a local cycle, before
/// truncation to its type: the reference the lowered code must match.
pub fn value(unit_seed: u64, cycle: u64, key: u64) -> u64 {
    mix(unit_seed.wrapping_add(cycle.wrapping_mul(GOLDEN)) ^ key)
}

/// IR for the tick's stream `T` from the unit's seed and cycle slots.
pub(super) fn stream(seed_slot: u32, cycle_slot: u32) -> Expr {
    bin(
        BinOp::Add,
        Expr::Load(seed_slot),
        bin(
            BinOp::Mul,
            Expr::Load(cycle_slot),
            Expr::Const(Ty::U64, GOLDEN),
        ),
    )
}

/// IR for the end-of-tick `cycle += 1`.
pub(super) fn next_cycle(cycle_slot: u32) -> Expr {
    bin(BinOp::Add, Expr::Load(cycle_slot), Expr::Const(Ty::U64, 1))
}

/// IR for `mix(stream ^ key)` truncated to `ty`; `temp` binds a value to a
/// fresh `u64` local (each step reads its input twice). `key` is a
/// constant, or computed at run time inside run-time loops ([`mix_ir`]).
pub(super) fn draw(stream: Expr, key: Expr, ty: Ty, mut temp: impl FnMut(Expr) -> Expr) -> Expr {
    let z = mix_ir(bin(BinOp::Xor, stream, key), &mut temp);
    if ty == Ty::U64 {
        z
    } else {
        Expr::Cast {
            from: Ty::U64,
            to: ty,
            arg: Box::new(z),
        }
    }
}

/// IR for [`mix`]`(z)`.
pub(super) fn mix_ir(z: Expr, temp: &mut impl FnMut(Expr) -> Expr) -> Expr {
    let z = temp(z);
    let z = temp(bin(
        BinOp::Mul,
        xor_shift(z, 30),
        Expr::Const(Ty::U64, 0xBF58_476D_1CE4_E5B9),
    ));
    let z = temp(bin(
        BinOp::Mul,
        xor_shift(z, 27),
        Expr::Const(Ty::U64, 0x94D0_49BB_1331_11EB),
    ));
    xor_shift(z, 31)
}

/// An iteration of a loop around a `random()` call: a constant in an
/// unrolled loop, a `u64` local in a run-time one.
#[derive(Clone, Copy, Debug)]
pub(super) enum Iteration {
    /// Unrolled: the loop variable's value.
    Const(u32),
    /// At run time: the local holding the loop variable's value (`for`) or
    /// the iteration's number from 0 (`while`), as a `u64`.
    Local(u32),
}

/// IR for the key of a call site inside `iterations` (outermost first):
/// [`site_key`] where they are all constants, else the same fold with
/// the run-time ones computed.
pub(super) fn site_key_ir(
    site: u32,
    iterations: &[Iteration],
    mut temp: impl FnMut(Expr) -> Expr,
) -> Expr {
    let consts = iterations
        .iter()
        .take_while(|i| matches!(i, Iteration::Const(_)))
        .map(|i| match i {
            Iteration::Const(k) => *k,
            Iteration::Local(_) => unreachable!("taken while constant"),
        })
        .collect::<Vec<_>>();
    let mut key = Expr::Const(Ty::U64, site_key(site, &consts));
    for it in &iterations[consts.len()..] {
        let next = match it {
            Iteration::Const(k) => Expr::Const(Ty::U64, u64::from(*k) + 1),
            Iteration::Local(l) => bin(BinOp::Add, Expr::Local(*l), Expr::Const(Ty::U64, 1)),
        };
        let mixed = mix_ir(bin(BinOp::Xor, key, next), &mut temp);
        key = temp(mixed);
    }
    key
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Ty::U64, Box::new(a), Box::new(b))
}

/// `z ^ (z >> k)` for a cheap-to-repeat `z`.
fn xor_shift(z: Expr, k: u64) -> Expr {
    let shifted = bin(BinOp::Shr, z.clone(), Expr::Const(Ty::unsigned(32), k));
    bin(BinOp::Xor, z, shifted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_is_splitmix64() {
        // The first outputs of splitmix64 seeded with 0 (state += GOLDEN,
        // then the finalizer), as published with the algorithm.
        assert_eq!(mix(GOLDEN), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix(GOLDEN.wrapping_mul(2)), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn inputs_each_change_the_value() {
        let u = unit_seed(1, "top.a");
        let k = site_key(0, &[]);
        let base = value(u, 5, k);
        assert_ne!(base, value(unit_seed(2, "top.a"), 5, k), "seed");
        assert_ne!(base, value(unit_seed(1, "top.b"), 5, k), "path");
        assert_ne!(base, value(u, 6, k), "cycle");
        assert_ne!(base, value(u, 5, site_key(1, &[])), "site");
        assert_ne!(site_key(0, &[0]), site_key(0, &[1]), "iteration");
        assert_ne!(site_key(0, &[0, 1]), site_key(0, &[1, 0]), "loop nesting");
        assert_ne!(site_key(0, &[]), site_key(0, &[0]), "inside a loop");
    }
}

#[cfg(test)]
mod lowered {
    use std::sync::Arc;

    use chronon_lang::span::SourceMap;
    use chronon_lang::{CompileOptions, compile};
    use chronon_runtime::{DomainId, RunLimit};

    use super::*;
    use crate::lower::lower_seeded;
    use crate::simulate::{EngineKind, Simulator};

    const SOURCE: &str = "clock core = 1 GHz;
unit G {
    reg last: u64;
    reg in_loop: [i16; 2];
    reg flag: bool;
    tick {
        last <= random();
        for i in 0..2 { in_loop[i] <= random(); }
        flag <= random();
    }
}
system Top { inst a: G on core; inst b: G on core; }
";

    /// `SOURCE` lowered with `seed`, on `engine`.
    fn simulator(engine: EngineKind, seed: u64) -> (Arc<crate::ir::Program>, Simulator) {
        let mut sources = SourceMap::new();
        sources.add("r.chr", SOURCE);
        let compiled = compile(
            &mut sources,
            &CompileOptions {
                top: None,
                params: Vec::new(),
                require_top: true,
            },
        );
        assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
        let design = compiled.design.expect("a design without errors");
        let program = Arc::new(lower_seeded(&design, &sources, seed).expect("it lowers"));
        let sim = Simulator::new(program.clone(), engine).expect("it builds");
        (program, sim)
    }

    #[test]
    fn instances_that_draw_still_share_native_code() {
        // The unit seed is state, not a constant, so `top.a` and `top.b`
        // compile to one function.
        let (program, _) = simulator(EngineKind::Interp, 3);
        let jit = crate::jit::Jit::compile(&program, crate::jit::JitConfig::default())
            .expect("it compiles");
        assert_eq!(jit.function_count(), 1);
    }

    #[test]
    fn a_resumed_run_draws_what_one_run_draws() {
        let to = |count| RunLimit::Edges {
            domain: DomainId(0),
            count,
        };
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let (_, mut once) = simulator(engine, 5);
            once.sim.run(to(12));
            let (_, mut resumed) = simulator(engine, 5);
            resumed.sim.run(to(4));
            resumed.sim.run(to(12));
            assert_eq!(&*once.state(), &*resumed.state(), "{engine:?}");
        }
    }

    /// Runs `SOURCE` for `cycles` edges and reads a slot by name.
    fn run(engine: EngineKind, seed: u64, cycles: u64) -> impl Fn(&str) -> u64 {
        let (program, mut sim) = simulator(engine, seed);
        sim.sim.run(RunLimit::Edges {
            domain: DomainId(0),
            count: cycles,
        });
        let state = sim.state().to_vec();
        move |name: &str| {
            let slot = program
                .slots
                .iter()
                .position(|s| s.name == name)
                .unwrap_or_else(|| panic!("no slot {name}"));
            state[slot]
        }
    }

    #[test]
    fn both_engines_compute_the_documented_formula() {
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            for seed in [0, 1, u64::MAX] {
                let slot = run(engine, seed, 9);
                for path in ["top.a", "top.b"] {
                    let u = unit_seed(seed, path);
                    // Registers hold the values drawn at the last edge, cycle 8.
                    let want = |key: u64| value(u, 8, key);
                    assert_eq!(slot(&format!("{path}.last")), want(site_key(0, &[])));
                    for i in 0..2u32 {
                        assert_eq!(
                            slot(&format!("{path}.in_loop.{i}")),
                            want(site_key(1, &[i])) & 0xFFFF,
                            "{path} iteration {i}"
                        );
                    }
                    assert_eq!(slot(&format!("{path}.flag")), want(site_key(2, &[])) & 1);
                    assert_eq!(slot(&format!("{path}.random.cycle")), 9);
                }
            }
        }
    }
}
