//! The JIT's vectorizer (`compiler/src/jit/simd.rs`) on `.chr` designs:
//! random pipelines of registers of every width from 2 to 64 bits, signed
//! and unsigned, whose stages call one inlined mixing function, in both
//! directions and element-wise, with stage counts around the vector widths.
//! Lowered and optimized as `chronc` does (registers written in place),
//! each must vectorize, and the JIT must agree with the interpreter after
//! every tick, slot by slot.

use chronon_compiler::jit::vector_groups;
use chronon_compiler::testing::differential::compare_engines_verbose;
use chronon_compiler::testing::rng::Rng;
use chronon_suite::designs::{lower_text, random_expr};

/// A design whose tick updates `n` registers with one function of the
/// stage before (or after) and of an element of a second array; with
/// `constants`, each stage mixes in a constant of its own too.
fn design(seed: u64, constants: bool) -> (String, String, u32) {
    let mut rng = Rng::new(seed);
    let width = 2 + rng.below(63) as u32;
    let ty = format!("{}{width}", if rng.one_in(2) { 'i' } else { 'u' });
    let n = *rng.pick(&[2u32, 3, 5, 16, 31, 32, 33, 40, 64]);
    let y = random_expr(&mut rng, &ty, width, &["x", "a"], 3, 1);
    let out = random_expr(&mut rng, &ty, width, &["y", "x"], 2, 1);
    let step = random_expr(&mut rng, &ty, width, &["a[i]"], 2, 1);
    let stages = if rng.one_in(2) {
        "r[0] <= mix(src, a[0]);\n        for i in 1..N { r[i] <= mix(r[i - 1], a[i]); }"
    } else {
        "r[N - 1] <= mix(src, a[N - 1]);\n        for i in 0..N - 1 { r[i] <= mix(r[i + 1], a[i]); }"
    };
    let own = format!("^ ((i * 0x9e3779b9 + 7) as {ty})");
    let stages = match constants {
        true => stages
            .replace("mix(r[i - 1], a[i])", &format!("mix(r[i - 1] {own}, a[i])"))
            .replace("mix(r[i + 1], a[i])", &format!("mix(r[i + 1] {own}, a[i])")),
        false => stages.to_string(),
    };
    let text = format!(
        "clock clk = 1 GHz;

fn mix(x: {ty}, a: {ty}) -> {ty} {{
    let y: {ty} = {y};
    return {out};
}}

unit Stages<N: u32 = {n}> {{
    reg src: {ty};
    reg a: [{ty}; N];
    reg r: [{ty}; N];
    counter checksum;

    tick {{
        src <= src + 1;
        {stages}
        for i in 0..N {{ a[i] <= (a[i] + 1) ^ {step}; }}
        checksum += r[0] as u64;
    }}
}}

system Top {{
    inst s: Stages on clk;
}}
"
    );
    let kind = if constants { ", own constants" } else { "" };
    (format!("simd{seed} ({ty}, N = {n}{kind})"), text, n)
}

#[test]
fn vectorized_designs_agree_with_the_interpreter() {
    let mut vectorized = 0;
    for seed in 0..120 {
        let (label, text, n) = design(seed, seed % 3 == 0);
        let program = lower_text(&label, &text);
        let groups = vector_groups(&program);
        // The element-wise update `a[i] <= ...` alone makes N / 4 groups
        // (N / 2 for 64-bit lanes): from 32 stages on, enough to vectorize.
        assert!(n < 32 || groups > 0, "{label} did not vectorize\n{text}");
        if groups > 0 {
            vectorized += 1;
        }
        if let Err(e) = compare_engines_verbose(&program, 6, seed) {
            panic!("{label}: {e}\n{text}");
        }
    }
    assert!(
        vectorized >= 40,
        "only {vectorized} of 120 designs vectorized"
    );
}

/// The peer pipeline: every four 32-bit stages are one `i32x4` group (the
/// first gathers the counter), but 16 stages make too few groups to pay.
/// The same with a constant of its own in each stage (`mix(r[i - 1] ^ (i *
/// K))`, issue 16): the lanes' constants are one vector constant (the
/// groups start at stage 1, as stage 0 mixes none).
#[test]
fn the_peer_pipeline_vectorizes_in_groups_of_four() {
    let path = "benches/peers/pipeline.chr";
    let plain = std::fs::read_to_string(path).expect("readable design");
    let own = plain.replace("mix(r[i - 1])", "mix(r[i - 1] ^ (i * 0x9e3779b9))");
    assert_ne!(own, plain, "the stage statement changed");
    for (n, groups, text) in [
        (16u32, 0usize, &plain),
        (32, 8, &plain),
        (256, 64, &plain),
        // Stage 0 mixes no constant, so the groups start at stage 1.
        (64, 15, &own),
        (256, 63, &own),
    ] {
        let program = lower_text(path, &text.replace("N: u32 = 16", &format!("N: u32 = {n}")));
        assert_eq!(vector_groups(&program), groups, "N = {n}");
        compare_engines_verbose(&program, 8, 1).expect("engines agree");
    }
}

/// `benches/consts/pipeline_consts.chr`, the benchmark of stages with
/// constants of their own: at 256 stages, 63 groups of four (stage 0 mixes
/// no constant), and the engines agree.
#[test]
fn the_constants_benchmark_vectorizes_and_agrees() {
    let path = "benches/consts/pipeline_consts.chr";
    let text = std::fs::read_to_string(path).expect("readable design");
    let program = lower_text(path, &text.replace("N: u32 = 16", "N: u32 = 256"));
    assert_eq!(vector_groups(&program), 63);
    compare_engines_verbose(&program, 8, 1).expect("engines agree");
}
