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
use chronon_suite::tools;

/// A fresh output directory, removed when the test passes (kept for
/// inspection when it fails): each run used to leave its outputs in the
/// temporary directory.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let dir =
        std::env::temp_dir().join(format!("chronon-record-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    Scratch(dir)
}

fn run_design(path: &str, engine: EngineKind, rec: &RecordOptions) -> RunReport {
    run_design_with(path, engine, rec, Default::default())
}

fn run_design_with(
    path: &str,
    engine: EngineKind,
    rec: &RecordOptions,
    exec: chronon_compiler::config::ExecConfig,
) -> RunReport {
    let mut sources = SourceMap::new();
    let text = std::fs::read_to_string(path).expect("example exists");
    sources.add(path.to_string(), text);
    let options = RunOptions {
        exec,
        ..RunOptions::new(
            engine,
            StopAt::Cycles {
                count: 2_000,
                domain: None,
            },
        )
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

/// Each recorder alone writes the same bytes whether pattern-mode instants
/// run through the replay loop (in its observed form wherever the recorder
/// takes no FIFO events, as the VCD and counter writers do) or in checked
/// steps.
#[test]
fn every_recorder_alone_writes_the_same_bytes_with_and_without_the_replay_loop() {
    let alone = |dir: &Path| {
        let base = RecordOptions {
            counter_interval: 3,
            ..RecordOptions::default()
        };
        [
            RecordOptions {
                trace_dir: Some(dir.join("text")),
                ..base.clone()
            },
            RecordOptions {
                perfetto: Some(dir.join("trace.pftrace")),
                ..base.clone()
            },
            RecordOptions {
                vcd: Some(dir.join("wave.vcd")),
                ..base.clone()
            },
            RecordOptions {
                counters: Some(dir.join("counters.csv")),
                ..base.clone()
            },
        ]
    };
    for design in [
        "examples/cdc_pair.chr",
        "examples/three_clocks.chr",
        "benches/record_e2e.chr",
    ] {
        for which in 0..4 {
            let mut outputs = Vec::new();
            for replay in [true, false] {
                let dir = scratch(&format!("alone-{which}-{replay}-{}", design.len()));
                let mut exec = chronon_compiler::config::ExecConfig::default();
                exec.set("replay-loop", replay).expect("a switch");
                let rec = alone(&dir)[which].clone();
                let report = run_design_with(design, EngineKind::Jit, &rec, exec);
                assert_eq!(report.recording.and_then(|r| r.error), None, "{design}");
                outputs.push(files(&dir));
            }
            assert!(!outputs[0].is_empty(), "{design}: output {which}");
            assert_eq!(outputs[0], outputs[1], "{design}: output {which}");
        }
    }
}

/// Which recorders keep the replay loop (its observed form): those that
/// take no FIFO event (VCD, counters); the text log and Perfetto take FIFO
/// events, which the checked step derives. Without this the test above
/// would pass with both runs in checked steps.
#[test]
fn recorders_without_fifo_events_keep_the_replay_loop() {
    let text = std::fs::read_to_string("examples/cdc_pair.chr").expect("example");
    let program = std::sync::Arc::new(chronon_suite::designs::lower_text("cdc_pair", &text));
    let dir = scratch("which-loop");
    let cases = [
        (
            RecordOptions {
                vcd: Some(dir.join("w.vcd")),
                ..RecordOptions::default()
            },
            true,
        ),
        (
            RecordOptions {
                counters: Some(dir.join("c.csv")),
                ..RecordOptions::default()
            },
            true,
        ),
        (
            RecordOptions {
                trace_dir: Some(dir.join("text")),
                ..RecordOptions::default()
            },
            false,
        ),
    ];
    for (rec, replays) in cases {
        let mut sim = chronon_compiler::simulate::Simulator::new(program.clone(), EngineKind::Jit)
            .expect("builds");
        let recording =
            chronon_compiler::record::Recording::attach(&mut sim, "T", &rec).expect("attaches");
        // A few instants: pattern mode starts after the calendar's lead-in.
        sim.sim.run(chronon_runtime::RunLimit::Time(
            chronon_runtime::Picos::from_integer(20_000),
        ));
        assert_eq!(sim.sim.runs_replay(), replays, "{rec:?}");
        recording.finish(&mut sim);
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
    let options = RunOptions::new(EngineKind::Interp, StopAt::Finish);
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
    if !tools::python_has("pywellen, vcd") {
        tools::missing("python3 with pywellen and pyvcd", "the VCD check");
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
    let changes: Vec<_> = take_changes(&log)
        .into_iter()
        .map(|(fs, k)| serde_json::json!([fs as u64, k]))
        .collect();
    let expect = serde_json::json!({"signals": {"top.r.expected": changes}});
    check_vcd(&dir, &expect.to_string());
}

/// A register wider than 64 bits is one VCD variable of its full width,
/// its limbs' changes of an instant one change, against a bignum model of
/// the design read by both Python readers.
#[test]
fn vcd_shows_wide_registers_whole() {
    if !tools::python_has("pywellen, vcd") {
        tools::missing("python3 with pywellen and pyvcd", "the VCD check");
    }
    use num_bigint::{BigInt, BigUint};
    let dir = scratch("vcd-wide");
    let design = dir.join("wide.chr");
    std::fs::write(
        &design,
        "clock c = 1 GHz;\nunit W {\n    reg a: u130;\n    reg s: i200;\n    tick {\n        \
         a <= a * 3 + 0x2_0000_0000_0000_0000_0000_0000_0000_0001;\n        \
         s <= s - 12345678901234567890123;\n    }\n}\nsystem Top { inst w: W on c; }\n",
    )
    .expect("write the design");
    let rec = RecordOptions {
        vcd: Some(dir.join("wave.vcd")),
        ..RecordOptions::default()
    };
    run_design(&design.to_string_lossy(), EngineKind::Jit, &rec);
    // Edge k (at k ns) commits the k+1-th value; every edge changes both.
    let (mut a, mut s) = (BigUint::default(), BigInt::default());
    let (ma, ms) = (BigUint::from(1u8) << 130u32, BigInt::from(1) << 200u32);
    let (mut rows_a, mut rows_s) = (Vec::new(), Vec::new());
    for k in 0..2_000u64 {
        a = (&a * 3u8 + (BigUint::from(1u8) << 129u32) + 1u8) % &ma;
        s -= BigInt::parse_bytes(b"12345678901234567890123", 10).expect("digits");
        let bits = ((&s % &ms) + &ms) % &ms;
        rows_a.push(format!("[{}, {a}]", k * 1_000_000));
        rows_s.push(format!("[{}, {bits}]", k * 1_000_000));
    }
    // Written by hand: the values are past what JSON numbers in serde hold.
    let expect = format!(
        "{{\"signals\": {{\"top.w.a\": [{}], \"top.w.s\": [{}]}}}}",
        rows_a.join(", "),
        rows_s.join(", ")
    );
    let wave = std::fs::read_to_string(dir.join("wave.vcd")).expect("the waveform");
    assert!(
        wave.contains("$var wire 130 ") && wave.contains("$var wire 200 "),
        "{wave:.600}"
    );
    check_vcd(&dir, &expect);
}

/// Runs `tests/py/check_vcd.py` on `dir/wave.vcd` against `expect` (its
/// JSON expectation); fails the test with the checker's output.
fn check_vcd(dir: &Path, expect: &str) {
    std::fs::write(dir.join("expect.json"), expect).expect("write expectation");
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

/// `(fs, k)` per `take` trace of cdc_pair's reader log: the time of its
/// k-th take (from 1), when its `expected` register becomes k.
fn take_changes(log: &str) -> Vec<(u128, u64)> {
    log.lines()
        .filter(|l| l.contains(" T top.r take "))
        .zip(1..)
        .map(|(line, k)| {
            let time = line
                .split(' ')
                .nth(1)
                .and_then(|t| t.strip_suffix("ps"))
                .and_then(Time::parse)
                .expect("time");
            (time.floor_fs().expect("fs"), k)
        })
        .collect()
}

/// The example of the VCD occupancy definition: a writer at 200 MHz and a
/// reader at 100 MHz around a depth-4 CDC FIFO, so every reader edge is a
/// writer edge too; `writer_first` declares the writer's clock first.
fn shared_instants_design(writer_first: bool) -> String {
    let (first, second) = ("clock wclk = 200 MHz;\n", "clock rclk = 100 MHz;\n");
    let clocks = if writer_first {
        format!("{first}{second}")
    } else {
        format!("{second}{first}")
    };
    clocks
        + "unit Writer {\n    out tx: u32;\n    reg next: u32 = 0;\n    tick {\n        \
           if tx.try_send(next) {\n            next <= next + 1;\n        }\n    }\n}\n\
           unit Reader {\n    in rx: u32 cdc;\n    reg got: u32 = 0;\n    tick {\n        \
           if let Some(_) = rx.take() {\n            got <= got + 1;\n        }\n        \
           rx.request();\n    }\n}\n\
           system Top {\n    inst w: Writer on wclk;\n    inst r: Reader on rclk;\n    \
           cdc w.tx -> r.rx depth 4 sync 2;\n}\n"
}

/// `(fs, value)` changes of the VCD variable named `name` after
/// `$dumpvars` (a minimal reader, independent of the writer).
fn vcd_changes(vcd: &str, name: &str) -> Vec<(u128, u64)> {
    let id = vcd
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first() == Some(&"$var") && f.get(4) == Some(&name)).then(|| f[3].to_string())
        })
        .next()
        .expect("variable declared");
    let body = vcd.split("$dumpvars").nth(1).expect("$dumpvars");
    let body = body.split_once("$end").expect("$dumpvars end").1;
    let mut now = 0;
    let mut out = Vec::new();
    for line in body.lines() {
        if let Some(t) = line.strip_prefix('#') {
            now = t.parse().expect("time");
        } else if let Some((value, var)) = line.strip_prefix('b').and_then(|l| l.split_once(' '))
            && var == id
        {
            out.push((now, u64::from_str_radix(value, 2).expect("binary value")));
        }
    }
    out
}

/// VCD's `<fifo>.occupancy` is the committed occupancy (items written
/// minus items read, both committed) at the end of each instant, one value
/// per instant: where the FIFO's two sides share instants it no longer
/// depends on the order the clocks are declared in (it used to dump 3
/// then 2 at 60 ns with the writer's clock first, 1, 2, 3 at 60 ns and 2 at
/// 65 ns with it second). Expected values come from the text log's writes
/// and reads, counted per instant.
#[test]
fn vcd_fifo_occupancy_is_the_committed_occupancy_per_instant() {
    let python = Command::new("python3")
        .args(["-c", "import pywellen, vcd"])
        .status()
        .is_ok_and(|s| s.success());
    let mut dumped = Vec::new();
    for writer_first in [true, false] {
        let dir = scratch(&format!("occupancy-{writer_first}"));
        let design = dir.join("shared.chr");
        std::fs::write(&design, shared_instants_design(writer_first)).expect("design");
        let rec = RecordOptions {
            trace_dir: Some(dir.join("text")),
            vcd: Some(dir.join("wave.vcd")),
            vcd_signals: vec!["*.occupancy".into()],
            ..RecordOptions::default()
        };
        run_design(design.to_str().expect("utf-8 path"), EngineKind::Jit, &rec);
        // The model: per instant, committed writes minus reads.
        let mut model: Vec<(u128, u64)> = Vec::new();
        let (mut count, mut last, mut now) = (0i64, 0i64, None);
        let mut close = |now: Option<Time>, count: i64, model: &mut Vec<(u128, u64)>| {
            if let Some(t) = now
                && count != last
            {
                last = count;
                model.push((t.floor_fs().expect("fs"), count as u64));
            }
        };
        for e in text_fifo_events(&dir.join("text")) {
            if now != Some(e.time) {
                close(now, count, &mut model);
                now = Some(e.time);
            }
            match e.kind.as_str() {
                "write" => count += 1,
                "read" => count -= 1,
                _ => {}
            }
        }
        close(now, count, &mut model);
        assert!(model.len() > 100, "{} changes", model.len());
        let vcd = std::fs::read_to_string(dir.join("wave.vcd")).expect("vcd");
        let changes = vcd_changes(&vcd, "occupancy");
        assert_eq!(changes, model, "writer first: {writer_first}");
        if python {
            let rows: Vec<_> = model
                .iter()
                .map(|&(t, v)| serde_json::json!([t, v]))
                .collect();
            let expect = serde_json::json!({"signals": {"top.r.rx.occupancy": rows}});
            check_vcd(&dir, &expect.to_string());
        }
        dumped.push(changes);
    }
    // 2,000 edges of the first clock: the run with the writer's clock
    // first is the shorter; it is a prefix of the other.
    let end = dumped[0].last().expect("changes").0;
    let longer: Vec<_> = dumped[1].iter().filter(|c| c.0 <= end).copied().collect();
    assert_eq!(dumped[0], longer, "the clocks' declaration order");
    // 60 and 65 ns: 2 in both orders, no change.
    let at = |fs: u128| dumped[0].iter().rev().find(|c| c.0 <= fs).map(|c| c.1);
    assert_eq!((at(60_000_000), at(65_000_000)), (Some(2), Some(2)));
}

/// A FIFO event of the text logs: exact time, FIFO path, kind, item.
#[derive(Debug, Clone, PartialEq)]
struct TextFifoEvent {
    time: Time,
    fifo: String,
    kind: String,
    txn: u64,
}

/// The FIFO events of a text trace, in the merged (global) order.
fn text_fifo_events(text_dir: &Path) -> Vec<TextFifoEvent> {
    let mut merged = Vec::new();
    chronon_record::merge::merge(text_dir, &mut merged).expect("merge");
    let merged = String::from_utf8(merged).expect("utf-8");
    merged
        .lines()
        .map(parse_line)
        .filter(|(_, _, rest)| rest.get(1).map(String::as_str) == Some("F"))
        .map(|(time, _, rest)| TextFifoEvent {
            time,
            fifo: rest[2].clone(),
            kind: rest[3].clone(),
            txn: rest[4]
                .strip_prefix("txn=")
                .and_then(|t| t.parse().ok())
                .expect("txn"),
        })
        .collect()
}

/// A decoded Perfetto track event (tests/py/dump_perfetto.py's row).
#[derive(Debug)]
struct PerfettoEvent {
    ts: u64,
    track: String,
    name: Option<String>,
    txn: Option<u64>,
    flows: Vec<u64>,
    terminating: Vec<u64>,
}

/// Decodes `trace` with the independent Python decoder (which also runs the
/// wire-format and content checks); the test fails without python3
/// and the `perfetto` package.
fn decode_perfetto(trace: &Path) -> Vec<PerfettoEvent> {
    if !tools::python_has(tools::PERFETTO_PROTOS) {
        tools::missing("python3 with the perfetto package", "the Perfetto check");
    }
    let out_path = trace.with_extension("dump.json");
    let out = Command::new("python3")
        .arg("tests/py/dump_perfetto.py")
        .arg(trace)
        .arg(&out_path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}: {}{}",
        trace.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let dump: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_path).expect("dump")).expect("dump JSON");
    let names = &dump["tracks"];
    let ids = |v: &serde_json::Value| -> Vec<u64> {
        v.as_array()
            .expect("ids")
            .iter()
            .map(|x| x.as_u64().expect("id"))
            .collect()
    };
    dump["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|row| PerfettoEvent {
            ts: row[0].as_u64().expect("ts"),
            track: names[row[1].as_str().expect("uuid")]
                .as_str()
                .expect("every track is described")
                .to_string(),
            name: row[3].as_str().map(str::to_string),
            txn: row[4]["txn"].as_u64(),
            flows: ids(&row[5]),
            terminating: ids(&row[6]),
        })
        .collect()
}

