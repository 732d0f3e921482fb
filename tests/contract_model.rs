//! Contract §5 (CDC FIFOs) against a reference model written here from the
//! contract's text alone: random two-clock FIFO configurations (periods,
//! phases, depth, synchronizer length, read style, traffic), each run end
//! to end as `chronc run --trace` runs it, whose trace must equal, line for
//! line, the timeline the model derives: every accepted write, every
//! accepted request, every take or FWFT receive, with its domain, cycle
//! and exact time. The model keeps the pointers as counts and follows the
//! contract's instant literally: sample the other side's pointers as they
//! were before the instant, evaluate both sides, then commit (store,
//! pointer, synchronizer shift, flags from the new pointer and the tail
//! before the edge, output register). It shares no code with the runtime.
//!
//! `CHRONON_CONTRACT_CASES=N` (default 32) and `CHRONON_CONTRACT_SEED=S`
//! run more cases, a soak; a failure names the case's seed and the design.

use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::{RunOptions, StopAt, parse_time, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_compiler::testing::rng::Rng;
use chronon_lang::span::SourceMap;

/// How the reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    /// Registered read: `take()` before `request()` in the tick.
    TakeFirst,
    /// Registered read: `request()` before `take()`.
    RequestFirst,
    /// First-word-fall-through: `recv()`.
    Fwft,
}

/// One random configuration. Traffic: the writer tries a write at its
/// cycle n when `n % wm < wk`; the reader requests (or receives) at its
/// cycle m when `m % rm < rk` and takes when `m % tm < tk`.
#[derive(Clone, Debug)]
struct Config {
    wp: u64,
    wph: u64,
    rp: u64,
    rph: u64,
    depth: u64,
    sync: usize,
    style: Style,
    wm: u64,
    wk: u64,
    rm: u64,
    rk: u64,
    tm: u64,
    tk: u64,
    /// The reader in the writer's domain: a synchronous FIFO, with the same
    /// latencies (then `rp`, `rph` equal `wp`, `wph`).
    same_domain: bool,
    /// The run covers every instant at or before this time (ps).
    until: u64,
}

impl Config {
    fn random(rng: &mut Rng) -> Config {
        let period = |rng: &mut Rng| 200 + rng.below(2800);
        let (wp, rp) = (period(rng), period(rng));
        // Equal clocks, so that every edge is shared, now and then.
        let rp = if rng.one_in(5) { wp } else { rp };
        let phase = |rng: &mut Rng, p: u64| if rng.one_in(3) { 0 } else { rng.below(2 * p) };
        let (wph, rph) = (phase(rng, wp), phase(rng, rp));
        let same_domain = rng.one_in(6);
        let (rp, rph) = if same_domain { (wp, wph) } else { (rp, rph) };
        let traffic = |rng: &mut Rng| {
            let m = 1 + rng.below(7);
            (m, 1 + rng.below(m))
        };
        let ((wm, wk), (rm, rk), (tm, tk)) = (traffic(rng), traffic(rng), traffic(rng));
        Config {
            wp,
            wph,
            rp,
            rph,
            depth: *rng.pick(&[2, 4, 8]),
            sync: *rng.pick(&[2, 3, 5]),
            style: *rng.pick(&[Style::TakeFirst, Style::RequestFirst, Style::Fwft]),
            wm,
            wk,
            rm,
            rk,
            tm,
            tk,
            same_domain,
            until: 150 * wp.max(rp) + wph.max(rph),
        }
    }

