//! The parallel runtime (`chronc run --threads N`) against the serial run.
//!
//! Every example, contract design, test design, user design and a set of
//! random designs runs serially and with 2, 3, 4 and 8 workers (more than
//! the machine's cores, on purpose), under the planner's placement, round
//! robin, random placements, and a chaos mode that gives every worker
//! random slice lengths and pauses. Each run's report (stop, instants,
//! time, edges per domain, counters, faults with their sites, state digest)
//! must equal the serial run's, and so must every byte it printed and
//! recorded (text logs, Perfetto with tick slices, VCD, counter CSV). Designs built here reach the stop cases: a
//! fault in each component while the others run ahead, a fault and a
//! `finish` in one instant, two faults in one instant, limits that fall
//! between edges, and an interrupt (the parallel run stopped at `T` equals
//! the serial run to `--until T`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use chronon_compiler::config::{ExecConfig, ParallelConfig, Placement, Threads};
use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::print::PrintBuffer;
use chronon_compiler::run::{RunOptions, RunReport, StopAt, parse_time, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_compiler::testing::random_design::random_design;
use chronon_lang::span::SourceMap;
use chronon_suite::designs::{self, RunArgs, chr_files, parse_run_args};

/// The parallel configurations each design runs under.
fn variants() -> Vec<ParallelConfig> {
    let with = |n, placement, chaos| ParallelConfig {
        threads: Threads::Fixed(n),
        placement,
        chaos,
    };
    vec![
        with(2, Placement::Planner, None),
        with(4, Placement::RoundRobin, None),
        with(8, Placement::Random(0x5eed), None),
        with(3, Placement::Planner, Some(7)),
        with(8, Placement::RoundRobin, Some(11)),
    ]
}

fn run_text(label: &str, text: &str, args: &RunArgs, parallel: ParallelConfig) -> RunReport {
    run_printing(label, text, args, parallel).0
}

/// [`run_text`], with what the design's `print` statements wrote.
fn run_printing(
    label: &str,
    text: &str,
    args: &RunArgs,
    parallel: ParallelConfig,
) -> (RunReport, String) {
    let exec = ExecConfig {
        parallel,
        ..ExecConfig::default()
    };
    designs::run_printing(label, text, args, EngineKind::Jit, exec)
}

/// What a run wrote: its `print` lines, then every recorded file (path
/// relative to the run's folder, and bytes), in path order.
#[derive(PartialEq, Eq)]
struct Written {
    printed: String,
    files: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files: Vec<(&str, usize)> = self.files.iter().map(|(p, b)| (&p[..], b.len())).collect();
        write!(f, "{} print bytes; files {files:?}", self.printed.len())
    }
}

/// A fresh folder for one run's recordings.
fn scratch(label: &str) -> PathBuf {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let name: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let dir = std::env::temp_dir().join(format!(
        "chronon-parallel-{}-{}-{name}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The recordings every run of these tests makes: every writer, with
/// Perfetto's tick slices and counters sampled every third edge.
fn record_into(dir: &Path) -> RecordOptions {
    RecordOptions {
        trace_dir: Some(dir.join("trace")),
        perfetto: Some(dir.join("run.pftrace")),
        vcd: Some(dir.join("run.vcd")),
        counters: Some(dir.join("counters.csv")),
        counter_interval: 3,
        ticks: true,
        ..RecordOptions::default()
    }
}

/// Every file under `dir`, relative path and bytes, in path order.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a recording folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path
                    .strip_prefix(dir)
                    .expect("inside")
                    .display()
                    .to_string();
                files.push((name, std::fs::read(&path).expect("readable")));
            }
        }
    }
    files.sort();
    files
}

