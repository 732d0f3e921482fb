//! The simulation: state, the instant loop, running, stopping and draining.
//!
//! One instant: the calendar yields the domains with an edge (declaration
//! order); each domain's units tick in the schedule's order, and its register
//! words are copied from next to current right after (no other domain reads
//! them); the instant's trace records go to the sink in canonical order; then
//! the stage registers of every ticking domain and the CDC FIFOs touching it
//! commit. Nothing on this path allocates.

use crate::calendar::{Calendar, TimeBase};
use crate::channel::Channels;
use crate::config::RuntimeConfig;
use crate::design::{BuildError, DesignBuilder, DomainId, FifoId, InPort, OutPort, UnitId};
use crate::fault::{Fault, FaultKind};
use crate::fifo::CdcFifo;
use crate::schedule::{Cluster, plan_design};
use crate::stage::StageReg;
use crate::tick::{Tick, TickCtx};
use crate::time::{Clock, Picos, TimeError};
use crate::trace::{Timestamp, TraceBuffer, TraceSink};

mod build;
mod replay;
use replay::ReplayEnd;

/// Per-unit layout and names.
#[derive(Debug)]
pub(crate) struct UnitMeta {
    pub(crate) path: String,
    pub(crate) domain: u32,
    pub(crate) rank: u32,
    pub(crate) reg_base: usize,
    pub(crate) reg_len: usize,
    pub(crate) counter_base: usize,
    pub(crate) counter_names: Vec<String>,
}

/// The state ticks act on, apart from the tick functions themselves.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) cur: Vec<u64>,
    pub(crate) next: Vec<u64>,
    pub(crate) units: Vec<UnitMeta>,
    pub(crate) domain_names: Vec<String>,
    pub(crate) ticks_per_ps: u128,
    pub(crate) counters: Vec<u64>,
    pub(crate) channels: Channels,
    pub(crate) fifos: Vec<CdcFifo>,
    pub(crate) stages: Vec<StageReg>,
    pub(crate) assertions: Vec<crate::design::FaultSiteDecl>,
    pub(crate) trace: TraceBuffer,
    pub(crate) tracing: bool,
    /// The sink wants FIFO events or per-domain commit calls: the instant's
    /// records go through `TraceBuffer::flush_observed`.
    pub(crate) observe: bool,
    /// The sink wants events of some FIFO (`CdcFifo::kinds`): FIFO commits
    /// are searched per instant (not the precomputed program) and the
    /// replay loop is not used.
    pub(crate) fifo_observed: bool,
    /// The sink wants `domain_committed` calls.
    pub(crate) commits: bool,
    /// Observed FIFOs stamp their tick operations and derive the events
    /// at commit (`CdcFifo::set_stamping`); switched by
    /// [`Simulation::set_fifo_stamps`].
    pub(crate) fifo_stamps: bool,
    /// The sink asked the run to stop (it failed).
    pub(crate) sink_stopped: bool,
    /// Instants between two `TraceSink::stop_requested` calls, and those
    /// left before the next (see [`Core::stop_poll_due`]).
    pub(crate) stop_poll: (u32, u32),
    pub(crate) faults: Vec<Fault>,
    pub(crate) finish: bool,
    /// Set with `finish` or a fault: one check per instant.
    pub(crate) stop_requested: bool,
    /// Set while a domain runs ahead ([`TickCtx::next_edge`] acts only then).
    pub(crate) ahead: bool,
    /// Per domain, what [`TickCtx::next_edge`] commits and how far it moves.
    pub(crate) edges: Vec<DomainEdge>,
}

/// Per domain: the commit after each of its edges and its period, for
/// run-ahead ([`TickCtx::next_edge`]).
#[derive(Debug, Default)]
pub(crate) struct DomainEdge {
    pub(crate) regs: std::ops::Range<usize>,
    pub(crate) stages: Vec<u32>,
    /// FIFOs with both sides in the domain (run-ahead needs no others).
    pub(crate) fifos: Vec<u32>,
    /// The period in calendar ticks.
    pub(crate) period: u128,
}

impl Core {
    /// Whether the sink's `stop_requested` is due at this instant: at the
    /// first after it was installed, then every `stop_poll_interval`.
    #[inline(always)]
    pub(crate) fn stop_poll_due(&mut self) -> bool {
        let (every, left) = &mut self.stop_poll;
        if *left == 0 {
            *left = *every - 1;
            true
        } else {
            *left -= 1;
            false
        }
    }

    pub(crate) fn record_fault(
        &mut self,
        kind: FaultKind,
        unit: u32,
        construct: String,
        cycle: u64,
        time: Timestamp,
    ) {
        let meta = &self.units[unit as usize];
        self.stop_requested = true;
        self.faults.push(Fault {
            kind,
            unit: meta.path.clone(),
            construct,
            domain: self.domain_names[meta.domain as usize].clone(),
            cycle,
            time,
            site: None,
        });
    }
}

/// A CDC FIFO's registered flags, for inspection between runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FifoFlags {
    /// The writer's `full` flag.
    pub full: bool,
    /// The reader's `empty` flag.
    pub empty: bool,
    /// The registered read port's output register.
    pub output_valid: bool,
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A unit executed `finish`; the instant completed.
    Finished,
    /// The requested number of edges or the requested time was reached.
    LimitReached,
    /// A runtime fault; the faulting instant completed. The first fault of the
    /// instant is here, all of them in [`Simulation::faults`].
    Fault(Box<Fault>),
    /// The next instant's time or edge index cannot be represented.
    TimeOverflow(TimeError),
    /// The trace sink failed and asked to stop; the instant completed.
    SinkStopped,
}

/// How far to run. Limits are absolute, so running to X and then to Y is the
/// same as running to Y.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunLimit {
    /// Until edges `0..count` of the domain have been processed: every instant up
    /// to and including the time of edge `count - 1`, none after.
    Edges {
        /// The domain.
        domain: DomainId,
        /// The number of its edges.
        count: u64,
    },
    /// Every instant at or before this time (picoseconds), none after.
    Time(Picos),
    /// Until `finish` or a fault.
    Unbounded,
}

/// The result of [`Simulation::drain`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drain {
    /// Every channel and FIFO is empty, after this many extra instants.
    Drained {
        /// Instants run while draining.
        instants: u64,
    },
    /// The instant limit was reached with items still in flight.
    LimitReached {
        /// Items still in flight.
        in_flight: u64,
    },
    /// The run stopped for another reason while draining.
    Stopped(Stop),
}

/// What a [`TickCtx`] needs to act as one unit; one per unit, in evaluation order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotMeta {
    pub(crate) unit: u32,
    pub(crate) rank: u32,
    pub(crate) reg_base: usize,
    pub(crate) reg_len: usize,
    pub(crate) counter_base: usize,
    pub(crate) counter_len: usize,
}

/// A tick the instant loop calls: one unit's own, or a group tick over
/// consecutive units (`metas` indexes [`Simulation::metas`]).
struct Runner {
    tick: Box<dyn Tick>,
    /// The first unit's entry of `metas`.
    first: SlotMeta,
    /// What `tick` offers to be called as instead, if anything.
    native: Option<crate::tick::NativeGroup>,
    /// Its native run-ahead form, if any.
    native_edges: Option<crate::tick::NativeEdges>,
    metas: std::ops::Range<usize>,
}

/// Pattern mode's precomputed FIFO commits: per calendar pattern position,
/// the FIFOs touched by the instant's domains, each once, with the sides
/// that have an edge (no per-instant search or dedupe).
struct FifoProgram {
    /// Per pattern position, its range of `commits`.
    spans: Vec<std::ops::Range<usize>>,
    commits: Vec<FifoCommit>,
}

#[derive(Clone, Copy)]
struct FifoCommit {
    fifo: u32,
    writer: bool,
    reader: bool,
}

/// Per domain: what to evaluate and commit at its edges.
#[derive(Debug, Default)]
struct DomainPlan {
    units: Vec<u32>,
    /// This domain's runners, in evaluation order.
    runners: std::ops::Range<usize>,
    regs: std::ops::Range<usize>,
    stages: Vec<u32>,
    fifos: Vec<u32>,
    /// Whether the domain has stage registers or FIFOs to commit.
    extras: bool,
    /// Whether any of its ticks may stop the run ([`Tick::can_stop`]).
    can_stop: bool,
}

impl FifoProgram {
    /// The most commits the program may hold (memory bound: a long pattern
    /// times many FIFOs falls back to the per-instant loop).
    const MAX_COMMITS: usize = 1 << 20;

