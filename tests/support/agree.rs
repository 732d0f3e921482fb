//! Differential runs: simulators of one design (engines, or one engine
//! with a switch such as run-ahead or the lean loop set differently) run
//! through the same odd split limits and a drain, and must agree on stop
//! reasons, faults, state digests, edges, instants and time after each.

use std::sync::Arc;

use chronon_compiler::ir::Program;
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_runtime::{DomainId, Picos, RunLimit};

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
