//! Lowering from the front end's elaborated design to the IR.
//!
//! Aggregates become runs of scalar slots and locals; functions are inlined;
//! `for` loops are unrolled; `match` becomes a chain of conditionals;
//! expressions with effects (`recv`, `try_send`, ...) are hoisted into
//! statements in evaluation order; `&&` and `||` short-circuit. A dynamic
//! index into a register becomes a bounds-checked slot access; into a
//! local, a range check followed by a select chain. Fault sites keep the
//! source location of the construct.

mod bits;
mod layout;
mod order;
pub mod random;
mod reroll;
mod wide;

use chronon_lang::ast::{BinOp as LBin, UnOp as LUn};
use chronon_lang::design::{
    Design, Expr as LExpr, ExprKind as EK, PlaceElem, PortKind as LPortKind, Stmt as LStmt,
    StmtKind as SK, Type, Value,
};
use chronon_lang::diag::Diagnostic;
use chronon_lang::span::{SourceMap, Span};
use chronon_runtime::Clock;

use crate::ir::{
    BinOp, Channel, Commit, Counter, Domain, Expr, FaultSite, Fifo, Indexed, Port, PortKind,
    Program, RecvKind, SiteKind, Slot, Stage, Stmt, TracePoint, Ty, UnOp, Unit,
};

pub use layout::{scalars, size};

/// A design the back end cannot lower.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// A limit only lowering can see (a tick that unrolls too far, E0328;
    /// one that needs too many scalar locals, E0329): a diagnostic like the
    /// front end's, which `chronc check` reports too.
    #[error("{}", .0.message)]
    Limit(Diagnostic),
    /// A clock the runtime cannot represent, or a compiler bug.
    #[error("{0}")]
    Internal(String),
}

/// Where each instance's pieces landed in the program.
struct InstLayout {
    /// First current-value slot of each register.
    reg_cur: Vec<u32>,
    /// First next-value slot of each register.
    reg_next: Vec<u32>,
    /// IR stage id of each stage register.
    stages: Vec<u32>,
    /// Slot of each counter.
    counters: Vec<u32>,
    /// IR port id of each port.
    ports: Vec<u32>,
    /// Seed and cycle slots of a unit whose tick calls `random()`.
    random: Option<(u32, u32)>,
}

/// Lowers an elaborated design with the default seed
/// ([`random::DEFAULT_SEED`]); `sources` gives fault sites their locations.
pub fn lower(design: &Design, sources: &SourceMap) -> Result<Program, LowerError> {
    lower_seeded(design, sources, random::DEFAULT_SEED)
}

/// [`lower`] for a run with this seed: the seed of `random()` (see
/// [`random`]) is the initial value of a slot of each unit that calls it.
pub fn lower_seeded(
    design: &Design,
    sources: &SourceMap,
    seed: u64,
) -> Result<Program, LowerError> {
    lower_with(design, sources, seed, true, true)
}

/// [`lower_seeded`] as a run's configuration asks: the IR optimizer only
/// with `optimize` ([`crate::config::ExecConfig::ir_opt`]), long constant
/// loops kept as loops only with `reroll`
/// ([`crate::config::ExecConfig::reroll`]).
pub fn lower_for_run(
    design: &Design,
    sources: &SourceMap,
    seed: u64,
    (optimize, reroll): (bool, bool),
) -> Result<Program, LowerError> {
    lower_with(design, sources, seed, optimize, reroll)
}

/// [`lower`] without [`crate::ir::opt`], for tests that compare the
/// optimized program with what it was made from.
pub fn lower_unoptimized(design: &Design, sources: &SourceMap) -> Result<Program, LowerError> {
    lower_with(design, sources, random::DEFAULT_SEED, false, true)
}

fn lower_with(
    design: &Design,
    sources: &SourceMap,
    seed: u64,
    optimize: bool,
    reroll: bool,
) -> Result<Program, LowerError> {
    let mut p = Program::default();
    for c in &design.clocks {
        let clock = Clock::from_big(&c.period_ps, &c.phase_ps)
            .map_err(|e| LowerError::Internal(format!("clock `{}`: {e}", c.name)))?;
        p.domains.push(Domain {
            name: c.name.clone(),
            period_ps: *clock.period(),
            phase_ps: *clock.phase(),
        });
    }
    let mut layouts = Vec::new();
    for (i, inst) in design.instances.iter().enumerate() {
        layouts.push(declare_instance(
            &mut p,
            design,
            i as u32,
            inst.spec,
            &inst.path,
            inst.domain as u32,
        ));
        if let Some(layout) = layouts.last()
            && let Some((seed_slot, _)) = layout.random
        {
            p.slots[seed_slot as usize].init = random::unit_seed(seed, &inst.path);
        }
    }
    for ch in &design.channels {
        p.channels.push(Channel {
            from: layouts[ch.from.instance].ports[ch.from.port],
            to: layouts[ch.to.instance].ports[ch.to.port],
            latency: ch.latency,
            capacity: ch.capacity,
        });
    }
    for f in &design.fifos {
        p.fifos.push(Fifo {
            from: layouts[f.writer.instance].ports[f.writer.port],
            to: layouts[f.reader.instance].ports[f.reader.port],
            depth: f.depth,
            sync: f.sync,
        });
    }
    for (i, inst) in design.instances.iter().enumerate() {
        let spec = &design.specs[inst.spec];
        let mut l = UnitLower {
            d: design,
            p: &mut p,
            src: sources,
            unit: i as u32,
            inst: &layouts[i],
            locals: Vec::new(),
            local_map: Vec::new(),
            local_types: spec.locals.iter().map(|loc| loc.ty.clone()).collect(),
            out: Vec::new(),
            ret: None,
            iterations: Vec::new(),
            loop_vars: Vec::new(),
            stream: None,
            stage_site_cache: std::collections::HashMap::new(),
            unrolled: 0,
            too_long: None,
            reroll,
        };
        l.local_map = spec
            .locals
            .iter()
            .map(|loc| l.new_locals(&loc.ty))
            .collect();
        let body = match layouts[i].random {
            // The tick's random stream is computed once, first; the cycle
            // slot counts ticks, last, so it is the local cycle.
            Some((seed_slot, cycle_slot)) => {
                let stream = l.locals.len() as u32;
                l.locals.push(Ty::U64);
                l.stream = Some(stream);
                let mut body = vec![Stmt::Assign(stream, random::stream(seed_slot, cycle_slot))];
                body.extend(l.block(&spec.tick));
                body.push(Stmt::Store(cycle_slot, random::next_cycle(cycle_slot)));
                body
            }
            None => l.block(&spec.tick),
        };
        if let Some(at) = l.too_long {
            return Err(LowerError::Limit(
                Diagnostic::error(
                    "E0328",
                    format!(
                        "the `for` loops of unit `{}` unroll to more than {MAX_UNROLLED} \
                         iterations in one tick",
                        inst.path
                    ),
                    at,
                    "the loop that passes the limit",
                )
                .with_help(
                    "loops are unrolled: use shorter loops, or keep the work in registers \
                     across edges (a function with a loop called in a loop multiplies them)",
                ),
            ));
        }
        if l.locals.len() > MAX_LOCALS {
            return Err(LowerError::Limit(
                Diagnostic::error(
                    "E0329",
                    format!(
                        "the tick of unit `{}` needs {} scalar locals, more than {MAX_LOCALS}",
                        inst.path,
                        l.locals.len()
                    ),
                    spec.span,
                    "the unit whose tick needs them",
                )
                .with_help(
                    "aggregate values count one per scalar: keep large arrays in registers, \
                     not in `let`s, ports or loops of temporaries",
                ),
            ));
        }
        let locals = std::mem::take(&mut l.locals);
        p.units[i].body = body;
        p.units[i].locals = locals;
    }
    p.clusters = order::clusters(&p).map_err(LowerError::Internal)?;
    if optimize {
        crate::ir::opt::optimize(&mut p);
        // After the optimizer, which makes registers written at known
        // places in-place: what remains of large ones is copied sparsely.
        crate::ir::sparse::sparse_all(&mut p);
    }
    crate::ir::validate::validate(&p)
        .map_err(|e| LowerError::Internal(format!("internal compiler error: {e}")))?;
    Ok(p)
}

