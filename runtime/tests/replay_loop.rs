//! The replay loop (pattern mode, `Simulation::set_replay_loop`) against
//! checked per-instant steps in pattern mode and in merge mode: three
//! phased clocks whose edges coincide at some instants, coupled by CDC
//! FIFOs (registered and FWFT, widths 1 and 2, synchronizers of 2 and 3
//! flops, one FIFO inside a domain), a channel, a stage register and a
//! group tick, run through the same split limits; a `finish` or a fault in
//! either end domain; then a sink attached (the loop's observed form),
//! taken away again (its unobserved form), and a drain. Every stop and
//! every record must agree exactly. And the loop allocates nothing.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{ALLOCATIONS, WATCHING};

use chronon_runtime::{
    AssertId, CalendarConfig, Clock, DesignBuilder, DomainId, Drain, FaultKind, FifoId, FifoSpec,
    InPort, MemorySink, OutPort, OwnedRecord, Picos, ReadPort, RunLimit, Simulation, Stop, TickCtx,
    TraceRecord, TraceSink, UnitId,
};

fn clock(period: i128, phase: i128) -> Clock {
    Clock::new(Picos::from_integer(period), Picos::from_integer(phase)).expect("clock")
}

/// Folds the edge (cycle, time) and `v` into register 0; counts in register 1.
fn fold(ctx: &mut TickCtx<'_>, v: u64) {
    let mix = ctx
        .reg(0)
        .rotate_left(9)
        .wrapping_add(ctx.cycle())
        .wrapping_add(ctx.time().ticks as u64)
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(v);
    ctx.set_reg(0, mix);
    ctx.set_reg(1, ctx.reg(1) + 1);
}

/// How the run ends: a unit of domain `domain` (0 = `a`, 2 = `c`) does
/// `finish` or faults at its cycle `at` and every 20,000 edges after.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Never,
    Finish { domain: usize, at: u64 },
    Fault { domain: usize, at: u64 },
}

/// Which loop runs the pattern-mode instants.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Replay,
    Stepped,
    Checked,
}

/// Which design: [`design`]'s mixed one, or [`design_solo`]'s, where every
/// domain's lone instants are one `Solo` operation of the replay program.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Mixed,
    Solo,
}

impl Shape {
    /// The design's units and FIFOs (for the snapshots).
    fn counts(self) -> (u32, u32) {
        match self {
            Shape::Mixed => (5, 4),
            Shape::Solo => (6, 2),
        }
    }

    fn build(self, mode: Mode, ending: Ending) -> (Simulation, [DomainId; 3]) {
        match self {
            Shape::Mixed => design(mode, ending),
            Shape::Solo => design_solo(mode, ending),
        }
    }
}

/// `finish` or a fault where `ending` says, from a unit of `domain`
/// (`sites[0]` for domain 0, `sites[1]` for domain 2).
fn end_at(ctx: &mut TickCtx<'_>, ending: Ending, sites: [AssertId; 2], domain: usize) {
    let c = ctx.cycle();
    let due = |at: u64| c == at || c % 20_000 == 19_999;
    match ending {
        Ending::Finish { domain: e, at } if e == domain && due(at) => ctx.finish(),
        Ending::Fault { domain: e, at } if e == domain && due(at) => {
            ctx.raise(sites[usize::from(domain == 2)]);
        }
        _ => {}
    }
}

/// What both designs share: domains `a` (600 ps), `b` (900 ps) and `c`
/// (1500 ps, phase 300 ps), with no calendar pattern for checked steps;
/// units `a0`, `a1` (on `a`), `b0` (`b`), `c0`, `c1` (`c`); a registered
/// width-2 FIFO `ab` from `a0` to `b0` (depth 4, S = 2, FIFO 0); a
/// latency-1 channel from `a0` to `a1`; fault sites in `a1` and `c1`.
struct Common {
    b: DesignBuilder,
    d: [DomainId; 3],
    units: [UnitId; 5],
    ab: FifoId,
    channel: (OutPort, InPort),
    sites: [AssertId; 2],
}

