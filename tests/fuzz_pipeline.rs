//! The whole pipeline never panics or hangs on damaged designs: every
//! example, test design and standard-library module is mutated token by
//! token (tokens deleted, duplicated, swapped; identifiers and numbers
//! replaced by extreme values; integer types made 0, 65 or 100,000 bits
//! wide; deep parentheses; very long, non-ASCII or NUL-bearing names; CRLF
//! line ends; truncation), then compiled, lowered and run for a few instants
//! on both engines. Each case must not panic, every diagnostic must have a
//! code, a message, a primary label whose span lies inside its source, and a
//! help line, and the two engines must stop alike with equal state digests.
//!
//! CI runs exactly the first `CHRONON_FUZZ_CASES` (default 8000) cases of a
//! fixed seed, whatever the machine's speed (about 12 s here), so a run is
//! reproducible; only a soak sets a time budget, `CHRONON_FUZZ_SECONDS`,
//! which stops it early:
//! `CHRONON_FUZZ_CASES=100000000 CHRONON_FUZZ_SECONDS=600
//! CHRONON_FUZZ_SEED=7 cargo test --test fuzz_pipeline -- --nocapture`. A
//! failing case is written to `target/fuzz-failure-<seed>-<case>.chr`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chronon_compiler::lower::lower;
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_runtime::Stop;
use chronon_suite::designs::step_instant;

/// A small deterministic generator (xorshift64*): the same seed gives the
/// same cases on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
}

/// What kind of token a byte range holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Ident,
    Number,
    Punct,
    Str,
}

/// Byte ranges and kinds of the tokens of `src` (comments and whitespace
/// skipped); close enough to the real lexer for mutation.
fn tokens(src: &str) -> Vec<(usize, usize, Kind)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, i, Kind::Ident));
        } else if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, i, Kind::Number));
        } else if c == b'"' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push((s, i, Kind::Str));
        } else {
            let s = i;
            i += src[i..].chars().next().map_or(1, char::len_utf8);
            out.push((s, i, Kind::Punct));
        }
    }
    out
}

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "63",
    "64",
    "65",
    "1048576",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "170141183460469231731687303715884105727",
    "340282366920938463463374607431768211456",
    "0x",
    "0xffffffffffffffffffffffffffffffffff",
    "0b102",
    "1_",
    "00000000000000000000000000000000000001",
];

const TYPES: &[&str] = &[
    "u0",
    "i0",
    "u1",
    "i1",
    "u64",
    "i65",
    "u65",
    "u128",
    "u129",
    "u100000",
    "u16777216",
    "u16777217",
    "u4294967296",
    "u18446744073709551616",
];

const ODD: &[&str] = &[
    "\u{0}", "é", "名前", "\u{feff}", "\u{202e}", "\r", "\r\n", "\t", "\\", "`", "$", "#", "\"",
    "/*", "*/", "::", "..", "=>", "<=", "->", ";", "{", "}", "(", ")", "[", "]", "<", ">", "@",
];