fn add_slots(p: &mut Program, name: &str, tys: &[Ty], init: &[u64]) -> u32 {
    use std::fmt::Write as _;
    let base = p.slots.len() as u32;
    p.slots.reserve(tys.len());
    for (i, ty) in tys.iter().enumerate() {
        // One allocation of the final size per slot: a large register
        // array names millions of slots, and `format!` grew each name
        // several times (three quarters of lowering a 2^20-element array).
        let mut full = String::with_capacity(name.len() + 11);
        full.push_str(name);
        if tys.len() > 1 {
            let _ = write!(full, ".{i}");
        }
        p.slots.push(Slot {
            name: full,
            ty: *ty,
            init: init.get(i).copied().unwrap_or(0),
        });
    }
    base
}

/// `file:line:col` of a span, when its file is known.
fn span_text(src: &SourceMap, span: Span) -> Option<String> {
    if (span.file.0 as usize) >= src.len() {
        return None;
    }
    let file = src.get(span.file);
    let (line, col) = file.line_col(span.start as usize);
    Some(format!("{}:{}:{}", file.name, line, col))
}

fn declare_instance(
    p: &mut Program,
    d: &Design,
    unit: u32,
    spec: usize,
    path: &str,
    domain: u32,
) -> InstLayout {
    let spec = &d.specs[spec];
    let mut layout = InstLayout {
        reg_cur: vec![],
        reg_next: vec![],
        stages: vec![],
        counters: vec![],
        ports: vec![],
        random: None,
    };
    let mut commits = Vec::new();
    for r in &spec.regs {
        let tys = scalars(&r.ty);
        let init: Vec<u64> = layout::constant(&r.ty, &r.init)
            .iter()
            .map(|(_, v)| *v)
            .collect();
        let cur = add_slots(p, &format!("{path}.{}", r.name), &tys, &init);
        let next = add_slots(p, &format!("{path}.{}'", r.name), &tys, &init);
        if tys.len() > 1 {
            p.aggregates.push(crate::ir::Aggregate {
                first: cur,
                shape: layout::shape(&r.ty),
            });
        }
        if !tys.is_empty() {
            commits.push(Commit::Copy {
                from: next,
                to: cur,
                count: tys.len() as u32,
            });
        }
        layout.reg_cur.push(cur);
        layout.reg_next.push(next);
    }
    for s in &spec.stages {
        let item = scalars(&s.ty);
        let pipes = s.pipes;
        let name = format!("{path}.{}", s.name);
        let per_pipe =
            |tys: &[Ty]| -> Vec<Ty> { (0..pipes).flat_map(|_| tys.iter().copied()).collect() };
        let valid = add_slots(p, &format!("{name}.valid"), &per_pipe(&[Ty::BOOL]), &[]);
        let value = add_slots(p, &format!("{name}.value"), &per_pipe(&item), &[]);
        let valid_next = add_slots(p, &format!("{name}.valid'"), &per_pipe(&[Ty::BOOL]), &[]);
        let value_next = add_slots(p, &format!("{name}.value'"), &per_pipe(&item), &[]);
        let touched = add_slots(p, &format!("{name}.touched"), &per_pipe(&[Ty::BOOL]), &[]);
        p.stages.push(Stage {
            unit,
            name: s.name.clone(),
            pipes,
            item,
            valid,
            value,
            valid_next,
            value_next,
            touched,
        });
        let id = (p.stages.len() - 1) as u32;
        commits.push(Commit::Stage(id));
        layout.stages.push(id);
    }
    for c in &spec.counters {
        let slot = add_slots(p, &format!("{path}.{}", c.name), &[Ty::U64], &[]);
        p.counters.push(Counter {
            unit,
            name: c.name.clone(),
            slot,
        });
        layout.counters.push(slot);
    }
    if spec.random_sites > 0 {
        // Its initial value, the unit's seed, is set by `lower_seeded`.
        let seed_slot = add_slots(p, &format!("{path}.random.seed"), &[Ty::U64], &[]);
        let cycle_slot = add_slots(p, &format!("{path}.random.cycle"), &[Ty::U64], &[]);
        layout.random = Some((seed_slot, cycle_slot));
    }
    for port in &spec.ports {
        let kind = match port.kind {
            LPortKind::ChannelIn => PortKind::In,
            LPortKind::CdcRegistered => PortKind::CdcIn,
            LPortKind::CdcFwft => PortKind::CdcFwftIn,
            LPortKind::Out { .. } => PortKind::Out,
        };
        let rate = match port.kind {
            LPortKind::Out { rate } => rate,
            _ => 1,
        };
        p.ports.push(Port {
            unit,
            name: port.name.clone(),
            kind,
            item: scalars(&port.ty),
            rate,
        });
        layout.ports.push((p.ports.len() - 1) as u32);
    }
    p.units.push(Unit {
        path: path.to_string(),
        domain,
        locals: Vec::new(),
        body: Vec::new(),
        commits,
    });
    layout
}

/// Where a written place lives.
#[derive(Clone, Copy)]
enum Target {
    /// State slots from this one.
    Slots(u32),
    /// Locals from this one.
    Locals(u32),
}

impl Target {
    fn offset(self, by: usize) -> Target {
        match self {
            Target::Slots(s) => Target::Slots(s + by as u32),
            Target::Locals(l) => Target::Locals(l + by as u32),
        }
    }
}

struct UnitLower<'a> {
    d: &'a Design,
    p: &'a mut Program,
    src: &'a SourceMap,
    unit: u32,
    inst: &'a InstLayout,
    locals: Vec<Ty>,
    /// First IR local of each front-end local in scope.
    local_map: Vec<u32>,
    /// Type of each front-end local in scope.
    local_types: Vec<Type>,
    out: Vec<Stmt>,
    /// Inside an inlined function: its result locals and its `returned` flag.
    ret: Option<(u32, u32)>,
    /// Iterations of the enclosing `for` and `while` loops, outermost
    /// first (constants where unrolled).
    iterations: Vec<random::Iteration>,
    /// The front-end locals of those loops' variables, in the same order.
    loop_vars: Vec<usize>,
    /// The local holding the tick's random stream, when it calls `random()`.
    stream: Option<u32>,
    /// Fault sites of stage operations by (stage, file, offset, is a read).
    stage_site_cache: std::collections::HashMap<(u32, u32, u32, bool), u32>,
    /// Loop iterations unrolled in this tick so far, against
    /// [`MAX_UNROLLED`].
    unrolled: u64,
    /// The first loop that would have passed [`MAX_UNROLLED`].
    too_long: Option<Span>,
    /// Whether long constant loops stay loops ([`reroll`]).
    reroll: bool,
}

/// At most this many `for` iterations are unrolled into one tick. The front
/// end bounds each loop nest (`chronon_lang::check::MAX_LOOP_ITERATIONS`),
/// but a function with a loop called inside a loop multiplies them; this
/// bound turns that into an error instead of exhausting time and memory.
pub const MAX_UNROLLED: u64 = 1 << 16;

/// At most this many scalar locals in one tick: the JIT gives each a
/// Cranelift variable, and Cranelift numbers a block's parameters with a
/// `u16`. A local of type `[u64; 200000]` would pass it.
pub const MAX_LOCALS: usize = u16::MAX as usize;