fn common(mode: Mode) -> Common {
    let mut b = DesignBuilder::new();
    if mode == Mode::Checked {
        b.calendar_config(CalendarConfig { pattern_limit: 0 });
    }
    let d = [
        b.domain("a", clock(600, 0)),
        b.domain("b", clock(900, 0)),
        b.domain("c", clock(1500, 300)),
    ];
    let units = [
        b.unit("top.a0", d[0], &[1, 0]),
        b.unit("top.a1", d[0], &[2, 0]),
        b.unit("top.b0", d[1], &[3, 0]),
        b.unit("top.c0", d[2], &[4, 0]),
        b.unit("top.c1", d[2], &[5, 0]),
    ];
    let [a0, a1, b0, _, c1] = units;
    let ab = b.fifo(FifoSpec {
        name: "top.ab".into(),
        writer: a0,
        reader: b0,
        depth: 4,
        sync: 2,
        width: 2,
        read_port: ReadPort::Registered,
    });
    let tx = b.output(a0, "tx", 1, 1);
    let rx = b.input(a1, "rx", 1);
    b.connect(tx, rx, 1, 2);
    let sites = [
        b.fault_site(a1, FaultKind::Assertion, "assert at t.chr:1:1"),
        b.fault_site(c1, FaultKind::Assertion, "assert at t.chr:2:1"),
    ];
    Common {
        b,
        d,
        units,
        ab,
        channel: (tx, rx),
        sites,
    }
}

/// Domain `a`'s group tick: bursts to `ab` (they fill it: full flags;
/// pauses let it drain), items over the channel, the second unit's
/// sends to `ac` where given, a trace, and the ending.
fn group_a(
    ab: FifoId,
    ac: Option<FifoId>,
    (tx, rx): (OutPort, InPort),
    ending: Ending,
    sites: [AssertId; 2],
) -> impl FnMut(&mut TickCtx<'_>) {
    move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        fold(ctx, 0);
        if c % 16 < 11 {
            ctx.fifo_try_send(ab, &[c, c.wrapping_mul(7)]);
        }
        if !c.is_multiple_of(3) {
            ctx.try_send(tx, &[ctx.reg(1)]);
        }
        ctx.enter(1);
        let v = ctx.recv_word(rx).unwrap_or(1);
        fold(ctx, v);
        if let Some(ac) = ac
            && c % 5 != 2
        {
            ctx.fifo_try_send(ac, &[c ^ v]);
        }
        ctx.trace(0, &[c]);
        end_at(ctx, ending, sites, 0);
    }
}

/// The design: `a` (600 ps) with a group tick of two units joined by a
/// latency-1 channel, writing a registered width-2 FIFO to `b` and an
/// FWFT S=3 FIFO to `c`; `b` (900 ps) reading the first, with a stage
/// register, writing a registered FIFO to `c`; `c` (1500 ps, phase
/// 300 ps) reading both, and a FIFO between its two units.
fn design(mode: Mode, ending: Ending) -> (Simulation, [DomainId; 3]) {
    let Common {
        mut b,
        d,
        units: [a0, a1, b0, c0, c1],
        ab,
        channel,
        sites,
    } = common(mode);
    let fifo = |b: &mut DesignBuilder, name: &str, w, r, depth, sync, width, read_port| {
        b.fifo(FifoSpec {
            name: name.into(),
            writer: w,
            reader: r,
            depth,
            sync,
            width,
            read_port,
        })
    };
    let ac = fifo(&mut b, "top.ac", a1, c0, 2, 3, 1, ReadPort::Fwft);
    let bc = fifo(&mut b, "top.bc", b0, c0, 8, 2, 1, ReadPort::Registered);
    let cc = fifo(&mut b, "top.cc", c0, c1, 4, 2, 1, ReadPort::Registered);
    let stage = b.stage(b0, "s", 2, 1);
    let end = move |ctx: &mut TickCtx<'_>, domain: usize| end_at(ctx, ending, sites, domain);
    b.set_group_tick(&[a0, a1], group_a(ab, Some(ac), channel, ending, sites))
        .expect("group");
    b.set_tick(b0, move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        let mut item = [0, 0];
        let mut v = 0;
        if ctx.fifo_take(ab, &mut item) {
            v = item[0] ^ item[1].rotate_left(17);
        }
        if ctx.stage_valid(stage, 0) {
            v = v.wrapping_add(ctx.stage_read(stage, 0)[0]);
        }
        fold(ctx, v);
        if c % 4 != 3 {
            ctx.fifo_request(ab);
        }
        if !c.is_multiple_of(5) {
            ctx.stage_write(stage, (c % 2) as usize, &[c * 3]);
        }
        if c % 9 < 7 {
            ctx.fifo_try_send(bc, &[v]);
        }
    })
    .expect("b0");
    b.set_tick(c0, move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        let mut v = [0];
        let mut w = [0];
        if c % 3 != 1 {
            ctx.fifo_recv(ac, &mut v);
        }
        ctx.fifo_take(bc, &mut w);
        ctx.fifo_request(bc);
        fold(ctx, v[0] ^ w[0].rotate_left(3));
        ctx.fifo_try_send(cc, &[v[0].wrapping_add(w[0])]);
        ctx.trace(1, &[v[0], w[0]]);
    })
    .expect("c0");
    b.set_tick(c1, move |ctx: &mut TickCtx<'_>| {
        let mut v = [0];
        ctx.fifo_take(cc, &mut v);
        if ctx.cycle() % 7 != 6 {
            ctx.fifo_request(cc);
        }
        fold(ctx, v[0]);
        end(ctx, 2);
    })
    .expect("c1");
    let mut sim = b.build().expect("design");
    sim.set_replay_loop(mode == Mode::Replay);
    (sim, d)
}