/// [`run_printing`], recording every output as [`record_into`] says, with
/// run seed 3 and every register in the report; the report and what it
/// wrote.
fn run_recording(
    label: &str,
    text: &str,
    args: &RunArgs,
    parallel: ParallelConfig,
) -> (RunReport, Written) {
    let mut sources = SourceMap::new();
    sources.add(label.to_string(), text.to_string());
    let printed = PrintBuffer::default();
    let exec = ExecConfig {
        parallel,
        ..ExecConfig::default()
    };
    let options = designs::test_run_options(args, EngineKind::Jit, exec, &printed);
    let dir = scratch(label);
    let report = run_recorded(&mut sources, &options, &record_into(&dir), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{label}: {e:?}\n{text}"));
    let written = Written {
        printed: String::from_utf8_lossy(&printed.contents()).into_owned(),
        files: files_under(&dir),
    };
    let _ = std::fs::remove_dir_all(&dir);
    (report, written)
}

/// The report as JSON, less what depends on the host and the workers (and
/// the recordings' paths, which are per run).
fn comparable(report: &RunReport) -> serde_json::Value {
    let mut json = serde_json::to_value(report).expect("a report serializes");
    let obj = json.as_object_mut().expect("an object");
    obj.retain(|k, _| !k.contains("wall") && !k.contains("per_second") && k != "parallel");
    if let Some(recording) = obj.get_mut("recording").and_then(|r| r.as_object_mut()) {
        recording.remove("outputs");
    }
    json
}

/// Runs `text` serially and under every [`variants`] configuration, each
/// printing and recording everything; returns how many of those runs had
/// more than one worker.
fn assert_parallel_agrees(label: &str, text: &str, args: &RunArgs) -> usize {
    let (serial, written) = run_recording(label, text, args, ParallelConfig::default());
    assert_eq!(serial.parallel.workers, 1, "{label}");
    assert!(
        written.files.len() >= 5,
        "{label}: every output is written: {written:?}"
    );
    let expected = (comparable(&serial), written);
    let mut parallel = 0;
    for config in variants() {
        let (report, written) = run_recording(label, text, args, config);
        let got = (comparable(&report), written);
        if got != expected {
            let first = expected
                .1
                .files
                .iter()
                .zip(&got.1.files)
                .find(|(a, b)| a != b)
                .map(|((path, a), (_, b))| {
                    let at = a
                        .iter()
                        .zip(b)
                        .position(|(x, y)| x != y)
                        .unwrap_or(a.len().min(b.len()));
                    format!("{path} differs from byte {at}")
                });
            panic!(
                "{label} with {config:?} ({}) differs from the serial run: {first:?}\n{:?}\n{:?}\n{text}",
                report.parallel.line(),
                expected.1,
                got.1,
            );
        }
        if report.parallel.workers > 1 {
            parallel += 1;
            assert!(report.parallel.serial_reason.is_none(), "{label}");
            let Threads::Fixed(n) = config.threads else {
                unreachable!()
            };
            assert!(report.parallel.workers <= n, "{label}");
            let units: usize = report.parallel.placement.iter().map(|w| w.units).sum();
            assert!(units > 0 && report.parallel.placement.len() == report.parallel.workers);
        } else {
            assert!(report.parallel.serial_reason.is_some(), "{label}");
        }
    }
    parallel
}

/// The run options of a design's header (`// run:` or the first
/// `// case:`); `fallback` where it has none.
fn header_args(path: &Path, text: &str, fallback: &str) -> RunArgs {
    let args = text
        .lines()
        .map_while(|l| l.strip_prefix("//"))
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("run:").or_else(|| l.strip_prefix("case:"))
        })
        .unwrap_or(fallback);
    parse_run_args(path, args.trim())
}

#[test]
fn every_design_file_runs_alike_on_any_number_of_workers() {
    let mut parallel = 0;
    let mut designs = 0;
    for dir in [
        "examples",
        "tests/contract",
        "tests/designs",
        "tests/user_designs",
    ] {
        for path in chr_files(dir) {
            let text = std::fs::read_to_string(&path).expect("readable");
            let args = header_args(&path, &text, "--cycles 2000");
            parallel += assert_parallel_agrees(&path.display().to_string(), &text, &args);
            designs += 1;
        }
    }
    // Most designs here are one component or stop by `finish` in every
    // component; the rest must have run on several workers.
    assert!(designs > 60, "{designs} designs");
    assert!(parallel >= 40, "only {parallel} parallel runs");
}

#[test]
fn random_designs_run_alike_on_any_number_of_workers() {
    let mut parallel = 0;
    for seed in 0..24 {
        // Every random unit can `finish` (on a value it never reaches),
        // which would put every component on the leader: without it, the
        // components spread over the workers. `finish` has its own cases.
        let text = random_design(seed).replace("if seen == 0xFFFFFFFFFFFF { finish; }", "");
        assert!(!text.contains("finish"), "the generator's finish changed");
        let args = parse_run_args(Path::new("random"), "--cycles 400");
        parallel += assert_parallel_agrees(&format!("random_design({seed})"), &text, &args);
    }
    assert!(parallel >= 20, "only {parallel} parallel runs");
}

