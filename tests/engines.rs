//! The interpreter and the JIT agree: on 1,000 random IR programs (mixed
//! widths and signedness, wrapping arithmetic, division, shifts, casts,
//! selects, register arrays with dynamic indices, stage registers, every
//! kind of port, traces, asserts), compared slot by slot and host call by
//! host call after every tick; and on every design under `examples/` and
//! `tests/designs/`, compared by state digest after every instant.

use std::sync::Arc;

use chronon_compiler::lower::lower;
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_compiler::testing::differential::compare_engines_verbose;
use chronon_compiler::testing::random_program::random_program;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_runtime::Stop;
use chronon_suite::designs::{chr_files, lower_text, step_instant};

#[test]
fn engines_agree_on_random_programs() {
    for seed in 0..1000u64 {
        let program = random_program(seed);
        if let Err(e) = compare_engines_verbose(&program, 8, seed.wrapping_mul(0x9E37_79B9)) {
            panic!("seed {seed}: {e}");
        }
    }
}

fn designs() -> Vec<std::path::PathBuf> {
    let mut out = chr_files("examples");
    out.extend(chr_files("tests/designs"));
    out
}

/// Compiles `text`, runs it on both engines in lockstep, one instant at a
/// time for at most `max_instants`, and panics with `label` and the instant
/// if the stop reasons or the state digests ever differ.
fn assert_engines_agree_per_instant(label: &str, text: &str, max_instants: u64) {
    let program = Arc::new(lower_text(label, text));
    let mut sims: Vec<Simulator> = [EngineKind::Interp, EngineKind::Jit]
        .into_iter()
        .map(|e| Simulator::new(program.clone(), e).expect("builds"))
        .collect();
    for instant in 0..max_instants {
        let Some(stops) = step_instant(&mut sims) else {
            break;
        };
        assert_eq!(
            stops[0], stops[1],
            "{label}: stop reasons differ at instant {instant}\n{text}"
        );
        assert_eq!(
            sims[0].digest(),
            sims[1].digest(),
            "{label}: states differ at instant {instant}\n{text}"
        );
        assert_eq!(
            sims[0].sim.instants_done(),
            instant + 1,
            "{label}: one instant per step"
        );
        if stops[0] != Stop::LimitReached {
            break;
        }
    }
}

#[test]
fn engines_agree_after_every_instant_on_designs() {
    for path in designs() {
        let text = std::fs::read_to_string(&path).expect("readable design");
        let label = path.with_extension("").display().to_string();
        assert_engines_agree_per_instant(&label, &text, 600);
    }
}

/// Instances of one unit share one native function: the JIT compiles code
/// relative to each instance's slots, ports, traces and fault sites.
#[test]
fn instances_of_one_unit_share_native_code() {
    let path = "tests/designs/semantics_selfcheck.chr";
    let mut sources = SourceMap::new();
    sources.add(
        path,
        std::fs::read_to_string(path).expect("readable design"),
    );
    let compiled = compile(
        &mut sources,
        &CompileOptions {
            require_top: true,
            ..CompileOptions::default()
        },
    );
    let design = compiled.design.expect("compiles");
    let program = lower(&design, &sources).expect("lowers");
    assert_eq!(program.units.len(), 2);
    let jit =
        chronon_compiler::jit::Jit::compile(&program, chronon_compiler::jit::JitConfig::default())
            .expect("jit");
    assert_eq!(jit.function_count(), 1);
}

/// Random `.chr` designs (several clocks, channels of several latencies,
/// CDC FIFOs of both read styles, stage registers, mixed-width arithmetic)
/// compile, and both engines agree after every instant.
#[test]
fn engines_agree_on_random_designs() {
    for seed in 0..1000u64 {
        let text = chronon_compiler::testing::random_design::random_design(seed);
        assert_engines_agree_per_instant(&format!("random{seed}"), &text, 60);
    }
}