/// The kinds a FIFO item passes through, in causal order.
const ITEM_KINDS: [&str; 5] = ["write", "visible", "read", "output", "consume"];
const FIFO_KINDS: [&str; 9] = [
    "write",
    "visible",
    "read",
    "output",
    "consume",
    "full",
    "not_full",
    "empty",
    "not_empty",
];

/// Checks a Perfetto trace against the text logs of the same run: the same
/// FIFO events in the same order, on the writer's or reader's track, at the
/// exact time rounded down to ns, and a flow per item from its write to its
/// consume that starts once, crosses tracks and terminates.
fn check_perfetto_against_text(design: &str, events: &[PerfettoEvent], text: &[TextFifoEvent]) {
    let fifo_events: Vec<&PerfettoEvent> = events
        .iter()
        .filter(|e| e.name.as_deref().is_some_and(|n| FIFO_KINDS.contains(&n)) && e.txn.is_some())
        .collect();
    assert_eq!(fifo_events.len(), text.len(), "{design}: FIFO event count");
    for (p, t) in fifo_events.iter().zip(text) {
        assert_eq!(p.name.as_deref(), Some(t.kind.as_str()), "{design}: {t:?}");
        assert_eq!(p.txn, Some(t.txn), "{design}: {t:?}");
        assert_eq!(u128::from(p.ts), t.time.floor_ns(), "{design}: {t:?}");
        let side = if ["write", "full", "not_full"].contains(&t.kind.as_str()) {
            "write"
        } else {
            "read"
        };
        assert_eq!(p.track, format!("{} {side}", t.fifo), "{design}: {t:?}");
    }
    // Flows, from the Perfetto events alone.
    let mut flows = std::collections::BTreeMap::<u64, Vec<&PerfettoEvent>>::new();
    for e in events {
        for id in e.flows.iter().chain(&e.terminating) {
            flows.entry(*id).or_default().push(e);
        }
    }
    let items: std::collections::BTreeSet<(&str, u64)> = text
        .iter()
        .filter(|t| t.kind == "write")
        .map(|t| (t.fifo.as_str(), t.txn))
        .collect();
    assert!(!items.is_empty(), "{design}: no FIFO items");
    assert_eq!(flows.len(), items.len(), "{design}: one flow per item");
    for (id, chain) in &flows {
        let kinds: Vec<&str> = chain.iter().filter_map(|e| e.name.as_deref()).collect();
        let mut expected: Vec<&str> = ITEM_KINDS.to_vec();
        expected.retain(|k| kinds.contains(k));
        assert_eq!(kinds, expected, "{design}: flow {id} out of causal order");
        let (first, last) = (chain[0], chain[chain.len() - 1]);
        assert_eq!(first.name.as_deref(), Some("write"), "{design}: flow {id}");
        assert!(first.flows.contains(id), "{design}: flow {id} starts");
        assert!(first.track.ends_with(" write"), "{design}: flow {id}");
        assert_eq!(last.name.as_deref(), Some("consume"), "{design}: flow {id}");
        assert!(last.terminating.contains(id), "{design}: flow {id} ends");
        assert!(last.track.ends_with(" read"), "{design}: flow {id}");
        let ended = chain.iter().filter(|e| e.terminating.contains(id)).count();
        assert_eq!(ended, 1, "{design}: flow {id} terminates once");
        assert!(
            chain.windows(2).all(|w| w[0].ts <= w[1].ts),
            "{design}: flow {id} goes back in time"
        );
        let txn = first.txn.expect("txn");
        assert!(
            chain.iter().all(|e| e.txn == Some(txn)),
            "{design}: flow {id}"
        );
    }
}

