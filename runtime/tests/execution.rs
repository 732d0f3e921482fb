//! Execution semantics: registers, stage registers, channels (credits, fan-in,
//! fan-out, zero latency), faults, traces, counters, native ticks, and running,
//! resuming, finishing and draining (contract §2, §3, §4, §6, §7).

use chronon_runtime::ffi::{CHRONON_TRUE, chronon_count, chronon_recv, chronon_send};
use chronon_runtime::{
    BuildError, Clock, DesignBuilder, DomainId, Drain, FaultKind, FifoSpec, MemorySink, NativeTick,
    OwnedRecord, Picos, ReadPort, RunLimit, Simulation, Stop, TickCtx, TraceRecord, TraceSink,
};
use std::cell::RefCell;
use std::rc::Rc;

fn ghz1() -> Clock {
    Clock::new(Picos::from_integer(1000), Picos::from_integer(0)).expect("clock")
}

fn mhz(f: i128, phase: i128) -> Clock {
    Clock::from_frequency_hz(
        Picos::from_integer(f * 1_000_000),
        Picos::from_integer(phase),
    )
    .expect("clock")
}

type Log = Rc<RefCell<Vec<(String, u64, u64)>>>;

fn push(log: &Log, what: &str, cycle: u64, value: u64) {
    log.borrow_mut().push((what.to_string(), cycle, value));
}

fn entries(log: &Log, what: &str) -> Vec<(u64, u64)> {
    log.borrow()
        .iter()
        .filter(|e| e.0 == what)
        .map(|e| (e.1, e.2))
        .collect()
}

/// A sink shared with the test, so records can be read while the simulation owns it.
#[derive(Clone, Default)]
struct SharedSink(Rc<RefCell<MemorySink>>);

impl TraceSink for SharedSink {
    fn record(&mut self, record: &TraceRecord<'_>) {
        self.0.borrow_mut().record(record);
    }
}

impl SharedSink {
    fn records(&self) -> Vec<OwnedRecord> {
        self.0.borrow().records.clone()
    }
}

