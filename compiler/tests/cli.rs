//! The `chronc` binary as a user runs it: exit codes, output formats and the
//! shape of what each subcommand prints. Library behaviour is tested elsewhere;
//! these tests pin the process boundary.

mod common;

use std::process::{Command, Output};

use common::{all_output, chronc, repo_root};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn check_accepts_every_example() {
    let mut files: Vec<String> = std::fs::read_dir(repo_root().join("examples"))
        .expect("examples/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "chr"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(
        files.len() >= 6,
        "expected the example designs, found {files:?}"
    );
    for file in files {
        let out = chronc(&["check", &file]);
        assert_eq!(out.status.code(), Some(0), "{file}:\n{}", all_output(&out));
    }
}

#[test]
fn check_reports_every_error_and_exits_one() {
    let out = chronc(&["check", "compiler/tests/cli/bad_types.chr"]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let text = all_output(&out);
    // Both faults in the tick are reported, not only the first.
    assert!(text.contains("a + b"), "width mismatch not shown:\n{text}");
    assert!(
        text.contains("undefined_name"),
        "unknown name not shown:\n{text}"
    );
}

#[test]
fn check_json_is_an_array_of_coded_diagnostics() {
    let out = chronc(&[
        "check",
        "--format",
        "json",
        "compiler/tests/cli/bad_types.chr",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
    let diags = json.as_array().expect("a JSON array");
    let errors: Vec<&serde_json::Value> =
        diags.iter().filter(|d| d["severity"] == "error").collect();
    assert!(errors.len() >= 2, "{json:#}");
    for d in errors {
        assert!(d["code"].as_str().is_some_and(|c| !c.is_empty()), "{d:#}");
        assert!(d["help"].as_str().is_some_and(|h| !h.is_empty()), "{d:#}");
    }
}

#[test]
fn run_json_prints_compile_errors_as_check_json_on_stdout() {
    let file = "compiler/tests/cli/bad_types.chr";
    let out = chronc(&["run", file, "--json", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    let run: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
    let diags = run.as_array().expect("a JSON array");
    assert!(diags.iter().any(|d| d["severity"] == "error"), "{run:#}");
    // The same form as `chronc check --format json`: every diagnostic check
    // reports is among run's, field for field (run also needs a top: E0411).
    let check = chronc(&["check", "--format", "json", file]);
    let check: serde_json::Value =
        serde_json::from_str(&stdout(&check)).expect("stdout is one JSON document");
    let check = check.as_array().expect("a JSON array");
    assert!(!check.is_empty());
    for d in check {
        assert!(diags.contains(d), "{d:#} missing from run's {run:#}");
    }
    assert!(diags.iter().any(|d| d["code"] == "E0411"), "{run:#}");
}

#[test]
fn run_prints_a_json_report_and_exits_zero() {
    let out = chronc(&["run", "examples/producer_consumer.chr", "--json", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
    assert!(
        json["counters"].is_object() || json["counters"].is_array(),
        "{json:#}"
    );
}

#[test]
fn both_engines_print_the_same_summary_digest() {
    let run = |engine: &str| {
        let out = chronc(&[
            "run",
            "examples/cdc_pair.chr",
            "--engine",
            engine,
            "--json",
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
        let mut json: serde_json::Value =
            serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
        // Host timing and the workers (the interpreter is always serial)
        // are what may differ.
        let obj = json.as_object_mut().expect("an object");
        obj.retain(|k, _| {
            !k.contains("wall") && !k.contains("per_second") && k != "engine" && k != "parallel"
        });
        json
    };
    assert_eq!(run("interp"), run("jit"));
}

#[test]
fn run_fault_exits_one_and_names_the_site() {
    let out = chronc(&["run", "tests/designs/fault_send_refused.chr", "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let text = all_output(&out);
    assert!(text.contains("cycle"), "{text}");
}

#[test]
fn run_compile_error_exits_two_with_diagnostics() {
    let out = chronc(&["run", "compiler/tests/cli/bad_types.chr", "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", all_output(&out));
    assert!(all_output(&out).contains("undefined_name"));
}

#[test]
fn fmt_check_flags_unformatted_files_only() {
    let bad = chronc(&["fmt", "--check", "compiler/tests/cli/unformatted.chr"]);
    assert_eq!(bad.status.code(), Some(1), "{}", all_output(&bad));
    assert!(all_output(&bad).contains("unformatted.chr"));
    let good = chronc(&["fmt", "--check", "examples/producer_consumer.chr"]);
    assert_eq!(good.status.code(), Some(0), "{}", all_output(&good));
}

/// `chronc run --json` of a design, host timing and the engine name removed.
fn deterministic_report(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-q"]);
    report_of(chronc(&all))
}

/// The JSON report `out` printed, host timing, the engine name and the
/// workers (they depend on the host's cores) removed.
fn report_of(out: Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let mut json: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
    let obj = json.as_object_mut().expect("an object");
    obj.retain(|k, _| {
        !k.contains("wall") && !k.contains("per_second") && k != "engine" && k != "parallel"
    });
    json
}

#[test]
fn the_seed_decides_random_traffic_alike_on_both_engines() {
    let design = "examples/random_traffic.chr";
    let run = |engine: &str, seed: &str| {
        deterministic_report(&[design, "--engine", engine, "--seed", seed])
    };
    let seven = run("jit", "7");
    assert_eq!(seven["seed"], 7, "{seven:#}");
    assert_eq!(seven, run("interp", "7"), "same seed, other engine");
    assert_eq!(seven, run("jit", "7"), "same seed, again");
    let eight = run("jit", "8");
    assert_eq!(eight, run("interp", "8"));
    assert_ne!(
        seven["counters"], eight["counters"],
        "another seed, other traffic"
    );
    assert_ne!(seven["state_digest"], eight["state_digest"]);
    // Without `--seed` the run uses the documented default, 0.
    let default = deterministic_report(&[design]);
    assert_eq!(default, run("jit", "0"));
    // The text summary says which seed it ran with.
    let out = chronc(&["run", design, "--seed", "7", "-q"]);
    assert!(stdout(&out).contains("(seed 7)"), "{}", all_output(&out));
}

#[test]
fn runtime_faults_name_their_source_location() {
    for (design, location) in [
        // The indexed register read.
        ("tests/designs/fault_index_out_of_range.chr", "10:17"),
        // The second write of the pipe in the tick.
        ("tests/designs/fault_stage_twice.chr", "14:13"),
    ] {
        let out = chronc(&["run", design, "--json", "-q"]);
        assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
        let json: serde_json::Value =
            serde_json::from_str(&stdout(&out)).expect("stdout is one JSON document");
        let fault = &json["faults"][0];
        let at = fault["location"]
            .as_str()
            .unwrap_or_else(|| panic!("{json:#}"));
        assert_eq!(at, format!("{design}:{location}"));
        assert!(
            fault["message"].as_str().is_some_and(|m| m.contains(at)),
            "{design}: the message names {at}: {fault:#}"
        );
        let text = chronc(&["run", design, "-q"]);
        assert!(stdout(&text).contains(at), "{}", all_output(&text));
    }
}

#[test]
fn jit_dump_prints_every_unit_shape_and_group_function() {
    let out = Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args([
            "run",
            "benches/workloads/one_clock.chr",
            "--cycles",
            "3",
            "-q",
        ])
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .env("CHRONON_JIT_DUMP", "1")
        .output()
        .expect("the chronc binary starts");
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let headings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("; ")).collect();
    assert_eq!(
        headings,
        [
            "; unit shape of top.a: Cranelift IR",
            "; machine code",
            // The design can run ahead (contract §7): the group's one
            // function is its loop form.
            "; group 0 run-ahead loop (units inline: top.a, top.b): Cranelift IR",
            "; machine code",
        ],
        "{stderr}"
    );
}

/// The JIT's group functions for unobserved runs (the replay loop's, which
/// skip the FIFO table's null tests) are chosen only where every FIFO
/// port they operate on is bound inline: with `CHRONON_NO_INLINE_FIFO`
/// (every entry null, every operation a host call) the FIFO designs run
/// as with inline FIFOs and as on the interpreter, registered and FWFT.
#[test]
fn fifo_designs_agree_with_inline_fifos_off() {
    let report = |design: &str, engine: &str, no_inline: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_chronc"));
        command
            .args([
                "run", design, "--engine", engine, "--cycles", "20000", "--json", "-q",
            ])
            .current_dir(repo_root());
        if no_inline {
            command.env("CHRONON_NO_INLINE_FIFO", "1");
        }
        report_of(command.output().expect("the chronc binary starts"))
    };
    for design in [
        "benches/workloads/two_clocks_fifo.chr",
        "examples/cdc_pair.chr",
        "examples/three_clocks.chr",
    ] {
        let jit = report(design, "jit", false);
        assert_eq!(jit, report(design, "jit", true), "{design}");
        assert_eq!(jit, report(design, "interp", false), "{design}");
    }
}

/// `--exec SWITCH=on|off` reaches the configuration and wins over the
/// environment; a switch that does not exist, or a value that is not on or
/// off, is refused with exit 2 and the list of switches.
#[test]
fn exec_switches_come_from_the_command_line_over_the_environment() {
    let run = |exec: &[&str], env_dump: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_chronc"));
        command
            .args(["run", "examples/pairs.chr", "--cycles", "5", "-q"])
            .args(exec)
            .current_dir(repo_root());
        if env_dump {
            command.env("CHRONON_JIT_DUMP", "1");
        }
        command.output().expect("the chronc binary starts")
    };
    let dumped = |out: &std::process::Output| {
        String::from_utf8_lossy(&out.stderr).contains("; machine code")
    };
    let on = run(&["--exec", "jit-dump=on"], false);
    assert!(on.status.success() && dumped(&on));
    let off = run(&["--exec", "jit-dump=off"], true);
    assert!(off.status.success() && !dumped(&off));
    assert!(dumped(&run(&[], true)));
    let plain = run(&[], false);
    assert!(!dumped(&plain));
    let json = ["--json", "--exec", "simd=on"];
    let slow = run(
        &[
            &json[..],
            &["--exec", "replay-loop=off", "--exec", "run-ahead=off"],
        ]
        .concat(),
        false,
    );
    assert_eq!(report_of(slow), report_of(run(&json, false)));
    for bad in ["warp=on", "replay-loop=maybe", "replay-loop"] {
        let out = run(&["--exec", bad], false);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains("--exec") || stderr.contains("run-ahead"),
            "{bad}: {stderr}"
        );
    }
}

/// `chronc trace merge DIR | head` exits quietly when its reader stops
/// early, as Unix tools do (it printed a broken-pipe error and exited 1).
#[test]
fn trace_merge_into_a_closed_pipe_exits_quietly() {
    use std::io::{BufRead, BufReader};
    let dir = common::scratch("cli", "merge-pipe");
    let trace = dir.join("text");
    let out = chronc(&[
        "run",
        "examples/pairs.chr",
        "-q",
        "--trace",
        trace.to_str().expect("path"),
    ]);
    assert!(out.status.success(), "{}", all_output(&out));
    let mut child = Command::new(env!("CARGO_BIN_EXE_chronc"))
        .args(["trace", "merge"])
        .arg(&trace)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("chronc starts");
    let mut first = String::new();
    let stdout = child.stdout.take().expect("piped");
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a line");
    // The reader is dropped here: the rest of the merge meets a closed pipe.
    let out = child.wait_with_output().expect("merge ends");
    assert!(first.contains("ps "), "{first}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The README's recording example runs as written (from a directory that
/// has the repository's `examples/`) and records something in each output:
/// its filter once named a window after the design's end.
#[test]
fn the_readme_recording_example_records_something() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    let section = &readme[readme.find("## Recording").expect("a Recording section")..];
    let start = section.find("```sh\n").expect("a shell block") + 6;
    let block = &section[start..start + section[start..].find("```").expect("closed")];
    let commands: Vec<String> = block
        .replace("\\\n", " ")
        .lines()
        .map(str::to_string)
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    let dir = common::scratch("cli", "readme-recording");
    std::os::unix::fs::symlink(repo_root().join("examples"), dir.join("examples")).expect("link");
    for command in &commands {
        let mut words: Vec<String> = Vec::new();
        for (k, piece) in command.split('\'').enumerate() {
            match k % 2 {
                0 => words.extend(piece.split_whitespace().map(str::to_string)),
                _ => words.push(piece.to_string()),
            }
        }
        let (program, rest) = words.split_first().expect("a command");
        assert_eq!(program, "chronc", "{command}");
        let (args, redirect) = match rest.iter().position(|w| w == ">") {
            Some(at) => (&rest[..at], rest.get(at + 1)),
            None => (rest, None),
        };
        let out = Command::new(env!("CARGO_BIN_EXE_chronc"))
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("chronc starts");
        assert!(out.status.success(), "{command}: {}", all_output(&out));
        if let Some(file) = redirect {
            std::fs::write(dir.join(file), &out.stdout).expect("the redirect");
        }
    }
    let merged = std::fs::read_to_string(dir.join("merged.log")).expect("merged log");
    assert!(
        merged.lines().count() > 5,
        "the filtered trace is nearly empty:\n{merged}"
    );
    for out in [
        "out/run.pftrace",
        "fixed.pftrace",
        "out/wave.vcd",
        "out/counters.csv",
    ] {
        let len = std::fs::metadata(dir.join(out)).map_or(0, |m| m.len());
        assert!(len > 100, "{out}: {len} bytes");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn threads_are_a_count_or_auto_and_never_change_the_result() {
    for bad in ["0", "-1", "two", ""] {
        let arg = format!("--threads={bad}");
        let out = chronc(&["run", "examples/three_clocks.chr", &arg, "-q"]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--threads {bad:?}: {}",
            all_output(&out)
        );
        assert!(
            all_output(&out).contains("--threads"),
            "{}",
            all_output(&out)
        );
    }
    // Four independent components in three clocks, run to a limit.
    let design = "examples/independent_models.chr";
    let run = |threads: &str| {
        let out = chronc(&[
            "run",
            design,
            "--until",
            "20us",
            "--threads",
            threads,
            "--json",
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
        serde_json::from_str::<serde_json::Value>(&stdout(&out)).expect("one JSON document")
    };
    let (serial, two) = (run("1"), run("2"));
    assert_eq!(serial["parallel"]["workers"], 1, "{serial:#}");
    assert_eq!(
        serial["parallel"]["serial_reason"], "one worker asked",
        "{serial:#}"
    );
    assert_eq!(two["parallel"]["workers"], 2, "{two:#}");
    assert_eq!(two["parallel"]["components"], 4, "{two:#}");
    assert!(two["parallel"]["serial_reason"].is_null(), "{two:#}");
    let shares = two["parallel"]["placement"].as_array().expect("per worker");
    assert_eq!(shares.len(), 2);
    let share: f64 = shares
        .iter()
        .map(|w| w["cost_share"].as_f64().expect("a share"))
        .sum();
    assert!((share - 1.0).abs() < 1e-9, "{two:#}");
    for key in [
        "state_digest",
        "instants",
        "time",
        "domains",
        "counters",
        "stop",
    ] {
        assert_eq!(serial[key], two[key], "{key}");
    }
    // The human summary says how many workers ran.
    let out = chronc(&["run", design, "--until", "20us", "--threads", "2"]);
    assert!(
        all_output(&out).contains("workers: 2 (4 components"),
        "{}",
        all_output(&out)
    );
    // The interpreter stays serial and says why.
    let out = chronc(&[
        "run",
        design,
        "--until",
        "2us",
        "--threads",
        "4",
        "--engine",
        "interp",
        "--json",
        "-q",
    ]);
    let interp: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one document");
    assert_eq!(interp["parallel"]["workers"], 1);
    let why = interp["parallel"]["serial_reason"]
        .as_str()
        .expect("a reason");
    assert!(why.contains("interpreter"), "{why}");
}

#[test]
fn run_dump_state_writes_every_register_by_element_and_field() {
    let dir = std::env::temp_dir().join(format!("chronc-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let dump = dir.join("state.json");
    let dump_arg = dump.display().to_string();
    let design = "compiler/tests/cli/dump_state.chr";
    let want = [
        ("top.a", "n", 4),
        ("top.a", "s", -4),
        ("top.a", "mem[0]", 4),
        ("top.a", "mem[1]", 14),
        ("top.a", "mem[2]", 24),
        ("top.a", "p.a", 4),
        ("top.a", "p.b", 1),
        ("top.b", "t", 4),
        ("top.b", "flag", 1),
    ];
    // Serial, on both engines, and on two workers: the same file.
    for extra in [
        &["--threads", "1"][..],
        &["--engine", "interp"],
        &["--threads", "2"],
    ] {
        let mut args = vec![
            "run",
            design,
            "--cycles",
            "4",
            "-q",
            "--dump-state",
            &dump_arg,
        ];
        args.extend_from_slice(extra);
        let out = chronc(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}: {}",
            all_output(&out)
        );
        let text = std::fs::read_to_string(&dump).expect("the dump is written");
        let json: serde_json::Value = serde_json::from_str(&text).expect("the dump is JSON");
        assert_eq!(json["stop"], "limit");
        assert_eq!(json["instants"], 4);
        let got: Vec<(String, String, i64)> = json["registers"]
            .as_array()
            .expect("a registers array")
            .iter()
            .map(|r| {
                (
                    r["unit"].as_str().unwrap_or_default().to_string(),
                    r["name"].as_str().unwrap_or_default().to_string(),
                    r["value"].as_i64().unwrap_or(i64::MIN),
                )
            })
            .collect();
        let want: Vec<(String, String, i64)> = want
            .iter()
            .map(|(u, n, v)| (u.to_string(), n.to_string(), *v))
            .collect();
        assert_eq!(got, want, "{extra:?}:\n{text}");
    }
    // With --json the report carries the registers too.
    let out = chronc(&[
        "run",
        design,
        "--cycles",
        "4",
        "--json",
        "--dump-state",
        &dump_arg,
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON on stdout");
    assert_eq!(json["registers"][1]["value"], -4, "{}", stdout(&out));
    // The same path as a recording is refused (2); an unwritable one
    // exits 1.
    let missing = dir.join("no/such/dir/state.json").display().to_string();
    let refused: [(&[&str], i32, &str); 2] = [
        (
            &["--vcd", &dump_arg, "--dump-state", &dump_arg],
            2,
            "same path",
        ),
        (
            &["-q", "--dump-state", &missing],
            1,
            "cannot write --dump-state",
        ),
    ];
    for (extra, code, says) in refused {
        let mut args = vec!["run", design, "--cycles", "4"];
        args.extend_from_slice(extra);
        let out = chronc(&args);
        let text = all_output(&out);
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {text}");
        assert!(text.contains(says), "{extra:?}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tests/designs/struct_casts.chr` on both engines, against the values
/// worked out by hand: `Pkt { h: { kind: 5, urgent: true, len: -3 },
/// data: [0xa, 0x3] }` packs as kind (3 bits) | urgent | len (4) | data[0]
/// (4) | data[1] (4), first field most significant: 101 1 1101 1010 0011 =
/// 0xbda3; 0xfff0 unpacks to len = 0b1111 = -1 and data[0] = 0xf; clog2(12)
/// = 4, clog2(1025) = 11; data[1] counts up each edge.
#[test]
fn struct_casts_pack_first_field_most_significant_on_both_engines() {
    for engine in ["jit", "interp"] {
        let out = chronc(&[
            "run",
            "tests/designs/struct_casts.chr",
            "--cycles",
            "2",
            "-q",
            "--engine",
            engine,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().take(2).collect();
        assert_eq!(
            lines,
            [
                "0ps c 0 top.u: 0xbda3 kind=5 urgent=true len=-3 d0=a d1=3 s.len=-1 s.d0=f aw=4 11",
                "1000ps c 1 top.u: 0xbda4 kind=5 urgent=true len=-3 d0=a d1=4 s.len=-1 s.d0=f aw=4 11",
            ],
            "{engine}"
        );
    }
}

/// Type parameters: `tests/designs/generic_units.chr` against the same
/// design with each specialization written out by hand
/// (`compiler/tests/generics/specialized.chr`), on both engines, long
/// enough for the u8 sums to wrap: every counter agrees.
/// `u<W>` and `i<(W * 2)>` take their widths from parameters, and generic
/// functions their parameters from their arguments' types: each design
/// ends in the same state as the one with its widths and specializations
/// written out, on both engines (8, 64 and 100 bits: narrow, the limit,
/// and two limbs).
#[test]
fn widths_and_generic_functions_match_their_specializations_written_out() {
    let registers = |file: &str, engine: &str| {
        let dir = common::scratch("cli", &format!("sized-{engine}"));
        let dump = dir.join(format!("{}.json", file.replace('/', "_")));
        let out = chronc(&[
            "run",
            file,
            "--cycles",
            "40",
            "-q",
            "--engine",
            engine,
            "--dump-state",
            dump.to_str().expect("utf-8 path"),
        ]);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&dump).expect("the dump")).expect("JSON");
        state["registers"].clone()
    };
    for engine in ["jit", "interp"] {
        let functions = registers("tests/designs/generic_functions.chr", engine);
        let by_hand = registers("compiler/tests/generics/functions_by_hand.chr", engine);
        assert_eq!(functions, by_hand, "{engine}");
        let sized = registers("tests/designs/sized_widths.chr", engine);
        let by_hand = registers("compiler/tests/generics/sized_by_hand.chr", engine);
        assert_eq!(sized, by_hand, "{engine}");
        let wide = sized
            .as_array()
            .and_then(|r| {
                r.iter()
                    .find(|r| r["unit"] == "top.w" && r["name"] == "wide")
            })
            .expect("top.w.wide");
        assert!(
            wide["value"].is_string(),
            "a 200-bit value is a string: {wide}"
        );
    }
}

/// The counters (`--json`) and final registers (`--dump-state`) of a run
/// of `file` for `cycles` edges on `engine`.
fn counters_and_registers(
    file: &str,
    engine: &str,
    cycles: &str,
) -> (serde_json::Value, serde_json::Value) {
    // A directory per call: tests run in parallel threads of one process,
    // and a shared one was emptied by one test under another's run.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::scratch("cli", &format!("state-{engine}-{call}"));
    let dump = dir.join(format!("{}.json", file.replace('/', "_")));
    let out = chronc(&[
        "run",
        file,
        "--cycles",
        cycles,
        "--json",
        "--engine",
        engine,
        "--dump-state",
        dump.to_str().expect("utf-8 path"),
    ]);
    let report = report_of(out);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&dump).expect("the dump")).expect("JSON");
    (report["counters"].clone(), state["registers"].clone())
}

/// Asserts that `registers` has at least `n` non-zero values (the design
/// did something for the comparison to see).
fn moved(registers: &serde_json::Value, n: usize) {
    let moved = registers
        .as_array()
        .expect("registers")
        .iter()
        .filter(|r| r["value"].as_u64() > Some(0))
        .count();
    assert!(moved >= n, "{registers}");
}

#[test]
fn port_arrays_match_their_elements_written_out() {
    for engine in ["jit", "interp"] {
        let (counters, registers) =
            counters_and_registers("tests/designs/port_arrays.chr", engine, "60");
        let by_hand = counters_and_registers(
            "compiler/tests/generics/port_arrays_by_hand.chr",
            engine,
            "60",
        );
        assert_eq!(counters, by_hand.0, "{engine}");
        assert_eq!(registers, by_hand.1, "{engine}");
        // Every path through the design carried items.
        for c in counters.as_array().expect("counters") {
            assert!(c["value"].as_u64() > Some(0), "{c}");
        }
        moved(&registers, 20);
    }
}

#[test]
fn run_time_loops_match_the_same_loops_unrolled() {
    for engine in ["jit", "interp"] {
        let (counters, registers) =
            counters_and_registers("tests/designs/runtime_loops.chr", engine, "50");
        let unrolled = counters_and_registers(
            "compiler/tests/generics/runtime_loops_unrolled.chr",
            engine,
            "50",
        );
        assert_eq!(counters, unrolled.0, "{engine}");
        assert_eq!(registers, unrolled.1, "{engine}");
        moved(&registers, 14);
    }
}

#[test]
fn generic_structs_match_their_specializations_written_out() {
    for engine in ["jit", "interp"] {
        let (_, registers) =
            counters_and_registers("tests/designs/generic_structs.chr", engine, "30");
        let by_hand =
            counters_and_registers("compiler/tests/generics/structs_by_hand.chr", engine, "30");
        assert_eq!(registers, by_hand.1, "{engine}");
        moved(&registers, 20);
    }
}

#[test]
fn the_loop_benchmark_computes_its_model_in_both_forms() {
    // benches/loops: `acc` after 3 edges of 4,000 multiply-adds each.
    let mut want: u64 = 0;
    for _ in 0..3 {
        for i in 0..4000u64 {
            want = want.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
    }
    for form in ["unrolled", "runtime"] {
        for engine in ["jit", "interp"] {
            let (_, registers) =
                counters_and_registers(&format!("benches/loops/{form}.chr"), engine, "3");
            assert_eq!(
                registers[0]["value"].as_u64(),
                Some(want),
                "{form} on {engine}: {registers}"
            );
        }
    }
}

#[test]
fn type_parameters_specialize_as_hand_written_units_do() {
    let counters = |file: &str, engine: &str| {
        let report = report_of(chronc(&[
            "run", file, "--cycles", "300", "--json", "--engine", engine,
        ]));
        assert_eq!(report["stop"], "limit", "{file}: {report}");
        report["counters"].clone()
    };
    for engine in ["jit", "interp"] {
        let generic = counters("tests/designs/generic_units.chr", engine);
        let by_hand = counters("compiler/tests/generics/specialized.chr", engine);
        assert_eq!(generic, by_hand, "{engine}");
        assert!(
            generic.as_array().is_some_and(|c| c.len() == 4),
            "{generic}"
        );
    }
}
