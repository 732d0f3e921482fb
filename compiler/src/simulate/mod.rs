//! Runs a lowered program on the runtime: declares its domains, units,
//! channels and CDC FIFOs with `chronon-runtime`, and binds the engine:
//!
//! - the JIT: per domain, one group tick (the runtime calls it once per
//!   edge) that calls one native function, which calls the domain's unit
//!   functions directly in the runtime's evaluation order; host calls reach
//!   the runtime's [`TickCtx`] through a [`RuntimeBinding`];
//! - the interpreter: a tick per unit that runs the engine with a
//!   [`CtxHost`] adapting the runtime's [`TickCtx`] to the engines' [`Host`].
//!
//! The program's own state (registers, stage registers, counters) lives in
//! one array shared by all ticks; channels, FIFOs, time, scheduling, traces
//! and faults are the runtime's.

mod ctx_host;
pub(crate) mod fault_sites;

use std::cell::{Ref, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use chronon_runtime::{
    BuildError, Clock, DesignBuilder, FifoId, FifoSpec, InPort, OutPort, ReadPort, RuntimeConfig,
    Simulation, TickCtx,
};

use crate::config::ExecConfig;
use crate::engine::{Engine, initial_state};
#[cfg(doc)]
use crate::host::Host;
use crate::interp::Interpreter;
use crate::ir::{PortKind, Program};
use crate::jit::{EdgesFn, GroupCode, GroupData, HostCtx, Jit, JitError};

pub(crate) use ctx_host::RuntimeBinding;
use ctx_host::{CtxHost, Link};

/// Which engine runs the ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// The reference interpreter.
    Interp,
    /// The Cranelift JIT.
    Jit,
}