/// The solo design: every domain has one runner, no stage register and at
/// most one FIFO, so each instant with one domain's edge alone is one
/// operation of the replay program, with every FIFO side: `a` (600 ps) a
/// group tick of two units (four register words) joined by a latency-1
/// channel, writing a registered width-2 FIFO to `b` (900 ps, one unit,
/// two words); `c` (1500 ps, phase 300 ps) a group tick of two units with
/// a registered FIFO between them; `e` (700 ps, phase 100 ps) one unit
/// with one register word and no FIFO.
fn design_solo(mode: Mode, ending: Ending) -> (Simulation, [DomainId; 3]) {
    let Common {
        mut b,
        d,
        units: [a0, a1, b0, c0, c1],
        ab,
        channel,
        sites,
    } = common(mode);
    let e = b.domain("e", clock(700, 100));
    let e0 = b.unit("top.e0", e, &[6]);
    let cc = b.fifo(FifoSpec {
        name: "top.cc".into(),
        writer: c0,
        reader: c1,
        depth: 2,
        sync: 3,
        width: 1,
        read_port: ReadPort::Registered,
    });
    b.set_group_tick(&[a0, a1], group_a(ab, None, channel, ending, sites))
        .expect("group a");
    b.set_tick(b0, move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        let mut item = [0, 0];
        let mut v = 0;
        if ctx.fifo_take(ab, &mut item) {
            v = item[0] ^ item[1].rotate_left(17);
        }
        fold(ctx, v);
        if c % 4 != 3 {
            ctx.fifo_request(ab);
        }
    })
    .expect("b0");
    b.set_group_tick(&[c0, c1], move |ctx: &mut TickCtx<'_>| {
        let c = ctx.cycle();
        fold(ctx, c);
        if c % 5 != 1 {
            ctx.fifo_try_send(cc, &[ctx.reg(0)]);
        }
        ctx.enter(1);
        let mut v = [0];
        ctx.fifo_take(cc, &mut v);
        if c % 7 != 6 {
            ctx.fifo_request(cc);
        }
        fold(ctx, v[0]);
        ctx.trace(1, &[v[0]]);
        end_at(ctx, ending, sites, 2);
    })
    .expect("group c");
    b.set_tick(e0, |ctx: &mut TickCtx<'_>| {
        let v = ctx.reg(0);
        ctx.set_reg(0, v.rotate_left(5) ^ ctx.cycle());
    })
    .expect("e0");
    let mut sim = b.build().expect("design");
    sim.set_replay_loop(mode == Mode::Replay);
    (sim, d)
}

/// Everything a stop can be told apart by.
type Snapshot = (
    Vec<u64>,
    Vec<u64>,
    u64,
    u128,
    u64,
    Vec<(bool, bool, bool)>,
    Vec<String>,
);

fn snapshot(sim: &Simulation, d: &[DomainId; 3], (units, fifos): (u32, u32)) -> Snapshot {
    let regs = (0..units)
        .flat_map(|u| sim.regs(UnitId(u)).to_vec())
        .collect();
    let edges = d.iter().map(|&x| sim.edges_done(x)).collect();
    let flags = (0..fifos)
        .map(|f| {
            let f = sim.fifo_flags(FifoId(f));
            (f.full, f.empty, f.output_valid)
        })
        .collect();
    let faults = sim.faults().iter().map(|f| format!("{f:?}")).collect();
    (
        regs,
        edges,
        sim.instants_done(),
        sim.now().ticks,
        sim.in_flight(),
        flags,
        faults,
    )
}

