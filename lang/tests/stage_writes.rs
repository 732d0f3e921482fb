//! The compile-time stage-register check (E0321): a constant pipe written or
//! retained twice on one control-flow path is an error when it is provable;
//! paths that only might write twice are left to the run-time fault.

use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};

/// Tick bodies of a unit with `in rx: u32`, `reg mode: u2`, `reg go: bool`
/// and `stage s: u32 pipes 2`, and how many E0321 errors each must give.
const CASES: &[(&str, usize)] = &[
    // Straight-line paths.
    ("s.write(0, 1); s.write(1, 2);", 0),
    ("s.write(0, 1); s.retain(0);", 1),
    // One arm only, or arms that write different pipes: not provable.
    ("if go { s.write(0, 1); } s.write(0, 2);", 0),
    (
        "if go { s.write(0, 1); } else { s.write(1, 1); } s.write(0, 2);",
        0,
    ),
    (
        "if go { s.write(0, 1); } else if mode == 1 { s.write(0, 2); } s.retain(0);",
        0,
    ),
    // Every arm of a complete if/else chain writes: provable.
    (
        "if go { s.write(0, 1); } else { s.retain(0); } s.write(0, 2);",
        1,
    ),
    (
        "if go { s.write(0, 1); } else if mode == 1 { s.write(0, 2); } else { s.retain(0); } s.retain(0);",
        1,
    ),
    // Nested completes.
    (
        "if go { if mode == 0 { s.write(0, 1); } else { s.retain(0); } } else { s.retain(0); } s.retain(0);",
        1,
    ),
    // A write before the branch and one in an arm.
    ("s.write(1, 1); if go { s.retain(1); }", 1),
    // Option arms: both Some and None (or a wildcard) must be present.
    (
        "if let Some(v) = rx.recv() { s.write(0, v); } else { s.retain(0); } s.retain(0);",
        1,
    ),
    (
        "match rx.recv() { Some(v) => { s.write(0, v); } None => { s.retain(0); } } s.retain(0);",
        1,
    ),
    (
        "match rx.recv() { Some(v) => { s.write(0, v); } _ => { s.retain(0); } } s.retain(0);",
        1,
    ),
    (
        "match rx.recv() { Some(v) => { s.write(0, v); } } s.retain(0);",
        0,
    ),
    // Integer matches need a wildcard; bool matches may list both values.
    (
        "match mode { 0 => { s.write(0, 1); } _ => { s.retain(0); } } s.retain(0);",
        1,
    ),
    (
        "match mode { 0 => { s.write(0, 1); } 1 => { s.retain(0); } } s.retain(0);",
        0,
    ),
    (
        "match go { true => { s.write(0, 1); } false => { s.retain(0); } } s.retain(0);",
        1,
    ),
    // Loops: two or more iterations repeat every write on the body's paths.
    ("for i in 0..1 { s.write(0, i); }", 0),
    ("for i in 0..3 { s.write(0, i); }", 1),
    ("for i in 0..2 { s.write(i, i); }", 0),
    ("for i in 0..2 { if go { s.write(0, i); } }", 0),
    (
        "for i in 0..2 { if go { s.write(0, i); } else { s.retain(0); } }",
        1,
    ),
    ("for i in 0..2 { for j in 0..1 { s.retain(1); } }", 1),
    // A loop that runs writes on the path after it; one that does not, not.
    ("for i in 0..1 { s.write(0, i); } s.retain(0);", 1),
    ("for i in 0..0 { s.write(0, i); } s.retain(0);", 0),
    // Dynamic pipes are the run-time fault's job.
    ("s.write(mode as u32 & 1, 1); s.write(0, 2);", 0),
];

fn stage_errors(tick: &str) -> usize {
    let src = format!(
        "clock core = 1 GHz;\nunit U {{\n    in rx: u32;\n    reg mode: u2 = 0;\n    reg go: bool = false;\n    stage s: u32 pipes 2;\n    tick {{ mode <= mode + 1; go <= !go; {tick} }}\n}}\n"
    );
    let mut sources = SourceMap::new();
    sources.add("stage.chr", src);
    let result = compile(&mut sources, &CompileOptions::default());
    let errors: Vec<_> = result
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with('E'))
        .collect();
    assert!(
        errors.iter().all(|d| d.code == "E0321"),
        "`{tick}`: unexpected errors {errors:?}"
    );
    errors.len()
}

#[test]
fn provable_double_writes_are_reported_and_others_are_not() {
    let mut wrong = Vec::new();
    for &(tick, want) in CASES {
        let got = stage_errors(tick);
        if got != want {
            wrong.push(format!("`{tick}`: {got} E0321 errors, expected {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
