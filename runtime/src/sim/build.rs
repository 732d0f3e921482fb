//! Building a [`Simulation`] from a [`DesignBuilder`]: register layout,
//! channels, stage registers and FIFOs, the runners of each domain, and
//! the programs and run-ahead facts fixed at build. Each step is one
//! function; [`Simulation::from_design`] runs them in order.

use super::*;
use crate::design::{ConnDecl, FifoSpec, GroupDecl, PortDecl, StageDecl, UnitDecl};
use crate::schedule::Schedule;

/// Per unit its tick, until [`build_runners`] hands it to a runner.
type UnitTicks = Vec<Option<Box<dyn Tick>>>;

impl Simulation {
    /// Builds the simulation of `design` (validated by
    /// [`DesignBuilder::build`]).
    pub(crate) fn from_design(
        design: DesignBuilder,
        config: RuntimeConfig,
    ) -> Result<Simulation, BuildError> {
        let clocks: Vec<Clock> = design.domains.iter().map(|d| d.clock.clone()).collect();
        let calendar = Calendar::new(&clocks, design.calendar)?;
        let schedule = plan_design(&design)?;
        let (mut plans, reg_base, cur) = register_layout(&design, &schedule);
        let DesignBuilder {
            domains,
            units,
            outputs,
            inputs,
            connections,
            fifos,
            stages,
            assertions,
            groups,
            ..
        } = design;
        let (units, unit_ticks, counters_len) = unit_metas(units, &schedule, &reg_base);
        let channels_in_domains = connections.iter().all(|c| {
            let (from, to) = (outputs[c.from as usize].unit, inputs[c.to as usize].unit);
            units[from as usize].domain == units[to as usize].domain
        });
        let channels = build_channels(domains.len(), (outputs, inputs, &connections), &units);
        let stages = place_stages(&mut plans, stages, &units);
        let fifos = place_fifos(&mut plans, fifos, &units);
        let (runners, metas) = build_runners(&mut plans, &units, unit_ticks, groups)?;
        let replay = replay::ReplayProgram::build(&calendar, &plans, &runners, &fifos, &config);
        let fifo_program = FifoProgram::build(&calendar, &plans, &fifos);
        let any_extras = plans.iter().any(|p| p.extras);
        let ahead = run_ahead(&config, &calendar, &plans, &fifos, channels_in_domains);
        let edges = domain_edges(&plans, &calendar, &fifos);
        let next = cur.clone();
        let core = Core {
            cur,
            next,
            units,
            domain_names: domains.iter().map(|d| d.name.clone()).collect(),
            ticks_per_ps: calendar.base().ticks_per_ps(),
            counters: vec![0; counters_len],
            channels,
            fifos,
            stages,
            assertions,
            trace: TraceBuffer::new(),
            tracing: false,
            observe: false,
            fifo_observed: false,
            commits: false,
            fifo_stamps: config.fifo_stamps,
            sink_stopped: false,
            stop_poll: (1, 0),
            faults: Vec::new(),
            finish: false,
            stop_requested: false,
            ahead: false,
            edges,
        };
        Ok(Simulation {
            calendar,
            clocks,
            core,
            plans,
            runners,
            metas,
            fifo_program,
            replay,
            replay_enabled: config.replay_loop,
            clusters: schedule.clusters,
            sink: None,
            instants: 0,
            any_extras,
            ahead,
        })
    }
}

