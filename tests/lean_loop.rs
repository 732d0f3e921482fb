//! The lean loop (pattern-mode instants of runs without a sink,
//! `Simulation::set_lean_loop`, what `CHRONON_NO_LEAN_LOOP` switches)
//! changes nothing on either engine: every example, every test design and
//! random multi-clock designs with CDC FIFOs run on the JIT (native group
//! functions) and on the interpreter (Rust ticks), each with the lean loop
//! on and off, run-ahead off so that every instant goes through an instant
//! loop, through the same odd split limits; stop reasons, faults, state
//! digests, edges, instants and time must agree after every limit, and a
//! later drain must too.

use std::sync::Arc;

use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_compiler::testing::random_design::random_design;
use chronon_runtime::{DomainId, Picos, RunLimit};
use chronon_suite::designs::{chr_files, lower_text};

/// The four runs: JIT with and without the lean loop, then the interpreter.
fn simulators(label: &str, text: &str) -> Vec<Simulator> {
    let program = Arc::new(lower_text(label, text));
    let engines = [
        (EngineKind::Jit, true),
        (EngineKind::Jit, false),
        (EngineKind::Interp, true),
        (EngineKind::Interp, false),
    ];
    engines
        .into_iter()
        .map(|(engine, lean)| {
            let mut s = Simulator::new(program.clone(), engine).expect("builds");
            s.sim.set_run_ahead(false);
            s.sim.set_lean_loop(lean);
            s
        })
        .collect()
}

/// Everything a run can be told apart by.
fn observe(sim: &Simulator) -> (u64, Vec<u64>, u64, u128, u64) {
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

/// Runs the four through limits at odd points (edge counts of the first
/// domain, times a third of a picosecond past an edge of the last domain),
/// up to `edges` edges; returns whether the first used the lean loop.
fn assert_agree(label: &str, text: &str, edges: u64) -> bool {
    let mut sims = simulators(label, text);
    let lean = sims[0].sim.runs_lean();
    assert!(!sims[1].sim.runs_lean() && !sims[3].sim.runs_lean());
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
        assert_eq!(observe(&sims[0]), observe(&sims[k]), "{label}: after drain");
    }
    lean
}

#[test]
fn lean_loop_agrees_on_examples_and_test_designs() {
    let mut files = chr_files("examples");
    files.extend(chr_files("tests/designs"));
    files.push("benches/peers/async_fifo.chr".into());
    let mut lean = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable design");
        let label = path.with_extension("").display().to_string();
        lean += usize::from(assert_agree(&label, &text, 6_000));
    }
    assert!(lean >= 5, "only {lean} designs used the lean loop");
}

#[test]
fn lean_loop_agrees_on_random_designs() {
    let mut lean = 0;
    for seed in 0..40u64 {
        let text = random_design(1_000 + seed);
        lean += usize::from(assert_agree(&format!("random{seed}"), &text, 1_500));
    }
    assert!(lean >= 20, "only {lean} random designs used the lean loop");
}
