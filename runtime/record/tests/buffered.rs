//! The threaded buffer: lossless output is identical to direct writing;
//! lossy output plus the counted drops adds up to the lossless output; a
//! writer's error reaches the producer.

mod common;

use std::fs;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use chronon_record::buffer::{BufferConfig, BufferedRecorder, Mode};
use chronon_record::csv::CsvWriter;
use chronon_record::perfetto::{PerfettoConfig, PerfettoWriter};
use chronon_record::text::{MANIFEST, Manifest, TextWriter};
use chronon_record::vcd::{VcdConfig, VcdWriter};
use chronon_record::*;
use common::*;

fn tiny(mode: Mode) -> BufferConfig {
    BufferConfig {
        mode,
        batch_records: 7,
        queue_batches: 2,
    }
}

#[test]
fn lossless_buffering_changes_no_byte() {
    let w = workload(3_000, 8);
    let dir = scratch("buffer-lossless");
    let direct = dir.join("direct");
    let mut writer = TextWriter::create(&direct, &w.schema).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let via = dir.join("via");
    let inner = TextWriter::create(&via, &w.schema).expect("create");
    let mut buffered = BufferedRecorder::spawn(Box::new(inner), tiny(Mode::Lossless));
    feed(&mut buffered, &w.records).expect("record");
    buffered.finish(&DropCounts::default()).expect("finish");
    for name in [
        "00-fast.log",
        "01-mirror.log",
        "02-slow.log",
        "03-quad.log",
        MANIFEST,
    ] {
        assert_eq!(
            fs::read(direct.join(name)).expect("direct"),
            fs::read(via.join(name)).expect("via"),
            "{name}"
        );
    }

    let config = PerfettoConfig {
        compress: false,
        tick_slices: true,
    };
    let mut writer =
        PerfettoWriter::create(&dir.join("direct.pftrace"), &w.schema, config).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let inner =
        PerfettoWriter::create(&dir.join("via.pftrace"), &w.schema, config).expect("create");
    let mut buffered = BufferedRecorder::spawn(Box::new(inner), tiny(Mode::Lossless));
    feed(&mut buffered, &w.records).expect("record");
    buffered.finish(&DropCounts::default()).expect("finish");
    assert_eq!(
        fs::read(dir.join("direct.pftrace")).expect("direct"),
        fs::read(dir.join("via.pftrace")).expect("via")
    );
}

/// The VCD writer takes only signals and occupancy changes through the
/// buffer (its `Interest`), the CSV writer only counters: the files are the
/// ones direct writing gives, byte for byte.
#[test]
fn filtered_buffering_changes_no_byte() {
    let w = workload(3_000, 21);
    let dir = scratch("buffer-filtered");
    // Every FIFO dumped, and once with none, so both filter branches run.
    for (name, patterns) in [
        ("all", vec![]),
        ("signals", vec!["*.count".to_owned(), "*.wide".to_owned()]),
    ] {
        let config = VcdConfig { patterns };
        let (direct, via) = (
            dir.join(format!("direct-{name}.vcd")),
            dir.join(format!("via-{name}.vcd")),
        );
        let mut writer = VcdWriter::create(&direct, &w.schema, &config).expect("create");
        feed(&mut writer, &w.records).expect("record");
        writer.finish(&DropCounts::default()).expect("finish");
        let inner = VcdWriter::create(&via, &w.schema, &config).expect("create");
        let mut buffered = BufferedRecorder::spawn(Box::new(inner), tiny(Mode::Lossless));
        feed(&mut buffered, &w.records).expect("record");
        buffered.finish(&DropCounts::default()).expect("finish");
        let direct = fs::read(direct).expect("direct");
        assert!(direct.windows(2).filter(|p| p == b"\n#").count() > 100);
        assert_eq!(direct, fs::read(via).expect("via"), "{name}");
    }
    let mut writer = CsvWriter::create(&dir.join("direct.csv"), &w.schema).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let inner = CsvWriter::create(&dir.join("via.csv"), &w.schema).expect("create");
    let mut buffered = BufferedRecorder::spawn(Box::new(inner), tiny(Mode::Lossless));
    feed(&mut buffered, &w.records).expect("record");
    buffered.finish(&DropCounts::default()).expect("finish");
    assert_eq!(
        fs::read(dir.join("direct.csv")).expect("direct"),
        fs::read(dir.join("via.csv")).expect("via")
    );
}

/// Counts what reaches it, by kind, and holds its first record until the
/// gate opens, so that the buffer fills.
struct Gated {
    gate: mpsc::Receiver<()>,
    open: bool,
    seen: Arc<Mutex<Vec<String>>>,
    finished: Arc<Mutex<Option<DropCounts>>>,
}

impl Gated {
    fn see(&mut self, what: String) -> Result<(), RecordError> {
        if !self.open {
            self.gate.recv().expect("the test opens the gate");
            self.open = true;
        }
        self.seen.lock().expect("not poisoned").push(what);
        Ok(())
    }
}

