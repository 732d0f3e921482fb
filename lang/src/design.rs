//! The elaborated design: what the back end lowers.
//!
//! After elaboration there are no names to resolve, no parameters, no
//! constants and no type errors: every expression carries its concrete type,
//! every name is an index (local slot, register, port, stage register,
//! counter, function), and every clock is an exact rational. `for` loops are
//! kept as loops with constant bounds; function calls are kept as calls to
//! typed, non-recursive, pure [`Function`]s (inline them or call them).

use std::sync::Arc;

use num_bigint::BigInt;
use num_rational::Ratio;

use crate::ast::{BinOp, Dir, UnOp};
use crate::span::Span;

/// An exact rational number of picoseconds.
pub type Rational = Ratio<BigInt>;

/// A concrete type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// One bit.
    Bool,
    /// `uN` / `iN`, 1 <= width <= [`MAX_INT_BITS`].
    Int {
        /// Two's complement when true.
        signed: bool,
        /// Bits.
        width: u32,
    },
    /// `[T; N]`
    Array(Box<Type>, u32),
    /// A record.
    Struct(Arc<StructType>),
    /// An enumeration; values are `0..variants.len()`.
    Enum(Arc<EnumType>),
    /// The result of `recv()`, `peek()` and `take()`: a valid bit and a value.
    Option(Box<Type>),
    /// The type of an expression that failed to check; never in a [`Design`].
    Error,
}

/// A struct's layout: fields in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructType {
    /// Name (a generic struct's shows its arguments: `Pair<T = u8, N = 2>`).
    pub name: String,
    /// A generic struct's parameter values, in declaration order (empty
    /// for others).
    pub args: Vec<(String, Value)>,
    /// Fields in order.
    pub fields: Vec<(String, Type)>,
}

/// An enum: its variants and the width of its integer encoding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumType {
    /// Name.
    pub name: String,
    /// Variant `i` has value `i`.
    pub variants: Vec<String>,
    /// Bits of the encoding: enough for the largest value, at least 1.
    pub width: u32,
}

impl Type {
    /// `uN`
    pub fn uint(width: u32) -> Type {
        Type::Int {
            signed: false,
            width,
        }
    }

    /// Total bits of the value (an option adds a valid bit).
    pub fn bit_width(&self) -> u64 {
        match self {
            Type::Bool => 1,
            Type::Int { width, .. } => u64::from(*width),
            Type::Array(t, n) => t.bit_width() * u64::from(*n),
            Type::Struct(s) => s.fields.iter().map(|(_, t)| t.bit_width()).sum(),
            Type::Enum(e) => u64::from(e.width),
            Type::Option(t) => 1 + t.bit_width(),
            Type::Error => 0,
        }
    }

    /// The width of an integer or `bool` (one bit): what bit selects,
    /// slices, concatenation and reductions take.
    pub fn scalar_bits(&self) -> Option<u32> {
        match self {
            Type::Bool => Some(1),
            Type::Int { width, .. } => Some(*width),
            _ => None,
        }
    }

    /// Whether an integer type.
    pub fn is_int(&self) -> bool {
        matches!(self, Type::Int { .. })
    }

    /// Whether an unsigned integer type.
    pub fn is_unsigned(&self) -> bool {
        matches!(self, Type::Int { signed: false, .. })
    }
}

impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Type::Bool => write!(f, "bool"),
            Type::Int { signed, width } => {
                write!(f, "{}{}", if *signed { "i" } else { "u" }, width)
            }
            Type::Array(t, n) => write!(f, "[{t}; {n}]"),
            Type::Struct(s) => write!(f, "{}", s.name),
            Type::Enum(e) => write!(f, "{}", e.name),
            Type::Option(t) => write!(f, "Option<{t}>"),
            Type::Error => write!(f, "{{error}}"),
        }
    }
}

/// The widest integer type, `u1024` / `i1024`.
pub const MAX_INT_BITS: u32 = 1024;

/// A constant value. Integers (and enum values) are held exactly, already
/// wrapped to their type: `0..2^N` for `uN`, `-2^(N-1)..2^(N-1)` for `iN`;
/// in `i128` when they fit, in [`Value::Wide`] only when they do not, so
/// every integer has one representation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// `bool`
    Bool(bool),
    /// An integer or an enum value.
    Int(i128),
    /// An integer outside `i128`'s range (of a type wider than 127 bits).
    Wide(Arc<BigInt>),
    /// Array elements.
    Array(Vec<Value>),
    /// Struct fields in declaration order.
    Struct(Vec<Value>),
    /// The value of a type parameter (`unit Queue<T: type>`): a type.
    Type(Type),
}

