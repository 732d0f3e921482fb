//! Running design files on both engines for the data-driven tests.

use std::path::{Path, PathBuf};

use chronon_compiler::config::ExecConfig;
use chronon_compiler::run::{PrintBuffer, PrintTo, RunOptions, RunReport, StopAt, parse_time, run};
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_runtime::{DomainId, Picos};

/// The `.chr` files directly under `dir`, sorted by name.
pub fn chr_files(dir: impl AsRef<Path>) -> Vec<PathBuf> {
    let dir = dir.as_ref();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "chr"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .chr files under {}", dir.display());
    paths
}

/// Runs `path` on the interpreter and on the JIT with the options that
/// `options` gives for its source and engine, asserts that the summaries
/// (wall-clock figures left out, the engine's name masked) agree, and returns
/// the summary with the snapshot name (the file stem).
pub fn summary_on_both_engines(
    path: &Path,
    options: impl Fn(&str, EngineKind) -> RunOptions,
) -> (String, String) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut summaries = Vec::new();
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        let mut sources = SourceMap::new();
        sources.add(path.display().to_string(), text.clone());
        let report = match run(&mut sources, &options(&text, engine), &mut |_, _| {}) {
            Ok(r) => r,
            Err(e) => panic!("{}: {e:?}", path.display()),
        };
        summaries.push(report.summary(true).replacen(&report.engine, "ENGINE", 1));
    }
    assert_eq!(
        summaries[0],
        summaries[1],
        "{}: engines disagree",
        path.display()
    );
    let name = path
        .file_stem()
        .expect("file name")
        .to_string_lossy()
        .into_owned();
    (name, summaries.swap_remove(0))
}

/// Compiles `text` as `<label>.chr` (a top system required) and lowers it as
/// `chronc` does; panics with the diagnostics and the source if it does not
/// compile.
pub fn lower_text(label: &str, text: &str) -> chronon_compiler::ir::Program {
    let (design, sources) = elaborate(label, text);
    chronon_compiler::lower::lower(&design, &sources).expect("lowers")
}

/// [`lower_text`] with `ir::opt` only where `optimize` says.
pub fn lower_text_with(label: &str, text: &str, optimize: bool) -> chronon_compiler::ir::Program {
    let (design, sources) = elaborate(label, text);
    let seed = chronon_compiler::lower::random::DEFAULT_SEED;
    chronon_compiler::lower::lower_for_run(&design, &sources, seed, (optimize, true))
        .expect("lowers")
}

/// [`lower_text`] without `ir::opt`.
pub fn lower_text_unoptimized(label: &str, text: &str) -> chronon_compiler::ir::Program {
    let (design, sources) = elaborate(label, text);
    chronon_compiler::lower::lower_unoptimized(&design, &sources).expect("lowers")
}

/// The checked design of `text` and its sources; panics as [`lower_text`]
/// says.
pub fn elaborate(label: &str, text: &str) -> (chronon_lang::design::Design, SourceMap) {
    let mut sources = SourceMap::new();
    sources.add(format!("{label}.chr"), text.to_string());
    let compiled = compile(
        &mut sources,
        &CompileOptions {
            require_top: true,
            ..CompileOptions::default()
        },
    );
    let Some(design) = compiled.design else {
        panic!(
            "{label} does not compile: {:#?}\n{text}",
            compiled.diagnostics
        );
    };
    (design, sources)
}

/// The time of the next instant of `sim`: the earliest pending edge of any
/// domain (`None` when no domain has one left). Running to it with
/// `RunLimit::Time` runs exactly one instant.
pub fn next_instant(sim: &Simulator) -> Option<Picos> {
    (0..sim.program().domains.len() as u32)
        .filter_map(|d| {
            let id = DomainId(d);
            sim.sim.edge_time(id, sim.sim.edges_done(id)).ok()
        })
        .min()
}

/// Runs every simulator of `sims` (the same design, several engines or
/// programs) through the next instant of the first, in lockstep, and
/// returns their stop reasons; `None` when no domain has an edge left.
pub fn step_instant(sims: &mut [Simulator]) -> Option<Vec<chronon_runtime::Stop>> {
    let t = next_instant(sims.first()?)?;
    Some(
        sims.iter_mut()
            .map(|s| s.sim.run(chronon_runtime::RunLimit::Time(t)))
            .collect(),
    )
}

