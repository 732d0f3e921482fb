//! The runtime fault site of each IR fault site: its kind and construct text,
//! so that every cause reaches the user with its own stable code (contract §6),
//! and the source location of the site behind a runtime fault.

use chronon_runtime::{Fault, FaultKind};

use crate::ir::{FaultSite, Program, SiteKind};

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
                SiteKind::LoopBound => RuntimeSite {
                    kind: FaultKind::LoopBound,
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

/// The IR fault site behind a runtime fault, when it has one: the site
/// the fault names (IR fault ids are the runtime's site ids), else the one
/// its unit, kind and construct identify (sites that share all three share
/// their location). For a stage register fault it is the write, retain or
/// read that faulted; for a refused send, the `send` statement.
pub(crate) fn site_of<'p>(program: &'p Program, fault: &Fault) -> Option<&'p FaultSite> {
    if let Some(site) = fault.site {
        return program.faults.get(site.0 as usize);
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
        .map(|(f, _)| f)
}

/// The source location (`file:line:col`) of the site behind a runtime
/// fault ([`site_of`]), when known.
pub(crate) fn location(program: &Program, fault: &Fault) -> Option<String> {
    site_of(program, fault)?.span.clone()
}

/// What to do about a runtime fault of this kind: the help line of its
/// report.
pub(crate) fn help(kind: &FaultKind) -> &'static str {
    match kind {
        FaultKind::SendRefused | FaultKind::FifoSendRefused => {
            "the channel or FIFO had no room (or the port had sent its rate this edge): \
             test `can_send()` first, or use `try_send`, which reports whether it sent"
        }
        FaultKind::StageWrittenTwice { .. } => {
            "a stage register pipe takes one write (or retain) per edge: write each pipe \
             on one path through the tick"
        }
        FaultKind::Assertion => {
            "the condition was false on this edge; the report's state is the state after \
             the instant, and `--until` just before it replays up to here"
        }
        FaultKind::IndexOutOfRange => {
            "the index is outside the array (or the bit position outside the integer): \
             guard it (`if i < N`) or give the index a type no wider than it needs"
        }
        FaultKind::StagePipeOutOfRange => {
            "the pipe index is outside the stage register's pipes: guard it or declare \
             more pipes"
        }
        FaultKind::LoopBound => {
            "the loop needed more iterations than its `max`: raise the bound, or stop \
             the loop sooner (a `for` range is checked before its first iteration, a \
             `while` when its condition still holds after `max` iterations)"
        }
        FaultKind::TickStatus { .. } => "an internal tick status: please report it",
    }
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