/// What a consumer of [`stop_design`] does when it has taken its count.
#[derive(Clone, Copy)]
enum Then {
    Nothing,
    Fault,
    Finish,
}

/// Producer/consumer pairs joined by CDC FIFOs over three domains (one of
/// a rational frequency, two with phases), one component each, plus a
/// free-running unit per domain; consumers print every item, free units
/// every sixteenth edge or so (the lines must be the serial run's too). Pair `k`'s consumer is in domain `k mod
/// 3` and does `stops[k].0` when it has taken `stops[k].1` items.
fn stop_design(stops: &[(Then, u32)]) -> String {
    let pairs: Vec<Pair> = stops
        .iter()
        .map(|&(then, at)| Pair {
            count: u32::MAX,
            then,
            at,
            slow: false,
        })
        .collect();
    pairs_design(&pairs, true)
}

/// One producer/consumer pair of [`pairs_design`].
#[derive(Clone, Copy)]
struct Pair {
    /// Items the producer sends (`u32::MAX`: as many as it can).
    count: u32,
    /// What the consumer does when it has taken `at` items.
    then: Then,
    at: u32,
    /// The consumer asks for an item every other edge only.
    slow: bool,
}

/// `pairs` joined by CDC FIFOs over three domains (one of a rational
/// frequency, two with phases), one component each, with a free-running
/// unit per domain when `free`; consumers print every item, free units
/// every sixteenth edge or so. Pair `k`'s producer is in domain `k + 1 mod
/// 3`, its consumer in `k mod 3`.
fn pairs_design(pairs: &[Pair], free: bool) -> String {
    let mut s = String::from(
        "clock d[3] = [1 GHz, 700 MHz phase 13 ps, 250 MHz phase 37 ps];\n\
         \n\
         unit Producer<COUNT: u32 = 0> {\n\
         \x20   out tx: u32;\n\
         \x20   reg seq: u32 = 0;\n\
         \x20   tick {\n\
         \x20       if seq < COUNT {\n\
         \x20           if tx.try_send(seq * 7 + 1) {\n\
         \x20               seq <= seq + 1;\n\
         \x20           }\n\
         \x20       }\n\
         \x20   }\n\
         }\n\
         \n\
         unit Consumer<MODE: u32 = 0, AT: u32 = 0, SLOW: u32 = 0> {\n\
         \x20   in rx: u32 cdc;\n\
         \x20   reg n: u32 = 0;\n\
         \x20   reg sum: u32 = 0;\n\
         \x20   reg odd: bool = false;\n\
         \x20   counter taken;\n\
         \x20   tick {\n\
         \x20       odd <= !odd;\n\
         \x20       if let Some(v) = rx.take() {\n\
         \x20           taken += 1;\n\
         \x20           sum <= sum + v;\n\
         \x20           print(\"took {} sum {:#x}\", n, sum + v);\n\
         \x20           n <= n + 1;\n\
         \x20           if MODE == 1 {\n\
         \x20               assert(n + 1 != AT, \"consumer stops here\");\n\
         \x20           }\n\
         \x20           if MODE == 2 && n + 1 == AT {\n\
         \x20               finish;\n\
         \x20           }\n\
         \x20       }\n\
         \x20       if SLOW == 0 || odd {\n\
         \x20           rx.request();\n\
         \x20       }\n\
         \x20   }\n\
         }\n\
         \n\
         unit Free {\n\
         \x20   reg x: u32 = 1;\n\
         \x20   tick {\n\
         \x20       x <= x * 1103515245 + 12345;\n\
         \x20       if x[3:0] == 0 {\n\
         \x20           print(\"x {}\", x);\n\
         \x20       }\n\
         \x20   }\n\
         }\n\
         \n\
         system Top {\n",
    );
    for (k, p) in pairs.iter().enumerate() {
        let mode = match p.then {
            Then::Nothing => 0,
            Then::Fault => 1,
            Then::Finish => 2,
        };
        s.push_str(&format!(
            "    inst p{k}: Producer<COUNT = {}> on d[{}];\n    \
             inst c{k}: Consumer<MODE = {mode}, AT = {}, SLOW = {}> on d[{}];\n    \
             cdc p{k}.tx -> c{k}.rx depth 4 sync 2;\n",
            p.count,
            (k + 1) % 3,
            p.at,
            u32::from(p.slow),
            k % 3
        ));
    }
    for d in (0..3).filter(|_| free) {
        s.push_str(&format!("    inst f{d}: Free on d[{d}];\n"));
    }
    s.push_str("}\n");
    s
}

