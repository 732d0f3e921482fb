//! The peer-comparison designs of `benches/peers/` run on both engines and
//! must print the checksums of independent models written here: a plain
//! Rust re-implementation of the mixing pipeline, and a model of the CDC
//! FIFO written from the contract's latencies (§5) as counts sampled across
//! domains rather than as flops. The Verilog twins, run by Icarus, must
//! agree too, on the same cycle counts; without `iverilog` the test fails
//! (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

use chronon_compiler::run::{RunOptions, RunReport, StopAt, run};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;

const PEERS: &str = "benches/peers";

/// The mixing function of both designs.
fn mix(x: u32) -> u32 {
    let y = x ^ (x >> 15);
    y.wrapping_mul(0x2c1b_3c6d) ^ (y >> 13)
}

/// The pipeline after `cycles` edges: the wrapping sum of the last stage's
/// value before each edge.
fn pipeline_model(stages: usize, cycles: u64) -> u64 {
    let mut source = 0u32;
    let mut r = vec![0u32; stages];
    let mut checksum = 0u64;
    for _ in 0..cycles {
        checksum = checksum.wrapping_add(u64::from(r[stages - 1]));
        // Last stage first, so every stage reads its neighbour's old value.
        for i in (1..stages).rev() {
            r[i] = mix(r[i - 1]);
        }
        r[0] = mix(source);
        source = source.wrapping_add(1);
    }
    checksum
}

/// `crc32.chr` after `cycles` edges: the wrapping sum of the CRC after
/// each edge, computed bit by bit from the definition (shift right, then
/// apply the reflected polynomial when the bit shifted out was set).
fn crc32_model(cycles: u64) -> u64 {
    let (mut data, mut crc, mut checksum) = (1u32, u32::MAX, 0u64);
    for _ in 0..cycles {
        let mut d = data ^ (data << 13);
        d ^= d >> 17;
        d ^= d << 5;
        let mut c = crc ^ data;
        for _ in 0..32 {
            c = (c >> 1) ^ if c & 1 == 1 { 0xEDB8_8320 } else { 0 };
        }
        data = d;
        crc = c;
        checksum = checksum.wrapping_add(u64::from(c));
    }
    checksum
}

/// The immediate of a RISC-V instruction in its opcode's format, from the
/// ISA manual's bit tables (0 for other opcodes).
fn riscv_imm(x: u32) -> u32 {
    let bits = |hi: u32, lo: u32| (x >> lo) & ((1u32 << (hi - lo + 1)) - 1);
    // The sign bit, extended above bit `from`.
    let sign = |from: u32| if x >> 31 == 1 { u32::MAX << from } else { 0 };
    match x & 0x7f {
        0x13 | 0x03 | 0x67 => sign(12) | bits(31, 20),
        0x23 => sign(12) | bits(31, 25) << 5 | bits(11, 7),
        0x63 => sign(12) | bits(7, 7) << 11 | bits(30, 25) << 5 | bits(11, 8) << 1,
        0x37 | 0x17 => bits(31, 12) << 12,
        0x6f => sign(20) | bits(19, 12) << 12 | bits(20, 20) << 11 | bits(30, 21) << 1,
        _ => 0,
    }
}

/// `decode.chr` after `cycles` edges.
fn decode_model(cycles: u64) -> u64 {
    let regs = |x: u32| u64::from((x >> 7 & 31) << 10 | (x >> 15 & 31) << 5 | (x >> 20 & 31));
    let (mut word, mut checksum) = (0x9E37_79B9_7F4A_7C15u64, 0u64);
    for _ in 0..cycles {
        let (lo, hi) = (word as u32, (word >> 32) as u32);
        checksum = checksum
            .wrapping_add(u64::from(riscv_imm(lo)))
            .wrapping_add(u64::from(riscv_imm(hi)))
            .wrapping_add(regs(lo) << 15 | regs(hi));
        let mut w = word ^ (word << 13);
        w ^= w >> 7;
        w ^= w << 17;
        word = w;
    }
    checksum
}

