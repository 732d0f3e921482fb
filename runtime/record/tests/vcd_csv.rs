//! VCD checked by pyvcd and pywellen (tests/py/check_vcd.py) and, when it is
//! installed, GTKWave's vcd2fst; counter CSV parsed here.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use chronon_record::csv::{CsvWriter, HEADER};
use chronon_record::vcd::{VcdConfig, VcdWriter};
use chronon_record::*;
use common::*;
use serde_json::{Value, json};

fn fs_floor(t: Time) -> u128 {
    t.num() * 1000 / u128::from(t.den())
}

/// Changes each selected variable must show, computed from the records.
fn expected(w: &Workload, selected: impl Fn(&str) -> bool) -> Value {
    let s = &w.schema;
    let mut signals: BTreeMap<String, (u64, Vec<Value>)> = BTreeMap::new();
    for sig in &s.signals {
        let name = format!("{}.{}", s.units[sig.unit as usize].path, sig.name);
        if selected(&name) {
            signals.insert(name, (0, vec![]));
        }
    }
    for f in &s.fifos {
        let name = format!("{}.occupancy", f.path);
        if selected(&name) {
            signals.insert(name, (0, vec![]));
        }
    }
    for r in &w.records {
        let (name, t, value) = match r {
            Rec::Signal(c) => {
                let sig = &s.signals[c.signal as usize];
                let mask = if sig.width == 64 {
                    u64::MAX
                } else {
                    (1 << sig.width) - 1
                };
                (
                    format!("{}.{}", s.units[sig.unit as usize].path, sig.name),
                    c.time,
                    c.value & mask,
                )
            }
            Rec::Fifo(f) => (
                format!("{}.occupancy", s.fifos[f.fifo as usize].path),
                f.time,
                u64::from(f.occupancy),
            ),
            _ => continue,
        };
        if let Some((last, rows)) = signals.get_mut(&name)
            && *last != value
        {
            *last = value;
            rows.push(json!([fs_floor(t) as u64, value]));
        }
    }
    let signals: serde_json::Map<String, Value> = signals
        .into_iter()
        .map(|(k, (_, v))| (k, Value::Array(v)))
        .collect();
    json!({ "signals": signals })
}

fn check_vcd(path: &Path, expect: &Value) {
    let expect_path = path.with_extension("expect.json");
    fs::write(&expect_path, serde_json::to_vec(expect).expect("json")).expect("write");
    let (ok, out) = python("check_vcd.py", &[path, &expect_path], "vcd, pywellen");
    assert!(ok, "{}: {out}", path.display());
    println!("{out}");
    match Command::new("vcd2fst")
        .arg(path)
        .arg(path.with_extension("fst"))
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "vcd2fst: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => common::missing_tool("vcd2fst (GTKWave)", "the FST conversion check"),
    }
}

#[test]
fn vcd_dumps_every_selected_change() {
    let w = workload(2_000, 17);
    let dir = scratch("vcd");
    let cases: [(&str, Vec<String>); 3] = [
        ("all", vec![]),
        ("some", vec!["top.a.*".to_owned(), "*.occupancy".to_owned()]),
        ("wide", vec!["top.?.wide".to_owned()]),
    ];
    for (name, patterns) in cases {
        let path = dir.join(format!("{name}.vcd"));
        let config = VcdConfig {
            patterns: patterns.clone(),
        };
        let mut writer = VcdWriter::create(&path, &w.schema, &config).expect("create");
        feed(&mut writer, &w.records).expect("record");
        writer.finish(&DropCounts::default()).expect("finish");
        let selected =
            |n: &str| patterns.is_empty() || patterns.iter().any(|p| vcd::glob_match(p, n));
        let expect = expected(&w, selected);
        assert!(!expect["signals"].as_object().expect("map").is_empty());
        check_vcd(&path, &expect);
    }
}

#[test]
fn vcd_header_states_the_timescale_and_rounding() {
    let w = workload(5, 1);
    let path = scratch("vcd-head").join("h.vcd");
    let mut writer = VcdWriter::create(&path, &w.schema, &VcdConfig::default()).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer
        .finish(&DropCounts {
            signal: 3,
            ..DropCounts::default()
        })
        .expect("finish");
    let text = fs::read_to_string(&path).expect("vcd");
    assert!(text.contains("$timescale 1fs $end"));
    assert!(text.contains("rounded\n  down to a whole femtosecond"));
    assert!(text.contains("#0\n$dumpvars\n"));
    assert!(text.ends_with("$comment dropped records: signal 3 fifo 0 $end\n"));
}

#[test]
fn csv_rows_are_the_counter_samples() {
    let w = workload(500, 4);
    let path = scratch("csv").join("counters.csv");
    let mut writer = CsvWriter::create(&path, &w.schema).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer
        .finish(&DropCounts {
            counter: 2,
            ..DropCounts::default()
        })
        .expect("finish");
    let text = fs::read_to_string(&path).expect("csv");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER));
    let samples: Vec<&CounterRecord> = w
        .records
        .iter()
        .filter_map(|r| {
            if let Rec::Counter(c) = r {
                Some(c)
            } else {
                None
            }
        })
        .collect();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), samples.len() + 1);
    assert_eq!(rows.last(), Some(&"# dropped counter samples: 2"));
    for (row, c) in rows.iter().zip(&samples) {
        let f: Vec<&str> = row.split(',').collect();
        let info = &w.schema.counters[c.counter as usize];
        assert_eq!(Time::parse(f[0]), Some(c.time), "{row}");
        // The decimal form: within a millionth of a ps below the exact time.
        let exact = c.time.num() as f64 / c.time.den() as f64;
        let decimal: f64 = f[1].parse().expect("decimal ps");
        assert!(
            decimal <= exact + 1e-9 && exact - decimal < 1.001e-6,
            "{row}"
        );
        assert_eq!(f[1].contains('.'), c.time.rem() != 0, "{row}");
        assert_eq!(
            f[2].parse::<u128>().expect("ns"),
            c.time.num() / u128::from(c.time.den()) / 1000
        );
        assert_eq!(f[3], w.schema.domains[info.domain as usize].name);
        assert_eq!(f[4].parse::<u64>().expect("cycle"), c.cycle);
        assert_eq!(f[5], info.name);
        assert_eq!(f[6].parse::<u64>().expect("value"), c.value);
    }
}