impl Value {
    /// The zero of a type (false, 0, all-zero aggregates).
    pub fn zero(ty: &Type) -> Value {
        match ty {
            Type::Bool => Value::Bool(false),
            Type::Array(t, n) => Value::Array(vec![Value::zero(t); *n as usize]),
            Type::Struct(s) => {
                Value::Struct(s.fields.iter().map(|(_, t)| Value::zero(t)).collect())
            }
            _ => Value::Int(0),
        }
    }

    /// The integer, if one that fits `i128`.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Bool(b) => Some(i128::from(*b)),
            _ => None,
        }
    }

    /// An integer of any size, in its one representation.
    pub fn int(v: BigInt) -> Value {
        match i128::try_from(&v) {
            Ok(small) => Value::Int(small),
            Err(_) => Value::Wide(Arc::new(v)),
        }
    }

    /// The integer (or `bool` as 0 or 1) at any size.
    pub fn as_big(&self) -> Option<BigInt> {
        match self {
            Value::Int(v) => Some(BigInt::from(*v)),
            Value::Wide(v) => Some(v.as_ref().clone()),
            Value::Bool(b) => Some(BigInt::from(u8::from(*b))),
            _ => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Wide(v) => write!(f, "{v}"),
            Value::Type(t) => write!(f, "{t}"),
            Value::Array(vs) | Value::Struct(vs) => {
                write!(f, "[")?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
        }
    }
}

/// Index of a local slot in the enclosing [`UnitSpec::locals`] or [`Function::locals`].
pub type LocalId = usize;

/// A typed expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Type,
    /// Where it was written.
    pub span: Span,
}

/// Typed expression kinds. Operands of arithmetic, bitwise and comparison
/// operators have one type (the left operand's), except shift amounts, which
/// are any unsigned type.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A folded constant, parameter or literal.
    Const(Value),
    /// A local slot.
    Local(LocalId),
    /// A register's value from before the edge.
    Reg(usize),
    /// Unary operator.
    Unary(UnOp, Box<Expr>),
    /// Binary operator (wrapping at the operand width; `/` and `%` as RISC-V).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Conversion to `ty`: truncation or zero/sign extension; `bool` or enum to integer.
    Cast(Box<Expr>),
    /// Field by index.
    Field(Box<Expr>, usize),
    /// Array element; an index out of range is a runtime fault.
    Index(Box<Expr>, Box<Expr>),
    /// Bits `lo` and up of an integer (or `bool`), as many as the
    /// expression's type is wide: `x[i]`, `x[hi:lo]`, `x[b +: w]`,
    /// `x[b -: w]`. `check`, when `lo` is known only at run time, is how
    /// many values of `lo` are valid: one at or past it is a runtime fault.
    Bits {
        /// The integer the bits come from.
        base: Box<Expr>,
        /// The lowest bit taken (an unsigned integer).
        lo: Box<Expr>,
        /// The number of valid `lo`, when `lo` is not a constant.
        check: Option<u32>,
    },
    /// `{a, b}`: the parts' bits side by side, the first the most
    /// significant; each part is an integer or `bool` (one bit).
    Concat(Vec<Expr>),
    /// `{n{a}}`: the bits of `a` (an integer, `bool` or concatenation) `n`
    /// times side by side.
    Replicate(Box<Expr>, u32),
    /// Struct value, fields in declaration order.
    StructLit(Vec<Expr>),
    /// Array value.
    ArrayLit(Vec<Expr>),
    /// `[e; n]`
    ArrayRepeat(Box<Expr>, u32),
    /// A call of [`Design::functions`]`[id]`.
    Call(usize, Vec<Expr>),
    /// `port.can_send()` on an output port.
    CanSend(PortSel),
    /// `port.try_send(v)`: sends if possible and returns whether it did.
    TrySend(PortSel, Box<Expr>),
    /// `port.recv()` on a channel or fwft input: `Option<T>`.
    Recv(PortSel),
    /// `port.peek()` on a channel or fwft input: `Option<T>`.
    Peek(PortSel),
    /// `port.request()` on a registered CDC input: whether it was accepted.
    Request(PortSel),
    /// `port.valid()` on a registered CDC input.
    Valid(PortSel),
    /// `port.take()` on a registered CDC input: `Option<T>`.
    Take(PortSel),
    /// `stage.valid(pipe)`
    StageValid(usize, Box<Expr>),
    /// `stage.read(pipe)`
    StageRead(usize, Box<Expr>),
    /// `random()`: a value of the expression's type (an integer or `bool`)
    /// drawn from the run's seed. The number is the call site: call sites
    /// of a tick are numbered from 0 in source order (see
    /// [`UnitSpec::random_sites`]). The value is a pure function of the run
    /// seed, the unit instance path, this site, the unit's local cycle and
    /// the iterations of the enclosing `for` loops.
    Random(u32),
}

