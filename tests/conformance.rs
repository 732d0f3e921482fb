//! Conformance against an independent simulator: designs written twice, as
//! `.chr` and as a Verilog twin written from the timing contract (not from
//! Chronon's implementation), run on `chronc` and on Icarus Verilog, whose
//! per-edge observation logs must agree line for line.
//!
//! Each `.chr` design traces what it observes at every edge of every unit
//! (`trace("name", k = v, ...)`); the text log (`chronc run --trace DIR`,
//! one file per domain) has one record per line, `<cycle> <time>ps T <unit>
//! <name> k=v ...`. The Verilog twin prints the same line from its
//! `always @(posedge clk)` blocks with `$display`, prefixed by the domain's
//! name, from the values before the edge. The test compares each unit's
//! lines exactly and, on a mismatch, prints the configuration and the first
//! differing lines.
//!
//! The designs and twins live in `tests/conformance/` (templates whose
//! holes, upper-case names in braces, are filled per configuration; the
//! twins take the same configuration as plusargs, so each is compiled
//! once): `cdc_fifo` (the CDC FIFO matrix: clock ratios and phases, clocks
//! declared by frequency, depths, synchronizer lengths, read styles and
//! traffic), `cdc_multi` (three clocks, fan-out to FIFOs and a channel, a
//! relay), `single_clock` (registers, aggregates, arithmetic, shifts,
//! division, comparisons, a stage register), `structs` (casts between
//! structs and integers by the documented layout), `channel`, `fan` and `chain`
//! (same-domain channels: latency, capacity, fan-out, fan-in, send rates,
//! zero-latency chains). Without `iverilog` the tests fail: a comparison
//! that did not run never passes (`.ci/run` installs it).

// Shared with tests/conformance_expr.rs, which uses a subset of it.
#[allow(dead_code)]
#[path = "conformance/harness.rs"]
mod harness;

use chronon_compiler::run::StopAt;
use chronon_compiler::simulate::EngineKind;
use harness::*;
use std::path::Path;

/// How the reader of the CDC FIFO reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadStyle {
    /// Registered read, `take()` before `request()` in the tick.
    TakeFirst,
    /// Registered read, `request()` before `take()`.
    RequestFirst,
    /// First-word-fall-through: `peek()` and `recv()`.
    Fwft,
}

/// One configuration of the CDC FIFO matrix.
#[derive(Clone, Debug)]
struct FifoCase {
    /// Writer period and phase, in units of `1/scale` ps.
    wp: u64,
    wph: u64,
    /// Reader period and phase, in units of `1/scale` ps.
    rp: u64,
    rph: u64,
    /// Time units per picosecond (1 for clocks in integer picoseconds).
    scale: u64,
    /// The clocks as the design spells them (writer, reader), when they are
    /// not integer picoseconds.
    spelled: Option<(String, String)>,
    /// At least this many edges of the slower clock (0: as many as
    /// [`FifoCase::limit`] needs anyway).
    min_edges: u64,
    depth: u64,
    sync: u64,
    style: ReadStyle,
    /// Traffic modes (0 continuous, 1 bursty, 2 random, 3 sparse random).
    wmode: u32,
    rmode: u32,
    /// The reader in the writer's domain (then `rp`, `rph` equal `wp`,
    /// `wph`, and the twin's two clocks have the same edges).
    same_domain: bool,
}

impl FifoCase {
    /// Long enough for several fill/drain rounds of the FIFO at the slower
    /// clock (in time units).
    fn limit(&self) -> u64 {
        let edges = 160.max(3 * self.depth + 6 * self.sync).max(self.min_edges);
        edges * self.wp.max(self.rp) + self.wph.max(self.rph)
    }

    fn chr(&self, template: &str) -> String {
        let reader = match self.style {
            ReadStyle::TakeFirst => format!("Reader<MODE = {}, ORDER = 0>", self.rmode),
            ReadStyle::RequestFirst => format!("Reader<MODE = {}, ORDER = 1>", self.rmode),
            ReadStyle::Fwft => format!("FwftReader<MODE = {}>", self.rmode),
        };
        let (wclock, rclock) = match &self.spelled {
            Some((w, r)) => (w.clone(), r.clone()),
            None => (
                format!("{} ps phase {} ps", self.wp, self.wph),
                format!("{} ps phase {} ps", self.rp, self.rph),
            ),
        };
        fill(
            template,
            &[
                ("WCLOCK", wclock),
                ("RCLOCK", rclock),
                ("WMODE", self.wmode.to_string()),
                ("READER", reader),
                ("DEPTH", self.depth.to_string()),
                ("SYNC", self.sync.to_string()),
                (
                    "RDOMAIN",
                    if self.same_domain { "w" } else { "r" }.to_string(),
                ),
            ],
        )
    }

    fn plusargs(&self) -> Vec<String> {
        vec![
            format!("+wp={}", self.wp),
            format!("+wph={}", self.wph),
            format!("+rp={}", self.rp),
            format!("+rph={}", self.rph),
            format!("+limit={}", self.limit()),
            format!("+depth={}", self.depth),
            format!("+sync={}", self.sync),
            format!("+wmode={}", self.wmode),
            format!("+rmode={}", self.rmode),
            format!(
                "+order={}",
                u32::from(self.style == ReadStyle::RequestFirst)
            ),
            format!("+fwft={}", u32::from(self.style == ReadStyle::Fwft)),
        ]
    }
}

