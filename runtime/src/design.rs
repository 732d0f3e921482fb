//! Describing a design to the runtime: domains, units, ports, connections, CDC
//! FIFOs, stage registers and assertions, then [`DesignBuilder::build`].
//!
//! The runtime knows no syntax: a compiler (or a test) declares the pieces and
//! gets back plain ids (`u32` newtypes, stable for the life of the design, so a
//! JIT can embed them as constants).

use crate::calendar::CalendarConfig;
use crate::config::RuntimeConfig;
use crate::fault::FaultKind;
use crate::fifo::{FIFO_DEPTH_RANGE, FIFO_SYNC_RANGE, ReadPort};
use crate::sim::Simulation;
use crate::tick::Tick;
use crate::time::{Clock, TimeError};

macro_rules! id_type {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
    )*};
}

id_type! {
    /// A clock domain (index in declaration order).
    DomainId,
    /// A unit instance (index in declaration order).
    UnitId,
    /// An output port.
    OutPort,
    /// An input port.
    InPort,
    /// A CDC FIFO.
    FifoId,
    /// A stage register.
    StageId,
    /// A declared fault site: an assertion or another checked construct.
    AssertId,
}

/// A CDC FIFO declaration.
#[derive(Debug, Clone)]
pub struct FifoSpec {
    /// The FIFO's name, used in faults.
    pub name: String,
    /// The writing unit (its domain is the write domain).
    pub writer: UnitId,
    /// The reading unit (its domain is the read domain).
    pub reader: UnitId,
    /// Depth: a power of two in 2..=2^30.
    pub depth: u32,
    /// Synchronizer length in 2..=64.
    pub sync: u32,
    /// Item width in `u64` words (>= 1).
    pub width: usize,
    /// The read port kind.
    pub read_port: ReadPort,
}

/// Why a design could not be built. Each has a stable code ([`BuildError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A clock is invalid or the clocks have no common representable time base.
    #[error("clock error: {0}")]
    Time(#[from] TimeError),
    /// Two units have the same instance path.
    #[error("two units have the instance path `{0}`")]
    DuplicatePath(String),
    /// A unit has no tick function.
    #[error("unit `{0}` has no tick function")]
    MissingTick(String),
    /// A connection joins ports of different domains.
    #[error(
        "connection from `{from}` (domain `{from_domain}`) to `{to}` (domain `{to_domain}`) crosses domains; use a CDC FIFO"
    )]
    CrossDomain {
        /// Sending port.
        from: String,
        /// Its domain.
        from_domain: String,
        /// Receiving port.
        to: String,
        /// Its domain.
        to_domain: String,
    },
    /// Ports, FIFOs or stage registers of mismatched or zero width, zero capacity or rate, zero pipes.
    #[error("invalid {what} `{name}`: {why}")]
    Invalid {
        /// The kind of construct.
        what: &'static str,
        /// Its name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// Zero-latency connections form a cycle.
    #[error("zero-latency connections form a cycle: {}", .0.join(" -> "))]
    ZeroLatencyCycle(Vec<String>),
    /// An id from another builder or out of range.
    #[error("unknown {0} id {1}")]
    UnknownId(&'static str, u32),
    /// A group tick ([`DesignBuilder::set_group_tick`]) whose units are not a
    /// run of consecutive units of one domain's evaluation order, or overlap
    /// another group or a unit's own tick.
    #[error("group tick over `{}`: {why}", .units.join("`, `"))]
    Group {
        /// The group's unit paths, as given.
        units: Vec<String>,
        /// What is wrong.
        why: &'static str,
    },
}

impl BuildError {
    /// A stable code for the error kind.
    pub fn code(&self) -> &'static str {
        match self {
            BuildError::Time(_) => "runtime::clock",
            BuildError::DuplicatePath(_) => "runtime::duplicate_path",
            BuildError::MissingTick(_) => "runtime::missing_tick",
            BuildError::CrossDomain { .. } => "runtime::cross_domain_connection",
            BuildError::Invalid { .. } => "runtime::invalid_construct",
            BuildError::ZeroLatencyCycle(_) => "runtime::zero_latency_cycle",
            BuildError::UnknownId(..) => "runtime::unknown_id",
            BuildError::Group { .. } => "runtime::group_tick",
        }
    }
}

pub(crate) struct DomainDecl {
    pub(crate) name: String,
    pub(crate) clock: Clock,
}

pub(crate) struct UnitDecl {
    pub(crate) path: String,
    pub(crate) domain: u32,
    pub(crate) regs: Vec<u64>,
    pub(crate) counters: Vec<String>,
    pub(crate) tick: Option<Box<dyn Tick>>,
}

