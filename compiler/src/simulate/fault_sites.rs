//! The runtime fault site of each IR fault site: its kind and construct text,
//! so that every cause reaches the user with its own stable code (contract §6).

use chronon_runtime::FaultKind;

use crate::ir::Program;

/// The IR construct text lowering gives array index checks.
const ARRAY_INDEX_CONSTRUCT: &str = "array index";

/// A fault site as the runtime declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RuntimeSite {
    /// What the site reports.
    pub(crate) kind: FaultKind,
    /// The construct the report names.
    pub(crate) construct: String,
}

/// The runtime site of every IR fault site, by fault id. Stage sites are found
/// from the stage registers that own them (each pipe's second-write site and
/// the pipe range site), so they never depend on message wording.
pub(crate) fn runtime_sites(program: &Program) -> Vec<RuntimeSite> {
    let mut sites: Vec<RuntimeSite> = program
        .faults
        .iter()
        .map(|f| {
            let at = f
                .span
                .as_deref()
                .map(|s| format!(" at {s}"))
                .unwrap_or_default();
            if f.construct == ARRAY_INDEX_CONSTRUCT {
                RuntimeSite {
                    kind: FaultKind::IndexOutOfRange,
                    construct: format!("{}{at}", f.construct),
                }
            } else {
                RuntimeSite {
                    kind: FaultKind::Assertion,
                    construct: format!("{}{at}", f.message),
                }
            }
        })
        .collect();
    for stage in &program.stages {
        for pipe in 0..stage.pipes {
            if let Some(site) = sites.get_mut((stage.twice_fault + pipe) as usize) {
                *site = RuntimeSite {
                    kind: FaultKind::StageWrittenTwice { pipe },
                    construct: stage.name.clone(),
                };
            }
        }
        if let Some(site) = sites.get_mut(stage.range_fault as usize) {
            *site = RuntimeSite {
                kind: FaultKind::StagePipeOutOfRange,
                construct: stage.name.clone(),
            };
        }
    }
    sites
}

#[cfg(test)]
mod tests {
    use chronon_lang::span::SourceMap;
    use chronon_lang::{CompileOptions, compile};

    use super::*;
    use crate::lower::lower;

    const SOURCE: &str = "clock core = 1 GHz;
unit U {
    reg i: u8;
    reg a: [u32; 4];
    stage st: u8 pipes 2;
    tick {
        a[i] <= 1;
        st.write(i as u32, 1);
        assert(i < 9, \"i stays small\");
        i <= i + 1;
    }
}
system Top {
    inst u: U on core;
}
";

    #[test]
    fn every_cause_keeps_its_own_kind() {
        let mut sources = SourceMap::new();
        sources.add("t.chr", SOURCE);
        let compiled = compile(
            &mut sources,
            &CompileOptions {
                top: None,
                params: Vec::new(),
                require_top: true,
            },
        );
        assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
        let design = compiled.design.expect("a design without errors");
        let program = lower(&design, &sources).expect("the design lowers");
        let mut kinds: Vec<String> = runtime_sites(&program)
            .iter()
            .map(|s| format!("{} {}", s.kind.code(), s.construct))
            .collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(
            kinds,
            [
                "runtime::assertion_failed i stays small at t.chr:9:9",
                "runtime::index_out_of_range array index at t.chr:7:9",
                "runtime::stage_pipe_out_of_range st",
                "runtime::stage_written_twice st",
            ]
        );
    }
}
