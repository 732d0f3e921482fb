//! `chronc run`: compile a design and simulate it, then print a summary
//! (or JSON). Exits 0 on a clean stop, 1 on a runtime fault or an
//! unfinished drain, 2 on a compile error or bad arguments, and 130 (143)
//! when SIGINT (SIGTERM) stopped it: the run ends at the instant it was
//! in, with its summary and whole-record recordings; a second signal exits
//! at once.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use chronon_compiler::config::Threads;
use chronon_compiler::diag_render::{render_human, render_json};
use chronon_compiler::run::{PrintTo, RunError, RunOptions, StopAt, parse_time, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::diag::Diagnostic;
use chronon_lang::span::SourceMap;
use indicatif::{ProgressBar, ProgressStyle};

/// Which engine runs the design.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum EngineArg {
    /// The reference interpreter.
    Interp,
    /// The Cranelift JIT.
    #[default]
    Jit,
}

/// Arguments of `chronc run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Design files, compiled together as one design.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Stop after this many edges of `--domain` (default: the first clock).
    #[arg(long, conflicts_with = "until")]
    pub cycles: Option<u64>,
    /// The domain whose edges `--cycles` counts.
    #[arg(long, requires = "cycles")]
    pub domain: Option<String>,
    /// Stop after every instant at or before this time (`5us`, `1/3 ms`).
    #[arg(long)]
    pub until: Option<String>,
    /// After stopping, run on until every channel and FIFO is empty.
    #[arg(long)]
    pub drain: bool,
    /// Instants allowed for draining.
    #[arg(long, default_value_t = 1_000_000, requires = "drain")]
    pub drain_limit: u64,
    /// Override a parameter of the top system: `-p NAME=VALUE`.
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// A folder to look for `use`d modules in, after the design's own
    /// (repeatable, searched in order): `use lib::fifo;` reads
    /// `lib/fifo.chr` from the first that has it.
    #[arg(short = 'L', value_name = "DIR")]
    pub lib: Vec<PathBuf>,
    /// Seed of the design's `random()` values (recorded in the report).
    #[arg(long, default_value_t = chronon_compiler::lower::random::DEFAULT_SEED)]
    pub seed: u64,
    /// Execution engine.
    #[arg(long, value_enum, default_value_t = EngineArg::Jit)]
    pub engine: EngineArg,
    /// The top system (default: the one system no other system instantiates).
    #[arg(long)]
    pub top: Option<String>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not write the lines of `print` statements (they go to stdout,
    /// or to stderr with `--json`).
    #[arg(long)]
    pub quiet_print: bool,
    /// Worker threads: `auto` (the host's cores, where the planner expects
    /// a gain; otherwise one) or a count (1: serial). Results never depend
    /// on it.
    #[arg(long, default_value = "auto", value_name = "N|auto")]
    pub threads: String,
    /// Set an execution switch (`run-ahead`, `replay-loop`, `simd`, ...;
    /// results never depend on them): `--exec SWITCH=on|off`.
    #[arg(long = "exec", value_name = "SWITCH=on|off")]
    pub exec: Vec<String>,
    /// Write every register's and counter's final value to this JSON file
    /// (with `--json`, the report has the registers too).
    #[arg(long, value_name = "FILE.json")]
    pub dump_state: Option<PathBuf>,
    /// Recording outputs (`--trace`, `--perfetto`, `--vcd`, `--counters`, ...).
    #[command(flatten)]
    pub record: crate::cli::trace::RecordArgs,
}

fn usage(message: &str) -> ExitCode {
    sayln!("error: {message}");
    ExitCode::from(2)
}

/// Prints the diagnostics that stopped the run before it started (JSON on
/// stdout with `--json`, as `chronc check --format json` prints them) and
/// exits 2.
fn compile_failure(args: &RunArgs, diags: &[Diagnostic], sources: &SourceMap) -> ExitCode {
    if args.json {
        let json = format!("{}\n", render_json(diags, sources));
        if let Err(e) = super::out(&json) {
            sayln!("{e}");
        }
    } else {
        let color = std::io::stderr().is_terminal();
        say!("{}", render_human(diags, sources, 100, color));
    }
    ExitCode::from(2)
}

/// `--dump-state FILE`: the run's end (top, stop reason, time, instants)
/// and every register's and counter's final value, as JSON.
fn write_state(
    path: &std::path::Path,
    report: &chronon_compiler::run::RunReport,
) -> std::io::Result<()> {
    #[derive(serde::Serialize)]
    struct StateDump<'a> {
        top: &'a str,
        stop: &'a str,
        time: &'a str,
        instants: u64,
        registers: &'a [chronon_compiler::run::RegisterReport],
        counters: &'a [chronon_compiler::run::CounterReport],
    }
    let dump = StateDump {
        top: &report.top,
        stop: &report.stop,
        time: &report.time,
        instants: report.instants,
        registers: report.registers.as_deref().unwrap_or_default(),
        counters: &report.counters,
    };
    let text = serde_json::to_string_pretty(&dump).map_err(std::io::Error::other)? + "\n";
    std::fs::write(path, text)
}

