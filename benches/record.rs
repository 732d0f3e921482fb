//! Recorder throughput on a synthetic stream shaped like the reference
//! workload: 914 MHz and 1326 MHz domains (137 ps phase on the second),
//! 500,000 instants, two units per domain.
//!
//! Run with `cargo bench --bench record [-- ROW-PREFIX...]`. Each writer runs `REPETITIONS`
//! times on the same prebuilt stream; the report gives the median, min and
//! max wall time, nanoseconds and millions of events per second, and the
//! bytes written. Outputs go to `$CHRONON_BENCH_DIR` (default: the system
//! temporary directory), so the figure is the writer and the page cache, not
//! a disk; the `(discarded)` rows write to `io::sink()` and measure the
//! writer alone.

use std::path::{Path, PathBuf};
use std::time::Instant;

use chronon_record::buffer::{BufferConfig, BufferedRecorder};
use chronon_record::csv::CsvWriter;
use chronon_record::perfetto::{PerfettoConfig, PerfettoWriter};
use chronon_record::text::TextWriter;
use chronon_record::vcd::{VcdConfig, VcdWriter};
use chronon_record::*;

const REPETITIONS: usize = 5;
const INSTANTS: usize = 500_000;

/// One edge of one domain.
struct Edge {
    domain: u32,
    cycle: u64,
    time: Time,
}

fn schema() -> Schema {
    let domain = |name: &str, mhz: u64, phase: u128| DomainInfo {
        name: name.to_owned(),
        period: Time::new(1_000_000, mhz).expect("nonzero"),
        phase: Time::from_ps(phase),
    };
    let unit = |path: &str, domain| UnitInfo {
        path: path.to_owned(),
        domain,
    };
    Schema {
        design: "bench".to_owned(),
        domains: vec![domain("slow", 914, 0), domain("fast", 1326, 137)],
        units: vec![
            unit("top.reader", 0),
            unit("top.ctl", 0),
            unit("top.writer", 1),
            unit("top.alu", 1),
        ],
        events: vec![EventInfo {
            name: "op".to_owned(),
            args: vec!["pc".to_owned(), "value".to_owned()],
            signed_widths: vec![],
            wide_widths: vec![],
        }],
        fifos: vec![],
        counters: vec![
            CounterInfo {
                name: "slow.ops".to_owned(),
                domain: 0,
            },
            CounterInfo {
                name: "fast.ops".to_owned(),
                domain: 1,
            },
        ],
        signals: vec![
            SignalInfo {
                unit: 0,
                name: "count".to_owned(),
                width: 32,
                limb: 0,
            },
            SignalInfo {
                unit: 1,
                name: "busy".to_owned(),
                width: 1,
                limb: 0,
            },
            SignalInfo {
                unit: 2,
                name: "count".to_owned(),
                width: 32,
                limb: 0,
            },
            SignalInfo {
                unit: 3,
                name: "busy".to_owned(),
                width: 1,
                limb: 0,
            },
        ],
    }
}

/// The edges of the first `INSTANTS` instants, in time order.
fn edges(schema: &Schema) -> Vec<Edge> {
    let mut next = [0u64; 2];
    let mut out = Vec::with_capacity(INSTANTS + INSTANTS / 100);
    for _ in 0..INSTANTS {
        let times = [0, 1].map(|d| schema.edge_time(d, next[d as usize]).expect("fits"));
        let t = times[0].min(times[1]);
        for d in 0..2u32 {
            if times[d as usize] == t {
                out.push(Edge {
                    domain: d,
                    cycle: next[d as usize],
                    time: t,
                });
                next[d as usize] += 1;
            }
        }
    }
    out
}

/// Feeds two trace events per edge; returns the events fed.
fn trace_stream(rec: &mut dyn Recorder, edges: &[Edge]) -> u64 {
    for e in edges {
        for k in 0..2u32 {
            let args = [e.cycle * 4 + u64::from(k), e.cycle ^ 0x5a5a];
            let r = TraceRecord {
                domain: e.domain,
                cycle: e.cycle,
                time: e.time,
                unit: e.domain * 2 + k,
                event: 0,
                args: &args,
            };
            rec.trace(&r).expect("record");
        }
    }
    rec.finish(&DropCounts::default()).expect("finish");
    edges.len() as u64 * 2
}

/// Feeds two value changes per edge; returns the changes fed.
fn signal_stream(rec: &mut dyn Recorder, edges: &[Edge]) -> u64 {
    for e in edges {
        let base = e.domain * 2;
        rec.signal(&SignalRecord {
            signal: base,
            time: e.time,
            value: e.cycle,
        })
        .expect("record");
        rec.signal(&SignalRecord {
            signal: base + 1,
            time: e.time,
            value: e.cycle & 1,
        })
        .expect("record");
    }
    rec.finish(&DropCounts::default()).expect("finish");
    edges.len() as u64 * 2
}

/// Feeds one counter sample per edge.
fn counter_stream(rec: &mut dyn Recorder, edges: &[Edge]) -> u64 {
    for e in edges {
        rec.counter(&CounterRecord {
            counter: e.domain,
            cycle: e.cycle,
            time: e.time,
            value: e.cycle % 17,
        })
        .expect("record");
    }
    rec.finish(&DropCounts::default()).expect("finish");
    edges.len() as u64
}

/// Takes every record and does nothing with it: the cost of feeding the
/// stream (building records, the dynamic call), to subtract from the rows.
struct Feed;

impl Recorder for Feed {
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        std::hint::black_box(r);
        Ok(())
    }

    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        std::hint::black_box(r);
        Ok(())
    }

    fn finish(&mut self, _dropped: &DropCounts) -> Result<(), RecordError> {
        Ok(())
    }
}