/// Register words laid out by domain, then cluster, then evaluation order,
/// so a domain commits with one copy: per domain its plan (units and
/// register range), per unit its first word, and the initial words.
fn register_layout(
    design: &DesignBuilder,
    schedule: &Schedule,
) -> (Vec<DomainPlan>, Vec<usize>, Vec<u64>) {
    let mut plans: Vec<DomainPlan> = design
        .domains
        .iter()
        .map(|_| DomainPlan::default())
        .collect();
    let mut reg_base = vec![0usize; design.units.len()];
    let mut cur = Vec::new();
    for (d, plan) in plans.iter_mut().enumerate() {
        let start = cur.len();
        for cluster in schedule
            .clusters
            .iter()
            .filter(|c| c.domain.0 as usize == d)
        {
            // Units run elsewhere are never evaluated here.
            for unit in cluster.units.iter().filter(|u| !design.is_elsewhere(u.0)) {
                reg_base[unit.0 as usize] = cur.len();
                cur.extend_from_slice(&design.units[unit.0 as usize].regs);
                plan.units.push(unit.0);
            }
        }
        plan.regs = start..cur.len();
    }
    (plans, reg_base, cur)
}

/// Per unit its metadata and tick (taken by [`build_runners`]), and the
/// number of counters of all units.
fn unit_metas(
    decls: Vec<UnitDecl>,
    schedule: &Schedule,
    reg_base: &[usize],
) -> (Vec<UnitMeta>, UnitTicks, usize) {
    let mut counters_len = 0;
    let mut units = Vec::with_capacity(decls.len());
    let mut ticks = Vec::with_capacity(decls.len());
    for (i, u) in decls.into_iter().enumerate() {
        let counter_names = u.counters;
        let counter_len = counter_names.len();
        units.push(UnitMeta {
            path: u.path,
            domain: u.domain,
            rank: schedule.rank[i],
            reg_base: reg_base[i],
            reg_len: u.regs.len(),
            counter_base: counters_len,
            counter_names,
        });
        counters_len += counter_len;
        ticks.push(u.tick);
    }
    (units, ticks, counters_len)
}

/// The channel state of every port and connection.
fn build_channels(
    domains: usize,
    (outputs, inputs, connections): (Vec<PortDecl>, Vec<PortDecl>, &[ConnDecl]),
    units: &[UnitMeta],
) -> Channels {
    let mut channels = Channels::new(domains);
    for p in outputs {
        channels.add_output(p.name, p.width, p.rate, units[p.unit as usize].domain);
    }
    for p in inputs {
        channels.add_input(p.width, units[p.unit as usize].domain);
    }
    for c in connections {
        channels.connect(c.from, c.to, c.latency, c.capacity);
    }
    channels
}

/// The stage registers, each listed in its unit's domain plan.
fn place_stages(
    plans: &mut [DomainPlan],
    decls: Vec<StageDecl>,
    units: &[UnitMeta],
) -> Vec<StageReg> {
    let mut stages = Vec::with_capacity(decls.len());
    for (i, s) in decls.into_iter().enumerate() {
        plans[units[s.unit as usize].domain as usize]
            .stages
            .push(i as u32);
        stages.push(StageReg::new(s.name, s.pipes, s.width));
    }
    stages
}

/// The CDC FIFOs, each listed in its writer's and its reader's domain plan.
fn place_fifos(plans: &mut [DomainPlan], specs: Vec<FifoSpec>, units: &[UnitMeta]) -> Vec<CdcFifo> {
    let mut fifos = Vec::with_capacity(specs.len());
    for (i, f) in specs.into_iter().enumerate() {
        let (wd, rd) = (
            units[f.writer.0 as usize].domain,
            units[f.reader.0 as usize].domain,
        );
        plans[wd as usize].fifos.push(i as u32);
        if rd != wd {
            plans[rd as usize].fifos.push(i as u32);
        }
        let mut fifo = CdcFifo::new(f.name, wd, rd, f.depth, f.sync, f.width, f.read_port);
        fifo.units = (f.writer.0, f.reader.0);
        fifos.push(fifo);
    }
    fifos
}

