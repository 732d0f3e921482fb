//! `chronc fmt`: rewrite design files in the canonical layout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use miette::{NamedSource, Report};

use chronon_compiler::fmt::format_source;

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
        let read = if stdin {
            std::io::read_to_string(std::io::stdin())
                .map_err(|e| format!("cannot read {name}: {e}"))
        } else {
            super::read_source(path)
        };
        let src = match read {
            Ok(src) => src,
            Err(err) => {
                sayln!("error: {err}");
                failed = true;
                continue;
            }
        };
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
