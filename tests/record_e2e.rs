//! Recording end to end: `chronc run`'s recorders on real designs, both
//! engines, checked against orders and flows derived independently of the
//! writers, plus write errors and lossy accounting.

use std::path::{Path, PathBuf};
use std::process::Command;

use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::{RunOptions, RunReport, StopAt, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;
use chronon_record::Time;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("chronon-record-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn run_design(path: &str, engine: EngineKind, rec: &RecordOptions) -> RunReport {
    let mut sources = SourceMap::new();
    let text = std::fs::read_to_string(path).expect("example exists");
    sources.add(path.to_string(), text);
    let options = RunOptions {
        top: None,
        params: Vec::new(),
        engine,
        stop: StopAt::Cycles {
            count: 2_000,
            domain: None,
        },
        drain: None,
        seed: 0,
    };
    match run_recorded(&mut sources, &options, rec, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{path}: {e:?}"),
    }
}

fn all_outputs(dir: &Path) -> RecordOptions {
    RecordOptions {
        trace_dir: Some(dir.join("text")),
        perfetto: Some(dir.join("trace.pftrace")),
        vcd: Some(dir.join("wave.vcd")),
        counters: Some(dir.join("counters.csv")),
        counter_interval: 3,
        ticks: true,
        ..RecordOptions::default()
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("output dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let name = path
                .file_name()
                .expect("file")
                .to_string_lossy()
                .to_string();
            out.push((name, std::fs::read(&path).expect("output file")));
        }
    }
    out.sort();
    out
}

#[test]
fn every_recorder_writes_the_same_bytes_on_both_engines() {
    for design in ["examples/cdc_pair.chr", "examples/three_clocks.chr"] {
        let mut outputs = Vec::new();
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let dir = scratch(&format!("same-{engine:?}-{}", design.len()));
            let report = run_design(design, engine, &all_outputs(&dir));
            let rec = report.recording.as_ref().expect("recording summary");
            assert_eq!(rec.error, None, "{design}");
            assert_eq!(rec.dropped, 0, "{design}: lossless drops nothing");
            outputs.push(files(&dir));
        }
        assert!(
            outputs[0].len() >= 6,
            "{design}: 2+ logs, manifest, perfetto, vcd, csv"
        );
        for (a, b) in outputs[0].iter().zip(&outputs[1]) {
            assert_eq!(a.0, b.0);
            assert!(a.1 == b.1, "{design}: {} differs between engines", a.0);
            assert!(!a.1.is_empty(), "{design}: {} is empty", a.0);
        }
    }
}

/// One merged text line: exact time, domain, and the rest.
fn parse_line(line: &str) -> (Time, String, Vec<String>) {
    let mut fields = line.split(' ');
    let time = fields
        .next()
        .and_then(|t| t.strip_suffix("ps"))
        .expect("time field");
    let time = Time::parse(time).expect("exact time");
    let domain = fields.next().expect("domain").to_string();
    (time, domain, fields.map(str::to_string).collect())
}

#[test]
fn merged_logs_follow_exact_time_and_every_item_flows() {
    let dir = scratch("merge");
    let rec = RecordOptions {
        trace_dir: Some(dir.join("text")),
        ..RecordOptions::default()
    };
    run_design("examples/cdc_pair.chr", EngineKind::Jit, &rec);
    let mut merged = Vec::new();
    chronon_record::merge::merge(&dir.join("text"), &mut merged).expect("merge");
    let merged = String::from_utf8(merged).expect("utf-8");
    let lines: Vec<_> = merged.lines().map(parse_line).collect();
    // Independent order: exact time, then domain declaration order.
    let rank = |d: &str| {
        ["wclk", "rclk"]
            .iter()
            .position(|x| *x == d)
            .expect("domain")
    };
    for w in lines.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            (a.0, rank(&a.1)) <= (b.0, rank(&b.1)),
            "out of order: {a:?} then {b:?}"
        );
    }
    // Each domain's log is the merged stream restricted to that domain.
    for (file, domain) in [("00-wclk.log", "wclk"), ("01-rclk.log", "rclk")] {
        let log = std::fs::read_to_string(dir.join("text").join(file)).expect("log");
        let from_merge = lines.iter().filter(|l| l.1 == domain).count();
        let records = log.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(records, from_merge, "{file}");
    }
    // Every item: write < visible <= read < output-or-same <= consume.
    let mut seen = std::collections::HashMap::<(String, u64), Time>::new();
    for (time, _, rest) in &lines {
        if rest.get(1).map(String::as_str) != Some("F") {
            continue;
        }
        let kind = rest[3].clone();
        let txn: u64 = rest[4]
            .strip_prefix("txn=")
            .and_then(|t| t.parse().ok())
            .expect("txn");
        if ["write", "visible", "read", "output", "consume"].contains(&kind.as_str()) {
            assert!(
                seen.insert((kind, txn), *time).is_none(),
                "one event per kind and item"
            );
        }
    }
    for txn in 0..200u64 {
        let at = |k: &str| {
            *seen
                .get(&(k.to_string(), txn))
                .unwrap_or_else(|| panic!("{k} of item {txn}"))
        };
        assert!(at("write") < at("visible"), "item {txn}");
        assert!(at("visible") <= at("read"), "item {txn}");
        assert!(
            at("read") == at("output"),
            "item {txn}: output at the read's commit"
        );
        assert!(at("output") < at("consume"), "item {txn}");
    }
}