#[test]
fn registers_read_before_the_edge_and_last_write_wins() {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let u = b.unit("top.u", clk, &[5, 0]);
    let log: Log = Rc::default();
    let l = log.clone();
    b.set_tick(u, move |ctx: &mut TickCtx<'_>| {
        let before = ctx.reg(0);
        ctx.set_reg(0, before + 1);
        push(&l, "after first write", ctx.cycle(), ctx.reg(0));
        ctx.set_reg(0, before + 10);
        ctx.set_reg(1, ctx.reg(1) + 1);
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    sim.run(RunLimit::Edges {
        domain: clk,
        count: 3,
    });
    assert_eq!(
        entries(&log, "after first write"),
        vec![(0, 5), (1, 15), (2, 25)]
    );
    assert_eq!(sim.regs(u), &[35, 3]);
}

#[test]
fn stage_registers_ghost_entries_retain_and_double_write() {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let u = b.unit("top.pipe", clk, &[]);
    let s = b.stage(u, "stage", 2, 1);
    let log: Log = Rc::default();
    let l = log.clone();
    b.set_tick(u, move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        for p in 0..2 {
            if ctx.stage_valid(s, p) {
                push(&l, &format!("valid{p}"), c, ctx.stage_read(s, p)[0]);
            }
        }
        // Pipe 0: written at 0 only (ghost entry must vanish at 2).
        if c == 0 {
            assert!(ctx.stage_write(s, 0, &[100]));
            // Reads still see the value from before the edge.
            assert!(!ctx.stage_valid(s, 0));
        }
        // Pipe 1: written at 0, retained at 1 and 2.
        if c == 0 {
            assert!(ctx.stage_write(s, 1, &[200]));
        }
        if c == 1 || c == 2 {
            assert!(ctx.stage_retain(s, 1));
        }
        if c == 5 {
            assert!(ctx.stage_write(s, 0, &[1]));
            assert!(!ctx.stage_retain(s, 0), "second touch of a pipe is refused");
        }
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    let stop = sim.run(RunLimit::Edges {
        domain: clk,
        count: 10,
    });
    assert_eq!(entries(&log, "valid0"), vec![(1, 100)]);
    assert_eq!(entries(&log, "valid1"), vec![(1, 200), (2, 200), (3, 200)]);
    let Stop::Fault(fault) = stop else {
        panic!("expected a fault, got {stop:?}");
    };
    assert_eq!(fault.kind, FaultKind::StageWrittenTwice { pipe: 0 });
    assert_eq!(
        (fault.unit.as_str(), fault.construct.as_str()),
        ("top.pipe", "stage")
    );
    assert_eq!((fault.domain.as_str(), fault.cycle), ("clk", 5));
    assert_eq!(fault.time.picos(), Ok(Picos::from_integer(5000)));
    assert_eq!(fault.code(), "runtime::stage_written_twice");
    assert_eq!(
        sim.edges_done(clk),
        6,
        "the faulting instant completes, none after"
    );
    // The first write of the faulting tick stands and was committed.
    sim.run(RunLimit::Edges {
        domain: clk,
        count: 7,
    });
    assert_eq!(entries(&log, "valid0").last(), Some(&(6, 1)));
}

/// Sender/receiver over L=1, C=1 with every unit order: credits return at n+1.
#[test]
fn credit_returns_one_edge_after_recv() {
    for (capacity, sender_path, receiver_path, expected_sends) in [
        (1, "top.a", "top.b", vec![0, 2, 4, 6, 8]),
        (1, "top.b", "top.a", vec![0, 2, 4, 6, 8]),
        (2, "top.a", "top.b", vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
        (2, "top.b", "top.a", vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ] {
        let mut b = DesignBuilder::new();
        let clk = b.domain("clk", ghz1());
        let s = b.unit(sender_path, clk, &[]);
        let r = b.unit(receiver_path, clk, &[]);
        let out = b.output(s, "tx", 1, 1);
        let inp = b.input(r, "rx", 1);
        b.connect(out, inp, 1, capacity);
        let log: Log = Rc::default();
        let (ls, lr) = (log.clone(), log.clone());
        b.set_tick(s, move |ctx: &mut TickCtx<'_>| {
            if ctx.try_send(out, &[ctx.cycle()]) {
                push(&ls, "send", ctx.cycle(), 0);
            }
        })
        .expect("unit");
        b.set_tick(r, move |ctx: &mut TickCtx<'_>| {
            if let Some(v) = ctx.recv_word(inp) {
                push(&lr, "recv", ctx.cycle(), v);
            }
        })
        .expect("unit");
        let mut sim = b.build().expect("design");
        sim.run(RunLimit::Edges {
            domain: clk,
            count: 10,
        });
        let sends: Vec<u64> = entries(&log, "send").iter().map(|e| e.0).collect();
        assert_eq!(
            sends, expected_sends,
            "capacity {capacity}, sender {sender_path}"
        );
        let recvs = entries(&log, "recv");
        assert!(
            recvs.iter().all(|&(cycle, sent)| cycle == sent + 1),
            "latency 1: {recvs:?}"
        );
    }
}

#[test]
fn fan_in_merges_by_arrival_then_declaration_then_send_order() {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let slow = b.unit("top.slow", clk, &[]);
    let fast = b.unit("top.fast", clk, &[]);
    let sink = b.unit("top.sink", clk, &[]);
    let slow_out = b.output(slow, "tx", 1, 1);
    let fast_out = b.output(fast, "tx", 1, 2);
    let inp = b.input(sink, "rx", 1);
    // Declared first: latency 2. Declared second: latency 1, two items per edge.
    b.connect(slow_out, inp, 2, 8);
    b.connect(fast_out, inp, 1, 8);
    b.set_tick(slow, move |ctx: &mut TickCtx<'_>| {
        assert!(ctx.send(slow_out, &[1000 + ctx.cycle()]));
    })
    .expect("unit");
    b.set_tick(fast, move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        assert!(ctx.send(fast_out, &[2000 + c * 10]));
        assert!(ctx.send(fast_out, &[2000 + c * 10 + 1]));
        assert!(!ctx.can_send(fast_out), "rate 2 reached");
    })
    .expect("unit");
    let log: Log = Rc::default();
    let l = log.clone();
    b.set_tick(sink, move |ctx: &mut TickCtx<'_>| {
        let peeked = ctx.peek(inp).map(|i| i[0]);
        let mut first = true;
        while let Some(v) = ctx.recv_word(inp) {
            if first {
                assert_eq!(peeked, Some(v), "peek shows the next recv");
                first = false;
            }
            push(&l, "recv", ctx.cycle(), v);
        }
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    assert_eq!(
        sim.run(RunLimit::Edges {
            domain: clk,
            count: 5
        }),
        Stop::LimitReached
    );
    let mut expected = Vec::new();
    for n in 1..5u64 {
        if n >= 2 {
            expected.push((n, 1000 + n - 2));
        }
        expected.push((n, 2000 + (n - 1) * 10));
        expected.push((n, 2000 + (n - 1) * 10 + 1));
    }
    assert_eq!(entries(&log, "recv"), expected);
}

#[test]
fn fan_out_is_all_or_none() {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let src = b.unit("top.src", clk, &[]);
    let a = b.unit("top.a", clk, &[]);
    let z = b.unit("top.z", clk, &[]);
    let out = b.output(src, "tx", 2, 1);
    let ia = b.input(a, "rx", 2);
    let iz = b.input(z, "rx", 2);
    b.connect(out, ia, 1, 1);
    b.connect(out, iz, 3, 4);
    let log: Log = Rc::default();
    let l = log.clone();
    b.set_tick(src, move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        let can = ctx.can_send(out);
        assert_eq!(ctx.try_send(out, &[c, c * 3]), can);
        if can {
            push(&l, "sent", c, c);
        }
    })
    .expect("unit");
    for (unit, port, name, every) in [(a, ia, "a", 3u64), (z, iz, "z", 1)] {
        let l = log.clone();
        b.set_tick(unit, move |ctx: &mut TickCtx<'_>| {
            let mut item = [0, 0];
            if ctx.cycle() % every == 0 && ctx.recv(port, &mut item) {
                assert_eq!(item[1], item[0] * 3, "items arrive whole");
                push(&l, name, ctx.cycle(), item[0]);
            }
        })
        .expect("unit");
    }
    let mut sim = b.build().expect("design");
    sim.run(RunLimit::Edges {
        domain: clk,
        count: 40,
    });
    let sent: Vec<u64> = entries(&log, "sent").iter().map(|e| e.1).collect();
    let got_a: Vec<u64> = entries(&log, "a").iter().map(|e| e.1).collect();
    let got_z: Vec<u64> = entries(&log, "z").iter().map(|e| e.1).collect();
    assert!(
        sent.len() > 5 && sent.len() < 40,
        "the slow reader throttles: {sent:?}"
    );
    assert_eq!(got_a, sent[..got_a.len()]);
    assert_eq!(got_z, sent[..got_z.len()]);
    assert!(sent.len() - got_a.len() <= 1 && sent.len() - got_z.len() <= 4);
}

