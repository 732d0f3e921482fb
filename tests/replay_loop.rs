//! The replay loop (pattern-mode instants, `Simulation::set_replay_loop`, what `CHRONON_NO_REPLAY_LOOP` switches)
//! changes nothing on either engine: every example, every test design and
//! random multi-clock designs with CDC FIFOs run on the JIT (native group
//! functions) and on the interpreter (Rust ticks), each with the replay loop
//! on and off, run-ahead off so that every instant goes through an instant
//! loop, through the same odd split limits; stop reasons, faults, state
//! digests, edges, instants and time must agree after every limit, and a
//! later drain must too.

use std::sync::Arc;

use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_compiler::testing::random_design::random_design;
use chronon_suite::agree;
use chronon_suite::designs::{chr_files, lower_text};

/// The four runs: JIT with and without the replay loop, then the interpreter.
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
        .map(|(engine, replay)| {
            let mut s = Simulator::new(program.clone(), engine).expect("builds");
            s.sim.set_run_ahead(false);
            s.sim.set_replay_loop(replay);
            s
        })
        .collect()
}

/// Runs the four through the same split limits and a drain
/// (`support::agree`); returns whether the first used the replay loop.
fn assert_agree(label: &str, text: &str, edges: u64) -> bool {
    let mut sims = simulators(label, text);
    let replay = sims[0].sim.runs_replay();
    assert!(!sims[1].sim.runs_replay() && !sims[3].sim.runs_replay());
    agree::assert_agree(label, text, &mut sims, edges);
    replay
}

#[test]
fn replay_loop_agrees_on_examples_and_test_designs() {
    let mut files = chr_files("examples");
    files.extend(chr_files("tests/designs"));
    files.push("benches/peers/async_fifo.chr".into());
    let mut replay = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable design");
        let label = path.with_extension("").display().to_string();
        replay += usize::from(assert_agree(&label, &text, 6_000));
    }
    assert!(replay >= 5, "only {replay} designs used the replay loop");
}

#[test]
fn replay_loop_agrees_on_random_designs() {
    let mut replay = 0;
    for seed in 0..40u64 {
        let text = random_design(1_000 + seed);
        replay += usize::from(assert_agree(&format!("random{seed}"), &text, 1_500));
    }
    assert!(
        replay >= 20,
        "only {replay} random designs used the replay loop"
    );
}