/// The port a port operation (`send`, `recv`, ...) uses.
#[derive(Clone, Debug)]
pub enum PortSel {
    /// A port of the unit: an index into [`UnitSpec::ports`].
    One(usize),
    /// An element of a port array, `rx[i]`: the port `first + index`. The
    /// index reads only constants and the variables of enclosing `for`
    /// loops, so it is a constant in each unrolled iteration, and the
    /// checker has proved it below `len` in every one.
    Element {
        /// The array's element 0.
        first: usize,
        /// Its element count.
        len: u32,
        /// The element.
        index: Box<Expr>,
    },
}

impl PortSel {
    /// The port, given the values of the enclosing loops' variables; none
    /// when the index reads anything else or is out of range.
    pub fn port(&self, loop_value: &impl Fn(LocalId) -> Option<Value>) -> Option<usize> {
        match self {
            PortSel::One(p) => Some(*p),
            PortSel::Element { first, len, index } => {
                let i = crate::eval::eval_with(index, loop_value).ok()?.as_int()?;
                (0..i128::from(*len))
                    .contains(&i)
                    .then(|| first + i as usize)
            }
        }
    }
}

/// One step of a written place: `.field`, `[index]` or a bit range.
#[derive(Clone, Debug)]
pub enum PlaceElem {
    /// Field by index.
    Field(usize),
    /// Array element (an index out of range is a runtime fault).
    Index(Expr),
    /// Bits of an integer (`r[3]`, `r[7:4]`, `r[i +: 4]`): the last step;
    /// the other bits keep their value (for a register, the value it is
    /// to take at the edge, so later writes win bit by bit).
    Bits(BitRange),
}

/// A run of bits of an integer: `width` bits from `lo` up.
#[derive(Clone, Debug)]
pub struct BitRange {
    /// The lowest bit (an unsigned integer).
    pub lo: Expr,
    /// How many bits.
    pub width: u32,
    /// The number of valid `lo`, when `lo` is not a constant (one at or
    /// past it is a runtime fault, and nothing is written).
    pub check: Option<u32>,
}

/// A match arm over integers, bools or enums.
#[derive(Clone, Debug)]
pub struct MatchArm {
    /// The values this arm takes (integers, `0`/`1` for bools).
    pub values: Vec<BigInt>,
    /// Its body.
    pub body: Vec<Stmt>,
}