    /// The program for the calendar's pattern, if it has one and any FIFO.
    fn build(calendar: &Calendar, plans: &[DomainPlan], fifos: &[CdcFifo]) -> Option<FifoProgram> {
        if fifos.is_empty() {
            return None;
        }
        let positions = calendar.pattern_domains()?;
        let bound: usize = positions
            .iter()
            .flat_map(|ds| ds.iter().map(|&d| plans[d as usize].fifos.len()))
            .sum();
        if bound > Self::MAX_COMMITS {
            return None;
        }
        let mut spans = Vec::with_capacity(positions.len());
        let mut commits: Vec<FifoCommit> = Vec::new();
        for domains in positions {
            let start = commits.len();
            for &d in domains {
                for &f in &plans[d as usize].fifos {
                    // A FIFO within one domain, or between two domains with an
                    // edge now, commits once (both sides together).
                    if commits[start..].iter().any(|c| c.fifo == f) {
                        continue;
                    }
                    let fifo = &fifos[f as usize];
                    commits.push(FifoCommit {
                        fifo: f,
                        writer: domains.contains(&fifo.writer_domain),
                        reader: domains.contains(&fifo.reader_domain),
                    });
                }
            }
            spans.push(start..commits.len());
        }
        Some(FifoProgram { spans, commits })
    }
}

/// A built design, ready to run.
pub struct Simulation {
    calendar: Calendar,
    clocks: Vec<Clock>,
    core: Core,
    plans: Vec<DomainPlan>,
    runners: Vec<Runner>,
    /// Per unit, domain by domain in evaluation order.
    metas: Vec<SlotMeta>,
    fifo_program: Option<FifoProgram>,
    /// Set with pattern mode: the program of the replay loop
    /// ([`Simulation::replay`]).
    replay: Option<replay::ReplayProgram>,
    /// Switched by [`Simulation::set_replay_loop`].
    replay_enabled: bool,
    clusters: Vec<Cluster>,
    sink: Option<Box<dyn TraceSink>>,
    instants: u64,
    /// Whether any domain has stage registers or FIFOs to commit.
    any_extras: bool,
    /// Run-ahead: see [`Simulation::run_ahead`].
    ahead: RunAhead,
}

/// What run-ahead needs, fixed at build.
struct RunAhead {
    /// Switched by [`Simulation::set_run_ahead`].
    enabled: bool,
    /// No channel or CDC FIFO joins two domains, the calendar has a
    /// pattern, and at most one domain's ticks can stop the run.
    possible: bool,
    /// Domains with units, the one whose ticks can stop (if any) first.
    order: Vec<u32>,
    /// [`Calendar::run_ahead_limit`].
    limit: u128,
    /// How far one round runs, in ticks (65,536 of the shortest period).
    window: u128,
}

impl Simulation {
    /// Turns run-ahead on or off ([`RuntimeConfig::run_ahead`] says how it
    /// starts). Off, every instant runs
    /// through the instant loop; on, [`Simulation::run`] lets domains run
    /// many edges per call where that is exact (see [`Tick::tick_edges`]),
    /// with the same result (for tests and measurements).
    pub fn set_run_ahead(&mut self, on: bool) {
        self.ahead.enabled = on;
    }

    /// Turns the replay loop on or off ([`RuntimeConfig::replay_loop`]
    /// says how it starts). On, pattern-mode instants run through a
    /// precomputed per-position program (`sim/replay.rs`); off, each is a
    /// checked step; the result is the same (for tests and measurements).
    pub fn set_replay_loop(&mut self, on: bool) {
        self.replay_enabled = on;
    }

    /// Whether [`Simulation::run`] would run pattern-mode instants through
    /// the replay loop now: it is on, the calendar replays a pattern (its
    /// program is built) and no installed trace sink takes FIFO events,
    /// which the checked step derives (where run-ahead does not apply).
    pub fn runs_replay(&self) -> bool {
        self.replay_enabled && self.replay.is_some() && !self.core.fifo_observed
    }

    /// Whether [`Simulation::run`] would run ahead now: it is on, no channel
    /// or FIFO joins two domains, at most one domain's ticks can stop the
    /// run, the calendar replays a pattern, and no trace sink is installed.
    pub fn runs_ahead(&self) -> bool {
        self.ahead.enabled && self.ahead.possible && self.sink.is_none()
    }

    /// Turns FIFO operation stamps on or off ([`RuntimeConfig::fifo_stamps`]
    /// says how they start), for the next [`Simulation::set_trace_sink`]. On, an observed
    /// FIFO's `Write`, `Read` and `Consume` events are derived at its
    /// commit from sequence numbers its operations take during the tick
    /// (JIT code keeps its inline FIFO operations); off, the operations
    /// record them as they run. The records are the same (for tests and
    /// measurements).
    pub fn set_fifo_stamps(&mut self, on: bool) {
        self.core.fifo_stamps = on;
    }

    /// Installs the trace sink (records are dropped while none is installed).
    ///
    /// The sink also gets what its [`TraceSink::observation`] asks for
    /// (CDC FIFO events per FIFO and kind, a call per domain edge), and the
    /// runtime produces nothing else.
    pub fn set_trace_sink(&mut self, sink: Box<dyn TraceSink>) {
        let observation = sink.observation(self.core.fifos.len());
        let watch = self.occupancy_watch(&observation);
        let seq = self.core.trace.seq_ptr();
        let units = &self.core.units;
        let rank = |unit: u32| units.get(unit as usize).map_or(u32::MAX, |u| u.rank);
        for (i, f) in self.core.fifos.iter_mut().enumerate() {
            f.set_observed(observation.kinds(i));
            let stamps = self.core.fifo_stamps && !f.kinds.is_empty();
            let ranks = (rank(f.units.0), rank(f.units.1));
            f.set_stamping(if stamps { seq } else { std::ptr::null_mut() }, ranks);
        }
        self.core.fifo_observed = self.core.fifos.iter().any(|f| !f.kinds.is_empty());
        self.core.commits = observation.commits;
        self.core.observe = self.core.fifo_observed || self.core.commits || watch.is_some();
        self.core
            .trace
            .set_occupancy_watch(watch.unwrap_or_default(), self.core.fifos.len());
        self.core.sink_stopped = false;
        self.core.stop_poll = (sink.stop_poll_interval().max(1), 0);
        self.sink = Some(sink);
        self.core.tracing = observation.traces;
    }

    /// Per domain, the FIFOs of `observation.occupancy_watch` with a side
    /// in it, in the domain's tick order (unit rank, then FIFO); `None`
    /// when no FIFO is watched. A FIFO with both sides in one domain is
    /// listed once there.
    fn occupancy_watch(&self, observation: &crate::trace::Observation) -> Option<Vec<Vec<u32>>> {
        let domains = self.calendar.tick_clocks().len();
        let mut by_domain: Vec<Vec<(u32, u32)>> = vec![Vec::new(); domains];
        let rank = |unit: u32| {
            self.core
                .units
                .get(unit as usize)
                .map_or(u32::MAX, |u| u.rank)
        };
        for (i, f) in self.core.fifos.iter().enumerate() {
            if !observation.occupancy_watch.get(i).copied().unwrap_or(false) {
                continue;
            }
            let (wu, ru) = f.units;
            let sides = [(f.writer_domain, rank(wu)), (f.reader_domain, rank(ru))];
            for (k, &(domain, rank)) in sides.iter().enumerate() {
                if k == 1 && domain == f.writer_domain {
                    continue;
                }
                if let Some(d) = by_domain.get_mut(domain as usize) {
                    d.push((rank, i as u32));
                }
            }
        }
        let by_domain: Vec<Vec<u32>> = by_domain
            .into_iter()
            .map(|mut fifos| {
                fifos.sort_unstable();
                fifos.into_iter().map(|(_, f)| f).collect()
            })
            .collect();
        by_domain.iter().any(|d| !d.is_empty()).then_some(by_domain)
    }

    /// Removes and returns the trace sink.
    pub fn take_trace_sink(&mut self) -> Option<Box<dyn TraceSink>> {
        self.core.tracing = false;
        self.core.observe = false;
        self.core.fifo_observed = false;
        self.core.commits = false;
        self.core.trace.set_occupancy_watch(Vec::new(), 0);
        self.core.fifos.iter_mut().for_each(|f| {
            f.set_observed(crate::trace::FifoKinds::NONE);
            f.set_stamping(std::ptr::null_mut(), f.ranks);
        });
        self.sink.take()
    }

