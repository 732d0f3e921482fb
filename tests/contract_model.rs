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
//! Contract §4 (channels) the same way: random compositions of senders
//! (rates, more tries than the rate) and receivers (several receives per
//! edge) in one domain, joined with latencies 0 to 3 and capacities 1 to
//! 4, with fan-out and fan-in, against a model of credit (in flight before
//! the edge, items sent earlier in the tick counted, a slot freed at n
//! counting from n + 1), all-or-none fan-out and the fan-in order.
//!
//! `CHRONON_CONTRACT_CASES=N` (default 32) and `CHRONON_CONTRACT_SEED=S`
//! run more cases of each, a soak; a failure names the case's seed and the
//! design.

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
fn traced(label: &str, text: &str, until_ps: u64, engine: EngineKind) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!(
        "chronon-contract-model-{}-{label}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut sources = SourceMap::new();
    sources.add(format!("{label}.chr"), text.to_string());
    let options = RunOptions::new(
        engine,
        StopAt::Until(parse_time(&format!("{until_ps}ps")).expect("time")),
    );
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

/// Runs a random case's design `text` (of `config`, from `case_seed`) until
/// `until_ps` on the JIT, or on the interpreter for odd `case`s, and
/// asserts that its trace is `expected`, line for line.
fn assert_matches_model(
    label: &str,
    case: u64,
    case_seed: u64,
    config: &dyn std::fmt::Debug,
    text: &str,
    until_ps: u64,
    expected: &[String],
) {
    let engine = if case.is_multiple_of(2) {
        EngineKind::Jit
    } else {
        EngineKind::Interp
    };
    let got = traced(label, text, until_ps, engine);
    if let Some(i) = (0..got.len().max(expected.len())).find(|&i| got.get(i) != expected.get(i)) {
        panic!(
            "case seed {case_seed} ({engine:?}): line {i}: chronc {:?}, the model {:?}\n\
             {config:?}\n{text}",
            got.get(i),
            expected.get(i)
        );
    }
}

#[test]
fn random_fifo_timelines_match_the_contract_model() {
    let cases = env_u64("CHRONON_CONTRACT_CASES", 32);
    let seed = env_u64("CHRONON_CONTRACT_SEED", 0x5eed_c0de);
    let mut received = 0;
    for case in 0..cases {
        let case_seed = seed.wrapping_add(case);
        let config = Config::random(&mut Rng::new(case_seed));
        let expected = config.model();
        let until = config.until;
        assert_matches_model(
            &format!("fifo{case}"),
            case,
            case_seed,
            &config,
            &config.design(),
            until,
            &expected,
        );
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

/// A channel: sender, receiver, latency, capacity, in declaration order.
#[derive(Clone, Debug)]
struct Link {
    from: usize,
    to: usize,
    latency: u64,
    capacity: u64,
}

/// A random composition of channels in one domain. Sender i (instance
/// `s<i>`) has rate `rate[i]`, tries `tries[i]` sends per edge when its
/// cycle n has `n % m < k`, and sends `i * 100000 + its count of items
/// sent`; receiver j (`r<j>`) tries `recvs[j]` receives per edge when its
/// cycle has `m % rm < rk`.
#[derive(Clone, Debug)]
struct Channels {
    period: u64,
    senders: Vec<(u64, u64, u64, u64)>,
    receivers: Vec<(u64, u64, u64)>,
    links: Vec<Link>,
    edges: u64,
}

impl Channels {
    fn random(rng: &mut Rng) -> Channels {
        let pattern = |rng: &mut Rng| {
            let m = 1 + rng.below(5);
            (m, 1 + rng.below(m))
        };
        let senders: Vec<(u64, u64, u64, u64)> = (0..1 + rng.below(3))
            .map(|_| {
                let rate = 1 + rng.below(3);
                let (m, k) = pattern(rng);
                (rate, rate + rng.below(2), m, k)
            })
            .collect();
        let receivers: Vec<(u64, u64, u64)> = (0..1 + rng.below(3))
            .map(|_| {
                let (m, k) = pattern(rng);
                (1 + rng.below(3), m, k)
            })
            .collect();
        let mut pairs = Vec::new();
        for to in 0..receivers.len() {
            // One or two senders per receiver (fan-in).
            let first = rng.below(senders.len() as u64) as usize;
            pairs.push((first, to));
            let second = rng.below(senders.len() as u64) as usize;
            if second != first && rng.one_in(2) {
                pairs.push((second, to));
            }
        }
        for from in 0..senders.len() {
            if !pairs.iter().any(|&(f, _)| f == from) {
                pairs.push((from, rng.below(receivers.len() as u64) as usize));
            }
        }
        // Random declaration order (the fan-in order depends on it).
        for i in (1..pairs.len()).rev() {
            pairs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let links = pairs
            .into_iter()
            .map(|(from, to)| Link {
                from,
                to,
                latency: rng.below(4),
                capacity: 1 + rng.below(4),
            })
            .collect();
        Channels {
            period: 500 + rng.below(1500),
            senders,
            receivers,
            links,
            edges: 60,
        }
    }

    fn design(&self) -> String {
        let mut text = format!(
            "clock c = {} ps;\n\
             unit Src<ID: u32 = 0, R: u32 = 1, T: u32 = 1, M: u32 = 1, K: u32 = 1> {{\n\
             \x20   out tx: u32 rate R;\n    reg n: u32;\n    reg count: u32;\n    tick {{\n\
             \x20       n <= n + 1;\n        let c: u32 = count;\n\
             \x20       for _j in 0..T {{\n\
             \x20           if n % M < K && tx.try_send(ID * 100000 + c) {{\n\
             \x20               trace(\"sent\", v = ID * 100000 + c);\n\
             \x20               c = c + 1;\n            }}\n        }}\n\
             \x20       count <= c;\n    }}\n}}\n\
             unit Dst<Q: u32 = 1, M: u32 = 1, K: u32 = 1> {{\n\
             \x20   in rx: u32;\n    reg m: u32;\n    tick {{\n        m <= m + 1;\n\
             \x20       for _j in 0..Q {{\n\
             \x20           if m % M < K {{\n\
             \x20               if let Some(x) = rx.recv() {{ trace(\"got\", v = x); }}\n\
             \x20           }}\n        }}\n    }}\n}}\n\
             system Top {{\n",
            self.period
        );
        for (i, (rate, tries, m, k)) in self.senders.iter().enumerate() {
            text += &format!(
                "    inst s{i}: Src<ID = {i}, R = {rate}, T = {tries}, M = {m}, K = {k}> on c;\n"
            );
        }
        for (j, (q, m, k)) in self.receivers.iter().enumerate() {
            text += &format!("    inst r{j}: Dst<Q = {q}, M = {m}, K = {k}> on c;\n");
        }
        for l in &self.links {
            text += &format!(
                "    connect s{}.tx -> r{}.rx latency {} capacity {};\n",
                l.from, l.to, l.latency, l.capacity
            );
        }
        text + "}\n"
    }

    /// The trace lines the contract implies: per edge, receivers' records
    /// (`top.r<j>`) before senders' (`top.s<i>`), by path, though senders
    /// tick first.
    fn model(&self) -> Vec<String> {
        // Per link: items (arrival edge, send order, value) not yet
        // received, and items sent and received so far.
        let mut queues: Vec<Vec<(u64, u64, u64)>> = vec![Vec::new(); self.links.len()];
        let (mut sent, mut received) = (vec![0u64; self.links.len()], vec![0u64; self.links.len()]);
        let mut counts = vec![0u64; self.senders.len()];
        let mut order = 0u64;
        let mut lines = Vec::new();
        for n in 0..self.edges {
            let t = n * self.period;
            // In flight before the edge, per link.
            let before: Vec<u64> = (0..self.links.len())
                .map(|c| sent[c] - received[c])
                .collect();
            let mut sender_lines = Vec::new();
            for (i, &(rate, tries, m, k)) in self.senders.iter().enumerate() {
                let outs: Vec<usize> = (0..self.links.len())
                    .filter(|&c| self.links[c].from == i)
                    .collect();
                let mut this_tick = 0;
                for _ in 0..tries {
                    let room = outs
                        .iter()
                        .all(|&c| before[c] + this_tick < self.links[c].capacity);
                    if n % m < k && this_tick < rate && room {
                        let v = i as u64 * 100_000 + counts[i];
                        for &c in &outs {
                            queues[c].push((n + self.links[c].latency, order, v));
                            sent[c] += 1;
                        }
                        order += 1;
                        counts[i] += 1;
                        this_tick += 1;
                        sender_lines.push(format!("{t}ps c {n} T top.s{i} sent v={v}"));
                    }
                }
            }
            for (j, &(q, m, k)) in self.receivers.iter().enumerate() {
                if n % m >= k {
                    continue;
                }
                for _ in 0..q {
                    // The oldest due item: arrival edge, then link
                    // declaration order, then send order.
                    let next = (0..self.links.len())
                        .filter(|&c| self.links[c].to == j)
                        .flat_map(|c| {
                            queues[c]
                                .iter()
                                .enumerate()
                                .map(move |(p, &(a, o, _))| (a, c, o, p))
                        })
                        .filter(|&(a, ..)| a <= n)
                        .min();
                    if let Some((_, c, _, p)) = next {
                        let (_, _, v) = queues[c].remove(p);
                        received[c] += 1;
                        lines.push(format!("{t}ps c {n} T top.r{j} got v={v}"));
                    }
                }
            }
            lines.append(&mut sender_lines);
            for c in 0..self.links.len() {
                assert!(
                    sent[c] - received[c] <= self.links[c].capacity,
                    "the model overfilled a channel: {self:?}"
                );
            }
        }
        lines
    }
}

#[test]
fn random_channel_timelines_match_the_contract_model() {
    let cases = env_u64("CHRONON_CONTRACT_CASES", 32);
    let seed = env_u64("CHRONON_CONTRACT_SEED", 0x5eed_c0de);
    let mut refused = 0;
    for case in 0..cases {
        let case_seed = seed.wrapping_add(case) ^ 0xc4a2;
        let config = Channels::random(&mut Rng::new(case_seed));
        let expected = config.model();
        // Every instant at or before the last edge's time.
        let until = (config.edges - 1) * config.period;
        assert_matches_model(
            &format!("channels{case}"),
            case,
            case_seed,
            &config,
            &config.design(),
            until,
            &expected,
        );
        // Some sender was held back by credit or rate somewhere.
        let offered: u64 = config
            .senders
            .iter()
            .map(|&(_, tries, m, k)| (0..config.edges).filter(|n| n % m < k).count() as u64 * tries)
            .sum();
        refused += usize::from(
            (expected.iter().filter(|l| l.contains(" sent ")).count() as u64) < offered,
        );
    }
    assert!(
        refused as u64 * 2 > cases,
        "sends were refused in only {refused} of {cases} cases"
    );
}
