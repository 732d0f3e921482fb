//! A synthetic multi-clock run shared by the recorder tests, and helpers.
#![allow(dead_code)]

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use chronon_record::*;

/// One record of the run, owned.
#[derive(Clone, Debug)]
pub enum Rec {
    Trace {
        domain: u32,
        cycle: u64,
        time: Time,
        unit: u32,
        event: u32,
        args: Vec<u64>,
    },
    Fifo(FifoRecord),
    Counter(CounterRecord),
    Tick(TickRecord),
    Signal(SignalRecord),
}

impl Rec {
    pub fn time(&self) -> Time {
        match self {
            Rec::Trace { time, .. } => *time,
            Rec::Fifo(r) => r.time,
            Rec::Counter(r) => r.time,
            Rec::Tick(r) => r.time,
            Rec::Signal(r) => r.time,
        }
    }
}

pub struct Workload {
    pub schema: Schema,
    pub records: Vec<Rec>,
}

/// Domains: fast 1326 MHz, mirror 1326 MHz (always coincident with fast),
/// slow 914 MHz phase 137 ps, quad 4 GHz.
pub const PERIODS: [(u128, u64, u128); 4] = [
    (500_000, 663, 0),
    (500_000, 663, 0),
    (500_000, 457, 137),
    (250, 1, 0),
];