/// What one pair of [`stop_design`] does, and when.
type Stops = (Then, u32);

#[test]
fn every_stop_case_stops_where_the_serial_run_does() {
    use Then::*;
    let none = (Nothing, 0);
    let mut cases: Vec<(String, Vec<Stops>, &str)> = Vec::new();
    // A fault in each component position, the others running ahead.
    for k in 0..5 {
        let mut stops = vec![none; 5];
        stops[k] = (Fault, 150 + 40 * k as u32);
        cases.push((format!("fault in pair {k}"), stops, "--until 10us"));
    }
    // A fault and a `finish` in one instant (pairs 0 and 3: one domain,
    // one count), either way round, and a finish just after a fault.
    cases.push((
        "fault and finish at once".into(),
        vec![(Fault, 200), none, none, (Finish, 200), none],
        "--until 10us",
    ));
    cases.push((
        "finish and fault at once".into(),
        vec![(Finish, 200), none, none, (Fault, 200), none],
        "",
    ));
    cases.push((
        "finish after a fault".into(),
        vec![none, (Fault, 90), (Finish, 300), none, none],
        "",
    ));
    // Two faults in one instant, in two components.
    cases.push((
        "two faults at once".into(),
        vec![none, (Fault, 120), none, none, (Fault, 120)],
        "--until 10us",
    ));
    // Finishes only: the leader's.
    cases.push((
        "finishes".into(),
        vec![(Finish, 400), none, (Finish, 150), none, none],
        "",
    ));
    // Limits: before a stop, between edges, in another domain.
    cases.push((
        "limit before the fault".into(),
        vec![none, (Fault, 900), none, none],
        "--until 1234567/3ps",
    ));
    cases.push((
        "cycles of a domain".into(),
        vec![none; 4],
        "--cycles 777 --domain d[1]",
    ));
    cases.push(("one cycle".into(), vec![none; 4], "--cycles 1"));
    cases.push(("a tiny limit".into(), vec![none; 4], "--until 5ps"));
    for (label, stops, args) in cases {
        let text = stop_design(&stops);
        let args = parse_run_args(Path::new(&label), args);
        let parallel = assert_parallel_agrees(&label, &text, &args);
        assert_eq!(
            parallel,
            variants().len(),
            "{label}: every variant is parallel"
        );
    }
}

#[test]
fn a_late_fault_stops_every_worker_at_its_instant() {
    // The fault comes late in a slow domain's component; the free-running
    // components on other workers are usually past it by then and run
    // again to it (whether they are depends on host timing, so `reruns`
    // is not asserted: the report must equal the serial one either way).
    let text = stop_design(&[(Then::Nothing, 0), (Then::Nothing, 0), (Then::Fault, 3000)]);
    let args = parse_run_args(Path::new("late"), "--until 100us");
    let (serial, serial_written) = run_recording("late", &text, &args, ParallelConfig::default());
    assert_eq!(serial.stop, "fault");
    // Every component printed, up to the fault's instant.
    let serial_lines = &serial_written.printed;
    assert!(serial_lines.lines().count() > 3000, "{serial_lines:.300}");
    let config = ParallelConfig {
        threads: Threads::Fixed(4),
        placement: Placement::RoundRobin,
        chaos: None,
    };
    let (report, written) = run_recording("late", &text, &args, config);
    assert_eq!(comparable(&report), comparable(&serial));
    assert!(
        written == serial_written,
        "the lines or recordings differ from the serial run's: {written:?} against {serial_written:?}"
    );
    assert_eq!(report.parallel.workers, 4);
}

static INTERRUPT: AtomicBool = AtomicBool::new(false);

