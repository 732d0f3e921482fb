//! The Cranelift JIT: one native function per unit shape, and per group of
//! units (a domain's evaluation order, from `simulate`) one native function
//! that calls its units' functions directly, in order, with the state
//! reached through one pointer; host calls only for channels, FIFOs,
//! traces, faults and `finish`.
//!
//! Every IR construct compiles; there is no fallback to the interpreter.
//! The generated code follows the interpreter's evaluation order exactly
//! (see [`crate::interp`]), so the two make identical host calls.

mod build;
mod codegen;
mod edges;
mod host_abi;
mod reloc;
mod wire;

use cranelift_codegen::ir::{AbiParam, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};

use crate::engine::Engine;
use crate::host::Host;
use crate::ir::{PortId, Program};

pub use codegen::packed::{packed_in_registers, packed_slots};
pub use codegen::simd::vector_groups;
pub(crate) use edges::{EdgesFn, can_stop};
pub(crate) use host_abi::HostCtx;
use host_abi::Sig;
pub(crate) use wire::Wires;

/// A JIT failure: always a compiler bug or an unsupported host, never a
/// user error.
#[derive(Debug, thiserror::Error)]
#[error("JIT compilation failed: {0}")]
pub struct JitError(String);

fn err(e: impl std::fmt::Display) -> JitError {
    JitError(e.to_string())
}

/// Options for the code generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JitConfig {
    /// Run Cranelift's IR verifier on every function (on in tests).
    pub verify: bool,
    /// Cranelift optimisation level `speed` rather than `none`.
    pub optimize: bool,
    /// Vectorize runs of isomorphic statements (`jit/simd.rs`) where the
    /// host has 128-bit vectors.
    pub simd: bool,
    /// Run-ahead loops of groups that make no host call keep narrow
    /// registers in a packed `u32` mirror (`jit/packed.rs`); needs `simd`.
    pub packed: bool,
    /// Print each compiled function's Cranelift IR and machine code on
    /// standard error (a debugging aid for code quality work).
    pub dump: bool,
    /// Compile the latency-0 channels that qualify inside an inline group
    /// as wires: values passed in registers (`jit/wire.rs`).
    pub wires: bool,
    /// Compile an inline group with CDC FIFO operations a second time, as
    /// the variant the replay loop calls in runs with no sink (no entry or
    /// observation test per operation, `jit/fifo.rs`); off, those runs
    /// call the one function.
    pub unobserved_variants: bool,
}

impl Default for JitConfig {
    fn default() -> Self {
        JitConfig {
            verify: cfg!(debug_assertions),
            optimize: true,
            simd: true,
            packed: true,
            dump: false,
            wires: true,
            unobserved_variants: true,
        }
    }
}

/// The channel table's slots past its one per IR port (`HostCtx::chans`):
/// per input port with several connections (a fan-in) of a program whose
/// ports are absolute (not a unit shape's), one slot per connection, for
/// its connections' states in declaration order; inline code merges them
/// as the runtime's `recv` does (`jit/chan.rs`).
pub(crate) fn fan_in_slots(p: &Program) -> Vec<(PortId, std::ops::Range<u32>)> {
    let mut counts = vec![0u32; p.ports.len()];
    for c in &p.channels {
        if let Some(n) = counts.get_mut(c.to as usize) {
            *n += 1;
        }
    }
    let mut next = p.ports.len() as u32;
    counts
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n > 1)
        .map(|(port, &n)| {
            let slots = next..next + n;
            next += n;
            (port as PortId, slots)
        })
        .collect()
}

/// The channel table's length for `p`: a slot per port and the fan-in
/// slots ([`fan_in_slots`]).
pub(crate) fn chan_table_len(p: &Program) -> usize {
    p.ports.len() + fan_in_slots(p).iter().map(|(_, s)| s.len()).sum::<usize>()
}

/// What the code generator's functions take of [`JitConfig`], with `simd`
/// already limited to what the host supports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodeOptions {
    /// [`JitConfig::simd`], where the host has 128-bit vectors.
    pub simd: bool,
    /// [`JitConfig::packed`].
    pub packed: bool,
    /// [`JitConfig::dump`].
    pub dump: bool,
    /// [`JitConfig::unobserved_variants`].
    pub unobserved_variants: bool,
}

