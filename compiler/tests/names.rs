//! Names that reach the recorders: a `trace` name the recorders cannot
//! carry is refused by `chronc check` (E0327), never by a late setup error
//! when the recording starts, and every name a design that checks can have
//! (trace names, instance and clock array elements, aggregate arguments,
//! counters, registers) records in every format.

mod common;

use chronon_lang::check::trace_name_problem;
use chronon_record::{EventInfo, Schema};
use common::{all_output, chronc, scratch};

/// Whether the recorders' schema accepts `name` as an event name.
fn schema_accepts(name: &str) -> bool {
    Schema {
        design: "t".to_owned(),
        events: vec![EventInfo {
            name: name.to_owned(),
            args: Vec::new(),
            signed_widths: Vec::new(),
            wide_widths: Vec::new(),
        }],
        ..Schema::default()
    }
    .validate()
    .is_ok()
}

#[test]
fn the_checker_and_the_recorders_agree_on_trace_names() {
    let mut names: Vec<String> = (0u8..=0x7f)
        .map(|b| format!("a{}b", char::from(b)))
        .collect();
    names.extend(
        [
            "",
            "ok",
            "a.b-c:d/[x]#1",
            "é",
            "a→b",
            "tab\there",
            "x\u{7f}",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut refused = 0;
    for name in &names {
        let problem = trace_name_problem(name);
        assert_eq!(
            problem.is_none(),
            schema_accepts(name),
            "{name:?}: check says {problem:?}"
        );
        refused += usize::from(problem.is_some());
    }
    // Space, the 33 controls, `=`, `"`, `\`, `,`, and the seven others
    // but "ok" and "a.b-c:d/[x]#1".
    assert_eq!(refused, 1 + 33 + 4 + 5, "{names:?}");
}

const SPACED: &str = "clock clk = 1 GHz;

unit U {
    reg r: u8;
    tick {
        r <= r + 1;
        trace(\"a b\", r = r);
        trace(\"k=v\", r = r);
        if r == 3 { finish; }
    }
}

system Top {
    inst u: U on clk;
}
";

#[test]
fn a_trace_name_the_recorders_cannot_carry_is_refused_at_check_time() {
    let dir = scratch("names", "refused");
    let design = dir.join("spaced.chr");
    std::fs::write(&design, SPACED).expect("design written");
    let design = design.to_str().expect("utf-8 path");
    let out = chronc(&["check", design]);
    let text = all_output(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for needle in [
        "E0327",
        "trace name \"a b\" cannot be recorded",
        "contains a space",
        "trace name \"k=v\" cannot be recorded",
        "contains `=`",
        "help: a trace name is",
        "spaced.chr:7:15",
    ] {
        assert!(text.contains(needle), "`{needle}` in:\n{text}");
    }
    // `chronc run --trace` stops at the same diagnostic, before any setup.
    let trace = dir.join("trace");
    let out = chronc(&["run", design, "--trace", trace.to_str().expect("utf-8")]);
    let text = all_output(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("E0327"), "{text}");
    assert!(!trace.exists(), "no recording started:\n{text}");
}

const UNUSUAL: &str = "clock dom[2] = [1 GHz, 500 MHz phase 250 ps];

struct P { a: u8, b: i8 }

unit U {
    reg r: u8;
    reg p: P;
    counter seen;
    tick {
        r <= r + 1;
        p <= P { a: r, b: -1 };
        seen += 1;
        trace(\"a.b-c:d/[x]#1\", r = r, p = p);
        if r == 3 { finish; }
    }
}

system Top {
    for i in 0..2 {
        inst u[i]: U on dom[i];
    }
}
";

#[test]
fn every_name_a_checked_design_can_have_records_in_every_format() {
    let dir = scratch("names", "unusual");
    let design = dir.join("unusual.chr");
    std::fs::write(&design, UNUSUAL).expect("design written");
    let path = |p: &str| dir.join(p).to_str().expect("utf-8").to_string();
    let (trace, perfetto, vcd, csv) = (
        path("trace"),
        path("run.pftrace"),
        path("wave.vcd"),
        path("c.csv"),
    );
    let out = chronc(&[
        "run",
        design.to_str().expect("utf-8"),
        "--trace",
        &trace,
        "--perfetto",
        &perfetto,
        "--trace-ticks",
        "--vcd",
        &vcd,
        "--counters",
        &csv,
        "--trace-filter",
        "event=a.b-c:d/[x]#1",
    ]);
    let text = all_output(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let out = chronc(&["trace", "merge", &trace]);
    let merged = all_output(&out);
    assert_eq!(out.status.code(), Some(0), "{merged}");
    assert!(
        merged.contains("T top.u[1] a.b-c:d/[x]#1 r=0 p.0=0 p.1=0"),
        "{merged}"
    );
    assert!(
        merged.contains("T top.u[0] a.b-c:d/[x]#1 r=3 p.0=2 p.1=-1"),
        "{merged}"
    );
    let pf = std::fs::read(&perfetto).expect("perfetto written");
    assert!(
        pf.windows(13).any(|w| w == b"a.b-c:d/[x]#1"),
        "the name is interned"
    );
    let vcd = std::fs::read_to_string(&vcd).expect("vcd written");
    assert!(vcd.contains("$scope module u[1] $end"), "{vcd}");
    let csv = std::fs::read_to_string(&csv).expect("csv written");
    assert!(csv.contains("top.u[0].seen"), "{csv}");
}
