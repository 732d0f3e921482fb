//! `chronc fmt`: rewrite design files in the canonical layout.
//!
//! A file that does not parse (any `E01xx` error) is left untouched: its
//! diagnostics are printed as `chronc check` prints them (the same codes
//! and spans) and `fmt` exits 1. So a file is never rewritten from a guess
//! at what its broken tokens meant, and the formatter sees only sources
//! within the parser's limits (E0102's nesting depth among them).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use miette::{NamedSource, Report};

use chronon_compiler::diag_render::render_human;
use chronon_compiler::fmt::format_source;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};

/// Arguments of `chronc fmt`.
#[derive(Args)]
pub struct FmtArgs {
    /// Report the files that are not formatted (exit status 1) instead of
    /// rewriting them.
    #[arg(long)]
    check: bool,
    /// The `.chr` files to format; `-` reads standard input and writes the
    /// result to standard output (for editors).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Formats every file; exits 1 when a file could not be read or formatted,
/// or, with `--check`, is not formatted.
pub fn main(args: FmtArgs) -> ExitCode {
    let mut failed = false;
    for path in &args.files {
        let stdin = path.as_os_str() == "-";
        let name = if stdin {
            "<stdin>".to_string()
        } else {
            path.display().to_string()
        };
        let read = super::source::read_source(path).map_err(|e| e.message);
        let src = match read {
            Ok(src) => src,
            Err(err) => {
                sayln!("error: {err}");
                failed = true;
                continue;
            }
        };
        if let Some(report) = syntax_errors(&name, &src) {
            say!("{report}");
            sayln!("error: {name} does not parse; it was left unchanged");
            failed = true;
            continue;
        }
        let formatted = match format_source(&src) {
            Ok(formatted) => formatted,
            Err(err) => {
                let report = Report::new(err).with_source_code(NamedSource::new(&name, src));
                sayln!("{report:?}");
                failed = true;
                continue;
            }
        };
        if stdin && !args.check {
            if let Err(e) = super::out(&formatted) {
                sayln!("{e}");
                failed = true;
            }
            continue;
        }
        if formatted == src {
            continue;
        }
        if args.check {
            if let Err(e) = super::out(&format!("{name}: not formatted\n")) {
                sayln!("{e}");
            }
            failed = true;
        } else if let Err(err) = std::fs::write(path, formatted) {
            sayln!("error: cannot write {name}: {err}");
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `chronc check`'s rendering of `src`'s diagnostics when any of them is a
/// syntax error (phase `01`), else `None`.
fn syntax_errors(name: &str, src: &str) -> Option<String> {
    let mut sources = SourceMap::new();
    sources.add(name.to_string(), src.to_string());
    let result = compile(&mut sources, &CompileOptions::default());
    let syntax = |d: &chronon_lang::diag::Diagnostic| d.is_error() && d.code.starts_with("E01");
    if !result.diagnostics.iter().any(syntax) {
        return None;
    }
    let color = std::io::stderr().is_terminal();
    Some(render_human(&result.diagnostics, &sources, 100, color))
}
