//! Every `examples/*.chr` runs on both engines (at most 5,000 edges of its
//! first clock, or until `finish`); the summaries, wall-clock figures left
//! out, must agree and match their snapshots. Per-instant agreement is
//! checked in `tests/engines.rs`.

use chronon_compiler::run::{RunOptions, StopAt};
use chronon_compiler::simulate::EngineKind;
use chronon_suite::designs::{chr_files, summary_on_both_engines};

/// At most 5,000 edges of the first clock, or until `finish`.
fn options(engine: EngineKind) -> RunOptions {
    RunOptions::new(
        engine,
        StopAt::Cycles {
            count: 5_000,
            domain: None,
        },
    )
}

#[test]
fn examples_run_alike_on_both_engines() {
    for path in chr_files("examples") {
        let (name, summary) = summary_on_both_engines(&path, |_, engine| options(engine));
        insta::assert_snapshot!(name, summary);
    }
}

/// `examples/crc32.chr` computes CRC-32 bit by bit with slices,
/// concatenation and replication; Python's `zlib` (an independent
/// implementation) must give the same value, and byte-swapped the same
/// swap.
#[test]
fn the_crc32_example_agrees_with_zlib() {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import zlib; c = zlib.crc32(bytes(range(256))); \
             print(c, int.from_bytes(c.to_bytes(4, 'little'), 'big'))",
        ])
        .output()
        .expect("python3 is required (CI installs it): it runs zlib as the reference");
    assert!(out.status.success(), "python3 failed: {out:?}");
    let expected = String::from_utf8_lossy(&out.stdout);
    let mut want = expected.split_whitespace();
    let path = std::path::Path::new("examples/crc32.chr");
    let (_, summary) = summary_on_both_engines(path, |_, engine| options(engine));
    for counter in ["top.chk.result", "top.chk.swapped"] {
        let value = want.next().expect("two numbers from python3");
        assert!(
            summary.contains(&format!("{counter} = {value}\n")),
            "{counter} should be {value}:\n{summary}"
        );
    }
}

/// `examples/bignum.chr` steps Fibonacci in 256-bit registers and takes a
/// 128-bit number apart with division; Python's integers (an independent
/// implementation) must give F(300) and the digit sum of F(180), on both
/// engines.
#[test]
fn the_bignum_example_agrees_with_python() {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "a, b = 0, 1\n\
             for i in range(300):\n    \
                 f = a if i == 180 else (f if i > 180 else 0)\n    \
                 a, b = b, a + b\n\
             print(hex(a), sum(int(c) for c in str(f)))",
        ])
        .output()
        .expect("python3 is required (CI installs it): its integers are the reference");
    assert!(out.status.success(), "python3 failed: {out:?}");
    let expected = String::from_utf8_lossy(&out.stdout);
    let mut want = expected.split_whitespace();
    let (f300, digits) = (
        want.next().expect("F(300)").to_string(),
        want.next()
            .expect("the digit sum")
            .parse::<i128>()
            .expect("a number"),
    );
    let text = std::fs::read_to_string("examples/bignum.chr").expect("the example");
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        let mut sources = chronon_lang::span::SourceMap::new();
        sources.add("examples/bignum.chr".to_string(), text.clone());
        let mut opts = options(engine);
        opts.dump_state = true;
        let report = chronon_compiler::run::run(&mut sources, &opts, &mut |_, _| {}).expect("runs");
        assert_eq!(report.stop, "finished", "{engine:?}");
        let value = |name: &str| {
            report
                .registers
                .as_deref()
                .unwrap_or_default()
                .iter()
                .find(|r| r.name == name)
                .map(|r| r.value.clone())
        };
        use chronon_compiler::simulate::RegisterValue;
        assert_eq!(
            value("a"),
            Some(RegisterValue::Wide(f300.clone())),
            "{engine:?}"
        );
        assert_eq!(
            value("digits"),
            Some(RegisterValue::Int(digits)),
            "{engine:?}"
        );
    }
}
