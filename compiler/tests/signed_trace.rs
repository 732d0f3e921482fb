//! Signed trace values end to end through the `chronc` binary: a design
//! tracing i8, i16, i32, i64 and a struct's i16 field, negative and
//! positive, beside unsigned ones (u8, bool, a struct's u16 field). The text
//! log (and `chronc trace merge` of it) prints signed values sign-extended
//! with a `-`; the Perfetto trace, decoded independently by Python protobuf
//! (tests/py/dump_perfetto.py), has them as `int_value`. Expectations come
//! from Rust's own `as` casts, not from the writers.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo_root;

const DESIGN: &str = "compiler/tests/signed_trace/signed_trace.chr";

/// The design traces `k = cycle - 2` for cycles 0 to 4.
const CYCLES: i64 = 5;

/// `chronc args...` (see `common::chronc`), which must succeed.
fn chronc(args: &[&str]) -> Output {
    let out = common::chronc(args);
    assert!(
        out.status.success(),
        "chronc {args:?}: {}",
        common::all_output(&out)
    );
    out
}

/// The values of cycle `cycle`'s `v` event, named as the log names them,
/// computed as the design computes them (wrapping, then truncating `as`).
fn expected(cycle: i64) -> Vec<(&'static str, i128)> {
    let k = cycle - 2;
    vec![
        ("b", i128::from(k.wrapping_mul(50) as i8)),
        ("w", i128::from(k.wrapping_mul(20_000) as i16)),
        ("d", i128::from(k.wrapping_mul(1_500_000_000) as i32)),
        ("q", i128::from(k.wrapping_mul(1 << 62))),
        ("u", i128::from(k as u8)),
        ("e", i128::from(k < 0)),
        ("p.0", i128::from((k as i16).wrapping_mul(-7))),
        ("p.1", i128::from(k as u16)),
    ]
}

fn expected_args_text(cycle: i64) -> String {
    expected(cycle)
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fresh directory, removed when the test passes.
struct Scratch(PathBuf);

/// A fresh scratch directory named for `test`.
fn scratch(test: &str) -> Scratch {
    let dir = Scratch(std::env::temp_dir().join(format!(
        "chronon-signed-trace-{test}-{}",
        std::process::id()
    )));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).expect("a scratch directory");
    dir
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The manifest of the text logs in `text`.
fn manifest(text: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(text.join("manifest.json")).expect("manifest"))
        .expect("manifest JSON")
}

/// Runs `design` on `engine` with a text trace and a Perfetto trace in
/// `dir`; their paths.
fn record(design: &str, engine: &str, dir: &Scratch) -> (PathBuf, PathBuf) {
    let text = dir.0.join(format!("{engine}-text"));
    let trace = dir.0.join(format!("{engine}.pftrace"));
    chronc(&[
        "run",
        design,
        "-q",
        "--engine",
        engine,
        "--trace",
        text.to_str().expect("utf-8 path"),
        "--perfetto",
        trace.to_str().expect("utf-8 path"),
    ]);
    (text, trace)
}

#[test]
fn signed_values_print_signed_in_text_and_perfetto() {
    // The expectations cover both signs and the extremes of i64.
    let all: Vec<i128> = (0..CYCLES).flat_map(expected).map(|(_, v)| v).collect();
    assert!(all.contains(&i128::from(i64::MIN)) && all.iter().any(|&v| v > 0));
    let dir = scratch("signed");
    let mut logs = Vec::new();
    for engine in ["interp", "jit"] {
        let (text, trace) = record(DESIGN, engine, &dir);

        // The manifest declares the signed widths per scalar value.
        let manifest = manifest(&text);
        assert_eq!(
            manifest["schema"]["events"][0]["signed_widths"],
            serde_json::json!([8, 16, 32, 64, 0, 0, 16, 0]),
            "{engine}"
        );

        // The text log, line by line.
        let log = std::fs::read_to_string(text.join("00-core.log")).expect("log");
        let lines: Vec<&str> = log.lines().skip(1).collect();
        let want: Vec<String> = (0..CYCLES)
            .map(|c| format!("{c} {}ps T top.x v {}", c * 1000, expected_args_text(c)))
            .collect();
        assert_eq!(lines, want, "{engine}: text log");

        // `chronc trace merge` still reads the logs and keeps the values.
        let merged = chronc(&["trace", "merge", text.to_str().expect("utf-8 path")]);
        let merged = String::from_utf8_lossy(&merged.stdout).into_owned();
        let want: Vec<String> = (0..CYCLES)
            .map(|c| {
                format!(
                    "{}ps core {c} T top.x v {}",
                    c * 1000,
                    expected_args_text(c)
                )
            })
            .collect();
        assert_eq!(merged.lines().collect::<Vec<_>>(), want, "{engine}: merged");
        logs.push(log);

        check_perfetto(&trace, engine);
    }
    assert_eq!(logs[0], logs[1], "both engines write the same log");
}