/// Why a simulation could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The runtime rejected the design.
    #[error("{code}: {err}", code = .0.code(), err = .0)]
    Build(#[from] BuildError),
    /// The JIT failed (a compiler bug).
    #[error(transparent)]
    Jit(#[from] JitError),
}

struct Shared {
    state: Vec<u64>,
    engine: Box<dyn Engine>,
    /// The interpreter's; the JIT's are in its binding.
    links: Vec<Link>,
    faults: Vec<chronon_runtime::AssertId>,
}

/// A domain's JIT group function as the runtime's group tick; the runtime
/// calls the function itself ([`chronon_runtime::Tick::native`]).
struct JitGroupTick {
    code: GroupCode,
    /// The inline code's variant for unobserved runs
    /// ([`crate::jit::Jit::unobserved_group`]), where every FIFO port it
    /// operates on is bound, and whether it calls the host.
    unobserved: Option<(crate::jit::UnitFn, bool)>,
    /// Whether the group's units can stop the run ([`crate::jit::can_stop`]).
    can_stop: bool,
    /// The function's data: the state's first slot (the array never grows
    /// or moves), `contexts` and the binding's tick cell.
    data: Box<GroupData>,
    /// One per unit of the group, bound to `binding`.
    _contexts: Box<[HostCtx<'static>]>,
    _binding: Rc<RuntimeBinding>,
    /// Keeps the state and the JIT's code and fault tables alive.
    _shared: Rc<RefCell<Shared>>,
}

impl chronon_runtime::Tick for JitGroupTick {
    fn tick(&mut self, ctx: &mut TickCtx<'_>) {
        let ctx = (ctx as *mut TickCtx<'_>).cast::<std::ffi::c_void>();
        // SAFETY: as in `native`, called by the runtime's rules.
        unsafe {
            match self.code {
                GroupCode::Calls(f) => f(ctx, &mut *self.data),
                GroupCode::Inline(f) => {
                    *self.data.tick = ctx;
                    f(self.data.state, self.data.contexts)
                }
                GroupCode::Edges(_) => one_edge(ctx, (&mut *self.data as *mut GroupData).cast()),
            };
        }
    }

    fn can_stop(&self) -> bool {
        self.can_stop
    }

    fn native_edges(&self) -> Option<chronon_runtime::NativeEdges> {
        let GroupCode::Edges(f) = self.code else {
            return None;
        };
        // SAFETY: as in `native` for an inline group; the loop runs the
        // group's code per edge and calls the runtime's `next_edge`
        // through the binding between two edges whenever the group makes
        // any host call (`jit::edges`), as `NativeEdgesFn` requires.
        Some(unsafe {
            chronon_runtime::NativeEdges::with_context_slot(
                std::mem::transmute::<EdgesFn, chronon_runtime::NativeEdgesFn>(f),
                self.data.state.cast(),
                self.data.contexts.cast(),
                self.data.tick,
            )
        })
    }

    fn native(&self) -> Option<chronon_runtime::NativeGroup> {
        let data = (&*self.data as *const GroupData).cast_mut().cast();
        // SAFETY: the function was compiled for this program's state layout
        // and touches only its units' slots of `data.state`, which `_shared`
        // keeps alive and nobody borrows during a tick (readers of the state
        // run between runtime calls); it stores the tick context in the
        // binding's cell and its units' host calls (through `_contexts`,
        // built by `Jit::group` from the JIT in `_shared`) reach the context
        // only through it, during the call; it does not unwind (host calls
        // are `extern "C"`). `data` lives in `self`.
        // An inline group is called as (state, its one context) once the
        // runtime has stored the tick context in the binding's cell.
        Some(unsafe {
            match self.code {
                GroupCode::Calls(f) => chronon_runtime::NativeGroup::new(
                    std::mem::transmute::<crate::jit::GroupFn, chronon_runtime::NativeGroupFn>(f),
                    data,
                ),
                GroupCode::Inline(f) => {
                    let native = chronon_runtime::NativeGroup::with_context_slot(
                        std::mem::transmute::<crate::jit::UnitFn, chronon_runtime::NativeGroupFn>(
                            f,
                        ),
                        self.data.state.cast(),
                        self.data.contexts.cast(),
                        self.data.tick,
                    );
                    // The variant tests neither entries nor observation:
                    // chosen only where `bind_fifos` binds all its ports
                    // (`unobserved` above), and called only with no sink.
                    // A variant with no host call never reads the tick cell
                    // (`Jit::unobserved_group`), so the runtime need not
                    // fill it.
                    match self.unobserved {
                        Some((u, calls_host)) => {
                            native.with_unobserved(
                                std::mem::transmute::<
                                    crate::jit::UnitFn,
                                    chronon_runtime::NativeGroupFn,
                                >(u),
                                calls_host,
                            )
                        }
                        None => native,
                    }
                }
                // The loop for one edge, through `one_edge`.
                GroupCode::Edges(_) => chronon_runtime::NativeGroup::new(one_edge, data),
            }
        })
    }
}

/// One edge of a [`GroupCode::Edges`] group (its loop with `n = 1`, which
/// makes no `next_edge` call: the instant loop commits), as a native group
/// function called as (tick context, group data).
///
/// # Safety
/// `data` is the group's live [`GroupData`] with `edges` set, and `ctx` the
/// running tick context, as for any native group function.
unsafe extern "C" fn one_edge(ctx: *mut std::ffi::c_void, data: *mut std::ffi::c_void) -> u32 {
    // SAFETY: the caller's contract.
    let data = unsafe { &*data.cast::<GroupData>() };
    let Some(f) = data.edges else {
        return 0;
    };
    // SAFETY: as for an inline group: the tick cell is the binding's, and
    // the loop reaches the context only through it during this call.
    unsafe {
        *data.tick = ctx;
        f(data.state, data.contexts, 1);
    }
    0
}

/// A shared, read-only handle on a [`Simulator`]'s state.
#[derive(Clone)]
pub struct StateView(Rc<RefCell<Shared>>);

impl StateView {
    /// Calls `f` with the state; never call it from inside a tick.
    pub fn read<R>(&self, f: impl FnOnce(&[u64]) -> R) -> R {
        f(&self.0.borrow().state)
    }
}

/// What [`declare`] told the runtime: the builder, and per IR unit,
/// port and fault site the runtime's id.
struct Declared {
    b: DesignBuilder,
    units: Vec<chronon_runtime::UnitId>,
    links: Vec<Link>,
    faults: Vec<chronon_runtime::AssertId>,
}

/// Declares `program`'s domains, units, ports, channels, CDC FIFOs and
/// fault sites to a new runtime builder; the engine binds ticks next.
///
/// Every unit and fault site is declared, so runtime ids are IR ids; the
/// ports, channels and FIFOs of units outside `active` are not (they run
/// on another worker, [`crate::parallel`]), and their links stay unbound.
fn declare(program: &Program, active: &[bool]) -> Result<Declared, SetupError> {
    let mut b = DesignBuilder::new();
    let domains: Vec<_> = program
        .domains
        .iter()
        .map(|d| Clock::new(d.period_ps, d.phase_ps).map(|c| b.domain(&d.name, c)))
        .collect::<Result<_, _>>()
        .map_err(BuildError::from)?;
    let units: Vec<_> = program
        .units
        .iter()
        .map(|u| b.unit(&u.path, domains[u.domain as usize], &[]))
        .collect();
    let width = |item: &[crate::ir::Ty]| item.len().max(1);
    let mut links: Vec<Link> = Vec::with_capacity(program.ports.len());
    for port in &program.ports {
        let unit = units[port.unit as usize];
        if !active[port.unit as usize] {
            links.push(Link::FifoIn(None));
            continue;
        }
        links.push(match port.kind {
            // The runtime names a channel output only in the fault of a
            // refused `send`: its full path (`top.w.tx`), as a FIFO's
            // names both its ends, not the bare port name.
            PortKind::Out => Link::Out {
                port: b.output(
                    unit,
                    &format!("{}.{}", program.units[port.unit as usize].path, port.name),
                    width(&port.item),
                    port.rate,
                ),
                fifos: Vec::new(),
            },
            PortKind::In => Link::In(b.input(unit, &port.name, width(&port.item))),
            PortKind::CdcIn | PortKind::CdcFwftIn => Link::FifoIn(None),
        });
    }
    let port_active = |p: u32| active[program.ports[p as usize].unit as usize];
    for c in program.channels.iter().filter(|c| port_active(c.from)) {
        let (Link::Out { port: from, .. }, Link::In(to)) =
            (&links[c.from as usize], &links[c.to as usize])
        else {
            panic!("lowering connects an output to a channel input");
        };
        b.connect(
            OutPort(from.0),
            InPort(to.0),
            u64::from(c.latency),
            c.capacity,
        );
    }
    for f in program.fifos.iter().filter(|f| port_active(f.from)) {
        let (writer, reader) = (
            &program.ports[f.from as usize],
            &program.ports[f.to as usize],
        );
        let id: FifoId = b.fifo(FifoSpec {
            name: format!(
                "{}.{} -> {}.{}",
                program.units[writer.unit as usize].path,
                writer.name,
                program.units[reader.unit as usize].path,
                reader.name
            ),
            writer: units[writer.unit as usize],
            reader: units[reader.unit as usize],
            depth: f.depth,
            sync: f.sync,
            width: width(&writer.item),
            read_port: if reader.kind == PortKind::CdcFwftIn {
                ReadPort::Fwft
            } else {
                ReadPort::Registered
            },
        });
        if let Link::Out { fifos, .. } = &mut links[f.from as usize] {
            fifos.push(id);
        }
        links[f.to as usize] = Link::FifoIn(Some(id));
    }
    let faults = program
        .faults
        .iter()
        .zip(fault_sites::runtime_sites(program))
        .map(|(f, site)| b.fault_site(units[f.unit as usize], site.kind, &site.construct))
        .collect::<Vec<_>>();
    // Declared first and in order, so a runtime site id is the IR fault
    // id (`fault_sites::location` reads a fault's site that way).
    debug_assert!(faults.iter().enumerate().all(|(i, a)| a.0 as usize == i));
    Ok(Declared {
        b,
        units,
        links,
        faults,
    })
}

/// A program bound to the runtime and an engine.
pub struct Simulator {
    /// The runtime's simulation: run it, drain it, read its clock.
    pub sim: Simulation,
    program: Arc<Program>,
    shared: Rc<RefCell<Shared>>,
    /// Ports whose channel operations JIT code runs inline.
    inline_channel_ports: usize,
    /// Channels the JIT compiled as wires.
    wired_channels: usize,
    /// Fan-in inputs whose `recv` and `peek` JIT code runs inline.
    inline_fan_ins: usize,
}

impl Simulator {
    /// How many ports' channel operations run inline in JIT code
    /// ([`ExecConfig::inline_channel`]); 0 for the interpreter.
    pub fn inline_channel_ports(&self) -> usize {
        self.inline_channel_ports
    }

    /// How many channels JIT code passes as wires
    /// ([`crate::jit::JitConfig::wires`]); 0 for the interpreter.
    pub fn wired_channels(&self) -> usize {
        self.wired_channels
    }

    /// How many fan-in inputs (several connections into one port) JIT
    /// code receives from inline; 0 for the interpreter.
    pub fn inline_fan_ins(&self) -> usize {
        self.inline_fan_ins
    }

    /// Declares `program` to the runtime and compiles it for `engine`, with
    /// the default [`ExecConfig`].
    pub fn new(program: Arc<Program>, engine: EngineKind) -> Result<Simulator, SetupError> {
        Self::with_config(program, engine, &ExecConfig::default())
    }

    /// [`Simulator::new`] with the execution choices of `config` (its
    /// [`ExecConfig::ir_opt`] is for lowering, done before).
    pub fn with_config(
        program: Arc<Program>,
        engine: EngineKind,
        config: &ExecConfig,
    ) -> Result<Simulator, SetupError> {
        let all = vec![true; program.units.len()];
        let declared = declare(&program, &all)?;
        match engine {
            EngineKind::Interp => Self::bind_interpreter(program, declared, config),
            EngineKind::Jit => Self::bind_jit(program, declared, config, &all),
        }
    }

    /// A JIT simulator that runs only the units marked in `active` (one
    /// worker's share of a parallel run, [`crate::parallel`]): the others
    /// keep their initial state, and their ports, channels and FIFOs are
    /// not declared. `active` must hold whole components (no channel or
    /// FIFO joins an active unit to an inactive one); every domain is
    /// kept, so instants, cycles and times are the whole design's.
    pub fn for_units(
        program: Arc<Program>,
        config: &ExecConfig,
        active: &[bool],
    ) -> Result<Simulator, SetupError> {
        let declared = declare(&program, active)?;
        Self::bind_jit(program, declared, config, active)
    }

    /// The interpreter's binding: a tick per unit that runs the engine
    /// with a [`CtxHost`]; the reference keeps the instant loop.
    fn bind_interpreter(
        program: Arc<Program>,
        Declared {
            mut b,
            units,
            links,
            faults,
        }: Declared,
        config: &ExecConfig,
    ) -> Result<Simulator, SetupError> {
        let shared = Rc::new(RefCell::new(Shared {
            state: initial_state(&program),
            engine: Box::new(Interpreter::new(program.clone())),
            links,
            faults,
        }));
        for (i, unit) in units.iter().enumerate() {
            let shared = shared.clone();
            let id = i as u32;
            b.set_tick(*unit, move |ctx: &mut TickCtx<'_>| {
                let mut guard = shared.borrow_mut();
                let Shared {
                    state,
                    engine,
                    links,
                    faults,
                } = &mut *guard;
                let mut host = CtxHost { ctx, links, faults };
                engine.tick_unit(state, id, &mut host);
            })?;
        }
        // The reference engine keeps the instant loop (one instant at
        // a time), so it checks run-ahead rather than sharing it.
        let sim = b.build_with(RuntimeConfig {
            run_ahead: false,
            ..config.runtime
        })?;
        Ok(Simulator {
            sim,
            program,
            shared,
            inline_channel_ports: 0,
            wired_channels: 0,
            inline_fan_ins: 0,
        })
    }

    /// The JIT's binding: one group function per domain, in the runtime's
    /// evaluation order, its host calls through a [`RuntimeBinding`].
    fn bind_jit(
        program: Arc<Program>,
        Declared {
            mut b,
            units,
            links,
            faults,
        }: Declared,
        config: &ExecConfig,
        active: &[bool],
    ) -> Result<Simulator, SetupError> {
        // The JIT: one group per domain, in the runtime's evaluation order;
        // the units other workers run are never evaluated here.
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); program.domains.len()];
        let mut elsewhere = Vec::new();
        for cluster in b.evaluation_order()? {
            for u in &cluster.units {
                match active[u.0 as usize] {
                    true => groups[cluster.domain.0 as usize].push(u.0),
                    false => elsewhere.push(*u),
                }
            }
        }
        b.set_elsewhere(&elsewhere)?;
        groups.retain(|g| !g.is_empty());
        let wires: Vec<_> = groups
            .iter()
            .map(|g| crate::jit::group_wires(&program, g, &config.jit))
            .collect();
        let stoppers: Vec<bool> = groups
            .iter()
            .zip(&wires)
            .map(|(g, w)| crate::jit::can_stop(&program, g, w))
            .collect();
        let wired_channels = wires.iter().map(|w| w.len()).sum();
        // Run-ahead loops only where the runtime can use them: no FIFO
        // between two domains, at most one domain that can stop.
        let unit = |p: u32| program.ports[p as usize].unit as usize;
        let ahead = config.runtime.run_ahead
            && stoppers.iter().filter(|&&s| s).count() <= 1
            && program
                .fifos
                .iter()
                .filter(|f| active[unit(f.from)])
                .all(|f| program.units[unit(f.from)].domain == program.units[unit(f.to)].domain);
        let jit = Jit::compile_with_groups_ahead(
            &program,
            config.jit,
            &groups,
            &vec![ahead; groups.len()],
        )?;
        let fifo_outs = links
            .iter()
            .enumerate()
            .map(|(i, link)| match link {
                Link::Out { port, fifos }
                    if fifos.len() == 1
                        && !program.channels.iter().any(|c| c.from as usize == i) =>
                {
                    Some((fifos[0], *port, program.ports[i].rate == 1))
                }
                _ => None,
            })
            .collect();
        // Each unit's index in its group, for the contexts of inline groups.
        let mut unit_member = vec![0u32; program.units.len()];
        for members in &groups {
            for (k, &u) in members.iter().enumerate() {
                unit_member[u as usize] = k as u32;
            }
        }
        let binding = Rc::new(RuntimeBinding {
            tick: std::cell::Cell::new(std::ptr::null_mut()),
            links,
            faults,
            fifo_outs,
            port_member: program
                .ports
                .iter()
                .map(|p| unit_member[p.unit as usize])
                .collect(),
            trace_member: program
                .traces
                .iter()
                .map(|t| unit_member[t.unit as usize])
                .collect(),
            fault_member: program
                .faults
                .iter()
                .map(|f| unit_member[f.unit as usize])
                .collect(),
            fifo_table: RuntimeBinding::no_fifo_table(program.ports.len()),
            inline_fifo: config.inline_fifo,
            chan_table: RuntimeBinding::no_fifo_table(crate::jit::chan_table_len(&program)),
            inline_channel: config.inline_channel,
        });
        let group_code: Vec<_> = (0..groups.len())
            .map(|g| {
                let (code, mut contexts) = jit.group(g, Rc::as_ptr(&binding));
                let unobserved = jit.unobserved_group(g).and_then(|(f, ports, calls_host)| {
                    let bound = |&p: &u32| binding.fifo_to_bind(&program, p as usize).is_some();
                    ports.iter().all(bound).then_some((f, calls_host))
                });
                for c in contexts.iter_mut() {
                    // FIFO operations run inline on the entries that
                    // `bind_fifos` fills below (a unit shape's ports are
                    // relative to its instance's base).
                    c.fifos = binding.fifo_table_ptr().wrapping_add(c.port_base as usize);
                    c.chans = binding.chan_table_ptr().wrapping_add(c.port_base as usize);
                }
                (code, unobserved, contexts)
            })
            .collect();
        let shared = Rc::new(RefCell::new(Shared {
            state: initial_state(&program),
            engine: Box::new(jit),
            links: Vec::new(),
            faults: Vec::new(),
        }));
        let state = shared.borrow_mut().state.as_mut_ptr();
        for (g, (members, (code, unobserved, contexts))) in
            groups.iter().zip(group_code).enumerate()
        {
            let members: Vec<_> = members.iter().map(|&u| units[u as usize]).collect();
            let mut contexts = contexts;
            let data = Box::new(GroupData {
                state,
                contexts: contexts.as_mut_ptr(),
                tick: binding.tick.as_ptr(),
                edges: match code {
                    GroupCode::Edges(f) => Some(f),
                    _ => None,
                },
            });
            b.set_group_tick(
                &members,
                JitGroupTick {
                    code,
                    unobserved,
                    can_stop: stoppers[g],
                    data,
                    _contexts: contexts,
                    _binding: binding.clone(),
                    _shared: shared.clone(),
                },
            )?;
        }
        let sim = b.build_with(config.runtime)?;
        binding.bind_fifos(&sim, &program);
        let (inline_channel_ports, inline_fan_ins) = binding.bind_chans(&sim, &program);
        Ok(Simulator {
            sim,
            program,
            shared,
            inline_channel_ports,
            wired_channels,
            inline_fan_ins,
        })
    }

    /// The program being simulated.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// A shared handle on the program's state, for readers outside a tick
    /// (recorders sample it when a domain has committed).
    pub fn state_view(&self) -> StateView {
        StateView(self.shared.clone())
    }

    /// The program's state (registers, stage registers, counters) now.
    pub fn state(&self) -> Ref<'_, [u64]> {
        Ref::map(self.shared.borrow(), |s| s.state.as_slice())
    }

    /// Every counter: unit path, counter name and value, in program order.
    pub fn counters(&self) -> Vec<(String, String, u64)> {
        counters_of(&self.program, &self.state())
    }

    /// A 64-bit FNV-1a digest of the state, for comparing engines.
    pub fn digest(&self) -> u64 {
        digest_of(&self.state())
    }
}

