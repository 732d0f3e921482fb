//! The CDC FIFO latency formulas and worked examples of contract §5, pinned.

use chronon_runtime::{
    Clock, DesignBuilder, DomainId, FifoId, FifoSpec, Picos, ReadPort, RunLimit, Simulation, Stop,
    TickCtx,
};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Debug, Clone)]
struct Setup {
    writer_hz: i128,
    writer_phase: i128,
    reader_hz: i128,
    reader_phase: i128,
    same_domain: bool,
    depth: u32,
    sync: u32,
    read_port: ReadPort,
}

fn ghz(f: i128) -> i128 {
    f * 1_000_000_000
}

fn mhz(f: i128) -> i128 {
    f * 1_000_000
}

struct Bench {
    sim: Simulation,
    fifo: FifoId,
    writer: DomainId,
    reader: DomainId,
    writer_clock: Clock,
    reader_clock: Clock,
}

fn build(
    s: &Setup,
    mut writer: impl FnMut(&mut TickCtx<'_>, FifoId) + 'static,
    mut reader: impl FnMut(&mut TickCtx<'_>, FifoId) + 'static,
) -> Bench {
    let clock = |hz, phase| {
        Clock::from_frequency_hz(Picos::from_integer(hz), Picos::from_integer(phase))
            .expect("clock")
    };
    let writer_clock = clock(s.writer_hz, s.writer_phase);
    let reader_clock = if s.same_domain {
        writer_clock.clone()
    } else {
        clock(s.reader_hz, s.reader_phase)
    };
    let mut b = DesignBuilder::new();
    let wd = b.domain("wclk", writer_clock.clone());
    let rd = if s.same_domain {
        wd
    } else {
        b.domain("rclk", reader_clock.clone())
    };
    let w = b.unit("top.writer", wd, &[]);
    let r = b.unit("top.reader", rd, &[]);
    let fifo = b.fifo(FifoSpec {
        name: "top.fifo".into(),
        writer: w,
        reader: r,
        depth: s.depth,
        sync: s.sync,
        width: 1,
        read_port: s.read_port,
    });
    b.set_tick(w, move |ctx: &mut TickCtx<'_>| writer(ctx, fifo))
        .expect("unit");
    b.set_tick(r, move |ctx: &mut TickCtx<'_>| reader(ctx, fifo))
        .expect("unit");
    Bench {
        sim: b.build().expect("valid design"),
        fifo,
        writer: wd,
        reader: rd,
        writer_clock,
        reader_clock,
    }
}

type Log = Rc<RefCell<Vec<(&'static str, Picos)>>>;

fn log_at(log: &Log, what: &'static str, ctx: &TickCtx<'_>) {
    log.borrow_mut()
        .push((what, ctx.time().picos().expect("time")));
}

fn times(log: &Log, what: &str) -> Vec<Picos> {
    log.borrow()
        .iter()
        .filter(|(w, _)| *w == what)
        .map(|(_, t)| *t)
        .collect()
}

fn setups() -> Vec<Setup> {
    let mut all = Vec::new();
    for sync in [2, 3, 5] {
        for (writer_hz, reader_hz, reader_phase, same_domain) in [
            (ghz(1), ghz(1), 0, false),
            (ghz(4), ghz(4), 0, false),
            (ghz(1), mhz(914), 137, false),
            (mhz(1326), mhz(914), 500, false),
            (ghz(1), ghz(1), 0, true),
        ] {
            for read_port in [ReadPort::Registered, ReadPort::Fwft] {
                all.push(Setup {
                    writer_hz,
                    writer_phase: 0,
                    reader_hz,
                    reader_phase,
                    same_domain,
                    depth: 2,
                    sync,
                    read_port,
                });
            }
        }
    }
    all
}

/// Write at t; k = first reader edge after t: empty deasserts at k+S, the first
/// request is accepted at k+S+1 and taken at k+S+2 (FWFT: received at k+S+1).
#[test]
fn write_to_read_latency_follows_the_formula() {
    for s in setups() {
        let log: Log = Rc::default();
        let (wl, rl) = (log.clone(), log.clone());
        let mut bench = build(
            &s,
            move |ctx, f| {
                if ctx.cycle() == 0 {
                    assert!(ctx.fifo_send(f, &[42]));
                    log_at(&wl, "write", ctx);
                }
            },
            move |ctx, f| {
                let mut item = [0];
                match s.read_port {
                    ReadPort::Registered => {
                        if ctx.fifo_take(f, &mut item) {
                            assert_eq!(item, [42]);
                            log_at(&rl, "take", ctx);
                        }
                        if ctx.fifo_request(f) {
                            log_at(&rl, "request", ctx);
                        }
                    }
                    ReadPort::Fwft => {
                        if ctx.fifo_recv(f, &mut item) {
                            assert_eq!(item, [42]);
                            log_at(&rl, "recv", ctx);
                        }
                    }
                }
            },
        );
        let t = bench.writer_clock.edge_time(0).expect("time");
        let k = bench.reader_clock.first_edge_after(&t).expect("edge");
        let sync = u64::from(s.sync);
        let edge = |n: u64| bench.reader_clock.edge_time(n).expect("time");
        let reader = bench.reader;
        bench.sim.run(RunLimit::Edges {
            domain: reader,
            count: k + sync,
        });
        assert!(
            bench.sim.fifo_flags(bench.fifo).empty,
            "{s:?}: empty until edge k+S"
        );
        bench.sim.run(RunLimit::Edges {
            domain: reader,
            count: k + sync + 1,
        });
        assert!(
            !bench.sim.fifo_flags(bench.fifo).empty,
            "{s:?}: empty deasserts at edge k+S"
        );
        assert_eq!(
            bench.sim.run(RunLimit::Edges {
                domain: reader,
                count: k + sync + 10
            }),
            Stop::LimitReached
        );
        assert_eq!(times(&log, "write"), vec![t]);
        match s.read_port {
            ReadPort::Registered => {
                assert_eq!(times(&log, "request"), vec![edge(k + sync + 1)], "{s:?}");
                assert_eq!(times(&log, "take"), vec![edge(k + sync + 2)], "{s:?}");
            }
            ReadPort::Fwft => assert_eq!(times(&log, "recv"), vec![edge(k + sync + 1)], "{s:?}"),
        }
    }
}

/// Depth 2: two writes fill it; a read accepted at u, j = first writer edge after
/// u: full deasserts at j+S and the next write is accepted at j+S+1.
#[test]
fn read_to_credit_latency_follows_the_formula() {
    for s in setups() {
        let log: Log = Rc::default();
        let (wl, rl) = (log.clone(), log.clone());
        let mut bench = build(
            &s,
            move |ctx, f| {
                if ctx.fifo_try_send(f, &[ctx.cycle()]) {
                    log_at(&wl, "write", ctx);
                }
            },
            move |ctx, f| {
                if !times(&rl, "read").is_empty() {
                    return;
                }
                let mut item = [0];
                let read = match s.read_port {
                    ReadPort::Registered => ctx.fifo_request(f),
                    ReadPort::Fwft => ctx.fifo_recv(f, &mut item),
                };
                if read {
                    log_at(&rl, "read", ctx);
                }
            },
        );
        let writer = bench.writer;
        bench.sim.run(RunLimit::Edges {
            domain: writer,
            count: 1,
        });
        assert!(!bench.sim.fifo_flags(bench.fifo).full, "{s:?}");
        bench.sim.run(RunLimit::Edges {
            domain: writer,
            count: 2,
        });
        assert!(
            bench.sim.fifo_flags(bench.fifo).full,
            "{s:?}: full from the second write"
        );
        bench.sim.run(RunLimit::Time(Picos::from_integer(100_000)));
        let reads = times(&log, "read");
        assert_eq!(reads.len(), 1, "{s:?}");
        let j = bench
            .writer_clock
            .first_edge_after(&reads[0])
            .expect("edge");
        let sync = u64::from(s.sync);
        let edge = |n: u64| bench.writer_clock.edge_time(n).expect("time");
        let writes = times(&log, "write");
        assert_eq!(writes, vec![edge(0), edge(1), edge(j + sync + 1)], "{s:?}");
    }
}

/// The contract's worked examples, literally.
#[test]
fn worked_examples() {
    let ns = |n: i128| Picos::from_integer(n * 1000);
    let base = Setup {
        writer_hz: ghz(1),
        writer_phase: 0,
        reader_hz: ghz(1),
        reader_phase: 0,
        same_domain: false,
        depth: 16,
        sync: 2,
        read_port: ReadPort::Registered,
    };
    // 1 GHz, S = 2: written at 0, visible at 3, accepted at 4, taken at 5.
    let log: Log = Rc::default();
    let (wl, rl) = (log.clone(), log.clone());
    let mut bench = build(
        &base,
        move |ctx, f| {
            if ctx.cycle() == 0 && ctx.fifo_send(f, &[7]) {
                log_at(&wl, "write", ctx);
            }
        },
        move |ctx, f| {
            let mut item = [0];
            if ctx.fifo_take(f, &mut item) {
                log_at(&rl, "take", ctx);
            }
            if !ctx.fifo_empty(f) {
                log_at(&rl, "seen not empty", ctx);
            }
            if ctx.fifo_request(f) {
                log_at(&rl, "request", ctx);
            }
        },
    );
    bench.sim.run(RunLimit::Time(ns(2)));
    assert!(bench.sim.fifo_flags(bench.fifo).empty);
    bench.sim.run(RunLimit::Time(ns(3)));
    assert!(!bench.sim.fifo_flags(bench.fifo).empty, "visible at 3 ns");
    bench.sim.run(RunLimit::Time(ns(10)));
    assert_eq!(times(&log, "write"), vec![ns(0)]);
    assert_eq!(times(&log, "seen not empty"), vec![ns(4)]);
    assert_eq!(times(&log, "request"), vec![ns(4)]);
    assert_eq!(times(&log, "take"), vec![ns(5)]);

    // Depth 2: full from 1 ns; a read at 4 ns clears full at 7 ns; next write at 8 ns.
    let log: Log = Rc::default();
    let (wl, rl) = (log.clone(), log.clone());
    let mut bench = build(
        &Setup {
            depth: 2,
            ..base.clone()
        },
        move |ctx, f| {
            if ctx.fifo_try_send(f, &[1]) {
                log_at(&wl, "write", ctx);
            }
        },
        move |ctx, f| {
            if ctx.cycle() == 4 && ctx.fifo_request(f) {
                log_at(&rl, "request", ctx);
            }
        },
    );
    bench.sim.run(RunLimit::Time(ns(0)));
    assert!(!bench.sim.fifo_flags(bench.fifo).full);
    bench.sim.run(RunLimit::Time(ns(1)));
    assert!(bench.sim.fifo_flags(bench.fifo).full, "full from 1 ns");
    bench.sim.run(RunLimit::Time(ns(6)));
    assert!(bench.sim.fifo_flags(bench.fifo).full);
    bench.sim.run(RunLimit::Time(ns(7)));
    assert!(!bench.sim.fifo_flags(bench.fifo).full, "cleared at 7 ns");
    bench.sim.run(RunLimit::Time(ns(8)));
    assert_eq!(times(&log, "request"), vec![ns(4)]);
    assert_eq!(times(&log, "write"), vec![ns(0), ns(1), ns(8)]);

    // 4 GHz: written at 0, visible at 0.75 ns.
    let mut bench = build(
        &Setup {
            writer_hz: ghz(4),
            reader_hz: ghz(4),
            ..base.clone()
        },
        move |ctx, f| {
            if ctx.cycle() == 0 {
                ctx.fifo_send(f, &[1]);
            }
        },
        |_, _| {},
    );
    bench.sim.run(RunLimit::Time(Picos::from_integer(500)));
    assert!(bench.sim.fifo_flags(bench.fifo).empty);
    bench.sim.run(RunLimit::Time(Picos::from_integer(750)));
    assert!(
        !bench.sim.fifo_flags(bench.fifo).empty,
        "visible at 0.75 ns"
    );
}

/// take() earlier in the tick frees the output register for request(); a take()
/// later in the tick does not.
#[test]
fn take_before_request_follows_program_order() {
    for take_first in [true, false] {
        let log: Log = Rc::default();
        let (wl, rl) = (log.clone(), log.clone());
        let mut bench = build(
            &Setup {
                writer_hz: ghz(1),
                writer_phase: 0,
                reader_hz: ghz(1),
                reader_phase: 0,
                same_domain: false,
                depth: 4,
                sync: 2,
                read_port: ReadPort::Registered,
            },
            move |ctx, f| {
                if ctx.cycle() < 2 && ctx.fifo_send(f, &[ctx.cycle()]) {
                    log_at(&wl, "write", ctx);
                }
            },
            move |ctx, f| {
                let mut item = [0];
                if take_first && ctx.fifo_take(f, &mut item) {
                    log_at(&rl, "take", ctx);
                }
                if ctx.fifo_request(f) {
                    log_at(&rl, "request", ctx);
                }
                if !take_first && ctx.fifo_take(f, &mut item) {
                    log_at(&rl, "take", ctx);
                }
            },
        );
        bench.sim.run(RunLimit::Time(Picos::from_integer(20_000)));
        let ns = |n: i128| Picos::from_integer(n * 1000);
        if take_first {
            assert_eq!(times(&log, "request"), vec![ns(4), ns(5)]);
            assert_eq!(times(&log, "take"), vec![ns(5), ns(6)]);
        } else {
            assert_eq!(times(&log, "request"), vec![ns(4), ns(6)]);
            assert_eq!(times(&log, "take"), vec![ns(5), ns(7)]);
        }
    }
}