/// Writer/reader periods (ps): ratios 1:1, 2:1, 3:2, 5:3 and an irregular
/// pair, each way round.
const PERIODS: [(u64, u64); 9] = [
    (1000, 1000),
    (2000, 1000),
    (1000, 2000),
    (1500, 1000),
    (1000, 1500),
    (1000, 600),
    (600, 1000),
    (1094, 754),
    (754, 1094),
];
/// Writer/reader phases (ps): coincident, one picosecond apart, and offsets
/// that are not a fraction of any period.
const PHASES: [(u64, u64); 4] = [(0, 0), (0, 1), (137, 0), (500, 137)];
/// Clock pairs declared by frequency: (writer, reader, time units per ps,
/// writer period and phase, reader period and phase in those units). 914 MHz
/// is 500000/457 ps and 1326 MHz 500000/663 ps (contract section 1: exact,
/// not rounded); 3 GHz is 1000/3 ps; 700 MHz is 10000/7 ps.
type Rational = (&'static str, &'static str, u64, u64, u64, u64, u64);
const RATIONAL: [Rational; 4] = [
    (
        "914 MHz",
        "1326 MHz phase 137 ps",
        457 * 663,
        500_000 * 663,
        0,
        500_000 * 457,
        137 * 457 * 663,
    ),
    (
        "1326 MHz phase 137 ps",
        "914 MHz",
        457 * 663,
        500_000 * 457,
        137 * 457 * 663,
        500_000 * 663,
        0,
    ),
    ("3 GHz", "1 GHz", 3, 1000, 0, 3000, 0),
    (
        "1000/3 MHz phase 1.5 ns",
        "700 MHz",
        7,
        3000 * 7,
        1500 * 7,
        10_000,
        0,
    ),
];
const DEPTHS: [u64; 3] = [2, 4, 16];
const SYNCS: [u64; 3] = [2, 3, 5];
const STYLES: [ReadStyle; 3] = [
    ReadStyle::TakeFirst,
    ReadStyle::RequestFirst,
    ReadStyle::Fwft,
];

/// The matrix: every period pair with every phase pair; for each of these
/// clock pairs, every depth with every synchronizer length, the read style
/// and the traffic modes walking with the indices, so that every read
/// style meets every depth and synchronizer length, and every writer
/// traffic mode every reader traffic mode, at every clock ratio; then the
/// 27 FIFO configurations with both sides in one domain.
fn fifo_cases() -> Vec<FifoCase> {
    let mut cases = Vec::new();
    for (i, &(wp, rp)) in PERIODS.iter().enumerate() {
        for (j, &(wph, rph)) in PHASES.iter().enumerate() {
            for k in 0..DEPTHS.len() * SYNCS.len() {
                cases.push(FifoCase {
                    wp,
                    wph,
                    rp,
                    rph,
                    depth: DEPTHS[k % 3],
                    sync: SYNCS[k / 3],
                    style: STYLES[(i + j + k) % 3],
                    wmode: ((i + k) % 4) as u32,
                    rmode: ((i + j) % 4) as u32,
                    same_domain: false,
                    scale: 1,
                    spelled: None,
                    min_edges: 0,
                });
            }
        }
    }
    // Clocks declared by frequency, whose periods are not whole picoseconds:
    // the twin counts time in units of 1/scale ps.
    for (i, &(wclock, rclock, scale, wp, wph, rp, rph)) in RATIONAL.iter().enumerate() {
        for k in 0..DEPTHS.len() * SYNCS.len() {
            cases.push(FifoCase {
                wp,
                wph,
                rp,
                rph,
                depth: DEPTHS[k % 3],
                sync: SYNCS[k / 3],
                style: STYLES[(i + k) % 3],
                wmode: ((i + k) % 4) as u32,
                rmode: ((i + k / 2) % 4) as u32,
                same_domain: false,
                scale,
                spelled: Some((wclock.to_string(), rclock.to_string())),
                min_edges: 0,
            });
        }
    }
    // 1000 and 1001 MHz, whose edges coincide only every microsecond: run
    // past the coincidence at 1 us, each way round and in every read style
    // (contract §2 and §5: a pointer committed at a shared edge is first
    // sampled at the other side's next edge; tests/contract has the
    // hand-derived timeline).
    for (k, style) in STYLES.into_iter().enumerate() {
        for slow_writer in [true, false] {
            let (fast, slow) = ((1_000_000, "1001 MHz"), (1_001_000, "1000 MHz"));
            let ((wp, wclock), (rp, rclock)) = if slow_writer {
                (slow, fast)
            } else {
                (fast, slow)
            };
            cases.push(FifoCase {
                wp,
                wph: 0,
                rp,
                rph: 0,
                depth: DEPTHS[k],
                sync: SYNCS[k],
                style,
                wmode: u32::from(!slow_writer) * 2,
                rmode: k as u32,
                same_domain: false,
                scale: 1001,
                spelled: Some((wclock.to_string(), rclock.to_string())),
                min_edges: 1_100,
            });
        }
    }
    // A FIFO within one domain: every depth, synchronizer length and read
    // style, on three clocks.
    for k in 0..DEPTHS.len() * SYNCS.len() * STYLES.len() {
        let (period, phase) = [(1000, 0), (754, 137), (1500, 1)][k % 3];
        cases.push(FifoCase {
            wp: period,
            wph: phase,
            rp: period,
            rph: phase,
            depth: DEPTHS[k % 3],
            sync: SYNCS[k / 3 % 3],
            style: STYLES[k / 9],
            wmode: (k % 4) as u32,
            rmode: ((k / 4 + k) % 4) as u32,
            same_domain: true,
            scale: 1,
            spelled: None,
            min_edges: 0,
        });
    }
    // Extremes: the longest synchronizer, a deep FIFO that a slow, sparse
    // reader lets fill, and phases of several periods (one side runs alone
    // for a while).
    for (wp, wph, rp, rph, depth, sync, style, wmode, rmode) in EXTREMES {
        cases.push(FifoCase {
            wp,
            wph,
            rp,
            rph,
            depth,
            sync,
            style,
            wmode,
            rmode,
            same_domain: false,
            scale: 1,
            spelled: None,
            min_edges: 0,
        });
    }
    cases
}

