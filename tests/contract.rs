//! The timing contract (`docs/semantics.md`), clause by
//! clause, end to end: every design under `tests/contract/` is compiled and
//! run as `chronc run` runs it, with a text trace, on both engines, and its
//! trace and summary are compared with values its header derives by hand
//! from the contract (docs/contract-coverage.md maps clauses to designs).
//!
//! A design's header is a run of `//` lines:
//!
//! - `// run: ARGS`: the stop condition as `chronc run` takes it
//!   (`--cycles N [--domain D]`, `--until T`, `--drain`, `--drain-limit N`;
//!   default until `finish`);
//! - `// keep: KIND ...`: which merged-log lines the `expect` lines list, in
//!   order and completely: `T` (trace events), `F` (FIFO events), `C`
//!   (counters), or `F.NAME` (FIFO events named NAME);
//! - `// expect: LINE`: one kept line of `chronc trace merge`, exactly;
//! - `// summary: TEXT`: text that the run's summary must contain (a stop
//!   reason, a fault with its unit, construct, domain, cycle and time);
//! - `// same-lines-as: FILE`: FILE (in `tests/contract/`, run with its own
//!   header) is the same design declared in another order; the two merged
//!   logs must hold the same lines, each record with its time, domain and
//!   cycle, in any order within an instant (contract §2).
//!
//! Besides the expected lines, every design must give the same merged log
//! and the same summary on the interpreter and the JIT, the same final
//! state with and without a recording (the unrecorded run takes the replay
//! loop and run-ahead where it can), and the same log and state when run to
//! 1, half and all but one of the first domain's edges first and then on
//! (contract §6, "running to X and then on to Y gives exactly the state and
//! the trace of one run to Y"), and a run stopped there as `chronc run
//! --cycles X` stops it must record exactly the start of the whole trace. The
//! runtime is serial (docs/architecture.md), so the contract's "1 or N
//! worker threads" has no second configuration to compare yet.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chronon_compiler::record::{RecordOptions, Recording};
use chronon_compiler::run::{RunOptions, RunReport, StopAt, parse_time, run, run_recorded};
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_lang::span::SourceMap;
use chronon_runtime::{DomainId, RunLimit};
use chronon_suite::designs::{check_each, elaborate, parse_run_args, run_summary};
use chronon_suite::tools;

/// What a design's header asks.
struct Case {
    stop: StopAt,
    drain: Option<u64>,
    keep: Vec<String>,
    expect: Vec<String>,
    summary: Vec<String>,
    same_lines_as: Option<String>,
}

fn parse_header(path: &Path, text: &str) -> Case {
    let mut case = Case {
        stop: StopAt::Finish,
        drain: None,
        keep: Vec::new(),
        expect: Vec::new(),
        summary: Vec::new(),
        same_lines_as: None,
    };
    for line in text.lines().map_while(|l| l.strip_prefix("//")) {
        let line = line.trim();
        if let Some(args) = line.strip_prefix("run:") {
            let run = parse_run_args(path, args);
            case.stop = run.stop;
            case.drain = run.drain;
        } else if let Some(kinds) = line.strip_prefix("keep:") {
            case.keep = kinds.split_whitespace().map(str::to_string).collect();
        } else if let Some(expected) = line.strip_prefix("expect:") {
            case.expect.push(expected.trim().to_string());
        } else if let Some(text) = line.strip_prefix("summary:") {
            case.summary.push(text.trim().to_string());
        } else if let Some(file) = line.strip_prefix("same-lines-as:") {
            case.same_lines_as = Some(file.trim().to_string());
        }
    }
    assert!(
        !case.keep.is_empty() || case.expect.is_empty(),
        "{}: `expect` lines need a `keep` line",
        path.display()
    );
    case
}

/// Whether a merged-log line (`TIME DOMAIN CYCLE KIND ...`) is one that
/// `keep` selects.
fn kept(keep: &[String], line: &str) -> bool {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (Some(kind), name) = (fields.get(3), fields.get(5)) else {
        return false;
    };
    keep.iter().any(|k| match k.split_once('.') {
        Some((kk, n)) => kk == *kind && name == Some(&n),
        None => k == kind,
    })
}

/// A fresh directory for one run's text trace.
fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chronon-contract-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// `chronc trace merge DIR`, as text; removes DIR.
fn merged(dir: &Path) -> String {
    let mut out = Vec::new();
    chronon_record::merge::merge(dir, &mut out).expect("the trace merges");
    let _ = std::fs::remove_dir_all(dir);
    String::from_utf8(out).expect("the merged log is text")
}

