//! Run-ahead allocates nothing either: a counting global allocator watches
//! a long run of two independent domains (a channel, a stage register and a
//! same-domain CDC FIFO in one, a tick that can stop in the other) that
//! runs ahead, many edges per call, through several rounds.

use chronon_runtime::{
    Clock, DesignBuilder, FifoSpec, Picos, ReadPort, RunLimit, Stop, Tick, TickCtx,
};
use std::sync::atomic::Ordering;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{ALLOCATIONS, WATCHING};

/// A tick that promises never to stop the run.
struct Quiet<F>(F);

impl<F: FnMut(&mut TickCtx<'_>)> Tick for Quiet<F> {
    fn tick(&mut self, ctx: &mut TickCtx<'_>) {
        (self.0)(ctx)
    }
    fn can_stop(&self) -> bool {
        false
    }
}

#[test]
fn running_ahead_does_not_allocate() {
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
    let p = b.unit("top.producer", fast, &[0]);
    let q = b.unit("top.relay", fast, &[0, 0]);
    let c = b.unit("top.counter", slow, &[0]);
    let tx = b.output(p, "tx", 2, 1);
    let rx = b.input(q, "rx", 2);
    b.connect(tx, rx, 2, 4);
    let fifo = b.fifo(FifoSpec {
        name: "top.loop".into(),
        writer: q,
        reader: q,
        depth: 4,
        sync: 2,
        width: 2,
        read_port: ReadPort::Registered,
    });
    let stage = b.stage(q, "pipe", 2, 1);
    b.set_group_tick(
        &[p, q],
        Quiet(move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            if ctx.try_send(tx, &[n, !n]) {
                ctx.set_reg(0, n + 1);
            }
            ctx.enter(1);
            let mut item = [0, 0];
            if ctx.fifo_can_send(fifo) && ctx.recv(rx, &mut item) {
                ctx.fifo_try_send(fifo, &item);
            }
            if ctx.fifo_take(fifo, &mut item) {
                ctx.set_reg(0, ctx.reg(0).wrapping_add(item[0]));
            }
            ctx.fifo_request(fifo);
            if ctx.stage_valid(stage, 0) {
                ctx.set_reg(1, ctx.reg(1) ^ ctx.stage_read(stage, 0)[0]);
            }
            ctx.stage_write(stage, 0, &[ctx.cycle()]);
        }),
    )
    .expect("group");
    // Can stop (a closure), but finishes only far beyond this run.
    b.set_tick(c, |ctx: &mut TickCtx<'_>| {
        ctx.set_reg(0, ctx.reg(0) + 1);
        if ctx.cycle() == u64::MAX / 2 {
            ctx.finish();
        }
    })
    .expect("unit");
    let mut sim = b.build().expect("design");
    assert!(sim.runs_ahead());
    let warm = RunLimit::Edges {
        domain: fast,
        count: 1_000,
    };
    assert_eq!(sim.run(warm), Stop::LimitReached);
    WATCHING.with(|w| w.set(true));
    drop(std::hint::black_box(vec![1u8; 8]));
    WATCHING.with(|w| w.set(false));
    assert_eq!(
        ALLOCATIONS.swap(0, Ordering::Relaxed),
        1,
        "the counter counts"
    );
    let limit = RunLimit::Edges {
        domain: fast,
        count: 400_000,
    };
    WATCHING.with(|w| w.set(true));
    let stop = sim.run(limit);
    WATCHING.with(|w| w.set(false));
    assert_eq!(stop, Stop::LimitReached);
    assert_eq!(sim.edges_done(fast), 400_000);
    assert!(sim.regs(q)[0] > 0, "items went round the FIFO");
    assert_eq!(
        ALLOCATIONS.load(Ordering::Relaxed),
        0,
        "allocations while running ahead"
    );
}