#[test]
fn a_full_disk_stops_recording_with_the_writers_error() {
    let rec = RecordOptions {
        perfetto: Some(PathBuf::from("/dev/full")),
        ..RecordOptions::default()
    };
    let report = run_design("examples/cdc_pair.chr", EngineKind::Interp, &rec);
    let error = report
        .recording
        .as_ref()
        .and_then(|r| r.error.clone())
        .expect("an error");
    assert!(error.contains("/dev/full"), "{error}");
    assert!(!report.is_clean());
    let rec = RecordOptions {
        trace_dir: Some(PathBuf::from("/proc/no-such-dir/trace")),
        ..RecordOptions::default()
    };
    let mut sources = SourceMap::new();
    sources.add(
        "cdc.chr".to_string(),
        std::fs::read_to_string("examples/cdc_pair.chr").expect("example"),
    );
    let options = RunOptions {
        top: None,
        params: Vec::new(),
        engine: EngineKind::Interp,
        stop: StopAt::Finish,
        drain: None,
        seed: 0,
    };
    match run_recorded(&mut sources, &options, &rec, &mut |_, _| {}) {
        Err(chronon_compiler::run::RunError::Setup(m)) => {
            assert!(m.contains("/proc/no-such-dir"), "{m}")
        }
        other => panic!("expected a setup error, got {:?}", other.map(|r| r.stop)),
    }
}

#[test]
fn lossy_retained_plus_dropped_equals_lossless() {
    let mut totals = Vec::new();
    for lossy in [false, true] {
        let dir = scratch(&format!("lossy-{lossy}"));
        let rec = RecordOptions {
            trace_dir: Some(dir.join("text")),
            lossy,
            ..RecordOptions::default()
        };
        let report = run_design("examples/three_clocks.chr", EngineKind::Jit, &rec);
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join("text/manifest.json")).expect("manifest"),
        )
        .expect("manifest JSON");
        let kept: u64 = manifest["records"]
            .as_array()
            .expect("records")
            .iter()
            .filter_map(|v| v.as_u64())
            .sum();
        let dropped = report.recording.expect("summary").dropped;
        assert_eq!(
            manifest["dropped"]
                .as_object()
                .map(|o| o.values().filter_map(|v| v.as_u64()).sum::<u64>()),
            Some(dropped)
        );
        totals.push(kept + dropped);
    }
    assert_eq!(totals[0], totals[1]);
    assert!(totals[0] > 0);
}

#[test]
fn vcd_register_changes_match_the_trace_events() {
    if Command::new("python3")
        .args(["-c", "import pywellen, vcd"])
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
    {
        println!("note: python3 with pywellen and pyvcd is missing; VCD check skipped");
        return;
    }
    let dir = scratch("vcd");
    let rec = RecordOptions {
        trace_dir: Some(dir.join("text")),
        vcd: Some(dir.join("wave.vcd")),
        vcd_signals: vec!["top.r.expected".into()],
        ..RecordOptions::default()
    };
    run_design("examples/cdc_pair.chr", EngineKind::Jit, &rec);
    // Independent expectation: `expected` becomes k+1 at the k-th take.
    let log = std::fs::read_to_string(dir.join("text/01-rclk.log")).expect("log");
    let mut changes = Vec::new();
    let mut k = 0u64;
    for line in log.lines().filter(|l| l.contains(" T top.r take ")) {
        let time = line
            .split(' ')
            .nth(1)
            .and_then(|t| t.strip_suffix("ps"))
            .and_then(Time::parse)
            .expect("time");
        k += 1;
        changes.push(serde_json::json!([time.floor_fs().expect("fs") as u64, k]));
    }
    let expect = serde_json::json!({"signals": {"top.r.expected": changes}});
    std::fs::write(dir.join("expect.json"), expect.to_string()).expect("write expectation");
    let out = Command::new("python3")
        .arg("tests/py/check_vcd.py")
        .arg(dir.join("wave.vcd"))
        .arg(dir.join("expect.json"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