/// A random `.chr` expression of type `ty` (`width` bits) over the names
/// `vars`, `depth` operations deep at most: `~`, shifts by constants up to
/// the width and beyond, wrapping arithmetic and bitwise operations with
/// literals or subexpressions, and (one time in `cast_one_in` where one is
/// drawn) a round trip through another integer type.
pub fn random_expr(
    rng: &mut chronon_compiler::testing::rng::Rng,
    ty: &str,
    width: u32,
    vars: &[&str],
    depth: u32,
    cast_one_in: u64,
) -> String {
    if depth == 0 || rng.one_in(4) {
        return rng.pick(vars).to_string();
    }
    let a = random_expr(rng, ty, width, vars, depth - 1, cast_one_in);
    match rng.below(8) {
        0 => format!("(~{a})"),
        1 => format!("({a} << {})", rng.below(u64::from(width) + 2)),
        2 => format!("({a} >> {})", rng.below(u64::from(width) + 2)),
        3 if rng.one_in(cast_one_in) => {
            let other = rng.pick(&["u8", "i8", "u16", "i16", "u32", "i32", "u48", "i64"]);
            format!("(({a} as {other}) as {ty})")
        }
        _ => {
            let op = rng.pick(&["+", "-", "*", "^", "&", "|"]);
            // A literal takes its type from the other operand (never a
            // bare literal, which a cast or `~` would leave untyped).
            let b = if rng.one_in(3) {
                let max = (1u64 << (width - 1)).clamp(1, 1 << 20);
                rng.below(max).to_string()
            } else {
                random_expr(rng, ty, width, vars, depth - 1, cast_one_in)
            };
            format!("({a} {op} {b})")
        }
    }
}

/// Runs `check` on every `.chr` file directly under `dir` (see
/// [`chr_files`]), each to the end even when an earlier one fails, and
/// panics with every failure's file and message.
pub fn check_each(dir: &str, check: impl Fn(&Path) + std::panic::RefUnwindSafe) {
    let mut failures = Vec::new();
    for path in chr_files(dir) {
        if let Err(e) = std::panic::catch_unwind(|| check(&path)) {
            let message = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {message}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The deterministic part of a run's summary: the engine's name masked,
/// the `recorded:` line (output paths) left out.
pub fn run_summary(report: &RunReport) -> String {
    report
        .summary(true)
        .replacen(&report.engine, "ENGINE", 1)
        .lines()
        .filter(|l| !l.starts_with("recorded:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a design header's `chronc run` options ask.
#[derive(Clone, Debug)]
pub struct RunArgs {
    /// `--cycles N [--domain D]` or `--until T`; until `finish` by default.
    pub stop: StopAt,
    /// `--drain [--drain-limit N]` (10,000 instants by default).
    pub drain: Option<u64>,
    /// `-p NAME=VALUE`, in order.
    pub params: Vec<(String, String)>,
}

/// Runs `text` (named `label`) as `args` say on `engine` with `exec` and
/// run seed 3, every register in the report; the report and what the
/// design's `print` statements wrote. Panics when it cannot run.
pub fn run_printing(
    label: &str,
    text: &str,
    args: &RunArgs,
    engine: EngineKind,
    exec: ExecConfig,
) -> (RunReport, String) {
    let mut sources = SourceMap::new();
    sources.add(label.to_string(), text.to_string());
    let printed = PrintBuffer::default();
    let options = test_run_options(args, engine, exec, &printed);
    let report = run(&mut sources, &options, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{label}: {e:?}\n{text}"));
    let printed = String::from_utf8_lossy(&printed.contents()).into_owned();
    (report, printed)
}

/// The options [`run_printing`] runs with: `args`, run seed 3, every
/// register in the report, the lines into `printed`.
pub fn test_run_options(
    args: &RunArgs,
    engine: EngineKind,
    exec: ExecConfig,
    printed: &PrintBuffer,
) -> RunOptions {
    RunOptions {
        params: args.params.clone(),
        drain: args.drain,
        seed: 3,
        exec,
        dump_state: true,
        print: PrintTo::Buffer(printed.clone()),
        ..RunOptions::new(engine, args.stop.clone())
    }
}

/// Reads `chronc run`'s stop, drain and parameter options from `args` (the
/// header line of the design at `path`, named in panics).
pub fn parse_run_args(path: &Path, args: &str) -> RunArgs {
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut run = RunArgs {
        stop: StopAt::Finish,
        drain: None,
        params: Vec::new(),
    };
    let (mut drain, mut drain_limit, mut domain) = (false, 10_000, None);
    let mut i = 0;
    while i < words.len() {
        let value = || {
            words
                .get(i + 1)
                .copied()
                .unwrap_or_else(|| panic!("{}: `{}` needs a value", path.display(), words[i]))
        };
        match words[i] {
            "--cycles" => {
                let count = value().parse().expect("a cycle count");
                run.stop = StopAt::Cycles {
                    count,
                    domain: None,
                };
            }
            "--domain" => domain = Some(value().to_string()),
            "--until" => run.stop = StopAt::Until(parse_time(value()).expect("a time")),
            "--drain" => drain = true,
            "--drain-limit" => drain_limit = value().parse().expect("a drain limit"),
            "-p" => {
                let (name, v) = value().split_once('=').expect("-p NAME=VALUE");
                run.params.push((name.to_string(), v.to_string()));
            }
            other => panic!("{}: unknown run option {other}", path.display()),
        }
        i += if words[i] == "--drain" { 1 } else { 2 };
    }
    if let (StopAt::Cycles { domain: d, .. }, Some(name)) = (&mut run.stop, domain) {
        *d = Some(name);
    }
    run.drain = drain.then_some(drain_limit);
    run
}