/// Every counter of `program` in `state`: unit path, counter name and
/// value, in program order.
pub fn counters_of(program: &Program, state: &[u64]) -> Vec<(String, String, u64)> {
    program
        .counters
        .iter()
        .map(|c| {
            (
                program.units[c.unit as usize].path.clone(),
                c.name.clone(),
                state[c.slot as usize],
            )
        })
        .collect()
}

/// Every register's current-value slots, `(unit, slot)`, unit by unit in
/// the order their commits list them (what VCD dumps and `--dump-state`
/// reports); stage registers are not listed.
pub fn register_slots(program: &Program) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for (u, unit) in program.units.iter().enumerate() {
        for commit in &unit.commits {
            let (to, count) = match commit {
                crate::ir::Commit::Copy { to, count, .. } => (*to, *count),
                crate::ir::Commit::Sparse(c) => (c.to, c.count),
                crate::ir::Commit::Stage(_) => continue,
            };
            out.extend((to..to + count).map(|slot| (u as u32, slot)));
        }
    }
    out
}

/// One value of a register, as reports name it: a scalar slot, or the
/// limbs of an integer wider than 64 bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterLeaf {
    /// The owning unit.
    pub unit: u32,
    /// Its first current-value slot.
    pub slot: u32,
    /// The register's name in its unit, with the element or field of an
    /// array or struct register (`mem[3]`, `pkt.len`).
    pub name: String,
    /// `(width, signed)` of a value wider than 64 bits, whose limbs are
    /// `width.div_ceil(64)` slots from `slot`; `None` for one slot.
    pub wide: Option<(u32, bool)>,
}

