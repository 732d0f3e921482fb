//! Helpers shared by the tests that run the `chronc` binary (`cli.rs`,
//! `cli_errors.rs`, `signed_trace.rs`, `faults.rs`, `names.rs`): each test
//! file is its own crate and includes this module with `mod common;`.

// Each test crate uses only some of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Fails the test: `what` is missing, so `skipped` cannot run (a
/// comparison that did not run must never pass; `.ci/run` installs it).
pub fn missing_tool(what: &str, skipped: &str) -> ! {
    panic!("{what} is not installed, so {skipped} cannot run: install it as .ci/run does");
}

/// The repository root, where design paths in the tests start.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("compiler/ sits in the repository")
        .to_path_buf()
}

/// `chronc args...` run from the repository root, without colour.
pub fn chronc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args(args)
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .output()
        .expect("the chronc binary starts")
}

/// A fresh scratch directory `target/<group>/<name>-<pid>`.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = repo_root()
        .join("target")
        .join(group)
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Standard output and standard error, in that order, as text.
pub fn all_output(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