/// Per domain, in its evaluation order, the runners: one per ungrouped
/// unit, one per group tick (whose units must come consecutively, in that
/// order); and the slot metadata of every unit.
fn build_runners(
    plans: &mut [DomainPlan],
    units: &[UnitMeta],
    mut unit_ticks: UnitTicks,
    groups: Vec<GroupDecl>,
) -> Result<(Vec<Runner>, Vec<SlotMeta>), BuildError> {
    let mut group_of: Vec<Option<usize>> = vec![None; units.len()];
    for (g, group) in groups.iter().enumerate() {
        for &u in &group.units {
            group_of[u as usize] = Some(g);
        }
    }
    let mut groups: Vec<Option<GroupDecl>> = groups.into_iter().map(Some).collect();
    let mut runners = Vec::with_capacity(units.len());
    let mut metas = Vec::with_capacity(units.len());
    for plan in plans.iter_mut() {
        plan.extras = !plan.stages.is_empty() || !plan.fifos.is_empty();
        let (first_runner, first_meta) = (runners.len(), metas.len());
        for &u in &plan.units {
            let m = &units[u as usize];
            metas.push(SlotMeta {
                unit: u,
                rank: m.rank,
                reg_base: m.reg_base,
                reg_len: m.reg_len,
                counter_base: m.counter_base,
                counter_len: m.counter_names.len(),
            });
        }
        let mut i = 0;
        while i < plan.units.len() {
            let u = plan.units[i] as usize;
            let (tick, len) = match group_of[u] {
                None => (
                    unit_ticks[u]
                        .take()
                        .expect("an ungrouped unit has a tick (validated)"),
                    1,
                ),
                Some(g) => match groups[g].take() {
                    Some(group) if plan.units[i..].starts_with(&group.units) => {
                        let len = group.units.len();
                        (group.tick, len)
                    }
                    _ => {
                        let paths = (0..units.len())
                            .filter(|&v| group_of[v] == Some(g))
                            .map(|v| units[v].path.clone())
                            .collect();
                        return Err(BuildError::Group {
                            units: paths,
                            why: "its units are not consecutive units of one domain's \
                                  evaluation order, in that order",
                        });
                    }
                },
            };
            let at = first_meta + i;
            plan.can_stop |= tick.can_stop();
            runners.push(Runner {
                first: metas[at],
                native: tick.native(),
                native_edges: tick.native_edges(),
                tick,
                metas: at..at + len,
            });
            i += len;
        }
        plan.runners = first_runner..runners.len();
    }
    Ok((runners, metas))
}

/// Whether run-ahead is possible (contract §7: no link between domains, a
/// calendar pattern, at most one domain whose ticks can stop the run) and
/// the domains' order in it, the stoppable one first.
fn run_ahead(
    config: &RuntimeConfig,
    calendar: &Calendar,
    plans: &[DomainPlan],
    fifos: &[CdcFifo],
    channels_in_domains: bool,
) -> RunAhead {
    let runs = |d: &u32| !plans[*d as usize].runners.is_empty();
    let stoppable: Vec<u32> = (0..plans.len() as u32)
        .filter(|d| runs(d) && plans[*d as usize].can_stop)
        .collect();
    let mut order = stoppable.clone();
    order.extend((0..plans.len() as u32).filter(|d| runs(d) && !plans[*d as usize].can_stop));
    RunAhead {
        enabled: config.run_ahead,
        possible: calendar.uses_pattern()
            && stoppable.len() <= 1
            && fifos.iter().all(|f| f.writer_domain == f.reader_domain)
            && channels_in_domains,
        order,
        limit: calendar.run_ahead_limit(),
        window: calendar.min_period().saturating_mul(1 << 16),
    }
}

/// What each domain commits at its edge: its register range, stage
/// registers and the FIFOs inside it, and its period.
fn domain_edges(plans: &[DomainPlan], calendar: &Calendar, fifos: &[CdcFifo]) -> Vec<DomainEdge> {
    plans
        .iter()
        .zip(calendar.tick_clocks())
        .map(|(plan, clock)| DomainEdge {
            regs: plan.regs.clone(),
            stages: plan.stages.clone(),
            fifos: plan
                .fifos
                .iter()
                .copied()
                .filter(|&f| {
                    let f = &fifos[f as usize];
                    f.writer_domain == f.reader_domain
                })
                .collect(),
            period: clock.period,
        })
        .collect()
}
