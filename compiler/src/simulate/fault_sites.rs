//! The runtime fault site of each IR fault site: its kind and construct text,
//! so that every cause reaches the user with its own stable code (contract §6),
//! and the source location of the site behind a runtime fault.

use chronon_runtime::{Fault, FaultKind};

use crate::ir::{Program, SiteKind};

/// A fault site as the runtime declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RuntimeSite {
    /// What the site reports.
    pub(crate) kind: FaultKind,
    /// The construct the report names.
    pub(crate) construct: String,
}

/// The runtime site of every IR fault site, by fault id: the kind comes from
/// the site's typed [`SiteKind`]. Every construct ends with the site's
/// source location: an assert's message, `array index`, or the stage
/// register's name (the runtime's message adds the pipe), then ` at
/// file:line:col`. So constructs are unique per site and per location.
pub(crate) fn runtime_sites(program: &Program) -> Vec<RuntimeSite> {
    program
        .faults
        .iter()
        .map(|f| {
            let at = f
                .span
                .as_deref()
                .map(|s| format!(" at {s}"))
                .unwrap_or_default();
            match f.kind {
                SiteKind::Assert => RuntimeSite {
                    kind: FaultKind::Assertion,
                    construct: format!("{}{at}", f.message),
                },
                SiteKind::Index => RuntimeSite {
                    kind: FaultKind::IndexOutOfRange,
                    construct: format!("{}{at}", f.construct),
                },
                SiteKind::StageTwice { pipe } => RuntimeSite {
                    kind: FaultKind::StageWrittenTwice { pipe },
                    construct: format!("{}{at}", f.construct),
                },
                SiteKind::StageRange => RuntimeSite {
                    kind: FaultKind::StagePipeOutOfRange,
                    construct: format!("{}{at}", f.construct),
                },
                // Never raised: a refused `send` is reported by its channel
                // or FIFO, which then names this site for its location.
                SiteKind::Send => RuntimeSite {
                    kind: FaultKind::SendRefused,
                    construct: format!("{}{at}", f.construct),
                },
            }
        })
        .collect()
}

/// The source location (`file:line:col`) of the IR fault site behind a
/// runtime fault, when it has one: the site the fault names (IR fault ids
/// are the runtime's site ids), else the one its unit, kind and construct
/// identify (sites that share all three share their location). For a
/// stage register fault it is the write, retain or read that faulted; for
/// a refused send, the `send` statement.
pub(crate) fn location(program: &Program, fault: &Fault) -> Option<String> {
    if let Some(site) = fault.site {
        return program.faults.get(site.0 as usize)?.span.clone();
    }
    program
        .faults
        .iter()
        .zip(runtime_sites(program))
        .find(|(f, site)| {
            site.kind == fault.kind
                && site.construct == fault.construct
                && program.units.get(f.unit as usize).map(|u| u.path.as_str())
                    == Some(fault.unit.as_str())
        })
        .and_then(|(f, _)| f.span.clone())
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
                "runtime::stage_pipe_out_of_range st at t.chr:8:9",
                "runtime::stage_written_twice st at t.chr:8:9",
            ]
        );
    }
}
