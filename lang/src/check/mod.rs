//! Name resolution, types and typed bodies.
//!
//! [`Env`] holds every module (the user's files form module 0; each
//! `use std::NAME` loads one embedded standard-library module), resolves
//! names per module, evaluates constants, checks functions once, and checks a
//! unit's tick once per specialization (concrete parameter values).
//!
//! Split by concern, as rust-analyzer splits inference: this file holds
//! the types the parts share; `env` (scopes, `use`, types), `consts`,
//! `items` (functions, unit specializations) extend [`Env`]; `body` (the
//! body context, locals, resolution), `expr`, `methods`, `stmt`,
//! `patterns` and `stages` (E0321's path analysis) extend the body
//! context.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::ast::{
    self, BinOp, Cond, Dir, ExprKind as A, Item, Pattern, PortKindAst, StmtKind as S, UnOp,
    UnitMember,
};
use crate::design::{
    self as d, Expr, ExprKind, MAX_INT_BITS, PlaceElem, PortKind, PortSel, Stmt, StmtKind, Type,
    Value,
};
use crate::diag::{Diagnostic, IntoDiagnostic, did_you_mean};
use crate::errors::{ResolveError, TypeError};
use crate::eval::{EvalError, eval, eval_with, fits_big, wrap_big};
use crate::span::{SourceMap, Span};
use num_bigint::BigInt;
use rustc_hash::{FxHashMap, FxHashSet};

mod bits;
mod body;
mod consts;
mod env;
mod expr;
pub mod generics;
mod items;
mod methods;
mod packing;
mod patterns;
mod print;
mod stages;
mod stmt;

/// The largest value a type may hold, in bits (arrays are state, not memory).
pub const MAX_TYPE_BITS: u64 = 1 << 24;

/// The widest operands of `/` and `%` (E0339): wider ones would unroll
/// into more code than a tick should hold.
pub const MAX_DIVIDE_BITS: u32 = 128;

/// The most scalar values one `trace` statement may record (E0326): every
/// recorder takes that many (`chronon_record::MAX_ARGS`, which a test in
/// `tests/` keeps equal to this), so a larger trace is rejected here rather
/// than when a recording starts.
pub const MAX_TRACE_VALUES: u64 = 64;

/// The most elements of one port array (`in rx[N]: T;`): the bound of an
/// unrolled loop over it, so every element can be reached.
pub const MAX_PORT_ARRAY: u32 = 4096;

/// A `trace` argument as E0326 describes it: its span, type and value count.
type TraceArg = (Span, String, u64);

/// Why the recorders cannot carry `name` as a `trace` event name (E0327),
/// or `None` when they can. A trace name is one or more printable ASCII
/// characters other than space, `=`, `,`, `"` and `\`: the text log
/// separates a record's fields by spaces and an argument from its value by
/// `=`, `--trace-filter` separates terms by `,` and a key from its value by
/// `=`, and the manifest, Perfetto's interned names and `chronc trace
/// merge` then carry the name as written, with no escaping to undo.
/// `chronon_record::Schema::validate` refuses exactly these names when a
/// recording starts; `compiler/tests/names.rs` keeps the two rules equal, so a
/// design that checks never stops there.
pub fn trace_name_problem(name: &str) -> Option<String> {
    let Some(bad) = name
        .chars()
        .find(|&c| !c.is_ascii_graphic() || matches!(c, '=' | '"' | '\\' | ','))
    else {
        return name.is_empty().then(|| "the name is empty".to_string());
    };
    Some(match bad {
        ' ' => "contains a space".to_string(),
        '=' | '"' | '\\' | ',' => format!("contains `{bad}`"),
        c if c.is_control() => format!("contains the control character U+{:04X}", c as u32),
        c => format!("contains the non-ASCII character `{c}`"),
    })
}

