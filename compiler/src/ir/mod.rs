//! The back end's intermediate representation.
//!
//! What this IR guarantees (after lowering or generation, checked by
//! [`validate::validate`]):
//! - every value is a scalar integer of 1 to 64 bits with explicit width and
//!   signedness on every operation; aggregates are already flattened;
//! - all state lives in one flat array of 64-bit slots; a slot always holds
//!   its value zero-extended from its width (the *canonical* form);
//! - a register write goes to the register's `next` slot and the unit's
//!   [`Commit`] list copies it to the `cur` slot at the end of the unit's
//!   tick (a register is visible only to its own unit, so this equals a
//!   commit at the end of the instant, contract §3); a register written in
//!   place by [`opt::in_place_registers`] stores to `cur` directly, its reads
//!   after the first write use a local, and its commit copies `cur` onto
//!   itself (engines skip it);
//! - units of a cluster are listed in an order where every zero-latency
//!   sender ticks before its receivers (contract §2);
//! - every side effect that leaves the unit (channels, FIFOs, traces, faults,
//!   `finish`) is an explicit [`Stmt`] that the engines hand to a
//!   [`crate::host::Host`].
//!
//! Expressions have no side effects except faults from out-of-bounds indexed
//! loads; `Select` evaluates only the chosen arm, so `&&` and `||` lowered to
//! selects short-circuit.

pub mod eval;
pub mod opt;
pub mod print;
pub mod sparse;
pub mod validate;
pub mod walk;

use num_rational::Ratio;

/// Scalar type: a width in bits (1..=64) and a signedness. `bool` is `u1`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Ty {
    /// Width in bits, 1..=64.
    pub width: u8,
    /// Two's complement when true.
    pub signed: bool,
}

impl Ty {
    /// The boolean type, `u1`.
    pub const BOOL: Ty = Ty::unsigned(1);
    /// The counter type, `u64`.
    pub const U64: Ty = Ty::unsigned(64);

    /// Unsigned type of `width` bits.
    pub const fn unsigned(width: u8) -> Ty {
        Ty {
            width,
            signed: false,
        }
    }

    /// Signed type of `width` bits.
    pub const fn signed(width: u8) -> Ty {
        Ty {
            width,
            signed: true,
        }
    }

    /// Mask of the low `width` bits.
    pub const fn mask(self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
}

/// Index of a state slot.
pub type SlotId = u32;
/// Index of a unit-local variable.
pub type LocalId = u32;
/// Index of a port in [`Program::ports`].
pub type PortId = u32;
/// Index of a trace point in [`Program::traces`].
pub type TraceId = u32;
/// Index of a fault site in [`Program::faults`].
pub type FaultId = u32;
/// Index of a stage register in [`Program::stages`].
pub type StageId = u32;
/// Index of a unit instance in [`Program::units`].
pub type UnitId = u32;
/// Index of a clock domain in [`Program::domains`].
pub type DomainId = u32;

/// Exact rational number of picoseconds.
pub type Picos = Ratio<i128>;

/// A whole design, ready for an engine.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Clock domains in declaration order.
    pub domains: Vec<Domain>,
    /// Every state slot with its type and initial value.
    pub slots: Vec<Slot>,
    /// Unit instances, in canonical (instance path) order.
    pub units: Vec<Unit>,
    /// Groups of units of one domain joined by zero-latency channels, each in
    /// tick order.
    pub clusters: Vec<Cluster>,
    /// Every port of every unit instance.
    pub ports: Vec<Port>,
    /// Same-domain channels.
    pub channels: Vec<Channel>,
    /// CDC FIFOs.
    pub fifos: Vec<Fifo>,
    /// Stage registers.
    pub stages: Vec<Stage>,
    /// Trace points.
    pub traces: Vec<TracePoint>,
    /// Fault sites: what and where, for the fault report.
    pub faults: Vec<FaultSite>,
    /// Counters: a name and the slot that holds the count.
    pub counters: Vec<Counter>,
    /// Registers whose current value spans several slots (arrays,
    /// structs): their first current slot and how the scalars are named,
    /// for reports that name each (`chronc run --dump-state`).
    pub aggregates: Vec<Aggregate>,
}

