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
use chronon_suite::agree;
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

/// Runs the four through the same split limits and a drain
/// (`support::agree`); returns whether the first used the lean loop.
fn assert_agree(label: &str, text: &str, edges: u64) -> bool {
    let mut sims = simulators(label, text);
    let lean = sims[0].sim.runs_lean();
    assert!(!sims[1].sim.runs_lean() && !sims[3].sim.runs_lean());
    agree::assert_agree(label, text, &mut sims, edges);
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