pub(crate) struct PortDecl {
    pub(crate) unit: u32,
    pub(crate) name: String,
    pub(crate) width: usize,
    pub(crate) rate: u32,
}

pub(crate) struct ConnDecl {
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) latency: u64,
    pub(crate) capacity: u32,
}

/// A fault site declared by the design: raised by its tick, reported with its kind.
#[derive(Debug)]
pub(crate) struct FaultSiteDecl {
    pub(crate) unit: u32,
    pub(crate) kind: FaultKind,
    pub(crate) construct: String,
}

pub(crate) struct StageDecl {
    pub(crate) unit: u32,
    pub(crate) name: String,
    pub(crate) pipes: u32,
    pub(crate) width: usize,
}

/// Collects a design's pieces; [`DesignBuilder::build`] validates them and
/// produces a [`Simulation`].
#[derive(Default)]
pub struct DesignBuilder {
    pub(crate) domains: Vec<DomainDecl>,
    pub(crate) units: Vec<UnitDecl>,
    pub(crate) outputs: Vec<PortDecl>,
    pub(crate) inputs: Vec<PortDecl>,
    pub(crate) connections: Vec<ConnDecl>,
    pub(crate) fifos: Vec<FifoSpec>,
    pub(crate) stages: Vec<StageDecl>,
    pub(crate) assertions: Vec<FaultSiteDecl>,
    pub(crate) calendar: CalendarConfig,
    pub(crate) groups: Vec<GroupDecl>,
    /// Units declared but run by another simulation
    /// ([`DesignBuilder::set_elsewhere`]), by unit id.
    pub(crate) elsewhere: Vec<bool>,
}

/// One tick that runs several units (see [`DesignBuilder::set_group_tick`]).
pub(crate) struct GroupDecl {
    pub(crate) units: Vec<u32>,
    pub(crate) tick: Box<dyn Tick>,
}

impl DesignBuilder {
    /// An empty design.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the calendar options (pattern mode bound).
    pub fn calendar_config(&mut self, config: CalendarConfig) -> &mut Self {
        self.calendar = config;
        self
    }

    /// Declares a clock domain; domains are ordered by declaration.
    pub fn domain(&mut self, name: &str, clock: Clock) -> DomainId {
        self.domains.push(DomainDecl {
            name: name.to_string(),
            clock,
        });
        DomainId(self.domains.len() as u32 - 1)
    }

    /// Declares a unit instance with its registers' initial values (one `u64`
    /// word each; the compiler lays out wider registers over several words).
    pub fn unit(&mut self, path: &str, domain: DomainId, regs: &[u64]) -> UnitId {
        self.units.push(UnitDecl {
            path: path.to_string(),
            domain: domain.0,
            regs: regs.to_vec(),
            counters: Vec::new(),
            tick: None,
        });
        UnitId(self.units.len() as u32 - 1)
    }

    /// Sets a unit's tick function.
    pub fn set_tick(&mut self, unit: UnitId, tick: impl Tick + 'static) -> Result<(), BuildError> {
        let decl = self
            .units
            .get_mut(unit.0 as usize)
            .ok_or(BuildError::UnknownId("unit", unit.0))?;
        decl.tick = Some(Box::new(tick));
        Ok(())
    }

    /// Gives `units` one tick between them: the runtime calls it once per edge
    /// of their domain, where their own ticks would have run, and the tick runs
    /// each unit in turn after [`TickCtx::enter`](crate::TickCtx::enter)`(k)`
    /// (`k` indexes `units`). `units` must be consecutive units of one
    /// domain's evaluation order, in that order (see
    /// [`DesignBuilder::evaluation_order`]): a cluster, several, or the whole
    /// domain; [`DesignBuilder::build`] checks it. Grouped units have no tick
    /// of their own. This is how native code runs a whole cluster with one
    /// call and no per-unit dispatch.
    pub fn set_group_tick(
        &mut self,
        units: &[UnitId],
        tick: impl Tick + 'static,
    ) -> Result<(), BuildError> {
        for u in units {
            self.unit_domain(u.0, "unit")?;
        }
        self.groups.push(GroupDecl {
            units: units.iter().map(|u| u.0).collect(),
            tick: Box::new(tick),
        });
        Ok(())
    }