/// Every register's values, unit by unit in [`register_slots`] order (what
/// VCD dumps and `--dump-state` reports).
pub fn register_leaves(program: &Program) -> Vec<RegisterLeaf> {
    // The values of arrays, structs and wide integers by element and field
    // (`mem[3]`, `pkt.len`): their slots are named by flat index (`mem.3`).
    let mut named: std::collections::HashMap<u32, (String, Option<(u32, bool)>)> =
        std::collections::HashMap::new();
    let mut inner = std::collections::HashSet::new();
    for a in &program.aggregates {
        let mut leaves = Vec::new();
        a.shape.leaves("", &mut leaves);
        let mut slot = a.first;
        for (name, wide) in leaves {
            let limbs = wide.map_or(1, |(w, _)| w.div_ceil(64));
            named.insert(slot, (name, wide));
            inner.extend(slot + 1..slot + limbs);
            slot += limbs;
        }
    }
    register_slots(program)
        .into_iter()
        .filter(|(_, slot)| !inner.contains(slot))
        .map(|(unit, slot)| {
            let path = &program.units[unit as usize].path;
            let s = &program.slots[slot as usize];
            let flat = s
                .name
                .strip_prefix(path.as_str())
                .and_then(|n| n.strip_prefix('.'))
                .unwrap_or(&s.name);
            let (name, wide) = match named.get(&slot) {
                Some((suffix, wide)) => {
                    let reg = flat.split_once('.').map_or(flat, |(reg, _)| reg);
                    (format!("{reg}{suffix}"), *wide)
                }
                None => (flat.to_string(), None),
            };
            RegisterLeaf {
                unit,
                slot,
                name,
                wide,
            }
        })
        .collect()
}

