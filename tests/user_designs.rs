//! Designs written the way a hardware engineer new to Chronon writes them,
//! from docs/language.md and the timing contract alone, each mixing
//! features that the other suites exercise one at a time (structs and enums
//! in registers, ports, channels and FIFO payloads; arrays of structs;
//! functions calling functions; matches with wildcards; generate loops,
//! parameters and stdlib units; stalled stage pipelines; fan-in, fan-out,
//! rates and latencies 0 to 3; FIFOs between clocks with phases and
//! periods that are not whole picoseconds; `finish` from a slow domain;
//! `--cycles --domain`, `--until` and `--drain`).
//!
//! Every design under `tests/user_designs/` states what it must record in
//! its header, derived by hand from the docs before it was run (the
//! derivation is in the design's comments), or names a Verilog twin run by
//! Icarus Verilog whose `$display` lines must equal the design's trace
//! lines. The header is a run of `//` lines:
//!
//! - `// case: ARGS`: one run, with `chronc run`'s stop and parameter
//!   options (`--cycles N`, `--domain D`, `--until T`, `--drain`,
//!   `--drain-limit N`, `-p NAME=VALUE`); the `expect` and `summary` lines
//!   after it belong to it. Without a `case` line there is one run until
//!   `finish`.
//! - `// expect: LINE`: a trace record of `chronc trace merge`, exactly; the
//!   trace records (`T` lines) of the run must be these, in this order.
//! - `// summary: TEXT`: text the run's summary must contain.
//! - `// twin: FILE.v`: the Verilog twin (run once, against the first case).
//!
//! Each case runs on the interpreter and the JIT with a text trace (merged
//! logs and summaries equal) and on both without a recording (the replay
//! loop and run-ahead may take it: the same summary, state digest
//! included).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::{RunOptions, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::diag::Severity;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use chronon_suite::designs::{RunArgs, check_each, parse_run_args, run_summary};
use chronon_suite::tools;

const DIR: &str = "tests/user_designs";

/// One run a design's header asks for.
#[derive(Clone, Debug)]
struct Case {
    args: String,
    run: RunArgs,
    expect: Vec<String>,
    summary: Vec<String>,
}

fn parse_case(path: &Path, args: &str) -> Case {
    Case {
        args: args.to_string(),
        run: parse_run_args(path, args),
        expect: Vec::new(),
        summary: Vec::new(),
    }
}

/// The cases of a design and its Verilog twin, if any.
fn parse_header(path: &Path, text: &str) -> (Vec<Case>, Option<String>) {
    let mut cases: Vec<Case> = Vec::new();
    let mut twin = None;
    for line in text.lines().map_while(|l| l.strip_prefix("//")) {
        let line = line.trim();
        if let Some(args) = line.strip_prefix("case:") {
            cases.push(parse_case(path, args.trim()));
            continue;
        }
        if let Some(file) = line.strip_prefix("twin:") {
            twin = Some(file.trim().to_string());
            continue;
        }
        let (expect, summary) = (line.strip_prefix("expect:"), line.strip_prefix("summary:"));
        if expect.is_none() && summary.is_none() {
            continue;
        }
        if cases.is_empty() {
            cases.push(parse_case(path, ""));
        }
        let case = cases.last_mut().expect("a case");
        if let Some(e) = expect {
            case.expect.push(e.trim().to_string());
        }
        if let Some(s) = summary {
            case.summary.push(s.trim().to_string());
        }
    }
    if cases.is_empty() {
        cases.push(parse_case(path, ""));
    }
    (cases, twin)
}

/// A scratch directory, removed on drop (also when a check panics).
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("chronon-user-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the design as `chronc run [--trace DIR]` does; the summary and,
/// when traced, the merged log.
fn run_case(
    label: &str,
    text: &str,
    case: &Case,
    engine: EngineKind,
    traced: bool,
) -> (String, String) {
    let dir = Scratch::new(&format!("{label}-{engine:?}-{traced}"));
    let mut sources = SourceMap::new();
    sources.add(format!("{label}.chr"), text.to_string());
    let options = RunOptions {
        params: case.run.params.clone(),
        drain: case.run.drain,
        ..RunOptions::new(engine, case.run.stop.clone())
    };
    let record = RecordOptions {
        trace_dir: traced.then(|| dir.0.clone()),
        ..RecordOptions::default()
    };
    let report = match run_recorded(&mut sources, &options, &record, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{label} [{}]: {e:?}", case.args),
    };
    if !traced {
        return (run_summary(&report), String::new());
    }
    assert!(
        report.recording.as_ref().is_some_and(|r| r.error.is_none()),
        "{label}: recording failed: {:?}",
        report.recording
    );
    let mut out = Vec::new();
    chronon_record::merge::merge(&dir.0, &mut out).expect("the trace merges");
    (run_summary(&report), String::from_utf8(out).expect("text"))
}

/// The trace records (`TIME DOMAIN CYCLE T ...`) of a merged log.
fn trace_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.split(' ').nth(3) == Some("T"))
        .map(str::to_string)
        .collect()
}

