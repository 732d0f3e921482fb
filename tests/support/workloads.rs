//! The scheduler's three reference workloads as hand-written Rust ticks, and
//! where their `.chr` twins live, for the scheduler and JIT benchmarks and the
//! test that keeps the two versions in step.

use std::path::PathBuf;
use std::sync::Arc;

use chronon_compiler::ir::Program;
use chronon_compiler::lower::lower;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_runtime::{
    Clock, DesignBuilder, DomainId, FifoSpec, Picos, ReadPort, RunLimit, Simulation, Tick, TickCtx,
    UnitId,
};

/// One reference workload: the hand-written design and its `.chr` twin.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// What the workload is, for reports.
    pub name: &'static str,
    /// The `.chr` file under `benches/workloads/`.
    pub file: &'static str,
    /// The domain whose edges the run limit counts.
    pub counted_domain: &'static str,
    /// Edges of `counted_domain` in a benchmark run.
    pub bench_edges: u64,
    /// Units on each domain, in declaration order (the same in both versions).
    pub units_per_domain: &'static [u64],
    /// Builds the hand-written design to stop after `edges` counted edges:
    /// one group tick per domain that runs the domain's units in turn, in
    /// run-ahead form where the domains exchange nothing (the runtime's
    /// cheapest way to run Rust ticks, so the best hand-written baseline).
    pub hand_written: fn(edges: u64) -> (Simulation, RunLimit),
    /// The same design with one tick per unit (the runtime's per-unit path).
    pub per_unit: fn(edges: u64) -> (Simulation, RunLimit),
}

impl Workload {
    /// The path of the `.chr` twin.
    pub fn chr_path(&self) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("benches/workloads")
            .join(self.file)
    }

    /// The `.chr` twin, compiled and lowered; panics with the diagnostics if
    /// it does not compile (the file is part of the suite, not user input).
    pub fn program(&self) -> Arc<Program> {
        let path = self.chr_path();
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut sources = SourceMap::new();
        sources.add(path.display().to_string(), text);
        let compiled = compile(
            &mut sources,
            &CompileOptions {
                require_top: true,
                ..Default::default()
            },
        );
        let Some(design) = compiled.design else {
            panic!("{}: {:?}", path.display(), compiled.diagnostics);
        };
        match lower(&design, &sources) {
            Ok(program) => Arc::new(program),
            Err(e) => panic!("{}: {e:?}", path.display()),
        }
    }

    /// The run limit for `program` (the `.chr` twin): `edges` edges of the
    /// counted domain.
    pub fn chr_limit(&self, program: &Program, edges: u64) -> RunLimit {
        let domain = program
            .domains
            .iter()
            .position(|d| d.name == self.counted_domain)
            .unwrap_or_else(|| panic!("{}: no domain {}", self.file, self.counted_domain));
        RunLimit::Edges {
            domain: DomainId(domain as u32),
            count: edges,
        }
    }
}

/// The three workloads, in the order the benchmarks report them.
pub const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "one clock, two trivial units",
        file: "one_clock.chr",
        counted_domain: "clk",
        bench_edges: 500_000,
        units_per_domain: &[2],
        hand_written: one_clock,
        per_unit: one_clock_per_unit,
    },
    Workload {
        name: "two clocks 914/1326 MHz, no FIFO",
        file: "two_clocks.chr",
        counted_domain: "fast",
        // 296,000 fast edges come with about 204,000 slow ones: ~500,000 instants.
        bench_edges: 296_000,
        units_per_domain: &[1, 1],
        hand_written: two_clocks_plain,
        per_unit: two_clocks_plain_per_unit,
    },
    Workload {
        name: "two clocks + depth-16 S=2 FIFO",
        file: "two_clocks_fifo.chr",
        counted_domain: "fast",
        bench_edges: 296_000,
        units_per_domain: &[1, 1],
        hand_written: two_clocks_fifo,
        per_unit: two_clocks_fifo_per_unit,
    },
];

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

/// A group tick of `units` trivial units, in the run-ahead form (the
/// runtime's cheapest way to run Rust ticks, so the honest best
/// hand-written baseline): it cannot stop the run, and runs many edges per
/// call with the registers in locals, each edge's additions executed (an
/// opaque `black_box` of the registers per edge keeps the compiler from
/// folding the loop into one addition; it costs a store and a load per
/// register, as the JIT's loads and stores of its state slots do).
struct TrivialGroup {
    units: usize,
}

impl Tick for TrivialGroup {
    fn tick(&mut self, ctx: &mut TickCtx<'_>) {
        for k in 0..self.units {
            ctx.enter(k);
            trivial(ctx);
        }
    }

