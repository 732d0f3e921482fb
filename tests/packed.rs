//! The packed mirror of narrow registers in run-ahead loops
//! (`compiler/src/jit/packed.rs`): random `.chr` pipelines and element-wise
//! updates of registers of every width from 2 to 64 bits, with conditional
//! updates, wide registers beside narrow ones, several units and clocks,
//! lowered with and without `ir::opt` (in place, and through next slots
//! and register copies). Each runs on the JIT with run-ahead (calls of
//! fewer than 8 edges take the plain loop, longer ones the packed one),
//! the JIT without it and the interpreter, through odd limits: every slot
//! must agree after every limit. Designs with a host call (a trace) or
//! without enough narrow vector groups must not be packed.

use std::sync::Arc;

use chronon_compiler::ir::Program;
use chronon_compiler::jit::{packed_in_registers, packed_slots};
use chronon_compiler::testing::rng::Rng;
use chronon_runtime::{DomainId, RunLimit};
use chronon_suite::agree::run_ahead_three;
use chronon_suite::designs::{lower_text, lower_text_unoptimized, random_expr};

/// What a random design holds.
struct Design {
    label: String,
    text: String,
    /// It has a trace: a host call in every unit's code.
    traced: bool,
}

/// A unit of `n` registers of one type updated from the stage before (or
/// after) and element-wise, a conditional update of a second array, a wide
/// register fed by narrow ones, and maybe a trace; one to three instances
/// on one or two clocks.
fn design(seed: u64) -> Design {
    let mut rng = Rng::new(seed);
    // Mostly narrow types, where the mirror applies.
    let width = if rng.one_in(4) {
        33 + rng.below(32) as u32
    } else {
        // From 2 bits: `src + 1` needs the literal 1 to fit (`i1` holds 0 and -1).
        2 + rng.below(31) as u32
    };
    let ty = format!("{}{width}", if rng.one_in(2) { 'i' } else { 'u' });
    let n = *rng.pick(&[3u32, 16, 31, 32, 33, 40, 64, 100]);
    let y = random_expr(&mut rng, &ty, width, &["x", "a"], 3, 3);
    let out = random_expr(&mut rng, &ty, width, &["y", "x"], 2, 3);
    let step = random_expr(&mut rng, &ty, width, &["a[i]"], 2, 3);
    let cond_step = random_expr(&mut rng, &ty, width, &["b[i]", "a[i]"], 2, 3);
    let stages = if rng.one_in(2) {
        "r[0] <= mix(src, a[0]);\n        for i in 1..N { r[i] <= mix(r[i - 1], a[i]); }"
    } else {
        "r[N - 1] <= mix(src, a[N - 1]);\n        for i in 0..N - 1 { r[i] <= mix(r[i + 1], a[i]); }"
    };
    // Lean: the pipeline alone (no arrays `a` and `b`), small enough for
    // its mirror to stay in registers.
    let lean = rng.one_in(2);
    let (stages, arrays, updates, last_b) = if lean {
        let stages = stages
            .replace("a[0]", "src")
            .replace("a[i]", "src")
            .replace("a[N - 1]", "src");
        (stages, String::new(), String::new(), "src")
    } else {
        (
            stages.to_string(),
            format!("reg a: [{ty}; N];\n    reg b: [{ty}; N];"),
            format!(
                "for i in 0..N {{ a[i] <= (a[i] + 1) ^ {step}; }}
        if flag {{
            for i in 0..N {{ b[i] <= {cond_step}; }}
        }}"
            ),
            "b[N - 1]",
        )
    };
    let traced = rng.one_in(5);
    let trace = if traced {
        "trace(\"r0\", v = r[0]);"
    } else {
        ""
    };
    let two_clocks = rng.one_in(3);
    let instances = 1 + rng.below(3);
    let mut insts = String::new();
    for k in 0..instances {
        let clock = if two_clocks && k == 1 { "clk2" } else { "clk" };
        let size = if k == 2 { "<N = 36>" } else { "" };
        insts.push_str(&format!("    inst s{k}: Stages{size} on {clock};\n"));
    }
    let text = format!(
        "clock clk = 1 GHz;
clock clk2 = 700 MHz;

fn mix(x: {ty}, a: {ty}) -> {ty} {{
    let y: {ty} = {y};
    return {out};
}}

unit Stages<N: u32 = {n}> {{
    reg src: {ty};
    // Between two narrow registers: `src` and `r[0]` sit side by side
    // in the packed mirror, not in the state.
    reg wide: u64;
    reg r: [{ty}; N];
    {arrays}
    reg flag: bool;
    // Stored only on some edges (a branch joins the packed lanes).
    reg c: {ty};
    counter checksum;

    tick {{
        src <= src + 1;
        {stages}
        {updates}
        if flag {{
            c <= c + src;
        }}
        flag <= !flag;
        wide <= (wide << 3) ^ (r[0] as u64) ^ ({last_b} as u64) ^ (c as u64);
        checksum += r[0] as u64;
        {trace}
    }}
}}

system Top {{
{insts}}}
"
    );
    Design {
        label: format!("packed{seed} ({ty}, N = {n}, {instances} units, lean {lean})"),
        text,
        traced,
    }
}

