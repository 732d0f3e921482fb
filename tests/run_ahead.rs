//! Run-ahead (contract §7) changes nothing: every example, every test
//! design, random designs (as generated, and with every instance moved to
//! one clock so that their CDC FIFOs stay in one domain and the design can
//! run ahead), and multi-clock designs whose one stopping domain finishes or
//! faults mid-run, run on the JIT with run-ahead on and off
//! (`Simulation::set_run_ahead`, what `CHRONON_NO_RUN_AHEAD` switches) and
//! on the interpreter (which never runs ahead), through the same odd split
//! limits; stop reasons, faults, state digests, edges, instants and time
//! must agree after every limit, and a later drain must too.

use std::sync::Arc;

use chronon_compiler::simulate::Simulator;
use chronon_compiler::testing::random_design::random_design;
use chronon_suite::agree;
use chronon_suite::designs::{chr_files, lower_text};

/// The three runs: JIT with run-ahead, JIT without, interpreter.
fn simulators(label: &str, text: &str) -> Vec<Simulator> {
    agree::run_ahead_three(Arc::new(lower_text(label, text)))
}

/// Runs the three through the same split limits and a drain
/// (`support::agree`); returns whether the first could run ahead.
fn assert_agree(label: &str, text: &str, edges: u64) -> bool {
    let mut sims = simulators(label, text);
    let ahead = sims[0].sim.runs_ahead();
    assert!(!sims[1].sim.runs_ahead() && !sims[2].sim.runs_ahead());
    agree::assert_agree(label, text, &mut sims, edges);
    ahead
}

#[test]
fn run_ahead_agrees_on_examples_and_test_designs() {
    let mut files = chr_files("examples");
    files.extend(chr_files("tests/designs"));
    let mut ahead = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable design");
        let label = path.with_extension("").display().to_string();
        ahead += usize::from(assert_agree(&label, &text, 6_000));
    }
    assert!(ahead >= 3, "only {ahead} designs ran ahead");
}

#[test]
fn run_ahead_agrees_on_random_designs() {
    let mut ahead = 0;
    for seed in 0..60u64 {
        let text = random_design(seed);
        ahead += usize::from(assert_agree(&format!("random{seed}"), &text, 1_500));
        // Every instance on the first clock: FIFOs within one domain.
        let one_clock = text
            .replace(" on c1;", " on c0;")
            .replace(" on c2;", " on c0;");
        ahead += usize::from(assert_agree(
            &format!("random{seed}_one_clock"),
            &one_clock,
            1_500,
        ));
    }
    assert!(ahead >= 60, "only {ahead} random designs ran ahead");
}

/// Three clocks, each with a producer and a consumer joined by a channel
/// (no FIFO between domains); only domain `b`'s consumer can stop the run:
/// `finish` at its `FINISH_AT`-th item, or an assertion failing at the
/// `FAIL_AT`-th (0: never).
fn three_clocks(finish_at: u32, fail_at: u32) -> String {
    format!(
        "clock a = 914 MHz phase 137 ps;\n\
         clock b = 1326 MHz;\n\
         clock c = 250 MHz phase 37 ps;\n\
         unit P<K: u32 = 1> {{ out tx: u32; reg n: u32 = 0; reg mix: u64 = 0;\n\
           tick {{ let r: u32 = random(); mix <= (mix * 31) ^ (r as u64);\n\
                   if tx.can_send() {{ tx.send(n + K); n <= n + 1; }} }} }}\n\
         unit Q {{ in rx: u32; reg sum: u32 = 0; counter got;\n\
           tick {{ if let Some(v) = rx.recv() {{ sum <= sum + v; got += 1; }} }} }}\n\
         unit S {{ in rx: u32; reg seen: u32 = 0;\n\
           tick {{ if let Some(v) = rx.recv() {{ seen <= seen + 1;\n\
                   if seen + 1 == {finish_at} {{ finish; }}\n\
                   assert(seen + 1 != {fail_at}, \"seen\"); }} }} }}\n\
         system Top {{\n\
           inst pa: P<K = 3> on a; inst qa: Q on a; connect pa.tx -> qa.rx latency 2 capacity 3;\n\
           inst pb: P<K = 5> on b; inst sb: S on b; connect pb.tx -> sb.rx latency 1 capacity 2;\n\
           inst pc: P<K = 7> on c; inst qc: Q on c; connect pc.tx -> qc.rx latency 3 capacity 1;\n\
         }}\n"
    )
}

#[test]
fn run_ahead_stops_exactly_when_one_of_several_domains_finishes_or_faults() {
    for (finish_at, fail_at) in [(0, 0), (1, 0), (3_000, 0), (70_000, 0), (0, 2), (0, 66_000)] {
        let text = three_clocks(finish_at, fail_at);
        let label = format!("three_clocks_finish{finish_at}_fail{fail_at}");
        assert!(assert_agree(&label, &text, 90_000), "{label} ran ahead");
    }
}
