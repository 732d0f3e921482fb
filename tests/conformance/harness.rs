//! Helpers shared by the conformance suites (`tests/conformance.rs`,
//! `tests/conformance_expr.rs`): scratch directories, running a design on
//! `chronc` with a text trace and a twin on Icarus Verilog, and comparing
//! their per-unit observation logs line by line. Each suite uses a subset,
//! hence the `dead_code` allowance where it is included.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::{RunOptions, RunReport, StopAt, run, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;
use chronon_runtime::Picos;

pub const DIR: &str = "tests/conformance";

/// Observation lines by unit instance path (each unit ticks in one domain,
/// and the lines carry its cycles and times).
pub type Logs = BTreeMap<String, Vec<String>>;

/// Files a trace record line (`<cycle> <time>ps T <unit> <name> ...`)
/// under its unit; other lines are ignored.
pub fn file_record(logs: &mut Logs, line: &str) {
    let words: Vec<&str> = line.splitn(5, ' ').collect();
    if words.len() == 5 && words[2] == "T" {
        logs.entry(words[3].to_string())
            .or_default()
            .push(line.to_string());
    }
}

/// A scratch directory under the system's temporary directory, removed on
/// drop (also when a comparison panics).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "chronon-conformance-{}-{tag}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiles `tests/conformance/<design>.v` into a scratch directory and
/// reads `<design>.chr`: the directory (removed on drop), the `vvp` image and
/// the Chronon design. The test fails where Icarus Verilog is not
/// installed.
pub fn twin(design: &str) -> (Scratch, PathBuf, String) {
    if !chronon_suite::tools::icarus_installed() {
        chronon_suite::tools::missing("iverilog", &format!("the cases of {design}.v"));
    }
    let scratch = Scratch::new(design);
    let image = compile_twin(&Path::new(DIR).join(format!("{design}.v")), &scratch);
    let chr =
        std::fs::read_to_string(Path::new(DIR).join(format!("{design}.chr"))).expect("the design");
    (scratch, image, chr)
}