pub(crate) type UnitFn = unsafe extern "C" fn(*mut u64, *mut HostCtx<'_>) -> u32;

/// A group function: runs its units in order. Arguments: the runtime's
/// tick context and the group's [`GroupData`]. Returns 0.
pub(crate) type GroupFn = unsafe extern "C" fn(*mut std::ffi::c_void, *mut GroupData) -> u32;

/// What a group function reads: the state, its units' contexts, and where
/// to store the runtime's tick context for their host calls.
#[repr(C)]
pub(crate) struct GroupData {
    /// The state's slot 0.
    pub state: *mut u64,
    /// One [`HostCtx`] per unit of the group, in group order.
    pub contexts: *mut HostCtx<'static>,
    /// The binding's tick context cell (see `simulate::RuntimeBinding`).
    pub tick: *mut *mut std::ffi::c_void,
    /// A [`GroupCode::Edges`] group's loop, for its one-edge calls
    /// (`simulate`'s trampoline); `None` for the other kinds.
    pub edges: Option<EdgesFn>,
}

/// Groups of at most this many units are compiled as one function with
/// their units' code inline; larger ones too while their code is within
/// [`INLINE_NODE_BUDGET`]; the rest call the shared shape functions
/// (compile time follows distinct shapes, not instances).
const INLINE_GROUP_LIMIT: usize = 16;

/// IR nodes (statements and expression nodes) up to which a group of more
/// than [`INLINE_GROUP_LIMIT`] units is still compiled inline: a pipeline
/// of a few hundred small stage units joined by channels then runs as one
/// function with its channels as wires (issue 16), while a design of
/// thousands of instances keeps one function per shape.
const INLINE_NODE_BUDGET: usize = 1 << 15;

/// Whether group `members` is compiled inline (see [`INLINE_GROUP_LIMIT`]).
fn inlines(program: &Program, members: &[u32]) -> bool {
    if members.len() <= INLINE_GROUP_LIMIT {
        return true;
    }
    let mut nodes = 0;
    for &u in members {
        let Some(unit) = program.units.get(u as usize) else {
            return false;
        };
        crate::ir::walk::visit_stmts(&unit.body, &mut |_| nodes += 1);
        crate::ir::walk::visit_expr_nodes(&unit.body, &mut |_| nodes += 1);
        if nodes > INLINE_NODE_BUDGET {
            return false;
        }
    }
    true
}

/// The channels group `members` compiles as wires under `config`: those
/// [`Wires::of`] finds where the group is inline and wires are on.
pub(crate) fn group_wires(program: &Program, members: &[u32], config: &JitConfig) -> Wires {
    if config.wires && inlines(program, members) {
        Wires::of(program, members)
    } else {
        Wires::default()
    }
}

/// A group's compiled code.
#[derive(Clone, Copy)]
pub(crate) enum GroupCode {
    /// Calls its units' shape functions; called as (tick context, group data).
    Calls(GroupFn),
    /// Its units' code inline over the whole state, called as (state, one
    /// [`HostCtx`] for the group) after the tick context is stored in the
    /// binding; host calls find their unit from their port, trace or fault.
    Inline(UnitFn),
    /// The same code as [`GroupCode::Inline`] in its run-ahead form
    /// (`jit::edges`), called as (state, the context, `n`) for `n` edges;
    /// compiled instead of `Inline` where the design can run ahead, and
    /// called with `n = 1` for one edge.
    Edges(EdgesFn),
}

/// Which [`GroupCode`] a compiled group function is.
#[derive(Clone, Copy)]
enum Kind {
    Inline,
    Calls,
    Edges,
}

/// A [`HostCtx::member`] that says "the unit of the port, trace or fault".
pub(crate) const DERIVE_MEMBER: u32 = u32::MAX;

/// Compiled native code for a program.
pub struct Jit {
    module: Option<JITModule>,
    units: Vec<(UnitFn, reloc::Reloc)>,
    groups: Vec<(GroupCode, Vec<u32>)>,
    /// Per group: its [`GroupCode::Inline`] code's variant for unobserved
    /// runs, and the FIFO ports that variant needs bound (see
    /// [`Jit::unobserved_group`]); `None` where the group has no FIFO
    /// operation or is not inline.
    unobserved: Vec<Option<(UnitFn, Vec<u32>, bool)>>,
    /// Fault index to fault id for inline groups: the identity.
    fault_ids: Vec<u32>,
    /// A table of nulls, one per port: inline groups' default FIFO and
    /// channel tables.
    no_fifos: Box<[*mut chronon_runtime::ffi::FifoState]>,
    slots: usize,
    functions: usize,
}

impl Jit {
    /// Compiles every unit of `program` (which must validate).
    pub fn compile(program: &Program, config: JitConfig) -> Result<Jit, JitError> {
        Self::compile_with_groups(program, config, &[])
    }

    /// Compiles every unit of `program`, and for each of `groups` (unit ids,
    /// in the order they must run) a function that calls the units'
    /// functions directly, one after the other (see [`Jit::group`]).
    pub fn compile_with_groups(
        program: &Program,
        config: JitConfig,
        groups: &[Vec<u32>],
    ) -> Result<Jit, JitError> {
        Self::compile_with_groups_ahead(program, config, groups, &[])
    }

    /// [`Jit::compile_with_groups`], with each inline group `g` with
    /// `ahead[g]` compiled in its run-ahead form ([`GroupCode::Edges`]).
    pub fn compile_with_groups_ahead(
        program: &Program,
        config: JitConfig,
        groups: &[Vec<u32>],
        ahead: &[bool],
    ) -> Result<Jit, JitError> {
        let mut b = build::Build::new(program, config)?;
        let (ids, instances) = b.unit_shapes()?;
        let mut group_ids = Vec::with_capacity(groups.len());
        let mut unobserved_ids = Vec::new();
        for (g, members) in groups.iter().enumerate() {
            if let Some(&u) = members.iter().find(|&&u| u as usize >= program.units.len()) {
                return Err(err(format!(
                    "group {g} names unit {u}, which does not exist"
                )));
            }
            if !inlines(program, members) {
                group_ids.push((b.calls_group(g, members, &ids, &instances)?, Kind::Calls));
                continue;
            }
            let wires = group_wires(program, members, &config);
            if ahead.get(g) == Some(&true) {
                // One form only: the loop serves single edges too.
                group_ids.push((b.edges_group(g, members, &wires)?, Kind::Edges));
                continue;
            }
            let (id, variant) = b.inline_group(g, members, &wires)?;
            group_ids.push((id, Kind::Inline));
            if let Some(variant) = variant {
                unobserved_ids.push((g, variant));
            }
        }
        b.finish(groups, group_ids, unobserved_ids, (ids, instances))
    }

    /// Number of distinct native functions (units with equal code share one).
    pub fn function_count(&self) -> usize {
        self.functions
    }

    /// Group `g`'s variant for unobserved runs, if it has one, and the
    /// IR ports it operates on as FIFOs: called exactly as its
    /// [`GroupCode::Inline`] code (same contexts), it does the same only
    /// while each of those ports' FIFO table entries is non-null and its
    /// FIFO unobserved (no sink records FIFO events), for it tests
    /// neither; and whether it calls the host (else it never reads the
    /// tick cell its context names).
    pub(crate) fn unobserved_group(&self, g: usize) -> Option<(UnitFn, &[u32], bool)> {
        let (f, ports, calls_host) = self.unobserved.get(g)?.as_ref()?;
        Some((*f, ports.as_slice(), *calls_host))
    }

    /// Group `g`'s code and the contexts to call it with (one per unit, or
    /// one for an inline group), bound to `binding` (the runtime), so that
    /// host calls go straight to the running group tick.
    ///
    /// The contexts point into `self` (fault tables): they must not outlive it.
    pub(crate) fn group(
        &self,
        g: usize,
        binding: *const crate::simulate::RuntimeBinding,
    ) -> (GroupCode, Box<[HostCtx<'static>]>) {
        let (f, members) = &self.groups[g];
        if let GroupCode::Inline(_) | GroupCode::Edges(_) = f {
            let context = HostCtx {
                host: None,
                binding,
                // One unit: no need to look it up per host call.
                member: if members.len() == 1 { 0 } else { DERIVE_MEMBER },
                port_base: 0,
                trace_base: 0,
                faults: self.fault_ids.as_slice() as *const [u32],
                // Every FIFO operation calls the host until the runtime
                // binding gives the context its own table.
                fifos: self.no_fifos.as_ptr(),
                chans: self.no_fifos.as_ptr().cast(),
            };
            return (*f, Box::new([context]));
        }
        let contexts = members
            .iter()
            .enumerate()
            .map(|(k, &u)| {
                let r = &self.units[u as usize].1;
                HostCtx {
                    host: None,
                    binding,
                    member: k as u32,
                    port_base: r.port_base,
                    trace_base: r.trace_base,
                    faults: r.faults.as_slice() as *const [u32],
                    // Relative ports index the table from the instance's base.
                    fifos: self.no_fifos.as_ptr().wrapping_add(r.port_base as usize),
                    chans: self
                        .no_fifos
                        .as_ptr()
                        .wrapping_add(r.port_base as usize)
                        .cast(),
                }
            })
            .collect();
        (*f, contexts)
    }
}

/// A JIT module for the host with `config`'s Cranelift flags, the host
/// functions imported (their ids, in `host_abi::imports` order), and the
/// code generator's options (SIMD only where the host has it).
fn new_module(config: JitConfig) -> Result<(JITModule, Vec<FuncId>, CodeOptions), JitError> {
    let mut flags = settings::builder();
    flags
        .set("opt_level", if config.optimize { "speed" } else { "none" })
        .map_err(err)?;
    flags
        .set(
            "enable_verifier",
            if config.verify { "true" } else { "false" },
        )
        .map_err(err)?;
    flags.set("use_colocated_libcalls", "false").map_err(err)?;
    flags.set("is_pic", "false").map_err(err)?;
    let isa = cranelift_native::builder()
        .map_err(err)?
        .finish(settings::Flags::new(flags))
        .map_err(err)?;
    let code = CodeOptions {
        simd: config.simd && codegen::simd::host_supports(&*isa),
        packed: config.packed,
        dump: config.dump,
        unobserved_variants: config.unobserved_variants,
    };
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    let imports = host_abi::imports();
    for import in &imports {
        builder.symbol(import.name, import.addr);
    }
    let mut module = JITModule::new(builder);
    let ptr = module.target_config().pointer_type();
    let mut import_ids = Vec::new();
    for import in &imports {
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(ptr));
        let (params, returns): (&[_], bool) = match import.sig {
            Sig::Id => (&[types::I32], true),
            Sig::IdVoid => (&[types::I32], false),
            Sig::Void => (&[], false),
            Sig::Ret => (&[], true),
            Sig::IdBuf => (&[types::I32, ptr, types::I32], true),
            Sig::IdBufVoid => (&[types::I32, ptr, types::I32], false),
            Sig::IdFlagBuf => (&[types::I32, types::I32, ptr, types::I32], true),
        };
        sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        if returns {
            sig.returns.push(AbiParam::new(types::I32));
        }
        import_ids.push(
            module
                .declare_function(import.name, Linkage::Import, &sig)
                .map_err(err)?,
        );
    }
    Ok((module, import_ids, code))
}

/// Compiles the function built in `ctx` as `id` and clears `ctx`; with
/// `dump` ([`JitConfig::dump`]), prints its Cranelift IR and machine code
/// on stderr under the heading `label` gives.
fn define(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    id: FuncId,
    dump: bool,
    label: impl FnOnce() -> String,
) -> Result<(), JitError> {
    if dump {
        ctx.set_disasm(true);
        eprintln!("; {}: Cranelift IR\n{}", label(), ctx.func.display());
    }
    module
        .define_function(id, ctx)
        .map_err(|e| err(format!("{e:?}")))?;
    if let Some(code) = ctx
        .compiled_code()
        .and_then(|c| c.vcode.as_ref())
        .filter(|_| dump)
    {
        eprintln!("; machine code\n{code}");
    }
    module.clear_context(ctx);
    Ok(())
}

/// The instance paths of a group's units, for dump headings.
fn group_paths(program: &Program, members: &[u32]) -> String {
    let paths: Vec<&str> = members
        .iter()
        .filter_map(|&u| program.units.get(u as usize).map(|unit| unit.path.as_str()))
        .collect();
    paths.join(", ")
}

impl Engine for Jit {
    fn tick_unit(&mut self, state: &mut [u64], unit: u32, host: &mut dyn Host) {
        assert_eq!(
            state.len(),
            self.slots,
            "state does not match the compiled program"
        );
        let (f, r) = &self.units[unit as usize];
        let mut ctx = HostCtx {
            host: Some(host),
            binding: std::ptr::null(),
            member: 0,
            port_base: r.port_base,
            trace_base: r.trace_base,
            faults: r.faults.as_slice() as *const [u32],
            // Every FIFO operation calls the `dyn Host`.
            fifos: self.no_fifos.as_ptr().wrapping_add(r.port_base as usize),
            chans: self
                .no_fifos
                .as_ptr()
                .wrapping_add(r.port_base as usize)
                .cast(),
        };
        let base = state[r.slot_base as usize..].as_mut_ptr();
        // SAFETY: `f` runs this unit's code relocated to `slot_base`: every
        // slot it touches is one of the unit's own, below `self.slots`
        // (indexed accesses are bounds-checked in the generated code), and it
        // calls back only through `ctx`, which outlives the call.
        unsafe { f(base, &mut ctx) };
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the function pointers into this module are dropped with
            // `self` and never escape it.
            unsafe { module.free_memory() };
        }
    }
}