/// `wide512.chr` after `cycles` edges, in arbitrary-precision integers
/// reduced modulo 2^512 (not in limbs, as the engines compute).
fn wide512_model(cycles: u64) -> u64 {
    use num_bigint::BigUint;
    let modulus = BigUint::from(1u8) << 512u32;
    let low = |v: &BigUint, lo: u32| {
        let m = (BigUint::from(1u8) << 64u32) - 1u8;
        u64::try_from((v >> lo) & m).unwrap_or(0)
    };
    let (mut x, mut acc, mut checksum) = (BigUint::from(1u8), BigUint::default(), 0u64);
    for _ in 0..cycles {
        let mut t = (&x ^ (&x << 13u32)) % &modulus;
        t ^= &t >> 7u32;
        t = (&t ^ (&t << 17u32)) % &modulus;
        let half = (BigUint::from(1u8) << 256u32) - 1u8;
        let swapped = ((&t & &half) << 256u32) | (&t >> 256u32);
        let next = (&acc * BigUint::from(0x9E37_79B9_7F4A_7C15u64) + (&t ^ swapped)) % &modulus;
        checksum = checksum.wrapping_add(low(&acc, 0) ^ low(&acc, 448) ^ low(&acc, 237));
        x = t;
        acc = next;
    }
    checksum
}

/// A clock in integer picoseconds.
#[derive(Clone, Copy, Debug)]
struct Clock {
    period: u64,
    phase: u64,
}

impl Clock {
    fn edge(self, n: u64) -> u64 {
        self.phase + n * self.period
    }
}

/// A FIFO model's observations.
#[derive(Debug, Default, PartialEq, Eq)]
struct FifoRun {
    checksum: u64,
    received: u64,
    /// Writer edges at which an item was written.
    write_edges: Vec<u64>,
    /// Reader edges at which an item was taken.
    take_edges: Vec<u64>,
}

/// The producer/consumer of `async_fifo.chr` for `cycles` writer edges (and
/// every reader edge up to the last of them), from the contract's rules:
/// a pointer committed at time `u` is sampled by the other side's first
/// synchronizer flop at its first edge strictly after `u`; the flag
/// committed at edge `e` compares the new local count with the count that
/// the flop sampled at edge `e - sync` (0 before the first edge) and is
/// acted on from edge `e + 1`; a read accepted at `e` is taken at `e + 1`.
fn fifo_model(w: Clock, r: Clock, depth: u64, sync: u64, cycles: u64) -> FifoRun {
    let mut out = FifoRun::default();
    if cycles == 0 {
        return out;
    }
    let stop = w.edge(cycles - 1);
    // Counts after each edge: items written through writer edge n, reads
    // accepted through reader edge m.
    let mut written: Vec<u64> = Vec::new();
    let mut read: Vec<u64> = Vec::new();
    // The other side's count as committed strictly before `t`.
    let before = |counts: &[u64], clock: Clock, t: u64| -> u64 {
        (0..counts.len())
            .rev()
            .find(|&i| clock.edge(i as u64) < t)
            .map_or(0, |i| counts[i])
    };
    // What the synchronizer's first flop sampled at `edge` of `own`.
    let sampled = |counts: &[u64], other: Clock, own: Clock, edge: Option<u64>| -> u64 {
        edge.map_or(0, |e| before(counts, other, own.edge(e)))
    };
    let back = |e: u64, k: u64| e.checked_sub(k);
    let (mut n, mut m) = (0u64, 0u64);
    let mut output_valid = false;
    loop {
        let (tw, tr) = (w.edge(n), r.edge(m));
        let t = tw.min(tr);
        if t > stop {
            break;
        }
        // Evaluate both sides against the state before the instant, then
        // commit.
        let mut commit_w = None;
        if tw == t {
            let own = if n == 0 { 0 } else { written[n as usize - 1] };
            let full = n > 0 && {
                let seen = sampled(&read, r, w, back(n - 1, sync));
                own - seen == depth
            };
            if !full {
                out.write_edges.push(n);
            }
            commit_w = Some(own + u64::from(!full));
        }
        let mut commit_r = None;
        if tr == t {
            let own = if m == 0 { 0 } else { read[m as usize - 1] };
            if output_valid {
                out.checksum = out
                    .checksum
                    .wrapping_add(u64::from(mix(out.received as u32)));
                out.received += 1;
                out.take_edges.push(m);
            }
            let visible = m > 0 && sampled(&written, w, r, back(m - 1, sync)) > own;
            output_valid = visible;
            commit_r = Some(own + u64::from(visible));
        }
        if let Some(c) = commit_w {
            written.push(c);
            n += 1;
        }
        if let Some(c) = commit_r {
            read.push(c);
            m += 1;
        }
    }
    out
}

