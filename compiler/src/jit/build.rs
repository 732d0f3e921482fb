//! The steps of [`Jit::compile_with_groups_ahead`]: one Cranelift module
//! and its shared contexts ([`Build`]), the unit shapes, then each group
//! in the form it compiles to (inline, inline with its unobserved variant,
//! run-ahead edges, or a function of direct calls), then finalizing and
//! taking the function pointers.

use std::collections::HashMap;

use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, UserFuncName, types};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Linkage, Module};

use super::{
    CodeOptions, EdgesFn, GroupCode, GroupFn, HostCtx, Jit, JitConfig, JitError, Kind, UnitFn,
    Wires, codegen, define, edges, err, group_paths, new_module, reloc,
};
use crate::ir::Program;

/// Runs of at least this many calls of one shape are a loop over a table
/// of their state offsets in a calls group.
const ROLLED_CALLS: usize = 8;

/// Consecutive calls of one shape.
#[derive(Debug, PartialEq, Eq)]
struct CallRun {
    shape: usize,
    /// The first call's position in the group (its context's index).
    first: usize,
    count: usize,
}

/// `calls` (shape, slot base) as maximal runs of one shape, in order.
fn call_runs(calls: &[(usize, i64)]) -> Vec<CallRun> {
    let mut runs: Vec<CallRun> = Vec::new();
    for (i, &(shape, _)) in calls.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if run.shape == shape => run.count += 1,
            _ => runs.push(CallRun {
                shape,
                first: i,
                count: 1,
            }),
        }
    }
    runs
}

/// Each unit's shape function and relocation.
pub(super) type Instances = Vec<(usize, reloc::Reloc)>;

/// An inline group's variant for unobserved runs: its id, the FIFO ports
/// it operates on, and whether it calls the host.
pub(super) type Unobserved = (FuncId, Vec<u32>, bool);

/// One compile: the module, the contexts every definition reuses, and
/// what every function's code generation shares.
pub(super) struct Build<'p> {
    program: &'p Program,
    module: JITModule,
    ctx: cranelift_codegen::Context,
    fctx: FunctionBuilderContext,
    /// (pointer, pointer) -> i32: units, inline and calls groups.
    sig: Signature,
    imports: Vec<FuncId>,
    code: CodeOptions,
    buf_words: u32,
}