/// A register of several scalars, from its first current slot.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// Its first current-value slot.
    pub first: SlotId,
    /// The names of its scalars, in slot order.
    pub shape: Shape,
}

/// How a value's scalars are named, in layout order.
#[derive(Clone, Debug)]
pub enum Shape {
    /// One scalar.
    Scalar,
    /// `[0]`, `[1]`, ...: elements of one shape.
    Array(Box<Shape>, u32),
    /// `.name`: fields in order.
    Struct(Vec<(String, Shape)>),
    /// `.valid`, then `.value` and its shape.
    Option(Box<Shape>),
    /// An integer wider than 64 bits: its limbs, least significant first,
    /// name one value.
    Wide {
        /// Bits.
        width: u32,
        /// Two's complement when true.
        signed: bool,
    },
}

impl Shape {
    /// Appends each value's suffix (`[2].len`), after `prefix`, to `out`
    /// in slot order, with `Some((width, signed))` for an integer wider
    /// than 64 bits (whose limbs take that many slots) and `None` for a
    /// scalar of one slot.
    pub fn leaves(&self, prefix: &str, out: &mut Vec<(String, Option<(u32, bool)>)>) {
        match self {
            Shape::Scalar => out.push((prefix.to_string(), None)),
            Shape::Array(element, n) => {
                for k in 0..*n {
                    element.leaves(&format!("{prefix}[{k}]"), out);
                }
            }
            Shape::Struct(fields) => {
                for (name, shape) in fields {
                    shape.leaves(&format!("{prefix}.{name}"), out);
                }
            }
            Shape::Option(value) => {
                out.push((format!("{prefix}.valid"), None));
                value.leaves(&format!("{prefix}.value"), out);
            }
            Shape::Wide { width, signed } => {
                out.push((prefix.to_string(), Some((*width, *signed))))
            }
        }
    }
}

/// A clock domain.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Name as declared (`core`, `dom[2]`).
    pub name: String,
    /// Period in picoseconds, exact.
    pub period_ps: Picos,
    /// Phase in picoseconds, exact.
    pub phase_ps: Picos,
}

/// A state slot.
#[derive(Clone, Debug)]
pub struct Slot {
    /// Readable name (`p.next`, `p.next'`, `s.pipe.valid[1]`).
    pub name: String,
    /// Scalar type of the stored value.
    pub ty: Ty,
    /// Initial value, canonical.
    pub init: u64,
}

/// A unit instance: its code and where it runs.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Instance path (`top.p`, `top.d[1]`).
    pub path: String,
    /// Its clock domain.
    pub domain: DomainId,
    /// Types of its local variables.
    pub locals: Vec<Ty>,
    /// The tick body.
    pub body: Vec<Stmt>,
    /// What becomes visible at the end of the tick.
    pub commits: Vec<Commit>,
}

/// Units of one domain joined by zero-latency channels, in tick order.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The domain of every unit in the cluster.
    pub domain: DomainId,
    /// Units in an order where zero-latency senders come first.
    pub units: Vec<UnitId>,
}

/// What a port is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PortKind {
    /// Output: `can_send`, `send`, `try_send`.
    Out,
    /// Channel input: `recv`, `peek`.
    In,
    /// CDC FIFO input with a registered read: `request`, `valid`, `take`.
    CdcIn,
    /// CDC FIFO input, first word fall through: `recv`, `peek`.
    CdcFwftIn,
}

/// A port of a unit instance.
#[derive(Clone, Debug)]
pub struct Port {
    /// The owning unit.
    pub unit: UnitId,
    /// Port name within the unit.
    pub name: String,
    /// Direction and read style.
    pub kind: PortKind,
    /// The item's flattened scalar fields.
    pub item: Vec<Ty>,
    /// Sends per edge (outputs only; 1 otherwise).
    pub rate: u32,
}

/// A same-domain channel (contract §4).
#[derive(Clone, Debug)]
pub struct Channel {
    /// Output port.
    pub from: PortId,
    /// Input port.
    pub to: PortId,
    /// Latency in edges.
    pub latency: u32,
    /// Capacity in items.
    pub capacity: u32,
}

/// A CDC FIFO (contract §5).
#[derive(Clone, Debug)]
pub struct Fifo {
    /// Writer's output port.
    pub from: PortId,
    /// Reader's input port.
    pub to: PortId,
    /// Depth, a power of two.
    pub depth: u32,
    /// Synchronizer length.
    pub sync: u32,
}

