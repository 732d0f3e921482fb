//! Scheduler benchmark: hand-written Rust ticks on the runtime.
//!
//! Run with `cargo bench --bench scheduler`. Each scenario runs three ways:
//! with one group tick per domain in run-ahead form (the runtime's cheapest
//! path for Rust ticks: domains that exchange nothing run many edges per
//! call, contract §7), the same group ticks with run-ahead off (the instant
//! loop, one call per domain edge), and one tick per unit. Each scenario is built outside the
//! timed region and run several times; the report gives the median, min and max
//! nanoseconds per unit tick, in wall time and in thread CPU time.

use chronon_runtime::Stop;
use chronon_suite::measure::{summarize, thread_cpu_ns};
use chronon_suite::workloads::{WORKLOADS, Workload};
use std::time::Instant;

const REPETITIONS: usize = 9;

/// Measures `build`'s design: `name` says which version.
fn bench(
    workload: &Workload,
    name: &str,
    build: fn(u64) -> (chronon_runtime::Simulation, chronon_runtime::RunLimit),
    ahead: bool,
) {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut ticks = 0;
    let mut instants = 0;
    for _ in 0..REPETITIONS {
        let (mut sim, limit) = build(workload.bench_edges);
        sim.set_run_ahead(ahead);
        let (w0, c0) = (Instant::now(), thread_cpu_ns());
        let stop = std::hint::black_box(sim.run(limit));
        let (c1, w1) = (thread_cpu_ns(), Instant::now());
        assert_eq!(stop, Stop::LimitReached);
        ticks = workload.unit_ticks(&sim);
        instants = sim.instants_done();
        wall.push((w1 - w0).as_nanos() as f64 / ticks as f64);
        cpu.push((c1 - c0) as f64 / ticks as f64);
    }
    let (w, c) = (summarize(wall), summarize(cpu));
    println!(
        "{name:<48} {instants:>8} instants {ticks:>8} unit ticks | ns/unit tick wall median {:.2} (min {:.2}, max {:.2}) | thread CPU median {:.2} (min {:.2}, max {:.2})",
        w.median, w.min, w.max, c.median, c.min, c.max
    );
}

/// The machine's floor: the same number of unit ticks as plain dynamic calls
/// over a state vector, without the runtime, to read the figures above as ratios.
fn baseline_dyn_calls() {
    type TrivialUnit = Box<dyn Fn(&mut [u64])>;
    let units: Vec<TrivialUnit> = vec![Box::new(|s| s[0] += 1), Box::new(|s| s[1] += 1)];
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let iterations = 500_000u64;
    for _ in 0..REPETITIONS {
        let mut state = vec![0u64; 2];
        let (w0, c0) = (Instant::now(), thread_cpu_ns());
        for _ in 0..iterations {
            for unit in &units {
                unit(std::hint::black_box(&mut state));
            }
        }
        let (c1, w1) = (thread_cpu_ns(), Instant::now());
        assert_eq!(state[0], iterations);
        let calls = (2 * iterations) as f64;
        wall.push((w1 - w0).as_nanos() as f64 / calls);
        cpu.push((c1 - c0) as f64 / calls);
    }
    let (w, c) = (summarize(wall), summarize(cpu));
    println!(
        "{:<48} {:>8}          {:>8} calls      | ns/call      wall median {:.2} (min {:.2}, max {:.2}) | thread CPU median {:.2} (min {:.2}, max {:.2})",
        "baseline: bare dynamic calls",
        "-",
        2 * iterations,
        w.median,
        w.min,
        w.max,
        c.median,
        c.min,
        c.max
    );
}

fn main() {
    // `cargo test --benches` runs this binary too; only measure under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // Other arguments select scenarios by a part of their name (for
    // instruction counts under callgrind: `... --bench "group ticks"`).
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected = |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f));
    println!("scheduler benchmark, {REPETITIONS} repetitions each");
    for workload in &WORKLOADS {
        let group = format!("{} (group ticks)", workload.name);
        if selected(&group) {
            bench(workload, &group, workload.hand_written, true);
        }
        let looped = format!("{} (group, instant loop)", workload.name);
        if selected(&looped) {
            bench(workload, &looped, workload.hand_written, false);
        }
        let per_unit = format!("{} (per-unit ticks)", workload.name);
        if selected(&per_unit) {
            bench(workload, &per_unit, workload.per_unit, true);
        }
    }
    if selected("baseline: bare dynamic calls") {
        baseline_dyn_calls();
    }
}