    /// Marks `units` as run by another simulation (one worker's share of a
    /// parallel run holds the whole design's units so that ids, paths,
    /// domains and fault sites stay the design's): they keep their ids but
    /// are never evaluated, need no tick, and must have no ports, stage
    /// registers or FIFOs declared here.
    pub fn set_elsewhere(&mut self, units: &[UnitId]) -> Result<(), BuildError> {
        self.elsewhere.resize(self.units.len(), false);
        for u in units {
            self.unit_domain(u.0, "unit")?;
            self.elsewhere[u.0 as usize] = true;
        }
        Ok(())
    }

    /// Whether unit `u` is run by another simulation.
    pub(crate) fn is_elsewhere(&self, u: u32) -> bool {
        self.elsewhere.get(u as usize).copied().unwrap_or(false)
    }

    /// The clusters the runtime will evaluate, grouped by domain (declaration
    /// order), each with its units in evaluation order: what
    /// [`Simulation::clusters`] will return once built. A domain's evaluation
    /// order is its clusters' units, one cluster after the other.
    pub fn evaluation_order(&self) -> Result<Vec<crate::Cluster>, BuildError> {
        Ok(crate::schedule::plan_design(self)?.clusters)
    }

    /// Declares a counter of a unit; returns its index within the unit.
    pub fn counter(&mut self, unit: UnitId, name: &str) -> Result<u32, BuildError> {
        let decl = self
            .units
            .get_mut(unit.0 as usize)
            .ok_or(BuildError::UnknownId("unit", unit.0))?;
        decl.counters.push(name.to_string());
        Ok(decl.counters.len() as u32 - 1)
    }

    /// Declares an output port with items of `width` words and a send rate.
    pub fn output(&mut self, unit: UnitId, name: &str, width: usize, rate: u32) -> OutPort {
        self.outputs.push(PortDecl {
            unit: unit.0,
            name: name.to_string(),
            width,
            rate,
        });
        OutPort(self.outputs.len() as u32 - 1)
    }

    /// Declares an input port with items of `width` words.
    pub fn input(&mut self, unit: UnitId, name: &str, width: usize) -> InPort {
        self.inputs.push(PortDecl {
            unit: unit.0,
            name: name.to_string(),
            width,
            rate: 1,
        });
        InPort(self.inputs.len() as u32 - 1)
    }

    /// Connects an output to an input with latency `L` (edges) and capacity `C`.
    /// The declaration order of connections is the fan-in merge order.
    pub fn connect(&mut self, from: OutPort, to: InPort, latency: u64, capacity: u32) {
        self.connections.push(ConnDecl {
            from: from.0,
            to: to.0,
            latency,
            capacity,
        });
    }

    /// Declares a CDC FIFO.
    pub fn fifo(&mut self, spec: FifoSpec) -> FifoId {
        self.fifos.push(spec);
        FifoId(self.fifos.len() as u32 - 1)
    }

    /// Declares a stage register of a unit.
    pub fn stage(&mut self, unit: UnitId, name: &str, pipes: u32, width: usize) -> StageId {
        self.stages.push(StageDecl {
            unit: unit.0,
            name: name.to_string(),
            pipes,
            width,
        });
        StageId(self.stages.len() as u32 - 1)
    }

    /// Declares an assertion site of a unit with its message.
    pub fn assertion(&mut self, unit: UnitId, message: &str) -> AssertId {
        self.fault_site(unit, FaultKind::Assertion, message)
    }

    /// Declares a fault site of a unit that, when raised, reports `kind` with
    /// `construct` (a compiled array index check, a stage pipe check...), so
    /// that every cause keeps its own stable code.
    pub fn fault_site(&mut self, unit: UnitId, kind: FaultKind, construct: &str) -> AssertId {
        self.assertions.push(FaultSiteDecl {
            unit: unit.0,
            kind,
            construct: construct.to_string(),
        });
        AssertId(self.assertions.len() as u32 - 1)
    }

    /// Validates the design and builds a simulation at time 0, before any
    /// edge, with the default [`RuntimeConfig`].
    pub fn build(self) -> Result<Simulation, BuildError> {
        self.build_with(RuntimeConfig::default())
    }

    /// [`DesignBuilder::build`] with the execution choices of `config`.
    pub fn build_with(self, config: RuntimeConfig) -> Result<Simulation, BuildError> {
        self.validate()?;
        Simulation::from_design(self, config)
    }

    fn unit_domain(&self, unit: u32, what: &'static str) -> Result<u32, BuildError> {
        self.units
            .get(unit as usize)
            .map(|u| u.domain)
            .ok_or(BuildError::UnknownId(what, unit))
    }

