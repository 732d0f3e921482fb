//! Perfetto traces, decoded and checked by tests/py/check_perfetto.py
//! (Python protobuf with the perfetto package's protos, plus a raw
//! wire-format walker) against expectations computed here.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use chronon_record::perfetto::{PerfettoConfig, PerfettoWriter, flow_id, recover, uuid};
use chronon_record::*;
use common::*;
use serde_json::{Value, json};

fn ns(t: Time) -> u64 {
    (t.num() / u128::from(t.den()) / 1000) as u64
}

/// The events each track must hold, in order, computed from the records.
fn expected(schema: &Schema, records: &[Rec], ticks: bool, dropped: &DropCounts) -> Value {
    let mut tracks: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    let mut push = |track: u64, row: Value| tracks.entry(track).or_default().push(row);
    let mut open: BTreeMap<u32, Time> = BTreeMap::new();
    let mut last = 0;
    for r in records {
        last = last.max(ns(r.time()));
        match r {
            Rec::Trace {
                unit,
                event,
                args,
                time,
                ..
            } => {
                let e = &schema.events[*event as usize];
                let named: serde_json::Map<String, Value> = e
                    .args
                    .iter()
                    .zip(args)
                    .map(|(n, v)| (n.clone(), json!(v)))
                    .collect();
                push(
                    uuid::unit(*unit),
                    json!([ns(*time), 3, e.name, named, [], [], null]),
                );
            }
            Rec::Fifo(f) => {
                let id = flow_id(f.fifo, f.txn);
                let (flows, ends) = match f.kind {
                    FifoEventKind::Consume => (vec![], vec![id]),
                    FifoEventKind::Write
                    | FifoEventKind::Visible
                    | FifoEventKind::Read
                    | FifoEventKind::Output => (vec![id], vec![]),
                    _ => (vec![], vec![]),
                };
                let reader = !matches!(
                    f.kind,
                    FifoEventKind::Write | FifoEventKind::Full | FifoEventKind::NotFull
                );
                let t = ns(f.time);
                push(
                    uuid::fifo(f.fifo, reader),
                    json!([t, 3, f.kind.name(), {"txn": f.txn, "occupancy": f.occupancy}, flows, ends, null]),
                );
                let flag = match f.kind {
                    FifoEventKind::Full => Some((1, 1)),
                    FifoEventKind::NotFull => Some((1, 0)),
                    FifoEventKind::Empty => Some((2, 1)),
                    FifoEventKind::NotEmpty => Some((2, 0)),
                    _ => None,
                };
                if let Some((which, v)) = flag {
                    push(
                        uuid::fifo_counter(f.fifo, which),
                        json!([t, 4, null, {}, [], [], v]),
                    );
                }
                if matches!(f.kind, FifoEventKind::Write | FifoEventKind::Read) {
                    push(
                        uuid::fifo_counter(f.fifo, 0),
                        json!([t, 4, null, {}, [], [], f.occupancy]),
                    );
                }
            }
            Rec::Counter(c) => push(
                uuid::counter(c.counter),
                json!([ns(c.time), 4, null, {}, [], [], c.value]),
            ),
            Rec::Tick(k) if ticks => {
                if let Some(end) = open.remove(&k.unit) {
                    push(
                        uuid::unit(k.unit),
                        json!([ns(end), 2, null, {}, [], [], null]),
                    );
                }
                push(
                    uuid::unit(k.unit),
                    json!([ns(k.time), 1, "tick", {}, [], [], null]),
                );
                let d = schema.units[k.unit as usize].domain as usize;
                open.insert(k.unit, edge(d, k.cycle + 1));
            }
            Rec::Tick(_) | Rec::Signal(_) => {}
        }
    }
    for (unit, end) in open {
        last = last.max(ns(end));
        push(
            uuid::unit(unit),
            json!([ns(end), 2, null, {}, [], [], null]),
        );
    }
    push(
        uuid::PROCESS,
        json!([last, 3, "recording summary", {
            "dropped_trace": dropped.trace, "dropped_fifo": dropped.fifo, "dropped_counter": dropped.counter,
            "dropped_tick": dropped.tick, "dropped_signal": dropped.signal}, [], [], null]),
    );
    let tracks: serde_json::Map<String, Value> = tracks
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::Array(v)))
        .collect();
    json!({ "tracks": tracks })
}