/// `chronc run`'s defaults on `engine`: until `finish`, seed 0.
fn options_for_engine(engine: EngineKind) -> RunOptions {
    RunOptions::new(engine, StopAt::Finish)
}

fn options(case: &Case, engine: EngineKind) -> RunOptions {
    RunOptions {
        stop: case.stop.clone(),
        drain: case.drain,
        ..options_for_engine(engine)
    }
}

/// Runs `text` as `chronc run --trace` does; returns the summary and the
/// merged log.
fn run_traced(label: &str, text: &str, case: &Case, engine: EngineKind) -> (String, String) {
    let dir = scratch(label);
    let mut sources = SourceMap::new();
    sources.add(format!("{label}.chr"), text.to_string());
    let record = RecordOptions {
        trace_dir: Some(dir.clone()),
        ..RecordOptions::default()
    };
    let report = match run_recorded(
        &mut sources,
        &options(case, engine),
        &record,
        &mut |_, _| {},
    ) {
        Ok(r) => r,
        Err(e) => panic!("{label}: {e:?}"),
    };
    assert!(
        report.recording.as_ref().is_some_and(|r| r.error.is_none()),
        "{label}: recording failed: {:?}",
        report.recording
    );
    (run_summary(&report), merged(&dir))
}

/// The same run without a recording (the replay loop and run-ahead may take
/// it).
fn run_plain(label: &str, text: &str, case: &Case, engine: EngineKind) -> String {
    let mut sources = SourceMap::new();
    sources.add(format!("{label}.chr"), text.to_string());
    match run(&mut sources, &options(case, engine), &mut |_, _| {}) {
        Ok(r) => run_summary(&r),
        Err(e) => panic!("{label}: {e:?}"),
    }
}

/// Runs `text` with a text trace to `first` and then on to the case's own
/// stop condition and drain; returns the final state digest and the merged
/// log.
fn run_resumed(label: &str, text: &str, case: &Case, first: RunLimit) -> (String, String) {
    let (design, sources) = elaborate(label, text);
    let program = chronon_compiler::lower::lower(&design, &sources).expect("lowers");
    let mut sim = Simulator::new(Arc::new(program), EngineKind::Jit).expect("builds");
    let dir = scratch(&format!("{label}-resumed"));
    let record = RecordOptions {
        trace_dir: Some(dir.clone()),
        ..RecordOptions::default()
    };
    let recording = Recording::attach(&mut sim, &design.top, &record).expect("records");
    let last = match &case.stop {
        StopAt::Cycles { count, domain } => RunLimit::Edges {
            domain: DomainId(
                domain
                    .as_ref()
                    .map(|n| {
                        sim.program()
                            .domains
                            .iter()
                            .position(|d| &d.name == n)
                            .expect("the domain exists") as u32
                    })
                    .unwrap_or(0),
            ),
            count: *count,
        },
        StopAt::Until(t) => RunLimit::Time(*t),
        StopAt::Finish => RunLimit::Unbounded,
    };
    if sim.sim.run(first) == chronon_runtime::Stop::LimitReached {
        sim.sim.run(last);
    }
    if let Some(limit) = case.drain {
        sim.sim.drain(limit);
    }
    recording.finish(&mut sim);
    (format!("{:016x}", sim.digest()), merged(&dir))
}