/// A register value in a report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum RegisterValue {
    /// A value of at most 64 bits, negative for a signed register whose
    /// sign bit is set (a JSON number).
    Int(i128),
    /// A value wider than 64 bits in hexadecimal, `0x1f` or `-0x1f` for a
    /// negative signed one (a JSON string: JSON numbers lose precision
    /// past 53 bits in most readers).
    Wide(String),
}

/// The value of a `width`-bit integer held in `limbs`, least significant
/// first, in hexadecimal with a sign.
fn wide_hex(limbs: &[u64], width: u32, signed: bool) -> String {
    let digits: Vec<u32> = limbs
        .iter()
        .flat_map(|l| [*l as u32, (*l >> 32) as u32])
        .collect();
    let bits = num_bigint::BigInt::from(num_bigint::BigUint::from_slice(&digits));
    let bits = bits % (num_bigint::BigInt::from(1) << width);
    let negative = signed && bits.bit(u64::from(width) - 1);
    if negative {
        let magnitude = (num_bigint::BigInt::from(1) << width) - bits;
        format!("-{magnitude:#x}")
    } else {
        format!("{bits:#x}")
    }
}

/// Every register's value in `state`: `(unit path, name in the unit,
/// value)`, a signed register's value negative where its sign bit is set.
pub fn registers_of(program: &Program, state: &[u64]) -> Vec<(String, String, RegisterValue)> {
    register_leaves(program)
        .into_iter()
        .map(|leaf| {
            let path = program.units[leaf.unit as usize].path.clone();
            let first = leaf.slot as usize;
            if let Some((width, signed)) = leaf.wide {
                let limbs = &state[first..first + width.div_ceil(64) as usize];
                return (
                    path,
                    leaf.name,
                    RegisterValue::Wide(wide_hex(limbs, width, signed)),
                );
            }
            let ty = program.slots[first].ty;
            let raw = state[first];
            let value = if ty.signed && ty.width < 64 {
                let shift = 64 - u32::from(ty.width);
                i128::from(((raw << shift) as i64) >> shift)
            } else if ty.signed {
                i128::from(raw as i64)
            } else {
                i128::from(raw)
            };
            (path, leaf.name, RegisterValue::Int(value))
        })
        .collect()
}