/// (writer period, phase, reader period, phase, depth, sync, read style,
/// writer and reader traffic) at the ends of the ranges.
type Extreme = (u64, u64, u64, u64, u64, u64, ReadStyle, u32, u32);
const EXTREMES: [Extreme; 6] = [
    (1000, 0, 1000, 0, 2, 64, ReadStyle::TakeFirst, 0, 0),
    (754, 0, 1094, 137, 16, 64, ReadStyle::Fwft, 2, 1),
    (1000, 0, 1500, 3700, 1024, 8, ReadStyle::RequestFirst, 0, 3),
    (600, 5, 1000, 2500, 1024, 2, ReadStyle::Fwft, 0, 3),
    (1094, 3000, 754, 0, 4, 2, ReadStyle::TakeFirst, 2, 0),
    (1000, 0, 1000, 0, 1024, 64, ReadStyle::TakeFirst, 0, 1),
];

/// The matrix covers what it claims: every depth, synchronizer length and
/// read style with every period pair (and each read style with every depth
/// and synchronizer length there), and every pair of traffic modes there.
#[test]
fn fifo_matrix_covers_every_dimension() {
    let cases = fifo_cases();
    for &(wp, rp) in &PERIODS {
        let here: Vec<&FifoCase> = cases.iter().filter(|c| (c.wp, c.rp) == (wp, rp)).collect();
        for depth in DEPTHS {
            assert!(
                here.iter().any(|c| c.depth == depth),
                "{wp}/{rp} depth {depth}"
            );
        }
        for sync in SYNCS {
            assert!(here.iter().any(|c| c.sync == sync), "{wp}/{rp} sync {sync}");
        }
        for style in STYLES {
            assert!(here.iter().any(|c| c.style == style), "{wp}/{rp} {style:?}");
        }
    }
    for style in STYLES {
        for depth in DEPTHS {
            for sync in SYNCS {
                assert!(
                    cases.iter().any(
                        |c| c.same_domain && (c.style, c.depth, c.sync) == (style, depth, sync)
                    ),
                    "one domain, {style:?} depth {depth} sync {sync}"
                );
            }
        }
    }
    for mode in 0..4 {
        assert!(cases.iter().any(|c| c.wmode == mode), "writer mode {mode}");
        assert!(cases.iter().any(|c| c.rmode == mode), "reader mode {mode}");
    }
    for &(wp, rp) in &PERIODS {
        for style in STYLES {
            for depth in DEPTHS {
                for sync in SYNCS {
                    assert!(
                        cases.iter().any(|c| (c.wp, c.rp, c.style, c.depth, c.sync)
                            == (wp, rp, style, depth, sync)),
                        "{wp}/{rp} {style:?} depth {depth} sync {sync}"
                    );
                }
            }
        }
        for (w, r) in (0..4).flat_map(|w| (0..4).map(move |r| (w, r))) {
            assert!(
                cases
                    .iter()
                    .any(|c| (c.wp, c.rp, c.wmode, c.rmode) == (wp, rp, w, r)),
                "{wp}/{rp} traffic {w}/{r}"
            );
        }
    }
}

/// Runs one `cdc_fifo.chr` case on `chronc` and the twin and compares them;
/// something must have been received. Chronc's logs.
fn check_fifo(
    image: &Path,
    template: &str,
    case: &FifoCase,
    label: &str,
    engine: EngineKind,
) -> Logs {
    let ours = run_chronc_scaled(
        "cdc_fifo.chr",
        &case.chr(template),
        case.limit(),
        case.scale,
        engine,
    );
    let theirs = run_twin(image, &case.plusargs());
    assert_same(&format!("{label} {case:?} on {engine:?}"), &ours, &theirs);
    assert!(
        saw(&ours, "top.rd", "got=1"),
        "{label} {case:?}: nothing was received"
    );
    ours
}

#[test]
fn cdc_fifo_matches_icarus() {
    let (_dir, image, template) = twin("cdc_fifo");
    let cases = fifo_cases();
    let mut throttled = 0;
    let mut second_requests = 0;
    for (n, case) in cases.iter().enumerate() {
        let ours = check_fifo(&image, &template, case, &format!("case {n}"), engine_for(n));
        throttled += usize::from(saw(&ours, "top.wr", "cs=0"));
        second_requests += usize::from(saw(&ours, "top.rd", "acc2=1"));
    }
    // The writer met a full FIFO in a good share of the cases (a fast writer,
    // a shallow FIFO or a slow reader), so the credit path is exercised.
    assert!(
        throttled > cases.len() / 4,
        "the writer was throttled in only {throttled} of {} cases",
        cases.len()
    );
    // A request after a take() in the same tick was accepted somewhere.
    assert!(second_requests > 0, "no second request was ever accepted");
}

