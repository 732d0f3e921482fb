//! `chronc`: the Chronon compiler and simulator command line.
//!
//! One subcommand per file under `cli/`; this file only dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Compile, check and simulate Chronon (`.chr`) designs.
#[derive(Parser)]
#[command(name = "chronc", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, resolve and type-check design files and report every diagnostic.
    Check(cli::check::CheckArgs),
    /// Rewrite design files in the canonical layout (`--check` only reports).
    Fmt(cli::fmt::FmtArgs),
    /// Compile a design and simulate it; print a summary of the run.
    Run(Box<cli::run::RunArgs>),
    /// Work with recorded traces: merge text logs, recover a torn Perfetto file.
    #[command(subcommand)]
    Trace(cli::trace::TraceCommand),
}

fn main() -> ExitCode {
    cli::ignore_file_size_signal();
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => cli::check::main(args),
        Command::Fmt(args) => cli::fmt::main(args),
        Command::Run(args) => cli::run::main(*args),
        Command::Trace(command) => cli::trace::main(command),
    }
}