/// Trace records by unit instance path (within one instant, Verilog prints
/// the `always` blocks in an order of its own).
fn by_unit(lines: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in lines {
        let unit = line.split(' ').nth(4).unwrap_or_default().to_string();
        map.entry(unit).or_default().push(line.clone());
    }
    map
}

/// The twin's `$display` lines that are trace records.
fn run_twin(label: &str, file: &str) -> Vec<String> {
    let scratch = Scratch::new(&format!("{label}-twin"));
    let image = scratch.0.join("twin.vvp");
    let out = Command::new("iverilog")
        .args(["-g2005", "-I", DIR, "-o"])
        .arg(&image)
        .arg(Path::new(DIR).join(file))
        .output()
        .expect("iverilog runs");
    assert!(
        out.status.success(),
        "iverilog failed on {file}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("vvp")
        .arg("-n")
        .arg(&image)
        .output()
        .expect("vvp runs");
    assert!(out.status.success(), "vvp failed on {file}");
    trace_lines(&String::from_utf8_lossy(&out.stdout))
}

fn check(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let label = path
        .file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned();
    let (cases, twin) = parse_header(path, &text);
    for (n, case) in cases.iter().enumerate() {
        let what = format!("{label} [{}]", case.args);
        let (interp_summary, interp_log) = run_case(&label, &text, case, EngineKind::Interp, true);
        let (jit_summary, jit_log) = run_case(&label, &text, case, EngineKind::Jit, true);
        assert_eq!(
            interp_summary, jit_summary,
            "{what}: engines disagree on the summary"
        );
        assert_eq!(interp_log, jit_log, "{what}: engines disagree on the trace");
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let (plain, _) = run_case(&label, &text, case, engine, false);
            assert_eq!(
                plain, jit_summary,
                "{what}: a run without a recording ends elsewhere ({engine:?})"
            );
        }
        let got = trace_lines(&jit_log);
        if !case.expect.is_empty() {
            assert_eq!(
                got, case.expect,
                "{what}: trace records differ from the derived ones\nwhole log:\n{jit_log}"
            );
        }
        for needle in &case.summary {
            assert!(
                jit_summary.contains(needle.as_str()),
                "{what}: the summary lacks `{needle}`:\n{jit_summary}"
            );
        }
        if let (0, Some(file)) = (n, &twin) {
            if !tools::icarus_installed() {
                tools::missing("iverilog", file);
            }
            let expected = run_twin(&label, file);
            assert!(expected.len() > 10, "{file}: a twin worth comparing");
            assert_eq!(
                by_unit(&got),
                by_unit(&expected),
                "{what}: the trace differs from {file}'s"
            );
        }
    }
}

#[test]
fn user_designs() {
    check_each(DIR, check);
}

/// The error codes `chronc check` (or `chronc run`, with `require_top`)
/// reports for `text`, in source order.
fn error_codes(text: &str, require_top: bool, params: &[(&str, &str)]) -> Vec<&'static str> {
    let mut sources = SourceMap::new();
    sources.add("odd.chr", text.to_string());
    let options = CompileOptions {
        require_top,
        params: params
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    let result = compile(&mut sources, &options);
    for d in &result.diagnostics {
        assert!(
            !d.labels.is_empty() && !d.help.is_empty(),
            "an incomplete diagnostic: {d:?}"
        );
    }
    result
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.code)
        .collect()
}