/// Decodes `trace` with Python protobuf (the test fails without python3
/// and the `perfetto` package) and compares each `v` event's
/// arguments with [`expected`]: negative values can only come out of an
/// `int_value`, so raw bits in a `uint_value` would fail.
fn check_perfetto(trace: &Path, engine: &str) {
    let dump = dump_perfetto(trace);
    check_dump(&dump, engine);
}

/// `trace` decoded by tests/py/dump_perfetto.py (the test fails without
/// python3 and the `perfetto` package).
fn dump_perfetto(trace: &Path) -> serde_json::Value {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .status();
    if !probe.map(|s| s.success()).unwrap_or(false) {
        common::missing_tool("python3 with the perfetto package", "the Perfetto check");
    }
    let dump = trace.with_extension("dump.json");
    let out = Command::new("python3")
        .arg("tests/py/dump_perfetto.py")
        .arg(trace)
        .arg(&dump)
        .current_dir(repo_root())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}: {}{}",
        trace.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&dump).expect("dump")).expect("dump JSON")
}

/// The arguments of each event named `name` in `dump`, in file order.
fn event_args<'a>(dump: &'a serde_json::Value, name: &str) -> Vec<&'a serde_json::Value> {
    dump["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|row| row[3] == name)
        .map(|row| &row[4])
        .collect()
}

/// Each `v` event's arguments in `dump` against [`expected`].
fn check_dump(dump: &serde_json::Value, engine: &str) {
    let got = event_args(dump, "v");
    let want: Vec<serde_json::Value> = (0..CYCLES)
        .map(|c| {
            let map = expected(c)
                .into_iter()
                .map(|(n, v)| {
                    let number = match i64::try_from(v) {
                        Ok(v) => serde_json::Value::from(v),
                        Err(_) => serde_json::Value::from(v as u64),
                    };
                    (n.to_string(), number)
                })
                .collect();
            serde_json::Value::Object(map)
        })
        .collect();
    assert_eq!(got.len(), want.len(), "{engine}: v events");
    for (c, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(*g, w, "{engine}: cycle {c}");
    }
}