fn dir_bytes(path: &Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path)
            .expect("dir")
            .map(|e| dir_bytes(&e.expect("entry").path()))
            .sum()
    } else {
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
    }
}

/// This thread's CPU time in seconds (`CLOCK_THREAD_CPUTIME_ID`; the machine
/// is shared, so wall time alone overstates the writers' cost).
fn thread_cpu() -> f64 {
    chronon_suite::measure::thread_cpu_ns() as f64 / 1e9
}

fn measure(name: &str, unit: &str, out: &Path, mut run: impl FnMut() -> u64) {
    // `cargo bench --bench record -- text` runs the rows whose name starts
    // with `text` (cargo itself passes `--bench`).
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !only.is_empty() && !only.iter().any(|o| name.starts_with(o.as_str())) {
        return;
    }
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut count = 0;
    for _ in 0..REPETITIONS {
        let (start, start_cpu) = (Instant::now(), thread_cpu());
        count = run();
        wall.push(start.elapsed().as_secs_f64());
        cpu.push(thread_cpu() - start_cpu);
    }
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    let stats = |t: &[f64]| {
        let median = t[t.len() / 2];
        format!(
            "{:>7.1} ms ({:>6.1}..{:>6.1}) {:>6.1} ns {:>5.1} M/s",
            median * 1e3,
            t[0] * 1e3,
            t[t.len() - 1] * 1e3,
            median * 1e9 / count as f64,
            count as f64 / median / 1e6
        )
    };
    println!(
        "{name:<22} {count:>8} {unit:<8} wall {} | cpu {} | {:>9} bytes",
        stats(&wall),
        stats(&cpu),
        dir_bytes(out)
    );
}

fn main() {
    let schema = schema();
    let edges = edges(&schema);
    let root = std::env::var_os("CHRONON_BENCH_DIR").map_or_else(
        || std::env::temp_dir().join("chronon-bench-record"),
        PathBuf::from,
    );
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("bench dir");
    println!(
        "{} instants, {} edges, {REPETITIONS} repetitions",
        INSTANTS,
        edges.len()
    );

    let none = root.join("none");
    measure("feed only (traces)", "events", &none, || {
        trace_stream(&mut Feed, &edges)
    });
    measure("feed only (changes)", "changes", &none, || {
        signal_stream(&mut Feed, &edges)
    });
    let text = root.join("text");
    measure("text", "events", &text, || {
        trace_stream(
            &mut TextWriter::create(&text, &schema).expect("create"),
            &edges,
        )
    });
    let discarded = root.join("text-discarded");
    measure("text (discarded)", "events", &discarded, || {
        let sinks: Vec<Box<dyn RecordOutput>> =
            vec![Box::new(std::io::sink()), Box::new(std::io::sink())];
        trace_stream(
            &mut TextWriter::with_outputs(&discarded, &schema, sinks).expect("create"),
            &edges,
        )
    });
    let buffered = root.join("text-buffered");
    measure("text, buffered lossless", "events", &buffered, || {
        let inner = TextWriter::create(&buffered, &schema).expect("create");
        trace_stream(
            &mut BufferedRecorder::spawn(Box::new(inner), BufferConfig::default()),
            &edges,
        )
    });
    for (name, compress) in [("perfetto", false), ("perfetto, zlib", true)] {
        let path = root.join(format!("{}.pftrace", if compress { "z" } else { "plain" }));
        let config = PerfettoConfig {
            compress,
            tick_slices: false,
        };
        measure(name, "events", &path, || {
            trace_stream(
                &mut PerfettoWriter::create(&path, &schema, config).expect("create"),
                &edges,
            )
        });
    }
    let plain = root.join("discarded.pftrace");
    measure("perfetto (discarded)", "events", &plain, || {
        let out = Box::new(std::io::sink());
        trace_stream(
            &mut PerfettoWriter::with_output(
                out,
                plain.clone(),
                &schema,
                PerfettoConfig::default(),
            )
            .expect("create"),
            &edges,
        )
    });
    // The same stream with `value` a signed 16-bit argument (about half of
    // the values negative): the writers' signed-argument path.
    let mut signed = schema.clone();
    signed.events[0].signed_widths = vec![0, 16];
    let signed_text = root.join("text-signed-discarded");
    measure("text signed (discarded)", "events", &signed_text, || {
        let sinks: Vec<Box<dyn RecordOutput>> =
            vec![Box::new(std::io::sink()), Box::new(std::io::sink())];
        trace_stream(
            &mut TextWriter::with_outputs(&signed_text, &signed, sinks).expect("create"),
            &edges,
        )
    });
    let signed_plain = root.join("signed-discarded.pftrace");
    measure(
        "perfetto signed (discarded)",
        "events",
        &signed_plain,
        || {
            trace_stream(
                &mut PerfettoWriter::with_output(
                    Box::new(std::io::sink()),
                    signed_plain.clone(),
                    &signed,
                    PerfettoConfig::default(),
                )
                .expect("create"),
                &edges,
            )
        },
    );
    let vcd = root.join("run.vcd");
    measure("vcd", "changes", &vcd, || {
        signal_stream(
            &mut VcdWriter::create(&vcd, &schema, &VcdConfig::default()).expect("create"),
            &edges,
        )
    });
    let discarded_vcd = root.join("discarded.vcd");
    measure("vcd (discarded)", "changes", &discarded_vcd, || {
        let out = Box::new(std::io::sink());
        signal_stream(
            &mut VcdWriter::with_output(out, discarded_vcd.clone(), &schema, &VcdConfig::default())
                .expect("create"),
            &edges,
        )
    });
    let csv = root.join("counters.csv");
    measure("counters csv", "samples", &csv, || {
        counter_stream(
            &mut CsvWriter::create(&csv, &schema).expect("create"),
            &edges,
        )
    });
}