    fn validate(&self) -> Result<(), BuildError> {
        let invalid = |what, name: &str, why: &str| BuildError::Invalid {
            what,
            name: name.to_string(),
            why: why.to_string(),
        };
        for unit in &self.units {
            if unit.domain as usize >= self.domains.len() {
                return Err(BuildError::UnknownId("domain", unit.domain));
            }
        }
        let mut grouped = vec![false; self.units.len()];
        for g in &self.groups {
            let group_error = |why| BuildError::Group {
                units: g
                    .units
                    .iter()
                    .map(|&u| self.units[u as usize].path.clone())
                    .collect(),
                why,
            };
            if g.units.is_empty() {
                return Err(group_error("a group needs at least one unit"));
            }
            for &u in &g.units {
                if std::mem::replace(&mut grouped[u as usize], true) {
                    return Err(group_error("a unit is in two groups"));
                }
                if self.units[u as usize].tick.is_some() {
                    return Err(group_error("a grouped unit also has its own tick"));
                }
            }
        }
        for (u, (unit, grouped)) in self.units.iter().zip(grouped).enumerate() {
            let elsewhere = self.is_elsewhere(u as u32);
            if elsewhere && (grouped || unit.tick.is_some()) {
                return Err(invalid(
                    "unit",
                    &unit.path,
                    "run elsewhere but given a tick here",
                ));
            }
            if unit.tick.is_none() && !grouped && !elsewhere {
                return Err(BuildError::MissingTick(unit.path.clone()));
            }
        }
        let owned_here = self
            .outputs
            .iter()
            .chain(&self.inputs)
            .map(|p| p.unit)
            .chain(self.stages.iter().map(|s| s.unit))
            .chain(self.fifos.iter().flat_map(|f| [f.writer.0, f.reader.0]));
        for u in owned_here {
            if self.is_elsewhere(u) {
                let path = self.units.get(u as usize).map_or("?", |u| u.path.as_str());
                return Err(invalid(
                    "unit",
                    path,
                    "run elsewhere but has ports, stages or FIFOs here",
                ));
            }
        }
        for (ports, what) in [(&self.outputs, "output port"), (&self.inputs, "input port")] {
            for p in ports {
                self.unit_domain(p.unit, "unit")?;
                if p.width == 0 {
                    return Err(invalid(what, &p.name, "width must be at least one word"));
                }
                if p.rate == 0 {
                    return Err(invalid(what, &p.name, "send rate must be at least 1"));
                }
            }
        }
        for c in &self.connections {
            let from = self
                .outputs
                .get(c.from as usize)
                .ok_or(BuildError::UnknownId("output port", c.from))?;
            let to = self
                .inputs
                .get(c.to as usize)
                .ok_or(BuildError::UnknownId("input port", c.to))?;
            let (fd, td) = (
                self.units[from.unit as usize].domain,
                self.units[to.unit as usize].domain,
            );
            if fd != td {
                return Err(BuildError::CrossDomain {
                    from: from.name.clone(),
                    from_domain: self.domains[fd as usize].name.clone(),
                    to: to.name.clone(),
                    to_domain: self.domains[td as usize].name.clone(),
                });
            }
            if from.width != to.width {
                return Err(invalid(
                    "connection",
                    &from.name,
                    "the ports' item widths differ",
                ));
            }
            if c.capacity == 0 {
                return Err(invalid(
                    "connection",
                    &from.name,
                    "capacity must be at least 1",
                ));
            }
        }
        for f in &self.fifos {
            self.unit_domain(f.writer.0, "unit")?;
            self.unit_domain(f.reader.0, "unit")?;
            if !f.depth.is_power_of_two()
                || f.depth < FIFO_DEPTH_RANGE.0
                || f.depth > FIFO_DEPTH_RANGE.1
            {
                return Err(invalid(
                    "CDC FIFO",
                    &f.name,
                    "depth must be a power of two in 2..=2^30",
                ));
            }
            if f.sync < FIFO_SYNC_RANGE.0 || f.sync > FIFO_SYNC_RANGE.1 {
                return Err(invalid(
                    "CDC FIFO",
                    &f.name,
                    "synchronizer length must be in 2..=64",
                ));
            }
            if f.width == 0 {
                return Err(invalid(
                    "CDC FIFO",
                    &f.name,
                    "width must be at least one word",
                ));
            }
        }
        for s in &self.stages {
            self.unit_domain(s.unit, "unit")?;
            if s.pipes == 0 || s.width == 0 {
                return Err(invalid(
                    "stage register",
                    &s.name,
                    "needs at least one pipe and one word",
                ));
            }
        }
        for site in &self.assertions {
            self.unit_domain(site.unit, "unit")?;
        }
        Ok(())
    }
}