/// A counter past `int64` reaches Perfetto as `double_counter_value` (the
/// nearest double; Python protobuf decodes it independently), where it
/// used to saturate at `i64::MAX`; below 2^63 it stays an exact
/// `counter_value`.
#[test]
fn counters_past_int64_are_double_counter_values_in_perfetto() {
    let dir = scratch("wide_counter");
    let trace = dir.0.join("t.pftrace");
    chronc(&[
        "run",
        "compiler/tests/signed_trace/wide_counter.chr",
        "--cycles",
        "3",
        "-q",
        "--threads",
        "1",
        "--perfetto",
        trace.to_str().expect("utf-8 path"),
    ]);
    let dump = dump_perfetto(&trace);
    let samples: Vec<&serde_json::Value> = dump["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|row| &row[7])
        .filter(|c| !c.is_null())
        .collect();
    let step = 0x5000_0000_0000_0000u64;
    assert_eq!(samples.len(), 3, "{dump}");
    assert_eq!(samples[0].as_i64(), Some(step as i64), "{dump}");
    for (k, sample) in samples.iter().enumerate().skip(1) {
        let want = step.wrapping_mul(k as u64 + 1) as f64;
        assert_eq!(sample.as_f64(), Some(want), "sample {k}: {dump}");
        assert!(sample.is_f64(), "sample {k} is a double: {dump}");
    }
}

/// A trace of 64 values, the limit (once 8): the text log and the Perfetto
/// trace (decoded by Python protobuf) carry every one, signed where typed
/// so, on both engines. At cycle `c`: `s = c - 1`, `a.i = c * (i + 1)`,
/// `t = (c - 1) * -1000`.
#[test]
fn a_trace_of_64_values_is_recorded_whole() {
    let expected = |c: i64| -> Vec<(String, i64)> {
        let mut v = vec![("s".to_string(), c - 1)];
        v.extend((0..62).map(|i| (format!("a.{i}"), c * (i + 1))));
        v.push(("t".to_string(), (c - 1) * -1000));
        v
    };
    assert_eq!(expected(0).len(), 64);
    let dir = scratch("wide");
    for engine in ["interp", "jit"] {
        let (text, trace) = record("compiler/tests/signed_trace/wide_trace.chr", engine, &dir);
        let log = std::fs::read_to_string(text.join("00-core.log")).expect("log");
        let lines: Vec<&str> = log.lines().skip(1).collect();
        let want: Vec<String> = (0..4)
            .map(|c| {
                let args: Vec<String> = expected(c)
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                format!("{c} {}ps T top.x w {}", c * 1000, args.join(" "))
            })
            .collect();
        assert_eq!(lines, want, "{engine}: text log");
        let dump = dump_perfetto(&trace);
        let got = event_args(&dump, "w");
        let want: Vec<serde_json::Value> = (0..4)
            .map(|c| {
                serde_json::Value::Object(
                    expected(c)
                        .into_iter()
                        .map(|(n, v)| (n, serde_json::Value::from(v)))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(got.len(), 4, "{engine}: {dump}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(*g, w, "{engine}: Perfetto annotations");
        }
    }
}

/// Trace values wider than 64 bits are one value each, in every writer,
/// on both engines: the text log (and `chronc trace merge`) prints each as
/// one decimal, sign-extended when signed; the manifest lists them in
/// `wide_widths`; Perfetto (decoded by Python protobuf) has a
/// `string_value` of the same decimal. The expectations are worked out
/// with num-bigint from the design's recurrences, not from the writers.
#[test]
fn wide_values_are_whole_in_text_and_perfetto() {
    use num_bigint::{BigInt, BigUint};
    let design = "compiler/tests/signed_trace/wide_values.chr";
    let bits = |n: u32| BigUint::from(1u8) << n;
    let signed = |v: &BigUint, n: u32| {
        let v = BigInt::from(v % bits(n));
        if v >= BigInt::from(bits(n - 1)) {
            v - BigInt::from(bits(n))
        } else {
            v
        }
    };
    // (name, decimal, whether Perfetto has it as a string) per value.
    let mut want: Vec<Vec<(&str, String, bool)>> = Vec::new();
    let (mut a, mut s) = (BigUint::from(1u8), BigUint::default());
    let step = BigUint::parse_bytes(b"12345678901234567890123456789", 10).expect("digits");
    for n in 0..5u32 {
        let big = (&a % bits(65)) * 3u8 % bits(65);
        want.push(vec![
            ("a", a.to_string(), true),
            ("s", signed(&s, 200).to_string(), true),
            ("p.0", n.to_string(), false),
            ("p.1", big.to_string(), true),
            ("p.2", (n as i64 - 2).to_string(), false),
            ("k", n.to_string(), false),
        ]);
        a = (&a * (bits(64) + 1u8) + 7u8) % bits(130);
        s = (&s + bits(200) - &step) % bits(200);
    }
    // The cycles reach both signs and values past 128 bits.
    assert!(want.iter().any(|v| v[1].1.starts_with('-')));
    assert!(
        want.iter()
            .any(|v| BigUint::parse_bytes(v[0].1.as_bytes(), 10) > Some(bits(128)))
    );
    let line_args = |c: usize| {
        want[c]
            .iter()
            .map(|(n, v, _)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let dir = scratch("wide_values");
    let mut logs = Vec::new();
    for engine in ["interp", "jit"] {
        let (text, trace) = record(design, engine, &dir);
        let manifest = manifest(&text);
        let event = &manifest["schema"]["events"][0];
        assert_eq!(
            event["args"],
            serde_json::json!(["a", "s", "p.0", "p.1", "p.2", "k"])
        );
        assert_eq!(
            event["wide_widths"],
            serde_json::json!([130, 200, 0, 65, 0, 0])
        );
        assert_eq!(
            event["signed_widths"],
            serde_json::json!([0, 200, 0, 0, 8, 0])
        );

        let log = std::fs::read_to_string(text.join("00-core.log")).expect("log");
        let lines: Vec<&str> = log.lines().skip(1).collect();
        let expect: Vec<String> = (0..5)
            .map(|c| format!("{c} {}ps T top.x v {}", c * 1000, line_args(c)))
            .collect();
        assert_eq!(lines, expect, "{engine}: text log");
        let merged = chronc(&["trace", "merge", text.to_str().expect("utf-8 path")]);
        let expect: Vec<String> = (0..5)
            .map(|c| format!("{}ps core {c} T top.x v {}", c * 1000, line_args(c)))
            .collect();
        assert_eq!(
            String::from_utf8_lossy(&merged.stdout)
                .lines()
                .collect::<Vec<_>>(),
            expect,
            "{engine}: merged"
        );
        logs.push(log);

        let dump = dump_perfetto(&trace);
        let got = event_args(&dump, "v");
        assert_eq!(got.len(), 5, "{engine}: {dump}");
        for (c, g) in got.iter().enumerate() {
            let expect: serde_json::Map<String, serde_json::Value> = want[c]
                .iter()
                .map(|(n, v, string)| {
                    let value = if *string {
                        serde_json::Value::from(v.as_str())
                    } else {
                        serde_json::Value::from(v.parse::<i64>().expect("narrow"))
                    };
                    (n.to_string(), value)
                })
                .collect();
            assert_eq!(
                **g,
                serde_json::Value::Object(expect),
                "{engine}: cycle {c}"
            );
        }
    }
    assert_eq!(logs[0], logs[1], "both engines write the same log");
}
