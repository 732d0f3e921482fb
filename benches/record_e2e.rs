//! Recording end to end: the reference workload (benches/record_e2e.chr:
//! 914 MHz and 1326 MHz with a 137 ps phase, a depth-16 two-stage CDC FIFO
//! with traffic, 500,000 instants) run through the compiler library with
//! recording off, text logs, Perfetto, VCD, and all of them, plus "floor":
//! the runtime observing commits for a writer that takes no record (what
//! recording costs before anything is queued).
//!
//! Run with `cargo bench --bench record_e2e [-- CONFIG...]`. Each
//! configuration runs `REPETITIONS` times (in turn with the others), each
//! in a fresh child process (this binary run with
//! `child CONFIG SCALE`), so the peak memory (VmHWM) is that
//! configuration's own. The report gives the median, min and max wall time,
//! main-thread CPU time, the CPU time of every thread (the writers
//! included; on two cores wall time cannot go below half of it), events
//! (or VCD value changes) per second, wall and
//! main-thread CPU ns per event beyond recording off (the CPU figure is the
//! producer's share: the writer threads are not in it), peak memory and
//! bytes written. The last rows
//! run 10x longer to show that peak memory does not grow with the run.
//! Outputs go to `$CHRONON_BENCH_DIR` (default: the temporary directory).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::{RunOptions, StopAt, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;
use chronon_suite::measure::{process_cpu_ns, thread_cpu_ns};

const REPETITIONS: usize = 5;
/// Writer edges for 500,000 instants (2,450 instants per 1,000 edges).
const WRITER_EDGES: u64 = 204_082;
const CONFIGS: [&str; 6] = ["off", "floor", "text", "perfetto", "vcd", "all"];

