//! SIGINT and SIGTERM during `chronc run` stop the run at the end of the
//! instant it is in: the summary (and `--json`) says `interrupted`, every
//! recording ends on a whole record and `chronc trace merge` reads the
//! logs, and the exit status is 128 plus the signal (130, 143).

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{repo_root, scratch};

/// Starts a long run recording into `dir`, waits until its text log has
/// records (the run is under way), sends `signal`, and returns its output.
fn interrupted_run(dir: &std::path::Path, signal: libc::c_int, json: bool) -> std::process::Output {
    let trace = dir.join("text");
    let mut command = Command::new(env!("CARGO_BIN_EXE_chronc"));
    command
        .args([
            "run",
            "benches/workloads/two_clocks_fifo.chr",
            "--until",
            "1000s",
            "-q",
        ])
        .arg("--trace")
        .arg(&trace)
        .arg("--vcd")
        .arg(dir.join("wave.vcd"))
        .arg("--counters")
        .arg(dir.join("counters.csv"))
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if json {
        command.arg("--json");
    }
    let child = command.spawn().expect("chronc starts");
    let started = Instant::now();
    let log = trace.join("01-fast.log");
    while std::fs::metadata(&log).map_or(true, |m| m.len() < 1 << 16) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sends a signal to our own child, which is still running (it
    // runs for 1000 simulated seconds and nothing has waited for it).
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(sent, 0, "kill");
    child.wait_with_output().expect("chronc ends")
}

fn assert_whole_records(dir: &std::path::Path) {
    for name in [
        "text/00-slow.log",
        "text/01-fast.log",
        "wave.vcd",
        "counters.csv",
    ] {
        let bytes = std::fs::read(dir.join(name)).expect("recorded");
        assert!(bytes.len() > 40, "{name}: {} bytes", bytes.len());
        assert_eq!(bytes.last(), Some(&b'\n'), "{name} ends mid-record");
    }
    let merged = Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args(["trace", "merge"])
        .arg(dir.join("text"))
        .stdout(Stdio::null())
        .output()
        .expect("merge runs");
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sigint_stops_at_an_instant_with_a_summary_and_whole_records() {
    let dir = scratch("interrupt", "sigint");
    let out = interrupted_run(&dir, libc::SIGINT, false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("stopped: interrupted"), "{stdout}");
    assert!(stdout.contains("recorded: "), "{stdout}");
    assert!(stdout.contains("state digest: "), "{stdout}");
    assert_whole_records(&dir);
}

#[test]
fn sigterm_stops_the_same_way_and_json_says_so() {
    let dir = scratch("interrupt", "sigterm");
    let out = interrupted_run(&dir, libc::SIGTERM, true);
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
    assert_eq!(report["stop"], "interrupted");
    assert!(
        report["instants"].as_u64().is_some_and(|n| n > 0),
        "{report}"
    );
    assert_whole_records(&dir);
}