fn check(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let label = path
        .file_stem()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    let case = parse_header(path, &text);
    let (interp_summary, interp_log) = run_traced(&label, &text, &case, EngineKind::Interp);
    let (jit_summary, jit_log) = run_traced(&label, &text, &case, EngineKind::Jit);
    assert_eq!(
        interp_summary, jit_summary,
        "{label}: engines disagree on the summary"
    );
    assert_eq!(
        interp_log, jit_log,
        "{label}: engines disagree on the trace"
    );
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        assert_eq!(
            run_plain(&label, &text, &case, engine),
            jit_summary,
            "{label}: a run without recording ends elsewhere ({engine:?})"
        );
    }
    let got: Vec<&str> = jit_log.lines().filter(|l| kept(&case.keep, l)).collect();
    assert_eq!(
        got, case.expect,
        "{label}: kept trace lines differ from the contract's\nwhole log:\n{jit_log}"
    );
    for needle in &case.summary {
        assert!(
            jit_summary.contains(needle.as_str()),
            "{label}: the summary lacks `{needle}`:\n{jit_summary}"
        );
    }
    if let Some(other) = &case.same_lines_as {
        let other_path = path.with_file_name(other);
        let other_text = std::fs::read_to_string(&other_path)
            .unwrap_or_else(|e| panic!("{}: {e}", other_path.display()));
        let other_case = parse_header(&other_path, &other_text);
        let (_, other_log) = run_traced(
            &format!("{label}-other"),
            &other_text,
            &other_case,
            EngineKind::Jit,
        );
        let sorted = |log: &str| {
            let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
            lines.sort();
            lines
        };
        assert!(
            jit_log.lines().count() > 100,
            "{label}: a log worth comparing"
        );
        assert_eq!(
            sorted(&jit_log),
            sorted(&other_log),
            "{label}: {other} (the same design declared in another order) records otherwise"
        );
    }
    // Contract §6: running to X and then on to Y equals one run to Y. X is
    // half the first domain's edges of the whole run.
    let edges: u64 = jit_summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("domain "))
        .and_then(|l| l.split(": ").nth(1))
        .and_then(|l| l.strip_suffix(" edges"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{label}: no edge count in\n{jit_summary}"));
    let whole_digest = jit_summary
        .lines()
        .find_map(|l| l.strip_prefix("state digest: "))
        .expect("a digest")
        .to_string();
    // And `chronc run --cycles X` alone records exactly the beginning of
    // the run to Y.
    for x in [1, edges / 2, edges.saturating_sub(1)] {
        let first = RunLimit::Edges {
            domain: DomainId(0),
            count: x,
        };
        let (digest, log) = run_resumed(&label, &text, &case, first);
        assert_eq!(digest, whole_digest, "{label}: resumed after {x} edges");
        assert_eq!(log, jit_log, "{label}: trace resumed after {x} edges");
        let to_x = Case {
            stop: StopAt::Cycles {
                count: x,
                domain: None,
            },
            drain: None,
            keep: Vec::new(),
            expect: Vec::new(),
            summary: Vec::new(),
            same_lines_as: None,
        };
        let (_, prefix) = run_traced(&format!("{label}-to-{x}"), &text, &to_x, EngineKind::Jit);
        assert!(
            jit_log.starts_with(&prefix),
            "{label}: the trace of a run to {x} edges is not the start of the whole one:\n{prefix}"
        );
    }
}

#[test]
fn contract_designs() {
    check_each("tests/contract", check);
}

/// Runs the design `tests/contract/<name>.chr` on the JIT until `stop`,
/// recording what `record` asks for, as `chronc run` does.
fn run_design_recorded(name: &str, stop: StopAt, record: &RecordOptions) -> RunReport {
    let path = format!("tests/contract/{name}.chr");
    let mut sources = SourceMap::new();
    let text = std::fs::read_to_string(&path).expect("the design");
    sources.add(path, text);
    let options = RunOptions {
        stop,
        drain: None,
        ..options_for_engine(EngineKind::Jit)
    };
    run_recorded(&mut sources, &options, record, &mut |_, _| {}).expect("runs")
}

/// The changes of the VCD variable `var` of the scope `scope` (an instance
/// name directly under `top`), as `(fs, value)` in file order, the initial
/// dump included.
fn vcd_changes(vcd: &str, scope: &str, var: &str) -> Vec<(u128, u64)> {
    let mut lines = vcd.lines();
    let mut id = None;
    let mut in_scope = false;
    for line in lines.by_ref() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["$scope", "module", name, "$end"] => in_scope = *name == scope,
            ["$var", _, _, code, name, "$end"] if in_scope && *name == var => {
                id = Some(code.to_string());
            }
            ["$enddefinitions", ..] => break,
            _ => {}
        }
    }
    let id = id.unwrap_or_else(|| panic!("no VCD variable {scope}.{var}"));
    let mut now = 0;
    let mut changes = Vec::new();
    for line in lines {
        if let Some(t) = line.strip_prefix('#') {
            now = t.parse().expect("a VCD time");
        } else if let Some((bits, code)) = line.strip_prefix('b').and_then(|l| l.split_once(' '))
            && code == id
        {
            changes.push((now, u64::from_str_radix(bits, 2).expect("binary value")));
        }
    }
    changes
}