pub fn schema() -> Schema {
    let domain = |name: &str, (num, den, phase): (u128, u64, u128)| DomainInfo {
        name: name.to_owned(),
        period: Time::new(num, den).expect("nonzero"),
        phase: Time::from_ps(phase),
    };
    let unit = |path: &str, domain| UnitInfo {
        path: path.to_owned(),
        domain,
    };
    Schema {
        design: "demo".to_owned(),
        domains: vec![
            domain("fast", PERIODS[0]),
            domain("mirror", PERIODS[1]),
            domain("slow", PERIODS[2]),
            domain("quad", PERIODS[3]),
        ],
        // Declaration order differs from path order on purpose, and
        // `top.a-b` sorts after `top.a.c` by segments but before it as text.
        units: vec![
            unit("top.z.alu", 0),
            unit("top.a-b", 0),
            unit("top.a.c", 0),
            unit("top.a", 0),
            unit("top.m", 1),
            unit("top.mem", 2),
            unit("top.core.lsu", 2),
            unit("top.q", 3),
        ],
        events: vec![
            EventInfo {
                name: "issue".to_owned(),
                args: vec!["pc".to_owned(), "op".to_owned()],
                signed_widths: vec![],
                wide_widths: vec![],
            },
            EventInfo {
                name: "retire".to_owned(),
                args: vec!["pc".to_owned()],
                signed_widths: vec![],
                wide_widths: vec![],
            },
            EventInfo {
                name: "stall".to_owned(),
                args: vec![],
                signed_widths: vec![],
                wide_widths: vec![],
            },
        ],
        fifos: vec![FifoInfo {
            path: "top.cdc".to_owned(),
            writer_domain: 0,
            reader_domain: 2,
            depth: 4,
        }],
        counters: vec![
            CounterInfo {
                name: "fast.ops".to_owned(),
                domain: 0,
            },
            CounterInfo {
                name: "slow.occupancy".to_owned(),
                domain: 2,
            },
        ],
        signals: vec![
            SignalInfo {
                unit: 3,
                name: "count".to_owned(),
                width: 8,
                limb: 0,
            },
            SignalInfo {
                unit: 5,
                name: "valid".to_owned(),
                width: 1,
                limb: 0,
            },
            SignalInfo {
                unit: 7,
                name: "wide".to_owned(),
                width: 64,
                limb: 0,
            },
        ],
    }
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Exact edge time of `cycle` in domain `d`, computed here independently.
pub fn edge(d: usize, cycle: u64) -> Time {
    let (num, den, phase) = PERIODS[d];
    Time::new(phase * u128::from(den) + num * u128::from(cycle), den).expect("nonzero")
}

/// `instants` instants of the four domains, in time order; inside an
/// instant, domains and units are emitted in a shuffled order.
pub fn workload(instants: usize, seed: u64) -> Workload {
    let schema = schema();
    let mut rng = Rng(seed | 1);
    let mut next_cycle = [0u64; 4];
    let mut records = Vec::new();
    let mut txn = 0u64;
    // Items in the FIFO: (txn, slow edges since written).
    let mut items: Vec<(u64, u8)> = Vec::new();
    let mut occupancy = 0u32;
    let mut empty = true;
    let mut full = false;
    for _ in 0..instants {
        let t = (0..4)
            .map(|d| edge(d, next_cycle[d]))
            .min()
            .expect("four domains");
        let mut domains: Vec<usize> = (0..4).filter(|&d| edge(d, next_cycle[d]) == t).collect();
        // Shuffle the domains' emission order.
        for i in (1..domains.len()).rev() {
            domains.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for &d in &domains {
            let cycle = next_cycle[d];
            let mut units: Vec<u32> = (0..schema.units.len() as u32)
                .filter(|&u| schema.units[u as usize].domain == d as u32)
                .collect();
            for i in (1..units.len()).rev() {
                units.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut commits = Vec::new();
            for &u in &units {
                records.push(Rec::Tick(TickRecord {
                    unit: u,
                    cycle,
                    time: t,
                }));
                for _ in 0..rng.below(3) {
                    let event = rng.below(3) as u32;
                    let args = (0..schema.events[event as usize].args.len())
                        .map(|_| rng.next() >> rng.below(64))
                        .collect();
                    records.push(Rec::Trace {
                        domain: d as u32,
                        cycle,
                        time: t,
                        unit: u,
                        event,
                        args,
                    });
                }
                let fifo = |kind, unit, txn, occupancy| FifoRecord {
                    fifo: 0,
                    kind,
                    cycle,
                    time: t,
                    unit,
                    txn,
                    occupancy,
                };
                // top.a writes every third fast cycle when there is room.
                if d == 0 && u == 3 && cycle % 3 == 0 && occupancy < 4 {
                    occupancy += 1;
                    records.push(Rec::Fifo(fifo(FifoEventKind::Write, u, txn, occupancy)));
                    if occupancy == 4 {
                        full = true;
                        commits.push(Rec::Fifo(fifo(FifoEventKind::Full, u, txn, occupancy)));
                    }
                    items.push((txn, 0));
                    txn += 1;
                }
                // top.mem advances the oldest item one stage per slow edge.
                if d == 2
                    && u == 5
                    && let Some(item) = items.first_mut()
                {
                    item.1 += 1;
                    let (id, stage) = *item;
                    match stage {
                        3 => {
                            commits.push(Rec::Fifo(fifo(FifoEventKind::Visible, u, id, occupancy)))
                        }
                        4 => {
                            occupancy -= 1;
                            records.push(Rec::Fifo(fifo(FifoEventKind::Read, u, id, occupancy)));
                            commits.push(Rec::Fifo(fifo(FifoEventKind::Output, u, id, occupancy)));
                        }
                        5 => {
                            records.push(Rec::Fifo(fifo(FifoEventKind::Consume, u, id, occupancy)));
                            items.remove(0);
                        }
                        _ => {}
                    }
                    if empty && stage == 3 {
                        empty = false;
                        commits.push(Rec::Fifo(fifo(FifoEventKind::NotEmpty, u, id, occupancy)));
                    } else if !empty && stage == 5 && occupancy == 0 {
                        empty = true;
                        commits.push(Rec::Fifo(fifo(FifoEventKind::Empty, u, id, occupancy)));
                    }
                }
            }
            if d == 0 && full && occupancy < 4 {
                full = false;
                commits.push(Rec::Fifo(FifoRecord {
                    fifo: 0,
                    kind: FifoEventKind::NotFull,
                    cycle,
                    time: t,
                    unit: 3,
                    txn,
                    occupancy,
                }));
            }
            records.extend(commits);
            match d {
                0 => records.push(Rec::Counter(CounterRecord {
                    counter: 0,
                    cycle,
                    time: t,
                    value: rng.below(10),
                })),
                2 => records.push(Rec::Counter(CounterRecord {
                    counter: 1,
                    cycle,
                    time: t,
                    value: u64::from(occupancy),
                })),
                _ => {}
            }
            let signal = match d {
                0 => Some((0, cycle % 256)),
                2 => Some((1, cycle % 2)),
                3 => Some((2, rng.next())),
                _ => None,
            };
            if let Some((signal, value)) = signal {
                records.push(Rec::Signal(SignalRecord {
                    signal,
                    time: t,
                    value,
                }));
            }
            next_cycle[d] += 1;
        }
    }
    Workload { schema, records }
}

pub fn feed(rec: &mut dyn Recorder, records: &[Rec]) -> Result<(), RecordError> {
    for r in records {
        match r {
            Rec::Trace {
                domain,
                cycle,
                time,
                unit,
                event,
                args,
            } => rec.trace(&TraceRecord {
                domain: *domain,
                cycle: *cycle,
                time: *time,
                unit: *unit,
                event: *event,
                args,
            })?,
            Rec::Fifo(f) => rec.fifo(f)?,
            Rec::Counter(c) => rec.counter(c)?,
            Rec::Tick(t) => rec.tick(t)?,
            Rec::Signal(s) => rec.signal(s)?,
        }
    }
    Ok(())
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// An in-memory destination that fails after `limit` bytes.
#[derive(Clone)]
pub struct FailAfter {
    pub bytes: Arc<Mutex<Vec<u8>>>,
    pub limit: usize,
}

impl FailAfter {
    pub fn new(limit: usize) -> FailAfter {
        FailAfter {
            bytes: Arc::new(Mutex::new(Vec::new())),
            limit,
        }
    }
    pub fn contents(&self) -> Vec<u8> {
        self.bytes.lock().expect("not poisoned").clone()
    }
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut bytes = self.bytes.lock().expect("not poisoned");
        let room = self.limit.saturating_sub(bytes.len());
        if room == 0 {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "injected: device full",
            ));
        }
        let n = room.min(buf.len());
        bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl RecordOutput for FailAfter {
    fn discard_tail(&mut self, keep: u64) -> io::Result<()> {
        self.bytes
            .lock()
            .expect("not poisoned")
            .truncate(keep as usize);
        Ok(())
    }
}

/// Fails the test: `what` is missing, so `skipped` cannot run (a
/// comparison that did not run must never pass; `.ci/run` installs it).
pub fn missing_tool(what: &str, skipped: &str) -> ! {
    panic!("{what} is not installed, so {skipped} cannot run: install it as .ci/run does");
}

/// Runs a Python checker from tests/py: whether it passed, and its output;
/// the test fails when python3 or its packages are missing.
pub fn python(script: &str, args: &[&Path], modules: &str) -> (bool, String) {
    let probe = Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        _ => {
            missing_tool(&format!("python3 with `{modules}`"), script);
        }
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/py")
        .join(script);
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