#[test]
fn perfetto_flows_follow_every_item_across_tracks() {
    for design in ["examples/cdc_pair.chr", "examples/three_clocks.chr"] {
        for compress in [false, true] {
            let dir = scratch(&format!("perfetto-{compress}-{}", design.len()));
            let rec = RecordOptions {
                trace_dir: Some(dir.join("text")),
                perfetto: Some(dir.join("trace.pftrace")),
                perfetto_compress: compress,
                ticks: compress,
                ..RecordOptions::default()
            };
            let report = run_design(design, EngineKind::Jit, &rec);
            assert_eq!(report.recording.and_then(|r| r.error), None, "{design}");
            let text = text_fifo_events(&dir.join("text"));
            let events = decode_perfetto(&dir.join("trace.pftrace"));
            check_perfetto_against_text(design, &events, &text);
        }
    }
}

#[test]
fn the_contracts_4ghz_example_keeps_its_order_after_rounding() {
    let design = "tests/designs/cdc_4ghz.chr";
    let dir = scratch("4ghz");
    let rec = RecordOptions {
        trace_dir: Some(dir.join("text")),
        perfetto: Some(dir.join("trace.pftrace")),
        ..RecordOptions::default()
    };
    run_design(design, EngineKind::Interp, &rec);
    let text = text_fifo_events(&dir.join("text"));
    // Contract §5: written at 0 ns, visible at 0.75 ns (k = 250 ps, k + S
    // edges later), read accepted at 1 ns, taken at 1.25 ns.
    let at = |kind: &str| {
        text.iter()
            .find(|t| t.kind == kind && t.txn == 0)
            .unwrap_or_else(|| panic!("{kind} of the item"))
            .time
    };
    assert_eq!(at("write"), Time::from_ps(0));
    assert_eq!(at("visible"), Time::from_ps(750));
    assert_eq!(at("read"), Time::from_ps(1000));
    assert_eq!(at("consume"), Time::from_ps(1250));
    let events = decode_perfetto(&dir.join("trace.pftrace"));
    check_perfetto_against_text(design, &events, &text);
    let position = |kind: &str| {
        events
            .iter()
            .position(|e| e.name.as_deref() == Some(kind))
            .unwrap_or_else(|| panic!("a {kind} event"))
    };
    let (write, visible) = (&events[position("write")], &events[position("visible")]);
    assert_eq!((write.ts, visible.ts), (0, 0), "both round down to 0 ns");
    assert!(
        position("write") < position("visible"),
        "write before visible"
    );
    assert_eq!(write.flows, visible.flows, "one flow");
}