    /// The design as `.chr` text.
    fn design(&self) -> String {
        let (port, reader) = match self.style {
            Style::Fwft => (
                "cdc fwft",
                "if m % RM < RK { if let Some(x) = rd.recv() { trace(\"recv\", v = x); } }"
                    .to_string(),
            ),
            style => {
                let take =
                    "if m % TM < TK { if let Some(x) = rd.take() { trace(\"take\", v = x); } }";
                let request = "if m % RM < RK { if rd.request() { trace(\"req\"); } }";
                let body = if style == Style::TakeFirst {
                    format!("{take}\n        {request}")
                } else {
                    format!("{request}\n        {take}")
                };
                ("cdc", body)
            }
        };
        format!(
            "clock w = {wp} ps phase {wph} ps;\n\
             {rclock}\
             const WM: u32 = {wm};\nconst WK: u32 = {wk};\n\
             const RM: u32 = {rm};\nconst RK: u32 = {rk};\n\
             const TM: u32 = {tm};\nconst TK: u32 = {tk};\n\
             unit Writer {{\n    out tx: u32;\n    reg n: u32;\n    reg v: u32;\n    tick {{\n\
             \x20       n <= n + 1;\n\
             \x20       if n % WM < WK {{ if tx.try_send(v) {{ trace(\"sent\", v = v); v <= v + 1; }} }}\n\
             \x20   }}\n}}\n\
             unit Reader {{\n    in rd: u32 {port};\n    reg m: u32;\n    tick {{\n\
             \x20       m <= m + 1;\n        {reader}\n    }}\n}}\n\
             system Top {{\n    inst w: Writer on w;\n    inst r: Reader on {rdomain};\n\
             \x20   cdc w.tx -> r.rd depth {depth} sync {sync};\n}}\n",
            wp = self.wp,
            wph = self.wph,
            rclock = if self.same_domain {
                String::new()
            } else {
                format!("clock r = {} ps phase {} ps;\n", self.rp, self.rph)
            },
            rdomain = if self.same_domain { "w" } else { "r" },
            wm = self.wm,
            wk = self.wk,
            rm = self.rm,
            rk = self.rk,
            tm = self.tm,
            tk = self.tk,
            depth = self.depth,
            sync = self.sync,
        )
    }