/// A typed statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Typed statement kinds.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// Assign a whole local or a part of it (`let` is an assignment to a fresh slot).
    AssignLocal {
        /// The local assigned.
        local: LocalId,
        /// The field and element path inside it (empty: the whole local).
        path: Vec<PlaceElem>,
        /// The new value.
        value: Expr,
    },
    /// Register write, visible from the next edge; the last write wins.
    RegWrite {
        /// The unit's register index.
        reg: usize,
        /// The field and element path inside it (empty: the whole register).
        path: Vec<PlaceElem>,
        /// The value it takes at the next edge.
        value: Expr,
    },
    /// `counter += value` (u64, wrapping).
    CounterAdd {
        /// The unit's counter index.
        counter: usize,
        /// The amount added.
        value: Expr,
    },
    /// `port.send(v)`: a refused send is a runtime fault.
    Send {
        /// The port.
        port: PortSel,
        /// The item sent.
        value: Expr,
    },
    /// `stage.write(pipe, v)`
    StageWrite {
        /// The unit's stage register index.
        stage: usize,
        /// The pipe written.
        pipe: Expr,
        /// The value written.
        value: Expr,
    },
    /// `stage.retain(pipe)`
    StageRetain {
        /// The unit's stage register index.
        stage: usize,
        /// The pipe kept valid with its value.
        pipe: Expr,
    },
    /// An expression evaluated for its effect (e.g. `try_send`, `request`, `recv`).
    Expr(Expr),
    /// Two-way branch.
    If {
        /// The condition.
        cond: Expr,
        /// Run when it holds.
        then: Vec<Stmt>,
        /// Run when it does not.
        otherwise: Vec<Stmt>,
    },
    /// `if let Some(binding) = value { then } else { otherwise }`.
    IfSome {
        /// The local that holds the value inside `then`.
        binding: LocalId,
        /// The option taken apart.
        value: Expr,
        /// Run with the value.
        then: Vec<Stmt>,
        /// Run when there is none.
        otherwise: Vec<Stmt>,
    },
    /// Multi-way branch; the first arm holding the value runs, else `default`.
    Match {
        /// The value matched.
        scrutinee: Expr,
        /// The arms with explicit values, in order.
        arms: Vec<MatchArm>,
        /// The `_` arm (empty when there is none).
        default: Vec<Stmt>,
    },
    /// `for var in start..end` with constant bounds (kept as a loop; `var` is `u32`).
    For {
        /// The loop variable.
        var: LocalId,
        /// First value (inclusive).
        start: u32,
        /// Bound (exclusive).
        end: u32,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `for var in start..end max M`: a loop run at run time, not
    /// unrolled. `start` and `end` are evaluated once, before it; a range
    /// of more than `max` iterations is a run-time fault before the first.
    RangeLoop {
        /// The loop variable (a `u32`).
        var: LocalId,
        /// First value (inclusive).
        start: Expr,
        /// Bound (exclusive).
        end: Expr,
        /// The most iterations.
        max: u32,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `while cond max M`: `body` while `cond` holds; `cond` still holding
    /// after `max` iterations is a run-time fault.
    While {
        /// Tested before each iteration.
        cond: Expr,
        /// The most iterations.
        max: u32,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `return value;` (functions only).
    Return(Expr),
    /// Stop the run at the end of this instant.
    Finish,
    /// Fault the run when `cond` is false.
    Assert {
        /// What must hold.
        cond: Expr,
        /// What the fault says when it does not.
        message: String,
    },
    /// A trace record with named arguments.
    Trace {
        /// The event name.
        name: String,
        /// Each argument's name and value.
        args: Vec<(String, Expr)>,
    },
    /// `print("...", args)`: a line of text at the end of the instant.
    Print {
        /// The format, split at its placeholders.
        format: Vec<FormatPiece>,
        /// One integer or `bool` value per placeholder, in order.
        args: Vec<Expr>,
    },
}

/// A piece of a `print` format.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FormatPiece {
    /// Text printed as written.
    Text(String),
    /// The next value, in this radix.
    Value(Radix),
}

/// How `print` writes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Radix {
    /// `{}`: decimal, with a sign for signed types; `bool` as `true` or
    /// `false`.
    Decimal,
    /// `{:x}`: lowercase hexadecimal digits of the value's bits.
    Hex,
    /// `{:#x}`: `{:x}` after `0x`.
    HexPrefixed,
    /// `{:b}`: binary digits of the value's bits.
    Binary,
    /// `{:#b}`: `{:b}` after `0b`.
    BinaryPrefixed,
}

/// A local slot.
#[derive(Clone, Debug)]
pub struct Local {
    /// Name as written (not unique: slots of shadowed names differ).
    pub name: String,
    /// Type.
    pub ty: Type,
}

/// A typed, pure, non-recursive function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name.
    pub name: String,
    /// Parameter slots, in order (the first locals).
    pub params: Vec<LocalId>,
    /// Every local slot.
    pub locals: Vec<Local>,
    /// Return type.
    pub ret: Type,
    /// Body; every path ends in `Return`.
    pub body: Vec<Stmt>,
    /// Where declared.
    pub span: Span,
}

/// What kind of port, and how it may be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortKind {
    /// Same-domain channel input: `recv`, `peek`.
    ChannelIn,
    /// CDC FIFO reader, registered read: `request`, `valid`, `take`.
    CdcRegistered,
    /// CDC FIFO reader, first word fall through: `recv`, `peek`.
    CdcFwft,
    /// Output with a send rate (items per edge, >= 1).
    Out {
        /// Items per edge.
        rate: u32,
    },
}

