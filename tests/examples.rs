//! Every `examples/*.chr` runs on both engines (at most 5,000 edges of its
//! first clock, or until `finish`); the summaries, wall-clock figures left
//! out, must agree and match their snapshots. Per-instant agreement is
//! checked in `tests/engines.rs`.

use chronon_compiler::run::{RunOptions, StopAt, run};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;

#[test]
fn examples_run_alike_on_both_engines() {
    let mut paths: Vec<_> = std::fs::read_dir("examples")
        .expect("examples/ exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "chr"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no examples");
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable example");
        let mut summaries = Vec::new();
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let mut sources = SourceMap::new();
            sources.add(path.display().to_string(), text.clone());
            let options = RunOptions {
                top: None,
                params: Vec::new(),
                engine,
                stop: StopAt::Cycles {
                    count: 5_000,
                    domain: None,
                },
                drain: None,
                seed: 0,
            };
            let report = match run(&mut sources, &options, &mut |_, _| {}) {
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
