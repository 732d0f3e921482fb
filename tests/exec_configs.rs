//! Every execution choice the code can make, against the interpreter: the
//! switches of `ExecConfig` that change how an unrecorded run executes
//! (IR optimizer, inline FIFO and channel operations, vector code, packed
//! run-ahead loops, run-ahead, the replay loop;
//! `support::agree::COMPARED_SWITCHES`), in every combination (128) on a
//! few designs that reach each of them, and
//! in a pairwise covering set on every example, test design, peer design
//! and random designs. Each JIT run goes through the same odd split limits
//! and a drain as the interpreter and must agree with it after each.
//! Budget: about a minute of the debug test profile on two cores.

use chronon_compiler::config::ExecConfig;
use chronon_compiler::testing::random_design::random_design;
use chronon_suite::agree::{self, COMPARED_SWITCHES};
use chronon_suite::designs::{chr_files, lower_text_with};

/// Runs `configs` of `text` against the interpreter; returns how many JIT
/// runs could run ahead and how many would replay through the replay loop.
fn assert_configurations_agree(
    label: &str,
    text: &str,
    configs: &[ExecConfig],
    edges: u64,
) -> (usize, usize) {
    let groups = agree::configured(|optimize| lower_text_with(label, text, optimize), configs);
    let (mut ahead, mut replay) = (0, 0);
    for mut sims in groups {
        ahead += sims[1..].iter().filter(|s| s.sim.runs_ahead()).count();
        replay += sims[1..].iter().filter(|s| s.sim.runs_replay()).count();
        agree::assert_agree(label, text, &mut sims, edges);
    }
    (ahead, replay)
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn pairwise_set_covers_every_pair_of_switches() {
    let configs = agree::pairwise_configurations();
    assert_eq!(configs[0], ExecConfig::default());
    assert!(configs.len() <= 10, "{} configurations", configs.len());
    for (a, first) in COMPARED_SWITCHES.iter().enumerate() {
        for second in &COMPARED_SWITCHES[a + 1..] {
            for values in [(false, false), (false, true), (true, false), (true, true)] {
                let covered = configs
                    .iter()
                    .any(|c| (c.get(first), c.get(second)) == (Some(values.0), Some(values.1)));
                assert!(covered, "{first}/{second} = {values:?} is never run");
            }
        }
    }
    let every = agree::every_configuration();
    assert_eq!(every.len(), 1 << COMPARED_SWITCHES.len());
    let distinct: std::collections::HashSet<_> = every.iter().collect();
    assert_eq!(distinct.len(), every.len());
}

/// Designs that reach every switch: a FIFO between two domains (inline
/// FIFO operations, the replay loop), one clock with FIFOs inside it
/// (run-ahead), identical pipeline stages (vector code, packed loops),
/// stage units joined by channels (inline channel operations).
#[test]
fn every_configuration_agrees_on_designs_that_reach_each_switch() {
    let every = agree::every_configuration();
    let (mut ahead, mut replay) = (0, 0);
    for path in [
        "benches/workloads/two_clocks_fifo.chr",
        "benches/workloads/one_clock.chr",
        "benches/peers/pipeline.chr",
        "benches/peers/pipeline_units.chr",
        "examples/cdc_pair.chr",
    ] {
        let text = read(path.as_ref());
        let (a, l) = assert_configurations_agree(path, &text, &every, 1_200);
        (ahead, replay) = (ahead + a, replay + l);
    }
    let text = random_design(3)
        .replace(" on c1;", " on c0;")
        .replace(" on c2;", " on c0;");
    assert_configurations_agree("random3_one_clock", &text, &every, 600);
    // Half the configurations have each switch on: both loops were run.
    let half = every.len() / 2;
    assert!(
        ahead >= half && replay >= half,
        "ran ahead {ahead}, replay {replay}"
    );
}

#[test]
fn pairwise_configurations_agree_on_every_example_and_test_design() {
    let pairwise = agree::pairwise_configurations();
    let mut files = chr_files("examples");
    files.extend(chr_files("tests/designs"));
    files.extend(chr_files("benches/workloads"));
    files.extend(chr_files("benches/peers"));
    for path in files {
        let label = path.with_extension("").display().to_string();
        assert_configurations_agree(&label, &read(&path), &pairwise, 3_000);
    }
}

#[test]
fn pairwise_configurations_agree_on_random_designs() {
    let pairwise = agree::pairwise_configurations();
    for seed in 0..24u64 {
        let text = random_design(seed);
        assert_configurations_agree(&format!("random{seed}"), &text, &pairwise, 800);
        let one_clock = text
            .replace(" on c1;", " on c0;")
            .replace(" on c2;", " on c0;");
        assert_configurations_agree(
            &format!("random{seed}_one_clock"),
            &one_clock,
            &pairwise,
            800,
        );
    }
}