/// The number of scalar values a value of `ty` records in a trace: one per
/// `bool`, integer or enum, an option's valid bit besides its value, every
/// field of a struct and every element of an array (the lowering flattens
/// aggregates the same way), and one per 64-bit limb of a wider integer.
/// Saturates instead of overflowing on huge arrays.
fn trace_values(ty: &Type) -> u64 {
    match ty {
        Type::Int { width, .. } => u64::from(width.div_ceil(64)),
        Type::Bool | Type::Enum(_) => 1,
        Type::Array(t, n) => trace_values(t).saturating_mul(u64::from(*n)),
        Type::Struct(s) => s
            .fields
            .iter()
            .fold(0u64, |acc, (_, t)| acc.saturating_add(trace_values(t))),
        Type::Option(t) => trace_values(t).saturating_add(1),
        // An argument that failed to check already has its own error.
        Type::Error => 0,
    }
}

/// Index of an item in [`Env::items`].
pub type ItemId = usize;

/// A loaded item and the module whose scope resolves its names.
pub struct ItemEntry {
    /// Module index.
    pub module: usize,
    /// The item.
    pub item: Item,
}

/// Parameter values in scope: name -> (type, value).
pub type Params = HashMap<String, (Type, Value)>;

/// Parameter values in a hashable order (name order).
type ParamKey = Vec<(String, Value)>;

fn param_key(params: &Params) -> ParamKey {
    let mut key: ParamKey = params
        .iter()
        .map(|(n, (_, v))| (n.clone(), v.clone()))
        .collect();
    key.sort_by(|a, b| a.0.cmp(&b.0));
    key
}

/// The checking environment shared by all phases.
pub struct Env {
    /// Every item of every module.
    pub items: Vec<ItemEntry>,
    /// Per module: name -> item.
    pub scopes: Vec<FxHashMap<String, ItemId>>,
    /// Modules a `use` of a whole module names, by importing module and
    /// last path segment (`use lib::fifo;` makes `fifo::Fifo` name
    /// `Fifo` of `lib/fifo.chr`).
    pub aliases: FxHashMap<(usize, String), usize>,
    /// Names a `use` of a whole module bound (an item of the module's own
    /// or an import by name replaces them silently).
    glob_bound: FxHashSet<(usize, String)>,
    /// Names two `use`s of whole modules both bring in: an error (E0210)
    /// only where one is used without its module.
    ambiguous: FxHashMap<(usize, String), Vec<ItemId>>,
    /// Module names (`""` for the user's files, the std module name, or
    /// `user:` and a user module's path, `user:lib::fifo`).
    pub module_names: Vec<String>,
    /// The user modules being loaded, innermost last (a `use` of one of
    /// them is a cycle, E0209).
    pub loading: Vec<usize>,
    /// Diagnostics so far.
    pub diags: Vec<Diagnostic>,
    /// Items referenced, per referencing module.
    pub used: HashSet<(usize, ItemId)>,
    consts: HashMap<ItemId, Option<(Type, Value)>>,
    const_stack: Vec<ItemId>,
    types: HashMap<ItemId, Type>,
    /// Generic structs by item and parameter values.
    struct_types: HashMap<(ItemId, ParamKey), Type>,
    type_stack: Vec<ItemId>,
    /// Checked functions by item and parameter values (a generic
    /// function has one per set of values its calls infer).
    fn_ids: HashMap<(ItemId, ParamKey), Option<usize>>,
    fn_stack: Vec<ItemId>,
    /// Checked functions; [`ExprKind::Call`] indexes this.
    pub functions: Vec<d::Function>,
    /// Names of items that failed to parse (already reported): a use of one
    /// is not reported again as an unknown name.
    pub broken: FxHashSet<String>,
}

fn ends_in_return(body: &[Stmt]) -> bool {
    match body.last().map(|s| &s.kind) {
        Some(StmtKind::Return(_)) => true,
        Some(StmtKind::If {
            then, otherwise, ..
        }) => ends_in_return(then) && ends_in_return(otherwise),
        Some(StmtKind::IfSome {
            then, otherwise, ..
        }) => ends_in_return(then) && ends_in_return(otherwise),
        Some(StmtKind::Match { arms, default, .. }) => {
            !default.is_empty()
                && ends_in_return(default)
                && arms.iter().all(|a| ends_in_return(&a.body))
        }
        _ => false,
    }
}