/// A sink whose records the test reads while the simulation owns it.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<OwnedRecord>>>);

impl TraceSink for Shared {
    fn record(&mut self, r: &TraceRecord<'_>) {
        let mut memory = MemorySink::default();
        memory.record(r);
        self.0.borrow_mut().extend(memory.records);
    }
}

/// Split limits; the last is unbounded where the run ends by itself.
fn limits(d: &[DomainId; 3], ending: Ending) -> Vec<RunLimit> {
    vec![
        RunLimit::Time(Picos::from_integer(0)),
        RunLimit::Time(Picos::from_integer(299)),
        RunLimit::Edges {
            domain: d[2],
            count: 2,
        },
        RunLimit::Time(Picos::new(123_457, 3)),
        RunLimit::Edges {
            domain: d[0],
            count: 4_001,
        },
        // Already reached: runs nothing.
        RunLimit::Edges {
            domain: d[0],
            count: 10,
        },
        RunLimit::Edges {
            domain: d[1],
            count: 9_001,
        },
        RunLimit::Time(Picos::from_integer(30_000_000)),
        match ending {
            Ending::Never => RunLimit::Edges {
                domain: d[2],
                count: 40_000,
            },
            _ => RunLimit::Unbounded,
        },
    ]
}

fn compare(ending: Ending) {
    compare_shape(Shape::Mixed, ending);
    compare_shape(Shape::Solo, ending);
}

fn compare_shape(shape: Shape, ending: Ending) {
    let counts = shape.counts();
    let modes = [Mode::Replay, Mode::Stepped, Mode::Checked];
    let mut sims: Vec<(Simulation, [DomainId; 3])> =
        modes.iter().map(|&m| shape.build(m, ending)).collect();
    assert!(sims[0].0.uses_calendar_pattern() && sims[0].0.runs_replay());
    assert!(!sims[1].0.runs_replay());
    assert!(!sims[2].0.uses_calendar_pattern() && !sims[2].0.runs_replay());
    let d = sims[0].1;
    let mut stops = Vec::new();
    let mut step = |sims: &mut Vec<(Simulation, [DomainId; 3])>, limit: &RunLimit, what: &str| {
        let results: Vec<(Stop, Snapshot)> = sims
            .iter_mut()
            .map(|(sim, d)| (sim.run(limit.clone()), snapshot(sim, d, counts)))
            .collect();
        for (mode, r) in modes.iter().zip(&results).skip(1) {
            assert_eq!(
                results[0], *r,
                "{shape:?} {ending:?}, {what} {limit:?}: replay vs {mode:?}"
            );
        }
        stops.push(results[0].0.clone());
    };
    for limit in limits(&d, ending) {
        step(&mut sims, &limit, "no sink");
    }
    // A sink attached later: the observed loop continues from there.
    let sinks: Vec<Shared> = modes.iter().map(|_| Shared::default()).collect();
    for (((sim, _), sink), &mode) in sims.iter_mut().zip(&sinks).zip(&modes) {
        sim.set_trace_sink(Box::new(sink.clone()));
        // The sink takes records only, so the replay loop keeps running.
        assert_eq!(sim.runs_replay(), mode == Mode::Replay);
    }
    let later = RunLimit::Edges {
        domain: d[2],
        count: sims[0].0.edges_done(d[2]) + 3_000,
    };
    step(&mut sims, &later, "sink");
    assert!(sinks[0].0.borrow().len() > 1_000);
    for sink in &sinks[1..] {
        assert_eq!(
            *sinks[0].0.borrow(),
            *sink.0.borrow(),
            "{shape:?} {ending:?}: records"
        );
    }
    // Taken away again: the unobserved form resumes.
    for (sim, _) in sims.iter_mut() {
        sim.take_trace_sink();
    }
    assert!(sims[0].0.runs_replay());
    let again = RunLimit::Edges {
        domain: d[1],
        count: sims[0].0.edges_done(d[1]) + 50_000,
    };
    step(&mut sims, &again, "sink taken away");
    let drains: Vec<(Drain, Snapshot)> = sims
        .iter_mut()
        .map(|(sim, d)| (sim.drain(1_000), snapshot(sim, d, counts)))
        .collect();
    for r in &drains[1..] {
        assert_eq!(drains[0], *r, "{shape:?} {ending:?}: drain");
    }
    match ending {
        Ending::Never => assert!(stops.iter().all(|s| *s == Stop::LimitReached)),
        Ending::Finish { .. } => assert!(stops.contains(&Stop::Finished), "{stops:?}"),
        Ending::Fault { .. } => {
            assert!(
                stops.iter().any(|s| matches!(s, Stop::Fault(_))),
                "{stops:?}"
            );
        }
    }
}