/// Registers, struct and array registers written whole and in part in one
/// tick, enums and `match`, `for`, wrapping arithmetic, casts, shifts,
/// division and comparisons, and a stage register, over 2,000 edges of
/// xorshift stimulus.
#[test]
fn single_clock_semantics_match_icarus() {
    let (_dir, image, text) = twin("single_clock");
    let limit = 2_000_000;
    let theirs = run_twin(&image, &[format!("+limit={limit}")]);
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        let ours = run_chronc("single_clock.chr", &text, limit, engine);
        assert_same(&format!("single_clock.chr on {engine:?}"), &ours, &theirs);
        let records: usize = ours.values().map(Vec::len).sum();
        assert_eq!(records, 2_000 * 11, "eleven records per edge");
    }
    // The stimulus reaches the corner cases: the last pipe fills, and the
    // signed division meets its overflow (MIN / -1 = MIN) case.
    assert!(saw(&theirs, "top.st", "q2=1"));
    assert!(saw(&theirs, "top.alu", "sdiv8=-128 srem8=0"));
}

/// `structs.chr`: casts between structs and integers, both ways, with a
/// nested struct, an array field, a bool, signed fields and an 80-bit
/// struct, against a twin that slices the words by the documented layout.
#[test]
fn struct_casts_match_icarus() {
    let (_dir, image, text) = twin("structs");
    let limit = 2_000_000;
    let theirs = run_twin(&image, &[format!("+limit={limit}")]);
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        let ours = run_chronc("structs.chr", &text, limit, engine);
        assert_same(&format!("structs.chr on {engine:?}"), &ours, &theirs);
        let records: usize = ours.values().map(Vec::len).sum();
        assert_eq!(records, 2_001 * 2, "two records per edge");
    }
    // Signed fields take both signs.
    assert!(saw(&theirs, "top.pk", "len=-8"));
    assert!(saw(&theirs, "top.pk", "tag=-"));
}

/// One same-domain channel case: latency, capacity and traffic modes.
#[derive(Clone, Copy, Debug)]
struct ChannelCase {
    latency: u64,
    capacity: u64,
    pmode: u32,
    qmode: u32,
}

/// Latencies 0 (combinational) to 3 with capacities 1, 2 and 4, each with
/// four producer/consumer traffic pairs that together cover every mode.
fn channel_cases() -> Vec<ChannelCase> {
    let mut cases = Vec::new();
    for latency in 0..4 {
        for capacity in [1, 2, 4] {
            for k in 0..4u32 {
                cases.push(ChannelCase {
                    latency,
                    capacity,
                    pmode: k,
                    qmode: (k + latency as u32 + capacity as u32) % 4,
                });
            }
        }
    }
    cases
}

/// The engine for the `n`th case: they alternate, as they are compared with
/// each other elsewhere; here each meets the independent simulator.
fn engine_for(n: usize) -> EngineKind {
    if n.is_multiple_of(2) {
        EngineKind::Jit
    } else {
        EngineKind::Interp
    }
}

/// Runs one `channel.chr` case on `chronc` and the twin and compares them;
/// chronc's logs.
fn check_channel(
    image: &Path,
    template: &str,
    case: &ChannelCase,
    name: &str,
    engine: EngineKind,
) -> Logs {
    let limit = 300_000;
    let text = fill(
        template,
        &[
            ("L", case.latency.to_string()),
            ("C", case.capacity.to_string()),
            ("PMODE", case.pmode.to_string()),
            ("QMODE", case.qmode.to_string()),
        ],
    );
    let ours = run_chronc("channel.chr", &text, limit, engine);
    let theirs = run_twin(
        image,
        &[
            format!("+limit={limit}"),
            format!("+lat={}", case.latency),
            format!("+cap={}", case.capacity),
            format!("+pmode={}", case.pmode),
            format!("+qmode={}", case.qmode),
        ],
    );
    assert_same(&format!("{name} {case:?} on {engine:?}"), &ours, &theirs);
    assert!(
        saw(&ours, "top.q", "got=1"),
        "{case:?}: nothing was received"
    );
    ours
}

#[test]
fn channels_match_icarus() {
    let (_dir, image, template) = twin("channel");
    let mut refused = 0;
    for (n, case) in channel_cases().iter().enumerate() {
        let ours = check_channel(&image, &template, case, &format!("case {n}"), engine_for(n));
        refused += usize::from(saw(&ours, "top.p", "cs=0"));
    }
    assert!(
        refused > 12,
        "backpressure was rarely exercised: {refused} cases"
    );
}

/// One fan-out / fan-in / send-rate case of `fan.chr`: `p` (rate `rate`)
/// feeds `q` and `r`, and `s` also feeds `q`; `(latency, capacity)` per link.
#[derive(Clone, Copy, Debug)]
struct FanCase {
    rate: u32,
    pq: (u64, u64),
    pr: (u64, u64),
    sq: (u64, u64),
    /// Traffic modes of p, s, q and r.
    modes: [u32; 4],
}

/// Rates 1 to 3 with latencies 0 to 2 and capacities 1 to 3 on each link,
/// walked with different strides so that the links differ within a case.
fn fan_cases() -> Vec<FanCase> {
    (0..36u64)
        .map(|n| FanCase {
            rate: (n % 3) as u32 + 1,
            pq: (n / 3 % 3, n % 3 + 1),
            pr: ((n + 1) % 3, n / 9 % 3 + 1),
            sq: (n / 9 % 3, n.div_ceil(3) % 3 + 1),
            modes: [
                (n % 4) as u32,
                (n / 4 % 4) as u32,
                (n.div_ceil(2) % 4) as u32,
                ((n / 3 + 2) % 4) as u32,
            ],
        })
        .collect()
}