    /// The installed trace sink.
    pub fn trace_sink(&mut self) -> Option<&mut (dyn TraceSink + 'static)> {
        self.sink.as_deref_mut()
    }

    /// The common time base of the design's clocks.
    pub fn time_base(&self) -> TimeBase {
        self.calendar.base()
    }

    /// Whether the calendar replays a precomputed hyperperiod.
    pub fn uses_calendar_pattern(&self) -> bool {
        self.calendar.uses_pattern()
    }

    /// The clusters, grouped by domain, each in evaluation order.
    pub fn clusters(&self) -> &[Cluster] {
        &self.clusters
    }

    /// The units of a domain in evaluation order.
    pub fn evaluation_order(&self, domain: DomainId) -> Vec<UnitId> {
        self.plans[domain.0 as usize]
            .units
            .iter()
            .map(|&u| UnitId(u))
            .collect()
    }

    /// A unit's register words (current values).
    pub fn regs(&self, unit: UnitId) -> &[u64] {
        let m = &self.core.units[unit.0 as usize];
        &self.core.cur[m.reg_base..m.reg_base + m.reg_len]
    }

    /// A unit's counters, in declaration order.
    pub fn counters(&self, unit: UnitId) -> &[u64] {
        let m = &self.core.units[unit.0 as usize];
        &self.core.counters[m.counter_base..m.counter_base + m.counter_names.len()]
    }

    /// A unit's counter names, in declaration order.
    pub fn counter_names(&self, unit: UnitId) -> &[String] {
        &self.core.units[unit.0 as usize].counter_names
    }

    /// A unit's instance path.
    pub fn unit_path(&self, unit: UnitId) -> &str {
        &self.core.units[unit.0 as usize].path
    }

    /// The number of edges of a domain processed so far.
    pub fn edges_done(&self, domain: DomainId) -> u64 {
        self.calendar.edges_done(domain.0 as usize)
    }

    /// The number of instants processed so far.
    pub fn instants_done(&self) -> u64 {
        self.instants
    }

    /// The time of the last processed instant (time 0 before the first).
    pub fn now(&self) -> Timestamp {
        Timestamp {
            ticks: if self.instants == 0 {
                0
            } else {
                self.calendar.time_ticks()
            },
            ticks_per_ps: self.core.ticks_per_ps,
        }
    }

    /// Faults of the last stopped instant (empty unless the run stopped on a fault).
    pub fn faults(&self) -> &[Fault] {
        &self.core.faults
    }

    /// A CDC FIFO's registered flags as committed so far.
    pub fn fifo_flags(&self, fifo: FifoId) -> FifoFlags {
        let f = &self.core.fifos[fifo.0 as usize];
        FifoFlags {
            full: f.full(),
            empty: f.empty(),
            output_valid: f.valid(),
        }
    }

    /// The address of a CDC FIFO's hot state, for native ticks that run its
    /// operations as loads and stores (layout: [`crate::ffi::fifo_layout`];
    /// rules: [`crate::ffi::FifoState`]). It is fixed for the simulation's life.
    pub fn fifo_state(&self, fifo: FifoId) -> Option<*mut crate::ffi::FifoState> {
        self.core.fifos.get(fifo.0 as usize).map(CdcFifo::state_ptr)
    }

    /// The send state of a channel output port with exactly one
    /// connection, for native ticks that run its operations as loads and stores (layout and rules:
    /// [`crate::ffi::chan_layout`]); fixed for the simulation's life.
    pub fn chan_send_state(&self, port: OutPort) -> Option<*mut crate::ffi::SendState> {
        self.core.channels.send_state(port.0 as usize)
    }

    /// The connection state of a channel input port with exactly one
    /// connection, for native ticks (as [`Simulation::chan_send_state`]).
    pub fn chan_recv_state(&self, port: InPort) -> Option<*mut crate::ffi::ChanState> {
        self.core.channels.chan_state(port.0 as usize)
    }

    /// The connection states of a channel input port with several
    /// connections (a fan-in), in declaration order, for native ticks that
    /// merge them as [`Simulation`]'s `recv` does (the oldest arrival, ties
    /// to the earlier connection); `None` for a port with one or none.
    pub fn chan_fan_in(&self, port: InPort) -> Option<Vec<*mut crate::ffi::ChanState>> {
        self.core.channels.fan_in_states(port.0 as usize)
    }

    /// Items sent and not yet received, over every connection and CDC FIFO.
    pub fn in_flight(&self) -> u64 {
        let fifos: u64 = self.core.fifos.iter().map(CdcFifo::in_flight).sum();
        self.core.channels.in_flight() + fifos
    }

    /// The exact time of edge `n` of a domain.
    pub fn edge_time(&self, domain: DomainId, n: u64) -> Result<Picos, TimeError> {
        self.clocks[domain.0 as usize].edge_time(n)
    }

    /// Runs until `limit`, `finish`, a fault or a time overflow.
    pub fn run(&mut self, limit: RunLimit) -> Stop {
        self.core.faults.clear();
        self.core.finish = false;
        self.core.stop_requested = false;
        let last_tick = match &limit {
            RunLimit::Edges { domain, count } => {
                if *count == 0 {
                    return Stop::LimitReached;
                }
                match self.calendar.tick_clocks()[domain.0 as usize].edge_ticks(count - 1) {
                    Ok(t) => t,
                    Err(e) => return Stop::TimeOverflow(e),
                }
            }
            RunLimit::Time(t) => match self.calendar.base().floor_ticks(t) {
                Ok(Some(t)) => t,
                Ok(None) => return Stop::LimitReached,
                Err(e) => return Stop::TimeOverflow(e),
            },
            RunLimit::Unbounded => u128::MAX,
        };
        if self.runs_ahead() {
            // Step to the calendar's pattern (a few instants at most), then
            // let the domains run ahead.
            loop {
                if self.calendar.replaying() {
                    match self.run_ahead(last_tick) {
                        Some(stop) => return stop,
                        None => break,
                    }
                }
                match self.calendar.peek_ticks() {
                    Ok(t) if t > last_tick => return Stop::LimitReached,
                    Ok(_) => {}
                    Err(e) => return Stop::TimeOverflow(e),
                }
                match self.step() {
                    Ok(false) => {}
                    Ok(true) => return self.requested_stop(),
                    Err(e) => return Stop::TimeOverflow(e),
                }
            }
        }
        // The replay loop runs the instants when the sink takes no FIFO
        // event (its commit calls it makes itself); it hands back to the
        // checked step below before pattern mode and near an overflow.
        let replayable = self.runs_replay();
        loop {
            if replayable {
                match self.replay(last_tick) {
                    ReplayEnd::Limit => return Stop::LimitReached,
                    ReplayEnd::Stop => return self.requested_stop(),
                    ReplayEnd::Fallback => {}
                }
            }
            match self.calendar.peek_ticks() {
                Ok(t) if t > last_tick => return Stop::LimitReached,
                Ok(_) => {}
                Err(e) => return Stop::TimeOverflow(e),
            }
            match self.step() {
                Ok(false) => {}
                Ok(true) => return self.requested_stop(),
                Err(e) => return Stop::TimeOverflow(e),
            }
        }
    }

    /// Run-ahead (contract §7): runs every instant up to `last_tick` (or to
    /// the instant of a stop) domain by domain, each domain's consecutive
    /// edges in one call ([`Simulation::run_domain`]), in rounds of
    /// `ahead.window` ticks; then moves the calendar to the last instant
    /// run. Exact because no domain reads another's state (no channel or
    /// FIFO between domains, no sink) and the one domain that can stop runs
    /// first in each round: the others then run only to its stop's time.
    /// `None` when the round would pass [`Calendar::run_ahead_limit`]: the
    /// caller's checked steps continue from there.
    fn run_ahead(&mut self, last_tick: u128) -> Option<Stop> {
        loop {
            let now = self.calendar.time_ticks();
            let end = last_tick
                .min(self.ahead.limit)
                .min(now.saturating_add(self.ahead.window));
            let mut bound = end;
            let mut stopped = false;
            for i in 0..self.ahead.order.len() {
                let d = self.ahead.order[i] as usize;
                let from = self.calendar.edges_done(d);
                // Below `ahead.limit`, the count fits (a quarter of u64).
                let to = self.calendar.edges_at_or_before(d, bound) as u64;
                if to <= from {
                    continue;
                }
                let done = self.run_domain(d, from, to - from);
                if self.core.stop_requested && !stopped {
                    // The others run to this instant only (the stoppable
                    // domain runs first, so none has passed it).
                    let clock = self.calendar.tick_clocks()[d];
                    bound = clock.phase + clock.period * u128::from(from + done - 1);
                    stopped = true;
                    // Its faults and `finish` stay recorded; the flag
                    // would end the other domains' loops after one edge.
                    self.core.stop_requested = false;
                }
            }
            self.core.stop_requested |= stopped;
            if let Some(t) = self.calendar.last_instant_at_or_before(bound)
                && t > now
            {
                let moved = self
                    .calendar
                    .seek(t)
                    .expect("run-ahead ends on a replayed instant below its limit");
                self.instants += moved;
            }
            if stopped {
                return Some(self.requested_stop());
            }
            if end == last_tick {
                return Some(Stop::LimitReached);
            }
            if end == self.ahead.limit {
                return None;
            }
        }
    }