/// Compiles a Verilog testbench (`source`, which may include the shared
/// files of `tests/conformance/`) into `scratch`; the path of the `vvp`
/// image.
pub fn compile_twin(source: &Path, scratch: &Scratch) -> PathBuf {
    let name = source.file_name().expect("a file name").to_string_lossy();
    let out = scratch.0.join(format!("{name}.vvp"));
    let result = Command::new("iverilog")
        .arg("-g2005")
        // The twins include traffic.vh, the stimulus they share.
        .arg("-I")
        .arg(DIR)
        .arg("-o")
        .arg(&out)
        .arg(source)
        .output()
        .expect("iverilog runs");
    assert!(
        result.status.success(),
        "iverilog failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// Runs a compiled twin with plusargs; its records by unit.
pub fn run_twin(image: &Path, plusargs: &[String]) -> Logs {
    let result = Command::new("vvp")
        .arg("-n")
        .arg(image)
        .args(plusargs)
        .output()
        .expect("vvp runs");
    assert!(
        result.status.success(),
        "vvp failed ({plusargs:?}):\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let stdout = String::from_utf8_lossy(&result.stdout);
    // vvp reports some run-time errors (a bad `$value$plusargs` target, for
    // one) on stdout and still exits 0.
    assert!(
        !stdout.contains("ERROR") && result.stderr.is_empty(),
        "vvp reported errors ({plusargs:?}):\n{stdout}{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let mut logs = Logs::new();
    for line in stdout.lines() {
        // Observation lines are `<domain> <record>`; vvp adds notes of its
        // own (`$finish` called at ...), which have no record.
        if let Some((_domain, record)) = line.split_once(' ') {
            file_record(&mut logs, record);
        }
    }
    logs
}

/// Runs a `.chr` source on `engine` until `limit_ps` (every instant at or
/// before it) with a text trace; the trace records by unit.
pub fn run_chronc(name: &str, text: &str, limit_ps: u64, engine: EngineKind) -> Logs {
    run_chronc_scaled(name, text, limit_ps, 1, engine)
}

/// [`run_chronc`] with time in units of `1/scale` ps: the run stops at
/// `limit / scale` ps, and every record's time is rewritten as an integer
/// number of units (`<n>ps` with `n` in units), which is how a twin whose
/// clocks are not integer picoseconds counts time. A time that is not a
/// whole number of units fails the test.
pub fn run_chronc_scaled(
    name: &str,
    text: &str,
    limit: u64,
    scale: u64,
    engine: EngineKind,
) -> Logs {
    let stop = StopAt::Until(Picos::new(i128::from(limit), i128::from(scale)));
    run_chronc_until(name, text, stop, scale, engine)
}

/// [`run_chronc_scaled`] with any stop condition.
pub fn run_chronc_until(
    name: &str,
    text: &str,
    stop: StopAt,
    scale: u64,
    engine: EngineKind,
) -> Logs {
    let scratch = Scratch::new("trace");
    let trace = scratch.0.join("text");
    let mut sources = SourceMap::new();
    sources.add(name.to_string(), text.to_string());
    let options = RunOptions::new(engine, stop);
    let recording = RecordOptions {
        trace_dir: Some(trace.clone()),
        ..RecordOptions::default()
    };
    let report = match run_recorded(&mut sources, &options, &recording, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{name}: {e:?}\n{text}"),
    };
    assert!(report.is_clean(), "{name}: {}", report.summary(true));
    assert_eq!(report.stop, "limit", "{name}: {}", report.summary(true));
    let mut logs = Logs::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&trace)
        .expect("the trace directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    files.sort();
    for file in files {
        let body = std::fs::read_to_string(&file).expect("a readable log");
        for line in body.lines() {
            file_record(&mut logs, &in_units(line, scale));
        }
    }
    // Without a trace sink the runtime takes its fast paths (the calendar's
    // replay loop, run-ahead of a lone domain), which the traced run does
    // not: the same run untraced must end alike, and its counters must be
    // what the traced lines add up to.
    let mut plain_sources = SourceMap::new();
    plain_sources.add(name.to_string(), text.to_string());
    let plain = match run(&mut plain_sources, &options, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{name} untraced: {e:?}"),
    };
    assert_eq!(
        deterministic(&plain),
        deterministic(&report),
        "{name}: the untraced run differs from the traced one"
    );
    check_sums(name, &plain, &logs);
    logs
}

/// The parts of a report that do not depend on the host or on recording.
pub fn deterministic(report: &RunReport) -> String {
    format!(
        "{} {} {} {:?} {:?} {:?} {}",
        report.stop,
        report.instants,
        report.time,
        report.domains,
        report.counters,
        report.faults,
        report.state_digest
    )
}

/// Every counter named `sum_<field>` must equal the wrapping sum of
/// `<field>=` over its unit's trace lines (those that have the field; at
/// least one must).
pub fn check_sums(name: &str, report: &RunReport, logs: &Logs) {
    for c in &report.counters {
        let Some(field) = c.name.strip_prefix("sum_") else {
            continue;
        };
        let key = format!("{field}=");
        let values: Vec<u64> = logs
            .get(&c.unit)
            .into_iter()
            .flatten()
            .filter_map(|line| line.split(' ').find_map(|w| w.strip_prefix(key.as_str())))
            // Signed values print sign-extended ('-3'); a counter adds them
            // as `x as i64 as u64`.
            .map(|v| {
                v.parse::<u64>()
                    .or_else(|_| v.parse::<i64>().map(|x| x as u64))
                    .expect("an integer field")
            })
            .collect();
        assert!(
            !values.is_empty(),
            "{name}: no {key} in the lines of {}",
            c.unit
        );
        let total = values.iter().fold(0u64, |a, &v| a.wrapping_add(v));
        assert_eq!(
            c.value, total,
            "{name}: counter {}.{} against its trace lines",
            c.unit, c.name
        );
    }
}

/// Rewrites the time of a text-log record (`<cycle> <time> T ...`, the time
/// `<a>ps` or `<a>+<b>/<c>ps`, exact) in units of `1/scale` ps.
pub fn in_units(line: &str, scale: u64) -> String {
    let mut words: Vec<&str> = line.splitn(3, ' ').collect();
    if words.len() < 3 || !words[1].ends_with("ps") {
        return line.to_string();
    }
    let time = words[1].trim_end_matches("ps");
    let (whole, frac) = time.split_once('+').unwrap_or((time, "0/1"));
    let (num, den) = frac.split_once('/').expect("a fraction");
    let parse = |t: &str| {
        t.parse::<u128>()
            .unwrap_or_else(|_| panic!("a time: {line}"))
    };
    let (whole, num, den) = (parse(whole), parse(num), parse(den));
    let scaled = (whole * den + num) * u128::from(scale);
    assert_eq!(
        scaled % den,
        0,
        "{line}: not a whole number of 1/{scale} ps"
    );
    let units = format!("{}ps", scaled / den);
    words[1] = &units;
    words.join(" ")
}

/// Asserts that two runs' logs agree, naming the configuration and the first
/// difference.
pub fn assert_same(config: &str, chronc: &Logs, icarus: &Logs) {
    let units: Vec<&String> = chronc.keys().chain(icarus.keys()).collect();
    for unit in units {
        let empty = Vec::new();
        let ours = chronc.get(unit).unwrap_or(&empty);
        let theirs = icarus.get(unit).unwrap_or(&empty);
        if ours == theirs {
            continue;
        }
        let first = ours
            .iter()
            .zip(theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        let from = first.saturating_sub(3);
        let show = |lines: &[String]| {
            lines[from.min(lines.len())..(first + 3).min(lines.len())].join("\n  ")
        };
        panic!(
            "chronc and Icarus disagree: {config}, unit {unit}, line {} \
             ({} lines from chronc, {} from Icarus)\nchronc:\n  {}\nicarus:\n  {}",
            first + 1,
            ours.len(),
            theirs.len(),
            show(ours),
            show(theirs)
        );
    }
    assert!(
        chronc.values().all(|l| !l.is_empty()),
        "{config}: a unit traced nothing"
    );
}

/// Fills the `{NAME}` holes of a template; every hole must be filled.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut text = template.to_string();
    for (name, value) in values {
        let hole = format!("{{{name}}}");
        assert!(text.contains(&hole), "the template has no {hole}");
        text = text.replace(&hole, value);
    }
    let unfilled = text.match_indices('{').find(|&(at, _)| {
        let name: String = text[at + 1..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase())
            .collect();
        !name.is_empty() && text[at + 1 + name.len()..].starts_with('}')
    });
    assert!(
        unfilled.is_none(),
        "an unfilled hole is left: {}",
        text[unfilled.map_or(0, |(at, _)| at)..]
            .chars()
            .take(16)
            .collect::<String>()
    );
    text
}

/// Whether any line of a unit's log contains `needle`.
pub fn saw(logs: &Logs, unit: &str, needle: &str) -> bool {
    logs.get(unit)
        .is_some_and(|lines| lines.iter().any(|l| l.contains(needle)))
}

/// A splitmix64 step: the generator of the random configurations.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The variable `name` as a number, or `default` when unset or not one.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