#[test]
fn fan_out_fan_in_and_rates_match_icarus() {
    let (_dir, image, template) = twin("fan");
    let (mut both, mut merged) = (0, 0);
    for (n, case) in fan_cases().iter().enumerate() {
        let ours = check_fan(&image, &template, case, &format!("case {n}"), engine_for(n));
        both += usize::from(saw(&ours, "top.p", "sent=2"));
        merged += usize::from(saw(&ours, "top.q", "got=2"));
    }
    // Two sends in one tick and two receptions in one tick both happen.
    assert!(
        both > 0 && merged > 0,
        "sent twice: {both}, received twice: {merged}"
    );
}

/// Runs one `fan.chr` case on `chronc` and the twin and compares them;
/// chronc's logs.
fn check_fan(image: &Path, template: &str, case: &FanCase, name: &str, engine: EngineKind) -> Logs {
    let limit = 300_000;
    let [pmode, smode, qmode, rmode] = case.modes;
    let text = fill(
        template,
        &[
            ("PMODE", pmode.to_string()),
            ("SMODE", smode.to_string()),
            ("QMODE", qmode.to_string()),
            ("RMODE", rmode.to_string()),
            ("RATE", case.rate.to_string()),
            ("LQ", case.pq.0.to_string()),
            ("CQ", case.pq.1.to_string()),
            ("LR", case.pr.0.to_string()),
            ("CR", case.pr.1.to_string()),
            ("LS", case.sq.0.to_string()),
            ("CS", case.sq.1.to_string()),
        ],
    );
    let ours = run_chronc("fan.chr", &text, limit, engine);
    let theirs = run_twin(
        image,
        &[
            format!("+limit={limit}"),
            format!("+rate={}", case.rate),
            format!("+lq={}", case.pq.0),
            format!("+cq={}", case.pq.1),
            format!("+lr={}", case.pr.0),
            format!("+cr={}", case.pr.1),
            format!("+ls={}", case.sq.0),
            format!("+cs={}", case.sq.1),
            format!("+pmode={pmode}"),
            format!("+smode={smode}"),
            format!("+qmode={qmode}"),
            format!("+rmode={rmode}"),
        ],
    );
    assert_same(&format!("{name} {case:?} on {engine:?}"), &ours, &theirs);
    ours
}

/// Zero-latency chains declared tail first: head `a` -> `b` (latency 0,
/// capacity `C1`) -> tail `c` (latency `L2`, capacity `C2`), with every
/// traffic mode on each unit across the cases.
#[test]
fn zero_latency_chains_match_icarus() {
    let (_dir, image, template) = twin("chain");
    let mut through = 0;
    for n in 0..24u64 {
        let case = ChainCase {
            c1: n % 2 + 1,
            c2: [1, 3][(n / 2 % 2) as usize],
            l2: n / 4 % 3,
            modes: [n % 4, (n / 3 + 1) % 4, (n / 6 + n) % 4],
        };
        let ours = check_chain(
            &image,
            &template,
            &case,
            &format!("case {n}"),
            engine_for(n as usize),
        );
        through += usize::from(saw(&ours, "top.c", "got=1"));
    }
    assert_eq!(through, 24, "an item reached the tail in every case");
}

/// One `chain.chr` case: capacities of the links `a -> b` (latency 0) and
/// `b -> c` (latency `l2`), and the traffic modes of `a`, `b` and `c`.
#[derive(Clone, Copy, Debug)]
struct ChainCase {
    c1: u64,
    c2: u64,
    l2: u64,
    modes: [u64; 3],
}

/// Runs one `chain.chr` case on `chronc` and the twin and compares them;
/// chronc's logs.
fn check_chain(
    image: &Path,
    template: &str,
    case: &ChainCase,
    name: &str,
    engine: EngineKind,
) -> Logs {
    let limit = 300_000;
    let ChainCase { c1, c2, l2, modes } = *case;
    let text = fill(
        template,
        &[
            ("C1", c1.to_string()),
            ("C2", c2.to_string()),
            ("L2", l2.to_string()),
            ("AMODE", modes[0].to_string()),
            ("BMODE", modes[1].to_string()),
            ("CMODE", modes[2].to_string()),
        ],
    );
    let ours = run_chronc("chain.chr", &text, limit, engine);
    let theirs = run_twin(
        image,
        &[
            format!("+limit={limit}"),
            format!("+c1={c1}"),
            format!("+c2={c2}"),
            format!("+l2={l2}"),
            format!("+amode={}", modes[0]),
            format!("+bmode={}", modes[1]),
            format!("+cmode={}", modes[2]),
        ],
    );
    let config = format!("{name}: C1 {c1}, C2 {c2}, L2 {l2}, modes {modes:?} on {engine:?}");
    assert_same(&config, &ours, &theirs);
    ours
}

/// Clock triples (period, phase in ps) of domains w, x and y for
/// `cdc_multi.chr`: unrelated, all coincident, and mixed ratios.
const TRIPLES: [[(u64, u64); 3]; 6] = [
    [(1000, 0), (754, 3), (1500, 100)],
    [(1000, 0), (1000, 0), (1000, 0)],
    [(600, 1), (1094, 0), (2000, 500)],
    [(1500, 137), (1000, 0), (600, 0)],
    [(754, 0), (1094, 137), (1000, 1)],
    [(1000, 0), (2000, 0), (500, 0)],
];