/// Applies one random mutation; a `mild` one (an extreme number or width,
/// another of the file's names) keeps the syntax, so that the case more
/// often reaches lowering and the engines.
fn mutate(src: &str, rng: &mut Rng, mild: bool) -> String {
    let toks = tokens(src);
    if toks.is_empty() {
        return format!("{src}{}", rng.pick(ODD));
    }
    let t = toks[rng.below(toks.len())];
    let (a, b, kind) = t;
    let splice = |s: &str| format!("{}{}{}", &src[..a], s, &src[b..]);
    let choice = if mild {
        [4, 5, 5, 6][rng.below(4)]
    } else {
        rng.below(14)
    };
    match choice {
        0 => splice(""),
        1 => format!("{}{} {}", &src[..b], &src[a..b], &src[b..]),
        2 => {
            let u = toks[rng.below(toks.len())];
            let (x, y) = if t.0 <= u.0 { (t, u) } else { (u, t) };
            if x.1 > y.0 {
                return src.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &src[..x.0],
                &src[y.0..y.1],
                &src[x.1..y.0],
                &src[x.0..x.1],
                &src[y.1..]
            )
        }
        3 => splice(rng.pick(NUMBERS)),
        4 => {
            // An integer type made extreme, or any identifier made a type.
            let ty = toks
                .iter()
                .filter(|(s, e, k)| {
                    *k == Kind::Ident
                        && src[*s..*e].len() > 1
                        && matches!(&src[*s..*s + 1], "u" | "i")
                        && src[*s + 1..*e].bytes().all(|c| c.is_ascii_digit())
                })
                .copied()
                .collect::<Vec<_>>();
            let (a, b, _) = if ty.is_empty() {
                t
            } else {
                ty[rng.below(ty.len())]
            };
            format!("{}{}{}", &src[..a], rng.pick(TYPES), &src[b..])
        }
        5 => {
            // A number token replaced where numbers are: widths, depths,
            // latencies, loop bounds, array sizes, clock frequencies.
            let nums = toks
                .iter()
                .filter(|(_, _, k)| *k == Kind::Number)
                .copied()
                .collect::<Vec<_>>();
            if nums.is_empty() {
                return splice(rng.pick(NUMBERS));
            }
            let (a, b, _) = nums[rng.below(nums.len())];
            format!("{}{}{}", &src[..a], rng.pick(NUMBERS), &src[b..])
        }
        6 => {
            // An identifier replaced by another of the file's, a very long
            // one or a non-ASCII one.
            let idents = toks
                .iter()
                .filter(|(_, _, k)| *k == Kind::Ident)
                .copied()
                .collect::<Vec<_>>();
            if idents.is_empty() {
                return src.to_string();
            }
            let (a, b, _) = idents[rng.below(idents.len())];
            let new = match rng.below(4) {
                0 => "x".repeat(1 + rng.below(100_000)),
                1 => "é名".to_string(),
                _ => {
                    let (s, e, _) = idents[rng.below(idents.len())];
                    src[s..e].to_string()
                }
            };
            format!("{}{}{}", &src[..a], new, &src[b..])
        }
        7 => {
            let n = 1 + rng.below(2000);
            let (open, close) = match rng.below(4) {
                0 => ("(", ")"),
                1 => ("[", "]"),
                2 => ("{", "}"),
                _ => ("!", ""),
            };
            if kind == Kind::Number || kind == Kind::Ident {
                format!(
                    "{}{}{}{}{}",
                    &src[..a],
                    open.repeat(n),
                    &src[a..b],
                    close.repeat(n),
                    &src[b..]
                )
            } else {
                format!("{}{}{}", &src[..a], open.repeat(n), &src[a..])
            }
        }
        8 => format!("{}{}{}", &src[..a], rng.pick(ODD), &src[a..]),
        9 => src[..a].to_string(),
        10 => src[..b].to_string(),
        11 => src.replace('\n', "\r\n"),
        12 => {
            // Inside a token: cut a multi-byte token in two.
            let mid = a + (b - a) / 2;
            if src.is_char_boundary(mid) {
                format!("{} {}", &src[..mid], &src[mid..])
            } else {
                src.to_string()
            }
        }
        _ => {
            // A token duplicated many times (long argument lists, chains).
            let n = 2 + rng.below(300);
            format!(
                "{}{}{}",
                &src[..b],
                format!(" {}", &src[a..b]).repeat(n),
                &src[b..]
            )
        }
    }
}

/// The `.chr` files of the corpus: examples, test designs, the standard
/// library.
fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["examples", "tests/designs", "stdlib"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("corpus directory")
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "chr"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("readable corpus file");
            out.push((format!("{dir}/{}", p.file_name().unwrap().display()), text));
        }
    }
    assert!(out.len() >= 15, "corpus too small: {}", out.len());
    out
}

/// What happened to one case, for the summary.
#[derive(Debug, Default)]
struct Outcome {
    /// The front end rejected it.
    rejected: bool,
    /// Lowering refused it (with this message).
    lower_error: Option<String>,
    /// Engine setup refused it (with this message).
    setup_error: Option<String>,
    /// It ran this many instants.
    instants: u64,
}

/// Compiles, lowers and runs one source; returns an error message for
/// any broken promise.
fn check_case(src: &str, require_top: bool, instants: u64) -> Result<Outcome, String> {
    let mut sources = SourceMap::new();
    sources.add("fuzz.chr", src.to_string());
    let options = CompileOptions {
        require_top,
        ..CompileOptions::default()
    };
    let result = compile(&mut sources, &options);
    for d in &result.diagnostics {
        let code_ok = d.code.len() == 5
            && matches!(&d.code[..1], "E" | "W")
            && d.code[1..].bytes().all(|c| c.is_ascii_digit());
        if !code_ok || d.message.is_empty() || d.help.trim().is_empty() {
            return Err(format!("incomplete diagnostic: {d:?}"));
        }
        if !d.labels.first().is_some_and(|l| l.primary) {
            return Err(format!("no primary label first: {d:?}"));
        }
        for l in &d.labels {
            if l.span.file.0 as usize >= sources.len() {
                return Err(format!("label in no file: {d:?}"));
            }
            let text = &sources.get(l.span.file).text;
            let (s, e) = (l.span.start as usize, l.span.end as usize);
            if s > e || e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
                return Err(format!(
                    "label span {s}..{e} outside its source ({} bytes): {d:?}",
                    text.len()
                ));
            }
        }
    }
    let mut outcome = Outcome::default();
    let design = match result.design {
        Some(d) if !result.has_errors() => d,
        Some(_) => return Err("a design came back with errors".into()),
        None => {
            if require_top && !result.has_errors() {
                return Err("no design and no error although a top is required".into());
            }
            outcome.rejected = true;
            return Ok(outcome);
        }
    };
    // A mutated parameter can ask for up to 2^20 instances (the front
    // end's bound, E0418); lowering and running those is a matter of
    // speed, not robustness, and would starve the other cases.
    if design.instances.len() > 4096 {
        return Ok(outcome);
    }
    // Likewise a register array of 2^20 elements: the JIT takes about a
    // minute to compile its unit (a known slowness, reported, not a
    // robustness failure of this test's kind).
    let reg_words: usize = design
        .instances
        .iter()
        .flat_map(|i| &design.specs[i.spec].regs)
        .map(|r| chronon_compiler::lower::size(&r.ty))
        .sum();
    if reg_words > 1 << 16 {
        return Ok(outcome);
    }
    let program = match lower(&design, &sources) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            outcome.lower_error = Some(e.to_string());
            return Ok(outcome);
        }
    };
    let mut sims = Vec::new();
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        match Simulator::new(program.clone(), engine) {
            Ok(s) => sims.push(s),
            Err(e) => {
                let message = e.to_string();
                if let Some(prev) = &outcome.setup_error
                    && *prev != message
                {
                    return Err(format!("engines refuse differently: {prev} / {message}"));
                }
                outcome.setup_error = Some(message);
            }
        }
    }
    if outcome.setup_error.is_some() {
        if !sims.is_empty() {
            return Err(format!(
                "only one engine refused: {:?}",
                outcome.setup_error
            ));
        }
        return Ok(outcome);
    }
    for instant in 0..instants {
        let Some(stops) = step_instant(&mut sims) else {
            break;
        };
        if stops[0] != stops[1] {
            return Err(format!(
                "engines stop differently at instant {instant}: {:?} / {:?}",
                stops[0], stops[1]
            ));
        }
        if sims[0].digest() != sims[1].digest() {
            return Err(format!("engines' states differ at instant {instant}"));
        }
        outcome.instants = instant + 1;
        match &stops[0] {
            Stop::LimitReached => {}
            Stop::Fault(_) => {
                // A fault names unit, construct, domain, cycle and time.
                for f in sims[0].sim.faults() {
                    if f.unit.is_empty() || f.construct.is_empty() || f.domain.is_empty() {
                        return Err(format!("fault without its names: {f:?}"));
                    }
                }
                break;
            }
            _ => break,
        }
    }
    Ok(outcome)
}