#[test]
fn an_interrupted_parallel_run_equals_the_serial_run_to_its_instant() {
    let text = stop_design(&[(Then::Nothing, 0); 4]);
    let mut sources = SourceMap::new();
    sources.add("interrupted".to_string(), text.clone());
    let mut options = RunOptions {
        exec: ExecConfig {
            parallel: ParallelConfig {
                threads: Threads::Fixed(3),
                placement: Placement::Planner,
                chaos: None,
            },
            ..ExecConfig::default()
        },
        interrupt: Some(&INTERRUPT),
        ..RunOptions::new(
            EngineKind::Jit,
            StopAt::Until(parse_time("1000s").expect("a time")),
        )
    };
    let setter = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(300));
        INTERRUPT.store(true, Ordering::Relaxed);
    });
    let dir = scratch("interrupted");
    let report =
        run_recorded(&mut sources, &options, &record_into(&dir), &mut |_, _| {}).expect("runs");
    setter.join().expect("the setter ends");
    assert_eq!(report.stop, "interrupted");
    assert_eq!(report.parallel.workers, 3);
    assert!(report.instants > 0, "stopped before it started");
    // The same design run serially to the interrupted run's last instant.
    options.stop = StopAt::Until(parse_time(&report.time).expect("a whole-picosecond time"));
    options.interrupt = None;
    options.exec.parallel = ParallelConfig::default();
    let serial_dir = scratch("interrupted-serial");
    let serial = run_recorded(
        &mut sources,
        &options,
        &record_into(&serial_dir),
        &mut |_, _| {},
    )
    .expect("runs");
    let strip = |r: &RunReport| {
        let mut v = comparable(r);
        v.as_object_mut().expect("an object").remove("stop");
        v
    };
    assert_eq!(strip(&report), strip(&serial));
    // Every recording closed on the same whole records.
    let (got, want) = (files_under(&dir), files_under(&serial_dir));
    assert_eq!(got.len(), want.len());
    for ((path, a), (_, b)) in got.iter().zip(&want) {
        assert!(a == b, "{path} differs from the serial run's");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&serial_dir);
}

#[test]
fn the_planner_keeps_a_finish_exact_by_a_leader_or_by_rerunning() {
    use chronon_compiler::parallel::plan::FinishRule;
    let two = ParallelConfig {
        threads: Threads::Fixed(2),
        placement: Placement::Planner,
        chaos: None,
    };
    // Every component can finish: they spread, and workers past the
    // finish run again to it.
    let text = std::fs::read_to_string("examples/pairs.chr").expect("readable");
    let args = parse_run_args(Path::new("pairs"), "-p COUNT=3000");
    let serial = run_text("pairs", &text, &args, ParallelConfig::default());
    let report = run_text("pairs", &text, &args, two);
    assert_eq!(report.parallel.finish, FinishRule::Rerun);
    assert_eq!(report.parallel.workers, 2);
    assert_eq!(comparable(&report), comparable(&serial));
    assert_eq!(serial.stop, "finished");
    // One component can finish and heavier ones cannot: it leads.
    let text = stop_design(&[(Then::Finish, 500), (Then::Nothing, 0)]);
    let args = parse_run_args(Path::new("lead"), "");
    let report = run_text("lead", &text, &args, two);
    assert_eq!(report.parallel.finish, FinishRule::Leader);
    let serial = run_text("lead", &text, &args, ParallelConfig::default());
    assert_eq!(comparable(&report), comparable(&serial));
    // Under `auto` on two cores, rerunning does not pay.
    let auto = ParallelConfig {
        threads: Threads::Auto { cores: 2 },
        ..two
    };
    let text = std::fs::read_to_string("examples/pairs.chr").expect("readable");
    let args = parse_run_args(Path::new("pairs"), "-p COUNT=3000");
    let report = run_text("pairs", &text, &args, auto);
    let why = report.parallel.serial_reason.expect("serial");
    assert!(why.contains("run again"), "{why}");
}

#[test]
fn auto_stays_serial_where_starting_workers_may_not_pay() {
    let auto = ParallelConfig {
        threads: Threads::Auto { cores: 4 },
        placement: Placement::Planner,
        chaos: None,
    };
    let text = std::fs::read_to_string("examples/independent_models.chr").expect("readable");
    let reason = |args: &str| {
        let args = parse_run_args(Path::new("models"), args);
        run_text("models", &text, &args, auto)
            .parallel
            .serial_reason
    };
    // A short run, and a run whose length only `finish` decides (this
    // one's components run free: a fault stops it), stay serial.
    let short = reason("--until 100us").expect("serial");
    assert!(short.contains("too short"), "{short}");
    let stops = stop_design(&[(Then::Fault, 50), (Then::Nothing, 0)]);
    let args = parse_run_args(Path::new("stops"), "");
    let until_finish = run_text("stops", &stops, &args, auto)
        .parallel
        .serial_reason;
    let why = until_finish.expect("serial");
    assert!(why.contains("no `--until` or `--cycles`"), "{why}");
    // A long one spreads.
    assert_eq!(reason("--until 5ms"), None);
}