/// Element `index` of `lo..hi` (`pick` gives each), as a balanced tree of
/// selects on `index < mid`: depth `log2` of the length, where a chain of
/// compares nested one per element and overflowed the stack of every pass
/// that walks expressions (a 16,384-element temporary). Elements past
/// what `ity` can hold are left out.
fn select_tree(index: &Expr, ity: Ty, lo: usize, hi: usize, pick: &dyn Fn(usize) -> Expr) -> Expr {
    if hi - lo <= 1 {
        return pick(lo);
    }
    let mid = lo + (hi - lo) / 2;
    if mid as u64 > ity.mask() {
        return select_tree(index, ity, lo, mid, pick);
    }
    Expr::Select {
        cond: Box::new(bin(
            BinOp::Lt,
            ity,
            index.clone(),
            Expr::Const(ity, mid as u64),
        )),
        then: Box::new(select_tree(index, ity, lo, mid, pick)),
        els: Box::new(select_tree(index, ity, mid, hi, pick)),
    }
}

/// Whether `index` (of type `ity`) is below `n`.
fn in_range(index: Expr, ity: Ty, n: u32) -> Expr {
    if u64::from(n) > ity.mask() {
        Expr::Const(Ty::BOOL, 1)
    } else {
        bin(BinOp::Lt, ity, index, Expr::Const(ity, u64::from(n)))
    }
}

fn bin(op: BinOp, ty: Ty, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, ty, Box::new(a), Box::new(b))
}

fn not(e: Expr) -> Expr {
    Expr::Unary(UnOp::Not, Ty::BOOL, Box::new(e))
}

fn scalar(ty: &Type) -> Ty {
    scalars(ty).first().copied().unwrap_or(Ty::BOOL)
}