/// What kind of thing an item is, in words.
pub fn item_kind(item: &Item) -> &'static str {
    match item {
        Item::Use(_) => "import",
        Item::Const(_) => "constant",
        Item::Clock(_) => "clock",
        Item::Struct(_) => "struct",
        Item::Enum(_) => "enum",
        Item::Fn(_) => "function",
        Item::Unit(_) => "unit",
        Item::System(_) => "system",
    }
}

/// The state a tick can name.
#[derive(Default)]
struct UnitInfo {
    ports: Vec<d::Port>,
    /// Port arrays; their elements are in `ports`, named `rx[0]`, `rx[1]`, ...
    port_arrays: Vec<PortArray>,
    regs: Vec<d::Reg>,
    stages: Vec<d::Stage>,
    counters: Vec<d::Counter>,
}

/// A port array of a unit: elements `first..first + len` of its ports.
struct PortArray {
    name: String,
    first: usize,
    len: u32,
    span: Span,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Member {
    Port,
    PortArray,
    Reg,
    Stage,
    Counter,
}

#[derive(Clone, PartialEq)]
enum BodyKind {
    Const,
    Fn(Type),
    Tick,
}

/// Checks one body (a tick, a function or a constant expression).
struct BodyCx<'e> {
    env: &'e mut Env,
    module: usize,
    params: Params,
    unit: Option<UnitInfo>,
    kind: BodyKind,
    locals: Vec<d::Local>,
    scopes: Vec<FxHashMap<String, usize>>,
    used_members: FxHashSet<(Member, usize)>,
    /// Stage pipes written or retained on every path to the current point.
    stage_writes: StageSet,
    /// `random()` call sites numbered so far (the next one's number).
    random_sites: u32,
    /// Per local: how many times its name was read (a place being written
    /// does not count).
    local_reads: Vec<u32>,
    /// Locals introduced by `let` (not `_`-prefixed): checked by W0304.
    lets: Vec<(usize, Span)>,
    /// The `for` loops around the current statement, innermost last.
    loops: Vec<LoopVar>,
    /// A pipe expression for each loop-dependent shape in `stage_writes`.
    pipe_exprs: HashMap<String, Expr>,
}

/// Stage pipes `(stage, pipe)` already written or retained on every path,
/// with the first write's span.
type StageSet = HashMap<(usize, PipeKey), Span>;

/// A stage pipe as far as E0321 can prove it: a constant, or an expression
/// of one loop variable (never assigned in its loop) and constants, known by
/// its span-free shape; the latter becomes one constant per iteration when
/// its loop ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum PipeKey {
    Const(i128),
    OfLoop { var: usize, shape: String },
}

/// A `for` loop around the statement being checked.
struct LoopVar {
    slot: usize,
    start: i128,
    end: i128,
    /// Whether the body assigns the variable (its pipes are then unknown).
    assigned: bool,
}

/// The largest `max` of a run-time loop (`for ... max M`, `while ... max M`).
pub const MAX_LOOP_BOUND: u32 = 1 << 20;

/// Loops longer than this are not unrolled by E0321.
const MAX_UNROLL_PROOF: i128 = 1024;

/// The back end unrolls `for` loops: a loop nest in one body may run its
/// innermost body at most this many times (the lengths of nested loops
/// multiply), so a loop of 2^32 iterations gets E0324 instead of
/// exhausting time and memory. Cranelift's compile time grows faster than
/// the function (a 4096-iteration loop around an `if` takes seconds, 16384
/// minutes), hence a bound this low.
pub const MAX_LOOP_ITERATIONS: i128 = 1 << 12;