#[test]
fn a_recording_write_error_stops_a_parallel_run_cleanly() {
    let text = std::fs::read_to_string("examples/independent_models.chr").expect("the example");
    let mut sources = SourceMap::new();
    sources.add("models".to_string(), text);
    let options = RunOptions {
        exec: ExecConfig {
            parallel: ParallelConfig {
                threads: Threads::Fixed(2),
                placement: Placement::Planner,
                chaos: None,
            },
            ..ExecConfig::default()
        },
        ..RunOptions::new(
            EngineKind::Jit,
            StopAt::Until(parse_time("50ms").expect("a time")),
        )
    };
    let dir = scratch("full-disk");
    let record = RecordOptions {
        trace_dir: Some(dir.join("trace")),
        perfetto: Some(PathBuf::from("/dev/full")),
        ..RecordOptions::default()
    };
    let report = run_recorded(&mut sources, &options, &record, &mut |_, _| {}).expect("runs");
    assert_eq!(report.parallel.workers, 2);
    assert_eq!(report.stop, "recording-failed");
    assert!(!report.is_clean());
    let error = report.recording.as_ref().and_then(|r| r.error.clone());
    assert!(
        error.as_deref().is_some_and(|e| e.contains("/dev/full")),
        "{error:?}"
    );
    // Stopped long before 50 ms (50 million edges of the fastest clock).
    assert!(report.instants < 20_000_000, "{} instants", report.instants);
    // The other writer closed its logs on whole records.
    for (path, bytes) in files_under(&dir) {
        assert!(
            bytes.is_empty() || bytes.ends_with(b"\n") || path.ends_with(".json"),
            "{path}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn auto_leaves_a_recordings_threads_their_cores() {
    let text = std::fs::read_to_string("examples/independent_models.chr").expect("readable");
    let args = parse_run_args(Path::new("models"), "--until 1ms");
    let run_with = |cores: usize, record: &dyn Fn(&Path) -> RecordOptions| {
        let mut sources = SourceMap::new();
        sources.add("models".to_string(), text.clone());
        let options = RunOptions {
            exec: ExecConfig {
                parallel: ParallelConfig {
                    threads: Threads::Auto { cores },
                    placement: Placement::Planner,
                    chaos: None,
                },
                ..ExecConfig::default()
            },
            ..RunOptions::new(EngineKind::Jit, args.stop.clone())
        };
        let dir = scratch("auto-recording");
        let report =
            run_recorded(&mut sources, &options, &record(&dir), &mut |_, _| {}).expect("runs");
        let files = files_under(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        (report, files)
    };
    // Four writers and the merge leave no two of four cores to workers.
    let (report, _) = run_with(4, &|dir| record_into(dir));
    let why = report.parallel.serial_reason.expect("serial");
    assert!(why.contains("4 writer threads"), "{why}");
    // One writer on sixteen cores: workers, and the serial run's bytes.
    let counters_only = |dir: &Path| RecordOptions {
        counters: Some(dir.join("counters.csv")),
        counter_interval: 1000,
        ..RecordOptions::default()
    };
    let (report, files) = run_with(16, &counters_only);
    assert!(report.parallel.workers > 1, "{:?}", report.parallel);
    let (serial, serial_files) = run_with(1, &counters_only);
    assert_eq!(serial.parallel.workers, 1);
    assert_eq!(comparable(&report), comparable(&serial));
    assert!(
        files == serial_files && !files.is_empty(),
        "the CSV differs"
    );
}

/// Pairs as in [`stop_design`], without free units, but pair `k`'s
/// producer sends `pairs[k].0` items only and its consumer asks for one
/// every other edge, so that items are in flight when the run stops and a
/// drain empties them, pair by pair, at different instants; `pairs[k].1`
/// says what the consumer does when it has taken `pairs[k].2` items
/// (during the drain or before it).
fn drain_design(pairs: &[(u32, Then, u32)]) -> String {
    let pairs: Vec<Pair> = pairs
        .iter()
        .map(|&(count, then, at)| Pair {
            count,
            then,
            at,
            slow: true,
        })
        .collect();
    pairs_design(&pairs, false)
}

#[test]
fn a_drain_ends_where_the_serial_runs_does() {
    use Then::*;
    let free = |count: u32| (count, Nothing, 0);
    let cases = [
        // Every pair still has items in flight at the limit; they empty at
        // different instants, and the drain ends when the last does.
        (
            "drained",
            vec![free(40), free(55), free(70), free(45)],
            "--cycles 60 --drain",
            ["limit", "drained after"],
        ),
        (
            "drain limit",
            vec![free(40), free(55), free(70), free(45)],
            "--cycles 60 --drain --drain-limit 7",
            ["limit", "drain limit reached"],
        ),
        // A consumer faults on an item it takes while draining.
        (
            "fault while draining",
            vec![free(40), (55, Fault, 50), free(70), free(45)],
            "--cycles 60 --drain",
            ["limit", "stopped while draining: fault"],
        ),
        // The run stops at a fault (the other workers ran past it and run
        // again), then drains: the faulting consumer takes on.
        (
            "drain after a fault",
            vec![free(400), (300, Fault, 120), free(500), free(450)],
            "--until 20us --drain",
            ["fault", "drained after"],
        ),
        // A `finish`, then the drain (a finish does not end it).
        (
            "drain after a finish",
            vec![(300, Finish, 100), free(200), free(250)],
            "--drain",
            ["finished", "drained after"],
        ),
    ];
    for (label, pairs, args, [stop, drain]) in cases {
        let text = drain_design(&pairs);
        let args = parse_run_args(Path::new(label), args);
        let serial = run_text(label, &text, &args, ParallelConfig::default());
        assert_eq!(serial.stop, stop, "{label}");
        let drained = serial.drain.as_deref().unwrap_or_default();
        assert!(drained.starts_with(drain), "{label}: {drained}");
        let parallel = assert_parallel_agrees(label, &text, &args);
        assert_eq!(
            parallel,
            variants().len(),
            "{label}: every variant is parallel"
        );
    }
}

#[test]
fn a_lossy_parallel_recording_accounts_for_every_record() {
    let text = std::fs::read_to_string("examples/independent_models.chr").expect("readable");
    let args = parse_run_args(Path::new("models"), "--until 300us");
    // Records written plus records dropped, from a text log's manifest.
    let accounted = |lossy: bool, parallel: ParallelConfig| {
        let mut sources = SourceMap::new();
        sources.add("models".to_string(), text.clone());
        let exec = ExecConfig {
            parallel,
            ..ExecConfig::default()
        };
        let options =
            designs::test_run_options(&args, EngineKind::Jit, exec, &PrintBuffer::default());
        let dir = scratch("lossy");
        let record = RecordOptions {
            trace_dir: Some(dir.join("trace")),
            lossy,
            ..RecordOptions::default()
        };
        let report = run_recorded(&mut sources, &options, &record, &mut |_, _| {}).expect("runs");
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join("trace/manifest.json")).expect("the manifest"),
        )
        .expect("JSON");
        let _ = std::fs::remove_dir_all(&dir);
        let written: u64 = manifest["records"]
            .as_array()
            .expect("records per file")
            .iter()
            .map(|n| n.as_u64().expect("a count"))
            .sum();
        let dropped: u64 = manifest["dropped"]
            .as_object()
            .expect("drops by kind")
            .values()
            .map(|n| n.as_u64().expect("a count"))
            .sum();
        let reported = report.recording.as_ref().map_or(0, |r| r.dropped);
        assert_eq!(dropped, reported, "the report's drops are the manifest's");
        (report, written + dropped)
    };
    let (serial, all) = accounted(false, ParallelConfig::default());
    assert!(all > 10_000, "{all} records");
    for config in [variants()[0], variants()[3]] {
        let (report, lossy) = accounted(true, config);
        assert!(report.parallel.workers > 1);
        assert_eq!(
            comparable(&report)["state_digest"],
            comparable(&serial)["state_digest"]
        );
        assert_eq!(lossy, all, "{config:?}: records written and dropped");
    }
}
