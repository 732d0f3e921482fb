//! Once running, an instant allocates nothing: a counting global allocator
//! watches 100,000 instants of a two-clock design with channels (fan-out,
//! fan-in, zero latency), a CDC FIFO, a stage register, counters and tracing.

use chronon_runtime::{
    Clock, DesignBuilder, FifoSpec, Picos, ReadPort, RunLimit, Stop, TickCtx, TraceRecord,
    TraceSink,
};
use std::cell::Cell;
use std::sync::atomic::Ordering;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{ALLOCATIONS, WATCHING};

/// Counts records and sums their arguments, without allocating.
struct FoldSink {
    records: std::rc::Rc<Cell<u64>>,
    sum: u64,
}

impl TraceSink for FoldSink {
    fn record(&mut self, r: &TraceRecord<'_>) {
        self.sum = r.args.iter().fold(self.sum, |a, &b| a.wrapping_add(b));
        self.records.set(self.records.get() + 1);
    }
}

#[test]
fn running_instants_does_not_allocate() {
    let clock = |f: i128, phase: i128| {
        Clock::from_frequency_hz(
            Picos::from_integer(f * 1_000_000),
            Picos::from_integer(phase),
        )
        .expect("clock")
    };
    let mut b = DesignBuilder::new();
    let fast = b.domain("fast", clock(1326, 0));
    let slow = b.domain("slow", clock(914, 137));
    // Path order differs from evaluation order, so trace records get sorted.
    let p = b.unit("top.z_producer", fast, &[0]);
    let q = b.unit("top.a_relay", fast, &[0]);
    let m = b.unit("top.m_monitor", fast, &[0]);
    let c = b.unit("top.consumer", slow, &[0]);
    let tx = b.output(p, "tx", 2, 2);
    let q_in = b.input(q, "rx", 2);
    let m_in = b.input(m, "rx", 2);
    b.connect(tx, q_in, 0, 4);
    b.connect(tx, m_in, 3, 8);
    let fifo = b.fifo(FifoSpec {
        name: "top.cdc".into(),
        writer: q,
        reader: c,
        depth: 16,
        sync: 2,
        width: 2,
        read_port: ReadPort::Registered,
    });
    let stage = b.stage(m, "pipe", 3, 2);
    let sent = b.counter(p, "sent").expect("unit") as usize;
    b.set_tick(p, move |ctx: &mut TickCtx<'_>| {
        let n = ctx.reg(0);
        if ctx.try_send(tx, &[n, !n]) {
            ctx.set_reg(0, n + 1);
            ctx.count(sent, 1);
            ctx.trace(1, &[n]);
        }
    })
    .expect("unit");
    b.set_tick(q, move |ctx: &mut TickCtx<'_>| {
        if ctx.fifo_can_send(fifo) {
            let mut item = [0, 0];
            if ctx.recv(q_in, &mut item) {
                ctx.fifo_send(fifo, &item);
                ctx.trace(2, &item);
            }
        }
    })
    .expect("unit");
    b.set_tick(m, move |ctx: &mut TickCtx<'_>| {
        let mut item = [0, 0];
        if ctx.recv(m_in, &mut item) {
            ctx.stage_write(stage, 0, &item);
        }
        if ctx.stage_valid(stage, 0) {
            let v = [ctx.stage_read(stage, 0)[0], 1];
            ctx.stage_write(stage, 1, &v);
        }
        ctx.stage_retain(stage, 2);
        ctx.trace(3, &[ctx.cycle(), 1, 2]);
    })
    .expect("unit");
    b.set_tick(c, move |ctx: &mut TickCtx<'_>| {
        let mut item = [0, 0];
        if ctx.fifo_take(fifo, &mut item) {
            ctx.set_reg(0, ctx.reg(0) + 1);
            ctx.trace(4, &item);
        }
        ctx.fifo_request(fifo);
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    let records = std::rc::Rc::new(Cell::new(0));
    sim.set_trace_sink(Box::new(FoldSink {
        records: records.clone(),
        sum: 0,
    }));
    // Warm-up: the trace buffer reaches its working size.
    assert_eq!(
        sim.run(RunLimit::Edges {
            domain: fast,
            count: 10_000
        }),
        Stop::LimitReached
    );
    let before = sim.instants_done();
    let limit = RunLimit::Edges {
        domain: fast,
        count: 70_000,
    };
    // The counter itself works: one allocation while watching is seen.
    WATCHING.with(|w| w.set(true));
    drop(std::hint::black_box(vec![1u8; 8]));
    WATCHING.with(|w| w.set(false));
    assert_eq!(ALLOCATIONS.swap(0, Ordering::Relaxed), 1);
    WATCHING.with(|w| w.set(true));
    let stop = sim.run(limit);
    WATCHING.with(|w| w.set(false));
    assert_eq!(stop, Stop::LimitReached);
    let instants = sim.instants_done() - before;
    assert!(instants >= 100_000, "{instants} instants");
    assert!(
        sim.regs(c)[0] > 30_000,
        "traffic flowed: {}",
        sim.regs(c)[0]
    );
    assert!(records.get() > 200_000);
    assert_eq!(
        ALLOCATIONS.load(Ordering::Relaxed),
        0,
        "allocations while running"
    );
}
