//! `print` from `chronc run`: the lines, their order and prefixes on both
//! engines, `--quiet-print`, `--json` (lines on stderr), recordings that
//! leave prints out, and a write error that stops the run.

mod common;

use common::{all_output, chronc, scratch};

/// The lines the contract orders: exact time, then domain declaration
/// order; written out by hand from the design's clocks.
const EXPECTED: &str = "\
0ps a 0 top.x: a n=0 x=0x0
500ps b 0 top.y: b m=-1 bits=11111111 low=true
1000ps a 1 top.x: a n=1 x=0x1
2000ps a 2 top.x: a n=2 x=0x2
2000ps b 1 top.y: b m=-2 bits=11111110 low=false
3000ps a 3 top.x: a n=3 x=0x3
";

const DESIGN: &str = "compiler/tests/print/two_clocks.chr";

/// The lines before the summary (which starts `top T on ...`).
fn printed(stdout: &[u8]) -> String {
    printed_before(stdout, "top T on")
}

/// The lines before `summary`.
fn printed_before(stdout: &[u8], summary: &str) -> String {
    let text = String::from_utf8_lossy(stdout);
    let end = text.find(summary).unwrap_or(text.len());
    text[..end].to_string()
}

#[test]
fn print_lines_are_the_same_on_both_engines_in_contract_order() {
    for engine in ["jit", "interp"] {
        let out = chronc(&["run", DESIGN, "-q", "--engine", engine]);
        assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
        assert_eq!(printed(&out.stdout), EXPECTED, "{engine}");
    }
    // On two workers (one component each), the same lines.
    let out = chronc(&["run", DESIGN, "-q", "--threads", "2"]);
    assert_eq!(printed(&out.stdout), EXPECTED);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("workers: 2 "),
        "{}",
        all_output(&out)
    );
}

const MANY: &str = "compiler/tests/print/many_parallel.chr";

/// Three components printing on every edge, far more lines than a worker
/// may keep waiting: on 2 and 3 workers the output is the serial run's,
/// byte for byte; with the output full, the parallel run stops as the
/// serial one does, early, and says why.
#[test]
fn parallel_runs_print_the_serial_runs_lines() {
    let serial = chronc(&["run", MANY, "-q", "--threads", "1"]);
    assert_eq!(serial.status.code(), Some(0), "{}", all_output(&serial));
    let lines = printed_before(&serial.stdout, "top T on");
    // `slow` finishes at its edge 40,000 (160,000,037 ps): by then `fast`
    // had 160,001 edges and `mid` (100 ps + k * 5000/3 ps) 96,000.
    assert_eq!(lines.lines().count(), 40_001 + 160_001 + 96_000);
    for threads in ["2", "3"] {
        let out = chronc(&["run", MANY, "-q", "--threads", threads]);
        assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
        assert!(
            printed_before(&out.stdout, "top T on") == lines,
            "{threads} workers printed other lines"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("workers: {threads} ")), "{text}");
    }
    let report = run_into_full_output(&["run", MANY, "-q", "--json", "--threads", "3"]);
    assert_eq!(report["parallel"]["workers"], 3, "{report}");
    // The main thread stops the workers as an interrupt would, at one
    // instant; a run this short may have finished before it could.
    let edges = report["domains"][2]["edges"].as_u64().expect("edges");
    match report["stop"].as_str() {
        Some("print-failed") => assert!(edges < 40_001, "{edges} edges"),
        Some("finished") => assert_eq!(edges, 40_001),
        _ => panic!("{report}"),
    }
}