/// The writer and reader clocks of `async_fifo.chr`.
const WCLK: Clock = Clock {
    period: 1094,
    phase: 0,
};
const RCLK: Clock = Clock {
    period: 754,
    phase: 137,
};

/// The contract's worked examples (§5), as a check of the model itself.
#[test]
fn fifo_model_pins_the_contract_latencies() {
    let ghz = Clock {
        period: 1000,
        phase: 0,
    };
    // Written at 0 ns, visible at 3 ns, read at 4 ns, taken at 5 ns.
    let one = fifo_model(ghz, ghz, 16, 2, 6);
    assert_eq!(one.take_edges.first(), Some(&5));
    // Depth 2: writes at 0 and 1 ns fill it; the read at 4 ns clears `full`
    // at 7 ns, and the next write is at 8 ns.
    let two = fifo_model(ghz, ghz, 2, 2, 10);
    assert_eq!(two.write_edges[..3], [0, 1, 8]);
    // 4 GHz: visible at 0.75 ns, so the first take is at edge 3 + 2.
    let fast = Clock {
        period: 250,
        phase: 0,
    };
    assert_eq!(
        fifo_model(fast, fast, 16, 2, 8).take_edges.first(),
        Some(&5)
    );
    // Longer synchronizers add one edge each way per flop.
    assert_eq!(fifo_model(ghz, ghz, 16, 5, 12).take_edges.first(), Some(&8));
    // The bench clocks: written at 0, first reader edge after it is edge 0
    // (137 ps), so the take is at reader edge 0 + 2 + 2.
    assert_eq!(
        fifo_model(WCLK, RCLK, 16, 2, 8).take_edges.first(),
        Some(&4)
    );
}

fn run_chr(file: &str, params: &[(&str, String)], engine: EngineKind, cycles: u64) -> RunReport {
    let path = Path::new(PEERS).join(file);
    let text = std::fs::read_to_string(&path).expect("the peer design is readable");
    run_text(&path.display().to_string(), text, params, engine, cycles)
}

fn run_text(
    name: &str,
    text: String,
    params: &[(&str, String)],
    engine: EngineKind,
    cycles: u64,
) -> RunReport {
    let mut sources = SourceMap::new();
    sources.add(name.to_string(), text);
    let options = RunOptions {
        params: params
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
        ..RunOptions::new(
            engine,
            StopAt::Cycles {
                count: cycles,
                domain: None,
            },
        )
    };
    let report = match run(&mut sources, &options, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{name} {params:?}: {e:?}"),
    };
    assert!(report.is_clean(), "{name}: {}", report.summary(true));
    assert_eq!(report.stop, "limit", "{name}: {}", report.summary(true));
    report
}

fn counter(report: &RunReport, name: &str) -> u64 {
    report
        .counters
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no counter `{name}` in {}", report.summary(true)))
        .value
}

const ENGINES: [EngineKind; 2] = [EngineKind::Interp, EngineKind::Jit];

#[test]
fn pipeline_matches_the_model() {
    // (stages, cycles): one stage, stages longer than the run, and runs long
    // enough for the counter to wrap the 32-bit source.
    let cases: [(usize, u64); 6] = [(1, 5), (2, 3), (16, 0), (16, 10), (16, 2_000), (256, 700)];
    for (stages, cycles) in cases {
        let want = pipeline_model(stages, cycles);
        for engine in ENGINES {
            let report = run_chr("pipeline.chr", &[("N", stages.to_string())], engine, cycles);
            assert_eq!(
                counter(&report, "checksum"),
                want,
                "N = {stages}, {cycles} cycles, {engine:?}"
            );
        }
    }
}

/// A peer design's checksum after a number of cycles.
type Model = fn(u64) -> u64;