/// `--threads`: `auto` or a count of at least one.
fn threads(arg: &str) -> Result<Threads, String> {
    if arg == "auto" {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        return Ok(Threads::Auto { cores });
    }
    match arg.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Threads::Fixed(n)),
        _ => Err(format!(
            "--threads: `{arg}` is not `auto` or a count of at least 1"
        )),
    }
}

/// Runs the subcommand.
pub fn main(args: RunArgs) -> ExitCode {
    super::catch_interrupts();
    let mut sources = SourceMap::new();
    if let Err(unreadable) = super::source::read_sources(&args.files, &mut sources) {
        return compile_failure(&args, &unreadable, &sources);
    }
    let root = super::source::design_root(&args.files);
    if let Err(unreadable) = super::source::read_modules(&mut sources, &root, &args.lib) {
        return compile_failure(&args, &unreadable, &sources);
    }
    let mut params = Vec::new();
    for p in &args.params {
        match p.split_once('=') {
            Some((n, v)) => params.push((n.trim().to_string(), v.trim().to_string())),
            None => return usage(&format!("`-p {p}` is not NAME=VALUE")),
        }
    }
    let stop = match (&args.cycles, &args.until) {
        (Some(count), _) => StopAt::Cycles {
            count: *count,
            domain: args.domain.clone(),
        },
        (None, Some(t)) => match parse_time(t) {
            Ok(t) => StopAt::Until(t),
            Err(e) => return usage(&format!("--until: {e}")),
        },
        (None, None) => StopAt::Finish,
    };
    let mut exec = match super::exec::config(&args.exec) {
        Ok(exec) => exec,
        Err(e) => return usage(&e),
    };
    exec.parallel.threads = match threads(&args.threads) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    let options = RunOptions {
        top: args.top.clone(),
        params,
        engine: match args.engine {
            EngineArg::Interp => EngineKind::Interp,
            EngineArg::Jit => EngineKind::Jit,
        },
        stop,
        drain: args.drain.then_some(args.drain_limit),
        seed: args.seed,
        exec,
        interrupt: Some(&super::INTERRUPT),
        dump_state: args.dump_state.is_some(),
        print: match (args.quiet_print, args.json) {
            (true, _) => PrintTo::Quiet,
            (false, true) => PrintTo::Stderr,
            (false, false) => PrintTo::Stdout,
        },
    };
    let recording = match args.record.options(("--dump-state", &args.dump_state)) {
        Ok(r) => r,
        Err(e) => return usage(&e),
    };
    // With a recording, its warnings say this; without one nothing would.
    if recording.ticks && !recording.any() {
        sayln!(
            "warning: --trace-ticks records tick slices only in a Perfetto trace (--perfetto), \
             and no recording was asked for"
        );
    }
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let mut progress = |edges: u64, elapsed: Duration| {
        if !show_progress || elapsed < Duration::from_secs(1) {
            return;
        }
        let b = bar.get_or_insert_with(|| {
            let b = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
                b.set_style(style);
            }
            b
        });
        let rate = edges as f64 / elapsed.as_secs_f64().max(1e-9);
        b.set_message(format!("{edges} edges, {rate:.0} edges/s"));
        b.tick();
    };
    let result = run_recorded(&mut sources, &options, &recording, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match result {
        Err(RunError::Compile(diags)) => compile_failure(&args, &diags, &sources),
        Err(RunError::Setup(message)) => usage(&message),
        Ok(report) => {
            let text = if args.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(text) => text + "\n",
                    Err(e) => return usage(&format!("cannot write JSON: {e}")),
                }
            } else {
                report.summary(false)
            };
            if let Err(e) = super::out(&text) {
                sayln!("{e}");
                return ExitCode::FAILURE;
            }
            if let Some(path) = &args.dump_state
                && let Err(e) = write_state(path, &report)
            {
                sayln!("error: cannot write --dump-state {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            // Each fault's statement, shown as a compile error is.
            let faults = report.fault_diagnostics();
            if !args.json && !faults.is_empty() {
                let color = std::io::stderr().is_terminal();
                say!("{}", render_human(&faults, &sources, 100, color));
            }
            if let Some(e) = report.recording.as_ref().and_then(|r| r.error.as_ref()) {
                sayln!("error: recording failed: {e}");
            }
            if report.stop == "interrupted" {
                ExitCode::from(super::interrupt_exit_code())
            } else if report.is_clean() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