    /// The trace lines the contract implies, in the merged log's order:
    /// time, then domain (`w` before `r`), then instance path (`top.r`
    /// before `top.w` when both are in `w`), then program order.
    fn model(&self) -> Vec<String> {
        let s = self.sync;
        // Writer side: the write pointer, the read pointer's synchronizer,
        // `full`, the next value to send.
        let (mut wptr, mut rsync, mut full, mut next) = (0u64, vec![0u64; s], false, 0u64);
        // Reader side: the read pointer, the write pointer's synchronizer,
        // `empty`, the output register.
        let (mut rptr, mut wsync, mut empty) = (0u64, vec![0u64; s], true);
        let mut output: Option<u64> = None;
        let mut storage = std::collections::VecDeque::new();
        let (mut n, mut m) = (0u64, 0u64);
        let mut lines = Vec::new();
        let rname = if self.same_domain { "w" } else { "r" };
        loop {
            let tw = self.wph + n * self.wp;
            let tr = self.rph + m * self.rp;
            let t = tw.min(tr);
            if t > self.until {
                return lines;
            }
            let (w_edge, r_edge) = (tw == t, tr == t);
            // Pointers as they were before the instant.
            let (wptr_before, rptr_before) = (wptr, rptr);
            // Evaluate; each side's records of the instant apart.
            let (mut wlines, mut rlines) = (Vec::new(), Vec::new());
            let mut wrote = None;
            if w_edge && n % self.wm < self.wk && !full {
                wrote = Some(next);
                wlines.push(format!("{t}ps w {n} T top.w sent v={next}"));
            }
            let (mut accepted, mut taken) = (false, false);
            if r_edge {
                let request = m % self.rm < self.rk;
                let take = m % self.tm < self.tk;
                let do_take = |lines: &mut Vec<String>, taken: &mut bool| {
                    if take && let Some(v) = output {
                        lines.push(format!("{t}ps {rname} {m} T top.r take v={v}"));
                        *taken = true;
                    }
                };
                match self.style {
                    Style::Fwft => {
                        if request && !empty {
                            let v = storage.front().expect("not empty: an item is stored");
                            rlines.push(format!("{t}ps {rname} {m} T top.r recv v={v}"));
                            accepted = true;
                        }
                    }
                    Style::TakeFirst => {
                        do_take(&mut rlines, &mut taken);
                        if request && !empty && (output.is_none() || taken) {
                            rlines.push(format!("{t}ps {rname} {m} T top.r req"));
                            accepted = true;
                        }
                    }
                    Style::RequestFirst => {
                        if request && !empty && output.is_none() {
                            rlines.push(format!("{t}ps {rname} {m} T top.r req"));
                            accepted = true;
                        }
                        do_take(&mut rlines, &mut taken);
                    }
                }
            }
            if self.same_domain {
                lines.append(&mut rlines);
            }
            lines.append(&mut wlines);
            lines.append(&mut rlines);
            // Commit.
            if w_edge {
                if let Some(v) = wrote {
                    storage.push_back(v);
                    wptr += 1;
                    next += 1;
                }
                let tail = rsync[s - 1];
                rsync.rotate_right(1);
                rsync[0] = rptr_before;
                full = wptr - tail == self.depth;
                n += 1;
            }
            if r_edge {
                if taken {
                    output = None;
                }
                if accepted {
                    let v = storage.pop_front().expect("an accepted read has an item");
                    if self.style != Style::Fwft {
                        output = Some(v);
                    }
                    rptr += 1;
                }
                let tail = wsync[s - 1];
                wsync.rotate_right(1);
                wsync[0] = wptr_before;
                empty = rptr == tail;
                m += 1;
            }
            assert!(
                storage.len() as u64 <= self.depth,
                "the model overfilled its storage: {self:?}"
            );
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `T` lines of the run's merged text trace.
fn traced(label: &str, text: &str, config: &Config, engine: EngineKind) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!(
        "chronon-contract-model-{}-{label}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut sources = SourceMap::new();
    sources.add(format!("{label}.chr"), text.to_string());
    let options = RunOptions {
        top: None,
        params: Vec::new(),
        engine,
        stop: StopAt::Until(parse_time(&format!("{}ps", config.until)).expect("time")),
        drain: None,
        seed: 0,
    };
    let record = RecordOptions {
        trace_dir: Some(dir.clone()),
        ..RecordOptions::default()
    };
    let report = match run_recorded(&mut sources, &options, &record, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{label}: {e:?}\n{text}"),
    };
    assert!(report.is_clean(), "{label}: {}", report.summary(true));
    let mut out = Vec::new();
    chronon_record::merge::merge(&dir, &mut out).expect("the trace merges");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out)
        .expect("text")
        .lines()
        .filter(|l| l.split_whitespace().nth(3) == Some("T"))
        .map(str::to_string)
        .collect()
}

#[test]
fn random_fifo_timelines_match_the_contract_model() {
    let cases = env_u64("CHRONON_CONTRACT_CASES", 32);
    let seed = env_u64("CHRONON_CONTRACT_SEED", 0x5eed_c0de);
    let mut received = 0;
    for case in 0..cases {
        let case_seed = seed.wrapping_add(case);
        let config = Config::random(&mut Rng::new(case_seed));
        let text = config.design();
        let expected = config.model();
        let engine = if case % 2 == 0 {
            EngineKind::Jit
        } else {
            EngineKind::Interp
        };
        let got = traced(&format!("case{case}"), &text, &config, engine);
        if let Some(i) = (0..got.len().max(expected.len())).find(|&i| got.get(i) != expected.get(i))
        {
            panic!(
                "case seed {case_seed} ({engine:?}): line {i}: chronc {:?}, the model {:?}\n\
                 {config:?}\n{text}",
                got.get(i),
                expected.get(i)
            );
        }
        received += usize::from(
            expected
                .iter()
                .any(|l| l.contains(" take ") || l.contains(" recv ")),
        );
    }
    assert!(
        received as u64 * 2 > cases,
        "items went through in only {received} of {cases} cases"
    );
}