    /// Runs `n >= 1` consecutive edges of domain `d` from edge `from`, as
    /// the instant loop would, and returns how many completed (fewer after
    /// a stop): one call of the runner's run-ahead form when the domain has
    /// one runner, else the runners in turn per edge.
    fn run_domain(&mut self, d: usize, from: u64, n: u64) -> u64 {
        let clock = self.calendar.tick_clocks()[d];
        let time = clock.phase + clock.period * u128::from(from);
        let runners = &mut self.runners[self.plans[d].runners.clone()];
        self.core.ahead = true;
        let mut ctx = TickCtx::at_edge(&mut self.core, &self.metas, d as u32, from, time);
        let done = if let [runner] = runners {
            ctx.set_group(runner.metas.start, runner.metas.len(), &runner.first);
            match (runner.native_edges, runner.native) {
                (Some(edges), _) => {
                    let done = ctx.call_native_edges(edges, n);
                    if done == n {
                        // It left the last edge to us (`NativeEdgesFn`).
                        ctx.next_edge();
                    }
                    done
                }
                (None, Some(native)) => {
                    let mut done = 0;
                    loop {
                        ctx.call_native(native);
                        done += 1;
                        if !ctx.next_edge() || done >= n {
                            break done;
                        }
                    }
                }
                (None, None) => runner.tick.tick_edges(&mut ctx, n).clamp(1, n),
            }
        } else {
            let mut done = 0;
            loop {
                for runner in runners.iter_mut() {
                    ctx.set_group(runner.metas.start, runner.metas.len(), &runner.first);
                    match runner.native {
                        Some(native) => ctx.call_native(native),
                        None => runner.tick.tick(&mut ctx),
                    }
                }
                done += 1;
                if !ctx.next_edge() || done >= n {
                    break done;
                }
            }
        };
        // The final register commit a tick that kept its registers in
        // locals relies on (a repeat for the others).
        let core = &mut self.core;
        let regs = core.edges[d].regs.clone();
        let (cur, next) = (&mut core.cur[regs.clone()], &core.next[regs]);
        cur.copy_from_slice(next);
        core.ahead = false;
        done
    }

    /// Why a unit asked to stop: its first fault, else `finish`.
    #[cold]
    fn requested_stop(&self) -> Stop {
        match self.core.faults.first() {
            Some(first) => Stop::Fault(Box::new(first.clone())),
            None if self.core.sink_stopped && !self.core.finish => Stop::SinkStopped,
            None => Stop::Finished,
        }
    }

    /// Continues instant by instant until every channel and FIFO is empty, at
    /// most `max_instants` instants; `finish` does not stop it, a fault does.
    pub fn drain(&mut self, max_instants: u64) -> Drain {
        self.drain_begin();
        let mut done = 0;
        while self.in_flight() > 0 {
            if done == max_instants {
                return Drain::LimitReached {
                    in_flight: self.in_flight(),
                };
            }
            done += 1;
            if let Some(stop) = self.drain_step() {
                return Drain::Stopped(stop);
            }
        }
        Drain::Drained { instants: done }
    }

    /// Starts a drain ([`Simulation::drain`]): the stop the run ended with
    /// is forgotten. A parallel run's workers drain in step with
    /// [`Simulation::drain_begin`] and [`Simulation::drain_step`], their
    /// coordinator summing [`Simulation::in_flight`].
    pub fn drain_begin(&mut self) {
        self.core.faults.clear();
        self.core.finish = false;
        self.core.stop_requested = false;
    }

    /// One instant of a drain; the stop that ends the drain, if any (a
    /// fault, a stopped sink, a time overflow; not `finish`).
    pub fn drain_step(&mut self) -> Option<Stop> {
        if let Err(e) = self.calendar.peek_ticks() {
            return Some(Stop::TimeOverflow(e));
        }
        match self.step() {
            Ok(false) => None,
            // `finish` is the stop the drain continues after (contract
            // §6): a unit that finishes again (a held `if done { finish;
            // }`) does not end the drain; a fault or a stopped sink does.
            Ok(true) if self.core.faults.is_empty() && !self.core.sink_stopped => {
                self.core.finish = false;
                self.core.stop_requested = false;
                None
            }
            Ok(true) => Some(self.requested_stop()),
            Err(e) => Some(Stop::TimeOverflow(e)),
        }
    }

    /// Commits the FIFOs touched by the instant's domains, searching them per
    /// instant: merge mode, and runs whose sink observes commits.
    #[inline(never)]
    fn commit_fifos(calendar: &Calendar, core: &mut Core, plans: &[DomainPlan], instant: u64) {
        let domains = calendar.domains();
        for &d in domains {
            for &f in &plans[d as usize].fifos {
                let fifo = &mut core.fifos[f as usize];
                if fifo.committed_instant == instant {
                    continue;
                }
                fifo.committed_instant = instant;
                let has_edge = |domain: u32| domains.contains(&domain);
                let (w, r) = (has_edge(fifo.writer_domain), has_edge(fifo.reader_domain));
                if !fifo.kinds.is_empty() {
                    let side = |edge: bool, domain: u32, unit: u32| {
                        edge.then(|| (calendar.cycle(domain as usize), unit))
                    };
                    let (wd, rd, (wu, ru)) = (fifo.writer_domain, fifo.reader_domain, fifo.units);
                    fifo.commit_observed(f, side(w, wd, wu), side(r, rd, ru), &mut core.trace);
                } else {
                    fifo.commit(w, r);
                }
            }
        }
    }

    /// The instant's FIFO commits from the pattern's precomputed list
    /// (`commits`: which FIFOs, which sides have an edge; the order of
    /// [`Simulation::commit_fifos`]) in a run whose sink observes some
    /// FIFO: searching the domains' FIFOs per instant was a tenth of a
    /// recorded run's instructions.
    #[inline(never)]
    fn commit_fifos_observed(calendar: &Calendar, core: &mut Core, commits: &[FifoCommit]) {
        for c in commits {
            let fifo = &mut core.fifos[c.fifo as usize];
            if fifo.kinds.is_empty() {
                fifo.commit(c.writer, c.reader);
                continue;
            }
            let (wd, rd, (wu, ru)) = (fifo.writer_domain, fifo.reader_domain, fifo.units);
            let writer = c.writer.then(|| (calendar.cycle(wd as usize), wu));
            let reader = c.reader.then(|| (calendar.cycle(rd as usize), ru));
            fifo.commit_observed(c.fifo, writer, reader, &mut core.trace);
        }
    }

