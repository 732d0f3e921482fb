//! The runtime CDC FIFO against a reference model that shares no code with it:
//! unwrapped pointers, a VecDeque for storage, explicit synchronizer chains that
//! shift element by element, and flag flops. Both are driven by the same
//! traffic inside real simulations and compared on every operation.
//!
//! Coverage: the full product of clock ratios 1:1, 2:1, 3:2, 5:3, 1000:1001 MHz
//! and 914:1326 MHz x reader phases 0/1/137/500 ps x depths 2/4/16 x sync 2/3/5 x
//! continuous/burst/random traffic, each >= 3,000 instants; the read port kind
//! (registered/FWFT), the direction (fast or slow writer) and the take/request
//! order alternate across the product so each value appears throughout. Plus a
//! one-million-instant random stress run at depth 64.

use chronon_runtime::{
    CalendarConfig, Clock, DesignBuilder, FifoId, FifoSpec, Picos, ReadPort, RunLimit, Stop,
    TickCtx,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// The reference asynchronous FIFO.
struct RefFifo {
    depth: u64,
    registered: bool,
    items: VecDeque<u64>,
    written: u64,
    read: u64,
    /// `[0]` is the first flop, the last element the one the other side uses.
    write_chain: Vec<u64>,
    read_chain: Vec<u64>,
    full: bool,
    empty: bool,
    output: Option<u64>,
    pending_write: Option<u64>,
    pending_read: bool,
    took: bool,
}

impl RefFifo {
    fn new(depth: u64, sync: usize, registered: bool) -> Self {
        RefFifo {
            depth,
            registered,
            items: VecDeque::new(),
            written: 0,
            read: 0,
            write_chain: vec![0; sync],
            read_chain: vec![0; sync],
            full: false,
            empty: true,
            output: None,
            pending_write: None,
            pending_read: false,
            took: false,
        }
    }

    fn can_send(&self) -> bool {
        !self.full && self.pending_write.is_none()
    }

    fn try_send(&mut self, v: u64) -> bool {
        let ok = self.can_send();
        if ok {
            self.pending_write = Some(v);
        }
        ok
    }

    fn request(&mut self) -> bool {
        let ok = self.registered
            && !self.empty
            && !self.pending_read
            && (self.output.is_none() || self.took);
        self.pending_read |= ok;
        ok
    }

    fn take(&mut self) -> Option<u64> {
        if self.took {
            return None;
        }
        let v = self.output;
        self.took = v.is_some();
        v
    }

    fn peek(&self) -> Option<u64> {
        if self.registered || self.empty || self.pending_read {
            return None;
        }
        self.items.front().copied()
    }

    fn recv(&mut self) -> Option<u64> {
        let v = self.peek();
        self.pending_read |= v.is_some();
        v
    }

    fn shift(chain: &mut [u64], sample: u64) -> u64 {
        let before = chain[chain.len() - 1];
        for i in (1..chain.len()).rev() {
            chain[i] = chain[i - 1];
        }
        chain[0] = sample;
        before
    }

    fn commit(&mut self, writer_edge: bool, reader_edge: bool) {
        let (written_before, read_before) = (self.written, self.read);
        if writer_edge {
            if let Some(v) = self.pending_write.take() {
                self.items.push_back(v);
                self.written += 1;
            }
            let tail = Self::shift(&mut self.read_chain, read_before);
            self.full = self.written - tail == self.depth;
        }
        if reader_edge {
            if self.pending_read {
                let head = self.items.pop_front().expect("a read needs an item");
                if self.registered {
                    self.output = Some(head);
                }
                self.read += 1;
            } else if self.took {
                self.output = None;
            }
            self.pending_read = false;
            self.took = false;
            let tail = Self::shift(&mut self.write_chain, written_before);
            self.empty = self.read == tail;
        }
        assert!(self.items.len() as u64 <= self.depth, "storage over depth");
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Traffic {
    Continuous,
    Burst,
    Random,
}

#[derive(Debug, Clone)]
struct Config {
    writer_mhz: i128,
    reader_mhz: i128,
    reader_phase: i128,
    depth: u32,
    sync: u32,
    traffic: Traffic,
    read_port: ReadPort,
    take_first: bool,
    seed: u64,
    writer_edges: u64,
    /// Force the calendar's merge mode (FIFOs then commit through the
    /// per-instant search instead of the pattern's precomputed program).
    merge_mode: bool,
}

/// Shared state of the two test units.
struct Harness {
    config: Config,
    model: RefFifo,
    time: Option<u128>,
    writer_ticked: bool,
    reader_ticked: bool,
    rng: u64,
    next_value: u64,
    history: VecDeque<String>,
    transitions: u64,
}

impl Harness {
    fn random(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Commits the model's previous instant when a new one starts.
    fn enter(&mut self, ctx: &TickCtx<'_>, writer: bool) {
        let t = ctx.time().ticks;
        if self.time != Some(t) {
            if self.time.is_some() {
                self.model.commit(self.writer_ticked, self.reader_ticked);
            }
            self.time = Some(t);
            self.writer_ticked = false;
            self.reader_ticked = false;
        }
        if writer {
            self.writer_ticked = true;
        } else {
            self.reader_ticked = true;
        }
    }

    fn check<T: PartialEq + std::fmt::Debug>(
        &mut self,
        ctx: &TickCtx<'_>,
        op: &str,
        got: T,
        want: T,
    ) {
        self.transitions += 1;
        if self.history.len() == 32 {
            self.history.pop_front();
        }
        if got != want || self.history.len() < 32 {
            self.history.push_back(format!(
                "t={} ticks cycle={} {op}: runtime {got:?} reference {want:?} (full={}, empty={})",
                ctx.time().ticks,
                ctx.cycle(),
                self.model.full,
                self.model.empty
            ));
        }
        if got != want {
            panic!(
                "FIFO mismatch in {:?}\nlast 32 states:\n{}",
                self.config,
                self.history.iter().cloned().collect::<Vec<_>>().join("\n")
            );
        }
    }

    fn active(&mut self, cycle: u64, on: u64, off: u64) -> bool {
        match self.config.traffic {
            Traffic::Continuous => true,
            Traffic::Burst => cycle % (on + off) < on,
            Traffic::Random => self.random() % 8 < 5,
        }
    }

    fn write(&mut self, ctx: &mut TickCtx<'_>, fifo: FifoId) {
        self.enter(ctx, true);
        let full = ctx.fifo_full(fifo);
        self.check(ctx, "full", full, self.model.full);
        let can = ctx.fifo_can_send(fifo);
        self.check(ctx, "can_send", can, self.model.can_send());
        if self.active(ctx.cycle(), 16, 16) {
            let v = self.next_value;
            let sent = ctx.fifo_try_send(fifo, &[v]);
            let want = self.model.try_send(v);
            self.check(ctx, "try_send", sent, want);
            if sent {
                self.next_value += 1;
            }
            // A second write in the same edge is always refused.
            let again = ctx.fifo_try_send(fifo, &[v]);
            self.check(ctx, "second try_send", again, false);
        }
    }

    fn read(&mut self, ctx: &mut TickCtx<'_>, fifo: FifoId) {
        self.enter(ctx, false);
        let empty = ctx.fifo_empty(fifo);
        self.check(ctx, "empty", empty, self.model.empty);
        let active = self.active(ctx.cycle(), 24, 8);
        let mut item = [0];
        match self.config.read_port {
            ReadPort::Registered => {
                let valid = ctx.fifo_valid(fifo);
                self.check(ctx, "valid", valid, self.model.output.is_some());
                let take_first = self.config.take_first;
                if take_first && active {
                    let got = ctx.fifo_take(fifo, &mut item).then_some(item[0]);
                    let want = self.model.take();
                    self.check(ctx, "take", got, want);
                }
                if active || self.config.traffic == Traffic::Random {
                    let got = ctx.fifo_request(fifo);
                    let want = self.model.request();
                    self.check(ctx, "request", got, want);
                }
                if !take_first && active {
                    let got = ctx.fifo_take(fifo, &mut item).then_some(item[0]);
                    let want = self.model.take();
                    self.check(ctx, "take", got, want);
                }
            }
            ReadPort::Fwft => {
                let peeked = ctx.fifo_peek(fifo).map(|s| s[0]);
                self.check(ctx, "peek", peeked, self.model.peek());
                if active {
                    let got = ctx.fifo_recv(fifo, &mut item).then_some(item[0]);
                    let want = self.model.recv();
                    self.check(ctx, "recv", got, want);
                    let again = ctx.fifo_recv(fifo, &mut item);
                    self.check(ctx, "second recv", again, false);
                }
            }
        }
    }
}

/// Runs one configuration; returns (instants, compared transitions, items delivered).
fn run(config: Config) -> (u64, u64, u64) {
    let clock = |f: i128, phase: i128| {
        Clock::from_frequency_hz(
            Picos::from_integer(f * 1_000_000),
            Picos::from_integer(phase),
        )
        .expect("clock")
    };
    let mut b = DesignBuilder::new();
    if config.merge_mode {
        b.calendar_config(CalendarConfig { pattern_limit: 0 });
    }
    let wd = b.domain("wclk", clock(config.writer_mhz, 0));
    let rd = b.domain("rclk", clock(config.reader_mhz, config.reader_phase));
    let w = b.unit("top.writer", wd, &[]);
    let r = b.unit("top.reader", rd, &[]);
    let fifo = b.fifo(FifoSpec {
        name: "top.cdc".into(),
        writer: w,
        reader: r,
        depth: config.depth,
        sync: config.sync,
        width: 1,
        read_port: config.read_port,
    });
    let harness = Rc::new(RefCell::new(Harness {
        model: RefFifo::new(
            u64::from(config.depth),
            config.sync as usize,
            config.read_port == ReadPort::Registered,
        ),
        time: None,
        writer_ticked: false,
        reader_ticked: false,
        rng: config.seed | 1,
        next_value: 0,
        history: VecDeque::with_capacity(33),
        transitions: 0,
        config: config.clone(),
    }));
    let (hw, hr) = (harness.clone(), harness.clone());
    b.set_tick(w, move |ctx: &mut TickCtx<'_>| {
        hw.borrow_mut().write(ctx, fifo)
    })
    .expect("unit");
    b.set_tick(r, move |ctx: &mut TickCtx<'_>| {
        hr.borrow_mut().read(ctx, fifo)
    })
    .expect("unit");
    let mut sim = b.build().expect("valid design");
    let stop = sim.run(RunLimit::Edges {
        domain: wd,
        count: config.writer_edges,
    });
    assert_eq!(stop, Stop::LimitReached);
    let h = harness.borrow();
    (sim.instants_done(), h.transitions, h.model.read)
}

#[test]
fn matrix_matches_the_reference() {
    let ratios: [(i128, i128); 6] = [
        (100, 100),
        (200, 100),
        (300, 200),
        (500, 300),
        (1000, 1001),
        (914, 1326),
    ];
    let mut index = 0u64;
    let (mut transitions, mut delivered) = (0, 0);
    for (a, b) in ratios {
        for phase in [0, 1, 137, 500] {
            for depth in [2, 4, 16] {
                for sync in [2, 3, 5] {
                    for traffic in [Traffic::Continuous, Traffic::Burst, Traffic::Random] {
                        index += 1;
                        let (writer_mhz, reader_mhz) = if index.is_multiple_of(2) {
                            (a, b)
                        } else {
                            (b, a)
                        };
                        let config = Config {
                            writer_mhz,
                            reader_mhz,
                            reader_phase: phase,
                            depth,
                            sync,
                            traffic,
                            read_port: if (index / 2).is_multiple_of(2) {
                                ReadPort::Registered
                            } else {
                                ReadPort::Fwft
                            },
                            take_first: (index / 4).is_multiple_of(2),
                            seed: index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                            writer_edges: 3000 * (writer_mhz as u64).max(reader_mhz as u64)
                                / writer_mhz as u64,
                            merge_mode: index.is_multiple_of(3),
                        };
                        let (instants, t, d) = run(config);
                        assert!(instants >= 3000);
                        transitions += t;
                        delivered += d;
                    }
                }
            }
        }
    }
    assert_eq!(index, 648);
    assert!(
        transitions >= 1_200_000,
        "{transitions} transitions compared"
    );
    assert!(delivered > 100_000, "traffic must flow: {delivered} items");
}

#[test]
fn million_instant_stress_matches_the_reference() {
    let (instants, transitions, delivered) = run(Config {
        writer_mhz: 1326,
        reader_mhz: 914,
        reader_phase: 137,
        depth: 64,
        sync: 3,
        traffic: Traffic::Random,
        read_port: ReadPort::Registered,
        take_first: true,
        seed: 0xC0FFEE,
        writer_edges: 600_000,
        merge_mode: false,
    });
    assert!(instants >= 1_000_000, "{instants}");
    assert!(transitions >= 1_200_000, "{transitions}");
    assert!(delivered > 200_000, "{delivered}");
}