impl<'p> Build<'p> {
    /// A module for `program` under `config`.
    pub(super) fn new(program: &'p Program, config: JitConfig) -> Result<Self, JitError> {
        let (module, imports, code) = new_module(config)?;
        let ptr = module.target_config().pointer_type();
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(ptr));
        sig.params.push(AbiParam::new(ptr));
        sig.returns.push(AbiParam::new(types::I32));
        let ctx = module.make_context();
        Ok(Build {
            program,
            module,
            ctx,
            fctx: FunctionBuilderContext::new(),
            sig,
            imports,
            code,
            buf_words: codegen::buffer_words(program),
        })
    }

    /// Declares a function of the shared signature, named `name`, and
    /// readies the context for it (`namespace` keeps the names apart).
    fn declare(&mut self, name: &str, namespace: u32) -> Result<FuncId, JitError> {
        let id = self
            .module
            .declare_function(name, Linkage::Local, &self.sig)
            .map_err(err)?;
        self.ctx.func.signature = self.sig.clone();
        self.ctx.func.name = UserFuncName::user(namespace, id.as_u32());
        Ok(id)
    }

    /// One function per distinct unit shape (units whose code is equal up
    /// to where their state lies share it), and per unit its shape and
    /// relocation.
    pub(super) fn unit_shapes(&mut self) -> Result<(Vec<FuncId>, Instances), JitError> {
        let program = self.program;
        let mut shapes: HashMap<reloc::Shape, usize> = HashMap::new();
        let mut ids: Vec<FuncId> = Vec::new();
        let mut instances = Vec::with_capacity(program.units.len());
        for u in 0..program.units.len() as u32 {
            let (shape, relocation) = reloc::relocate(program, u);
            let index = match shapes.get(&shape) {
                Some(i) => *i,
                None => {
                    let id = self.declare(&format!("shape{}", ids.len()), 0)?;
                    let one = reloc::shape_program(&shape);
                    codegen::function(
                        &mut self.module,
                        &mut self.ctx.func,
                        &mut self.fctx,
                        &one,
                        &[0],
                        &self.imports,
                        self.buf_words,
                        self.code,
                        &Wires::default(),
                        false,
                    )?;
                    define(&mut self.module, &mut self.ctx, id, self.code.dump, || {
                        format!("unit shape of {}", program.units[u as usize].path)
                    })?;
                    ids.push(id);
                    shapes.insert(shape, ids.len() - 1);
                    ids.len() - 1
                }
            };
            instances.push((index, relocation));
        }
        Ok((ids, instances))
    }

    /// Group `g` in its run-ahead form ([`GroupCode::Edges`]).
    pub(super) fn edges_group(
        &mut self,
        g: usize,
        members: &[u32],
        wires: &Wires,
    ) -> Result<FuncId, JitError> {
        edges::define_group(
            &mut self.module,
            &mut self.ctx,
            &mut self.fctx,
            self.program,
            g,
            members,
            &self.imports,
            self.buf_words,
            self.code,
            wires,
        )
    }

    /// The units' code, in order, in one function over the whole state
    /// (slots, ports, traces and faults as the program's); then, where it
    /// differs, its variant for unobserved runs.
    pub(super) fn inline_group(
        &mut self,
        g: usize,
        members: &[u32],
        wires: &Wires,
    ) -> Result<(FuncId, Option<Unobserved>), JitError> {
        let program = self.program;
        let ports = codegen::fifo_ports(program, members);
        let variants: &[bool] = if ports.is_empty() || !self.code.unobserved_variants {
            &[false]
        } else {
            &[false, true]
        };
        let (mut main, mut variant) = (None, None);
        for &unobserved in variants {
            let (name, what) = match unobserved {
                false => (format!("group{g}"), ""),
                true => (format!("group{g}_unobserved"), " unobserved"),
            };
            let id = self.declare(&name, 1 + u32::from(unobserved))?;
            let calls_host = codegen::function(
                &mut self.module,
                &mut self.ctx.func,
                &mut self.fctx,
                program,
                members,
                &self.imports,
                self.buf_words,
                self.code,
                wires,
                unobserved,
            )?;
            define(&mut self.module, &mut self.ctx, id, self.code.dump, || {
                format!(
                    "group {g}{what} (units inline: {})",
                    group_paths(program, members)
                )
            })?;
            match unobserved {
                false => main = Some(id),
                true => variant = Some((id, ports.clone(), calls_host)),
            }
        }
        let main = main.ok_or_else(|| err(format!("group {g} has no function")))?;
        Ok((main, variant))
    }

    /// A function (tick context, group data) -> i32 that calls each
    /// member's shape function directly, with its state and context.
    pub(super) fn calls_group(
        &mut self,
        g: usize,
        members: &[u32],
        ids: &[FuncId],
        instances: &Instances,
    ) -> Result<FuncId, JitError> {
        let program = self.program;
        let id = self.declare(&format!("group{g}"), 1)?;
        let ptr = self.module.target_config().pointer_type();
        let mut b = cranelift_frontend::FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (tick, data) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let trusted = cranelift_codegen::ir::MemFlagsData::trusted();
        let state = b.ins().load(ptr, trusted, data, 0);
        let envs = b.ins().load(ptr, trusted, data, 8);
        let tick_cell = b.ins().load(ptr, trusted, data, 16);
        // Host calls of the units below reach the runtime through it.
        b.ins().store(trusted, tick, tick_cell, 0);
        let ctx_size = std::mem::size_of::<HostCtx<'static>>() as i64;
        let mut calls = Vec::with_capacity(members.len());
        for &u in members {
            let (shape, relocation) = instances
                .get(u as usize)
                .ok_or_else(|| err(format!("group {g} names unit {u}, which does not exist")))?;
            calls.push((*shape, i64::from(relocation.slot_base)));
        }
        for run in call_runs(&calls) {
            // A direct call to the shape's function: no dispatch.
            let callee = self.module.declare_func_in_func(ids[run.shape], b.func);
            let env0 = run.first as i64 * ctx_size;
            let bases = &calls[run.first..run.first + run.count];
            if run.count < ROLLED_CALLS {
                for (k, &(_, base)) in bases.iter().enumerate() {
                    let base = b.ins().iadd_imm_s(state, base * 8);
                    let env = b.ins().iadd_imm_s(envs, env0 + k as i64 * ctx_size);
                    b.ins().call(callee, &[base, env]);
                }
                continue;
            }
            // Many units of one shape: one loop over a table of their
            // state offsets, so the function's size follows the shapes,
            // not the units (2^19 instances of a cell).
            let table = self
                .module
                .declare_anonymous_data(false, false)
                .map_err(err)?;
            let mut data = cranelift_module::DataDescription::new();
            let bytes: Vec<u8> = bases
                .iter()
                .flat_map(|&(_, base)| (base * 8).to_le_bytes())
                .collect();
            data.define(bytes.into_boxed_slice());
            data.set_align(8);
            self.module.define_data(table, &data).map_err(err)?;
            let gv = self.module.declare_data_in_func(table, b.func);
            let table = b.ins().symbol_value(ptr, gv);
            let (body, done) = (b.create_block(), b.create_block());
            let k = b.append_block_param(body, types::I64);
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().jump(body, &[zero.into()]);
            b.switch_to_block(body);
            let entry = b.ins().imul_imm_s(k, 8);
            let at = b.ins().iadd(table, entry);
            let offset = b.ins().load(types::I64, trusted, at, 0);
            let base = b.ins().iadd(state, offset);
            let step = b.ins().imul_imm_s(k, ctx_size);
            let at = b.ins().iadd(envs, step);
            let env = b.ins().iadd_imm_s(at, env0);
            b.ins().call(callee, &[base, env]);
            let next = b.ins().iadd_imm_s(k, 1);
            let more = b.ins().icmp_imm_u(
                cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThan,
                next,
                run.count as i64,
            );
            b.ins().brif(more, body, &[next.into()], done, &[]);
            b.switch_to_block(done);
        }
        let ok = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[ok]);
        b.seal_all_blocks();
        b.finalize(self.module.target_config());
        define(&mut self.module, &mut self.ctx, id, self.code.dump, || {
            format!("group {g} (calls: {})", group_paths(program, members))
        })?;
        Ok(id)
    }

    /// Finalizes the module and takes every function's pointer: per group
    /// its code (`group_ids`, by kind) and unobserved variant, per unit its
    /// shape function and relocation.
    pub(super) fn finish(
        self,
        groups: &[Vec<u32>],
        group_ids: Vec<(FuncId, Kind)>,
        unobserved_ids: Vec<(usize, Unobserved)>,
        (ids, instances): (Vec<FuncId>, Instances),
    ) -> Result<Jit, JitError> {
        let Build {
            program,
            mut module,
            ..
        } = self;
        module.finalize_definitions().map_err(err)?;
        let groups = group_ids
            .iter()
            .zip(groups)
            .map(|(&(id, kind), members)| {
                let code = module.get_finalized_function(id);
                // SAFETY: `Inline` and `Calls` were defined above with the
                // signature (pointer, pointer) -> i32, `Edges` by
                // `edges::define_group` with (pointer, pointer, i64) -> i64,
                // the platform's `extern "C"`.
                let f = unsafe {
                    match kind {
                        Kind::Inline => {
                            GroupCode::Inline(std::mem::transmute::<*const u8, UnitFn>(code))
                        }
                        Kind::Calls => {
                            GroupCode::Calls(std::mem::transmute::<*const u8, GroupFn>(code))
                        }
                        Kind::Edges => {
                            GroupCode::Edges(std::mem::transmute::<*const u8, EdgesFn>(code))
                        }
                    }
                };
                (f, members.clone())
            })
            .collect();
        let mut unobserved: Vec<Option<(UnitFn, Vec<u32>, bool)>> = vec![None; group_ids.len()];
        for (g, (id, ports, calls_host)) in unobserved_ids {
            let code = module.get_finalized_function(id);
            // SAFETY: defined above with the signature (pointer, pointer)
            // -> i32, the platform's `extern "C"`.
            let f = unsafe { std::mem::transmute::<*const u8, UnitFn>(code) };
            unobserved[g] = Some((f, ports, calls_host));
        }
        let functions: Vec<UnitFn> = ids
            .iter()
            .map(|id| {
                let code = module.get_finalized_function(*id);
                // SAFETY: the function was defined with the signature
                // (state pointer, context pointer) -> i32 in the platform's
                // default calling convention, which is `extern "C"`.
                unsafe { std::mem::transmute::<*const u8, UnitFn>(code) }
            })
            .collect();
        let units = instances
            .into_iter()
            .map(|(i, r)| (functions[i], r))
            .collect();
        Ok(Jit {
            module: Some(module),
            units,
            groups,
            unobserved,
            fault_ids: (0..program.faults.len() as u32).collect(),
            no_fifos: vec![std::ptr::null_mut(); program.ports.len()].into_boxed_slice(),
            slots: program.slots.len(),
            functions: functions.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CallRun, call_runs};

    #[test]
    fn calls_fall_into_runs_of_one_shape() {
        let calls = [(0, 10), (0, 12), (0, 99), (1, 16), (1, 30), (0, 40)];
        let run = |shape, first, count| CallRun {
            shape,
            first,
            count,
        };
        assert_eq!(
            call_runs(&calls),
            vec![run(0, 0, 3), run(1, 3, 2), run(0, 5, 1)]
        );
        assert_eq!(call_runs(&[]), vec![]);
    }
}