impl UnitLower<'_> {
    fn new_locals(&mut self, ty: &Type) -> u32 {
        let base = self.locals.len() as u32;
        self.locals.extend(scalars(ty));
        base
    }

    fn temp(&mut self, ty: Ty, e: Expr) -> Expr {
        let l = self.locals.len() as u32;
        self.locals.push(ty);
        self.out.push(Stmt::Assign(l, e));
        Expr::Local(l)
    }

    fn span_text(&self, span: Span) -> Option<String> {
        span_text(self.src, span)
    }

    fn fault(&mut self, kind: SiteKind, construct: String, message: String, span: Span) -> u32 {
        let text = self.span_text(span);
        self.p.faults.push(FaultSite {
            unit: self.unit,
            kind,
            construct,
            message,
            source: text.is_some().then_some(span),
            span: text,
        });
        (self.p.faults.len() - 1) as u32
    }

    fn block(&mut self, stmts: &[LStmt]) -> Vec<Stmt> {
        let saved = std::mem::take(&mut self.out);
        self.stmts(stmts);
        std::mem::replace(&mut self.out, saved)
    }

    /// Lowers statements into `self.out`; after a statement that may
    /// `return` from an inlined function, the rest runs only if it did not.
    fn stmts(&mut self, stmts: &[LStmt]) {
        for (i, s) in stmts.iter().enumerate() {
            self.stmt(s);
            if let Some((_, done)) = self.ret
                && may_return(s)
                && i + 1 < stmts.len()
            {
                let rest = self.block(&stmts[i + 1..]);
                self.out.push(Stmt::If {
                    cond: not(Expr::Local(done)),
                    then: rest,
                    els: Vec::new(),
                });
                return;
            }
        }
    }

    fn stmt(&mut self, s: &LStmt) {
        match &s.kind {
            SK::AssignLocal { local, path, value } => {
                let vals = self.expr(value);
                let base = self.local_map[*local];
                let ty = self.local_type(*local);
                self.write(Target::Locals(base), &ty, path, vals, s.span);
            }
            SK::RegWrite { reg, path, value } => {
                let vals = self.expr(value);
                let spec = &self.d.specs[self.spec()];
                let ty = spec.regs[*reg].ty.clone();
                self.write(
                    Target::Slots(self.inst.reg_next[*reg]),
                    &ty,
                    path,
                    vals,
                    s.span,
                );
            }
            SK::CounterAdd { counter, value } => {
                let v = self.expr(value).remove(0);
                let slot = self.inst.counters[*counter];
                self.out.push(Stmt::Store(
                    slot,
                    bin(BinOp::Add, Ty::U64, Expr::Load(slot), v),
                ));
            }
            SK::Send { port, value } => {
                let value = self.expr(value);
                let port = self.port(port);
                let name = self.p.ports[port as usize].name.clone();
                let fault = self.fault(
                    SiteKind::Send,
                    name.clone(),
                    format!("send on port `{name}` refused"),
                    s.span,
                );
                self.out.push(Stmt::Send {
                    port,
                    value,
                    dst: None,
                    fault: Some(fault),
                });
            }
            SK::StageWrite { stage, pipe, value } => {
                let pipe = self.expr(pipe).remove(0);
                let value = self.expr(value);
                let stage = self.inst.stages[*stage];
                let sites = self.stage_sites(stage, s.span);
                self.out.push(Stmt::StageWrite {
                    stage,
                    pipe,
                    value,
                    sites,
                });
            }
            SK::StageRetain { stage, pipe } => {
                let pipe = self.expr(pipe).remove(0);
                let stage = self.inst.stages[*stage];
                let sites = self.stage_sites(stage, s.span);
                self.out.push(Stmt::StageRetain { stage, pipe, sites });
            }
            SK::Expr(e) => {
                self.expr(e);
            }
            SK::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.expr(cond).remove(0);
                let then = self.block(then);
                let els = self.block(otherwise);
                self.out.push(Stmt::If { cond, then, els });
            }
            SK::IfSome {
                binding,
                value,
                then,
                otherwise,
            } => {
                let mut vals = self.expr(value);
                let ok = vals.remove(0);
                let ok = self.temp(Ty::BOOL, ok);
                let base = self.local_map[*binding];
                let saved = std::mem::take(&mut self.out);
                for (i, v) in vals.into_iter().enumerate() {
                    self.out.push(Stmt::Assign(base + i as u32, v));
                }
                self.stmts(then);
                let then = std::mem::replace(&mut self.out, saved);
                let els = self.block(otherwise);
                self.out.push(Stmt::If {
                    cond: ok,
                    then,
                    els,
                });
            }
            SK::Match {
                scrutinee,
                arms,
                default,
            } => {
                let ty = scalar(&scrutinee.ty);
                let vals = self.expr(scrutinee);
                let is_wide = wide::wide(&scrutinee.ty).is_some();
                let v = if is_wide {
                    None
                } else {
                    let v = vals[0].clone();
                    Some(self.temp(ty, v))
                };
                let wide_v = is_wide.then(|| self.bv(vals, &scrutinee.ty));
                let mut chain = self.block(default);
                for arm in arms.iter().rev() {
                    let cond = arm
                        .values
                        .iter()
                        .map(|k| {
                            let limbs: Vec<Expr> =
                                layout::constant(&scrutinee.ty, &Value::int(k.clone()))
                                    .into_iter()
                                    .map(|(t, v)| Expr::Const(t, v))
                                    .collect();
                            match (&v, &wide_v) {
                                (Some(v), _) => bin(BinOp::Eq, ty, v.clone(), limbs[0].clone()),
                                (_, Some(wv)) => {
                                    let k = self.bv(limbs, &scrutinee.ty);
                                    self.eq(wv, &k)
                                }
                                _ => unreachable!("one of the two is set"),
                            }
                        })
                        .reduce(|a, b| bin(BinOp::Or, Ty::BOOL, a, b))
                        .unwrap_or(Expr::Const(Ty::BOOL, 0));
                    let then = self.block(&arm.body);
                    chain = vec![Stmt::If {
                        cond,
                        then,
                        els: chain,
                    }];
                }
                self.out.extend(chain);
            }
            SK::For {
                var,
                start,
                end,
                body,
            } => {
                let base = self.local_map[*var];
                let ty = scalar(&self.local_type(*var));
                let returns = self.ret.filter(|_| body.iter().any(may_return));
                let n = u64::from(end.saturating_sub(*start));
                if self.too_long.is_some() || self.unrolled + n > MAX_UNROLLED {
                    self.too_long.get_or_insert(s.span);
                    return;
                }
                self.unrolled += n;
                if self.reroll && reroll::stays_a_loop(n, body) {
                    self.constant_loop(*var, (*start, *end), body, s.span);
                    return;
                }
                for i in *start..*end {
                    let saved = std::mem::take(&mut self.out);
                    self.out.push(Stmt::Assign(
                        base,
                        Expr::Const(ty, u64::from(i) & ty.mask()),
                    ));
                    self.iterations.push(random::Iteration::Const(i));
                    self.loop_vars.push(*var);
                    self.stmts(body);
                    self.loop_vars.pop();
                    self.iterations.pop();
                    let iteration = std::mem::replace(&mut self.out, saved);
                    match returns {
                        Some((_, done)) if i > *start => self.out.push(Stmt::If {
                            cond: not(Expr::Local(done)),
                            then: iteration,
                            els: Vec::new(),
                        }),
                        _ => self.out.extend(iteration),
                    }
                }
            }
            SK::RangeLoop {
                var,
                start,
                end,
                max,
                body,
            } => self.range_loop(*var, start, end, *max, body, s.span),
            SK::While { cond, max, body } => self.while_loop(cond, *max, body, s.span),
            SK::Return(e) => {
                let vals = self.expr(e);
                if let Some((result, done)) = self.ret {
                    for (i, v) in vals.into_iter().enumerate() {
                        self.out.push(Stmt::Assign(result + i as u32, v));
                    }
                    self.out.push(Stmt::Assign(done, Expr::Const(Ty::BOOL, 1)));
                }
            }
            SK::Finish => self.out.push(Stmt::Finish),
            SK::Assert { cond, message } => {
                let cond = self.expr(cond).remove(0);
                let fault = self.fault(SiteKind::Assert, "assert".into(), message.clone(), s.span);
                self.out.push(Stmt::Assert { cond, fault });
            }
            SK::Trace { name, args } => {
                let mut names = Vec::new();
                let mut values = Vec::new();
                let mut wide = Vec::new();
                for (n, e) in args {
                    let mut scalars = scalars(&e.ty).into_iter().zip(self.expr(e));
                    // One name per value of the argument's layout; a wide
                    // value's limbs named by their bits (`x[127:64]`).
                    let leaves = layout::values(&e.ty);
                    for (i, leaf) in leaves.iter().enumerate() {
                        let label = if leaves.len() > 1 {
                            format!("{n}.{i}")
                        } else {
                            n.clone()
                        };
                        let limbs = leaf.map_or(1, |(w, _)| wide::limbs(w));
                        if let Some((width, signed)) = *leaf {
                            wide.push(crate::ir::WideTraceValue {
                                first: names.len() as u32,
                                name: label.clone(),
                                width,
                                signed,
                            });
                        }
                        for (k, (ty, v)) in scalars.by_ref().take(limbs).enumerate() {
                            let name = match leaf {
                                Some((w, _)) => {
                                    let lo = 64 * k as u32;
                                    format!("{label}[{}:{lo}]", (lo + 63).min(w - 1))
                                }
                                None => label.clone(),
                            };
                            names.push((name, ty));
                            values.push(v);
                        }
                    }
                }
                self.trace_point(name.clone(), names, values, None, wide);
            }
            // A print is a trace point of its own kind: its records take
            // the trace path (canonical order, both engines, every
            // recorder's exclusion) to the print output.
            SK::Print { format, args } => {
                let mut names = Vec::new();
                let mut values = Vec::new();
                for (i, e) in args.iter().enumerate() {
                    // A wide value's limbs are consecutive arguments.
                    let vals = self.expr(e);
                    let tys = scalars(&e.ty);
                    let limbs = tys.len();
                    for (k, (ty, v)) in tys.into_iter().zip(vals).enumerate() {
                        let name = if limbs > 1 {
                            format!("{i}.{k}")
                        } else {
                            i.to_string()
                        };
                        names.push((name, ty));
                        values.push(v);
                    }
                }
                let bools = args
                    .iter()
                    .map(|e| matches!(e.ty, chronon_lang::design::Type::Bool))
                    .collect();
                let wide = args
                    .iter()
                    .map(|e| match e.ty {
                        chronon_lang::design::Type::Int { signed, width } if width > 64 => {
                            Some((width, signed))
                        }
                        _ => None,
                    })
                    .collect();
                let print = crate::ir::PrintFormat {
                    pieces: format.clone(),
                    bools,
                    wide,
                };
                self.trace_point("print".into(), names, values, Some(print), Vec::new());
            }
        }
    }

    /// A new trace point of this unit (`print` set for a `print`'s) and the
    /// statement that records `values` at it.
    fn trace_point(
        &mut self,
        name: String,
        args: Vec<(String, Ty)>,
        values: Vec<Expr>,
        print: Option<crate::ir::PrintFormat>,
        wide: Vec<crate::ir::WideTraceValue>,
    ) {
        self.p.traces.push(TracePoint {
            unit: self.unit,
            name,
            args,
            print,
            wide,
        });
        let trace = (self.p.traces.len() - 1) as u32;
        self.out.push(Stmt::Trace {
            trace,
            args: values,
        });
    }

    fn spec(&self) -> usize {
        self.d.instances[self.unit as usize].spec
    }

    fn local_type(&self, local: usize) -> Type {
        self.local_types[local].clone()
    }

    fn assign(&mut self, target: Target, vals: Vec<Expr>) {
        // An aggregate assigned to locals may read the locals it overwrites
        // (`p = P { a: p.b, b: p.a }`): evaluate every field first.
        let vals: Vec<Expr> = match target {
            Target::Locals(_) if vals.len() > 1 => vals
                .into_iter()
                .map(|v| match v {
                    Expr::Const(..) => v,
                    other => {
                        let ty = crate::ir::validate::type_of(self.p, &self.locals, &other)
                            .expect("lowered expressions are well typed");
                        self.temp(ty, other)
                    }
                })
                .collect(),
            _ => vals,
        };
        for (i, v) in vals.into_iter().enumerate() {
            match target.offset(i) {
                Target::Slots(s) => self.out.push(Stmt::Store(s, v)),
                Target::Locals(l) => self.out.push(Stmt::Assign(l, v)),
            }
        }
    }

    /// Writes `vals` to the part of `target` (of type `ty`) named by `path`.
    fn write(
        &mut self,
        target: Target,
        ty: &Type,
        path: &[PlaceElem],
        vals: Vec<Expr>,
        span: Span,
    ) {
        let Some((first, rest)) = path.split_first() else {
            self.assign(target, vals);
            return;
        };
        match first {
            PlaceElem::Field(i) => {
                let (offset, fty) = layout::field_offset(ty, *i);
                self.write(target.offset(offset), &fty, rest, vals, span);
            }
            PlaceElem::Bits(sel) => self.write_bits(target, ty, sel, vals, span),
            PlaceElem::Index(e) => {
                let (ety, n) = layout::element(ty);
                let k = size(&ety);
                let index = self.expr(e).remove(0);
                if let Expr::Const(_, i) = index {
                    if i < u64::from(n) {
                        self.write(target.offset(i as usize * k), &ety, rest, vals, span);
                    } else {
                        let fault = self.index_fault(span);
                        self.out.push(Stmt::Assert {
                            cond: Expr::Const(Ty::BOOL, 0),
                            fault,
                        });
                    }
                    return;
                }
                let ity = scalar(&e.ty);
                let index = self.temp(ity, index);
                let vals: Vec<Expr> = vals.into_iter().map(|v| self.pure(v)).collect();
                // A field of the element (`m[i].f.g <= v`): its offset in
                // the element is known, so the store is indexed like the
                // whole element's, not a compare per element.
                let fields = rest
                    .iter()
                    .try_fold((0, ety.clone()), |(off, t), p| match p {
                        PlaceElem::Field(f) => {
                            let (o, ft) = layout::field_offset(&t, *f);
                            Some((off + o, ft))
                        }
                        PlaceElem::Index(_) | PlaceElem::Bits(_) => None,
                    });
                if let (Target::Slots(base), Some((offset, _))) = (target, fields) {
                    let fault = self.index_fault(span);
                    for (j, v) in vals.into_iter().enumerate() {
                        let ix = Indexed {
                            base: base + (offset + j) as u32,
                            stride: k as u32,
                            len: n,
                            index: Box::new(index.clone()),
                            fault,
                        };
                        self.out.push(Stmt::StoreIndexed(ix, v));
                    }
                    return;
                }
                // A bit range inside the element takes the compare per
                // element below, which writes through `write` again.
                let bits = rest.iter().any(|p| matches!(p, PlaceElem::Bits(_)));
                if let (Target::Slots(base), false) = (target, bits) {
                    self.write_nested(base, (ety, n), index, ity, rest, vals, span);
                    return;
                }
                self.check_index(index.clone(), ity, n, span);
                for i in 0..n {
                    let saved = std::mem::take(&mut self.out);
                    self.write(
                        target.offset(i as usize * k),
                        &ety,
                        rest,
                        vals.clone(),
                        span,
                    );
                    let then = std::mem::replace(&mut self.out, saved);
                    let cond = bin(
                        BinOp::Eq,
                        ity,
                        index.clone(),
                        Expr::Const(ity, u64::from(i) & ity.mask()),
                    );
                    self.out.push(Stmt::If {
                        cond,
                        then,
                        els: Vec::new(),
                    });
                }
            }
        }
    }

    /// A write into register slots from `base` at the run-time `index` of
    /// an array of `n` elements of type `ety`, whose place goes on with
    /// further indices into the element (`m[i][j].f <= v`): each run-time
    /// index is range-checked in order, a fault and no write when out of
    /// range (as the compare per element did), and the write is one
    /// indexed store per scalar at the sum of the offsets, so its code
    /// does not grow with the array.
    #[allow(clippy::too_many_arguments)]
    fn write_nested(
        &mut self,
        base: u32,
        (ety, n): (Type, u32),
        index: Expr,
        ity: Ty,
        rest: &[PlaceElem],
        vals: Vec<Expr>,
        span: Span,
    ) {
        let total = n as usize * size(&ety);
        // Slot offset in `u64`: a narrow index times an element size can
        // overflow the index's type.
        let scaled = |i: Expr, ity: Ty, k: usize| {
            let wide = Expr::Cast {
                from: ity,
                to: Ty::U64,
                arg: Box::new(i),
            };
            bin(BinOp::Mul, Ty::U64, wide, Expr::Const(Ty::U64, k as u64))
        };
        self.check_index(index.clone(), ity, n, span);
        // Per run-time index: its in-range condition and the statements
        // outside the `if` it guards.
        let mut nests = vec![(
            in_range(index.clone(), ity, n),
            std::mem::take(&mut self.out),
        )];
        let mut offset = scaled(index, ity, size(&ety));
        let (mut fixed, mut ty) = (0usize, ety);
        let mut reachable = true;
        for p in rest {
            match p {
                // `write` sends a place with a bit range elsewhere.
                PlaceElem::Bits(_) => unreachable!("a bit range in a nested indexed write"),
                PlaceElem::Field(f) => {
                    let (o, ft) = layout::field_offset(&ty, *f);
                    fixed += o;
                    ty = ft;
                }
                PlaceElem::Index(e) => {
                    let (inner, n2) = layout::element(&ty);
                    let k2 = size(&inner);
                    let i2 = self.expr(e).remove(0);
                    ty = inner;
                    if let Expr::Const(_, c) = i2 {
                        if c < u64::from(n2) {
                            fixed += c as usize * k2;
                        } else {
                            let fault = self.index_fault(span);
                            self.out.push(Stmt::Assert {
                                cond: Expr::Const(Ty::BOOL, 0),
                                fault,
                            });
                            reachable = false;
                            break;
                        }
                        continue;
                    }
                    let ity2 = scalar(&e.ty);
                    let t2 = self.temp(ity2, i2);
                    self.check_index(t2.clone(), ity2, n2, span);
                    nests.push((
                        in_range(t2.clone(), ity2, n2),
                        std::mem::take(&mut self.out),
                    ));
                    offset = bin(BinOp::Add, Ty::U64, offset, scaled(t2, ity2, k2));
                }
            }
        }
        if reachable {
            let offset = self.temp(Ty::U64, offset);
            let fault = self.index_fault(span);
            for (j, v) in vals.into_iter().enumerate() {
                let first = fixed + j;
                let ix = Indexed {
                    base: base + first as u32,
                    stride: 1,
                    len: (total - first) as u32,
                    index: Box::new(offset.clone()),
                    fault,
                };
                self.out.push(Stmt::StoreIndexed(ix, v));
            }
        }
        while let Some((cond, outside)) = nests.pop() {
            let then = std::mem::replace(&mut self.out, outside);
            self.out.push(Stmt::If {
                cond,
                then,
                els: Vec::new(),
            });
        }
    }

    /// Makes `e` cheap and safe to duplicate.
    fn pure(&mut self, e: Expr) -> Expr {
        match e {
            Expr::Const(..) | Expr::Local(_) => e,
            other => {
                let ty = crate::ir::validate::type_of(self.p, &self.locals, &other)
                    .expect("lowered expressions are well typed");
                self.temp(ty, other)
            }
        }
    }

    /// The fault sites of a stage write or retain at `span`: one per pipe
    /// for a second write or retain, then the pipe range (see
    /// [`Stmt::StageRetain`]). Unrolled copies of one statement share them.
    fn stage_sites(&mut self, stage: u32, span: Span) -> u32 {
        let key = (stage, span.file.0, span.start, false);
        if let Some(first) = self.stage_site_cache.get(&key) {
            return *first;
        }
        let st = &self.p.stages[stage as usize];
        let (name, pipes) = (st.name.clone(), st.pipes);
        let first = self.p.faults.len() as u32;
        for pipe in 0..pipes {
            self.fault(
                SiteKind::StageTwice { pipe },
                name.clone(),
                format!(
                    "stage register `{name}`: pipe {pipe} written or retained twice in one tick"
                ),
                span,
            );
        }
        self.stage_range_site_new(stage, span);
        self.stage_site_cache.insert(key, first);
        first
    }

    /// The fault site of a stage read (`valid`, `read`) at `span` whose
    /// pipe is out of range.
    /// `for var in start..end max M`: a hidden `u64` counter `k` runs
    /// from `start` to `min(end, start + M)`, the variable takes `k` at the
    /// top of each iteration (so assigning it does not change the
    /// iterations, as in an unrolled loop), and a range of more than `M`
    /// faults before the first.
    fn range_loop(
        &mut self,
        var: usize,
        start: &LExpr,
        end: &LExpr,
        max: u32,
        body: &[LStmt],
        span: Span,
    ) {
        let widen = |e: Expr| Expr::Cast {
            from: Ty::unsigned(32),
            to: Ty::U64,
            arg: Box::new(e),
        };
        let a = self.expr(start).remove(0);
        let a = self.temp(Ty::U64, widen(a));
        let b = self.expr(end).remove(0);
        let b = self.temp(Ty::U64, widen(b));
        let most = bin(
            BinOp::Add,
            Ty::U64,
            a.clone(),
            Expr::Const(Ty::U64, u64::from(max)),
        );
        let most = self.temp(Ty::U64, most);
        let fault = self.fault(
            SiteKind::LoopBound,
            format!("`for` loop with max {max}"),
            format!("`for` ranges over more than its max {max} iterations"),
            span,
        );
        let fits = not(bin(BinOp::Lt, Ty::U64, most.clone(), b.clone()));
        self.out.push(Stmt::Assert { cond: fits, fault });
        let limit = Expr::Select {
            cond: Box::new(bin(BinOp::Lt, Ty::U64, b.clone(), most.clone())),
            then: Box::new(b),
            els: Box::new(most),
        };
        let limit = self.temp(Ty::U64, limit);
        self.counted_loop(var, a, limit, body);
    }

    /// A loop of `body` with a hidden `u64` counter `k` from `from` while
    /// below `limit` (and no `return` has ended it): the variable takes
    /// `k` at the top of each iteration (so assigning it does not change
    /// the iterations); returns how many loop iterations were unrolled
    /// inside the body.
    fn counted_loop(&mut self, var: usize, from: Expr, limit: Expr, body: &[LStmt]) -> u64 {
        let k = self.locals.len() as u32;
        self.locals.push(Ty::U64);
        self.out.push(Stmt::Assign(k, from));
        let mut cond = bin(BinOp::Lt, Ty::U64, Expr::Local(k), limit);
        if let Some((_, done)) = self.ret.filter(|_| body.iter().any(may_return)) {
            cond = bin(BinOp::And, Ty::BOOL, cond, not(Expr::Local(done)));
        }
        let saved = std::mem::take(&mut self.out);
        self.out.push(Stmt::Assign(
            self.local_map[var],
            Expr::Cast {
                from: Ty::U64,
                to: scalar(&self.local_type(var)),
                arg: Box::new(Expr::Local(k)),
            },
        ));
        let before = self.unrolled;
        self.iterations.push(random::Iteration::Local(k));
        self.loop_vars.push(var);
        self.stmts(body);
        self.loop_vars.pop();
        self.iterations.pop();
        self.out.push(Stmt::Assign(
            k,
            bin(BinOp::Add, Ty::U64, Expr::Local(k), Expr::Const(Ty::U64, 1)),
        ));
        let body = std::mem::replace(&mut self.out, saved);
        self.out.push(Stmt::While {
            head: Vec::new(),
            cond: Box::new(cond),
            body,
        });
        self.unrolled - before
    }

    /// `for var in start..end` with constant bounds kept as a loop (see
    /// [`reroll`]): a hidden `u64` counter runs from `start` to `end`, the
    /// variable takes it at the top of each iteration, and the unroll
    /// budget counts the loops unrolled inside as often as they run.
    fn constant_loop(&mut self, var: usize, (start, end): (u32, u32), body: &[LStmt], span: Span) {
        let from = Expr::Const(Ty::U64, u64::from(start));
        let limit = Expr::Const(Ty::U64, u64::from(end));
        let inner = self.counted_loop(var, from, limit, body);
        self.unrolled += inner * u64::from(end - start - 1);
        if self.unrolled > MAX_UNROLLED {
            self.too_long.get_or_insert(span);
        }
    }

    /// `while cond max M`: the condition computed in the loop's head into
    /// `c`; the loop runs while `c` holds and fewer than `M` iterations
    /// ran, and `c` still holding after them faults.
    fn while_loop(&mut self, cond: &LExpr, max: u32, body: &[LStmt], span: Span) {
        let n = self.locals.len() as u32;
        self.locals.push(Ty::U64);
        self.out.push(Stmt::Assign(n, Expr::Const(Ty::U64, 0)));
        let saved = std::mem::take(&mut self.out);
        let c = self.expr(cond).remove(0);
        let c = self.temp(Ty::BOOL, c);
        let head = std::mem::replace(&mut self.out, saved);
        let below = bin(
            BinOp::Lt,
            Ty::U64,
            Expr::Local(n),
            Expr::Const(Ty::U64, u64::from(max)),
        );
        let returns = self.ret.filter(|_| body.iter().any(may_return));
        let mut test = bin(BinOp::And, Ty::BOOL, c.clone(), below);
        if let Some((_, done)) = returns {
            test = bin(BinOp::And, Ty::BOOL, test, not(Expr::Local(done)));
        }
        let saved = std::mem::take(&mut self.out);
        self.iterations.push(random::Iteration::Local(n));
        self.loop_vars.push(usize::MAX);
        self.stmts(body);
        self.loop_vars.pop();
        self.iterations.pop();
        self.out.push(Stmt::Assign(
            n,
            bin(BinOp::Add, Ty::U64, Expr::Local(n), Expr::Const(Ty::U64, 1)),
        ));
        let body = std::mem::replace(&mut self.out, saved);
        self.out.push(Stmt::While {
            head,
            cond: Box::new(test),
            body,
        });
        let fault = self.fault(
            SiteKind::LoopBound,
            format!("`while` loop with max {max}"),
            format!("`while` still holds after its max {max} iterations"),
            span,
        );
        // Left with the condition holding: the bound ran out (or, in a
        // function, `return` left the loop).
        let mut ok = not(c);
        if let Some((_, done)) = returns {
            ok = bin(BinOp::Or, Ty::BOOL, ok, Expr::Local(done));
        }
        self.out.push(Stmt::Assert { cond: ok, fault });
    }

    /// The design-wide port a port operation uses: an element of a port
    /// array is a constant in each unrolled iteration.
    fn port(&self, sel: &chronon_lang::design::PortSel) -> u32 {
        let value = |l: usize| {
            let k = self.loop_vars.iter().rposition(|v| *v == l)?;
            match self.iterations[k] {
                random::Iteration::Const(i) => Some(Value::Int(i128::from(i))),
                random::Iteration::Local(_) => None,
            }
        };
        let Some(p) = sel.port(&value) else {
            unreachable!("the checker proves port array indices in range in every iteration")
        };
        self.inst.ports[p]
    }

    fn stage_range_site(&mut self, stage: u32, span: Span) -> u32 {
        let key = (stage, span.file.0, span.start, true);
        if let Some(site) = self.stage_site_cache.get(&key) {
            return *site;
        }
        let site = self.stage_range_site_new(stage, span);
        self.stage_site_cache.insert(key, site);
        site
    }

    fn stage_range_site_new(&mut self, stage: u32, span: Span) -> u32 {
        let name = self.p.stages[stage as usize].name.clone();
        self.fault(
            SiteKind::StageRange,
            name.clone(),
            format!("stage register `{name}`: pipe index out of range"),
            span,
        )
    }

    fn index_fault(&mut self, span: Span) -> u32 {
        self.fault(
            SiteKind::Index,
            "array index".into(),
            "array index out of range".into(),
            span,
        )
    }

    fn check_index(&mut self, index: Expr, ity: Ty, n: u32, span: Span) {
        let fault = self.index_fault(span);
        self.out.push(Stmt::Assert {
            cond: in_range(index, ity, n),
            fault,
        });
    }

    /// A register place made only of fields and constant indices: its first
    /// current-value slot and its type.
    fn reg_place(&mut self, e: &LExpr) -> Option<(u32, Type)> {
        match &e.kind {
            EK::Reg(r) => Some((self.inst.reg_cur[*r], e.ty.clone())),
            EK::Field(b, i) => {
                let (base, ty) = self.reg_place(b)?;
                let (offset, fty) = layout::field_offset(&ty, *i);
                Some((base + offset as u32, fty))
            }
            EK::Index(b, i) => match &i.kind {
                EK::Const(Value::Int(k)) => {
                    let (base, ty) = self.reg_place(b)?;
                    let (ety, n) = layout::element(&ty);
                    (*k >= 0 && *k < i128::from(n))
                        .then(|| (base + (*k as usize * size(&ety)) as u32, ety))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn expr(&mut self, e: &LExpr) -> Vec<Expr> {
        let ty = scalar(&e.ty);
        match &e.kind {
            EK::Const(v) => layout::constant(&e.ty, v)
                .into_iter()
                .map(|(t, v)| Expr::Const(t, v))
                .collect(),
            EK::Local(l) => {
                let base = self.local_map[*l];
                (0..size(&e.ty) as u32)
                    .map(|i| Expr::Local(base + i))
                    .collect()
            }
            EK::Reg(r) => {
                let base = self.inst.reg_cur[*r];
                (0..size(&e.ty) as u32)
                    .map(|i| Expr::Load(base + i))
                    .collect()
            }
            EK::Unary(..)
            | EK::Bits { .. }
            | EK::Concat(_)
            | EK::Replicate(..)
            | EK::Binary(..)
            | EK::Cast(_)
                if self.is_wide(e) =>
            {
                self.wide_expr(e)
            }
            EK::Unary(op, a) => {
                let aty = scalar(&a.ty);
                let a = self.expr(a).remove(0);
                let op = match op {
                    LUn::Neg => UnOp::Neg,
                    LUn::Not | LUn::BitNot => UnOp::Not,
                    reduce => return vec![self.reduction(*reduce, a, aty)],
                };
                vec![Expr::Unary(op, ty, Box::new(a))]
            }
            EK::Bits { base, lo, check } => vec![self.bits(e, base, lo, *check)],
            EK::Concat(parts) => vec![self.concat(parts, ty)],
            EK::Replicate(part, times) => vec![self.replicate(part, *times, ty)],
            EK::Binary(op, a, b) => vec![self.binary(*op, a, b)],
            EK::Cast(a) => {
                let from = scalar(&a.ty);
                let a = self.expr(a).remove(0);
                vec![Expr::Cast {
                    from,
                    to: ty,
                    arg: Box::new(a),
                }]
            }
            EK::Field(b, i) => {
                let (offset, fty) = layout::field_offset(&b.ty, *i);
                let vals = self.expr(b);
                vals.into_iter().skip(offset).take(size(&fty)).collect()
            }
            EK::Index(b, i) => self.index(e, b, i),
            EK::StructLit(es) | EK::ArrayLit(es) => es.iter().flat_map(|x| self.expr(x)).collect(),
            EK::ArrayRepeat(x, n) => {
                let vals = self.expr(x);
                let vals: Vec<Expr> = vals.into_iter().map(|v| self.pure(v)).collect();
                (0..*n).flat_map(|_| vals.clone()).collect()
            }
            EK::Call(f, args) => self.call(*f, args),
            EK::CanSend(port) => {
                let dst = self.locals.len() as u32;
                self.locals.push(Ty::BOOL);
                self.out.push(Stmt::CanSend {
                    port: self.port(port),
                    dst,
                });
                vec![Expr::Local(dst)]
            }
            EK::TrySend(port, v) => {
                let value = self.expr(v);
                let dst = self.locals.len() as u32;
                self.locals.push(Ty::BOOL);
                self.out.push(Stmt::Send {
                    port: self.port(port),
                    value,
                    dst: Some(dst),
                    fault: None,
                });
                vec![Expr::Local(dst)]
            }
            EK::Recv(port) | EK::Peek(port) | EK::Take(port) => {
                let kind = match &e.kind {
                    EK::Recv(_) => RecvKind::Recv,
                    EK::Peek(_) => RecvKind::Peek,
                    _ => RecvKind::Take,
                };
                let port = self.port(port);
                let item = self.p.ports[port as usize].item.clone();
                let ok = self.locals.len() as u32;
                self.locals.push(Ty::BOOL);
                let dst: Vec<u32> = item
                    .iter()
                    .map(|t| {
                        self.locals.push(*t);
                        (self.locals.len() - 1) as u32
                    })
                    .collect();
                // Fields start at zero so a failed read gives a defined value.
                for (l, t) in dst.iter().zip(&item) {
                    self.out.push(Stmt::Assign(*l, Expr::Const(*t, 0)));
                }
                self.out.push(Stmt::Recv {
                    port,
                    kind,
                    ok,
                    dst: dst.clone(),
                });
                std::iter::once(ok).chain(dst).map(Expr::Local).collect()
            }
            EK::Request(port) | EK::Valid(port) => {
                let dst = self.locals.len() as u32;
                self.locals.push(Ty::BOOL);
                let port = self.port(port);
                self.out.push(match &e.kind {
                    EK::Request(_) => Stmt::Request { port, dst },
                    _ => Stmt::Valid { port, dst },
                });
                vec![Expr::Local(dst)]
            }
            EK::StageValid(stage, pipe) => {
                let fault = self.stage_range_site(self.inst.stages[*stage], e.span);
                let st = &self.p.stages[self.inst.stages[*stage] as usize];
                let (base, len) = (st.valid, st.pipes);
                let index = Box::new(self.expr(pipe).remove(0));
                vec![Expr::LoadIndexed(Indexed {
                    base,
                    stride: 1,
                    len,
                    index,
                    fault,
                })]
            }
            EK::Random(site) => {
                let Some(stream) = self.stream else {
                    unreachable!("the checker counts every random() site of a tick")
                };
                let iterations = self.iterations.clone();
                let key = random::site_key_ir(*site, &iterations, |e| self.temp(Ty::U64, e));
                if let Some(width) = wide::wide(&e.ty) {
                    return self.wide_random(Expr::Local(stream), key, width);
                }
                vec![random::draw(Expr::Local(stream), key, ty, |e| {
                    self.temp(Ty::U64, e)
                })]
            }
            EK::StageRead(stage, pipe) => {
                let fault = self.stage_range_site(self.inst.stages[*stage], e.span);
                let st = &self.p.stages[self.inst.stages[*stage] as usize];
                let (base, len, k) = (st.value, st.pipes, st.item.len() as u32);
                let index = self.expr(pipe).remove(0);
                let index = if k > 1 { self.pure(index) } else { index };
                (0..k)
                    .map(|f| {
                        Expr::LoadIndexed(Indexed {
                            base: base + f,
                            stride: k,
                            len,
                            index: Box::new(index.clone()),
                            fault,
                        })
                    })
                    .collect()
            }
        }
    }

    /// `s.read(pipe)[i]` with `i` known only at run time: the element's
    /// slots loaded from the stage's value slots at `pipe * item + i *
    /// element`, where flattening the whole read and selecting would make
    /// code (and compile time) grow with the array. As the whole read
    /// does: a pipe out of range faults (once here, not once per scalar of
    /// the item) and reads 0; then the index is evaluated, checked (an
    /// `array index` fault) and reads element 0 when out of range.
    fn stage_element(
        &mut self,
        e: &LExpr,
        b: &LExpr,
        (stage, pipe): (usize, &LExpr),
        i: &LExpr,
        (ety, n): (&Type, u32),
    ) -> Vec<Expr> {
        let sid = self.inst.stages[stage];
        let fault = self.stage_range_site(sid, b.span);
        let st = &self.p.stages[sid as usize];
        let (value, pipes, item) = (st.value, st.pipes, st.item.len());
        let pty = scalar(&pipe.ty);
        let p = self.expr(pipe).remove(0);
        let p = self.pure(p);
        let pipe_ok = in_range(p.clone(), pty, pipes);
        self.out.push(Stmt::Assert {
            cond: pipe_ok.clone(),
            fault,
        });
        let ity = scalar(&i.ty);
        let index = self.expr(i).remove(0);
        let index = self.pure(index);
        self.check_index(index.clone(), ity, n, e.span);
        let wide = |x: Expr, ty: Ty| Expr::Cast {
            from: ty,
            to: Ty::U64,
            arg: Box::new(x),
        };
        let element = Expr::Select {
            cond: Box::new(in_range(index.clone(), ity, n)),
            then: Box::new(wide(index, ity)),
            els: Box::new(Expr::Const(Ty::U64, 0)),
        };
        let offset = bin(
            BinOp::Add,
            Ty::U64,
            bin(
                BinOp::Mul,
                Ty::U64,
                wide(p, pty),
                Expr::Const(Ty::U64, item as u64),
            ),
            bin(
                BinOp::Mul,
                Ty::U64,
                element,
                Expr::Const(Ty::U64, size(ety) as u64),
            ),
        );
        let offset = self.temp(Ty::U64, offset);
        let total = pipes as usize * item;
        scalars(ety)
            .into_iter()
            .enumerate()
            .map(|(j, ty)| {
                // Guarded by the pipe's check, so the load itself never
                // faults a second time.
                let load = Expr::Select {
                    cond: Box::new(pipe_ok.clone()),
                    then: Box::new(Expr::LoadIndexed(Indexed {
                        base: value + j as u32,
                        stride: 1,
                        len: (total - j) as u32,
                        index: Box::new(offset.clone()),
                        fault,
                    })),
                    els: Box::new(Expr::Const(ty, 0)),
                };
                self.pure(load)
            })
            .collect()
    }

    fn index(&mut self, e: &LExpr, b: &LExpr, i: &LExpr) -> Vec<Expr> {
        let (ety, n) = layout::element(&b.ty);
        let k = size(&ety);
        let ity = scalar(&i.ty);
        if let EK::Const(Value::Int(c)) = &i.kind
            && *c >= 0
            && *c < i128::from(n)
        {
            let vals = self.expr(b);
            return vals.into_iter().skip(*c as usize * k).take(k).collect();
        }
        if let Some((base, _)) = self.reg_place(b) {
            let index = self.expr(i).remove(0);
            let index = if k > 1 { self.pure(index) } else { index };
            let fault = self.index_fault(e.span);
            return (0..k as u32)
                .map(|j| {
                    Expr::LoadIndexed(Indexed {
                        base: base + j,
                        stride: k as u32,
                        len: n,
                        index: Box::new(index.clone()),
                        fault,
                    })
                })
                .collect();
        }
        if let EK::StageRead(stage, pipe) = &b.kind {
            return self.stage_element(e, b, (*stage, pipe), i, (&ety, n));
        }
        let vals = self.expr(b);
        let vals: Vec<Expr> = vals.into_iter().map(|v| self.pure(v)).collect();
        let index = self.expr(i).remove(0);
        let index = self.pure(index);
        self.check_index(index.clone(), ity, n, e.span);
        (0..k)
            .map(|j| {
                let pick = |el: usize| vals[el * k + j].clone();
                let tree = select_tree(&index, ity, 0, n as usize, &pick);
                if u64::from(n) > ity.mask() {
                    tree
                } else {
                    // Out of range (the `Assert` above faults): element 0.
                    Expr::Select {
                        cond: Box::new(in_range(index.clone(), ity, n)),
                        then: Box::new(tree),
                        els: Box::new(pick(0)),
                    }
                }
            })
            .collect()
    }

    fn binary(&mut self, op: LBin, a: &LExpr, b: &LExpr) -> Expr {
        let ty = scalar(&a.ty);
        if matches!(op, LBin::And | LBin::Or) {
            let lhs = self.expr(a).remove(0);
            let saved = std::mem::take(&mut self.out);
            let rhs = self.expr(b).remove(0);
            let effects = std::mem::replace(&mut self.out, saved);
            let short = Expr::Const(Ty::BOOL, u64::from(op == LBin::Or));
            if effects.is_empty() {
                let (then, els) = if op == LBin::And {
                    (rhs, short)
                } else {
                    (short, rhs)
                };
                return Expr::Select {
                    cond: Box::new(lhs),
                    then: Box::new(then),
                    els: Box::new(els),
                };
            }
            let t = self.temp(Ty::BOOL, lhs);
            let Expr::Local(tl) = t else {
                unreachable!("temp is a local")
            };
            let mut body = effects;
            body.push(Stmt::Assign(tl, rhs));
            let cond = if op == LBin::And {
                t.clone()
            } else {
                not(t.clone())
            };
            self.out.push(Stmt::If {
                cond,
                then: body,
                els: Vec::new(),
            });
            return t;
        }
        let lv = self.expr(a);
        let rv = self.expr(b);
        let irop = match op {
            LBin::Eq => BinOp::Eq,
            LBin::Ne => BinOp::Ne,
            LBin::Lt => BinOp::Lt,
            LBin::Le => BinOp::Le,
            LBin::Gt => BinOp::Gt,
            LBin::Ge => BinOp::Ge,
            LBin::BitOr => BinOp::Or,
            LBin::BitXor => BinOp::Xor,
            LBin::BitAnd => BinOp::And,
            LBin::Shl => BinOp::Shl,
            LBin::Shr => BinOp::Shr,
            LBin::Add => BinOp::Add,
            LBin::Sub => BinOp::Sub,
            LBin::Mul => BinOp::Mul,
            LBin::Div => BinOp::Div,
            LBin::Rem => BinOp::Rem,
            LBin::And | LBin::Or => unreachable!("handled above"),
        };
        if matches!(irop, BinOp::Eq | BinOp::Ne) && lv.len() != 1 {
            // Aggregate equality: every scalar equal.
            let tys = scalars(&a.ty);
            let all = lv
                .into_iter()
                .zip(rv)
                .zip(tys)
                .map(|((x, y), t)| bin(BinOp::Eq, t, x, y))
                .reduce(|x, y| bin(BinOp::And, Ty::BOOL, x, y))
                .unwrap_or(Expr::Const(Ty::BOOL, 1));
            return if irop == BinOp::Eq { all } else { not(all) };
        }
        let (Some(x), Some(y)) = (lv.into_iter().next(), rv.into_iter().next()) else {
            return Expr::Const(Ty::BOOL, u64::from(irop == BinOp::Eq));
        };
        bin(irop, ty, x, y)
    }

    /// Inlines a call: fresh locals, parameters assigned, returns turned
    /// into assignments to result locals.
    fn call(&mut self, f: usize, args: &[LExpr]) -> Vec<Expr> {
        let func = &self.d.functions[f];
        let vals: Vec<Vec<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let map: Vec<u32> = func.locals.iter().map(|l| self.new_locals(&l.ty)).collect();
        let types: Vec<Type> = func.locals.iter().map(|l| l.ty.clone()).collect();
        for (param, v) in func.params.iter().zip(vals) {
            self.assign(Target::Locals(map[*param]), v);
        }
        let result = self.new_locals(&func.ret);
        let done = self.locals.len() as u32;
        self.locals.push(Ty::BOOL);
        self.out.push(Stmt::Assign(done, Expr::Const(Ty::BOOL, 0)));
        for (i, t) in scalars(&func.ret).iter().enumerate() {
            self.out
                .push(Stmt::Assign(result + i as u32, Expr::Const(*t, 0)));
        }
        let saved_map = std::mem::replace(&mut self.local_map, map);
        let saved_types = std::mem::replace(&mut self.local_types, types);
        let saved_ret = self.ret.replace((result, done));
        self.stmts(&func.body);
        self.local_map = saved_map;
        self.local_types = saved_types;
        self.ret = saved_ret;
        (0..size(&func.ret) as u32)
            .map(|i| Expr::Local(result + i))
            .collect()
    }
}

/// Whether a statement may execute `return`.
fn may_return(s: &LStmt) -> bool {
    match &s.kind {
        SK::Return(_) => true,
        SK::If {
            then, otherwise, ..
        }
        | SK::IfSome {
            then, otherwise, ..
        } => then.iter().any(may_return) || otherwise.iter().any(may_return),
        SK::Match { arms, default, .. } => {
            arms.iter().any(|a| a.body.iter().any(may_return)) || default.iter().any(may_return)
        }
        SK::For { body, .. } | SK::RangeLoop { body, .. } | SK::While { body, .. } => {
            body.iter().any(may_return)
        }
        _ => false,
    }
}
