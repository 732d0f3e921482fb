//! The `chronc` subcommands, one per module, and the output helpers they
//! share.

use std::io::Write;

/// `eprint!` that never panics: when standard error cannot be written
/// (closed, a full disk) there is nowhere left to report to, and a panic
/// would only turn the exit status into 101.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::say_fmt(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics (see `say!`).
macro_rules! sayln {
    ($($arg:tt)*) => {{
        $crate::cli::say_fmt(format_args!($($arg)*));
        $crate::cli::say_fmt(format_args!("\n"));
    }};
}

pub mod check;
pub mod exec;
pub mod fmt;
pub mod run;
pub mod trace;

/// Writes to standard error, ignoring failure (see `say!`).
pub fn say_fmt(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().write_fmt(args);
}

/// Writes `text` to standard output and flushes it. `print!` panics when
/// standard output fails (a full disk, a closed pipe); this names the
/// failure instead, for the caller to report and exit non-zero.
pub fn out(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("error: writing standard output: {e}"))
}

/// Reads the design files `paths` into `sources`: every file that cannot
/// be read is named (`cannot read FILE: why`), not just the first. `Err`
/// holds the messages.
pub fn read_sources(
    paths: &[std::path::PathBuf],
    sources: &mut chronon_lang::span::SourceMap,
) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    for path in paths {
        match read_source(path) {
            Ok(text) => {
                sources.add(path.display().to_string(), text);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Reads one design file; `Err` is `cannot read FILE: why`, and for a file
/// that is not UTF-8 text says where its first bad byte is.
pub fn read_source(path: &std::path::Path) -> Result<String, String> {
    match std::fs::read(path).map(String::from_utf8) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&valid[start..]).chars().count() + 1;
            let byte = e.as_bytes()[valid.len()];
            Err(format!(
                "cannot read {}: not UTF-8 text (byte 0x{byte:02x} at line {line}, \
                 column {column}); design files are UTF-8",
                path.display()
            ))
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Lets writes past a file-size limit (`ulimit -f`) fail with `EFBIG`,
/// which the writers report with the file's name, instead of the default
/// `SIGXFSZ` killing the process without a word.
pub fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to `SIG_IGN` at start-up,
    // before any other thread exists, installs no handler code and races
    // with nothing.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
