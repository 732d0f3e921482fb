//! The scheduler's three reference workloads three ways, side by side in one
//! process: hand-written Rust ticks, the `.chr` twin on the JIT and on the
//! interpreter. Reports nanoseconds per unit tick (median, min, max; wall and
//! thread CPU time) and the ratios JIT / hand-written and interpreter / JIT.
//!
//! Run with `cargo bench --bench jit_vs_native`. Designs are built and
//! compiled outside the timed region; only `Simulation::run` is timed.
//!
//! Where a workload can run ahead (contract §7: its domains exchange
//! nothing), the hand-written and JIT rows run ahead, and the rows marked
//! "instant loop" run the same designs with run-ahead off
//! (`Simulation::set_run_ahead(false)`), side by side in the same process.

use std::time::Instant;

use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_runtime::{Simulation, Stop};
use chronon_suite::measure::{Summary, summarize, thread_cpu_ns};
use chronon_suite::workloads::{WORKLOADS, Workload};

const REPETITIONS: usize = 9;

/// Wall and thread CPU nanoseconds per unit tick over the repetitions.
struct Figures {
    wall: Summary,
    cpu: Summary,
}

/// Calls `run_once` `REPETITIONS` times; each returns wall ns, CPU ns and unit ticks.
fn measure(workload: &Workload, mut run_once: impl FnMut() -> (u64, u64, u64)) -> Figures {
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..REPETITIONS {
        let (wall_ns, cpu_ns, ticks) = run_once();
        assert!(ticks > 0, "{}: no unit ticks", workload.name);
        wall.push(wall_ns as f64 / ticks as f64);
        cpu.push(cpu_ns as f64 / ticks as f64);
    }
    Figures {
        wall: summarize(wall),
        cpu: summarize(cpu),
    }
}

/// Times one run of `sim` to `limit`; returns wall ns, CPU ns and unit ticks.
fn timed_run(
    workload: &Workload,
    sim: &mut Simulation,
    limit: chronon_runtime::RunLimit,
) -> (u64, u64, u64) {
    let (w0, c0) = (Instant::now(), thread_cpu_ns());
    let stop = std::hint::black_box(sim.run(limit));
    let (c1, w1) = (thread_cpu_ns(), Instant::now());
    assert_eq!(stop, Stop::LimitReached, "{}", workload.name);
    (
        (w1 - w0).as_nanos() as u64,
        c1 - c0,
        workload.unit_ticks(sim),
    )
}

fn print_row(what: &str, f: &Figures) {
    println!(
        "  {what:<12} ns/unit tick wall median {:>6.2} (min {:>6.2}, max {:>6.2}) | thread CPU median {:>6.2} (min {:>6.2}, max {:>6.2})",
        f.wall.median, f.wall.min, f.wall.max, f.cpu.median, f.cpu.min, f.cpu.max
    );
}

fn bench(workload: &Workload) {
    let program = workload.program();
    let limit = workload.chr_limit(&program, workload.bench_edges);
    let mut digests = Vec::new();
    let hand_with = |ahead: bool| {
        measure(workload, || {
            let (mut sim, limit) = (workload.hand_written)(workload.bench_edges);
            sim.set_run_ahead(ahead);
            timed_run(workload, &mut sim, limit)
        })
    };
    let (hand, hand_loop) = (hand_with(true), hand_with(false));
    let mut on_engine = |engine: EngineKind, ahead: bool| {
        measure(workload, || {
            let mut sim = Simulator::new(program.clone(), engine).expect("workload builds");
            if !ahead {
                sim.sim.set_run_ahead(false);
            }
            let timed = timed_run(workload, &mut sim.sim, limit.clone());
            digests.push(sim.digest());
            timed
        })
    };
    let jit = on_engine(EngineKind::Jit, true);
    let jit_loop = on_engine(EngineKind::Jit, false);
    let interp = on_engine(EngineKind::Interp, false);
    assert!(
        digests.windows(2).all(|w| w[0] == w[1]),
        "{}: runs or engines disagree",
        workload.name
    );
    println!("{}", workload.name);
    print_row("hand-written", &hand);
    print_row("JIT", &jit);
    print_row("interpreter", &interp);
    print_row("hand, loop", &hand_loop);
    print_row("JIT, loop", &jit_loop);
    println!(
        "  JIT / hand-written: wall {:.2}x, CPU {:.2}x | interpreter / JIT: wall {:.2}x, CPU {:.2}x",
        jit.wall.median / hand.wall.median,
        jit.cpu.median / hand.cpu.median,
        interp.wall.median / jit.wall.median,
        interp.cpu.median / jit.cpu.median,
    );
    println!(
        "  instant loop (run-ahead off): JIT / hand-written CPU {:.2}x | run-ahead speed-up CPU: hand-written {:.2}x, JIT {:.2}x",
        jit_loop.cpu.median / hand_loop.cpu.median,
        hand_loop.cpu.median / hand.cpu.median,
        jit_loop.cpu.median / jit.cpu.median,
    );
}

fn main() {
    // `cargo test --benches` runs this binary too; only measure under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // Other arguments select workloads by a part of their name (for
    // instruction counts under callgrind: `... --bench S=2`).
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!("JIT versus hand-written ticks, {REPETITIONS} repetitions each (medians compared)");
    for workload in &WORKLOADS {
        if filters.is_empty() || filters.iter().any(|f| workload.name.contains(f.as_str())) {
            bench(workload);
        }
    }
}
