//! Every kind of runtime fault a design can raise, through `chronc run` on
//! both engines: the report names the unit, the construct, the domain, the
//! local cycle, the exact time and the source location (`file:line:col`)
//! of the statement that faulted (contract §6), in the JSON and in the
//! text summary. Each design marks that statement with `// here`, and puts
//! another statement of the same kind on the same construct elsewhere, so
//! only the statement that ran can match.

mod common;

use common::{all_output, chronc, scratch};

/// One fault case: its design and what the one fault must say.
struct Case {
    name: &'static str,
    design: &'static str,
    code: &'static str,
    unit: &'static str,
    construct: &'static str,
    domain: &'static str,
    cycle: u64,
    time: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "channel_send",
        // Rate 1: the second `send` of edge 3 is refused.
        design: "clock clk = 1 GHz;
unit W {
    out tx: u32;
    reg n: u32;
    tick {
        tx.send(n);
        if n == 3 {
            tx.send(n + 100); // here
        }
        n <= n + 1;
    }
}
unit R {
    in rx: u32;
    tick {
        if let Some(_v) = rx.recv() {}
    }
}
system Top {
    inst w: W on clk;
    inst r: R on clk;
    connect w.tx -> r.rx latency 1 capacity 4;
}
",
        code: "runtime::send_refused",
        unit: "top.w",
        construct: "top.w.tx",
        domain: "clk",
        cycle: 3,
        time: "3000 ps",
    },
    Case {
        name: "fifo_send",
        // Depth 2, never read: the writes at edges 0 and 1 fill it, the
        // `send` of edge 2 (the `else` one) is refused.
        design: "clock w = 1 GHz;
clock r = 1 GHz;
unit W {
    out tx: u32;
    reg n: u32;
    tick {
        if n < 2 {
            tx.send(n);
        } else {
            tx.send(n + 100); // here
        }
        n <= n + 1;
    }
}
unit R {
    in rx: u32 cdc;
    tick {
        if false {
            rx.request();
        }
    }
}
system Top {
    inst w: W on w;
    inst r: R on r;
    cdc w.tx -> r.rx depth 2 sync 2;
}
",
        code: "runtime::fifo_send_refused",
        unit: "top.w",
        construct: "top.w.tx -> top.r.rx",
        domain: "w",
        cycle: 2,
        time: "2000 ps",
    },
    Case {
        name: "stage_twice",
        // Pipe 2 is retained at every edge; edge 2 writes it too. The
        // instance on the 1001 MHz clock makes the design's ticks per ps
        // 3003: the time still prints over 3 (lowest terms).
        design: "clock core = 3 GHz;
clock other = 1001 MHz;
unit U {
    reg p: u32;
    stage s: u8 pipes 4;
    tick {
        p <= p + 1;
        s.retain(2);
        s.write(p, 1); // here
    }
}
system Top {
    inst u: U on core;
    inst v: U on other;
}
",
        code: "runtime::stage_written_twice",
        unit: "top.u",
        construct: "s at t.chr:9:9",
        domain: "core",
        cycle: 2,
        time: "666 ps + 2/3 ps",
    },
    Case {
        name: "assertion",
        design: "clock slow = 1 MHz;
unit U {
    reg n: u32;
    tick {
        assert(n < 100, \"n stays small\");
        n <= n + 1;
        if n > 0 {
            assert(n < 3, \"n stays small\"); // here
        }
    }
}
system Top {
    inst u: U on slow;
}
",
        code: "runtime::assertion_failed",
        unit: "top.u",
        construct: "n stays small at t.chr:8:13",
        domain: "slow",
        cycle: 3,
        time: "3000000 ps",
    },
    Case {
        name: "index",
        design: "clock clk = 1 GHz;
unit U {
    reg n: u32;
    reg a: [u32; 4];
    tick {
        n <= n + 1;
        a[n % 4] <= 1;
        a[n] <= 2; // here
    }
}
system Top {
    inst u: U on clk;
}
",
        code: "runtime::index_out_of_range",
        unit: "top.u",
        construct: "array index at t.chr:8:9",
        domain: "clk",
        cycle: 4,
        time: "4000 ps",
    },
    Case {
        name: "stage_pipe",
        design: "clock clk = 1 GHz;
unit U {
    reg p: u32;
    stage s: u8 pipes 4;
    tick {
        p <= p + 1;
        s.write(p % 4, 1);
        if p > 0 {
            s.write(p + 2, 1); // here
        }
    }
}
system Top {
    inst u: U on clk;
}
",
        code: "runtime::stage_pipe_out_of_range",
        unit: "top.u",
        construct: "s at t.chr:9:13",
        domain: "clk",
        cycle: 2,
        time: "2000 ps",
    },
    Case {
        name: "for_bound",
        // 0..n with n = 4 at edge 4: more than `max 3`, faulted before the
        // first iteration. The loop above it never asks for more.
        design: "clock clk = 1 GHz;
unit U {
    reg n: u32;
    reg x: u32;
    tick {
        for i in 0..(n % 3) max 3 { x <= x + i; }
        for i in 0..n max 3 { x <= x ^ i; } // here
        n <= n + 1;
    }
}
system Top {
    inst u: U on clk;
}
",
        code: "runtime::loop_bound_exceeded",
        unit: "top.u",
        construct: "`for` loop with max 3 at t.chr:7:9",
        domain: "clk",
        cycle: 4,
        time: "4000 ps",
    },
    Case {
        name: "while_bound",
        // v counts down from n: at edge 3 it still holds after two
        // iterations.
        design: "clock clk = 1 GHz;
unit U {
    reg n: u32;
    tick {
        let v: u32 = n;
        while v > 100 max 2 { v = v - 1; }
        let w: u32 = n;
        while w != 0 max 2 { w = w - 1; } // here
        n <= n + 1;
    }
}
system Top {
    inst u: U on clk;
}
",
        code: "runtime::loop_bound_exceeded",
        unit: "top.u",
        construct: "`while` loop with max 2 at t.chr:8:9",
        domain: "clk",
        cycle: 3,
        time: "3000 ps",
    },
];

/// `file:line:col` of the statement marked `// here` in `design`.
fn marked(file: &str, design: &str) -> String {
    let (line, text) = design
        .lines()
        .enumerate()
        .find(|(_, l)| l.ends_with("// here"))
        .expect("a marked statement");
    let col = text.len() - text.trim_start().len() + 1;
    format!("{file}:{}:{col}", line + 1)
}

#[test]
fn every_runtime_fault_names_its_statement_on_both_engines() {
    let dir = scratch("faults", "kinds");
    for case in CASES {
        let path = dir.join(format!("{}.chr", case.name));
        std::fs::write(&path, case.design).expect("design written");
        let file = path.to_str().expect("utf-8 path");
        let location = marked(file, case.design);
        // The JSON's construct is the construct alone; `location` says where.
        let construct = case
            .construct
            .split(" at t.chr:")
            .next()
            .expect("a construct")
            .to_string();
        for engine in ["jit", "interp"] {
            let what = format!("{} on {engine}", case.name);
            let out = chronc(&["run", file, "--engine", engine, "--json"]);
            assert_eq!(out.status.code(), Some(1), "{what}:\n{}", all_output(&out));
            let report: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("the report is JSON");
            let faults = report["faults"].as_array().expect("a fault list");
            assert_eq!(faults.len(), 1, "{what}: {faults:#?}");
            let f = &faults[0];
            assert_eq!(f["code"], case.code, "{what}");
            assert_eq!(f["unit"], case.unit, "{what}");
            assert_eq!(f["construct"], construct.as_str(), "{what}");
            assert_eq!(f["domain"], case.domain, "{what}");
            assert_eq!(f["cycle"], case.cycle, "{what}");
            assert_eq!(f["time"], case.time, "{what}");
            assert_eq!(f["location"], location.as_str(), "{what}");
            let message = f["message"].as_str().expect("a message");
            assert!(message.contains(&location), "{what}: {message}");
            let help = f["help"].as_str().expect("a help line");
            assert!(help.len() > 20, "{what}: help {help:?}");

            let out = chronc(&["run", file, "--engine", engine]);
            let text = all_output(&out);
            assert_eq!(out.status.code(), Some(1), "{what}:\n{text}");
            let line = text
                .lines()
                .find(|l| l.starts_with("fault: "))
                .unwrap_or_else(|| panic!("{what}: no fault line in\n{text}"));
            for part in [
                format!("[{}]", case.code),
                format!("unit `{}`", case.unit),
                format!("domain `{}`", case.domain),
                format!("cycle {}", case.cycle),
                format!("time {}", case.time),
                location.clone(),
            ] {
                assert!(line.contains(&part), "{what}: `{part}` in {line}");
            }
            // The faulting statement as a compile error shows one: the
            // code, the marked line, its label and a help line (stderr).
            let stderr = String::from_utf8_lossy(&out.stderr);
            let statement = case
                .design
                .lines()
                .find(|l| l.ends_with("// here"))
                .expect("a marked statement")
                .trim();
            let (line_no, col) = location
                .rsplit_once(':')
                .and_then(|(rest, col)| Some((rest.rsplit_once(':')?.1, col)))
                .expect("file:line:col");
            for part in [
                case.code.to_string(),
                format!("{line_no}:{col}]"),
                statement.to_string(),
                format!("faulted here, cycle {} of `{}`", case.cycle, case.domain),
                "help:".to_string(),
            ] {
                assert!(stderr.contains(&part), "{what}: `{part}` in\n{stderr}");
            }
        }
    }
}
