//! The external tools some tests compare against (Icarus Verilog, the
//! Python decoders): whether each is there. A test whose tool is missing
//! fails, naming the tool and how to install it (`.ci/run` installs them
//! all): a comparison that did not run must never pass.

use std::process::Command;

/// Fails the test: `what` is missing, so the check `skipped` names
/// cannot run.
pub fn missing(what: &str, skipped: &str) -> ! {
    panic!("{what} is not installed, so {skipped} cannot run: install it as .ci/run does");
}

/// Whether `iverilog` and `vvp` can be run.
pub fn icarus_installed() -> bool {
    ["iverilog", "vvp"].iter().all(|tool| {
        Command::new(tool)
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success() || !o.stdout.is_empty() || !o.stderr.is_empty())
    })
}

/// Whether `python3` can import `modules` (`a, b.c`).
pub fn python_has(modules: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The Perfetto trace protos of the `perfetto` package.
pub const PERFETTO_PROTOS: &str = "perfetto.protos.perfetto.trace.perfetto_trace_pb2";