/// The one-clock bit-level and wide peers against their Rust models.
#[test]
fn crc32_decode_and_wide512_match_their_models() {
    let peers: [(&str, Model); 3] = [
        ("crc32.chr", crc32_model),
        ("decode.chr", decode_model),
        ("wide512.chr", wide512_model),
    ];
    for (file, model) in peers {
        for cycles in [0, 1, 3, 2_000] {
            let want = model(cycles);
            for engine in ENGINES {
                let report = run_chr(file, &[], engine, cycles);
                assert_eq!(
                    counter(&report, "checksum"),
                    want,
                    "{file}, {cycles} cycles, {engine:?}"
                );
            }
        }
    }
}

#[test]
fn async_fifo_matches_the_model() {
    for cycles in [0, 1, 7, 40, 3_000] {
        let want = fifo_model(WCLK, RCLK, 16, 2, cycles);
        for engine in ENGINES {
            let report = run_chr("async_fifo.chr", &[], engine, cycles);
            let got = (counter(&report, "checksum"), counter(&report, "received"));
            assert_eq!(
                got,
                (want.checksum, want.received),
                "{cycles} cycles, {engine:?}"
            );
        }
    }
}

/// The bench's writer is the slower clock, so its FIFO never fills; with the
/// clocks swapped the writer outruns the reader and `full` throttles it,
/// which pins the credit path (read pointer back to the writer) as well.
#[test]
fn async_fifo_with_a_faster_writer_matches_the_model() {
    let path = Path::new(PEERS).join("async_fifo.chr");
    let text = std::fs::read_to_string(&path).expect("the peer design is readable");
    let clocks = "clock wclk = 1094 ps;\nclock rclk = 754 ps phase 137 ps;";
    assert!(
        text.contains(clocks),
        "async_fifo.chr declares its clocks differently"
    );
    let swapped = text.replace(
        clocks,
        "clock wclk = 754 ps phase 137 ps;\nclock rclk = 1094 ps;",
    );
    let (w, r) = (RCLK, WCLK);
    for cycles in [1, 30, 2_000] {
        let want = fifo_model(w, r, 16, 2, cycles);
        for engine in ENGINES {
            let report = run_text(
                "async_fifo_swapped.chr",
                swapped.clone(),
                &[],
                engine,
                cycles,
            );
            let got = (counter(&report, "checksum"), counter(&report, "received"));
            assert_eq!(
                got,
                (want.checksum, want.received),
                "{cycles} cycles, {engine:?}"
            );
        }
    }
    let long = fifo_model(w, r, 16, 2, 2_000);
    assert!(
        long.write_edges.len() < 1_500,
        "the writer was never throttled: {} writes",
        long.write_edges.len()
    );
}

/// Runs an Icarus testbench; the test fails when `iverilog` is not
/// installed.
fn icarus(tb: &str, design: &str, defines: &[String], cycles: u64) -> String {
    if !chronon_suite::tools::icarus_installed() {
        chronon_suite::tools::missing("iverilog", "the Icarus comparison");
    }
    // A directory per call: the tests that call this run in parallel, and
    // each removes its own when done.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("chronon-peers-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let out: PathBuf = dir.join(format!("{tb}-{}.vvp", defines.join("-")));
    let status = Command::new("iverilog")
        .arg("-g2005")
        .args(defines)
        .arg("-o")
        .arg(&out)
        .arg(Path::new(PEERS).join(tb))
        .arg(Path::new(PEERS).join(design))
        .status()
        .expect("iverilog runs");
    assert!(status.success(), "iverilog failed on {tb}");
    let run = Command::new("vvp")
        .arg("-n")
        .arg(&out)
        .arg(format!("+cycles={cycles}"))
        .output()
        .expect("vvp runs");
    assert!(run.status.success(), "vvp failed on {tb}");
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_dir(&dir);
    let text = String::from_utf8_lossy(&run.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("checksum="))
        .unwrap_or_else(|| panic!("no checksum line from {tb}: {text}"));
    line.to_string()
}