    /// Processes one instant; returns whether a unit asked to stop (fault or `finish`).
    #[inline(always)]
    fn step(&mut self) -> Result<bool, TimeError> {
        self.calendar.advance()?;
        let time = self.calendar.time_ticks();
        let Simulation {
            calendar,
            core,
            plans,
            runners,
            metas,
            fifo_program,
            sink,
            instants,
            any_extras,
            ..
        } = self;
        let domains = calendar.domains();
        for &d in domains {
            let plan = &plans[d as usize];
            // One context per domain edge; only the unit fields change per runner.
            let mut ctx =
                TickCtx::at_edge(&mut *core, &metas[..], d, calendar.cycle(d as usize), time);
            for runner in &mut runners[plan.runners.clone()] {
                ctx.set_group(runner.metas.start, runner.metas.len(), &runner.first);
                match runner.native {
                    Some(native) => ctx.call_native(native),
                    None => runner.tick.tick(&mut ctx),
                }
            }
            // Only this domain's units read its registers, so they can commit
            // now, before the next domain's units run (same result as after).
            let regs = plan.regs.clone();
            let (cur, next) = (&mut core.cur[regs.clone()], &core.next[regs]);
            if cur.len() <= 8 {
                // Small domains: a word loop beats a memmove call.
                for (c, n) in cur.iter_mut().zip(next) {
                    *c = *n;
                }
            } else {
                cur.copy_from_slice(next);
            }
        }
        if !core.observe && !core.trace.is_empty() {
            let stamp = Timestamp {
                ticks: time,
                ticks_per_ps: core.ticks_per_ps,
            };
            match sink {
                Some(sink) => core.trace.flush(stamp, sink.as_mut()),
                None => core.trace.clear(),
            }
        }
        if *any_extras {
            for &d in domains {
                for &s in &plans[d as usize].stages {
                    core.stages[s as usize].commit();
                }
            }
            match fifo_program.as_ref().zip(calendar.pattern_position()) {
                Some((program, position)) if !core.fifo_observed => {
                    for c in &program.commits[program.spans[position].clone()] {
                        core.fifos[c.fifo as usize].commit(c.writer, c.reader);
                    }
                }
                Some((program, position)) => {
                    let commits = &program.commits[program.spans[position].clone()];
                    Self::commit_fifos_observed(calendar, core, commits);
                }
                None => Self::commit_fifos(calendar, core, plans, *instants),
            }
        }
        match sink {
            Some(sink) => {
                if core.observe {
                    let stamp = Timestamp {
                        ticks: time,
                        ticks_per_ps: core.ticks_per_ps,
                    };
                    let edges = domains.iter().map(|&d| (d, calendar.cycle(d as usize)));
                    core.trace.flush_observed(
                        stamp,
                        edges,
                        core.commits,
                        &core.fifos,
                        sink.as_mut(),
                    );
                }
                if core.stop_poll_due() && sink.stop_requested() {
                    core.sink_stopped = true;
                    core.stop_requested = true;
                }
            }
            None => core.trace.clear(),
        }
        *instants += 1;
        Ok(core.stop_requested)
    }
}

#[cfg(test)]
mod tests {
    //! The replay loop against the checked step: the same design run in
    //! pattern mode (replayed) and in merge mode (checked steps only) must
    //! agree at every stop, however the run is split.

    use super::*;
    use crate::calendar::CalendarConfig;
    use crate::trace::{OwnedRecord, TraceRecord};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A sink whose records the test reads while the simulation owns it.
    #[derive(Clone, Default)]
    pub(super) struct Shared(pub(super) Rc<RefCell<Vec<OwnedRecord>>>);

    impl TraceSink for Shared {
        fn record(&mut self, r: &TraceRecord<'_>) {
            let mut memory = crate::trace::MemorySink::default();
            memory.record(r);
            self.0.borrow_mut().extend(memory.records);
        }
    }

    pub(super) fn clock(period: i128, phase: i128) -> Clock {
        Clock::new(Picos::from_integer(period), Picos::from_integer(phase)).expect("clock")
    }

    /// Three phased domains (so some instants precede pattern mode), units
    /// that fold their cycle and time into registers and trace every 97th
    /// edge, one of which finishes at its cycle `finish_at`.
    fn design(pattern_limit: usize, finish_at: u64, sink: Shared) -> (Simulation, [DomainId; 3]) {
        let mut b = DesignBuilder::new();
        b.calendar_config(CalendarConfig { pattern_limit });
        let d = [
            b.domain("a", clock(700, 350)),
            b.domain("b", clock(1100, 0)),
            b.domain("c", clock(1650, 1299)),
        ];
        for (i, &dom) in d.iter().enumerate() {
            for k in 0..2u64 {
                let u = b.unit(&format!("top.u{i}{k}"), dom, &[k, 0]);
                let finishes = i == 2 && k == 1;
                b.set_tick(u, move |ctx: &mut TickCtx<'_>| {
                    let mix = ctx
                        .reg(0)
                        .rotate_left(7)
                        .wrapping_add(ctx.cycle())
                        .wrapping_add(ctx.time().ticks as u64);
                    ctx.set_reg(0, mix);
                    ctx.set_reg(1, ctx.reg(1) + 1);
                    if ctx.cycle().is_multiple_of(97) {
                        ctx.trace(k as u32, &[ctx.cycle()]);
                    }
                    if finishes && ctx.cycle() == finish_at {
                        ctx.finish();
                    }
                })
                .expect("unit");
            }
        }
        let mut sim = b.build().expect("design");
        sim.set_trace_sink(Box::new(sink));
        (sim, d)
    }

    /// Everything a stop can be told apart by.
    fn snapshot(sim: &Simulation, d: &[DomainId; 3]) -> (Vec<u64>, Vec<u64>, u64, u128) {
        let regs = (0..6).flat_map(|u| sim.regs(UnitId(u)).to_vec()).collect();
        let edges = d.iter().map(|&x| sim.edges_done(x)).collect();
        (regs, edges, sim.instants_done(), sim.now().ticks)
    }

    #[test]
    fn replay_matches_checked_steps_across_splits_and_finish() {
        let (replayed_sink, checked_sink) = (Shared::default(), Shared::default());
        let pattern_limit = CalendarConfig::default().pattern_limit;
        let (mut replayed, d) = design(pattern_limit, 5_000, replayed_sink.clone());
        let (mut checked, _) = design(0, 5_000, checked_sink.clone());
        assert!(replayed.uses_calendar_pattern());
        assert!(!checked.uses_calendar_pattern());
        let limits = [
            RunLimit::Time(Picos::from_integer(0)),
            RunLimit::Time(Picos::from_integer(1299)),
            RunLimit::Edges {
                domain: d[1],
                count: 3,
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
            RunLimit::Time(Picos::from_integer(3_000_000)),
            RunLimit::Unbounded,
        ];
        for limit in limits {
            let (a, b) = (replayed.run(limit.clone()), checked.run(limit.clone()));
            assert_eq!(a, b, "{limit:?}");
            assert_eq!(snapshot(&replayed, &d), snapshot(&checked, &d), "{limit:?}");
        }
        assert_eq!(replayed.edges_done(d[2]), 5_001, "finished on its edge");
        assert!(replayed_sink.0.borrow().len() > 100);
        assert_eq!(*replayed_sink.0.borrow(), *checked_sink.0.borrow());
    }
}

#[cfg(test)]
mod run_ahead_tests {
    //! Run-ahead against the instant loop: the same design run with
    //! run-ahead on and off must agree at every stop, however the run is
    //! split, whether a unit finishes or faults, and when a sink is
    //! attached afterwards.

    use super::tests::{Shared, clock};
    use super::*;
    use crate::design::{FifoSpec, StageId};
    use crate::fifo::ReadPort;

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

    /// Folds the edge (cycle, time) into register 0 and counts in register 1.
    fn fold(ctx: &mut TickCtx<'_>) {
        let mix = ctx
            .reg(0)
            .rotate_left(7)
            .wrapping_add(ctx.cycle())
            .wrapping_add(ctx.time().ticks as u64);
        ctx.set_reg(0, mix);
        ctx.set_reg(1, ctx.reg(1) + 1);
    }

    /// How the stopping domain `c` ends the run at its cycle `at`.
    #[derive(Clone, Copy, Debug)]
    enum Ending {
        Finish(u64),
        Fault(u64),
        Never,
    }