/// A stage register (contract §3): per pipe a valid bit and a value.
///
/// Slots, each a contiguous run: `valid` and `valid_next` hold one slot per
/// pipe; `value` and `value_next` hold `item.len()` slots per pipe; `touched`
/// marks pipes written or retained in this tick.
#[derive(Clone, Debug)]
pub struct Stage {
    /// Owning unit.
    pub unit: UnitId,
    /// Name within the unit.
    pub name: String,
    /// Number of pipes.
    pub pipes: u32,
    /// Flattened item fields.
    pub item: Vec<Ty>,
    /// First valid slot (before the edge).
    pub valid: SlotId,
    /// First value slot (before the edge).
    pub value: SlotId,
    /// First next-valid slot.
    pub valid_next: SlotId,
    /// First next-value slot.
    pub value_next: SlotId,
    /// First touched slot.
    pub touched: SlotId,
}

/// A trace point: a name and typed arguments.
#[derive(Clone, Debug)]
pub struct TracePoint {
    /// Owning unit.
    pub unit: UnitId,
    /// Event name.
    pub name: String,
    /// Argument names and types.
    pub args: Vec<(String, Ty)>,
    /// Set for a `print` statement: its format, whose placeholders take
    /// the arguments in order. Its records go to the print output, never
    /// to a recording.
    pub print: Option<PrintFormat>,
    /// The `trace` values wider than 64 bits, in argument order: each is
    /// several consecutive arguments (its limbs) that recorders show as
    /// one value.
    pub wide: Vec<WideTraceValue>,
}

/// A `trace` value wider than 64 bits: the trace point's arguments
/// `first..first + width.div_ceil(64)` are its limbs, least significant
/// first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideTraceValue {
    /// Its first limb's argument.
    pub first: u32,
    /// The value's name in recordings (`x`, or `p.2` in an aggregate).
    pub name: String,
    /// Its width in bits (65 to 1024).
    pub width: u32,
    /// Whether it is a signed integer.
    pub signed: bool,
}

/// How a `print` trace point's arguments become its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintFormat {
    /// The format, split at its placeholders (one per argument, in order).
    pub pieces: Vec<chronon_lang::design::FormatPiece>,
    /// Per argument: whether it is a `bool` (`true`/`false` in decimal;
    /// the IR types it `u1`).
    pub bools: Vec<bool>,
    /// Per argument: `(width, signed)` of an integer wider than 64 bits,
    /// whose limbs are that many consecutive arguments of the trace point.
    pub wide: Vec<Option<(u32, bool)>>,
}

/// What a fault site checks: it decides the fault's kind in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SiteKind {
    /// `assert(cond, "message")`.
    Assert,
    /// An array index out of range.
    Index,
    /// A stage register pipe written or retained twice in one tick.
    StageTwice {
        /// The pipe.
        pipe: u32,
    },
    /// A stage register pipe index out of range.
    StageRange,
    /// A `send` that can be refused: the runtime names the refusing
    /// channel or FIFO, the site the statement.
    Send,
    /// A run-time loop that asked for more iterations than its `max`.
    LoopBound,
}

/// A place that can fault at run time.
#[derive(Clone, Debug)]
pub struct FaultSite {
    /// Owning unit.
    pub unit: UnitId,
    /// What it checks.
    pub kind: SiteKind,
    /// The construct (`send on port tx`, `assert`, `index of hist`).
    pub construct: String,
    /// The message shown to the user.
    pub message: String,
    /// Source location `file:line:col`, when known.
    pub span: Option<String>,
    /// The source span behind `span`, for the fault's snippet.
    pub source: Option<chronon_lang::span::Span>,
}

/// A counter.
#[derive(Clone, Debug)]
pub struct Counter {
    /// Owning unit.
    pub unit: UnitId,
    /// Name within the unit.
    pub name: String,
    /// The u64 slot that holds it.
    pub slot: SlotId,
}

