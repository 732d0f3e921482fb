//! Back-end benchmark: compile latency (front end, lowering, JIT) for
//! designs of 10, 1,000 and 10,000 unit instances, and the JIT's speed-up
//! over the interpreter on an arithmetic-heavy design.
//!
//! Run with `cargo bench --bench jit`. Each figure is the median, min and
//! max of several runs, in wall-clock milliseconds (compile) or nanoseconds
//! per unit tick (run).

use std::sync::Arc;
use std::time::Instant;

use chronon_compiler::lower::lower;
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_runtime::{DomainId, RunLimit, Stop};

/// A unit with some arithmetic, a register array and a channel, and a top
/// system with `n` instances in `n / 2` producer-consumer pairs.
fn design(n: usize) -> String {
    format!(
        r#"
clock core = 1 GHz;

fn mix(x: u32) -> u32 {{
    let y: u32 = x ^ (x >> 16);
    return y * 0x45d9f3b;
}}

unit Worker {{
    out tx: u32;
    reg acc: u32 = 1;
    reg hist: [u32; 4];
    counter sent;
    tick {{
        let a: u32 = mix(acc);
        let b: u32 = mix(a + 7) ^ (a / ((acc & 15) + 1));
        acc <= b - (a % 13);
        hist[acc & 3] <= hist[acc & 3] + b;
        if tx.can_send() {{ tx.send(b); sent += 1; }}
    }}
}}

unit Sink {{
    in rx: u32;
    reg sum: u32;
    tick {{
        if let Some(v) = rx.recv() {{ sum <= sum + mix(v); }}
    }}
}}

system Top {{
    for i in 0..{pairs} {{
        inst w[i]: Worker on core;
        inst s[i]: Sink on core;
        connect w[i].tx -> s[i].rx latency 1 capacity 2;
    }}
}}
"#,
        pairs = n / 2
    )
}

fn stats(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

fn compile_latency() {
    println!("compile latency, ms: median [min, max]");
    for (n, reps) in [(10usize, 7usize), (1_000, 5), (10_000, 3)] {
        let text = design(n);
        let (mut front, mut low, mut jit) = (Vec::new(), Vec::new(), Vec::new());
        let mut opt = Vec::new();
        for _ in 0..reps {
            let mut sources = SourceMap::new();
            sources.add("bench.chr", text.clone());
            let t = Instant::now();
            let compiled = compile(
                &mut sources,
                &CompileOptions {
                    require_top: true,
                    ..Default::default()
                },
            );
            front.push(t.elapsed().as_secs_f64() * 1e3);
            let d = compiled.design.expect("bench design compiles");
            let t = Instant::now();
            let program = lower(&d, &sources).expect("lowers");
            low.push(t.elapsed().as_secs_f64() * 1e3);
            // `ir::opt`'s share of lowering, estimated by running it again
            // on the lowered program: the same walks and maps, fewer
            // rewrites.
            let mut again = program.clone();
            let t = Instant::now();
            chronon_compiler::ir::opt::optimize(&mut again);
            opt.push(t.elapsed().as_secs_f64() * 1e3);
            // The JIT as `chronc run` uses it: unit shapes and the
            // per-domain group functions, compiled and bound to a built
            // runtime (`Simulator::new`), ready for the first edge.
            let program = Arc::new(program);
            let t = Instant::now();
            let bound = Simulator::new(program.clone(), EngineKind::Jit).expect("binds");
            jit.push(t.elapsed().as_secs_f64() * 1e3);
            drop(bound);
        }
        let rows = [
            ("front end", front),
            ("lowering", low),
            ("ir::opt", opt),
            ("JIT+bind", jit),
        ];
        for (what, xs) in rows {
            let (m, lo, hi) = stats(xs);
            println!("  {n:>6} instances  {what:<9} {m:>9.2} [{lo:.2}, {hi:.2}]");
        }
    }
}

fn speedup() {
    let n = 64;
    let edges = 20_000u64;
    let mut sources = SourceMap::new();
    sources.add("bench.chr", design(n));
    let d = compile(
        &mut sources,
        &CompileOptions {
            require_top: true,
            ..Default::default()
        },
    )
    .design
    .expect("bench design compiles");
    let program = Arc::new(lower(&d, &sources).expect("lowers"));
    println!("run speed, {n} instances x {edges} edges, ns per unit tick: median [min, max]");
    let mut medians = Vec::new();
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        let mut xs = Vec::new();
        let mut digest = None;
        for _ in 0..5 {
            let mut sim = Simulator::new(program.clone(), engine).expect("builds");
            let t = Instant::now();
            let stop = sim.sim.run(RunLimit::Edges {
                domain: DomainId(0),
                count: edges,
            });
            xs.push(t.elapsed().as_secs_f64() * 1e9 / (edges as f64 * n as f64));
            assert_eq!(stop, Stop::LimitReached);
            let d = sim.digest();
            assert!(digest.is_none_or(|x| x == d), "runs differ");
            digest = Some(d);
        }
        let (m, lo, hi) = stats(xs);
        println!("  {engine:<7?} {m:>8.1} [{lo:.1}, {hi:.1}]");
        medians.push(m);
    }
    println!(
        "  JIT speed-up over the interpreter: {:.2}x",
        medians[0] / medians[1]
    );
}