    /// Three phased domains: `a` with a latency-1 channel between its two
    /// units, `b` with a stage register and a CDC FIFO between its two
    /// units (both in `b`), neither able to stop; `c`, whose second unit
    /// ends the run as `ending` says (so it alone can stop), or `c` also
    /// quiet with `Never`. With `two_stoppers`, `a` can stop too.
    fn design(ending: Ending, two_stoppers: bool) -> (Simulation, [DomainId; 3]) {
        let mut b = DesignBuilder::new();
        let d = [
            b.domain("a", clock(700, 350)),
            b.domain("b", clock(1100, 0)),
            b.domain("c", clock(1650, 1299)),
        ];
        let u: Vec<Vec<UnitId>> = d
            .iter()
            .enumerate()
            .map(|(i, &dom)| {
                (0..2)
                    .map(|k| b.unit(&format!("top.u{i}{k}"), dom, &[k, 0, 0]))
                    .collect()
            })
            .collect();
        // a: u00 sends its count on a latency-1 channel to u01.
        let tx = b.output(u[0][0], "tx", 1, 1);
        let rx = b.input(u[0][1], "rx", 1);
        b.connect(tx, rx, 1, 2);
        let a0 = move |ctx: &mut TickCtx<'_>| {
            fold(ctx);
            if !ctx.cycle().is_multiple_of(3) {
                ctx.try_send(tx, &[ctx.reg(1)]);
            }
        };
        let a1 = move |ctx: &mut TickCtx<'_>| {
            fold(ctx);
            if ctx.cycle() % 4 != 1
                && let Some(v) = ctx.recv_word(rx)
            {
                ctx.set_reg(2, ctx.reg(2).wrapping_mul(31).wrapping_add(v));
            }
        };
        if two_stoppers {
            b.set_tick(u[0][0], a0).expect("unit");
            b.set_tick(u[0][1], a1).expect("unit");
        } else {
            b.set_tick(u[0][0], Quiet(a0)).expect("unit");
            b.set_tick(u[0][1], Quiet(a1)).expect("unit");
        }
        // b: a stage register in u10; a FIFO from u10 to u11 (one group tick).
        let stage: StageId = b.stage(u[1][0], "s", 2, 1);
        let fifo = b.fifo(FifoSpec {
            name: "top.f".into(),
            writer: u[1][0],
            reader: u[1][1],
            depth: 4,
            sync: 2,
            width: 1,
            read_port: ReadPort::Registered,
        });
        b.set_group_tick(
            &[u[1][0], u[1][1]],
            Quiet(move |ctx: &mut TickCtx<'_>| {
                fold(ctx);
                let c = ctx.cycle();
                if ctx.stage_valid(stage, 0) {
                    let v = ctx.stage_read(stage, 0)[0];
                    ctx.set_reg(2, ctx.reg(2) ^ v);
                }
                if !c.is_multiple_of(5) {
                    ctx.stage_write(stage, (c % 2) as usize, &[c * 3]);
                }
                if c % 7 != 3 {
                    ctx.fifo_try_send(fifo, &[c]);
                }
                ctx.enter(1);
                fold(ctx);
                let mut item = [0];
                if ctx.fifo_take(fifo, &mut item) {
                    ctx.set_reg(2, ctx.reg(2).wrapping_add(item[0]));
                }
                if ctx.cycle() % 3 != 2 {
                    ctx.fifo_request(fifo);
                }
            }),
        )
        .expect("group");
        // c: u20 quiet; u21 ends the run.
        b.set_tick(u[2][0], Quiet(fold)).expect("unit");
        let site = b.fault_site(u[2][1], FaultKind::Assertion, "assert at t.chr:1:1");
        let c1 = move |ctx: &mut TickCtx<'_>| {
            fold(ctx);
            if ctx.cycle().is_multiple_of(97) {
                ctx.trace(1, &[ctx.cycle()]);
            }
            // At `at`, and then every 50,000 edges, so every run after
            // the first stop ends too.
            let c = ctx.cycle();
            match ending {
                Ending::Finish(at) if c == at || c % 50_000 == 49_999 => ctx.finish(),
                Ending::Fault(at) if c == at || c % 50_000 == 49_999 => ctx.raise(site),
                _ => {}
            }
        };
        match ending {
            Ending::Never => b.set_tick(u[2][1], Quiet(c1)).expect("unit"),
            _ => b.set_tick(u[2][1], c1).expect("unit"),
        }
        (b.build().expect("design"), d)
    }

    type Snapshot = (Vec<u64>, Vec<u64>, u64, u128, u64, Vec<FifoFlags>);

    /// Everything a stop can be told apart by.
    fn snapshot(sim: &Simulation, d: &[DomainId; 3]) -> Snapshot {
        let regs = (0..6).flat_map(|u| sim.regs(UnitId(u)).to_vec()).collect();
        let edges = d.iter().map(|&x| sim.edges_done(x)).collect();
        (
            regs,
            edges,
            sim.instants_done(),
            sim.now().ticks,
            sim.in_flight(),
            vec![sim.fifo_flags(FifoId(0))],
        )
    }

    fn limits(d: &[DomainId; 3]) -> Vec<RunLimit> {
        vec![
            RunLimit::Time(Picos::from_integer(0)),
            RunLimit::Time(Picos::from_integer(1299)),
            RunLimit::Edges {
                domain: d[1],
                count: 3,
            },
            RunLimit::Time(Picos::new(123_457, 3)),
            RunLimit::Edges {
                domain: d[0],
                count: 4_001,
            },
            RunLimit::Edges {
                domain: d[0],
                count: 10,
            },
            RunLimit::Edges {
                domain: d[2],
                count: 150_001,
            },
            RunLimit::Time(Picos::from_integer(300_000_000)),
            RunLimit::Unbounded,
        ]
    }

    /// Runs both through the limits, comparing after each; then attaches
    /// sinks and runs on (the per-instant loop, from where run-ahead left
    /// the calendar), comparing the records.
    fn compare(ending: Ending) {
        let (mut ahead, d) = design(ending, false);
        let (mut plain, _) = design(ending, false);
        plain.set_run_ahead(false);
        assert!(ahead.runs_ahead(), "{ending:?}");
        assert!(!plain.runs_ahead());
        for limit in limits(&d) {
            if limit == RunLimit::Unbounded && matches!(ending, Ending::Never) {
                continue;
            }
            let (x, y) = (ahead.run(limit.clone()), plain.run(limit.clone()));
            assert_eq!(x, y, "{ending:?} {limit:?}");
            assert_eq!(ahead.faults(), plain.faults(), "{ending:?} {limit:?}");
            assert_eq!(
                snapshot(&ahead, &d),
                snapshot(&plain, &d),
                "{ending:?} {limit:?}"
            );
        }
        let (sa, sp) = (Shared::default(), Shared::default());
        ahead.set_trace_sink(Box::new(sa.clone()));
        plain.set_trace_sink(Box::new(sp.clone()));
        assert!(!ahead.runs_ahead(), "a sink turns run-ahead off");
        let limit = RunLimit::Time(Picos::from_integer(400_000_000));
        assert_eq!(ahead.run(limit.clone()), plain.run(limit));
        assert_eq!(snapshot(&ahead, &d), snapshot(&plain, &d));
        assert_eq!(*sa.0.borrow(), *sp.0.borrow());
        assert_eq!(ahead.drain(1_000), plain.drain(1_000));
        assert_eq!(snapshot(&ahead, &d), snapshot(&plain, &d));
    }

    #[test]
    fn run_ahead_matches_the_instant_loop_across_splits() {
        compare(Ending::Never);
    }

    #[test]
    fn run_ahead_stops_on_the_exact_instant_of_a_finish() {
        // Within the first round of run-ahead, at a round boundary region,
        // and far in.
        for at in [0, 2, 5_000, 65_536, 140_000] {
            compare(Ending::Finish(at));
        }
    }

    #[test]
    fn run_ahead_stops_on_the_exact_instant_of_a_fault() {
        for at in [1, 77_777] {
            compare(Ending::Fault(at));
        }
    }

    /// A native run-ahead tick through the `ffi` entry points: counts its
    /// edges and finishes at its 1,000th, calling `chronon_next_edge`
    /// between two edges.
    unsafe extern "C" fn native_edges(
        ctx: *mut core::ffi::c_void,
        _: *mut core::ffi::c_void,
        n: u64,
    ) -> u64 {
        let mut done = 0;
        loop {
            // SAFETY: `ctx` is the running tick's context (NativeEdges::new).
            unsafe {
                crate::ffi::chronon_count(ctx, 0, 1);
                if (*ctx.cast::<TickCtx<'_>>()).cycle() == 999 {
                    crate::ffi::chronon_finish(ctx);
                }
            }
            done += 1;
            if done >= n {
                return done;
            }
            // SAFETY: as above.
            if unsafe { crate::ffi::chronon_next_edge(ctx) } != crate::ffi::CHRONON_TRUE {
                return done;
            }
        }
    }

    /// The same tick, as a native group function (one edge).
    unsafe extern "C" fn native_edge(
        ctx: *mut core::ffi::c_void,
        _: *mut core::ffi::c_void,
    ) -> u32 {
        // SAFETY: as in `native_edges`.
        unsafe {
            crate::ffi::chronon_count(ctx, 0, 1);
            if (*ctx.cast::<TickCtx<'_>>()).cycle() == 999 {
                crate::ffi::chronon_finish(ctx);
            }
        }
        0
    }

    struct NativeCounter;

    impl Tick for NativeCounter {
        fn tick(&mut self, ctx: &mut TickCtx<'_>) {
            ctx.call_native(self.native().expect("native"));
        }
        fn native(&self) -> Option<crate::tick::NativeGroup> {
            // SAFETY: `native_edge` does what `tick` does, through `ffi`.
            Some(unsafe { crate::tick::NativeGroup::new(native_edge, core::ptr::null_mut()) })
        }
        fn native_edges(&self) -> Option<crate::tick::NativeEdges> {
            // SAFETY: `native_edges` runs `native_edge` per edge, then
            // `chronon_next_edge`.
            Some(unsafe { crate::tick::NativeEdges::new(native_edges, core::ptr::null_mut()) })
        }
    }

    #[test]
    fn a_native_run_ahead_tick_counts_and_finishes_on_its_edge() {
        let build = || {
            let mut b = DesignBuilder::new();
            let d = b.domain("d", clock(1000, 0));
            let e = b.domain("e", clock(700, 3));
            let u = b.unit("top.n", d, &[]);
            b.counter(u, "edges").expect("counter");
            b.set_tick(u, NativeCounter).expect("unit");
            let v = b.unit("top.q", e, &[0, 0]);
            b.set_tick(v, Quiet(fold)).expect("unit");
            (b.build().expect("design"), u, v)
        };
        let (mut ahead, u, v) = build();
        let (mut plain, _, _) = build();
        plain.set_run_ahead(false);
        assert!(ahead.runs_ahead());
        for limit in [
            RunLimit::Time(Picos::from_integer(77_777)),
            RunLimit::Unbounded,
            RunLimit::Time(Picos::from_integer(5_000_000)),
        ] {
            assert_eq!(
                ahead.run(limit.clone()),
                plain.run(limit.clone()),
                "{limit:?}"
            );
            assert_eq!(ahead.counters(u), plain.counters(u), "{limit:?}");
            assert_eq!(ahead.regs(v), plain.regs(v), "{limit:?}");
            assert_eq!(ahead.instants_done(), plain.instants_done(), "{limit:?}");
        }
        assert_eq!(ahead.counters(u), [5_001]);
    }

    /// Near the end of the time range, run-ahead hands over to the checked
    /// steps, which report the overflow at the same instant as the
    /// instant loop.
    #[test]
    fn run_ahead_reaches_a_time_overflow_like_the_instant_loop() {
        let build = || {
            let mut b = DesignBuilder::new();
            let huge = |shift: u32, phase: i128| {
                Clock::new(
                    Picos::from_integer(1i128 << shift),
                    Picos::from_integer(phase),
                )
                .expect("clock")
            };
            let d = b.domain("d", huge(120, 0));
            let e = b.domain("e", huge(119, 5));
            for (path, dom) in [("top.d", d), ("top.e", e)] {
                let u = b.unit(path, dom, &[0, 0]);
                b.set_tick(u, Quiet(fold)).expect("unit");
            }
            (b.build().expect("design"), [d, e])
        };
        let (mut ahead, d) = build();
        let (mut plain, _) = build();
        plain.set_run_ahead(false);
        assert!(ahead.runs_ahead());
        let stop = ahead.run(RunLimit::Unbounded);
        assert!(matches!(stop, Stop::TimeOverflow(_)), "{stop:?}");
        assert_eq!(stop, plain.run(RunLimit::Unbounded));
        let regs = |sim: &Simulation| [sim.regs(UnitId(0)).to_vec(), sim.regs(UnitId(1)).to_vec()];
        assert_eq!(regs(&ahead), regs(&plain));
        for x in d {
            assert_eq!(ahead.edges_done(x), plain.edges_done(x));
        }
        assert_eq!(ahead.instants_done(), plain.instants_done());
        assert_eq!(ahead.now(), plain.now());
    }

    #[test]
    fn two_domains_that_can_stop_keep_the_instant_loop() {
        let (sim, _) = design(Ending::Finish(10), true);
        assert!(!sim.runs_ahead());
    }
}