/// An end-of-tick commit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Commit {
    /// Copy `count` slots from `from` to `to` (register next to current).
    Copy {
        /// First source slot.
        from: SlotId,
        /// First destination slot.
        to: SlotId,
        /// Number of slots.
        count: u32,
    },
    /// Commit a stage register: touched pipes take their next contents, the
    /// others become invalid; touched flags clear.
    Stage(StageId),
    /// The commit of a large register that few statements write
    /// ([`sparse`]): copies only the next slots written this tick.
    Sparse(Box<SparseCommit>),
}

/// A register's commit that copies only what the tick wrote
/// ([`Commit::Sparse`], made by [`sparse::sparse_commits`]). Every next
/// slot the tick did not write still equals its current slot (both start
/// at the initial value and every commit makes them equal again), so
/// copying the written ones gives the whole copy's result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SparseCommit {
    /// First next slot of the register (what a whole copy reads).
    pub from: SlotId,
    /// First current slot of the register (what a whole copy writes).
    pub to: SlotId,
    /// Slots in the register.
    pub count: u32,
    /// Next slots the tick writes at constant positions: each copied on
    /// every tick (a copy of a slot not written is a no-op).
    pub slots: Vec<SlotId>,
    /// Next slots the tick writes at run-time indices, one per store.
    pub indexed: Vec<SparseIndex>,
}

/// A store at a run-time index into a [`SparseCommit`]'s register: the
/// commit copies slot `base + index * stride` where `index` is the value
/// of `local` (which holds the store's index, or 0 before it runs) and
/// `index < len` (an out-of-range store wrote nothing).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SparseIndex {
    /// The local that holds the index the store used.
    pub local: LocalId,
    /// Next slot of element 0 (the store's `Indexed::base`).
    pub base: SlotId,
    /// Slots per element.
    pub stride: u32,
    /// Number of elements.
    pub len: u32,
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum UnOp {
    /// Wrapping negation.
    Neg,
    /// Bitwise not at the operand width (logical not on `u1`).
    Not,
}

/// Binary operators; both operands have the operation's type except the
/// shift amount, which is any unsigned value.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum BinOp {
    /// Wrapping addition.
    Add,
    /// Wrapping subtraction.
    Sub,
    /// Wrapping multiplication.
    Mul,
    /// The high 64 bits of the unsigned 128-bit product; `u64` operands
    /// only (the limb products of wide multiplication).
    MulHi,
    /// Division, RISC-V semantics.
    Div,
    /// Remainder, RISC-V semantics.
    Rem,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Left shift; by the width or more gives 0.
    Shl,
    /// Right shift, arithmetic when signed; saturates to 0 or -1.
    Shr,
    /// Equality, gives `u1`.
    Eq,
    /// Inequality, gives `u1`.
    Ne,
    /// Less than, gives `u1`.
    Lt,
    /// Less or equal, gives `u1`.
    Le,
    /// Greater than, gives `u1`.
    Gt,
    /// Greater or equal, gives `u1`.
    Ge,
}

impl BinOp {
    /// Whether the result is a `u1` comparison result.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// A bounds-checked slot index: slot `base + index * stride`, faulting with
/// `fault` when `index >= len`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Indexed {
    /// Slot of element 0.
    pub base: SlotId,
    /// Slots per element.
    pub stride: u32,
    /// Number of elements.
    pub len: u32,
    /// The element index (any unsigned type).
    pub index: Box<Expr>,
    /// Fault site reported when out of range.
    pub fault: FaultId,
}

/// A side-effect free expression (but for indexed-load faults).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A canonical constant.
    Const(Ty, u64),
    /// A local variable.
    Local(LocalId),
    /// A state slot.
    Load(SlotId),
    /// A state slot chosen at run time; out of range reads 0 and faults.
    LoadIndexed(Indexed),
    /// A unary operation at type `Ty`.
    Unary(UnOp, Ty, Box<Expr>),
    /// A binary operation whose operands have type `Ty`.
    Binary(BinOp, Ty, Box<Expr>, Box<Expr>),
    /// Truncation or sign/zero extension.
    Cast {
        /// Source type.
        from: Ty,
        /// Result type.
        to: Ty,
        /// Operand.
        arg: Box<Expr>,
    },
    /// `if cond { a } else { b }`, evaluating only the chosen arm.
    Select {
        /// `u1` condition.
        cond: Box<Expr>,
        /// Value when true.
        then: Box<Expr>,
        /// Value when false.
        els: Box<Expr>,
    },
}

