//! Recording on the command line: the `chronc run` recording flags and the
//! `chronc trace merge DIR` / `chronc trace recover FILE` subcommands.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use chronon_compiler::record::{RecordOptions, TraceFilter};
use chronon_record::merge::{MergeError, merge};
use chronon_record::perfetto::recover;

/// The recording flags of `chronc run`.
#[derive(clap::Args, Debug, Default)]
pub struct RecordArgs {
    /// Write per-domain text logs and a manifest to this directory.
    #[arg(long = "trace", value_name = "DIR")]
    pub trace_dir: Option<PathBuf>,
    /// Write a Perfetto trace to this file.
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// Compress the Perfetto trace (zlib packet batches).
    #[arg(long, requires = "perfetto")]
    pub perfetto_compress: bool,
    /// Write a VCD waveform to this file.
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// Dump only registers and FIFO occupancies whose full name matches
    /// (glob with `*` and `?`; repeatable; default: all).
    #[arg(long, value_name = "PATTERN", requires = "vcd")]
    pub vcd_signals: Vec<String>,
    /// Write counter samples as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub counters: Option<PathBuf>,
    /// Sample counters at every Nth edge of their domain.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub counter_interval: u64,
    /// Keep only some records: `unit=GLOB`, `event=NAME`, `from=TIME`,
    /// `to=TIME`, comma-separated, repeatable.
    #[arg(long, value_name = "EXPR")]
    pub trace_filter: Vec<String>,
    /// Record each unit's tick activity (Perfetto slices).
    #[arg(long)]
    pub trace_ticks: bool,
    /// Drop records (and count them) instead of slowing the run when a
    /// writer falls behind.
    #[arg(long)]
    pub lossy: bool,
}

impl RecordArgs {
    /// Refuses two outputs on one path (`--vcd X --counters X` wrote one
    /// file over the other); `also` is another output of the run.
    fn distinct_outputs(&self, also: (&'static str, &Option<PathBuf>)) -> Result<(), String> {
        let outputs = [
            ("--trace", &self.trace_dir),
            ("--perfetto", &self.perfetto),
            ("--vcd", &self.vcd),
            ("--counters", &self.counters),
            also,
        ];
        let given: Vec<(&str, PathBuf)> = outputs
            .iter()
            .filter_map(|(flag, path)| {
                let path = path.as_ref()?;
                Some((
                    *flag,
                    std::path::absolute(path).unwrap_or_else(|_| path.clone()),
                ))
            })
            .collect();
        for (k, (flag, path)) in given.iter().enumerate() {
            if let Some((other, _)) = given[..k].iter().find(|(_, p)| p == path) {
                return Err(format!(
                    "{other} and {flag} name the same path, {}: each output needs its own",
                    path.display()
                ));
            }
        }
        Ok(())
    }

    /// The library's options; an error names the bad flag. `also` is the
    /// run's other output file (flag and path), which must not be one of
    /// the recordings' either.
    pub fn options(&self, also: (&'static str, &Option<PathBuf>)) -> Result<RecordOptions, String> {
        let mut filter = TraceFilter::default();
        for f in &self.trace_filter {
            filter.add(f).map_err(|e| format!("--trace-filter: {e}"))?;
        }
        if self.counter_interval == 0 {
            return Err("--counter-interval must be at least 1".into());
        }
        self.distinct_outputs(also)?;
        Ok(RecordOptions {
            trace_dir: self.trace_dir.clone(),
            perfetto: self.perfetto.clone(),
            perfetto_compress: self.perfetto_compress,
            vcd: self.vcd.clone(),
            vcd_signals: self.vcd_signals.clone(),
            counters: self.counters.clone(),
            counter_interval: self.counter_interval,
            filter,
            ticks: self.trace_ticks,
            lossy: self.lossy,
        })
    }
}

/// `chronc trace` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum TraceCommand {
    /// Merge a `--trace` directory's per-domain logs into one log in exact
    /// time order, on stdout.
    Merge {
        /// The directory written by `chronc run --trace`.
        dir: PathBuf,
    },
    /// Keep the longest valid prefix of a torn Perfetto trace.
    Recover {
        /// The damaged trace.
        file: PathBuf,
        /// Where to write the recovered trace (default: FILE.recovered).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

/// Runs a `chronc trace` subcommand: 0 on success, 1 on an error.
pub fn main(command: TraceCommand) -> ExitCode {
    match command {
        TraceCommand::Merge { dir } => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let merged = merge(&dir, &mut out);
            let flushed = merged.and_then(|stats| {
                out.flush().map_err(|source| MergeError::Io {
                    path: "<output>".into(),
                    source,
                })?;
                Ok(stats)
            });
            match flushed {
                Ok(stats) => {
                    if let Some(h) = stats.horizon {
                        sayln!(
                            "warning: {} is an incomplete recording (its run did not close it): \
                             merged up to {h}ps, the time every domain's log reached; {} later \
                             records and {} torn lines left out",
                            dir.display(),
                            stats.beyond_horizon,
                            stats.torn_lines
                        );
                    } else if !stats.complete {
                        sayln!(
                            "warning: {} is an incomplete recording with no whole record",
                            dir.display()
                        );
                    }
                    ExitCode::SUCCESS
                }
                // A reader that stopped early (`| head`) is no failure.
                Err(MergeError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::BrokenPipe =>
                {
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e.to_string()),
            }
        }
        TraceCommand::Recover { file, output } => {
            let output = output.unwrap_or_else(|| {
                let mut name = file.clone().into_os_string();
                name.push(".recovered");
                PathBuf::from(name)
            });
            // A directory opens fine on Linux and fails only at the first
            // read: say what it is before the recovery creates its output.
            match std::fs::metadata(&file) {
                Err(e) => return fail(&format!("cannot read {}: {e}", file.display())),
                Ok(m) if m.is_dir() => {
                    return fail(&format!(
                        "cannot read {}: it is a directory",
                        file.display()
                    ));
                }
                Ok(_) => {}
            }
            match recover(&file, &output) {
                // Nothing whole at the start: not a Perfetto trace, or torn
                // inside its first packet; an empty "recovery" would hide that.
                Ok(stats)
                    if stats.packets + stats.salvaged_packets == 0 && stats.dropped_bytes > 0 =>
                {
                    fail(&format!(
                        "{} has no complete Perfetto packet at its start ({} bytes dropped; no \
                     output written): is it a Perfetto trace?",
                        file.display(),
                        stats.dropped_bytes
                    ))
                }
                Ok(stats) => {
                    sayln!(
                        "recovered {}: kept {} packets ({} bytes), {} more from inside a torn \
                         compressed batch, dropped {} bytes",
                        output.display(),
                        stats.packets,
                        stats.kept_bytes,
                        stats.salvaged_packets,
                        stats.dropped_bytes
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e.to_string()),
            }
        }
    }
}

fn fail(message: &str) -> ExitCode {
    sayln!("error: {message}");
    ExitCode::FAILURE
}