#[cfg(test)]
mod observation_tests {
    //! A sink gets what its `observation` asks for and nothing else: the
    //! events of a selective sink are exactly those of a sink that takes
    //! everything, filtered; commit calls and records do not depend on the
    //! FIFO selection (a sink that takes no FIFO event runs in the replay
    //! loop, which makes the commit calls itself).

    use super::*;
    use crate::design::FifoSpec;
    use crate::fifo::ReadPort;
    use crate::trace::{FifoEvent, FifoEventKind, FifoKinds, Observation, TraceRecord};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Everything a sink was handed, in order, as text.
    #[derive(Clone)]
    struct Log {
        observation: Observation,
        seen: Rc<RefCell<Vec<String>>>,
    }

    impl TraceSink for Log {
        fn record(&mut self, r: &TraceRecord<'_>) {
            let line = format!("T {} {} {} {:?}", r.unit, r.cycle, r.time.ticks, r.args);
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

    /// Writer at 3 ns and reader at 2 ns (phase 0.5 ns) around two CDC
    /// FIFOs, one registered and one FWFT; both sides trace. Returns the
    /// simulation with `observation`'s sink installed, and its log.
    fn run(observation: Observation) -> (Simulation, Vec<String>) {
        let mut b = DesignBuilder::new();
        let clock = |p: i128, ph: i128| {
            Clock::new(Picos::from_integer(p), Picos::new(ph, 2)).expect("clock")
        };
        let wd = b.domain("w", clock(3000, 0));
        let rd = b.domain("r", clock(2000, 1000));
        let w = b.unit("top.w", wd, &[0]);
        let r = b.unit("top.r", rd, &[0]);
        let fifo = |b: &mut DesignBuilder, name: &str, read_port| {
            b.fifo(FifoSpec {
                name: name.into(),
                writer: w,
                reader: r,
                depth: 4,
                sync: 2,
                width: 1,
                read_port,
            })
        };
        let reg = fifo(&mut b, "top.reg", ReadPort::Registered);
        let fwft = fifo(&mut b, "top.fwft", ReadPort::Fwft);
        b.set_tick(w, move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            // Bursts fill the FIFOs (full flags), pauses drain them.
            if n % 16 < 11 {
                ctx.fifo_try_send(reg, &[n]);
                ctx.fifo_try_send(fwft, &[n]);
            }
            ctx.trace(0, &[n]);
            ctx.set_reg(0, n + 1);
        })
        .expect("writer");
        b.set_tick(r, move |ctx: &mut TickCtx<'_>| {
            let n = ctx.reg(0);
            let mut v = [0];
            if !n.is_multiple_of(3) {
                ctx.fifo_take(reg, &mut v);
                ctx.fifo_request(reg);
                ctx.fifo_recv(fwft, &mut v);
            }
            ctx.trace(1, &[v[0]]);
            ctx.set_reg(0, n + 1);
        })
        .expect("reader");
        let mut sim = b.build().expect("valid design");
        assert!(sim.uses_calendar_pattern());
        let seen = Rc::new(RefCell::new(Vec::new()));
        sim.set_trace_sink(Box::new(Log {
            observation,
            seen: seen.clone(),
        }));
        let stop = sim.run(RunLimit::Edges {
            domain: wd,
            count: 400,
        });
        assert_eq!(stop, Stop::LimitReached);
        let log = seen.borrow().clone();
        (sim, log)
    }

    #[test]
    fn a_sink_gets_exactly_what_it_asks_for() {
        let (everything, all) = run(Observation::everything(2));
        let kinds = |k: &str| all.iter().filter(|l| l.contains(k)).count();
        // The design exercises every kind on some FIFO.
        for kind in FifoEventKind::ALL {
            assert!(kinds(&format!("kind: {kind:?},")) > 0, "no {kind:?} event");
        }
        assert!(all.iter().any(|l| l.starts_with("C ")));

        // Some kinds of the FWFT FIFO only: the same lines, less the others.
        let some = FifoKinds::NONE
            .with(FifoEventKind::Visible)
            .with(FifoEventKind::Consume)
            .with(FifoEventKind::Empty);
        let selective = Observation {
            traces: true,
            fifo: vec![FifoKinds::NONE, some],
            commits: true,
            occupancy_watch: Vec::new(),
        };
        let (selected, got) = run(selective);
        let expected: Vec<String> = all
            .iter()
            .filter(|l| {
                !l.starts_with("F ")
                    || (l.contains("fifo: 1,")
                        && FifoEventKind::ALL
                            .iter()
                            .any(|&k| some.contains(k) && l.contains(&format!("kind: {k:?},"))))
            })
            .cloned()
            .collect();
        assert_eq!(got, expected);
        // The transaction ids of the kept events did not depend on the rest.
        assert!(got.iter().any(|l| l.contains("kind: Consume,")));

        // No FIFO event: the replay loop, with its own commit calls; then
        // commits only and records only.
        let no_fifo = |traces, commits| Observation {
            traces,
            fifo: Vec::new(),
            commits,
            occupancy_watch: Vec::new(),
        };
        let keep = |t: bool, c: bool| -> Vec<String> {
            all.iter()
                .filter(|l| (t && l.starts_with("T ")) || (c && l.starts_with("C ")))
                .cloned()
                .collect()
        };
        for (t, c) in [(true, true), (false, true), (true, false), (false, false)] {
            let (sim, got) = run(no_fifo(t, c));
            assert_eq!(got, keep(t, c), "traces {t}, commits {c}");
            // The simulation itself is the same whatever is observed.
            assert_eq!(sim.core.cur, everything.core.cur);
            assert_eq!(sim.instants, everything.instants);
        }
        assert_eq!(selected.core.cur, everything.core.cur);
    }