impl Expr {
    /// Calls `f` on this expression and then on every expression inside
    /// it, depth first, operands in order.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Const(..) | Expr::Local(_) | Expr::Load(_) => {}
            Expr::LoadIndexed(ix) => ix.index.visit(f),
            Expr::Unary(_, _, a) | Expr::Cast { arg: a, .. } => a.visit(f),
            Expr::Binary(_, _, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Select { cond, then, els } => {
                cond.visit(f);
                then.visit(f);
                els.visit(f);
            }
        }
    }
}

/// How an input port is read.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum RecvKind {
    /// Remove and return the head (channel input or fwft CDC input).
    Recv,
    /// Return the head without removing it.
    Peek,
    /// Registered CDC read: take the output register.
    Take,
}

/// A statement of a tick body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// `local = expr`.
    Assign(LocalId, Expr),
    /// Write a slot (a register's next slot, a counter).
    Store(SlotId, Expr),
    /// Write a slot chosen at run time; out of range writes nothing and faults.
    StoreIndexed(Indexed, Expr),
    /// Structured conditional.
    If {
        /// `u1` condition.
        cond: Expr,
        /// Taken when true.
        then: Vec<Stmt>,
        /// Taken when false.
        els: Vec<Stmt>,
    },
    /// A run-time loop: `loop { head; if !cond { break } body }`. Lowering
    /// bounds every loop it makes (a counter and an `Assert`), so a tick
    /// still ends.
    While {
        /// Run before each test of `cond` (what computing it takes).
        head: Vec<Stmt>,
        /// `u1`: whether to run `body` once more (boxed so that a loop
        /// makes no statement larger than an `if`).
        cond: Box<Expr>,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `s.write(pipe, value)`.
    StageWrite {
        /// The stage register.
        stage: StageId,
        /// Pipe index.
        pipe: Expr,
        /// Flattened value.
        value: Vec<Expr>,
        /// The statement's fault sites ([`Stmt::StageRetain::sites`]).
        sites: FaultId,
    },
    /// `s.retain(pipe)`.
    StageRetain {
        /// The stage register.
        stage: StageId,
        /// Pipe index.
        pipe: Expr,
        /// First of the statement's `pipes + 1` consecutive fault sites, so
        /// a fault names the statement: `sites + p` for a second write or
        /// retain of pipe `p` in one tick, `sites + pipes` for a pipe index
        /// out of range.
        sites: FaultId,
    },
    /// `dst = port.can_send()`.
    CanSend {
        /// Output port.
        port: PortId,
        /// `u1` result.
        dst: LocalId,
    },
    /// `port.send(v)` (no `dst`: a refusal faults) or `dst = port.try_send(v)`.
    Send {
        /// Output port.
        port: PortId,
        /// Flattened item.
        value: Vec<Expr>,
        /// `u1` result of `try_send`; `None` for `send`.
        dst: Option<LocalId>,
        /// For `send` (and only then), the fault site a refusal reports:
        /// the runtime detects it in a channel or FIFO and the site gives
        /// the statement's source location ([`SiteKind::Send`]).
        fault: Option<FaultId>,
    },
    /// Read an input port: `ok` tells whether an item came, `dst` receives
    /// its fields (left unchanged when none came).
    Recv {
        /// Input port.
        port: PortId,
        /// Read style.
        kind: RecvKind,
        /// `u1` whether an item came.
        ok: LocalId,
        /// Locals for the item's fields.
        dst: Vec<LocalId>,
    },
    /// `dst = port.request()` (registered CDC read).
    Request {
        /// CDC input port.
        port: PortId,
        /// `u1` accepted.
        dst: LocalId,
    },
    /// `dst = port.valid()` (registered CDC read).
    Valid {
        /// CDC input port.
        port: PortId,
        /// `u1` result.
        dst: LocalId,
    },
    /// Record a trace event.
    Trace {
        /// Trace point.
        trace: TraceId,
        /// Arguments, typed by the trace point.
        args: Vec<Expr>,
    },
    /// Fault when `cond` is false.
    Assert {
        /// `u1` condition.
        cond: Expr,
        /// Fault site.
        fault: FaultId,
    },
    /// Stop the run at the end of this instant.
    Finish,
}
