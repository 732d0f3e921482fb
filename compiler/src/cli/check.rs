//! `chronc check`: parse, resolve, type-check and elaborate design files and
//! report every diagnostic. Exits 1 when any error was found.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use chronon_compiler::diag_render::{render_human, render_json};
use chronon_lang::CompileOptions;
use chronon_lang::diag::Diagnostic;
use chronon_lang::span::SourceMap;

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum Format {
    /// Source snippets with labels (colour only on a terminal).
    #[default]
    Human,
    /// A JSON array of diagnostics.
    Json,
}

/// Arguments of `chronc check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Design files; they are checked together as one design (`-` reads
    /// standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The top system (default: the one system no other system instantiates).
    #[arg(long)]
    pub top: Option<String>,
    /// Override a parameter of the top system: `-p NAME=VALUE`.
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// A folder to look for `use`d modules in, after the design's own
    /// (repeatable, searched in order): `use lib::fifo;` reads
    /// `lib/fifo.chr` from the first that has it.
    #[arg(short = 'L', value_name = "DIR")]
    pub lib: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Runs the subcommand.
pub fn main(args: CheckArgs) -> ExitCode {
    let mut sources = SourceMap::new();
    if let Err(unreadable) = super::source::read_sources(&args.files, &mut sources) {
        // Reported as any diagnostic is, in the format asked for.
        return report(&args, &unreadable, &sources);
    }
    let root = super::source::design_root(&args.files);
    if let Err(unreadable) = super::source::read_modules(&mut sources, &root, &args.lib) {
        return report(&args, &unreadable, &sources);
    }
    let mut params = Vec::new();
    for p in &args.params {
        match p.split_once('=') {
            Some((n, v)) => params.push((n.trim().to_string(), v.trim().to_string())),
            None => {
                sayln!("error: `-p {p}` is not NAME=VALUE");
                return ExitCode::from(2);
            }
        }
    }
    let options = CompileOptions {
        top: args.top.clone(),
        params,
        require_top: false,
    };
    let diagnostics = chronon_compiler::check::check(&mut sources, &options);
    report(&args, &diagnostics, &sources)
}

/// Prints `diagnostics` in the format `args` asks for; exits 1 when one is
/// an error.
fn report(args: &CheckArgs, diagnostics: &[Diagnostic], sources: &SourceMap) -> ExitCode {
    let has_error = diagnostics.iter().any(|d| d.is_error());
    match args.format {
        Format::Json => {
            let json = format!("{}\n", render_json(diagnostics, sources));
            if let Err(e) = super::out(&json) {
                sayln!("{e}");
                return ExitCode::FAILURE;
            }
        }
        Format::Human => {
            let color = std::io::stderr().is_terminal();
            say!("{}", render_human(diagnostics, sources, 100, color));
            let (errors, warnings) =
                diagnostics.iter().fold(
                    (0, 0),
                    |(e, w), d| {
                        if d.is_error() { (e + 1, w) } else { (e, w + 1) }
                    },
                );
            if errors + warnings > 0 {
                sayln!("{errors} error(s), {warnings} warning(s)");
            }
        }
    }
    if has_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