    /// A FIFO event: FIFO, kind, time (ticks), occupancy.
    type Event = (u32, FifoEventKind, u128, u32);
    /// A watched occupancy change: FIFO, time (ticks), occupancy.
    type Change = (u32, u128, u32);

    /// Keeps FIFO events and watched occupancy changes.
    struct Occupancies {
        observation: Observation,
        events: Rc<RefCell<Vec<Event>>>,
        watched: Rc<RefCell<Vec<Change>>>,
    }

    impl TraceSink for Occupancies {
        fn record(&mut self, _r: &TraceRecord<'_>) {}
        fn observation(&self, _fifos: usize) -> Observation {
            self.observation.clone()
        }
        fn fifo(&mut self, e: &FifoEvent) {
            let event = (e.fifo, e.kind, e.time.ticks, e.occupancy);
            self.events.borrow_mut().push(event);
        }
        fn fifo_occupancy(&mut self, fifo: u32, _domain: u32, time: Timestamp, occupancy: u32) {
            let change = (fifo, time.ticks, occupancy);
            self.watched.borrow_mut().push(change);
        }
    }

    /// FIFO events and watched occupancy changes of a run.
    type Run = (Vec<Event>, Vec<Change>);

    /// Writers at 3 ns and readers at 2 ns (phase `reader_phase` ps)
    /// around three CDC FIFOs, each between its own two units: registered
    /// with `take` before `request`, registered with `request` before
    /// `take`, and FWFT; the writer's domain declared first or second.
    /// Returns the sink's FIFO events and watched changes, and whether the
    /// FIFOs ran unobserved.
    fn run_three(observation: Observation, reader_phase: i128, writer_first: bool) -> (Run, bool) {
        let mut b = DesignBuilder::new();
        let clock = |p: i128, ph: i128| {
            Clock::new(Picos::from_integer(p), Picos::from_integer(ph)).expect("clock")
        };
        let (wd, rd) = if writer_first {
            let wd = b.domain("w", clock(3000, 0));
            (wd, b.domain("r", clock(2000, reader_phase)))
        } else {
            let rd = b.domain("r", clock(2000, reader_phase));
            (b.domain("w", clock(3000, 0)), rd)
        };
        let ports = [ReadPort::Registered, ReadPort::Registered, ReadPort::Fwft];
        let mut fifos = Vec::new();
        for (i, read_port) in ports.into_iter().enumerate() {
            let w = b.unit(&format!("top.w{i}"), wd, &[0]);
            let r = b.unit(&format!("top.r{i}"), rd, &[0]);
            let fifo = b.fifo(FifoSpec {
                name: format!("top.f{i}"),
                writer: w,
                reader: r,
                depth: 8,
                sync: 2,
                width: 1,
                read_port,
            });
            fifos.push((w, r, fifo));
        }
        for (i, &(w, r, fifo)) in fifos.iter().enumerate() {
            let burst = 9 + i as u64;
            b.set_tick(w, move |ctx: &mut TickCtx<'_>| {
                let n = ctx.reg(0);
                // Bursts fill the FIFOs (full flags), pauses drain them.
                if n % 16 < burst {
                    ctx.fifo_try_send(fifo, &[n]);
                }
                ctx.set_reg(0, n + 1);
            })
            .expect("writer");
            b.set_tick(r, move |ctx: &mut TickCtx<'_>| {
                let n = ctx.reg(0);
                let mut v = [0];
                // Reads at the edges that meet the writer's (n % 3 == 0
                // with phase 0) too.
                if n % 3 != 1 {
                    match i {
                        0 => {
                            ctx.fifo_take(fifo, &mut v);
                            ctx.fifo_request(fifo);
                        }
                        1 => {
                            ctx.fifo_request(fifo);
                            ctx.fifo_take(fifo, &mut v);
                        }
                        _ => {
                            ctx.fifo_recv(fifo, &mut v);
                        }
                    }
                }
                ctx.set_reg(0, n + 1);
            })
            .expect("reader");
        }
        let mut sim = b.build().expect("valid design");
        let events = Rc::new(RefCell::new(Vec::new()));
        let watched = Rc::new(RefCell::new(Vec::new()));
        sim.set_trace_sink(Box::new(Occupancies {
            observation,
            events: events.clone(),
            watched: watched.clone(),
        }));
        let unobserved = !sim.core.fifo_observed;
        let stop = sim.run(RunLimit::Edges {
            domain: wd,
            count: 400,
        });
        assert_eq!(stop, Stop::LimitReached);
        let run = (events.borrow().clone(), watched.borrow().clone());
        (run, unobserved)
    }

    /// The occupancy watch hands over, per FIFO and instant where it
    /// changed, the committed occupancy at the end of the instant: the
    /// same in both declaration orders, equal to a model counting the
    /// events' writes minus reads (registered) or consumes (FWFT) per
    /// instant, whether the FIFOs' events are observed too or not. Where
    /// the sides' edges never coincide, that is exactly the changes of the
    /// events' occupancies (what VCD showed before the watch).
    #[test]
    fn occupancy_watch_is_the_committed_occupancy_per_instant() {
        let with_events = Observation {
            occupancy_watch: vec![true; 3],
            ..Observation::everything(3)
        };
        let alone = Observation {
            occupancy_watch: vec![true; 3],
            ..Observation::traces_only()
        };
        for phase in [500, 0] {
            let mut seen = Vec::new();
            for writer_first in [true, false] {
                let ((events, watched), unobserved) =
                    run_three(with_events.clone(), phase, writer_first);
                assert!(!unobserved);
                let ((none, watched_alone), unobserved) =
                    run_three(alone.clone(), phase, writer_first);
                assert!(unobserved && none.is_empty());
                assert_eq!(watched_alone, watched, "phase {phase}");
                // The model: committed writes minus consumes, per instant.
                let mut model = Vec::new();
                let mut count = [0i64; 3];
                let mut last = [0i64; 3];
                let mut both_sides = 0;
                let mut instants: Vec<u128> = events.iter().map(|e| e.2).collect();
                instants.dedup();
                for &t in &instants {
                    let mut sides = [[false; 2]; 3];
                    for &(f, kind, _, _) in events.iter().filter(|e| e.2 == t) {
                        let f = f as usize;
                        let consume = if f == 2 {
                            FifoEventKind::Consume
                        } else {
                            FifoEventKind::Read
                        };
                        if kind == FifoEventKind::Write {
                            count[f] += 1;
                            sides[f][0] = true;
                        } else if kind == consume {
                            count[f] -= 1;
                            sides[f][1] = true;
                        }
                    }
                    both_sides += sides.iter().filter(|s| s[0] && s[1]).count();
                    for f in 0..3 {
                        if count[f] != last[f] {
                            last[f] = count[f];
                            model.push((f as u32, t, count[f] as u32));
                        }
                    }
                }
                model.sort_by_key(|&(f, t, _)| (t, f));
                let mut watched_sorted = watched.clone();
                watched_sorted.sort_by_key(|&(f, t, _)| (t, f));
                assert_eq!(watched_sorted, model, "phase {phase}");
                assert!(model.len() > 100, "phase {phase}: {} changes", model.len());
                // Instants where a write and a consume of one FIFO
                // coincide exist exactly with coincident edges.
                assert_eq!(both_sides > 0, phase == 0, "phase {phase}");
                if phase != 0 {
                    let mut last = [0u32; 3];
                    let event_changes: Vec<Change> = events
                        .iter()
                        .filter(|e| {
                            let changed = last[e.0 as usize] != e.3;
                            last[e.0 as usize] = e.3;
                            changed
                        })
                        .map(|e| (e.0, e.2, e.3))
                        .collect();
                    assert_eq!(watched, event_changes, "phase {phase}");
                }
                seen.push(watched_sorted);
            }
            assert_eq!(seen[0], seen[1], "phase {phase}: declaration order");
        }
    }
}