#[test]
fn icarus_agrees_when_installed() {
    let cases: [(&str, &str, &str, Option<u32>, u64); 6] = [
        (
            "checksum_tb.v",
            "pipeline.v",
            "pipeline.chr",
            Some(16),
            1_500,
        ),
        (
            "checksum_tb.v",
            "pipeline.v",
            "pipeline.chr",
            Some(256),
            300,
        ),
        (
            "async_fifo_tb.v",
            "async_fifo.v",
            "async_fifo.chr",
            None,
            3_000,
        ),
        ("checksum_tb.v", "crc32.v", "crc32.chr", None, 2_000),
        ("checksum_tb.v", "decode.v", "decode.chr", None, 2_000),
        ("checksum_tb.v", "wide512.v", "wide512.chr", None, 2_000),
    ];
    for (tb, design, chr, stages, cycles) in cases {
        // The shared testbench names its design's module by `DUT`.
        let defines: Vec<String> = match stages {
            Some(n) => vec!["-DDUT=pipeline".into(), format!("-DDUT_N={n}")],
            None if tb == "checksum_tb.v" => {
                vec![format!("-DDUT={}", design.trim_end_matches(".v"))]
            }
            None => Vec::new(),
        };
        let line = icarus(tb, design, &defines, cycles);
        let params: Vec<(&str, String)> =
            stages.map(|n| ("N", n.to_string())).into_iter().collect();
        let report = run_chr(chr, &params, EngineKind::Jit, cycles);
        let mut want = format!("checksum={}", counter(&report, "checksum"));
        if chr == "async_fifo.chr" {
            want += &format!(" received={}", counter(&report, "received"));
        }
        assert_eq!(line, want, "{tb} {defines:?}, {cycles} cycles");
    }
}

/// `examples/router_ring.chr` with COUNT and BUDGET past the run, against
/// its Verilog twin (`benches/peers/router_ring.v`) under Icarus: router
/// 0's checksum (cycle, source and sequence number of every packet it
/// takes) after the same number of edges, for rings of 2, 3, 4 and 16
/// routers, on both engines. The twin models the channels' credits and
/// latency as the contract defines them, so any difference in when a
/// packet may move shows in the checksum.
#[test]
fn router_ring_matches_its_verilog_twin() {
    let path = "examples/router_ring.chr";
    let text = std::fs::read_to_string(path).expect("the example is readable");
    for (routers, cycles) in [(2, 2_000), (3, 2_000), (4, 3_000), (16, 3_000)] {
        let defines = vec!["-DDUT=router_ring".into(), format!("-DDUT_N={routers}")];
        let line = icarus("checksum_tb.v", "router_ring.v", &defines, cycles);
        let params = [
            ("N", routers.to_string()),
            ("COUNT", u32::MAX.to_string()),
            ("BUDGET", u32::MAX.to_string()),
        ];
        for engine in ENGINES {
            let report = run_text(path, text.clone(), &params, engine, cycles);
            let want = format!("checksum={}", counter(&report, "checksum"));
            assert_eq!(line, want, "{routers} routers, {cycles} cycles, {engine:?}");
            assert!(counter(&report, "checksum") > 0, "packets arrived");
        }
    }
}

/// `examples/cpu4.chr` with RETIRE past the run, against its Verilog twin
/// (`benches/peers/cpu4.v`) under Icarus: writeback's checksum (pc and
/// value of every instruction it retires) after the same number of edges,
/// on both engines. The twin models the rate-4 output, the capacities'
/// credits, the four ALUs' fan-in order and the flush path as the
/// contract defines them, so an instruction retired on another edge, in
/// another order or on the wrong path shows in the checksum.
#[test]
fn cpu4_matches_its_verilog_twin() {
    let path = "examples/cpu4.chr";
    let text = std::fs::read_to_string(path).expect("the example is readable");
    for cycles in [7, 150, 2_000] {
        let line = icarus("checksum_tb.v", "cpu4.v", &["-DDUT=cpu4".into()], cycles);
        let params = [("RETIRE", u32::MAX.to_string())];
        for engine in ENGINES {
            let report = run_text(path, text.clone(), &params, engine, cycles);
            let want = format!("checksum={}", counter(&report, "checksum"));
            assert_eq!(line, want, "{cycles} cycles, {engine:?}");
            assert!(
                counter(&report, "flushes") > 0 || cycles < 100,
                "branches were taken"
            );
        }
    }
}