/// Three domains: a writer fanning out to two CDC FIFOs and a same-domain
/// channel (all or none), a relay that reads one FIFO (fwft) and writes a
/// third in the same tick, and a sink reading that one back in the writer's
/// domain.
#[test]
fn three_clock_fifo_network_matches_icarus() {
    let (_dir, image, template) = twin("cdc_multi");
    let mut relayed = 0;
    let mut cases = 0;
    for (i, clocks) in TRIPLES.iter().enumerate() {
        for k in 0..5usize {
            let n = i * 5 + k;
            let ours = check_multi(&image, &template, clocks, n, &format!("case {n}"));
            relayed += usize::from(saw(&ours, "top.c", "got=1"));
            cases += 1;
        }
    }
    // Items made the whole round trip w -> y -> w in most cases.
    assert!(
        relayed > cases / 2,
        "items came back in only {relayed} of {cases} cases"
    );
}

/// Runs `cdc_multi.chr` with domain clocks `clocks` ((period, phase) in ps
/// of w, x and y) and the FIFO depths, synchronizer lengths, traffic modes,
/// channel and engine that case `n` of the walk picks; compares with the
/// twin; chronc's logs.
fn check_multi(
    image: &Path,
    template: &str,
    clocks: &[(u64, u64); 3],
    n: usize,
    label: &str,
) -> Logs {
    let k = n % 5;
    let engine = engine_for(n);
    // Depth and synchronizer length of FIFOs a, b and c.
    let fifos: Vec<(u64, u64)> = (0..3)
        .map(|f| (DEPTHS[(n + f) % 3], SYNCS[(n / 3 + 2 * f) % 3]))
        .collect();
    let modes: Vec<u32> = (0..5).map(|u| ((n + u * (k + 1)) % 4) as u32).collect();
    // Latency and capacity of the channel to `e`.
    let (le, ce) = ((n % 3) as u64, (n / 3 % 3 + 1) as u64);
    let limit = 200 * clocks.iter().map(|c| c.0).max().unwrap_or(1000) + 500;
    let spell = |(p, ph): (u64, u64)| format!("{p} ps phase {ph} ps");
    let text = fill(
        template,
        &[
            ("WCLOCK", spell(clocks[0])),
            ("XCLOCK", spell(clocks[1])),
            ("YCLOCK", spell(clocks[2])),
            ("WMODE", modes[0].to_string()),
            ("AMODE", modes[1].to_string()),
            ("BMODE", modes[2].to_string()),
            ("CMODE", modes[3].to_string()),
            ("EMODE", modes[4].to_string()),
            ("LE", le.to_string()),
            ("CE", ce.to_string()),
            ("DA", fifos[0].0.to_string()),
            ("SA", fifos[0].1.to_string()),
            ("DB", fifos[1].0.to_string()),
            ("SB", fifos[1].1.to_string()),
            ("DC", fifos[2].0.to_string()),
            ("SC", fifos[2].1.to_string()),
        ],
    );
    let ours = run_chronc("cdc_multi.chr", &text, limit, engine);
    let mut args = vec![format!("+limit={limit}")];
    for (name, (p, ph)) in ["w", "x", "y"].iter().zip(clocks) {
        args.push(format!("+{name}p={p}"));
        args.push(format!("+{name}ph={ph}"));
    }
    args.push(format!("+le={le}"));
    args.push(format!("+ce={ce}"));
    for (name, mode) in ["wmode", "amode", "bmode", "cmode", "emode"]
        .iter()
        .zip(&modes)
    {
        args.push(format!("+{name}={mode}"));
    }
    for (f, (depth, sync)) in ["a", "b", "c"].iter().zip(&fifos) {
        args.push(format!("+d{f}={depth}"));
        args.push(format!("+s{f}={sync}"));
    }
    let theirs = run_twin(image, &args);
    let config = format!(
        "{label}: clocks {clocks:?}, FIFOs (depth, sync) {fifos:?}, channel \
         latency {le} capacity {ce}, modes {modes:?} on {engine:?}"
    );
    assert_same(&config, &ours, &theirs);
    assert!(
        saw(&ours, "top.e", "got=1"),
        "{config}: the channel moved nothing"
    );
    ours
}

/// Long runs past the runner's 65,536-edge slices, stopped by a number of
/// writer edges (contract section 6: edges 0 to N-1 of the domain and every
/// instant up to the time of edge N-1, none after), on both read styles.
#[test]
fn long_fifo_runs_match_icarus() {
    let (_dir, image, template) = twin("cdc_fifo");
    let edges = 70_000;
    for (style, engine) in [
        (ReadStyle::TakeFirst, EngineKind::Jit),
        (ReadStyle::Fwft, EngineKind::Interp),
    ] {
        let case = FifoCase {
            wp: 754,
            wph: 137,
            rp: 1094,
            rph: 0,
            scale: 1,
            spelled: None,
            min_edges: 0,
            depth: 16,
            sync: 3,
            style,
            wmode: 2,
            rmode: 3,
            same_domain: false,
        };
        // The writer's domain `w` is the first declared, the default stop
        // domain; the twin prints every edge up to the time of its edge N-1.
        let stop = StopAt::Cycles {
            count: edges,
            domain: Some("w".to_string()),
        };
        let ours = run_chronc_until("cdc_fifo.chr", &case.chr(&template), stop, 1, engine);
        let limit = case.wph + (edges - 1) * case.wp;
        let mut args = case.plusargs();
        args.retain(|a| !a.starts_with("+limit="));
        args.push(format!("+limit={limit}"));
        let theirs = run_twin(&image, &args);
        assert_same(
            &format!("{case:?}, {edges} writer edges on {engine:?}"),
            &ours,
            &theirs,
        );
        assert_eq!(ours["top.wr"].len() as u64, edges);
    }
}

