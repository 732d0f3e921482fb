//! `chronc run` semantics on small designs: each design under
//! `tests/designs/` runs on both engines with the stop condition named in
//! its first line (`// run: --cycles N` or `// run: --until T`, default
//! until `finish`); the summaries must agree and match the snapshot.

use chronon_compiler::run::{RunOptions, StopAt, parse_time, run};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;
use chronon_suite::designs::{chr_files, summary_on_both_engines};

fn options_for(source: &str, engine: EngineKind) -> RunOptions {
    let first = source.lines().next().unwrap_or_default();
    let args: Vec<&str> = first
        .strip_prefix("// run:")
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let mut stop = StopAt::Finish;
    let mut drain = None;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "--cycles" => {
                stop = StopAt::Cycles {
                    count: args[i + 1].parse().expect("cycle count"),
                    domain: None,
                };
                i += 1;
            }
            "--until" => {
                stop = StopAt::Until(parse_time(args[i + 1]).expect("time"));
                i += 1;
            }
            "--drain" => drain = Some(10_000),
            other => panic!("unknown run option {other}"),
        }
        i += 1;
    }
    RunOptions {
        drain,
        ..RunOptions::new(engine, stop)
    }
}

#[test]
fn designs_run_alike_on_both_engines() {
    for path in chr_files("tests/designs") {
        let (name, summary) = summary_on_both_engines(&path, options_for);
        insta::assert_snapshot!(name, summary);
    }
}

/// The IR of the language reference's first design, as text: a reviewer
/// sees every lowering decision (slots, ports, commits, hoisted effects).
#[test]
fn first_design_ir_text() {
    let path = "tests/designs/first_design.chr";
    let mut sources = SourceMap::new();
    sources.add(
        path,
        std::fs::read_to_string(path).expect("readable design"),
    );
    let compiled = chronon_lang::compile(
        &mut sources,
        &chronon_lang::CompileOptions {
            require_top: true,
            ..Default::default()
        },
    );
    let design = compiled.design.expect("the first design compiles");
    let program = chronon_compiler::lower::lower(&design, &sources).expect("lowers");
    insta::assert_snapshot!(
        "first_design_ir",
        chronon_compiler::ir::print::program(&program)
    );
}

/// `run` works in slices of edges (for the progress line); limits are
/// absolute, so a sliced run must end in exactly the state of one
/// uninterrupted runtime run, by edges and by time.
#[test]
fn sliced_runs_equal_one_run() {
    use chronon_runtime::{DomainId, RunLimit};
    let text = "clock a = 1 GHz;\nclock b = 914 MHz phase 137 ps;\n\
        unit P { out tx: u32; reg n: u32; tick { if tx.try_send(n) { n <= n * 3 + 1; } } }\n\
        unit C { in rx: u32 cdc fwft; reg s: u32; counter got;\n\
          tick { if let Some(v) = rx.recv() { s <= s ^ v; got += 1; } } }\n\
        system Top { inst p: P on a; inst c: C on b; cdc p.tx -> c.rx depth 4 sync 3; }\n";
    let stops = [
        StopAt::Cycles {
            count: 150_000,
            domain: None,
        },
        StopAt::Until(parse_time("140001/3 ns").expect("time")),
    ];
    for stop in stops {
        let mut sources = SourceMap::new();
        sources.add("sliced.chr", text);
        let options = RunOptions::new(EngineKind::Jit, stop.clone());
        let sliced = run(&mut sources, &options, &mut |_, _| {}).expect("runs");
        let compiled = chronon_lang::compile(
            &mut sources,
            &chronon_lang::CompileOptions {
                require_top: true,
                ..Default::default()
            },
        );
        let program = chronon_compiler::lower::lower(&compiled.design.expect("compiles"), &sources)
            .expect("lowers");
        let mut sim = chronon_compiler::simulate::Simulator::new(
            std::sync::Arc::new(program),
            EngineKind::Jit,
        )
        .expect("builds");
        let limit = match stop {
            StopAt::Cycles { count, .. } => RunLimit::Edges {
                domain: DomainId(0),
                count,
            },
            StopAt::Until(t) => RunLimit::Time(t),
            StopAt::Finish => unreachable!("not in this table"),
        };
        sim.sim.run(limit);
        assert_eq!(
            sliced.state_digest,
            format!("{:016x}", sim.digest()),
            "{stop:?}"
        );
        assert_eq!(sliced.instants, sim.sim.instants_done(), "{stop:?}");
        assert!(
            sliced.counters.iter().any(|c| c.value > 1000),
            "traffic flows: {:?}",
            sliced.counters
        );
    }
}

/// `tests/designs/conditional_generate.chr` under each arm: the source
/// sends 0, 2, 4, ... from the first edge, so after 10 edges the sink has
/// summed the items that arrived: over one latency-1 hop 0..=16 (72), over
/// two 0..=14 (56), over two latency-2 hops 0..=10 (30).
#[test]
fn conditional_generate_declares_the_arm_its_parameters_pick() {
    let path = "tests/designs/conditional_generate.chr";
    let text = std::fs::read_to_string(path).expect("readable design");
    let cases: [(&[(&str, &str)], u64); 4] = [
        (&[("MODE", "0")], 72),
        (&[("MODE", "1")], 56),
        (&[("MODE", "2")], 30),
        (&[("MODE", "1"), ("BUFFERED", "false")], 30),
    ];
    for (params, want) in cases {
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let mut sources = SourceMap::new();
            sources.add(path, text.clone());
            let mut options = options_for(&text, engine);
            options.params = params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let report = run(&mut sources, &options, &mut |_, _| {})
                .unwrap_or_else(|e| panic!("{params:?}: {e:?}"));
            let got = report
                .counters
                .iter()
                .find(|c| c.name == "got")
                .map(|c| c.value);
            assert_eq!(
                got,
                Some(want),
                "{params:?} {engine:?}: {}",
                report.summary(true)
            );
        }
    }
}

/// `tests/designs/fault_bit_position.chr`: bits 14 and 15 of `y` are
/// written at cycles 0 and 1; at cycle 2 the position 16 faults and
/// writes nothing, so `y` ends as 0xC000 on both engines.
#[test]
fn a_faulting_bit_write_writes_nothing() {
    let path = "tests/designs/fault_bit_position.chr";
    let text = std::fs::read_to_string(path).expect("readable design");
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        let mut sources = SourceMap::new();
        sources.add(path, text.clone());
        let mut options = options_for(&text, engine);
        options.dump_state = true;
        let report = run(&mut sources, &options, &mut |_, _| {}).expect("runs");
        assert_eq!(report.stop, "fault", "{engine:?}");
        let y = report
            .registers
            .as_deref()
            .unwrap_or_default()
            .iter()
            .find(|r| r.name == "y")
            .map(|r| r.value.clone());
        assert_eq!(
            y,
            Some(chronon_compiler::simulate::RegisterValue::Int(0xC000)),
            "{engine:?}: {}",
            report.summary(true)
        );
    }
}