/// Writes the span-free shape of a pipe expression made of constants and
/// one local (`var`), or returns `false`.
fn pipe_shape(e: &Expr, var: &mut Option<usize>, out: &mut String) -> bool {
    use std::fmt::Write as _;
    match &e.kind {
        ExprKind::Const(Value::Int(v)) => {
            let _ = write!(out, "{v}:{}", e.ty);
            true
        }
        ExprKind::Local(l) => {
            if var.is_some_and(|v| v != *l) {
                return false;
            }
            *var = Some(*l);
            let _ = write!(out, "L:{}", e.ty);
            true
        }
        ExprKind::Unary(op, a) => {
            let _ = write!(out, "({op:?} ");
            let ok = pipe_shape(a, var, out);
            out.push(')');
            ok
        }
        ExprKind::Binary(op, a, b) => {
            let _ = write!(out, "({op:?} ");
            let ok = pipe_shape(a, var, out) && pipe_shape(b, var, out);
            out.push(')');
            ok
        }
        ExprKind::Cast(a) => {
            let _ = write!(out, "(as {} ", e.ty);
            let ok = pipe_shape(a, var, out);
            out.push(')');
            ok
        }
        _ => false,
    }
}

/// `e` with every read of local `var` replaced by the constant `k`.
fn substitute(e: &mut Expr, var: usize, k: i128) {
    match &mut e.kind {
        ExprKind::Local(l) if *l == var => e.kind = ExprKind::Const(Value::Int(k)),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => substitute(a, var, k),
        ExprKind::Binary(_, a, b) => {
            substitute(a, var, k);
            substitute(b, var, k);
        }
        _ => {}
    }
}

/// Whether a statement list assigns `name` (`name = ...`, `name.f = ...`).
fn assigns(stmts: &[ast::Stmt], name: &str) -> bool {
    stmts.iter().any(|s| match &s.kind {
        S::Assign { place, .. } => place_name(place) == name,
        S::If { arms, otherwise } => {
            arms.iter().any(|(_, b)| assigns(&b.stmts, name))
                || otherwise.as_ref().is_some_and(|b| assigns(&b.stmts, name))
        }
        S::Match { arms, .. } => arms.iter().any(|(_, b)| assigns(&b.stmts, name)),
        S::For { body, .. } | S::While { body, .. } => assigns(&body.stmts, name),
        _ => false,
    })
}

enum Resolved {
    Local(usize),
    Value(Type, Value),
    Member(Member, usize),
    Other(&'static str),
    Unknown,
}

fn err_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Const(Value::Int(0)),
        ty: Type::Error,
        span,
    }
}

const PORT_HELP: &str = "read a channel input with `recv()`/`peek()`, a `cdc` input with `request()`, `valid()`, `take()`; send on an output with `send(v)`/`try_send(v)`";

enum ArmCond {
    Bool(Expr),
    Some(usize, Expr),
}

enum MethodResult {
    Value(Expr),
    Stmt(StmtKind),
    Error,
}

fn resolved_word(r: &Resolved) -> &'static str {
    match r {
        Resolved::Local(_) => "local variable",
        Resolved::Value(..) => "constant or parameter",
        Resolved::Member(Member::Reg, _) => "register",
        Resolved::Member(Member::Port, _) => "port",
        Resolved::Member(Member::PortArray, _) => "port array",
        Resolved::Member(Member::Stage, _) => "stage register",
        Resolved::Member(Member::Counter, _) => "counter",
        Resolved::Other(w) => w,
        Resolved::Unknown => "unknown name",
    }
}

fn place_name(p: &ast::Expr) -> String {
    match &p.kind {
        A::Name(id) => id.name.clone(),
        A::Field(b, _) | A::Index(b, _) => place_name(b),
        _ => String::new(),
    }
}

/// Folds an expression whose operands are all constants into a constant.
fn fold(e: Expr) -> Expr {
    let all_const = match &e.kind {
        ExprKind::Binary(_, a, b) => {
            matches!(a.kind, ExprKind::Const(_)) && matches!(b.kind, ExprKind::Const(_))
        }
        ExprKind::Const(_) => false,
        _ => false,
    };
    if all_const && let Ok(v) = eval(&e) {
        let v = match v {
            Value::Int(_) | Value::Wide(_) => match v.as_big() {
                Some(x) => Value::int(wrap_big(x, &e.ty)),
                None => v,
            },
            other => other,
        };
        return Expr {
            kind: ExprKind::Const(v),
            ty: e.ty,
            span: e.span,
        };
    }
    e
}