fn check(trace: &Path, expect: &Value, prefix: bool) {
    let expect_path = trace.with_extension("expect.json");
    fs::write(&expect_path, serde_json::to_vec(expect).expect("json")).expect("write expectations");
    let mut args = vec![trace, expect_path.as_path()];
    let flag = Path::new("--prefix");
    if prefix {
        args.push(flag);
    }
    let (ok, out) = python(
        "check_perfetto.py",
        &args,
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    );
    assert!(ok, "{}: {out}", trace.display());
    println!("{out}");
}

fn write(path: &Path, w: &Workload, config: PerfettoConfig) {
    let mut writer = PerfettoWriter::create(path, &w.schema, config).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
}

#[test]
fn traces_decode_to_the_recorded_events() {
    let w = workload(1_500, 9);
    let dir = scratch("perfetto-content");
    for compress in [false, true] {
        for tick_slices in [false, true] {
            let path = dir.join(format!("run-{compress}-{tick_slices}.pftrace"));
            write(
                &path,
                &w,
                PerfettoConfig {
                    compress,
                    tick_slices,
                },
            );
            check(
                &path,
                &expected(&w.schema, &w.records, tick_slices, &DropCounts::default()),
                false,
            );
        }
    }
}

#[test]
fn sub_nanosecond_fifo_latency_keeps_its_order() {
    // Both clocks 4 GHz: written at 0 ns, visible at 0.75 ns (contract §5).
    let mut schema = schema();
    schema.fifos[0].writer_domain = 3;
    schema.fifos[0].reader_domain = 3;
    let at = |ps| Time::from_ps(ps);
    let f = |kind, cycle, ps, occupancy| {
        Rec::Fifo(FifoRecord {
            fifo: 0,
            kind,
            cycle,
            time: at(ps),
            unit: 7,
            txn: 0,
            occupancy,
        })
    };
    let records = vec![
        f(FifoEventKind::Write, 0, 0, 1),
        f(FifoEventKind::Visible, 3, 750, 1),
        f(FifoEventKind::NotEmpty, 3, 750, 1),
        f(FifoEventKind::Read, 4, 1000, 0),
        f(FifoEventKind::Output, 4, 1000, 0),
        f(FifoEventKind::Consume, 5, 1250, 0),
    ];
    let path = scratch("perfetto-subns").join("fifo.pftrace");
    let mut writer =
        PerfettoWriter::create(&path, &schema, PerfettoConfig::default()).expect("create");
    feed(&mut writer, &records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let expect = expected(&schema, &records, false, &DropCounts::default());
    let reader = &expect["tracks"][uuid::fifo(0, true).to_string()];
    let times: Vec<u64> = reader
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r[0].as_u64().expect("ts"))
        .collect();
    assert_eq!(times, [0, 0, 1, 1, 1]);
    check(&path, &expect, false);
}

#[test]
fn out_of_order_records_are_refused() {
    let w = workload(10, 1);
    let path = scratch("perfetto-order").join("t.pftrace");
    let mut writer =
        PerfettoWriter::create(&path, &w.schema, PerfettoConfig::default()).expect("create");
    let late = CounterRecord {
        counter: 0,
        cycle: 5,
        time: Time::from_ps(5_000),
        value: 1,
    };
    let early = CounterRecord {
        counter: 0,
        cycle: 1,
        time: Time::from_ps(900),
        value: 1,
    };
    writer.counter(&late).expect("first");
    let err = writer.counter(&early).expect_err("earlier record");
    assert!(matches!(err, RecordError::OutOfOrder { .. }), "{err}");
}

