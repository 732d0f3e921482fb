//! `chronc` on bad input at the process boundary: bad flags and values,
//! parameters that do not exist or do not fit, unreadable inputs,
//! unwritable outputs, a full disk and a file-size limit. Each gives a clean
//! exit status (2 for bad arguments or designs, 1 for a failed run or
//! output) and a message naming the cause, never a panic.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{all_output as text, chronc, repo_root};

/// Asserts the exit status and that the output says `needle`, and that
/// nothing panicked.
fn expect(out: &Output, code: i32, needle: &str, what: &str) {
    let all = text(out);
    assert!(!all.contains("panicked"), "{what}: panicked:\n{all}");
    assert_eq!(out.status.code(), Some(code), "{what}:\n{all}");
    assert!(
        all.contains(needle),
        "{what}: expected `{needle}` in:\n{all}"
    );
}

/// A UTF-8 byte-order mark is accepted (it was E0101 on an invisible
/// character); `check -` reads standard input as `fmt -` does; a design
/// with no instances stops at once with stop reason `empty` (it ran
/// forever); counters of 2^63 and above print unsigned in the summary, the
/// text log and the CSV (they printed negative).
#[test]
fn inputs_and_results_a_new_user_meets() {
    let dir = scratch("inputs-results");
    let design = "clock c = 1 GHz;\nunit U { reg r: u8; counter big; tick { r <= r + 1; \
                  big += 0x8000000000000001; } }\nsystem S { inst u: U on c; }\n";
    let bom = dir.join("bom.chr");
    std::fs::write(&bom, format!("\u{feff}{design}")).expect("write");
    let bom = bom.display().to_string();
    expect(&chronc(&["check", &bom]), 0, "", "a BOM");
    let mut child = Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args(["check", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("chronc starts");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(b"unit U { tick { x <= 1; } }\n")
        .expect("stdin");
    let out = child.wait_with_output().expect("check ends");
    expect(&out, 1, "<stdin>", "check -");
    expect(&out, 1, "E0201", "check -");

    let empty = chronc(&["run", "examples/pairs.chr", "-p", "PAIRS=0", "-q"]);
    expect(&empty, 0, "stopped: empty", "no instances");
    expect(&empty, 0, "instants: 0", "no instances");

    let trace = dir.join("text");
    let csv = dir.join("counters.csv");
    let out = chronc(&[
        "run",
        &bom,
        "--cycles",
        "2",
        "-q",
        "--trace",
        trace.to_str().expect("path"),
        "--counters",
        csv.to_str().expect("path"),
    ]);
    // 2 * (2^63 + 1) wraps to 2.
    expect(&out, 0, "top.u.big = 2", "counter wraps");
    let one = chronc(&[
        "run",
        &bom,
        "--cycles",
        "1",
        "-q",
        "--counters",
        csv.to_str().expect("path"),
    ]);
    expect(
        &one,
        0,
        "top.u.big = 9223372036854775809",
        "counter past 2^63",
    );
    let rows = std::fs::read_to_string(&csv).expect("csv");
    assert!(rows.contains(",9223372036854775809\n"), "{rows}");
    assert!(!rows.contains(",-"), "{rows}");
    let log = std::fs::read_to_string(trace.join("00-c.log")).expect("log");
    assert!(log.contains("C top.u.big 9223372036854775809\n"), "{log}");
}

/// A fresh scratch directory under `target/cli-errors`.
fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-errors", name)
}

const CDC: &str = "examples/cdc_pair.chr";

#[test]
fn bad_stop_flags_are_refused_or_run_cleanly() {
    // At or before 0 ps: the instant at time 0 only.
    let out = chronc(&["run", CDC, "-q", "--until", "0ps"]);
    expect(&out, 0, "instants: 1,", "--until 0ps");
    let out = chronc(&["run", CDC, "-q", "--cycles", "0"]);
    expect(&out, 0, "instants: 0,", "--cycles 0");
    // 35 decimals: exact, not a time overflow.
    let out = chronc(&[
        "run",
        CDC,
        "-q",
        "--until=1.99999999999999999999999999999999999 ps",
    ]);
    expect(&out, 0, "instants: 1,", "--until with 35 decimals");
    for (until, says) in [
        ("1/0 ms", "--until"),
        ("1/3/7 ps", "is not a number"),
        ("5", "has no unit"),
        ("5 parsecs", "unknown time unit"),
        ("-1 ns", "negative"),
        ("99999999999999999999999999999999999999 s", "too large"),
    ] {
        let out = chronc(&["run", CDC, "-q", &format!("--until={until}")]);
        expect(&out, 2, says, &format!("--until {until}"));
    }
    for flags in [
        &["--cycles", "18446744073709551616"][..],
        &["--cycles", "-1"],
        &["--seed", "18446744073709551616"],
        &["--engine", "fast"],
        &["--cycles", "3", "--until", "1ns"],
        &["--domain", "wclk"],
        &["--no-such-flag"],
    ] {
        let mut args = vec!["run", CDC, "-q"];
        args.extend_from_slice(flags);
        let out = chronc(&args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}:\n{}", text(&out));
        assert!(!text(&out).contains("panicked"), "{flags:?}");
    }
    let out = chronc(&["run", CDC, "-q", "--cycles", "3", "--domain", "nope"]);
    expect(&out, 2, "no clock domain named `nope`", "--domain nope");
    let out = chronc(&[
        "run",
        CDC,
        "-q",
        "--counters",
        "x.csv",
        "--counter-interval",
        "0",
    ]);
    expect(&out, 2, "--counter-interval", "--counter-interval 0");
    let out = chronc(&["run", CDC, "-q", "--trace-filter", "bogus"]);
    expect(&out, 2, "--trace-filter", "--trace-filter bogus");
    let out = chronc(&["run", CDC, "-q", "--trace-filter", "from=5ns,to=1ns"]);
    expect(&out, 2, "window is empty", "--trace-filter from after to");
}

#[test]
fn parameters_that_do_not_exist_or_fit_are_diagnosed() {
    let ring = "examples/router_ring.chr";
    for (param, says) in [
        ("NOPE=3", "E0414"),
        ("N=abc", "cannot read `-p N=abc`"),
        ("N=99999999999999999999999999", "does not fit in 64 bits"),
        ("N=0x1ffffffffffffffff", "does not fit in 64 bits"),
        ("N=0x", "cannot read `-p N=0x`"),
        ("N=-1", "does not fit parameter `N: u32`"),
        ("N=4294967296", "does not fit parameter `N: u32`"),
        ("N=true", "does not fit"),
        ("N=1048576", "E0418"),
    ] {
        let out = chronc(&["run", ring, "-q", "--cycles", "2", "-p", param]);
        expect(&out, 2, says, &format!("-p {param}"));
        let out = chronc(&["check", ring, "-p", param]);
        expect(&out, 1, says, &format!("check -p {param}"));
    }
    let out = chronc(&["run", ring, "-q", "-p", "N"]);
    expect(&out, 2, "is not NAME=VALUE", "-p N");
    // A design whose top takes no parameters says so in its help.
    let out = chronc(&["run", CDC, "-q", "-p", "X=1"]);
    expect(
        &out,
        2,
        "`Top` takes no parameters",
        "-p on a system without any",
    );
    // A name given twice is an error naming both values, even when each
    // value alone would do; each value's own error is reported too.
    for (a, b, also) in [
        ("N=2", "N=3", None),
        ("N=2", "N=-1", Some("value -1 does not fit")),
    ] {
        let twice = format!("parameter `N` is given 2 times: `-p {a}`, `-p {b}`");
        let out = chronc(&["run", ring, "-q", "--cycles", "2", "-p", a, "-p", b]);
        expect(&out, 2, &twice, "run -p N twice");
        let out = chronc(&["check", ring, "-p", a, "-p", b]);
        expect(&out, 1, &twice, "check -p N twice");
        if let Some(also) = also {
            expect(&out, 1, also, "check -p N twice, one bad");
        }
    }
    // N = 0: an empty ring is valid, and stops at once (no instance).
    let out = chronc(&["run", ring, "-q", "--cycles", "3", "-p", "N=0"]);
    expect(&out, 0, "stopped: empty", "-p N=0");
}

#[test]
fn unreadable_inputs_are_reported() {
    let dir = scratch("inputs");
    let binary = dir.join("binary.chr");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).expect("write");
    let binary = binary.display().to_string();
    let later = dir.join("later.chr");
    std::fs::write(
        &later,
        b"clock c = 1 GHz;\n// \xc3\xa9 is fine\nunit \xc3\xa9\xc3(",
    )
    .expect("write");
    let later = later.display().to_string();
    // `check` exits 1 on any error, as for any diagnostic; `run` 2, as for
    // any compile error.
    for (cmd, code) in [("run", 2), ("check", 1)] {
        let out = chronc(&[cmd, "no/such/file.chr"]);
        expect(&out, code, "cannot read no/such/file.chr", cmd);
        expect(&out, code, "E0001", cmd);
        let out = chronc(&[cmd, "examples"]);
        expect(&out, code, "cannot read examples", cmd);
        let out = chronc(&[cmd, &binary]);
        expect(
            &out,
            code,
            "not UTF-8 text (byte 0xff at line 1, column 1)",
            cmd,
        );
        expect(&out, code, "E0002", cmd);
        // Every unreadable file is named, not just the first; a bad byte
        // is placed by line and column (in characters).
        let out = chronc(&[cmd, "no/such/a.chr", &later, "no/such/b.chr"]);
        for needle in [
            "cannot read no/such/a.chr",
            "byte 0xc3 at line 3, column 7",
            "cannot read no/such/b.chr",
        ] {
            expect(&out, code, needle, cmd);
        }
    }
    // In JSON too: one coded diagnostic per unreadable file, the bad byte
    // labelled where it is.
    for args in [
        &["check", "--format", "json", "no/such/a.chr", later.as_str()][..],
        &["run", "--json", "no/such/a.chr", later.as_str()][..],
    ] {
        let out = chronc(args);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let codes: Vec<&str> = json
            .as_array()
            .expect("an array")
            .iter()
            .map(|d| d["code"].as_str().expect("a code"))
            .collect();
        assert_eq!(codes, ["E0001", "E0002"], "{args:?}");
        let label = &json[1]["labels"][0];
        assert_eq!(
            (label["line"].as_u64(), label["column"].as_u64()),
            (Some(3), Some(7))
        );
    }
    let out = chronc(&["fmt", "--check", "no/such/file.chr"]);
    expect(&out, 1, "cannot read", "fmt");
    let out = chronc(&["fmt", "--check", &later]);
    expect(&out, 1, "byte 0xc3 at line 3, column 7", "fmt");
    let out = chronc(&["trace", "merge", "no/such/dir"]);
    expect(&out, 1, "manifest.json", "trace merge");
    let out = chronc(&["trace", "recover", "no/such/file.pftrace"]);
    expect(&out, 1, "cannot read no/such/file.pftrace", "trace recover");
    let out = chronc(&["trace", "recover", "examples"]);
    expect(
        &out,
        1,
        "cannot read examples: it is a directory",
        "trace recover DIR",
    );
    let garbage = dir.join("garbage.pftrace");
    std::fs::write(&garbage, b"this is not a trace\n").expect("write");
    let out = chronc(&["trace", "recover", &garbage.display().to_string()]);
    expect(
        &out,
        1,
        "no complete Perfetto packet",
        "trace recover GARBAGE",
    );
    assert!(
        !dir.join("garbage.pftrace.recovered").exists(),
        "an empty output was left"
    );
}