/// The design lowered as `chronc` does, or without `ir::opt`.
fn lower_design(d: &Design, optimize: bool) -> Program {
    if optimize {
        lower_text(&d.label, &d.text)
    } else {
        lower_text_unoptimized(&d.label, &d.text)
    }
}

/// Slots the run-ahead loops keep packed, over the program's domains
/// (one group per domain, as `simulate` makes them), and how many of
/// those groups keep them in registers.
fn packed(program: &Program) -> (usize, usize) {
    (0..program.domains.len() as u32)
        .map(|d| {
            let units: Vec<u32> = (0..program.units.len() as u32)
                .filter(|u| program.units[*u as usize].domain == d)
                .collect();
            (
                packed_slots(program, &units),
                usize::from(packed_in_registers(program, &units)),
            )
        })
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Runs the JIT with run-ahead, the JIT without and the interpreter
/// through the same limits, comparing every slot, the edges and the time
/// after each; returns whether the first could run ahead.
fn assert_agree(label: &str, program: Program, text: &str) -> bool {
    let program = Arc::new(program);
    let mut sims = run_ahead_three(program.clone());
    let ahead = sims[0].sim.runs_ahead();
    // Calls of 1 to 7 edges take the plain loop, longer ones the packed.
    for count in [1u64, 2, 7, 15, 16, 40, 300, 1_000] {
        let limit = RunLimit::Edges {
            domain: DomainId(0),
            count,
        };
        let stops: Vec<_> = sims.iter_mut().map(|s| s.sim.run(limit.clone())).collect();
        for k in 1..3 {
            assert_eq!(stops[0], stops[k], "{label} at {count}: stop, run {k}");
            let (a, b) = (sims[0].state(), sims[k].state());
            if let Some(s) = (0..a.len()).find(|s| a[*s] != b[*s]) {
                panic!(
                    "{label} at {count} edges: slot {s} ({}) is {:#x} with run-ahead, {:#x} in run {k}\n{text}",
                    program.slots[s].name, a[s], b[s]
                );
            }
            assert_eq!(
                sims[0].sim.edges_done(DomainId(0)),
                sims[k].sim.edges_done(DomainId(0)),
                "{label} at {count}: edges, run {k}"
            );
            assert_eq!(
                sims[0].sim.now(),
                sims[k].sim.now(),
                "{label} at {count}: time"
            );
        }
    }
    ahead
}

#[test]
fn packed_loops_agree_with_the_interpreter() {
    let (mut packed_designs, mut unpacked_narrow, mut in_registers) = (0, 0, 0);
    for seed in 0..100 {
        let d = design(seed);
        for optimize in [true, false] {
            let program = lower_design(&d, optimize);
            let label = format!("{}{}", d.label, if optimize { "" } else { " unoptimized" });
            let (slots, registers) = packed(&program);
            if d.traced {
                assert_eq!(slots, 0, "{label}: a group with a host call was packed");
            }
            let wide = program
                .slots
                .iter()
                .all(|s| s.ty.width > 32 || s.name.contains("flag"));
            if wide {
                assert_eq!(slots, 0, "{label}: nothing narrow to pack\n{}", d.text);
            }
            let ahead = assert_agree(&label, program, &d.text);
            if slots > 0 && ahead {
                packed_designs += 1;
                in_registers += usize::from(registers > 0);
            } else if !d.traced && ahead {
                unpacked_narrow += 1;
            }
        }
    }
    // Enough of them ran ahead on packed loops (the others are the
    // controls).
    assert!(packed_designs >= 40, "only {packed_designs} packed");
    assert!(unpacked_narrow >= 5, "only {unpacked_narrow} left unpacked");
    assert!(in_registers >= 5, "only {in_registers} in registers");
}

/// The peer pipeline: `source` and `r` are packed, nothing else (the
/// `u64` checksum stays in the state); 16 and 32 stages in registers, 256
/// in memory.
#[test]
fn the_peer_pipeline_packs_its_stages() {
    let path = "benches/peers/pipeline.chr";
    let text = std::fs::read_to_string(path).expect("readable design");
    for (n, want) in [(16u32, (17, 1)), (32, (33, 1)), (256, (257, 0))] {
        let d = Design {
            label: format!("pipeline N = {n}"),
            text: text.replace("N: u32 = 16", &format!("N: u32 = {n}")),
            traced: false,
        };
        let program = lower_design(&d, true);
        assert_eq!(packed(&program), want, "N = {n}");
        assert!(assert_agree(&d.label, program, &d.text), "N = {n}");
    }
}
