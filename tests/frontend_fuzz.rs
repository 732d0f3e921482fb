//! The front end never panics, hangs or overflows its stack: mutated
//! examples (tokens deleted, duplicated or swapped, random bytes, truncation,
//! deep nesting) always come back as a result with diagnostics or a design.

use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use proptest::prelude::*;

const EXAMPLES: &[&str] = &[
    include_str!("../examples/pipeline.chr"),
    include_str!("../examples/producer_consumer.chr"),
    include_str!("../examples/cdc_pair.chr"),
    include_str!("../examples/three_clocks.chr"),
    include_str!("../examples/cpu4.chr"),
    include_str!("../examples/router_ring.chr"),
    include_str!("../examples/pairs.chr"),
];

/// One way to damage a source.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteToken(usize),
    DuplicateToken(usize),
    SwapTokens(usize, usize),
    RandomBytes(usize, Vec<u8>),
    Truncate(usize),
    DeepNesting(usize, usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteToken),
        any::<usize>().prop_map(Mutation::DuplicateToken),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(a, b)| Mutation::RandomBytes(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 50usize..5000, 0u8..3)
            .prop_map(|(a, n, k)| Mutation::DeepNesting(a, n, k)),
    ]
}

/// Byte ranges of whitespace-separated tokens.
fn tokens(src: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in src.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, src.len()));
    }
    out
}

fn apply(src: &str, m: &Mutation) -> String {
    let toks = tokens(src);
    let pick = |i: usize| toks[i % toks.len()];
    match m {
        Mutation::DeleteToken(i) => {
            let (a, b) = pick(*i);
            format!("{}{}", &src[..a], &src[b..])
        }
        Mutation::DuplicateToken(i) => {
            let (a, b) = pick(*i);
            format!("{}{} {}", &src[..b], &src[a..b], &src[b..])
        }
        Mutation::SwapTokens(i, j) => {
            let (x, y) = (pick(*i), pick(*j));
            let (first, second) = if x.0 <= y.0 { (x, y) } else { (y, x) };
            if first.1 > second.0 {
                return src.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &src[..first.0],
                &src[second.0..second.1],
                &src[first.1..second.0],
                &src[first.0..first.1],
                &src[second.1..]
            )
        }
        Mutation::RandomBytes(i, bytes) => {
            let (a, _) = pick(*i);
            format!(
                "{}{}{}",
                &src[..a],
                String::from_utf8_lossy(bytes),
                &src[a..]
            )
        }
        Mutation::Truncate(i) => {
            let (a, _) = pick(*i);
            src[..a].to_string()
        }
        Mutation::DeepNesting(i, n, kind) => {
            let (a, _) = pick(*i);
            let (open, close) = match kind {
                0 => ("(", ")"),
                1 => ("{", "}"),
                _ => ("-", ""),
            };
            format!(
                "{}{}x{}{}",
                &src[..a],
                open.repeat(*n),
                close.repeat(*n),
                &src[a..]
            )
        }
    }
}

proptest! {
    // A fixed seed: CI must not pass or fail by chance.
    #![proptest_config(ProptestConfig {
        cases: 192,
        max_shrink_iters: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xF0_22ED),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_examples_never_crash(example in 0..EXAMPLES.len(), m in mutation(), top in any::<bool>()) {
        let src = apply(EXAMPLES[example], &m);
        let mut sources = SourceMap::new();
        sources.add("fuzz.chr", src);
        let options = CompileOptions { require_top: top, ..CompileOptions::default() };
        let result = compile(&mut sources, &options);
        // Every diagnostic is complete, and a design comes only without errors.
        for d in &result.diagnostics {
            prop_assert!(!d.help.is_empty() && !d.message.is_empty() && !d.labels.is_empty(), "{d:?}");
        }
        prop_assert!(result.design.is_none() || !result.has_errors());
    }
}

#[test]
fn pathological_inputs_are_diagnosed() {
    let cases = [
        format!(
            "const A: u32 = {}1{};",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!("fn f() -> u32 {{ {} return 1; }}", "{".repeat(100_000)),
        format!("const A: u32 = {}1;", "-".repeat(100_000)),
        format!("const A: u32 = 1{};", " + 1".repeat(100_000)),
        format!(
            "fn f(x: u32) -> u32 {{ if x == 0 {{ return 0; }}{} return 1; }}",
            " else if x == 1 { return 1; }".repeat(20_000)
        ),
        "/* never closed".to_string(),
        "\"".repeat(1000),
        "\u{0}\u{ffff}é".to_string(),
    ];
    for src in cases {
        let mut sources = SourceMap::new();
        sources.add("p.chr", src.clone());
        let result = compile(&mut sources, &CompileOptions::default());
        assert!(
            result.has_errors(),
            "expected diagnostics for {:?}...",
            &src.chars().take(40).collect::<String>()
        );
    }
}