#[test]
fn replay_loop_matches_replay_and_checked_steps() {
    compare(Ending::Never);
}

#[test]
fn replay_loop_stops_on_the_exact_instant_in_either_domain() {
    for ending in [
        Ending::Finish { domain: 0, at: 777 },
        Ending::Finish {
            domain: 2,
            at: 1_234,
        },
        Ending::Fault {
            domain: 0,
            at: 2_501,
        },
        Ending::Fault { domain: 2, at: 333 },
    ] {
        compare(ending);
    }
}

/// A FIFO between two clocks, one side's edges never meeting the other's:
/// the replay loop commits each side alone; the FIFO's flags and the reader's
/// fold must match the checked steps at every one of many short runs (one
/// instant at a time near the start, where the synchronizers fill).
#[test]
fn replay_loop_single_instants_match() {
    let build = |mode: Mode| {
        let mut b = DesignBuilder::new();
        if mode == Mode::Checked {
            b.calendar_config(CalendarConfig { pattern_limit: 0 });
        }
        let w = b.domain("w", clock(1094, 0));
        let r = b.domain("r", clock(754, 137));
        let wu = b.unit("top.w", w, &[0, 0]);
        let ru = b.unit("top.r", r, &[0, 0]);
        let f = b.fifo(FifoSpec {
            name: "top.f".into(),
            writer: wu,
            reader: ru,
            depth: 16,
            sync: 2,
            width: 1,
            read_port: ReadPort::Fwft,
        });
        b.set_tick(wu, move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            if ctx.fifo_try_send(f, &[n]) {
                ctx.set_reg(0, n + 1);
            }
        })
        .expect("w");
        b.set_tick(ru, move |ctx: &mut TickCtx<'_>| {
            let mut v = [0];
            if ctx.cycle() % 5 != 4 && ctx.fifo_recv(f, &mut v) {
                fold(ctx, v[0]);
            }
        })
        .expect("r");
        let mut sim = b.build().expect("design");
        sim.set_replay_loop(mode == Mode::Replay);
        (sim, r)
    };
    let (mut replay, r) = build(Mode::Replay);
    let (mut checked, _) = build(Mode::Checked);
    assert!(replay.runs_replay());
    for count in (1..200).chain((200..20_000).step_by(997)) {
        let limit = RunLimit::Edges { domain: r, count };
        assert_eq!(replay.run(limit.clone()), checked.run(limit));
        let state = |s: &Simulation| {
            (
                s.regs(UnitId(0)).to_vec(),
                s.regs(UnitId(1)).to_vec(),
                s.instants_done(),
                s.now().ticks,
                s.in_flight(),
                s.fifo_flags(FifoId(0)),
            )
        };
        assert_eq!(state(&replay), state(&checked), "{count} reader edges");
    }
}