    fn can_stop(&self) -> bool {
        false
    }

    fn tick_edges(&mut self, ctx: &mut TickCtx<'_>, n: u64) -> u64 {
        // Nothing else reads these registers between the edges, and the
        // runtime commits them after the call (see `Tick::tick_edges`).
        let mut regs = [0u64; 2];
        for (k, r) in regs.iter_mut().enumerate().take(self.units) {
            ctx.enter(k);
            *r = ctx.reg(0);
        }
        for _ in 0..n {
            for r in regs.iter_mut().take(self.units) {
                *r += 1;
            }
            regs = std::hint::black_box(regs);
        }
        for (k, r) in regs.iter().enumerate().take(self.units) {
            ctx.enter(k);
            ctx.set_reg(0, *r);
        }
        n
    }
}

/// One 1 GHz clock with two trivial units, one group tick for both.
pub fn one_clock(edges: u64) -> (Simulation, RunLimit) {
    one_clock_with(true, edges)
}

/// [`one_clock`] with a tick per unit.
pub fn one_clock_per_unit(edges: u64) -> (Simulation, RunLimit) {
    one_clock_with(false, edges)
}

fn one_clock_with(group: bool, edges: u64) -> (Simulation, RunLimit) {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", mhz(1000, 0));
    let units = ["top.a", "top.b"].map(|path| b.unit(path, clk, &[0]));
    if group {
        b.set_group_tick(&units, TrivialGroup { units: 2 })
            .expect("units");
    } else {
        for u in units {
            b.set_tick(u, trivial).expect("unit");
        }
    }
    let limit = RunLimit::Edges {
        domain: clk,
        count: edges,
    };
    (b.build().expect("design"), limit)
}

/// Two clocks (914 and 1326 MHz, 137 ps phase), one trivial unit each
/// (each domain's one unit as a group tick).
pub fn two_clocks_plain(fast_edges: u64) -> (Simulation, RunLimit) {
    two_clocks(false, true, fast_edges)
}

/// Two clocks whose units move traffic through a depth-16, S=2 CDC FIFO
/// (each domain's one unit as a group tick).
pub fn two_clocks_fifo(fast_edges: u64) -> (Simulation, RunLimit) {
    two_clocks(true, true, fast_edges)
}

/// [`two_clocks_plain`] with a tick per unit.
pub fn two_clocks_plain_per_unit(fast_edges: u64) -> (Simulation, RunLimit) {
    two_clocks(false, false, fast_edges)
}

/// [`two_clocks_fifo`] with a tick per unit.
pub fn two_clocks_fifo_per_unit(fast_edges: u64) -> (Simulation, RunLimit) {
    two_clocks(true, false, fast_edges)
}

/// Gives `unit` its tick, as a group tick of one or as its own.
fn set(b: &mut DesignBuilder, group: bool, unit: UnitId, tick: impl Tick + 'static) {
    if group {
        b.set_group_tick(&[unit], tick).expect("unit");
    } else {
        b.set_tick(unit, tick).expect("unit");
    }
}

/// Two clocks (914 and 1326 MHz, 137 ps phase), one trivial unit each; with
/// `fifo`, the units instead move traffic through a depth-16, S=2 CDC FIFO.
fn two_clocks(fifo: bool, group: bool, fast_edges: u64) -> (Simulation, RunLimit) {
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
        set(&mut b, group, w, move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            if ctx.fifo_try_send(f, &[n]) {
                ctx.set_reg(0, n + 1);
            }
        });
        set(&mut b, group, r, move |ctx: &mut TickCtx<'_>| {
            let mut item = [0];
            if ctx.fifo_take(f, &mut item) {
                ctx.set_reg(0, ctx.reg(0).wrapping_add(item[0]));
            }
            ctx.fifo_request(f);
        });
    } else if group {
        set(&mut b, group, w, TrivialGroup { units: 1 });
        set(&mut b, group, r, TrivialGroup { units: 1 });
    } else {
        set(&mut b, group, w, trivial);
        set(&mut b, group, r, trivial);
    }
    let limit = RunLimit::Edges {
        domain: fast,
        count: fast_edges,
    };
    (b.build().expect("design"), limit)
}

impl Workload {
    /// Unit ticks `sim` has done: every domain's edges times its unit count.
    pub fn unit_ticks(&self, sim: &Simulation) -> u64 {
        self.units_per_domain
            .iter()
            .enumerate()
            .map(|(d, n)| sim.edges_done(DomainId(d as u32)) * n)
            .sum()
    }
}
