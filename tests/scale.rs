//! Many instances of one unit (benches/scale/cells.chr): past the inline
//! budget a domain's group calls the shared shape function in a loop over
//! a table of state offsets. Both forms (instance array, system loop) on
//! both engines must agree, with every instance ticked every edge.

use chronon_compiler::run::{RunOptions, StopAt, run};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;

#[test]
fn thousands_of_cells_run_alike_on_both_engines() {
    let path = "benches/scale/cells.chr";
    let text = std::fs::read_to_string(path).expect("readable design");
    let n = 9_000u64;
    for form in ["0", "1"] {
        let mut digests = Vec::new();
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let mut sources = SourceMap::new();
            sources.add(path, text.clone());
            let options = RunOptions {
                params: vec![("N".into(), n.to_string()), ("FORM".into(), form.into())],
                dump_state: true,
                ..RunOptions::new(
                    engine,
                    StopAt::Cycles {
                        count: 3,
                        domain: None,
                    },
                )
            };
            let report = run(&mut sources, &options, &mut |_, _| {})
                .unwrap_or_else(|e| panic!("FORM={form} {engine:?}: {e:?}"));
            let ticks: u64 = report.counters.iter().map(|c| c.value).sum();
            assert_eq!(
                ticks,
                3 * n,
                "FORM={form} {engine:?}: every cell, every edge"
            );
            let registers = report.registers.as_deref().unwrap_or_default();
            assert_eq!(registers.len() as u64, n);
            assert!(
                registers
                    .iter()
                    .all(|r| r.value == chronon_compiler::simulate::RegisterValue::Int(3)),
                "FORM={form} {engine:?}"
            );
            digests.push(report.state_digest);
        }
        assert_eq!(
            digests[0], digests[1],
            "FORM={form}: the engines' final states"
        );
    }
}