/// A writer that fails with its own I/O error at its `fail_at`-th record.
struct FailingWriter {
    seen: u64,
    fail_at: u64,
}

impl FailingWriter {
    fn next(&mut self) -> Result<(), chronon_record::RecordError> {
        self.seen += 1;
        if self.seen < self.fail_at {
            return Ok(());
        }
        Err(chronon_record::RecordError::Io {
            path: PathBuf::from("injected.out"),
            source: std::io::Error::other("injected failure"),
        })
    }
}

impl chronon_record::Recorder for FailingWriter {
    fn trace(
        &mut self,
        _: &chronon_record::TraceRecord<'_>,
    ) -> Result<(), chronon_record::RecordError> {
        self.next()
    }
    fn fifo(&mut self, _: &chronon_record::FifoRecord) -> Result<(), chronon_record::RecordError> {
        self.next()
    }
    fn finish(
        &mut self,
        _: &chronon_record::DropCounts,
    ) -> Result<(), chronon_record::RecordError> {
        Ok(())
    }
}

/// Writes and reads a FIFO item at every edge, for ever.
const ENDLESS: &str = "
clock w = 1 GHz;
clock r = 1 GHz phase 300 ps;
unit Writer {
    out tx: u32;
    reg n: u32 = 0;
    tick { if tx.try_send(n) { n <= n + 1; } }
}
unit Reader {
    in rx: u32 cdc fwft;
    tick { if let Some(v) = rx.recv() { trace(\"got\", value = v); } }
}
system Top {
    inst w: Writer on w;
    inst r: Reader on r;
    cdc w.tx -> r.rx depth 16 sync 2;
}
";

#[test]
fn a_failing_writer_stops_the_run_with_its_own_error_and_leaves_valid_prefixes() {
    use chronon_compiler::record::{Recording, Writers};
    use chronon_record::perfetto::{PerfettoConfig, PerfettoWriter};
    use chronon_record::text::TextWriter;
    use chronon_runtime::{RunLimit, Stop};

    let dir = scratch("failing-writer");
    let mut sources = SourceMap::new();
    sources.add("endless.chr".to_string(), ENDLESS.to_string());
    let compiled = chronon_lang::compile(
        &mut sources,
        &chronon_lang::CompileOptions {
            top: None,
            params: Vec::new(),
            require_top: true,
        },
    );
    let design = compiled.design.expect("the endless design compiles");
    let program = chronon_compiler::lower::lower(&design, &sources).expect("lowers");
    let mut sim = chronon_compiler::simulate::Simulator::new(
        std::sync::Arc::new(program),
        EngineKind::Interp,
    )
    .expect("simulator");
    let (text_dir, trace) = (dir.join("text"), dir.join("trace.pftrace"));
    let options = RecordOptions {
        trace_dir: Some(text_dir.clone()),
        perfetto: Some(trace.clone()),
        ..RecordOptions::default()
    };
    let recording = Recording::attach_with(&mut sim, &design.top, &options, |schema| {
        let writers: Writers = vec![
            (
                "text".into(),
                Box::new(TextWriter::create(&text_dir, schema)?),
            ),
            (
                "perfetto".into(),
                Box::new(PerfettoWriter::create(
                    &trace,
                    schema,
                    PerfettoConfig::default(),
                )?),
            ),
            (
                "injected".into(),
                Box::new(FailingWriter {
                    seen: 0,
                    fail_at: 100,
                }),
            ),
        ];
        Ok(writers)
    })
    .expect("attach");
    let limit = 1_000_000;
    let stop = sim.sim.run(RunLimit::Edges {
        domain: chronon_runtime::DomainId(0),
        count: limit,
    });
    assert!(matches!(stop, Stop::SinkStopped), "{stop:?}");
    let summary = recording.finish(&mut sim);
    let error = summary.error.expect("the writer's error is reported");
    assert!(
        error.contains("injected.out") && error.contains("injected failure"),
        "{error}"
    );
    // The other outputs stay valid and hold what was recorded up to the stop.
    let records: usize = std::fs::read_dir(&text_dir)
        .expect("text dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| {
            let log = std::fs::read_to_string(&p).expect("log");
            assert!(log.is_empty() || log.ends_with('\n'), "whole lines");
            log.lines().filter(|l| !l.starts_with('#')).count()
        })
        .sum();
    // The failure is noticed at the first instant after the writer thread
    // sees it, and the thread sees it once the first batch is sent, so the
    // run ends far sooner than its limit.
    println!("records written before the stop: {records}");
    assert!(records >= 100, "{records}");
    assert!((records as u64) < limit, "{records}");
    let events = decode_perfetto(&trace);
    assert!(!events.is_empty());
}

/// A `--trace-filter` time window applies to dumped registers: after
/// `$dumpvars`, every change lies in the window, carries the register's
/// value at that time in an unwindowed run (whose `expected` changes are
/// the trace log's takes), and every change of that run
/// within the window is there (the first edge in the window may add the
/// value reached outside it). Both engines; VCD only, so the registers
/// take the sink's registers-only path (dropping its window test fails
/// this).
#[test]
fn vcd_time_window_keeps_register_changes_inside_it() {
    use chronon_compiler::record::TraceFilter;
    let (from, to) = (50_000_000u128, 120_000_000u128);
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        let dir = scratch(&format!("vcd-window-{engine:?}"));
        let run = |name: &str, filter: TraceFilter| {
            let rec = RecordOptions {
                vcd: Some(dir.join(name)),
                vcd_signals: vec!["top.r.expected".into(), "top.w.next".into()],
                filter,
                ..RecordOptions::default()
            };
            run_design("examples/cdc_pair.chr", engine, &rec);
            std::fs::read_to_string(dir.join(name)).expect("the VCD")
        };
        let mut window = TraceFilter::default();
        window.add("from=50ns,to=120ns").expect("filter");
        let (all, windowed) = (
            run("all.vcd", TraceFilter::default()),
            run("win.vcd", window),
        );
        assert!(all.contains("1 fs") || all.contains("1fs"), "timescale");
        // Independently of the sink: `expected` becomes k at the k-th take,
        // at the take's time (a register sampled at another domain's edge
        // would change late).
        // (The log from a run of its own: a text writer also takes
        // register changes, which takes the registers off the VCD-only
        // path.)
        let text = RecordOptions {
            trace_dir: Some(dir.join("text")),
            ..RecordOptions::default()
        };
        run_design("examples/cdc_pair.chr", engine, &text);
        let log = std::fs::read_to_string(dir.join("text/01-rclk.log")).expect("log");
        assert_eq!(
            vcd_changes(&all, "expected"),
            take_changes(&log),
            "{engine:?}"
        );
        for name in ["expected", "next"] {
            let (all, windowed) = (vcd_changes(&all, name), vcd_changes(&windowed, name));
            let value_at = |t: u128| all.iter().rev().find(|c| c.0 <= t).map(|c| c.1);
            let inside: Vec<_> = all.iter().filter(|c| (from..=to).contains(&c.0)).collect();
            assert!(inside.len() > 10, "{name}: {} changes inside", inside.len());
            for &(t, v) in &windowed {
                assert!(
                    (from..=to).contains(&t),
                    "{name} {engine:?}: change at {t} fs"
                );
                assert_eq!(value_at(t), Some(v), "{name} {engine:?}: value at {t} fs");
            }
            for c in inside {
                assert!(windowed.contains(c), "{name} {engine:?}: {c:?} missing");
            }
        }
    }
}