#[test]
fn unwritable_outputs_are_reported_before_the_run() {
    let dir = scratch("outputs");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").expect("write");
    let (d, f) = (dir.display().to_string(), file.display().to_string());
    // A folder cannot be made below a file.
    let missing = format!("{f}/below/out");
    for (flag, path) in [
        ("--vcd", missing.as_str()),
        ("--vcd", d.as_str()),
        ("--perfetto", d.as_str()),
        ("--counters", d.as_str()),
        ("--perfetto", missing.as_str()),
        ("--trace", f.as_str()),
    ] {
        let out = chronc(&["run", CDC, "-q", flag, path]);
        expect(&out, 2, path, &format!("{flag} {path}"));
    }
    // Several unwritable outputs: every one is named, not just the first.
    let (vcd, pf, csv) = (
        format!("{f}/no-vcd/w.vcd"),
        format!("{f}/no-pf/p.pftrace"),
        format!("{f}/no-csv/c.csv"),
    );
    let out = chronc(&[
        "run",
        CDC,
        "-q",
        "--vcd",
        &vcd,
        "--perfetto",
        &pf,
        "--counters",
        &csv,
    ]);
    for path in [&vcd, &pf, &csv] {
        expect(&out, 2, path, "three unwritable outputs");
    }
}

#[test]
fn a_full_disk_stops_the_run_with_the_cause() {
    if !Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here; skipped");
        return;
    }
    for flag in ["--vcd", "--counters", "--perfetto"] {
        let out = chronc(&["run", CDC, "-q", flag, "/dev/full"]);
        expect(&out, 1, "No space left on device", flag);
    }
    // Standard output on a full disk: reported, exit 1, no panic.
    for args in [
        &["run", CDC, "-q"][..],
        &["run", CDC, "-q", "--json"],
        &["check", CDC, "--format", "json"],
        &["fmt", "-"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full");
        let out = Command::new(env!("CARGO_BIN_EXE_chronc"))
            .args(args)
            .current_dir(repo_root())
            .stdin(std::fs::File::open(repo_root().join(CDC)).expect("example"))
            .stdout(full)
            .output()
            .expect("chronc starts");
        expect(&out, 1, "writing standard output", &format!("{args:?}"));
    }
    // Standard error on a full disk: nowhere to report, but the exit status
    // is still the command's own (1: an error diagnostic), not a panic's.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args(["check", "no/such/file.chr"])
        .current_dir(repo_root())
        .stderr(full)
        .output()
        .expect("chronc starts");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn a_file_size_limit_is_reported_not_a_signal() {
    let dir = scratch("ulimit");
    let vcd = dir.join("wave.vcd");
    let bin = env!("CARGO_BIN_EXE_chronc");
    // 8 blocks of 512 bytes: the first buffer flush passes the limit.
    let script = format!(
        "ulimit -f 8 && exec '{bin}' run {CDC} -q --vcd '{}' --vcd-signals '*'",
        vcd.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(repo_root())
        .output()
        .expect("sh starts");
    expect(&out, 1, "File too large", "ulimit -f 8");
    expect(&out, 1, &vcd.display().to_string(), "names the file");
    // What was written is a valid prefix: whole lines only.
    let written = std::fs::read(&vcd).expect("the prefix is there");
    assert!(
        !written.is_empty() && written.ends_with(b"\n"),
        "{written:?}"
    );
    assert!(written.len() <= 8 * 512);
}

#[test]
fn elaboration_and_unrolling_blowups_are_errors_not_hangs() {
    let dir = scratch("blowups");
    let cases = [
        (
            "nested_systems",
            "clock core = 1 GHz;\nunit A { tick { } }\n\
             system B { for i in 0..1024 { inst a[i]: A on core; } }\n\
             system C { for i in 0..1024 { inst b[i]: B; } }\n\
             system Top { for i in 0..1024 { inst c[i]: C; } }\n",
            "E0418",
        ),
        (
            "nested_loops",
            "clock core = 1 GHz;\nunit A { tick { } }\n\
             system Top { for i in 0..1048576 { for j in 0..1048576 { inst a[i]: A on core; } } }\n",
            "E0418",
        ),
        (
            "tick_loop",
            "clock core = 1 GHz;\nunit A { reg s: u32; tick { for i in 0..4294967295 { s <= s + i; } } }\n\
             system Top { inst a: A on core; }\n",
            "E0324",
        ),
        (
            "function_loop_in_loop",
            "clock core = 1 GHz;\n\
             fn f(x: u32) -> u32 { let s: u32 = x; for i in 0..4000 { s = s + i; } return s; }\n\
             unit A { reg s: u32; tick { for j in 0..4000 { s <= f(j); } } }\n\
             system Top { inst a: A on core; }\n",
            "unroll to more than",
        ),
        (
            // 2^30 items of 1000 words: 8 TB, an allocation abort before.
            "fifo_storage",
            "clock a = 1 GHz;\nclock b = 700 MHz;\n\
             unit W { out tx: [u64; 1000]; tick { tx.try_send([1; 1000]); } }\n\
             unit R { in rx: [u64; 1000] cdc fwft; tick { let _v = rx.recv(); } }\n\
             system Top { inst w: W on a; inst r: R on b; cdc w.tx -> r.rx depth 1073741824; }\n",
            "FIFO storage in 64-bit words",
        ),
        (
            "channel_storage",
            "clock a = 1 GHz;\n\
             unit W { out tx: [u64; 200000]; tick { tx.try_send([1; 200000]); } }\n\
             unit R { in rx: [u64; 200000]; tick { let _v = rx.recv(); } }\n\
             system Top { inst w: W on a; inst r: R on a; connect w.tx -> r.rx latency 1048576; }\n",
            "channel storage in 64-bit words",
        ),
        (
            // A Cranelift assertion (block parameters are numbered by u16)
            // before: now a lowering error on both engines.
            "too_many_locals",
            "clock a = 1 GHz;\n\
             unit W { out tx: [u64; 200000]; tick { tx.try_send([1; 200000]); } }\n\
             unit R { in rx: [u64; 200000]; tick { let _v = rx.recv(); } }\n\
             system Top { inst w: W on a; inst r: R on a; connect w.tx -> r.rx; }\n",
            "scalar locals, more than 65535",
        ),
        (
            "zero_length_arrays",
            "clock core = 1 GHz;\nunit A { reg r: [u64; 0]; tick { } }\n\
             system Top<N: u32 = 0> { inst a[N]: A on core; }\n",
            "E0324",
        ),
    ];
    for (name, src, says) in cases {
        let path = dir.join(format!("{name}.chr"));
        std::fs::write(&path, src).expect("write");
        let started = std::time::Instant::now();
        for engine in ["jit", "interp"] {
            let out = chronc(&[
                "run",
                &path.display().to_string(),
                "-q",
                "--cycles",
                "2",
                "--engine",
                engine,
            ]);
            expect(&out, 2, says, &format!("{name} on {engine}"));
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

/// `chronc fmt` leaves a file that does not parse untouched, prints the
/// diagnostics `chronc check` prints for it (same codes and spans) and
/// exits 1: a non-ASCII name (once rewritten `unit Z ä hler`), a missing
/// `;` (once joining two items), brackets nested past E0102's limit.
#[test]
fn fmt_refuses_files_that_do_not_parse() {
    let dir = scratch("fmt-broken");
    let deep = format!("const X: u32 = {}1{};\n", "(".repeat(80), ")".repeat(80));
    let cases = [
        (
            "name",
            "clock c = 1 GHz;\nunit Zähler { tick { } }\n",
            "E0101",
        ),
        (
            "semicolon",
            "const A: u32 = 1\nconst B: u32 = 2;\n",
            "E0101",
        ),
        ("deep", deep.as_str(), "E0102"),
    ];
    for (name, source, code) in cases {
        let path = dir.join(format!("{name}.chr"));
        std::fs::write(&path, source).expect("scratch file");
        let file = path.to_str().expect("UTF-8 path");
        let fmt = chronc(&["fmt", file]);
        expect(&fmt, 1, code, name);
        assert_eq!(
            std::fs::read_to_string(&path).expect("file"),
            source,
            "{name}: rewritten"
        );
        let check = chronc(&["check", file]);
        expect(&check, 1, code, name);
        let diagnostics = String::from_utf8_lossy(&check.stderr);
        let diagnostics = diagnostics
            .rsplit_once("\n\n")
            .map_or(&*diagnostics, |(d, _)| d);
        assert!(
            String::from_utf8_lossy(&fmt.stderr).contains(diagnostics),
            "{name}: fmt's diagnostics differ from check's:\n{}\n--- check:\n{diagnostics}",
            text(&fmt)
        );
        expect(&chronc(&["fmt", "--check", file]), 1, code, name);
    }
}

/// Nesting that the layout once took exponential time on (49 parentheses
/// never finished, each level of nested calls doubled the time) formats at
/// once up to E0102's limit, and the result is stable.
#[test]
fn fmt_formats_deep_nesting_up_to_the_limit() {
    let dir = scratch("fmt-deep");
    let mut call = "1".to_string();
    for _ in 0..60 {
        call = format!("f({call}, 2)");
    }
    let source = format!(
        "fn f(a: u32, b: u32) -> u32 {{ return a + b; }}\nconst X: u32 = {}1{};\n\
         fn g() -> u32 {{ return {call}; }}\n",
        "(".repeat(60),
        ")".repeat(60)
    );
    let path = dir.join("deep.chr");
    std::fs::write(&path, &source).expect("scratch file");
    let file = path.to_str().expect("UTF-8 path");
    expect(&chronc(&["fmt", file]), 0, "", "deep");
    let once = std::fs::read_to_string(&path).expect("file");
    expect(&chronc(&["fmt", "--check", file]), 0, "", "deep, formatted");
    expect(&chronc(&["check", file]), 0, "", "deep, still valid");
    assert_eq!(once.matches("f(").count(), 61, "{once}");
}

/// Output paths follow one rule: chronc creates each output and the
/// missing folders above it (`--trace` did, the file outputs did not), and
/// an output it cannot create is reported before the run (exit 2, as every
/// argument error; a write error during the run exits 1). Two outputs on
/// one path are refused. A reused `--trace` folder keeps no logs of an
/// earlier run. Options that record nothing for the design are warned
/// about.
#[test]
fn outputs_follow_one_rule_and_silent_options_warn() {
    let dir = scratch("output-rules");
    let same = dir.join("same").display().to_string();
    let out = chronc(&["run", CDC, "-q", "--vcd", &same, "--counters", &same]);
    expect(
        &out,
        2,
        "--vcd and --counters name the same path",
        "same path",
    );
    assert!(!dir.join("same").exists(), "nothing was written");
    for flag in ["--trace", "--perfetto", "--vcd", "--counters"] {
        let deep = dir.join(format!("new{flag}/and/deeper/out"));
        let out = chronc(&["run", CDC, "-q", flag, deep.to_str().expect("path")]);
        expect(&out, 0, "recorded", flag);
        assert!(deep.exists(), "{flag}: {} was not made", deep.display());
    }
    std::fs::write(dir.join("a-file"), "x").expect("a file");
    let blocked = dir.join("a-file/below");
    let out = chronc(&["run", CDC, "-q", "--vcd", blocked.to_str().expect("path")]);
    expect(&out, 2, "a-file/below", "a folder below a file");

    // A folder of a design with another clock keeps only this run's logs.
    let trace = dir.join("text");
    std::fs::create_dir_all(&trace).expect("folder");
    std::fs::write(trace.join("07-old_clock.log"), "stale\n").expect("stale log");
    std::fs::write(trace.join("notes.txt"), "mine\n").expect("a user's file");
    let trace_arg = trace.to_str().expect("path");
    let out = chronc(&["run", CDC, "-q", "--trace", trace_arg]);
    expect(&out, 0, "recorded", "reused trace folder");
    assert!(
        !trace.join("07-old_clock.log").exists(),
        "the stale log was left"
    );
    assert!(
        trace.join("notes.txt").exists(),
        "a file the run does not own was removed"
    );

    let out = chronc(&[
        "run",
        CDC,
        "-q",
        "--trace",
        trace_arg,
        "--trace-filter",
        "event=nosuch,unit=zz",
        "--trace-ticks",
        "--vcd",
        dir.join("w.vcd").to_str().expect("path"),
        "--vcd-signals",
        "nothing.*",
    ]);
    for needle in [
        "warning: --trace-filter unit=zz matches no unit",
        "warning: --trace-filter event=nosuch: the design has no trace or FIFO event",
        "warning: --vcd-signals nothing.* matches no register",
        "warning: --trace-ticks records tick slices only in a Perfetto trace",
    ] {
        expect(&out, 0, needle, "silent options");
    }
    // Alone, with no recording at all, too.
    let out = chronc(&["run", CDC, "-q", "--trace-ticks"]);
    expect(
        &out,
        0,
        "warning: --trace-ticks records tick slices only in a Perfetto trace",
        "--trace-ticks alone",
    );
    let quiet = chronc(&[
        "run",
        CDC,
        "-q",
        "--trace",
        trace_arg,
        "--trace-filter",
        "event=write",
    ]);
    assert!(!text(&quiet).contains("warning"), "{}", text(&quiet));
}

/// Limits only lowering sees are coded diagnostics from `check` as from
/// `run` (E0328, E0329): `check` passed them (`[]`, exit 0) and `run`
/// printed a plain `error:` line with no code, and nothing with `--json`.
#[test]
fn lowering_limits_are_diagnostics_from_check_and_run() {
    for (file, code) in [
        ("tests/ui/E0328_tick_unrolls_too_far.chr", "E0328"),
        ("tests/ui/E0329_too_many_locals.chr", "E0329"),
    ] {
        let check = chronc(&["check", "--format", "json", file]);
        assert_eq!(check.status.code(), Some(1), "{}", text(&check));
        let run = chronc(&["run", "--json", "-q", file]);
        assert_eq!(run.status.code(), Some(2), "{}", text(&run));
        for out in [&check, &run] {
            let json: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("a JSON array on stdout");
            assert_eq!(json[0]["code"], code, "{json}");
            assert!(json[0]["labels"][0]["line"].as_u64().is_some(), "{json}");
        }
    }
}