/// Runs `check_case` on its own thread, so a panic is caught and a hang is
/// seen (after `limit`) instead of stalling the suite.
fn guarded(src: &str, require_top: bool, limit: Duration) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    let text = src.to_string();
    std::thread::Builder::new()
        .name("fuzz-case".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| check_case(&text, require_top, 48)));
            let _ = tx.send(r.unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(format!("panic: {msg}"))
            }));
        })
        .expect("spawn a case thread");
    match rx.recv_timeout(limit) {
        Ok(r) => r,
        Err(_) => Err(format!("no result within {limit:?} (hang)")),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_designs_never_break_the_pipeline() {
    let seed = env_u64("CHRONON_FUZZ_SEED", 0x5EED_F022);
    let seconds = env_u64("CHRONON_FUZZ_SECONDS", u64::MAX);
    let max_cases = env_u64("CHRONON_FUZZ_CASES", 8000);
    let corpus = corpus();
    let started = Instant::now();
    let mut rng = Rng(seed | 1);
    let (mut cases, mut rejected, mut ran, mut lowered_err, mut setup_err) = (0u64, 0, 0, 0, 0);
    let mut lower_messages = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) && cases < max_cases {
        let (name, text) = &corpus[rng.below(corpus.len())];
        let mut src = text.clone();
        let mild = rng.below(2) == 0;
        for _ in 0..1 + rng.below(3) {
            src = mutate(&src, &mut rng, mild);
        }
        let require_top = !name.starts_with("stdlib/") || rng.below(2) == 0;
        match guarded(&src, require_top, Duration::from_secs(20)) {
            Ok(o) => {
                rejected += o.rejected as u64;
                ran += (o.instants > 0) as u64;
                setup_err += o.setup_error.is_some() as u64;
                if let Some(m) = o.lower_error {
                    lowered_err += 1;
                    lower_messages.insert(m.chars().take(120).collect::<String>());
                }
            }
            Err(e) => {
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(format!("target/fuzz-failure-{seed:x}-{cases}.chr"));
                let _ = std::fs::write(&path, &src);
                eprintln!(
                    "case {cases} (from {name}): {e}\n  source: {}",
                    path.display()
                );
                failures.push(format!("case {cases} from {name}: {e}"));
                if failures.len() >= 20 {
                    break;
                }
            }
        }
        cases += 1;
    }
    eprintln!(
        "fuzz_pipeline seed {seed:#x}: {cases} cases in {:.1} s: {rejected} rejected, {ran} ran, \
         {lowered_err} refused by lowering, {setup_err} by engine setup, {} failures",
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    for m in &lower_messages {
        eprintln!("  lowering refused: {m}");
    }
    assert!(
        cases == max_cases || !failures.is_empty() || seconds != u64::MAX,
        "only {cases} of {max_cases} cases ran"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The mutator itself changes sources, so the test above cannot pass by
/// testing the unmutated corpus.
#[test]
fn mutations_change_the_source() {
    let corpus = corpus();
    let mut rng = Rng(1);
    let changed = (0..200)
        .filter(|i| {
            let text = &corpus[i % corpus.len()].1;
            mutate(text, &mut rng, i % 2 == 0) != *text
        })
        .count();
    assert!(
        changed >= 180,
        "only {changed} of 200 mutations changed the source"
    );
}
