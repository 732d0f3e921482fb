//! Differential runs: simulators of one design (engines, or one engine
//! with a switch such as run-ahead or the replay loop set differently) run
//! through the same odd split limits and a drain, and must agree on stop
//! reasons, faults, state digests, edges, instants and time after each.
//!
//! The execution configurations compared ([`every_configuration`],
//! [`pairwise_configurations`]) are built from the switches of
//! `chronon_compiler::config::ExecConfig` that change how an unrecorded run
//! executes.

use std::sync::Arc;

use chronon_compiler::config::ExecConfig;
use chronon_compiler::ir::Program;
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_runtime::{DomainId, Picos, RunLimit};

/// The switches that change how a run without a recording executes (the
/// rest: `jit-dump` prints, `fifo-stamps` acts only with a recording).
pub const COMPARED_SWITCHES: &[&str] = &[
    "ir-opt",
    "inline-fifo",
    "inline-channel",
    "wire-channels",
    "simd",
    "packed",
    "run-ahead",
    "replay-loop",
    "blind-calls",
    "unobserved-variants",
];

/// The configuration with switch `k` of [`COMPARED_SWITCHES`] on where bit
/// `k` of `bits` is set.
fn configuration(bits: u32) -> ExecConfig {
    let mut config = ExecConfig::default();
    for (k, name) in COMPARED_SWITCHES.iter().enumerate() {
        config.set(name, bits >> k & 1 == 1).expect("a switch");
    }
    config
}

/// Every combination of [`COMPARED_SWITCHES`] (2 to the number of them).
pub fn every_configuration() -> Vec<ExecConfig> {
    (0..1u32 << COMPARED_SWITCHES.len())
        .map(configuration)
        .collect()
}

/// A small set of configurations in which every pair of
/// [`COMPARED_SWITCHES`] takes each of its four value pairs at least once
/// (a covering array, chosen greedily and deterministically), the default
/// first.
pub fn pairwise_configurations() -> Vec<ExecConfig> {
    let k = COMPARED_SWITCHES.len();
    let pairs = |bits: u32| {
        let mut out = Vec::new();
        for a in 0..k {
            for b in a + 1..k {
                out.push((a, b, bits >> a & 1, bits >> b & 1));
            }
        }
        out
    };
    let all = (1u32 << k) - 1;
    let mut chosen = vec![all];
    let mut uncovered: std::collections::BTreeSet<_> = (0..=all).flat_map(pairs).collect();
    for p in pairs(all) {
        uncovered.remove(&p);
    }
    while !uncovered.is_empty() {
        let best = (0..=all)
            .max_by_key(|&bits| {
                let gain = pairs(bits).iter().filter(|p| uncovered.contains(p)).count();
                (gain, std::cmp::Reverse(bits))
            })
            .expect("candidates");
        for p in pairs(best) {
            uncovered.remove(&p);
        }
        chosen.push(best);
    }
    chosen.into_iter().map(configuration).collect()
}

/// For each value of `ir-opt` among `configs`: the interpreter on the
/// program `lower(ir_opt)` gives (the reference), followed by the JIT on it
/// in each of those configurations. (The optimizer changes the state
/// layout, so runs of the two programs are compared within their own
/// group; `ir::opt`'s tests compare the two programs.)
pub fn configured(lower: impl Fn(bool) -> Program, configs: &[ExecConfig]) -> Vec<Vec<Simulator>> {
    let mut groups = Vec::new();
    for ir_opt in [true, false] {
        let chosen: Vec<_> = configs.iter().filter(|c| c.ir_opt == ir_opt).collect();
        if chosen.is_empty() {
            continue;
        }
        let program = Arc::new(lower(ir_opt));
        let mut sims = vec![Simulator::new(program.clone(), EngineKind::Interp).expect("builds")];
        for config in chosen {
            sims.push(
                Simulator::with_config(program.clone(), EngineKind::Jit, config).expect("builds"),
            );
        }
        groups.push(sims);
    }
    groups
}

/// The three runs of `program` the run-ahead tests compare: the JIT with
/// run-ahead, the JIT without, the interpreter.
pub fn run_ahead_three(program: Arc<Program>) -> Vec<Simulator> {
    let mut sims: Vec<Simulator> = [EngineKind::Jit, EngineKind::Jit, EngineKind::Interp]
        .into_iter()
        .map(|e| Simulator::new(program.clone(), e).expect("builds"))
        .collect();
    sims[0].sim.set_run_ahead(true);
    sims[1].sim.set_run_ahead(false);
    sims
}

/// Everything a run can be told apart by.
pub fn observe(sim: &Simulator) -> (u64, Vec<u64>, u64, u128, u64) {
    let domains = sim.program().domains.len() as u32;
    (
        sim.digest(),
        (0..domains)
            .map(|d| sim.sim.edges_done(DomainId(d)))
            .collect(),
        sim.sim.instants_done(),
        sim.sim.now().ticks,
        sim.sim.in_flight(),
    )
}

/// Runs `sims` (of the design `text`, named `label` in failures) through
/// limits at odd points (edge counts of the first domain, times a third of
/// a picosecond past an edge of the last domain) up to `edges` edges, then
/// a drain, asserting after each that every one agrees with the first.
pub fn assert_agree(label: &str, text: &str, sims: &mut [Simulator], edges: u64) {
    let last = DomainId(sims[0].program().domains.len() as u32 - 1);
    let mut limits = Vec::new();
    for count in [1, 2, 7, 64, 999, 4_097, edges / 2 + 3, edges] {
        let count = count.min(edges);
        limits.push(RunLimit::Edges {
            domain: DomainId(0),
            count,
        });
        let t = sims[0]
            .sim
            .edge_time(last, count + count / 3)
            .expect("edge time");
        limits.push(RunLimit::Time(t + Picos::new(1, 3)));
    }
    for limit in limits {
        let stops: Vec<_> = sims.iter_mut().map(|s| s.sim.run(limit.clone())).collect();
        let states: Vec<_> = sims.iter().map(observe).collect();
        for k in 1..sims.len() {
            assert_eq!(
                stops[0], stops[k],
                "{label} {limit:?}: stop, run {k}\n{text}"
            );
            assert_eq!(
                sims[0].sim.faults(),
                sims[k].sim.faults(),
                "{label} {limit:?}: faults, run {k}"
            );
            assert_eq!(
                states[0], states[k],
                "{label} {limit:?}: state, run {k}\n{text}"
            );
        }
    }
    let drains: Vec<_> = sims.iter_mut().map(|s| s.sim.drain(500)).collect();
    for k in 1..sims.len() {
        assert_eq!(drains[0], drains[k], "{label}: drain, run {k}");
        assert_eq!(
            observe(&sims[0]),
            observe(&sims[k]),
            "{label}: after drain, run {k}"
        );
    }
}