/// `count` pseudo-random FIFO configurations from `seed`: periods anywhere
/// in 2..3000 ps (irregular ratios the matrix does not have), phases up to
/// two periods, every depth up to 64, synchronizer lengths 2 to 9, every
/// read style, traffic mode and an occasional shared domain.
fn random_fifo_cases(seed: u64, count: usize) -> Vec<FifoCase> {
    let mut state = seed;
    let mut pick = |n: u64| splitmix(&mut state) % n;
    (0..count)
        .map(|_| {
            let wp = 2 + pick(2999);
            let rp = 2 + pick(2999);
            let same_domain = pick(8) == 0;
            let (rp, rph) = if same_domain {
                (wp, 0)
            } else {
                (rp, pick(2 * rp))
            };
            let wph = if same_domain { 0 } else { pick(2 * wp) };
            FifoCase {
                wp,
                wph,
                rp,
                rph,
                scale: 1,
                spelled: None,
                min_edges: 0,
                depth: 2 << pick(6),
                sync: 2 + pick(8),
                style: STYLES[pick(3) as usize],
                wmode: pick(4) as u32,
                rmode: pick(4) as u32,
                same_domain,
            }
        })
        .collect()
}

/// Random FIFO configurations: 40 by default, from a fixed seed;
/// `CHRONON_CONFORMANCE_CASES` and `CHRONON_CONFORMANCE_SEED` ask for more,
/// or others (a long local hunt).
#[test]
fn random_fifo_cases_match_icarus() {
    let count = random_count(40);
    let seed = env_u64("CHRONON_CONFORMANCE_SEED", 0x00C0_FFEE);
    let (_dir, image, template) = twin("cdc_fifo");
    for (n, case) in random_fifo_cases(seed, count).iter().enumerate() {
        let label = format!("seed {seed:#x} case {n}");
        check_fifo(&image, &template, case, &label, engine_for(n));
    }
}

/// `CHRONON_CONFORMANCE_CASES` (or `default`): how many random cases each
/// random suite runs.
fn random_count(default: u64) -> usize {
    env_u64("CHRONON_CONFORMANCE_CASES", default) as usize
}

/// Random same-domain compositions past the matrices' ranges: channels of
/// latency 0 to 6 and capacity 1 to 8; fan-out and fan-in with send rates 1
/// to 4 and per-link latencies 0 to 4 and capacities 1 to 6; zero-latency
/// chains with capacities 1 to 5 and a tail latency 0 to 4; every traffic
/// mode. `CHRONON_CONFORMANCE_CASES` and `CHRONON_CONFORMANCE_SEED` as for
/// the random FIFO cases.
#[test]
fn random_channel_compositions_match_icarus() {
    let seed = env_u64("CHRONON_CONFORMANCE_SEED", 0x00C0_FFEE);
    let mut state = seed ^ 0xC4A7;
    let mut pick = |n: u64| splitmix(&mut state) % n;
    let (_c, channel_image, channel) = twin("channel");
    let (_f, fan_image, fan) = twin("fan");
    let (_h, chain_image, chain) = twin("chain");
    let (mut throttled, mut rate_used) = (0, 0);
    let channels = random_count(16);
    for n in 0..channels {
        let case = ChannelCase {
            latency: pick(7),
            capacity: 1 + pick(8),
            pmode: pick(4) as u32,
            qmode: pick(4) as u32,
        };
        let name = format!("seed {seed:#x} channel {n}");
        let ours = check_channel(&channel_image, &channel, &case, &name, engine_for(n));
        throttled += usize::from(saw(&ours, "top.p", "cs=0"));
    }
    for n in 0..random_count(16) {
        let rate = 1 + pick(4) as u32;
        let mut link = || (pick(5), 1 + pick(6));
        let (pq, pr, sq) = (link(), link(), link());
        let case = FanCase {
            rate,
            pq,
            pr,
            sq,
            modes: [
                pick(4) as u32,
                pick(4) as u32,
                pick(4) as u32,
                pick(4) as u32,
            ],
        };
        let name = format!("seed {seed:#x} fan {n}");
        let ours = check_fan(&fan_image, &fan, &case, &name, engine_for(n));
        rate_used += usize::from(case.rate > 2 && saw(&ours, "top.p", "sent=3"));
    }
    for n in 0..random_count(8) {
        let case = ChainCase {
            c1: 1 + pick(4),
            c2: 1 + pick(5),
            l2: pick(5),
            modes: [pick(4), pick(4), pick(4)],
        };
        let name = format!("seed {seed:#x} chain {n}");
        check_chain(&chain_image, &chain, &case, &name, engine_for(n));
    }
    // Backpressure and sends past two per edge both happened.
    assert!(
        throttled > channels / 4,
        "the producer was refused in only {throttled} of {channels} channels"
    );
    assert!(rate_used > 0, "no producer sent three items in one edge");
}

/// A clock frequency `num/den` MHz as a design may spell it, with its
/// period in ps, exact (numerator, denominator).
fn spell_frequency(num: u64, den: u64, style: u64) -> (String, (u64, u64)) {
    let g = gcd(1_000_000 * den, num);
    let period = (1_000_000 * den / g, num / g);
    let text = if den > 1 {
        format!("{num}/{den} MHz")
    } else if num.is_multiple_of(1000) && style == 0 {
        format!("{} GHz", num / 1000)
    } else if style == 1 {
        format!("{} kHz", num * 1000)
    } else {
        format!("{num} MHz")
    };
    (text, period)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a, b) * b
}