/// A 64-bit FNV-1a digest of a state, for comparing engines and runs.
pub fn digest_of(state: &[u64]) -> u64 {
    state.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, w| {
        w.to_le_bytes()
            .iter()
            .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
    })
}

#[cfg(test)]
mod tests {
    use chronon_lang::span::SourceMap;

    use super::EngineKind;
    use crate::run::{RunOptions, StopAt, run};

    /// A writer whose `tick` body is `body`, into a depth-2 CDC FIFO to a
    /// reader on a slower clock that never reads.
    fn cdc_writer(body: &str) -> String {
        format!(
            "clock fast = 1 GHz;\nclock slow = 300 MHz;\n\
             unit W {{ out tx: u64; reg n: u64 = 0; counter ok;\n tick {{ {body} n <= n + 1; }} }}\n\
             unit R {{ in rx: u64 cdc; tick {{ }} }}\n\
             system Top {{ inst w: W on fast; inst r: R on slow;\n\
             cdc w.tx -> r.rx depth 2 sync 2; }}\n"
        )
    }

    /// The run summary on one engine (engine name left out).
    fn summary(text: &str, engine: EngineKind) -> String {
        let mut sources = SourceMap::new();
        sources.add("t.chr".to_string(), text.to_string());
        let options = RunOptions::new(
            engine,
            StopAt::Cycles {
                count: 20,
                domain: None,
            },
        );
        let report = run(&mut sources, &options, &mut |_, _| {}).expect("design runs");
        report.summary(true).replacen(&report.engine, "ENGINE", 1)
    }