/// Once running, the replay loop allocates nothing, over many runs split at
/// edge limits of every domain.
#[test]
fn replay_loop_does_not_allocate() {
    let (mut sim, d) = design(Mode::Replay, Ending::Never);
    assert!(sim.runs_replay());
    let warm = RunLimit::Edges {
        domain: d[0],
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
    WATCHING.with(|w| w.set(true));
    let mut stops = 0;
    for k in 1..=300u64 {
        let limit = RunLimit::Edges {
            domain: d[(k % 3) as usize],
            count: 1_000 + k * 400,
        };
        stops += u64::from(sim.run(limit) == Stop::LimitReached);
    }
    WATCHING.with(|w| w.set(false));
    assert_eq!(stops, 300);
    assert!(sim.edges_done(d[0]) > 100_000);
    assert_eq!(
        ALLOCATIONS.load(Ordering::Relaxed),
        0,
        "allocations in the replay loop"
    );
}

/// A native group function whose variant for unobserved runs never reaches
/// the context (`NativeGroup::with_unobserved(.., false)`): the replay loop
/// calls it without storing the context or setting the edge's fields, and
/// sets them only when it returns a fault status. The fault (unit, cycle,
/// time), the stop and the counts must match the replay loop and checked
/// steps, for a domain with a FIFO side and one without.
#[test]
fn replay_loop_faults_of_blind_native_variants_match() {
    use chronon_runtime::{NativeGroup, Tick};
    use std::ffi::c_void;

    /// Counts its calls in `*first`; status 5 at call `*data`.
    unsafe extern "C" fn count(first: *mut c_void, data: *mut c_void) -> u32 {
        // SAFETY: `Counting::native`: both point into the live tick.
        unsafe {
            let n = first.cast::<u64>();
            *n += 1;
            u32::from(*n == *data.cast::<u64>()) * 5
        }
    }
    /// Calls so far, the failing call, the (never read) context slot.
    struct Counting(Box<(u64, u64, *mut c_void)>);
    impl Tick for Counting {
        fn tick(&mut self, _: &mut TickCtx<'_>) {
            panic!("the runtime calls the native function instead");
        }
        fn native(&self) -> Option<NativeGroup> {
            let cell = (&*self.0 as *const (u64, u64, *mut c_void)).cast_mut();
            // SAFETY: `count` reads and writes only the first two fields,
            // never the context or the slot; all live in `self`.
            unsafe {
                let (calls, at, slot) =
                    (&raw mut (*cell).0, &raw mut (*cell).1, &raw mut (*cell).2);
                let group = NativeGroup::with_context_slot(count, calls.cast(), at.cast(), slot);
                Some(group.with_unobserved(count, false))
            }
        }
    }
    for (faulting, at) in [(0, 2_345u64), (1, 3_001)] {
        let build = |mode: Mode| {
            let mut b = DesignBuilder::new();
            if mode == Mode::Checked {
                b.calendar_config(CalendarConfig { pattern_limit: 0 });
            }
            let w = b.domain("w", clock(600, 0));
            let r = b.domain("r", clock(900, 137));
            let e = b.domain("e", clock(1500, 300));
            let wu = [b.unit("top.w0", w, &[]), b.unit("top.w1", w, &[])];
            let ru = b.unit("top.r", r, &[0, 0]);
            let eu = [b.unit("top.e0", e, &[]), b.unit("top.e1", e, &[])];
            let f = b.fifo(FifoSpec {
                name: "top.f".into(),
                writer: wu[0],
                reader: ru,
                depth: 4,
                sync: 2,
                width: 1,
                read_port: ReadPort::Fwft,
            });
            let never = u64::MAX;
            let fails = |d: usize| if d == faulting { at } else { never };
            b.set_group_tick(&wu, Counting(Box::new((0, fails(0), std::ptr::null_mut()))))
                .expect("w");
            b.set_group_tick(&eu, Counting(Box::new((0, fails(1), std::ptr::null_mut()))))
                .expect("e");
            b.set_tick(ru, move |ctx: &mut TickCtx<'_>| {
                let mut v = [0];
                ctx.fifo_recv(f, &mut v);
                fold(ctx, v[0]);
            })
            .expect("r");
            let mut sim = b.build().expect("design");
            sim.set_replay_loop(mode == Mode::Replay);
            (sim, [w, r, e])
        };
        let modes = [Mode::Replay, Mode::Stepped, Mode::Checked];
        let mut sims: Vec<_> = modes.iter().map(|&m| build(m)).collect();
        assert!(sims[0].0.runs_replay());
        let results: Vec<_> = sims
            .iter_mut()
            .map(|(sim, d)| {
                let stop = sim.run(RunLimit::Edges {
                    domain: d[1],
                    count: 20_000,
                });
                (stop, snapshot(sim, d, (5, 1)))
            })
            .collect();
        assert!(matches!(results[0].0, Stop::Fault(_)), "{:?}", results[0]);
        let fault = &results[0].1.6;
        assert_eq!(fault.len(), 1, "{fault:?}");
        assert!(
            fault[0].contains(&format!("cycle: {}", at - 1)),
            "{fault:?}"
        );
        for (mode, r) in modes.iter().zip(&results).skip(1) {
            assert_eq!(results[0], *r, "domain {faulting}: replay vs {mode:?}");
        }
    }
}