#[test]
fn recovery_keeps_the_longest_whole_prefix() {
    let w = workload(6_000, 21);
    let dir = scratch("perfetto-recover");
    for compress in [false, true] {
        let full = dir.join(format!("full-{compress}.pftrace"));
        write(
            &full,
            &w,
            PerfettoConfig {
                compress,
                tick_slices: true,
            },
        );
        let bytes = fs::read(&full).expect("trace");
        let expect = expected(&w.schema, &w.records, true, &DropCounts::default());

        let same = dir.join(format!("same-{compress}.pftrace"));
        let stats = recover(&full, &same).expect("recover");
        assert_eq!(stats.dropped_bytes, 0);
        assert_eq!(fs::read(&same).expect("recovered"), bytes);

        let mut last_kept = 0;
        for cut in [1, bytes.len() / 3, bytes.len() / 2 + 7, bytes.len() - 1] {
            let torn = dir.join(format!("torn-{compress}-{cut}.pftrace"));
            fs::write(&torn, &bytes[..cut]).expect("write torn");
            let out = dir.join(format!("rec-{compress}-{cut}.pftrace"));
            let stats = recover(&torn, &out).expect("recover");
            assert_eq!(stats.kept_bytes + stats.dropped_bytes, cut as u64);
            assert!(
                stats.dropped_bytes > 0,
                "a cut inside the last packet drops it"
            );
            if stats.packets + stats.salvaged_packets == 0 {
                assert!(!out.exists(), "an empty recovery leaves no file");
                continue;
            }
            let kept = fs::read(&out).expect("recovered");
            // The whole packets of the input, then any salvaged from inside
            // the torn batch (uncompressed).
            let whole = stats.kept_bytes as usize;
            assert_eq!(&kept[..whole], &bytes[..whole]);
            assert_eq!(kept.len() > whole, stats.salvaged_packets > 0);
            assert!(!compress || stats.salvaged_packets == 0 || kept.len() > whole);
            assert!(whole >= last_kept, "longer input keeps no less");
            last_kept = whole;
            check(&out, &expect, true);
        }
    }
}

/// A compressed trace of one batch, torn inside it, keeps the packets the
/// batch's valid deflate prefix holds (it recovered nothing and left an
/// empty file); a file with nothing whole leaves no output behind.
#[test]
fn recovery_salvages_a_torn_compressed_batch() {
    let w = workload(300, 9);
    let dir = scratch("perfetto-salvage");
    let full = dir.join("one-batch.pftrace");
    let config = PerfettoConfig {
        compress: true,
        tick_slices: true,
    };
    write(&full, &w, config);
    let bytes = fs::read(&full).expect("trace");
    let expect = expected(&w.schema, &w.records, true, &DropCounts::default());
    let torn = dir.join("torn.pftrace");
    fs::write(&torn, &bytes[..bytes.len() * 2 / 3]).expect("write torn");
    let out = dir.join("salvaged.pftrace");
    let stats = recover(&torn, &out).expect("recover");
    assert_eq!(stats.packets, 0, "no whole outer packet: one batch, torn");
    assert!(stats.salvaged_packets > 10, "{stats:?}");
    check(&out, &expect, true);

    let garbage = dir.join("garbage.pftrace");
    fs::write(&garbage, b"\x0a\xff\xff\xff").expect("write");
    let none = dir.join("none.pftrace");
    let stats = recover(&garbage, &none).expect("recover");
    assert_eq!(stats.packets + stats.salvaged_packets, 0);
    assert!(!none.exists(), "an empty recovery leaves no file");
}

#[test]
fn a_failing_trace_stops_with_its_error_and_keeps_whole_packets() {
    let w = workload(30_000, 5);
    let dir = scratch("perfetto-fail");
    for (compress, limit) in [(false, 1_300_000), (true, 150_000), (false, 50)] {
        let failing = FailAfter::new(limit);
        let name = dir.join("failing.pftrace");
        let mut writer = PerfettoWriter::with_output(
            Box::new(failing.clone()),
            name.clone(),
            &w.schema,
            PerfettoConfig {
                compress,
                tick_slices: true,
            },
        )
        .expect("create");
        let err = feed(&mut writer, &w.records)
            .and_then(|()| writer.finish(&DropCounts::default()))
            .expect_err("fails");
        match &err {
            RecordError::Io { path, source } => {
                assert_eq!(path, &name);
                assert_eq!(source.kind(), std::io::ErrorKind::StorageFull);
            }
            other => panic!("expected an I/O error, got {other}"),
        }
        let bytes = failing.contents();
        assert!(bytes.len() <= limit);
        let file = dir.join(format!("prefix-{compress}-{limit}.pftrace"));
        fs::write(&file, &bytes).expect("write");
        let stats = recover(&file, &dir.join("again.pftrace")).expect("recover");
        assert_eq!(stats.dropped_bytes, 0, "only whole packets were left");
        if !bytes.is_empty() {
            check(
                &file,
                &expected(&w.schema, &w.records, true, &DropCounts::default()),
                true,
            );
        }
    }
}