/// A unit with a memory of `n` 16-bit elements (a register array with an
/// initializer), read and written at run-time indices every tick.
fn memory_design(n: u32) -> String {
    format!(
        r#"
clock core = 1 GHz;
const N: u32 = {n};

unit Mem {{
    reg m: [u16; N] = [3; N];
    reg i: u32 = 0;
    reg acc: u64 = 0;
    tick {{
        let a: u32 = (i * 2654435761) % N;
        m[a] <= m[a] + (i as u16) + 1;
        acc <= acc + (m[(a + 7) % N] as u64);
        i <= i + 1;
    }}
}}

system Top {{ inst u: Mem on core; }}
"#
    )
}

/// Compile time by array size: front end, lowering and JIT + bind of
/// [`memory_design`] for 2^10 to 2^20 elements, wall and thread CPU time,
/// then the time per edge over 2,000 edges on the JIT. `CHRONON_BENCH_REPS`
/// sets the repetitions (default 5).
fn array_compile() {
    use chronon_suite::measure::thread_cpu_ns;
    let reps: usize = std::env::var("CHRONON_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let edges = 2_000u64;
    println!(
        "compile time by array size (u16 elements), ms: median [min, max], wall / thread CPU; \
         run: us per edge (JIT, {edges} edges)"
    );
    for bits in [10u32, 14, 17, 20] {
        let n = 1u32 << bits;
        let text = memory_design(n);
        let mut rows: [(&str, Vec<f64>, Vec<f64>); 4] = [
            ("front end", Vec::new(), Vec::new()),
            ("lowering", Vec::new(), Vec::new()),
            ("JIT+bind", Vec::new(), Vec::new()),
            ("run/edge", Vec::new(), Vec::new()),
        ];
        let timed = |row: usize,
                     rows: &mut [(&str, Vec<f64>, Vec<f64>); 4],
                     f: &mut dyn FnMut(),
                     scale: f64| {
            let (t, c) = (Instant::now(), thread_cpu_ns());
            f();
            rows[row].1.push(t.elapsed().as_secs_f64() * 1e3 * scale);
            rows[row].2.push((thread_cpu_ns() - c) as f64 / 1e6 * scale);
        };
        for _ in 0..reps {
            let mut sources = SourceMap::new();
            sources.add("bench.chr", text.clone());
            let mut compiled = None;
            let options = CompileOptions {
                require_top: true,
                ..Default::default()
            };
            timed(
                0,
                &mut rows,
                &mut || compiled = Some(compile(&mut sources, &options)),
                1.0,
            );
            let d = compiled
                .and_then(|c| c.design)
                .expect("bench design compiles");
            let mut program = None;
            timed(
                1,
                &mut rows,
                &mut || program = Some(lower(&d, &sources).expect("lowers")),
                1.0,
            );
            let program = Arc::new(program.expect("lowered"));
            let mut sim = None;
            timed(
                2,
                &mut rows,
                &mut || {
                    sim = Some(Simulator::new(program.clone(), EngineKind::Jit).expect("binds"));
                },
                1.0,
            );
            let mut sim = sim.expect("built");
            // Microseconds per edge: milliseconds * 1000 / edges.
            timed(
                3,
                &mut rows,
                &mut || {
                    let stop = sim.sim.run(RunLimit::Edges {
                        domain: DomainId(0),
                        count: edges,
                    });
                    assert_eq!(stop, Stop::LimitReached);
                },
                1e3 / edges as f64,
            );
        }
        for (what, wall, cpu) in rows {
            let (m, lo, hi) = stats(wall);
            let (cm, clo, chi) = stats(cpu);
            println!(
                "  2^{bits:<2} {what:<9} {m:>9.2} [{lo:.2}, {hi:.2}]  cpu {cm:>9.2} [{clo:.2}, {chi:.2}]"
            );
        }
    }
}

fn main() {
    // `cargo bench --bench jit -- arrays` runs only the array-size rows.
    if std::env::args().skip(1).any(|a| a == "arrays") {
        array_compile();
        return;
    }
    compile_latency();
    speedup();
    array_compile();
}