fn describe(r: &Rec) -> String {
    match r {
        Rec::Trace {
            unit,
            time,
            event,
            args,
            ..
        } => format!("trace {unit} {time} {event} {args:?}"),
        Rec::Fifo(f) => format!("fifo {} {:?} {}", f.time, f.kind, f.txn),
        Rec::Counter(c) => format!("counter {} {} {}", c.counter, c.time, c.value),
        Rec::Tick(t) => format!("tick {} {}", t.unit, t.time),
        Rec::Signal(s) => format!("signal {} {} {}", s.signal, s.time, s.value),
    }
}

impl Recorder for Gated {
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        self.see(describe(&Rec::Trace {
            domain: r.domain,
            cycle: r.cycle,
            time: r.time,
            unit: r.unit,
            event: r.event,
            args: r.args.to_vec(),
        }))
    }
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        self.see(describe(&Rec::Fifo(*r)))
    }
    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        self.see(describe(&Rec::Counter(*r)))
    }
    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        self.see(describe(&Rec::Tick(*r)))
    }
    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        self.see(describe(&Rec::Signal(*r)))
    }
    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        *self.finished.lock().expect("not poisoned") = Some(*dropped);
        Ok(())
    }
}

#[test]
fn lossy_buffering_counts_every_drop() {
    let w = workload(2_000, 13);
    let (open, gate) = mpsc::channel();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let finished = Arc::new(Mutex::new(None));
    let inner = Gated {
        gate,
        open: false,
        seen: seen.clone(),
        finished: finished.clone(),
    };
    let mut buffered = BufferedRecorder::spawn(Box::new(inner), tiny(Mode::Lossy));
    feed(&mut buffered, &w.records).expect("lossy recording never blocks");
    let dropped = buffered.dropped();
    open.send(()).expect("writer waits");
    buffered.finish(&DropCounts::default()).expect("finish");

    assert!(
        dropped.total() > 0,
        "the gated writer must have made the buffer drop"
    );
    assert_eq!(
        *finished.lock().expect("not poisoned"),
        Some(dropped),
        "the writer is told the drops"
    );
    let seen = seen.lock().expect("not poisoned");
    let all: Vec<String> = w.records.iter().map(describe).collect();
    assert_eq!(seen.len() as u64 + dropped.total(), all.len() as u64);
    let kinds =
        |list: &[String], kind: &str| list.iter().filter(|s| s.starts_with(kind)).count() as u64;
    assert_eq!(
        kinds(&seen, "trace ") + dropped.trace,
        kinds(&all, "trace ")
    );
    assert_eq!(kinds(&seen, "fifo ") + dropped.fifo, kinds(&all, "fifo "));
    assert_eq!(
        kinds(&seen, "counter ") + dropped.counter,
        kinds(&all, "counter ")
    );
    assert_eq!(kinds(&seen, "tick ") + dropped.tick, kinds(&all, "tick "));
    assert_eq!(
        kinds(&seen, "signal ") + dropped.signal,
        kinds(&all, "signal ")
    );
    // What was kept is the lossless stream with records left out.
    let mut rest = all.iter();
    for s in seen.iter() {
        assert!(
            rest.any(|a| a == s),
            "kept record {s} out of order or invented"
        );
    }
}

#[test]
fn lossy_drops_are_reported_in_the_manifest() {
    let w = workload(500, 2);
    let dir = scratch("buffer-lossy-text");
    let inner = TextWriter::create(&dir, &w.schema).expect("create");
    let mut buffered = BufferedRecorder::spawn(Box::new(inner), tiny(Mode::Lossy));
    feed(&mut buffered, &w.records).expect("record");
    let dropped = buffered.dropped();
    buffered.finish(&DropCounts::default()).expect("finish");
    let manifest: Manifest =
        serde_json::from_slice(&fs::read(dir.join(MANIFEST)).expect("manifest")).expect("json");
    assert_eq!(manifest.dropped, dropped);
    let written: u64 = manifest.records.iter().sum();
    let recordable = w
        .records
        .iter()
        .filter(|r| matches!(r, Rec::Trace { .. } | Rec::Fifo(_) | Rec::Counter(_)))
        .count() as u64;
    assert_eq!(
        written + dropped.trace + dropped.fifo + dropped.counter,
        recordable
    );
}

#[test]
fn a_writer_error_reaches_the_producer() {
    let w = workload(30_000, 3);
    let failing = FailAfter::new(200_000);
    let name = scratch("buffer-fail").join("t.pftrace");
    let inner = PerfettoWriter::with_output(
        Box::new(failing),
        name.clone(),
        &w.schema,
        PerfettoConfig::default(),
    )
    .expect("create");
    let mut buffered = BufferedRecorder::spawn(Box::new(inner), BufferConfig::default());
    let err = feed(&mut buffered, &w.records)
        .and_then(|()| buffered.finish(&DropCounts::default()))
        .expect_err("fails");
    match &err {
        RecordError::Io { path, source } => {
            assert_eq!(path, &name);
            assert_eq!(source.kind(), std::io::ErrorKind::StorageFull);
        }
        other => panic!("expected the writer's I/O error, got {other}"),
    }
    assert!(
        buffered.finish(&DropCounts::default()).is_err(),
        "a stopped buffer stays stopped"
    );
}
