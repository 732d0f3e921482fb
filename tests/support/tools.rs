//! The external tools some tests compare against (Icarus Verilog, the
//! Python decoders): whether each is there, and what a test does when one
//! is not. Where `CHRONON_REQUIRE_TOOLS` is set (`.ci/run` sets it) a
//! missing tool fails the test; elsewhere the test says what it skipped.

use std::process::Command;

/// Whether the tests must have their tools (`CHRONON_REQUIRE_TOOLS` set).
pub fn required() -> bool {
    std::env::var_os("CHRONON_REQUIRE_TOOLS").is_some()
}

/// Reports that `what` is missing, so the check `skipped` names cannot run:
/// panics where tools are required, else prints a note.
pub fn missing(what: &str, skipped: &str) {
    assert!(
        !required(),
        "{what} is not installed and CHRONON_REQUIRE_TOOLS is set: {skipped} cannot run \
         (.ci/run installs it)"
    );
    println!("note: {what} is not installed; {skipped} is skipped");
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
