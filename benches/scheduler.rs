//! Scheduler benchmark: hand-written Rust ticks on the runtime.
//!
//! Run with `cargo bench --bench scheduler`. Each scenario is built outside the
//! timed region and run several times; the report gives the median, min and max
//! nanoseconds per unit tick, in wall time and in thread CPU time.

use chronon_runtime::{
    Clock, DesignBuilder, DomainId, FifoSpec, Picos, ReadPort, RunLimit, Simulation, Stop, TickCtx,
};
use chronon_suite::measure::{summarize, thread_cpu_ns};
use std::time::Instant;

const REPETITIONS: usize = 9;

fn mhz(f: i128, phase_ps: i128) -> Clock {
    Clock::from_frequency_hz(
        Picos::from_integer(f * 1_000_000),
        Picos::from_integer(phase_ps),
    )
    .expect("clock")
}

/// A trivial unit: counts its edges in a register.
fn trivial(ctx: &mut TickCtx<'_>) {
    ctx.set_reg(0, ctx.reg(0) + 1);
}

/// One 1 GHz clock with two trivial units.
fn one_clock() -> (Simulation, RunLimit) {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", mhz(1000, 0));
    for path in ["top.a", "top.b"] {
        let u = b.unit(path, clk, &[0]);
        b.set_tick(u, trivial).expect("unit");
    }
    let limit = RunLimit::Edges {
        domain: clk,
        count: 500_000,
    };
    (b.build().expect("design"), limit)
}

/// Two clocks (914 and 1326 MHz, 137 ps phase), one trivial unit each; with
/// `fifo`, the units instead move traffic through a depth-16, S=2 CDC FIFO.
fn two_clocks(fifo: bool) -> (Simulation, RunLimit) {
    let mut b = DesignBuilder::new();
    let slow = b.domain("slow", mhz(914, 0));
    let fast = b.domain("fast", mhz(1326, 137));
    let w = b.unit("top.writer", fast, &[0]);
    let r = b.unit("top.reader", slow, &[0]);
    if fifo {
        let f = b.fifo(FifoSpec {
            name: "top.cdc".into(),
            writer: w,
            reader: r,
            depth: 16,
            sync: 2,
            width: 1,
            read_port: ReadPort::Registered,
        });
        b.set_tick(w, move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            if ctx.fifo_try_send(f, &[n]) {
                ctx.set_reg(0, n + 1);
            }
        })
        .expect("unit");
        b.set_tick(r, move |ctx: &mut TickCtx<'_>| {
            let mut item = [0];
            if ctx.fifo_take(f, &mut item) {
                ctx.set_reg(0, ctx.reg(0).wrapping_add(item[0]));
            }
            ctx.fifo_request(f);
        })
        .expect("unit");
    } else {
        b.set_tick(w, trivial).expect("unit");
        b.set_tick(r, trivial).expect("unit");
    }
    // 296,000 fast edges come with about 204,000 slow ones: ~500,000 instants.
    let limit = RunLimit::Edges {
        domain: fast,
        count: 296_000,
    };
    (b.build().expect("design"), limit)
}

fn unit_ticks(sim: &Simulation, domains: usize, units_per_domain: u64) -> u64 {
    (0..domains as u32)
        .map(|d| sim.edges_done(DomainId(d)) * units_per_domain)
        .sum()
}

fn bench(
    name: &str,
    build: impl Fn() -> (Simulation, RunLimit),
    domains: usize,
    units_per_domain: u64,
) {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut ticks = 0;
    let mut instants = 0;
    for _ in 0..REPETITIONS {
        let (mut sim, limit) = build();
        let (w0, c0) = (Instant::now(), thread_cpu_ns());
        let stop = std::hint::black_box(sim.run(limit));
        let (c1, w1) = (thread_cpu_ns(), Instant::now());
        assert_eq!(stop, Stop::LimitReached);
        ticks = unit_ticks(&sim, domains, units_per_domain);
        instants = sim.instants_done();
        wall.push((w1 - w0).as_nanos() as f64 / ticks as f64);
        cpu.push((c1 - c0) as f64 / ticks as f64);
    }
    let (w, c) = (summarize(wall), summarize(cpu));
    println!(
        "{name:<34} {instants:>8} instants {ticks:>8} unit ticks | ns/unit tick wall median {:.2} (min {:.2}, max {:.2}) | thread CPU median {:.2} (min {:.2}, max {:.2})",
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
        "{:<34} {:>8}          {:>8} calls      | ns/call      wall median {:.2} (min {:.2}, max {:.2}) | thread CPU median {:.2} (min {:.2}, max {:.2})",
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
    println!("scheduler benchmark, {REPETITIONS} repetitions each");
    bench("one clock, two trivial units", one_clock, 1, 2);
    bench(
        "two clocks 914/1326 MHz, no FIFO",
        || two_clocks(false),
        2,
        1,
    );
    bench("two clocks + depth-16 S=2 FIFO", || two_clocks(true), 2, 1);
    baseline_dyn_calls();
}
