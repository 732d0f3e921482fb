//! The run-ahead form of an inline group function (contract §7): the
//! group's code in a loop over `n` consecutive edges of its domain,
//! `(state, ctx, n) -> edges done`, bound to the runtime's
//! `Tick::native_edges`.
//!
//! Per edge it runs the same code as the one-edge form (the units' bodies
//! and register commits, in order), then, if another edge follows and the
//! group makes any host call, the host's `next_edge`: the runtime commits
//! the domain's FIFOs and moves the tick context's cycle and time to the
//! next edge (the host calls of channels, FIFOs, traces and faults read
//! them), and says to stop after an edge at which a unit finished or
//! faulted. The runtime completes the last edge itself (the `NativeEdgesFn`
//! contract), so a call with `n = 1` is exactly one edge with no host call
//! of its own: where a design can run ahead this is the group's only form,
//! also called once per edge by the instant loop. A group that makes no
//! host call touches nothing of the runtime's and reads neither cycle nor
//! time (`random()` keeps its own cycle slot), so its loop is the bodies
//! alone.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, FuncRef, InstBuilder, Value, types};
use cranelift_frontend::FunctionBuilder;

use super::host_abi::idx;
use crate::ir::{Expr, Program, Stmt};

/// Which function `codegen::function_in` builds.
#[derive(Clone, Copy, Debug)]
pub(super) enum Form {
    /// One edge: `(state, ctx) -> 0`.
    Once,
    /// The run-ahead loop; `next_edge`: call the host's `next_edge` after
    /// each edge (see [`needs_next_edge`]).
    Edges {
        /// Whether the group makes host calls.
        next_edge: bool,
    },
}

/// The blocks of an open edge loop.
pub(super) struct EdgeLoop {
    n: Value,
    body: Block,
    exit: Block,
    index: Value,
    next_edge: bool,
}

/// Starts the loop after the entry block's set-up (loads that hold for
/// every edge): the code built next is the loop's body. `None` for
/// [`Form::Once`].
pub(super) fn open_loop(b: &mut FunctionBuilder<'_>, entry: Block, form: Form) -> Option<EdgeLoop> {
    let Form::Edges { next_edge } = form else {
        return None;
    };
    let n = b.block_params(entry)[2];
    let body = b.create_block();
    let index = b.append_block_param(body, types::I64);
    let exit = b.create_block();
    b.append_block_param(exit, types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(body, &[zero.into()]);
    b.switch_to_block(body);
    Some(EdgeLoop {
        n,
        body,
        exit,
        index,
        next_edge,
    })
}

/// Ends the body: counts the edge and, while edges remain, asks the host
/// for the next one if the group needs it and loops while it says so.
/// Leaves the builder in the exit block and returns the edges done (the
/// runtime completes the last), which the caller returns.
pub(super) fn close_loop(
    b: &mut FunctionBuilder<'_>,
    l: EdgeLoop,
    ctx: Value,
    host: &[FuncRef],
) -> Value {
    let done = b.ins().iadd_imm_s(l.index, 1);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, done, l.n);
    if l.next_edge {
        let next = b.create_block();
        b.ins().brif(more, next, &[], l.exit, &[done.into()]);
        b.switch_to_block(next);
        // Between two edges: commit this one, move to the next.
        let call = b.ins().call(host[idx::NEXT_EDGE], &[ctx]);
        let go_on = b.inst_results(call)[0];
        b.ins()
            .brif(go_on, l.body, &[done.into()], l.exit, &[done.into()]);
    } else {
        b.ins()
            .brif(more, l.body, &[done.into()], l.exit, &[done.into()]);
    }
    b.switch_to_block(l.exit);
    b.block_params(l.exit)[0]
}

