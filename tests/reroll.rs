//! Long `for` loops with constant bounds kept as loops (`--exec reroll`,
//! `compiler/src/lower/reroll.rs`) against the same loops unrolled: every
//! example, test design, workload, peer and wide-integer design (whose
//! divisions are loops too), and designs of long
//! loops written here, run with rerolling on and off on both engines, and
//! their stop, instants, time, edges, counters, faults, every register's
//! final value and the printed lines must be equal. (The state digest may
//! differ: a register written inside a kept loop keeps a whole commit, so
//! the slots are laid out otherwise, as `ir-opt` does.) The long-loop
//! designs must actually keep loops, so that the comparison is not of two
//! unrolled programs.

use std::path::Path;

use chronon_compiler::config::ExecConfig;
use chronon_compiler::ir::Stmt;
use chronon_compiler::simulate::EngineKind;
use chronon_suite::designs::{RunArgs, chr_files, elaborate, parse_run_args, run_printing};

/// The report of `text` under `args`, rerolling as asked, with what it
/// printed; host timing, the digest and the workers left out.
fn outcome(label: &str, text: &str, args: &RunArgs, engine: EngineKind, reroll: bool) -> String {
    let exec = ExecConfig {
        reroll,
        ..ExecConfig::default()
    };
    let (report, printed) = run_printing(label, text, args, engine, exec);
    let mut json = serde_json::to_value(&report).expect("a report serializes");
    let obj = json.as_object_mut().expect("an object");
    obj.retain(|k, _| {
        !k.contains("wall") && !k.contains("per_second") && k != "parallel" && k != "state_digest"
    });
    obj.insert("printed".into(), printed.into());
    json.to_string()
}

/// Whether the program of `text` has a loop in some tick, rerolling or not.
fn has_loop(label: &str, text: &str, reroll: bool) -> bool {
    let (design, sources) = elaborate(label, text);
    let seed = chronon_compiler::lower::random::DEFAULT_SEED;
    let program = chronon_compiler::lower::lower_for_run(&design, &sources, seed, (true, reroll))
        .expect("lowers");
    program
        .units
        .iter()
        .any(|u| u.body.iter().any(|s| matches!(s, Stmt::While { .. })))
}

fn header(path: &Path, text: &str) -> RunArgs {
    let args = text
        .lines()
        .map_while(|l| l.strip_prefix("//"))
        .find_map(|l| l.trim().strip_prefix("run:"))
        .unwrap_or("--cycles 300");
    parse_run_args(path, args.trim())
}

fn assert_reroll_agrees(path: &Path, text: &str) {
    let label = path.display().to_string();
    let args = header(path, text);
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        let kept = outcome(&label, text, &args, engine, true);
        let unrolled = outcome(&label, text, &args, engine, false);
        assert!(
            kept == unrolled,
            "{label} on {engine:?}: rerolled\n{kept}\nunrolled\n{unrolled}"
        );
    }
}

#[test]
fn long_loops_stay_loops_and_compute_what_unrolled_loops_do() {
    for file in ["tests/designs/long_loops.chr", "benches/loops/unrolled.chr"] {
        let text = std::fs::read_to_string(file).expect("readable");
        assert!(has_loop(file, &text, true), "{file}: no loop was kept");
        assert!(
            !has_loop(file, &text, false),
            "{file}: a loop was kept unrolling"
        );
        assert_reroll_agrees(Path::new(file), &text);
    }
}

#[test]
fn every_design_runs_alike_rerolled_or_unrolled() {
    let mut files = chr_files("examples");
    for dir in [
        "tests/designs",
        "tests/user_designs",
        "benches/workloads",
        "benches/peers",
        "benches/wide",
    ] {
        files.extend(chr_files(dir));
    }
    assert!(files.len() > 40, "{} designs", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        assert_reroll_agrees(&path, &text);
    }
}

/// A fault inside a kept loop stops the run where the unrolled loop's
/// does, with the same unit, construct, cycle and message.
#[test]
fn a_fault_inside_a_kept_loop_is_the_unrolled_loops_fault() {
    let text = "clock c = 1 GHz;\n\
                unit U {\n    reg n: u32;\n    reg a: [u32; 100];\n    tick {\n        \
                n <= n + 1;\n        for i in 0..3000 {\n            \
                assert(i != 2000 || n != 7, \"the seventh edge stops at 2000\");\n            \
                a[i % 100] <= a[i % 100] + i;\n        }\n    }\n}\n\
                system T { inst u: U on c; }\n";
    assert!(has_loop("fault", text, true));
    let args = parse_run_args(Path::new("fault"), "--cycles 20");
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        let kept = outcome("fault", text, &args, engine, true);
        assert!(kept.contains("\"stop\":\"fault\""), "{kept}");
        assert_eq!(
            kept,
            outcome("fault", text, &args, engine, false),
            "{engine:?}"
        );
    }
}
