//! FIFO operation stamps (`Simulation::set_fifo_stamps`): an observed
//! FIFO's `Write`, `Read` and `Consume` events derived at commit from the
//! sequence numbers its operations took are exactly the records the
//! operations make when they record their events themselves: same records,
//! same order among the units' traces and the other events, same
//! transaction ids and occupancies. Random two-FIFO designs (registered
//! and FWFT reads, widths 1 and 2, coincident and separate edges, writer
//! and reader in one domain, take before and after request, traces between
//! the operations, a unit passing items from one FIFO to the next, a third
//! unit writing a FIFO it is not the writer of), every kind or a random
//! subset of kinds, the sink installed at the start or mid-run.

use std::cell::RefCell;
use std::rc::Rc;

use chronon_runtime::{
    Clock, DesignBuilder, FifoEvent, FifoKinds, FifoSpec, Observation, Picos, ReadPort, RunLimit,
    Simulation, Stop, TickCtx, Timestamp, TraceRecord, TraceSink,
};

/// A small deterministic generator (no dependency).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Everything a sink was handed, in order, as text.
struct Log {
    observation: Observation,
    seen: Rc<RefCell<Vec<String>>>,
}

impl TraceSink for Log {
    fn record(&mut self, r: &TraceRecord<'_>) {
        let line = format!(
            "T d{} u{} c{} t{} e{} {:?}",
            r.domain, r.unit, r.cycle, r.time.ticks, r.event, r.args
        );
        self.seen.borrow_mut().push(line);
    }
    fn observation(&self, _fifos: usize) -> Observation {
        self.observation.clone()
    }
    fn fifo(&mut self, e: &FifoEvent) {
        self.seen.borrow_mut().push(format!("F {e:?}"));
    }
    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        let line = format!("C {domain} {cycle} {}", time.ticks);
        self.seen.borrow_mut().push(line);
    }
}

/// What one random design does.
#[derive(Debug, Clone)]
struct Shape {
    /// Periods and phases (ps) of the two domains.
    clocks: [(i128, i128); 2],
    /// Writer and reader of FIFO `a` in one domain.
    same_domain: bool,
    read_ports: [ReadPort; 2],
    widths: [usize; 2],
    depths: [u32; 2],
    /// The reader takes before it requests (registered `a`).
    take_first: bool,
    /// A third unit of the writer's domain also writes `a`.
    foreign_writer: bool,
    /// Seeds of the units' stall patterns.
    salt: u64,
}

fn shape(rng: &mut Lcg) -> Shape {
    let period = |rng: &mut Lcg| 1000 + 250 * rng.below(8) as i128;
    let clocks = [
        (period(rng), 0),
        (period(rng), [0, 0, 137, 500][rng.below(4) as usize]),
    ];
    let port = |rng: &mut Lcg| {
        if rng.below(2) == 0 {
            ReadPort::Registered
        } else {
            ReadPort::Fwft
        }
    };
    Shape {
        clocks,
        same_domain: rng.below(5) == 0,
        read_ports: [port(rng), port(rng)],
        widths: [1 + rng.below(2) as usize, 1 + rng.below(2) as usize],
        depths: [2 << rng.below(3), 2 << rng.below(2)],
        take_first: rng.below(2) == 0,
        foreign_writer: rng.below(3) == 0,
        salt: rng.next(),
    }
}

/// Reads one item from `fifo` the way its port allows, tracing around it.
fn read(
    ctx: &mut TickCtx<'_>,
    fifo: chronon_runtime::FifoId,
    port: ReadPort,
    take_first: bool,
    out: &mut [u64],
) -> bool {
    match port {
        ReadPort::Fwft => {
            let got = ctx.fifo_recv(fifo, out);
            ctx.trace(2, &[u64::from(got), out[0]]);
            got
        }
        ReadPort::Registered => {
            let mut got = false;
            if take_first {
                got = ctx.fifo_take(fifo, out);
                ctx.trace(2, &[u64::from(got), out[0]]);
                ctx.fifo_request(fifo);
            } else {
                ctx.fifo_request(fifo);
                ctx.trace(3, &[]);
                got |= ctx.fifo_take(fifo, out);
            }
            got
        }
    }
}