#[test]
fn zero_latency_senders_tick_first_and_traces_stay_in_path_order() {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    // Dataflow z -> a -> m, the reverse of path order a < m < z.
    let z = b.unit("top.z", clk, &[]);
    let a = b.unit("top.a", clk, &[]);
    let m = b.unit("top.m", clk, &[]);
    let other = b.unit("top.b", clk, &[]);
    let z_out = b.output(z, "tx", 1, 1);
    let a_in = b.input(a, "rx", 1);
    let a_out = b.output(a, "tx", 1, 1);
    let m_in = b.input(m, "rx", 1);
    b.connect(z_out, a_in, 0, 1);
    b.connect(a_out, m_in, 0, 1);
    b.set_tick(z, move |ctx: &mut TickCtx<'_>| {
        ctx.send(z_out, &[ctx.cycle()]);
        ctx.trace(3, &[ctx.cycle()]);
    })
    .expect("unit");
    b.set_tick(a, move |ctx: &mut TickCtx<'_>| {
        let v = ctx.recv_word(a_in).expect("zero latency: same edge");
        assert_eq!(v, ctx.cycle());
        ctx.send(a_out, &[v]);
        ctx.trace(1, &[v]);
    })
    .expect("unit");
    b.set_tick(m, move |ctx: &mut TickCtx<'_>| {
        let v = ctx.recv_word(m_in).expect("zero latency: same edge");
        assert_eq!(v, ctx.cycle());
        ctx.trace(2, &[v]);
        ctx.trace(4, &[v, v]);
    })
    .expect("unit");
    b.set_tick(other, |ctx: &mut TickCtx<'_>| ctx.trace(9, &[]))
        .expect("unit");
    let mut sim = b.build().expect("design");
    // Clusters in order of their first path (top.a < top.b); senders first inside.
    assert_eq!(sim.evaluation_order(clk), vec![z, a, m, other]);
    assert_eq!(sim.clusters().len(), 2);
    assert_eq!(sim.clusters()[0].units, vec![z, a, m]);
    assert_eq!(sim.clusters()[1].units, vec![other]);
    let sink = SharedSink::default();
    sim.set_trace_sink(Box::new(sink.clone()));
    sim.run(RunLimit::Edges {
        domain: clk,
        count: 3,
    });
    let events: Vec<(u64, u32, u32)> = sink
        .records()
        .iter()
        .map(|r| (r.cycle, r.unit, r.event))
        .collect();
    let mut expected = Vec::new();
    for c in 0..3 {
        // Path order: top.a, top.b, top.m (program order 2 then 4), top.z.
        expected.extend([
            (c, a.0, 1),
            (c, other.0, 9),
            (c, m.0, 2),
            (c, m.0, 4),
            (c, z.0, 3),
        ]);
    }
    assert_eq!(events, expected);
}