/// A port of a unit.
#[derive(Clone, Debug)]
pub struct Port {
    /// Name.
    pub name: String,
    /// Direction.
    pub dir: Dir,
    /// Payload type.
    pub ty: Type,
    /// Kind.
    pub kind: PortKind,
    /// Where declared.
    pub span: Span,
}

/// A register.
#[derive(Clone, Debug)]
pub struct Reg {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// Value at reset.
    pub init: Value,
    /// Where declared.
    pub span: Span,
}

/// A stage register.
#[derive(Clone, Debug)]
pub struct Stage {
    /// Name.
    pub name: String,
    /// Payload type of each pipe.
    pub ty: Type,
    /// Number of pipes (>= 1).
    pub pipes: u32,
    /// Where declared.
    pub span: Span,
}

/// A 64-bit event counter.
#[derive(Clone, Debug)]
pub struct Counter {
    /// Name.
    pub name: String,
    /// Where declared.
    pub span: Span,
}

/// A unit with concrete parameter values.
#[derive(Clone, Debug)]
pub struct UnitSpec {
    /// The unit's name.
    pub unit: String,
    /// Parameter values, in declaration order.
    pub params: Vec<(String, Value)>,
    /// Ports.
    pub ports: Vec<Port>,
    /// Registers.
    pub regs: Vec<Reg>,
    /// Stage registers.
    pub stages: Vec<Stage>,
    /// Counters.
    pub counters: Vec<Counter>,
    /// Local slots of the tick.
    pub locals: Vec<Local>,
    /// The tick body (empty if the unit has no tick).
    pub tick: Vec<Stmt>,
    /// Number of `random()` call sites in the tick ([`ExprKind::Random`]
    /// numbers them `0..random_sites`).
    pub random_sites: u32,
    /// Where the unit is declared.
    pub span: Span,
}

/// A clock domain.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Name; array elements are `name[i]`.
    pub name: String,
    /// Period in picoseconds, > 0.
    pub period_ps: Rational,
    /// Phase in picoseconds, >= 0.
    pub phase_ps: Rational,
    /// Where declared.
    pub span: Span,
}

/// A unit instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Hierarchical path, e.g. `top.pair.d` or `top.s[1]`.
    pub path: String,
    /// Index into [`Design::specs`].
    pub spec: usize,
    /// Index into [`Design::clocks`].
    pub domain: usize,
    /// Where instantiated.
    pub span: Span,
}

/// A port of an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRef {
    /// Index into [`Design::instances`].
    pub instance: usize,
    /// Index into the instance's spec's ports.
    pub port: usize,
}

/// A same-domain channel.
#[derive(Clone, Debug)]
pub struct Channel {
    /// The output port.
    pub from: PortRef,
    /// The input port.
    pub to: PortRef,
    /// Edges from send to earliest receive (>= 0).
    pub latency: u32,
    /// Items in flight at most (>= 1).
    pub capacity: u32,
    /// Where declared; channels are listed in declaration order.
    pub span: Span,
}

/// How a CDC FIFO's reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadStyle {
    /// `request`, `valid`, `take`.
    Registered,
    /// `recv`, `peek`.
    Fwft,
}

/// A CDC FIFO between two ports (possibly of one domain).
#[derive(Clone, Debug)]
pub struct CdcFifo {
    /// Writer (an output port of rate 1).
    pub writer: PortRef,
    /// Reader (a `cdc` input port).
    pub reader: PortRef,
    /// Power of two in 2..=2^30.
    pub depth: u32,
    /// Synchronizer length, 2..=64.
    pub sync: u32,
    /// Read style of the reader port.
    pub style: ReadStyle,
    /// Where declared.
    pub span: Span,
}

/// An elaborated design.
#[derive(Clone, Debug)]
pub struct Design {
    /// Name of the top system.
    pub top: String,
    /// The top system's parameter values, in declaration order.
    pub params: Vec<(String, Value)>,
    /// Clock domains in declaration order, arrays expanded.
    pub clocks: Vec<Clock>,
    /// Functions called from ticks (and from each other).
    pub functions: Vec<Function>,
    /// Unit specializations.
    pub specs: Vec<UnitSpec>,
    /// Unit instances, in elaboration order.
    pub instances: Vec<Instance>,
    /// Channels, in declaration order.
    pub channels: Vec<Channel>,
    /// CDC FIFOs, in declaration order.
    pub fifos: Vec<CdcFifo>,
}
