//! Every `examples/*.chr` runs on both engines (at most 5,000 edges of its
//! first clock, or until `finish`); the summaries, wall-clock figures left
//! out, must agree and match their snapshots. Per-instant agreement is
//! checked in `tests/engines.rs`.

use chronon_compiler::run::{RunOptions, StopAt};
use chronon_suite::designs::{chr_files, summary_on_both_engines};

#[test]
fn examples_run_alike_on_both_engines() {
    for path in chr_files("examples") {
        let (name, summary) = summary_on_both_engines(&path, |_, engine| RunOptions {
            top: None,
            params: Vec::new(),
            engine,
            stop: StopAt::Cycles {
                count: 5_000,
                domain: None,
            },
            drain: None,
            seed: 0,
            exec: Default::default(),
            interrupt: None,
        });
        insta::assert_snapshot!(name, summary);
    }
}