/// Whether the group's loop must call the host's `next_edge` after each
/// edge: some unit's code makes a host call (a port, FIFO, trace, assert,
/// `finish`, a stage register write or a bounds-checked index, whose fault
/// is a host call; an inline channel operation, which reads the cycle the
/// host moves on), or owns a FIFO port (a FIFO operation that runs inline
/// still needs the runtime's per-edge commit). `wires` are quiet: values
/// in registers. Otherwise the loop is the bodies alone.
pub(super) fn needs_next_edge(program: &Program, units: &[u32], wires: &super::Wires) -> bool {
    let owned = |p: u32| units.contains(&program.ports[p as usize].unit);
    program.fifos.iter().any(|f| owned(f.from) || owned(f.to))
        || units.iter().any(|&u| {
            !program.units[u as usize]
                .body
                .iter()
                .all(|s| quiet(s, wires))
        })
}

/// Whether `s` (and what it contains) is only local and state arithmetic
/// (wired channel operations included): no host call, no fault.
fn quiet(s: &Stmt, wires: &super::Wires) -> bool {
    let mut quiet = true;
    s.visit(&mut |s| {
        quiet &=
            matches!(s, Stmt::Assign(..) | Stmt::Store(..) | Stmt::If { .. }) || wires.wired(s);
        s.own_exprs(&mut |e| quiet &= quiet_expr(e));
    });
    quiet
}

/// Whether `e` cannot fault (no bounds-checked load).
fn quiet_expr(e: &Expr) -> bool {
    let mut quiet = true;
    e.visit(&mut |x| quiet &= !matches!(x, Expr::LoadIndexed(_)));
    quiet
}

/// Whether the units can stop the run (the runtime's `Tick::can_stop`):
/// their code holds a statement that may fault or finish (an assert, a
/// `send` that is not a wire, a stage register write or retain, `finish`)
/// or a bounds-checked index.
pub(crate) fn can_stop(program: &Program, units: &[u32], wires: &super::Wires) -> bool {
    units.iter().any(|&u| {
        program.units[u as usize]
            .body
            .iter()
            .any(|s| may_stop(s, wires))
    })
}

/// Whether `s` may fault or finish.
fn may_stop(s: &Stmt, wires: &super::Wires) -> bool {
    let mut stops = false;
    s.visit(&mut |s| {
        stops |= match s {
            Stmt::Send { dst, .. } => dst.is_none() && !wires.wired(s),
            Stmt::StoreIndexed(..)
            | Stmt::StageWrite { .. }
            | Stmt::StageRetain { .. }
            | Stmt::Assert { .. }
            | Stmt::Finish => true,
            _ => false,
        };
        s.own_exprs(&mut |e| stops |= !quiet_expr(e));
    });
    stops
}

/// A run-ahead function: `(state, the group's context, n) -> edges done`.
pub(crate) type EdgesFn = unsafe extern "C" fn(*mut u64, *mut super::HostCtx<'_>, u64) -> u64;

/// Declares and defines the run-ahead form of inline group `g`
/// (`members`, in order) as `group{g}_edges`.
#[allow(clippy::too_many_arguments)]
pub(super) fn define_group(
    module: &mut cranelift_jit::JITModule,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut cranelift_frontend::FunctionBuilderContext,
    program: &Program,
    g: usize,
    members: &[u32],
    imports: &[cranelift_module::FuncId],
    buf_words: u32,
    code: super::CodeOptions,
    wires: &super::Wires,
) -> Result<cranelift_module::FuncId, super::JitError> {
    use cranelift_codegen::ir::{AbiParam, UserFuncName};
    use cranelift_module::{Linkage, Module};
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I64));
    let id = module
        .declare_function(&format!("group{g}_edges"), Linkage::Local, &sig)
        .map_err(super::err)?;
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(2, id.as_u32());
    let form = Form::Edges {
        next_edge: needs_next_edge(program, members, wires),
    };
    super::codegen::function_in(
        module,
        &mut ctx.func,
        fctx,
        program,
        members,
        imports,
        buf_words,
        code,
        wires,
        form,
        false,
    )?;
    super::define(module, ctx, id, code.dump, || {
        format!(
            "group {g} run-ahead loop (units inline: {})",
            super::group_paths(program, members)
        )
    })?;
    Ok(id)
}