#[test]
fn quiet_print_silences_and_json_moves_the_lines_to_stderr() {
    let out = chronc(&["run", DESIGN, "-q", "--quiet-print"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(printed(&out.stdout), "");
    let out = chronc(&["run", DESIGN, "-q", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is the JSON report alone");
    assert_eq!(report["stop"], "finished");
    assert_eq!(String::from_utf8_lossy(&out.stderr), EXPECTED);
}

#[test]
fn recordings_leave_prints_out_and_both_run_together() {
    let dir = scratch("print", "recorded");
    let trace = dir.join("text");
    let vcd = dir.join("wave.vcd");
    let trace_arg = trace.display().to_string();
    let vcd_arg = vcd.display().to_string();
    let out = chronc(&[
        "run", DESIGN, "-q", "--trace", &trace_arg, "--vcd", &vcd_arg,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    assert_eq!(printed(&out.stdout), EXPECTED);
    let mut logs = String::new();
    for entry in std::fs::read_dir(&trace).expect("the text logs") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|x| x == "log") {
            logs += &std::fs::read_to_string(path).expect("readable");
        }
    }
    // The trace beside the print is recorded at each of a's 4 edges; no
    // print is.
    assert_eq!(logs.matches(" top.x tick n=").count(), 4, "{logs}");
    assert!(!logs.contains("print"), "a print was recorded:\n{logs}");
    assert!(std::fs::metadata(&vcd).expect("the VCD").len() > 0);
    // With the prints silenced, the recording's own sink sees their
    // records, and drops them too.
    let quiet = dir.join("quiet");
    let quiet_arg = quiet.display().to_string();
    let out = chronc(&["run", DESIGN, "-q", "--quiet-print", "--trace", &quiet_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let log = std::fs::read_to_string(quiet.join("00-a.log")).expect("a's log");
    assert_eq!(log.matches(" top.x tick n=").count(), 4, "{log}");
    assert!(!log.contains("print"), "{log}");
}

/// The JSON report of `chronc args` (with `--json`) whose standard error,
/// where the lines go, is `/dev/full`: it exits with 1 and reports the
/// print output's error.
fn run_into_full_output(args: &[&str]) -> serde_json::Value {
    let full = std::fs::File::create("/dev/full").expect("/dev/full exists on Linux");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args(args)
        .current_dir(common::repo_root())
        .stderr(full)
        .output()
        .expect("chronc starts");
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report");
    let error = report["print_error"].as_str().expect("the error");
    assert!(error.contains("No space left"), "{error}");
    report
}

#[test]
fn a_print_write_error_stops_the_run_and_is_reported() {
    let report = run_into_full_output(&["run", "compiler/tests/print/many.chr", "-q", "--json"]);
    assert_eq!(report["stop"], "print-failed", "{report}");
    // It stopped well before its `finish` at edge 200,000.
    let edges = report["domains"][0]["edges"].as_u64().expect("edges");
    assert!(edges < 200_000, "{edges} edges");
}

/// `tests/designs/print_formats.chr`: every line parsed back and checked
/// against what it must show (the writer's `d` counts up from -4 by its
/// cycle; the reader gets 0, 3, 6, ... in order), and the same bytes on
/// both engines, with the replay loop on and off.
#[test]
fn every_placeholder_shows_its_value_in_a_cdc_design() {
    let design = "tests/designs/print_formats.chr";
    let base = chronc(&["run", design, "-q", "--cycles", "200"]);
    assert_eq!(base.status.code(), Some(0), "{}", all_output(&base));
    let lines = printed_before(&base.stdout, "top Top on");
    for args in [
        &["--engine", "interp"][..],
        &["--exec", "replay-loop=off"][..],
        &[
            "--exec",
            "blind-calls=off",
            "--exec",
            "unobserved-variants=off",
        ][..],
    ] {
        let mut all = vec!["run", design, "-q", "--cycles", "200"];
        all.extend_from_slice(args);
        let out = chronc(&all);
        assert!(
            printed_before(&out.stdout, "top Top on") == lines,
            "{args:?} printed other lines"
        );
    }
    let (mut writer, mut reader) = (0u64, 0u64);
    let mut last_time = 0.0f64;
    for line in lines.lines().filter(|l| !l.is_empty()) {
        let (head, text) = line.split_once(": ").expect("prefix: text");
        let fields: Vec<&str> = head.split(' ').collect();
        let [time, domain, cycle, path] = fields[..] else {
            panic!("{line}");
        };
        // Exact times such as `5864+2/7ps`, in order.
        let time = time.strip_suffix("ps").expect("ps");
        let t: f64 = match time.split_once('+') {
            Some((whole, frac)) => {
                let (a, b) = frac.split_once('/').expect("a fraction");
                whole.parse::<f64>().unwrap()
                    + a.parse::<f64>().unwrap() / b.parse::<f64>().unwrap()
            }
            None => time.parse().expect("whole ps"),
        };
        assert!(t >= last_time, "{line}");
        last_time = t;
        let cycle: u64 = cycle.parse().expect("a cycle");
        match (domain, path) {
            ("w", "top.w") => {
                assert_eq!(cycle, writer, "{line}");
                let d = (-4i64 + cycle as i64) as i8;
                let n = text
                    .split(' ')
                    .nth(1)
                    .and_then(|f| f.strip_prefix("n="))
                    .and_then(|v| v.parse::<u16>().ok())
                    .expect("n");
                let expected = format!(
                    "w n={n} hex={n:x} {n:#x} d={d} bits={:b} {:#b} neg={}",
                    d as u8,
                    d as u8 & 0xf,
                    d < 0
                );
                assert_eq!(text, expected);
                writer += 1;
            }
            ("r", "top.r") => {
                let v = 3 * reader;
                assert_eq!(text, format!("r got {v} {{as {v:#x}}}"), "{line}");
                reader += 1;
            }
            _ => panic!("{line}"),
        }
    }
    assert_eq!(writer, 200, "one writer line per edge");
    assert!(reader > 50, "{reader} reader lines");
}