/// Contract §8 on `tests/contract/s8_time_in_traces.chr`: VCD (1 fs) and
/// Perfetto (1 ns) timestamps are the exact times rounded down, at every
/// edge of a 1001 MHz and a 3 GHz domain for 2.1 us (so an error that
/// accumulated would show), computed here from `t(n) = n * 10^6 / 1001 ps`
/// and `t(m) = m * 1000 / 3 ps`; the Perfetto decoder also checks that
/// timestamps never go back and flows (FIFO write to consume, across
/// tracks) never go back in time.
#[test]
fn time_in_traces_rounds_down_in_every_format() {
    let dir = scratch("s8-formats");
    let record = RecordOptions {
        perfetto: Some(dir.join("run.pftrace")),
        vcd: Some(dir.join("run.vcd")),
        ticks: true,
        ..RecordOptions::default()
    };
    let until = StopAt::Until(parse_time("2100ns").expect("time"));
    let report = run_design_recorded("s8_time_in_traces", until, &record);
    assert!(report.is_clean(), "{}", report.summary(true));
    // Edges by 2100 ns: b 0..=2102 (2102 * 10^6 / 1001 < 2.1 * 10^6 ps),
    // c 0..=6300.
    let domains = [
        ("x", 2103u128, 1_000_000u128, 1001u128),
        ("y", 6301, 1000, 3),
    ];
    let vcd = std::fs::read_to_string(dir.join("run.vcd")).expect("the VCD");
    for (scope, edges, num, den) in domains {
        // Register `n` becomes n + 1 at edge n: one change per edge.
        let expected: Vec<(u128, u64)> = std::iter::once((0, 0))
            .chain((0..edges).map(|n| (n * num * 1000 / den, n as u64 + 1)))
            .collect();
        assert_eq!(
            vcd_changes(&vcd, scope, "n"),
            expected,
            "VCD times of top.{scope}.n"
        );
    }
    let dump = decode_perfetto(&dir.join("run.pftrace"));
    for (scope, edges, num, den) in domains {
        let track = format!("top.{scope}");
        let uuid = dump["tracks"]
            .as_object()
            .expect("tracks")
            .iter()
            .find(|(_, name)| name.as_str() == Some(track.as_str()))
            .map(|(uuid, _)| uuid.clone())
            .unwrap_or_else(|| panic!("a track named {track}"));
        // Tick slices begin (type 1) at every edge of the unit.
        let begins: Vec<u128> = dump["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|row| row[1].as_str() == Some(uuid.as_str()) && row[2].as_u64() == Some(1))
            .map(|row| u128::from(row[0].as_u64().expect("ts")))
            .collect();
        let expected: Vec<u128> = (0..edges).map(|n| n * num / den / 1000).collect();
        assert_eq!(begins, expected, "Perfetto tick times of {track}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Decodes a Perfetto trace with the independent Python decoder, which
/// checks the wire format, monotonic timestamps, balanced slices and flows;
/// the test fails without python3 and the `perfetto` package.
fn decode_perfetto(trace: &Path) -> serde_json::Value {
    if !tools::python_has(tools::PERFETTO_PROTOS) {
        tools::missing("python3 with the perfetto package", "the Perfetto check");
    }
    let dump_path = trace.with_extension("dump.json");
    let out = std::process::Command::new("python3")
        .arg("tests/py/dump_perfetto.py")
        .arg(trace)
        .arg(&dump_path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&dump_path).expect("dump")).expect("dump JSON")
}

/// Contract §6: a runtime fault stops the run at the end of the faulting
/// instant and leaves every output valid, a complete prefix of the run. The
/// design (`s6_fault_full_fifo_send`) faults at 2000 ps; by hand, every
/// output ends at that instant: the text log merges and its last record is
/// at 2000 ps, the Perfetto trace decodes (balanced slices, flows) with no
/// record past 2 ns (the run stops there, so the tick slices still open end
/// there too, not at edges it never reached), and the VCD's last time is
/// 2,000,000 fs.
#[test]
fn a_fault_leaves_every_output_valid() {
    let dir = scratch("s6-fault-outputs");
    let record = RecordOptions {
        trace_dir: Some(dir.join("text")),
        perfetto: Some(dir.join("run.pftrace")),
        vcd: Some(dir.join("run.vcd")),
        ticks: true,
        ..RecordOptions::default()
    };
    let report = run_design_recorded("s6_fault_full_fifo_send", StopAt::Finish, &record);
    assert_eq!(report.stop, "fault", "{}", report.summary(true));
    assert!(
        report.recording.as_ref().is_some_and(|r| r.error.is_none()),
        "{:?}",
        report.recording
    );
    let log = merged(&dir.join("text"));
    let last = log.lines().next_back().expect("records");
    assert!(last.starts_with("2000ps "), "the log ends at {last}");
    let vcd = std::fs::read_to_string(dir.join("run.vcd")).expect("the VCD");
    let last_time = vcd
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .next_back()
        .expect("VCD times");
    assert_eq!(last_time, "2000000", "the VCD's last time");
    let dump = decode_perfetto(&dir.join("run.pftrace"));
    // A tick slice runs from its edge to the domain's next edge, but
    // the run stops at the fault's instant, 2000 ps = 2 ns: the slices
    // begun at 2 ns (edge 2 of `w` and `r`, edge 4 of `o`, whose next
    // edges at 3 ns and 2.5 ns never run) end at 2 ns, and so does the
    // writer's closing "recording summary" event.
    let events = dump["events"].as_array().expect("events");
    let latest = |ends: bool| {
        events
            .iter()
            .filter(|row| row[3].as_str() != Some("recording summary"))
            .filter(|row| (row[2].as_u64() == Some(2)) == ends)
            .map(|row| row[0].as_u64().expect("ts"))
            .max()
    };
    assert_eq!(latest(false), Some(2), "the latest Perfetto record (ns)");
    assert_eq!(latest(true), Some(2), "the latest tick slice end (ns)");
    let summary = events
        .iter()
        .find(|row| row[3].as_str() == Some("recording summary"))
        .map(|row| row[0].as_u64());
    assert_eq!(summary, Some(Some(2)), "the summary's time (ns)");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Contract §6.3 and §8: a run to a time bound stops there, and so do its
/// open Perfetto tick slices, even when a `to=` filter dropped the records
/// before the bound. `s6_fault_full_fifo_send` run to 1900 ps with records
/// up to 1200 ps: by hand, the last kept ticks are at 1000 ps (`w` and `r`,
/// next edges at 2000 ps; `o`, next edge at 1500 ps, whose tick the filter
/// drops), so every slice ends, and the summary sits, at 1900 ps rounded
/// down, 1 ns (not at 2 ns, the next edges of `w` and `r`).
#[test]
fn a_bounded_run_ends_its_tick_slices_at_the_bound() {
    let dir = scratch("s6-until-slices");
    let mut record = RecordOptions {
        perfetto: Some(dir.join("run.pftrace")),
        ticks: true,
        ..RecordOptions::default()
    };
    record.filter.add("to=1200ps").expect("a filter");
    let until = parse_time("1900ps").expect("a time");
    let report = run_design_recorded("s6_fault_full_fifo_send", StopAt::Until(until), &record);
    assert_eq!(report.stop, "limit", "{}", report.summary(true));
    let dump = decode_perfetto(&dir.join("run.pftrace"));
    let events = dump["events"].as_array().expect("events");
    let latest = |kind: u64| {
        events
            .iter()
            .filter(|row| row[2].as_u64() == Some(kind))
            .map(|row| row[0].as_u64().expect("ts"))
            .max()
    };
    assert_eq!(latest(1), Some(1), "the latest slice begin (ns)");
    assert_eq!(latest(2), Some(1), "the latest slice end (ns)");
    assert_eq!(latest(3), Some(1), "the summary, the latest instant (ns)");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Contract §6: the instant that stops a run, by `finish` or by a fault,
/// completes, commit included. The VCD shows each register's last value at
/// that instant, derived by hand: in `s6_finish_mid_instant` every unit's
/// `n` counts its edges up to 3000 ps (a: 7, b: 4, c: 10), and in
/// `s6_fault_full_fifo_send` the 2 GHz unit has counted 5 edges at
/// 2000 ps, and the faulting writer's own write after its refused `send`
/// (n: 2 -> 3) is committed too (the tick runs to its end; the run stops
/// after the instant).
#[test]
fn the_stopping_instant_commits() {
    // (design, (instance, last value of its `n`), the stopping time in fs)
    type Stopping<'a> = (&'a str, &'a [(&'a str, u64)], u128);
    let cases: [Stopping; 2] = [
        (
            "s6_finish_mid_instant",
            &[("x", 7), ("y", 4), ("z", 10)],
            3_000_000,
        ),
        ("s6_fault_full_fifo_send", &[("o", 5), ("w", 3)], 2_000_000),
    ];
    for (name, last_values, at_fs) in cases {
        let dir = scratch(&format!("{name}-vcd"));
        let record = RecordOptions {
            vcd: Some(dir.join("run.vcd")),
            ..RecordOptions::default()
        };
        run_design_recorded(name, StopAt::Finish, &record);
        let vcd = std::fs::read_to_string(dir.join("run.vcd")).expect("the VCD");
        for &(scope, value) in last_values {
            assert_eq!(
                vcd_changes(&vcd, scope, "n").last(),
                Some(&(at_fs, value)),
                "{name}: the last change of top.{scope}.n"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