/// `count` FIFO cases between clocks declared by frequency whose periods are
/// rarely whole picoseconds: 1000 and 1001 MHz (edges that drift past each
/// other by a femtosecond-scale step and meet again at 1 us), random
/// integer and fractional (`a/3 MHz`) frequencies, and pairs in small
/// integer ratios, which share edges; phases of zero, whole picoseconds,
/// decimal nanoseconds or the other clock's period; depths 2 to 16,
/// synchronizer lengths 2 to 5, every read style.
fn random_rational_fifo_cases(seed: u64, count: usize) -> Vec<FifoCase> {
    let mut state = seed ^ 0x4A7_1000;
    let mut pick = |n: u64| splitmix(&mut state) % n;
    (0..count)
        .map(|_| {
            let kind = pick(4);
            let (fw, fr) = match kind {
                0 => {
                    if pick(2) == 0 {
                        ((1000, 1), (1001, 1))
                    } else {
                        ((1001, 1), (1000, 1))
                    }
                }
                1 => ((100 + pick(2901), 1), (100 + pick(2901), 1)),
                2 => {
                    let den = [3, 7, 9][pick(3) as usize];
                    let f = |r: u64| (den * 100 + r, den);
                    (f(pick(2900 * den)), f(pick(2900 * den)))
                }
                _ => {
                    let base = 100 + pick(1400);
                    let (m, k) = (1 + pick(4), 1 + pick(4));
                    ((base * m, 1), (base * k, 1))
                }
            };
            let (wtext, wper) = spell_frequency(fw.0, fw.1, pick(3));
            let (rtext, rper) = spell_frequency(fr.0, fr.1, pick(3));
            let mut phase = |own: (u64, u64), other: (u64, u64)| -> (String, (u64, u64)) {
                match pick(if kind == 0 { 2 } else { 4 }) {
                    0 => (String::new(), (0, 1)),
                    1 => {
                        let ps = pick(own.0 / own.1 + 1);
                        (format!(" phase {ps} ps"), (ps, 1))
                    }
                    2 => {
                        let ps = pick(4) * 1000 + pick(10) * 100;
                        (
                            format!(" phase {}.{} ns", ps / 1000, ps % 1000 / 100),
                            (ps, 1),
                        )
                    }
                    _ => (format!(" phase {}/{} ps", other.0, other.1), other),
                }
            };
            let (wph_text, wph) = phase(wper, rper);
            let (rph_text, rph) = phase(rper, wper);
            let scale = [wper.1, rper.1, wph.1, rph.1].into_iter().fold(1, lcm);
            let units = |(n, d): (u64, u64)| n * (scale / d);
            FifoCase {
                wp: units(wper),
                wph: units(wph),
                rp: units(rper),
                rph: units(rph),
                scale,
                spelled: Some((wtext + &wph_text, rtext + &rph_text)),
                // 1000 and 1001 MHz meet again at 1 us.
                min_edges: if kind == 0 { 1_050 } else { 0 },
                depth: 2 << pick(4),
                sync: 2 + pick(4),
                style: STYLES[pick(3) as usize],
                wmode: pick(4) as u32,
                rmode: pick(4) as u32,
                same_domain: false,
            }
        })
        .collect()
}

/// Random clock pairs declared by frequency (see
/// [`random_rational_fifo_cases`]): 24 by default;
/// `CHRONON_CONFORMANCE_CASES` and `CHRONON_CONFORMANCE_SEED` as for the
/// other random suites.
#[test]
fn random_rational_clock_fifos_match_icarus() {
    let seed = env_u64("CHRONON_CONFORMANCE_SEED", 0x00C0_FFEE);
    let cases = random_rational_fifo_cases(seed, random_count(24));
    let (_dir, image, template) = twin("cdc_fifo");
    let mut coincident = 0;
    for (n, case) in cases.iter().enumerate() {
        let label = format!("seed {seed:#x} rational case {n}");
        let ours = check_fifo(&image, &template, case, &label, engine_for(n));
        // Whether a writer edge and a reader edge fell on one instant.
        let times = |unit: &str| -> std::collections::BTreeSet<String> {
            ours[unit]
                .iter()
                .map(|l| l.split(' ').nth(1).unwrap_or("").to_string())
                .collect()
        };
        coincident += usize::from(!times("top.wr").is_disjoint(&times("top.rd")));
    }
    assert!(
        cases.is_empty() || coincident > 0,
        "no case had coincident edges"
    );
}

/// Random three-clock networks (`cdc_multi.chr`): periods 300 to 3000 ps
/// with random phases, or clocks that share edges (one a multiple of
/// another, equal phases); 12 by default, `CHRONON_CONFORMANCE_CASES` and
/// `CHRONON_CONFORMANCE_SEED` as for the other random suites.
#[test]
fn random_three_clock_networks_match_icarus() {
    let seed = env_u64("CHRONON_CONFORMANCE_SEED", 0x00C0_FFEE);
    let mut state = seed ^ 0x3C10C;
    let mut pick = |n: u64| splitmix(&mut state) % n;
    let (_dir, image, template) = twin("cdc_multi");
    for n in 0..random_count(12) {
        let clocks: [(u64, u64); 3] = if pick(3) == 0 {
            let base = 300 + pick(700);
            let phase = pick(base);
            let m = [1 + pick(3), 1 + pick(3), 1 + pick(3)];
            m.map(|m| (base * m, phase))
        } else {
            [(); 3].map(|()| {
                let p = 300 + pick(2701);
                (p, pick(2 * p))
            })
        };
        // The walk's index picks the FIFOs, modes and channel.
        let walk = pick(1000) as usize;
        check_multi(
            &image,
            &template,
            &clocks,
            walk,
            &format!("seed {seed:#x} network {n} (walk {walk})"),
        );
    }
}