/// Builds `s`: `w` writes FIFO `a`, `m` reads `a` and writes what it got
/// to FIFO `b`, `z` reads `b`; `x` (optional) writes `a` when `w` did
/// not. Every unit stalls in a pattern of its own and traces.
fn build(s: &Shape) -> Simulation {
    let mut b = DesignBuilder::new();
    let clock = |(p, ph): (i128, i128)| {
        Clock::new(Picos::from_integer(p), Picos::from_integer(ph)).expect("clock")
    };
    let d0 = b.domain("d0", clock(s.clocks[0]));
    let d1 = b.domain("d1", clock(s.clocks[1]));
    let reader_domain = if s.same_domain { d0 } else { d1 };
    let w = b.unit("top.w", d0, &[s.salt & 0xffff]);
    let m = b.unit("top.m", reader_domain, &[s.salt >> 16 & 0xffff]);
    let z = b.unit("top.z", d0, &[s.salt >> 32 & 0xffff]);
    let x = s.foreign_writer.then(|| b.unit("top.x", d0, &[7]));
    // FIFO `k` of the shape: its name, sides and synchronizer length.
    let mut fifo = |k: usize, name: &str, (writer, reader), sync| {
        b.fifo(FifoSpec {
            name: name.into(),
            writer,
            reader,
            depth: s.depths[k],
            sync,
            width: s.widths[k],
            read_port: s.read_ports[k],
        })
    };
    let a = fifo(0, "top.a", (w, m), 2);
    let f2 = fifo(1, "top.b", (m, z), 3);
    let stall = |n: u64| (n.wrapping_mul(2654435761) >> 7) % 5 < 3;
    let (wa, wb) = (s.widths[0], s.widths[1]);
    b.set_tick(w, move |ctx: &mut TickCtx<'_>| {
        let n = ctx.reg(0);
        ctx.trace(0, &[n]);
        if stall(n) {
            let item = [n, !n];
            ctx.fifo_try_send(a, &item[..wa]);
            ctx.trace(1, &[n]);
        }
        ctx.set_reg(0, n + 1);
    })
    .expect("writer");
    let (port_a, port_b, take_first) = (s.read_ports[0], s.read_ports[1], s.take_first);
    b.set_tick(m, move |ctx: &mut TickCtx<'_>| {
        let n = ctx.reg(0);
        let mut v = [0u64; 2];
        if stall(n) && read(ctx, a, port_a, take_first, &mut v[..wa]) {
            ctx.fifo_try_send(f2, &[v[0], n][..wb]);
        }
        ctx.trace(4, &[n]);
        ctx.set_reg(0, n + 1);
    })
    .expect("middle");
    b.set_tick(z, move |ctx: &mut TickCtx<'_>| {
        let n = ctx.reg(0);
        let mut v = [0u64; 2];
        if stall(n) {
            read(ctx, f2, port_b, !take_first, &mut v[..wb]);
        }
        ctx.set_reg(0, n + 1);
    })
    .expect("last reader");
    if let Some(x) = x {
        b.set_tick(x, move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            if n.is_multiple_of(3) {
                ctx.fifo_try_send(a, &[n, n][..wa]);
            }
            ctx.set_reg(0, n + 1);
        })
        .expect("foreign writer");
    }
    b.build().expect("valid design")
}

/// Runs `s` for 600 edges of `d0` with `observation` installed after
/// `attach_at` edges, stamps on or off; returns the sink's log.
fn run(s: &Shape, observation: &Observation, stamps: bool, attach_at: u64) -> Vec<String> {
    let mut sim = build(s);
    sim.set_fifo_stamps(stamps);
    let d0 = chronon_runtime::DomainId(0);
    if attach_at > 0 {
        let stop = sim.run(RunLimit::Edges {
            domain: d0,
            count: attach_at,
        });
        assert_eq!(stop, Stop::LimitReached);
    }
    let seen = Rc::new(RefCell::new(Vec::new()));
    sim.set_trace_sink(Box::new(Log {
        observation: observation.clone(),
        seen: seen.clone(),
    }));
    let stop = sim.run(RunLimit::Edges {
        domain: d0,
        count: 600,
    });
    assert_eq!(stop, Stop::LimitReached);
    seen.borrow().clone()
}

#[test]
fn stamped_fifo_events_equal_the_recorded_ones() {
    let mut rng = Lcg(0x5eed);
    let mut kinds_seen = FifoKinds::NONE;
    for case in 0..120 {
        let s = shape(&mut rng);
        let selective = |rng: &mut Lcg| FifoKinds((rng.next() & 0x1ff) as u16);
        let observations = [
            Observation::everything(2),
            Observation {
                traces: rng.below(2) == 0,
                fifo: vec![selective(&mut rng), selective(&mut rng)],
                commits: rng.below(2) == 0,
                occupancy_watch: vec![rng.below(2) == 0, false],
            },
        ];
        let attach_at = [0, 0, 37, 211][rng.below(4) as usize];
        for observation in &observations {
            let recorded = run(&s, observation, false, attach_at);
            let stamped = run(&s, observation, true, attach_at);
            assert_eq!(
                stamped.len(),
                recorded.len(),
                "case {case}: {s:?} {observation:?}"
            );
            for (i, (a, b)) in stamped.iter().zip(&recorded).enumerate() {
                assert_eq!(a, b, "case {case}, line {i}: {s:?} {observation:?}");
            }
            for (k, kind) in chronon_runtime::FifoEventKind::ALL.iter().enumerate() {
                if recorded
                    .iter()
                    .any(|l| l.contains(&format!("kind: {kind:?},")))
                {
                    kinds_seen = FifoKinds(kinds_seen.0 | 1 << k);
                }
            }
        }
    }
    // The designs exercised every kind.
    assert_eq!(kinds_seen, FifoKinds::ALL);
}
