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
    /// The `.chr` files to format.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Formats every file; exits 1 when a file could not be read or formatted,
/// or, with `--check`, is not formatted.
pub fn main(args: FmtArgs) -> ExitCode {
    let mut failed = false;
    for path in &args.files {
        let name = path.display().to_string();
        let src = match std::fs::read_to_string(path) {
            Ok(src) => src,
            Err(err) => {
                eprintln!("error: cannot read {name}: {err}");
                failed = true;
                continue;
            }
        };
        let formatted = match format_source(&src) {
            Ok(formatted) => formatted,
            Err(err) => {
                let report = Report::new(err).with_source_code(NamedSource::new(&name, src));
                eprintln!("{report:?}");
                failed = true;
                continue;
            }
        };
        if formatted == src {
            continue;
        }
        if args.check {
            println!("{name}: not formatted");
            failed = true;
        } else if let Err(err) = std::fs::write(path, formatted) {
            eprintln!("error: cannot write {name}: {err}");
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
