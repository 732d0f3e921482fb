//! Channel code against the interpreter on random designs of many small
//! units joined by channels (`testing::random_channels`: latency 0 to 3,
//! capacities 1 to 4, rates, fan-in, fan-out, refusals and `send` faults):
//! the JIT with channel operations inline and without, each through the
//! same odd split limits and a drain, must agree with the interpreter after
//! each; so must the JIT with latency-0 links passed as wires and without.
//! Also checks that the inline, fan-in and wire forms were used.

use chronon_compiler::config::ExecConfig;
use chronon_compiler::testing::random_channels::random_channel_design;
use chronon_suite::agree;
use chronon_suite::designs::lower_text_with;

fn configs() -> Vec<ExecConfig> {
    let mut host_calls = ExecConfig::default();
    host_calls.set("inline-channel", false).expect("a switch");
    let mut no_wires = ExecConfig::default();
    no_wires.set("wire-channels", false).expect("a switch");
    let no_opt = ExecConfig {
        ir_opt: false,
        ..ExecConfig::default()
    };
    vec![ExecConfig::default(), host_calls, no_wires, no_opt]
}

#[test]
fn random_channel_designs_agree_with_the_interpreter() {
    let configs = configs();
    let (mut inline, mut wired, mut fan_ins, mut designs) = (0, 0, 0, 0);
    for seed in 0..48u64 {
        let text = random_channel_design(seed);
        let label = format!("channels{seed}");
        for mut sims in agree::configured(|opt| lower_text_with(&label, &text, opt), &configs) {
            inline += usize::from(sims[1].inline_channel_ports() > 0);
            wired += usize::from(sims[1].wired_channels() > 0);
            fan_ins += usize::from(sims[1].inline_fan_ins() > 0);
            designs += 1;
            agree::assert_agree(&label, &text, &mut sims, 700);
        }
    }
    // The inline form ran on most designs (every design has a port with
    // one connection unless each input is fanned in).
    assert!(inline * 2 > designs, "inline on {inline} of {designs}");
    // Some designs have a latency-0 link that qualifies as a wire.
    assert!(wired > 0, "wires on none of {designs}");
    // Some receive from a fan-in inline.
    assert!(fan_ins > 0, "inline fan-in on none of {designs}");
}

#[test]
fn the_channel_pipeline_runs_inline_and_agrees() {
    let path = "benches/peers/pipeline_units.chr";
    let text = std::fs::read_to_string(path).expect("readable");
    for mut sims in agree::configured(|opt| lower_text_with(path, &text, opt), &configs()) {
        // Source, 16 stages, sink: 17 links of one connection, both ends.
        assert_eq!(sims[1].inline_channel_ports(), 34, "{path}");
        // All 17 are latency 0, one send and one recv each: wires.
        assert_eq!(sims[1].wired_channels(), 17, "{path}");
        if sims.len() > 3 {
            assert_eq!(sims[3].wired_channels(), 0, "wire-channels off");
        }
        agree::assert_agree(path, &text, &mut sims, 2_000);
    }
}