    /// A domain of more units than the JIT inlines into one group function
    /// (its group calls the shared unit functions) runs as on the
    /// interpreter, faults and counters included; so does a small one.
    #[test]
    fn large_and_small_groups_agree_with_the_interpreter() {
        for n in [3usize, 40] {
            let insts: String = (0..n)
                .map(|i| format!("inst u{i:02}: U<K = {i}> on clk;\n"))
                .collect();
            let text = format!(
                "clock clk = 1 GHz;\n\
                 unit U<K: u32 = 0> {{ reg r: u32 = 0; counter c;\n\
                 tick {{ r <= r + K + 1; c += 1; assert(r < 30, \"r grew\"); }} }}\n\
                 system Top {{ {insts} }}\n"
            );
            let interp = summary(&text, EngineKind::Interp);
            assert_eq!(interp, summary(&text, EngineKind::Jit), "{n} units");
            assert!(interp.contains("fault:"), "{n} units: {interp}");
        }
    }

    /// The JIT's bound send path (one FIFO, no channel) refuses and
    /// faults exactly like the interpreter's general one.
    #[test]
    fn fifo_sends_refuse_and_fault_alike_on_both_engines() {
        for (body, expected) in [
            // The second send of an edge: the port's rate (1) is used up.
            ("tx.send(n); tx.send(n);", "fault: [runtime::send_refused]"),
            // A full FIFO refuses `send`: its fault.
            ("tx.send(n);", "fault: [runtime::fifo_send_refused]"),
            // `try_send` never faults; the refused ones are not counted.
            // Two accepted before the FIFO is full, then refused at every edge.
            (
                "if tx.try_send(n) { ok += 1; } if tx.try_send(n) { ok += 1; }",
                "top.w.ok = 2\n",
            ),
        ] {
            let text = cdc_writer(body);
            let interp = summary(&text, EngineKind::Interp);
            assert_eq!(interp, summary(&text, EngineKind::Jit), "{body}");
            assert!(interp.contains(expected), "{body}: {interp}");
            assert_eq!(
                interp.matches("fault:").count(),
                usize::from(expected.starts_with("fault")),
                "{body}: {interp}"
            );
        }
    }
}