/// The zero-latency design above, with a cluster's units behind one group
/// tick: per unit, its register counts edges, a counter counts edges and the
/// traces say who it is; `group` selects the group tick's units.
fn grouped_design(
    group: Option<&[usize]>,
) -> Result<(Simulation, [chronon_runtime::UnitId; 4]), BuildError> {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let z = b.unit("top.z", clk, &[0]);
    let a = b.unit("top.a", clk, &[100]);
    let m = b.unit("top.m", clk, &[200]);
    let other = b.unit("top.b", clk, &[300]);
    let units = [z, a, m, other];
    for u in units {
        b.counter(u, "edges").expect("counter");
    }
    let z_out = b.output(z, "tx", 1, 1);
    let a_in = b.input(a, "rx", 1);
    let a_out = b.output(a, "tx", 1, 1);
    let m_in = b.input(m, "rx", 1);
    b.connect(z_out, a_in, 0, 1);
    b.connect(a_out, m_in, 0, 1);
    let zf = move |ctx: &mut TickCtx<'_>| {
        ctx.send(z_out, &[ctx.cycle()]);
        ctx.trace(3, &[ctx.cycle()]);
    };
    let af = move |ctx: &mut TickCtx<'_>| {
        let v = ctx.recv_word(a_in).expect("zero latency: same edge");
        ctx.send(a_out, &[v]);
        ctx.trace(1, &[v]);
    };
    let mf = move |ctx: &mut TickCtx<'_>| {
        let v = ctx.recv_word(m_in).expect("zero latency: same edge");
        ctx.trace(2, &[v]);
        if v == 2 {
            ctx.finish();
        }
    };
    let of = |ctx: &mut TickCtx<'_>| ctx.trace(9, &[]);
    let common = |ctx: &mut TickCtx<'_>| {
        ctx.set_reg(0, ctx.reg(0) + 1);
        ctx.count(0, 1);
    };
    type Body = Box<dyn Fn(&mut TickCtx<'_>)>;
    let bodies: Vec<Body> = vec![Box::new(zf), Box::new(af), Box::new(mf), Box::new(of)];
    let bodies = Rc::new(bodies);
    let grouped = group.unwrap_or(&[]);
    for (i, &u) in units.iter().enumerate() {
        if !grouped.contains(&i) {
            let bodies = bodies.clone();
            b.set_tick(u, move |ctx: &mut TickCtx<'_>| {
                bodies[i](ctx);
                common(ctx);
            })
            .expect("unit");
        }
    }
    if let Some(group) = group {
        let members: Vec<_> = group.iter().map(|&i| units[i]).collect();
        let group = group.to_vec();
        b.set_group_tick(&members, move |ctx: &mut TickCtx<'_>| {
            assert_eq!(ctx.group_len(), group.len());
            for (k, &i) in group.iter().enumerate() {
                assert!(ctx.enter(k));
                bodies[i](ctx);
                common(ctx);
            }
            assert!(!ctx.enter(group.len()));
        })?;
    }
    Ok((b.build()?, units))
}

