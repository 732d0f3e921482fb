//! `chronc run` semantics on small designs: each design under
//! `tests/designs/` runs on both engines with the stop condition named in
//! its first line (`// run: --cycles N` or `// run: --until T`, default
//! until `finish`); the summaries must agree and match the snapshot.

use chronon_compiler::run::{RunOptions, StopAt, parse_time, run};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;

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
        top: None,
        params: Vec::new(),
        engine,
        stop,
        drain,
        seed: 0,
    }
}

#[test]
fn designs_run_alike_on_both_engines() {
    let mut names: Vec<_> = std::fs::read_dir("tests/designs")
        .expect("tests/designs exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "chr"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no designs under tests/designs");
    for path in names {
        let text = std::fs::read_to_string(&path).expect("readable design");
        let mut summaries = Vec::new();
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let mut sources = SourceMap::new();
            sources.add(path.display().to_string(), text.clone());
            let report = match run(&mut sources, &options_for(&text, engine), &mut |_, _| {}) {
                Ok(r) => r,
                Err(e) => panic!("{}: {e:?}", path.display()),
            };
            summaries.push(report.summary(true).replacen(&report.engine, "ENGINE", 1));
        }
        assert_eq!(
            summaries[0],
            summaries[1],
            "{}: engines disagree",
            path.display()
        );
        let name = path
            .file_stem()
            .expect("file name")
            .to_string_lossy()
            .to_string();
        insta::assert_snapshot!(name, summaries[0]);
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