/// Input a user produces by accident: each is diagnosed with a code, every
/// error is reported, and nothing is reported that only follows from
/// another error.
#[test]
fn odd_sources_get_every_coded_diagnostic_and_no_echoes() {
    let unit = |body: &str| {
        format!(
            "clock c = 1 GHz;\nunit U {{ reg r: u32; reg b: bool; tick {{ {body} }} }}\n\
             system T {{ inst u: U on c; }}\n"
        )
    };
    // Nesting past the limits: E0102 once; the unit is left out like one
    // that does not parse, so its use is no unknown name (E0201) and the
    // stand-in for the deep expression draws no type error (E0301).
    let deep = unit(&format!("r <= {}1{};", "(".repeat(5000), ")".repeat(5000)));
    assert_eq!(error_codes(&deep, true, &[]), ["E0102"]);
    let nots = unit(&format!("b <= {}b;", "!".repeat(100_000)));
    assert_eq!(error_codes(&nots, true, &[]), ["E0102"]);
    let chain = unit(&format!("r <= r{};", " + r".repeat(300)));
    assert_eq!(error_codes(&chain, true, &[]), ["E0102"]);
    // Literals past their type or past 1024 bits and widths out of range,
    // every one reported.
    let sizes = format!(
        "clock c = 1 GHz;\n\
        const A: u64 = 18446744073709551616;\n\
        const B: u1024 = 0x1{};\n\
        const C: i64 = -9223372036854775809;\n\
        unit U {{ reg a: u0; reg b: u1025; reg d: i2048; reg e: [u8; 0];\n\
        reg f: u64 = 99999999999999999999999999; tick {{ }} }}\n\
        system T {{ inst u: U on c; }}\n",
        "_0000".repeat(256)
    );
    assert_eq!(
        error_codes(&sizes, true, &[]),
        [
            "E0303", "E0103", "E0303", "E0308", "E0308", "E0308", "E0324", "E0303"
        ]
    );
    // Errors of different phases in one file are all reported.
    let many = "clock c = 0 GHz;\nconst K: u8 = ;\nunit U { reg r: Missing; tick { } }\n\
        system T { inst u: U on c; }\n";
    assert_eq!(error_codes(many, true, &[]), ["E0501", "E0101", "E0201"]);
    // An empty file is a library (nothing to check), not a design to run.
    assert_eq!(error_codes("", false, &[]), Vec::<&str>::new());
    assert_eq!(error_codes("", true, &[]), ["E0411"]);
    // A 1 MB comment, trace name and identifier are fine.
    let long = format!(
        "// {}\nclock c = 1 GHz;\nunit U {{ reg {}: u8; tick {{ trace(\"{}\"); finish; }} }}\n\
         system T {{ inst u: U on c; }}\n",
        "x".repeat(1 << 20),
        "r".repeat(1 << 20),
        "a".repeat(1 << 20)
    );
    assert_eq!(error_codes(&long, true, &[]), Vec::<&str>::new());
    // Parameter values that do not read or fit, and unknown names: each one.
    let param = "clock c = 1 GHz;\nunit U { tick { } }\nsystem T<N: u32 = 2, W: u8 = 1, V: i8 = 0> {\n\
        for i in 0..N { inst u[i]: U on c; } }\n";
    assert_eq!(
        error_codes(
            param,
            true,
            &[("N", "abc"), ("W", "256"), ("NOPE", "1"), ("V", "-129")]
        ),
        ["E0414", "E0414", "E0414", "E0414"]
    );
    // A generate loop whose bound is unreadable or too long is reported
    // once; the links to its instances are not reported again as links to
    // unknown instances (E0201).
    let chain = "clock c = 1 GHz;\nunit S { in rx: u8; out tx: u8; tick { } }\n\
        unit E { out tx: u8; tick { } }\nunit K { in rx: u8; tick { } }\n\
        system T<N: u32 = 2> { inst e: E on c; inst k: K on c;\n\
        for i in 0..N { inst st[i]: S on c; }\n\
        for i in 1..N { connect st[i - 1].tx -> st[i].rx; }\n\
        connect e.tx -> st[0].rx;\nconnect st[N - 1].tx -> k.rx; }\n";
    assert_eq!(error_codes(chain, true, &[]), Vec::<&str>::new());
    assert_eq!(error_codes(chain, true, &[("N", "abc")]), ["E0414"]);
    assert_eq!(
        error_codes(chain, true, &[("N", "5000000")]),
        ["E0324", "E0324"]
    );
}

/// Errors on a very long line (generated or minified source) are rendered
/// with their place in words, not with the line drawn once per error: 2,000
/// errors on one 23 KB line printed 91 MB.
#[test]
fn errors_on_a_long_line_do_not_repeat_it() {
    let statements: Vec<String> = (0..2000).map(|i| format!("r <= q{i};")).collect();
    let text = format!(
        "clock c = 1 GHz; unit U {{ reg r: u8; tick {{ {} }} }} system T {{ inst u: U on c; }}\n",
        statements.join(" ")
    );
    let mut sources = SourceMap::new();
    sources.add("long.chr", text.clone());
    let result = compile(&mut sources, &CompileOptions::default());
    assert_eq!(result.diagnostics.len(), 2000);
    let rendered =
        chronon_compiler::diag_render::render_human(&result.diagnostics, &sources, 100, false);
    assert!(
        rendered.len() < 400 * 2000,
        "{} bytes for 2,000 errors",
        rendered.len()
    );
    assert!(rendered.contains("unknown name `q1999` at long.chr:1:"));
    assert!(rendered.contains("not found in this scope (long.chr:1:"));
}