#[test]
fn a_group_tick_runs_its_units_like_their_own_ticks() {
    let run = |group: Option<&[usize]>| {
        let (mut sim, units) = grouped_design(group).expect("design");
        let sink = SharedSink::default();
        sim.set_trace_sink(Box::new(sink.clone()));
        let stop = sim.run(RunLimit::Unbounded);
        let state: Vec<_> = units
            .iter()
            .map(|&u| (sim.regs(u).to_vec(), sim.counters(u).to_vec()))
            .collect();
        (stop, sink.records(), state, sim.instants_done())
    };
    let reference = run(None);
    assert_eq!(reference.0, Stop::Finished);
    assert_eq!(reference.3, 3);
    assert_eq!(reference.2[1], (vec![103], vec![3]));
    // The cluster z -> a -> m as one group, and the whole domain as one group.
    assert_eq!(run(Some(&[0, 1, 2])), reference);
    assert_eq!(run(Some(&[0, 1, 2, 3])), reference);
    // A group may span clusters: the end of one and the start of the next.
    assert_eq!(run(Some(&[2, 3])), reference);

    // The order a builder reports before building is the built one.
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let y = b.unit("top.y", clk, &[]);
    let x = b.unit("top.x", clk, &[]);
    let (yo, xi) = (b.output(y, "o", 1, 1), b.input(x, "i", 1));
    b.connect(yo, xi, 0, 1);
    let w = b.unit("top.w", clk, &[]);
    let order = b.evaluation_order().expect("order");
    for u in [x, y, w] {
        b.set_tick(u, |_: &mut TickCtx<'_>| {}).expect("unit");
    }
    let sim = b.build().expect("design");
    assert_eq!(order, sim.clusters());
    assert_eq!(order[0].units, vec![w]);
    assert_eq!(order[1].units, vec![y, x]);
}

/// A group tick that offers a native function: the runtime calls the
/// function (never `tick`), which acts for each unit through the entry points.
#[test]
fn a_native_group_function_replaces_the_tick() {
    use chronon_runtime::ffi::chronon_enter;
    use chronon_runtime::{NativeGroup, Tick};
    use std::ffi::c_void;

    unsafe extern "C" fn group(ctx: *mut c_void, data: *mut c_void) -> u32 {
        // SAFETY: the runtime passes the live context; `data` is the
        // tick's delta, alive while it is.
        let delta = unsafe { *data.cast::<u64>() };
        for k in 0..2 {
            // SAFETY: as above.
            unsafe {
                assert_eq!(chronon_enter(ctx, k), 0);
                chronon_count(ctx, 0, delta + u64::from(k));
            }
        }
        // SAFETY: as above; unit 2 does not exist.
        assert_ne!(unsafe { chronon_enter(ctx, 2) }, 0);
        0
    }
    struct Native(Box<u64>);
    impl Tick for Native {
        fn tick(&mut self, _: &mut TickCtx<'_>) {
            panic!("the runtime calls the native function instead");
        }
        fn native(&self) -> Option<NativeGroup> {
            let data = (&*self.0 as *const u64).cast_mut().cast();
            // SAFETY: `group` only counts through the entry points and reads
            // `data`, which lives in `self`.
            Some(unsafe { NativeGroup::new(group, data) })
        }
    }
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let units = [b.unit("top.a", clk, &[]), b.unit("top.b", clk, &[])];
    for u in units {
        b.counter(u, "n").expect("counter");
    }
    b.set_group_tick(&units, Native(Box::new(10)))
        .expect("units");
    let mut sim = b.build().expect("design");
    sim.run(RunLimit::Edges {
        domain: clk,
        count: 3,
    });
    assert_eq!(sim.counters(units[0]), &[30]);
    assert_eq!(sim.counters(units[1]), &[33]);
}

#[test]
fn group_ticks_must_be_consecutive_units_in_evaluation_order() {
    // Evaluation order: z, a, m (one cluster), then b.
    for group in [&[1usize, 0, 2][..], &[0, 2], &[0, 1, 3], &[]] {
        let err = grouped_design(Some(group)).err().expect("rejected");
        assert_eq!(err.code(), "runtime::group_tick", "{group:?}: {err}");
    }
    // A unit with its own tick and a group tick.
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let u = b.unit("top.u", clk, &[]);
    b.set_tick(u, |_: &mut TickCtx<'_>| {}).expect("unit");
    b.set_group_tick(&[u], |_: &mut TickCtx<'_>| {})
        .expect("known unit");
    let err = b.build().err().expect("rejected");
    assert_eq!(err.code(), "runtime::group_tick");
    assert!(err.to_string().contains("own tick"), "{err}");
    // A unit in two groups.
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let u = b.unit("top.u", clk, &[]);
    b.set_group_tick(&[u], |_: &mut TickCtx<'_>| {})
        .expect("known unit");
    b.set_group_tick(&[u], |_: &mut TickCtx<'_>| {})
        .expect("known unit");
    let err = b.build().err().expect("rejected");
    assert!(err.to_string().contains("two groups"), "{err}");
}

#[test]
fn build_errors_name_the_problem() {
    // A zero-latency cycle.
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let x = b.unit("top.x", clk, &[]);
    let y = b.unit("top.y", clk, &[]);
    let (xo, xi) = (b.output(x, "o", 1, 1), b.input(x, "i", 1));
    let (yo, yi) = (b.output(y, "o", 1, 1), b.input(y, "i", 1));
    b.connect(xo, yi, 0, 1);
    b.connect(yo, xi, 0, 1);
    b.set_tick(x, |_: &mut TickCtx<'_>| {}).expect("unit");
    b.set_tick(y, |_: &mut TickCtx<'_>| {}).expect("unit");
    let err = b.build().err().expect("a cycle is an error");
    assert_eq!(err.code(), "runtime::zero_latency_cycle");
    let BuildError::ZeroLatencyCycle(cycle) = &err else {
        panic!("{err}")
    };
    assert_eq!(cycle.len(), 3);
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&"top.x".to_string()) && cycle.contains(&"top.y".to_string()));

    // A connection across domains, and invalid FIFOs.
    let cases: Vec<(&str, Declare)> = vec![
        (
            "runtime::cross_domain_connection",
            Box::new(|b, [p, q]| {
                let o = b.output(p, "o", 1, 1);
                let i = b.input(q, "i", 1);
                b.connect(o, i, 1, 1);
            }),
        ),
        (
            "runtime::invalid_construct",
            Box::new(|b, [p, q]| {
                b.fifo(fifo_spec(p, q, 3, 2));
            }),
        ),
        (
            "runtime::invalid_construct",
            Box::new(|b, [p, q]| {
                b.fifo(fifo_spec(p, q, 4, 1));
            }),
        ),
        (
            "runtime::invalid_construct",
            Box::new(|b, [p, q]| {
                b.fifo(fifo_spec(p, q, 1 << 31, 2));
            }),
        ),
        (
            "runtime::invalid_construct",
            Box::new(|b, [p, q]| {
                b.fifo(fifo_spec(p, q, 4, 65));
            }),
        ),
        (
            "runtime::invalid_construct",
            Box::new(|b, [p, _]| {
                let o = b.output(p, "o", 1, 1);
                let i = b.input(p, "i", 1);
                b.connect(o, i, 1, 0);
            }),
        ),
        (
            "runtime::duplicate_path",
            Box::new(|b, [p, _]| {
                let d = DomainId(0);
                let dup = b.unit("top.p", d, &[]);
                b.set_tick(dup, |_: &mut TickCtx<'_>| {}).expect("unit");
                let _ = p;
            }),
        ),
    ];
    for (code, declare) in cases {
        let mut b = DesignBuilder::new();
        let d0 = b.domain("fast", mhz(1326, 0));
        let d1 = b.domain("slow", mhz(914, 137));
        let p = b.unit("top.p", d0, &[]);
        let q = b.unit("top.q", d1, &[]);
        b.set_tick(p, |_: &mut TickCtx<'_>| {}).expect("unit");
        b.set_tick(q, |_: &mut TickCtx<'_>| {}).expect("unit");
        declare(&mut b, [p, q]);
        let err = b.build().err().expect("must be rejected");
        assert_eq!(err.code(), code, "{err}");
        assert!(!err.to_string().is_empty());
    }
}

/// Declares something invalid on a design with units `top.p` (fast) and `top.q` (slow).
type Declare = Box<dyn Fn(&mut DesignBuilder, [chronon_runtime::UnitId; 2])>;

fn fifo_spec(
    writer: chronon_runtime::UnitId,
    reader: chronon_runtime::UnitId,
    depth: u32,
    sync: u32,
) -> FifoSpec {
    FifoSpec {
        name: "f".into(),
        writer,
        reader,
        depth,
        sync,
        width: 1,
        read_port: ReadPort::Registered,
    }
}

#[test]
fn refused_send_and_assertion_faults_stop_at_the_end_of_the_instant() {
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let slow = b.domain("slow", mhz(250, 0));
    let s = b.unit("top.src", clk, &[0]);
    let r = b.unit("top.dst", clk, &[]);
    let watcher = b.unit("top.watch", slow, &[0]);
    let out = b.output(s, "tx", 1, 1);
    let inp = b.input(r, "rx", 1);
    b.connect(out, inp, 1, 1);
    let check = b.assertion(watcher, "watch count below 100");
    b.set_tick(s, move |ctx: &mut TickCtx<'_>| {
        ctx.send(out, &[1]);
        // Written in the faulting tick too: the instant completes.
        ctx.set_reg(0, ctx.cycle() + 1);
    })
    .expect("unit");
    b.set_tick(r, |_: &mut TickCtx<'_>| {}).expect("unit");
    b.set_tick(watcher, move |ctx: &mut TickCtx<'_>| {
        ctx.set_reg(0, ctx.reg(0) + 1);
        if ctx.cycle() == 100 {
            ctx.assertion_failed(check);
        }
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    let Stop::Fault(fault) = sim.run(RunLimit::Edges {
        domain: clk,
        count: 10,
    }) else {
        panic!("expected a refused send");
    };
    assert_eq!(fault.kind, FaultKind::SendRefused);
    assert_eq!(
        (
            fault.unit.as_str(),
            fault.construct.as_str(),
            fault.domain.as_str(),
            fault.cycle
        ),
        ("top.src", "tx", "clk", 1)
    );
    assert_eq!(fault.time.picos(), Ok(Picos::from_integer(1000)));
    assert!(
        fault
            .to_string()
            .contains("send refused on port `tx` in unit `top.src`")
    );
    assert_eq!(sim.regs(s), &[2], "the faulting instant committed");
    assert_eq!(sim.edges_done(clk), 2);
    assert_eq!(sim.edges_done(slow), 1, "the 4 ns edge was not processed");

    // An assertion in another domain, with the exact time.
    let mut b = DesignBuilder::new();
    let slow = b.domain("slow", mhz(914, 137));
    let watcher = b.unit("top.watch", slow, &[]);
    let check = b.assertion(watcher, "must not reach 100");
    b.set_tick(watcher, move |ctx: &mut TickCtx<'_>| {
        if ctx.cycle() == 100 {
            ctx.assertion_failed(check);
        }
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    let Stop::Fault(fault) = sim.run(RunLimit::Unbounded) else {
        panic!("expected an assertion");
    };
    assert_eq!(fault.kind, FaultKind::Assertion);
    assert_eq!(fault.construct, "must not reach 100");
    assert_eq!(fault.cycle, 100);
    assert_eq!(fault.time.picos(), mhz(914, 137).edge_time(100));
}

/// A two-domain design with a channel, a FIFO, counters and traces; runs the
/// producer for `produce` cycles of the fast domain.
fn traffic_design(produce: u64) -> (Simulation, [DomainId; 2], [chronon_runtime::UnitId; 3]) {
    let mut b = DesignBuilder::new();
    let fast = b.domain("fast", mhz(1326, 0));
    let slow = b.domain("slow", mhz(914, 137));
    let p = b.unit("top.producer", fast, &[0]);
    let q = b.unit("top.relay", fast, &[0]);
    let c = b.unit("top.consumer", slow, &[0, 0]);
    let out = b.output(p, "tx", 1, 1);
    let inp = b.input(q, "rx", 1);
    b.connect(out, inp, 2, 3);
    let fifo = b.fifo(FifoSpec {
        name: "top.cdc".into(),
        writer: q,
        reader: c,
        depth: 4,
        sync: 2,
        width: 1,
        read_port: ReadPort::Registered,
    });
    let sent = b.counter(p, "sent").expect("unit") as usize;
    let got = b.counter(c, "got").expect("unit") as usize;
    b.set_tick(p, move |ctx: &mut TickCtx<'_>| {
        let n = ctx.reg(0);
        if ctx.cycle() < produce && ctx.try_send(out, &[n]) {
            ctx.set_reg(0, n + 1);
            ctx.count(sent, 1);
            ctx.trace(1, &[n]);
        }
    })
    .expect("unit");
    b.set_tick(q, move |ctx: &mut TickCtx<'_>| {
        if ctx.fifo_can_send(fifo)
            && let Some(v) = ctx.recv_word(inp)
        {
            ctx.fifo_send(fifo, &[v * 2]);
            ctx.trace(2, &[v]);
        }
    })
    .expect("unit");
    b.set_tick(c, move |ctx: &mut TickCtx<'_>| {
        let mut item = [0];
        let mut count = ctx.reg(0);
        if ctx.fifo_take(fifo, &mut item) {
            assert_eq!(item[0], count * 2, "in order, nothing lost");
            count += 1;
            ctx.set_reg(0, count);
            ctx.set_reg(1, ctx.reg(1).wrapping_add(item[0]));
            ctx.count(got, 1);
            ctx.trace(3, &[item[0]]);
        }
        if ctx.cycle() % 3 != 0 {
            ctx.fifo_request(fifo);
        }
        if count == 5000 {
            ctx.finish();
        }
    })
    .expect("unit");
    (b.build().expect("design"), [fast, slow], [p, q, c])
}

type Snapshot = (
    Vec<OwnedRecord>,
    Vec<Vec<u64>>,
    Vec<Vec<u64>>,
    [u64; 2],
    u64,
);

fn snapshot(
    sim: &Simulation,
    sink: &SharedSink,
    d: [DomainId; 2],
    u: [chronon_runtime::UnitId; 3],
) -> Snapshot {
    (
        sink.records(),
        u.iter().map(|&x| sim.regs(x).to_vec()).collect(),
        u.iter().map(|&x| sim.counters(x).to_vec()).collect(),
        [sim.edges_done(d[0]), sim.edges_done(d[1])],
        sim.in_flight(),
    )
}

#[test]
fn resuming_is_the_same_as_one_run() {
    let ns = |n: i128| Picos::from_integer(n * 1000);
    let (mut one, d, u) = traffic_design(u64::MAX);
    let sink = SharedSink::default();
    one.set_trace_sink(Box::new(sink.clone()));
    assert_eq!(one.run(RunLimit::Time(ns(3000))), Stop::LimitReached);
    let expected = snapshot(&one, &sink, d, u);
    assert!(expected.0.len() > 3000);
    assert_eq!(one.counter_names(u[0]), ["sent"]);

    let (mut split, d2, u2) = traffic_design(u64::MAX);
    let sink2 = SharedSink::default();
    split.set_trace_sink(Box::new(sink2.clone()));
    for limit in [
        RunLimit::Time(ns(0)),
        RunLimit::Edges {
            domain: d2[0],
            count: 1,
        },
        RunLimit::Time(Picos::new(1_234_567, 7)),
        RunLimit::Edges {
            domain: d2[1],
            count: 777,
        },
        RunLimit::Edges {
            domain: d2[1],
            count: 777,
        },
        RunLimit::Edges {
            domain: d2[0],
            count: 2000,
        },
        RunLimit::Time(ns(3000)),
    ] {
        assert_eq!(split.run(limit), Stop::LimitReached);
    }
    assert_eq!(snapshot(&split, &sink2, d2, u2), expected);
}

#[test]
fn edge_and_time_limits_process_exactly_the_right_instants() {
    let (mut sim, [fast, slow], _) = traffic_design(u64::MAX);
    let fast_clock = mhz(1326, 0);
    let slow_clock = mhz(914, 137);
    for n in [1u64, 2, 17, 1000, 1001] {
        sim.run(RunLimit::Edges {
            domain: fast,
            count: n,
        });
        let t = fast_clock.edge_time(n - 1).expect("time");
        assert_eq!(sim.edges_done(fast), n);
        assert_eq!(
            sim.edges_done(slow),
            slow_clock.first_edge_after(&t).expect("edge")
        );
        assert_eq!(sim.now().picos(), Ok(t), "the last instant is edge n-1");
    }
    let t = Picos::new(10_000_001, 3);
    sim.run(RunLimit::Time(t));
    assert_eq!(
        sim.edges_done(fast),
        fast_clock.first_edge_after(&t).expect("edge")
    );
    assert_eq!(
        sim.edges_done(slow),
        slow_clock.first_edge_after(&t).expect("edge")
    );
}

#[test]
fn finish_completes_the_instant_and_drain_reports_its_limit() {
    let (mut sim, [_, slow], u) = traffic_design(u64::MAX);
    assert_eq!(sim.run(RunLimit::Unbounded), Stop::Finished);
    assert_eq!(
        sim.regs(u[2])[0],
        5000,
        "the finishing tick's writes are committed"
    );
    assert_eq!(sim.counters(u[2]), &[5000]);
    let finished_at = sim.edges_done(slow);

    // Drain: the producer stops at cycle 300; a small limit is reported.
    let (mut a, d, ua) = traffic_design(300);
    assert_eq!(
        a.run(RunLimit::Edges {
            domain: d[0],
            count: 300
        }),
        Stop::LimitReached
    );
    assert!(a.in_flight() > 0);
    let Drain::LimitReached { in_flight } = a.drain(3) else {
        panic!("three instants cannot drain it");
    };
    assert!(in_flight > 0);
    let Drain::Drained { instants } = a.drain(10_000) else {
        panic!("must drain");
    };
    assert!(instants > 0);
    assert_eq!(a.in_flight(), 0);
    assert_eq!(a.counters(ua[2]), a.counters(ua[0]), "every item delivered");
    assert!(a.counters(ua[0])[0] > 100);
    assert_eq!(a.drain(5), Drain::Drained { instants: 0 });

    let (mut b, d, ub) = traffic_design(300);
    b.run(RunLimit::Edges {
        domain: d[0],
        count: 300,
    });
    assert!(matches!(b.drain(10_000), Drain::Drained { .. }));
    assert_eq!(
        b.instants_done(),
        a.instants_done(),
        "draining in pieces is the same"
    );
    assert_eq!(b.regs(ub[2]), a.regs(ua[2]));
    assert!(finished_at > 0);
}

/// A native tick calling the `extern "C"` entry points behaves like a Rust one.
#[test]
fn native_ticks_use_the_ffi_entry_points() {
    unsafe extern "C" fn producer(
        ctx: *mut core::ffi::c_void,
        cur: *const u64,
        next: *mut u64,
    ) -> u32 {
        // SAFETY: the runtime passes one register word and a live context.
        unsafe {
            let n = *cur;
            if chronon_send(ctx, 0, &n, 0) == CHRONON_TRUE {
                *next = n + 1;
                chronon_count(ctx, 0, 1);
            }
        }
        0
    }
    unsafe extern "C" fn consumer(
        ctx: *mut core::ffi::c_void,
        cur: *const u64,
        next: *mut u64,
    ) -> u32 {
        let mut v = 0u64;
        // SAFETY: the runtime passes one register word and a live context.
        unsafe {
            if chronon_recv(ctx, 0, &mut v) == CHRONON_TRUE {
                *next = *cur + v;
            }
            if chronon_count(ctx, 7, 1) != chronon_runtime::ffi::CHRONON_BAD_ID {
                return 1;
            }
        }
        if v == 50 { 9 } else { 0 }
    }
    let mut b = DesignBuilder::new();
    let clk = b.domain("clk", ghz1());
    let p = b.unit("top.p", clk, &[0]);
    let c = b.unit("top.c", clk, &[0]);
    let out = b.output(p, "tx", 1, 1);
    let inp = b.input(c, "rx", 1);
    b.connect(out, inp, 1, 2);
    b.counter(p, "sent").expect("unit");
    // SAFETY: both functions follow the `NativeTickFn` contract.
    unsafe {
        b.set_tick(p, NativeTick::new(producer)).expect("unit");
        b.set_tick(c, NativeTick::new(consumer)).expect("unit");
    }
    let mut sim = b.build().expect("design");
    let Stop::Fault(fault) = sim.run(RunLimit::Edges {
        domain: clk,
        count: 100,
    }) else {
        panic!("status 9 stops the run");
    };
    assert_eq!(fault.kind, FaultKind::TickStatus { status: 9 });
    assert_eq!((fault.unit.as_str(), fault.cycle), ("top.c", 51));
    assert_eq!(sim.regs(c), &[(0..=50).sum::<u64>()]);
    assert_eq!(sim.counters(p), &[52]);
}
