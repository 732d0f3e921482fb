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
pub mod source;
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

/// Set by the first SIGINT or SIGTERM (see [`on_interrupt`]); `chronc run`
/// hands it to the run, which stops at the end of the instant it is in.
pub static INTERRUPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The signal that set [`INTERRUPT`].
static INTERRUPT_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The exit status of a run stopped by a signal: 128 plus its number (130
/// for SIGINT, 143 for SIGTERM), as shells report a process the signal
/// killed.
pub fn interrupt_exit_code() -> u8 {
    (128 + INTERRUPT_SIGNAL.load(std::sync::atomic::Ordering::Relaxed)).clamp(0, 255) as u8
}

/// The SIGINT and SIGTERM handler: the first asks the run to stop
/// cleanly, a second exits at once (a user who presses Ctrl-C twice means
/// it). Only atomic stores and `_exit`, which are async-signal-safe.
extern "C" fn on_interrupt(signal: libc::c_int) {
    use std::sync::atomic::Ordering;
    if INTERRUPT.swap(true, Ordering::SeqCst) {
        // SAFETY: `_exit` is async-signal-safe and ends the process at
        // once, without running anything of this program.
        unsafe { libc::_exit(128 + signal) };
    }
    INTERRUPT_SIGNAL.store(signal, Ordering::SeqCst);
}

/// Installs [`on_interrupt`] for SIGINT and SIGTERM.
pub fn catch_interrupts() {
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only does async-signal-safe work (above), and
        // it is installed before the run starts any thread.
        unsafe {
            libc::signal(signal, handler as libc::sighandler_t);
        }
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