/// Peak resident memory of this process in KiB.
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn bytes_under(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|d| d.flatten().map(|e| bytes_under(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

fn options(config: &str, dir: &Path) -> RecordOptions {
    let text = matches!(config, "text" | "all").then(|| dir.join("text"));
    let perfetto = matches!(config, "perfetto" | "all").then(|| dir.join("trace.pftrace"));
    let vcd = matches!(config, "vcd" | "all").then(|| dir.join("wave.vcd"));
    // "floor": the runtime observes commits and hands every FIFO event to
    // the sink, but the one writer (counters, sampled once) takes nothing
    // per record: what observing costs before any record is queued.
    let floor = config == "floor";
    RecordOptions {
        trace_dir: text,
        perfetto,
        vcd,
        counters: floor.then(|| dir.join("counters.csv")),
        counter_interval: if floor { u64::MAX } else { 1 },
        ..RecordOptions::default()
    }
}

/// Records in the text logs, or value changes in the VCD.
fn events(config: &str, dir: &Path) -> u64 {
    let count = |path: PathBuf, skip: fn(&str) -> bool| -> u64 {
        std::fs::read_to_string(path)
            .map(|s| s.lines().filter(|l| !skip(l)).count() as u64)
            .unwrap_or(0)
    };
    match config {
        "vcd" => {
            let vcd = std::fs::read_to_string(dir.join("wave.vcd")).unwrap_or_default();
            let body = vcd.split("$enddefinitions $end").nth(1).unwrap_or("");
            body.lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('$'))
                .count() as u64
        }
        _ => ["00-wclk.log", "01-rclk.log"]
            .iter()
            .map(|f| count(dir.join("text").join(f), |l| l.starts_with('#')))
            .sum(),
    }
}

/// One run in this process; prints `wall_ns cpu_ns hwm_kib bytes events
/// all_cpu_ns` (the last: every thread, the writers included).
fn child(config: &str, scale: u64) {
    let dir = std::env::var_os("CHRONON_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("chronon-record-e2e-{config}-{scale}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("output dir");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/record_e2e.chr");
    let mut sources = SourceMap::new();
    sources.add(
        path.to_string(),
        std::fs::read_to_string(path).expect("design"),
    );
    let run = RunOptions::new(
        EngineKind::Jit,
        StopAt::Cycles {
            count: WRITER_EDGES * scale,
            domain: Some("wclk".into()),
        },
    );
    let rec = options(config, &dir);
    // Compilation is in the timed region for every configuration alike.
    let (wall, cpu, all_cpu) = (Instant::now(), thread_cpu_ns(), process_cpu_ns());
    let report = match run_recorded(&mut sources, &run, &rec, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("the benchmark design runs: {e:?}"),
    };
    // The writer threads have been joined: the process figure holds them.
    let (wall, cpu, all_cpu) = (
        wall.elapsed().as_nanos() as u64,
        thread_cpu_ns() - cpu,
        process_cpu_ns() - all_cpu,
    );
    // Read before the files are counted, so the peak is the run's own.
    let hwm = vm_hwm_kib();
    if let Some(r) = &report.recording {
        assert_eq!(r.error, None);
    }
    // The "off" run counts the events a text run of the same length writes.
    // `CHRONON_BENCH_NO_COUNT` skips the counting (and its extra text run),
    // so a profiler sees only the timed run.
    let counted = match config {
        _ if std::env::var_os("CHRONON_BENCH_NO_COUNT").is_some() => 0,
        "off" | "floor" | "perfetto" => {
            let probe = options("text", &dir);
            run_recorded(&mut sources, &run, &probe, &mut |_, _| {}).expect("text run");
            events("text", &dir)
        }
        "all" => events("text", &dir),
        _ => events(config, &dir),
    };
    let bytes = match config {
        "off" | "floor" => 0,
        _ => [
            dir.join("text"),
            dir.join("trace.pftrace"),
            dir.join("wave.vcd"),
        ]
        .iter()
        .filter(|p| match config {
            "all" => true,
            "text" => p.ends_with("text"),
            "perfetto" => p.ends_with("trace.pftrace"),
            _ => p.ends_with("wave.vcd"),
        })
        .map(|p| bytes_under(p))
        .sum(),
    };
    println!("{wall} {cpu} {hwm} {bytes} {counted} {all_cpu}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Median, min and max.
fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        let scale = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
        child(&args[2], scale);
        return;
    }
    let exe = std::env::current_exe().expect("own path");
    // `cargo bench --bench record_e2e -- text vcd` runs only those
    // configurations (and `off`, the baseline); cargo passes `--bench`.
    let only: Vec<String> = args
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .cloned()
        .collect();
    let plan: Vec<(&str, u64)> = CONFIGS
        .iter()
        .map(|c| (*c, 1))
        .chain([("off", 10), ("all", 10)])
        .filter(|(c, _)| *c == "off" || only.is_empty() || only.iter().any(|o| o == c))
        .collect();
    println!(
        "recording end to end: benches/record_e2e.chr, {} instants x scale, JIT, {REPETITIONS} runs each (median [min..max]), configurations in turn",
        500_000
    );
    println!(
        "{:<9} {:>5} {:>26} {:>22} {:>12} {:>11} {:>10} {:>10} {:>10} {:>12} {:>11}",
        "config",
        "scale",
        "wall ms",
        "thread cpu ms",
        "all cpu ms",
        "events",
        "M ev/s",
        "wall ns+",
        "cpu ns+",
        "peak KiB",
        "bytes"
    );
    // Round robin: each repetition runs every configuration once, so a
    // change in the machine's load spreads over all of them alike.
    let mut rows: Vec<Vec<Vec<f64>>> = vec![Vec::new(); plan.len()];
    for _ in 0..REPETITIONS {
        for (i, (config, scale)) in plan.iter().enumerate() {
            let out = Command::new(&exe)
                .args(["child", config, &scale.to_string()])
                .output()
                .expect("the benchmark re-runs itself");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = String::from_utf8_lossy(&out.stdout);
            let fields: Vec<f64> = line
                .split_whitespace()
                .map(|f| f.parse().expect("child figures"))
                .collect();
            rows[i].push(fields);
        }
    }
    let mut off = [(0.0f64, 0.0f64); 2];
    for ((config, scale), rows) in plan.iter().zip(&rows) {
        let col = |i: usize| stats(rows.iter().map(|r| r[i]).collect());
        let (wall, wall_min, wall_max) = col(0);
        let (cpu, cpu_min, cpu_max) = col(1);
        let (hwm, _, hwm_max) = col(2);
        let (bytes, _, _) = col(3);
        let (events, _, _) = col(4);
        let (all_cpu, _, _) = col(5);
        let slot = usize::from(*scale != 1);
        if *config == "off" {
            off[slot] = (wall, cpu);
        }
        let rate = events / (wall / 1e9) / 1e6;
        let (wall_beyond, cpu_beyond) = if *config == "off" {
            (0.0, 0.0)
        } else {
            ((wall - off[slot].0) / events, (cpu - off[slot].1) / events)
        };
        println!(
            "{config:<9} {scale:>5} {:>8.1} [{:>6.1}..{:>6.1}] {:>6.1} [{:>5.1}..{:>6.1}] {:>12.1} {:>11} {:>10.1} {:>10.1} {:>10.1} {:>5}/{:>6} {:>11}",
            wall / 1e6,
            wall_min / 1e6,
            wall_max / 1e6,
            cpu / 1e6,
            cpu_min / 1e6,
            cpu_max / 1e6,
            all_cpu / 1e6,
            events,
            rate,
            wall_beyond,
            cpu_beyond,
            hwm,
            hwm_max,
            bytes
        );
    }
}
