//! The syntax tree, as parsed. Every node carries its [`Span`].

use std::sync::Arc;

use num_bigint::BigInt;

use crate::span::Span;

/// A name and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A parsed file.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Top-level items in source order.
    pub items: Vec<Item>,
    /// Names of the items that failed to parse: they were reported once, so
    /// their uses are not reported again as unknown names.
    pub broken: Vec<String>,
}

/// A top-level item.
#[derive(Clone, Debug)]
pub enum Item {
    /// `use std::a::b;`
    Use(UseItem),
    /// `const X: T = e;`
    Const(ConstDef),
    /// `clock c = ...;`
    Clock(ClockDef),
    /// `struct S { ... }`
    Struct(StructDef),
    /// `enum E { ... }`
    Enum(EnumDef),
    /// `fn f(...) -> T { ... }`
    Fn(FnDef),
    /// `unit U<...> { ... }`; shared, since every specialization of the
    /// unit is checked from it.
    Unit(Arc<UnitDef>),
    /// `system S<...> { ... }`; shared, since every instantiation of the
    /// system is elaborated from it.
    System(Arc<SystemDef>),
}

impl Item {
    /// The item's name (the last path segment for `use`).
    pub fn name(&self) -> &Ident {
        match self {
            Item::Use(u) => u.path.last().expect("a use path has at least two segments"),
            Item::Const(c) => &c.name,
            Item::Clock(c) => &c.name,
            Item::Struct(s) => &s.name,
            Item::Enum(e) => &e.name,
            Item::Fn(f) => &f.name,
            Item::Unit(u) => &u.name,
            Item::System(s) => &s.name,
        }
    }
}

/// `use std::NAME;` or `use std::NAME::Item;`
#[derive(Clone, Debug)]
pub struct UseItem {
    /// The path segments.
    pub path: Vec<Ident>,
    /// The whole item.
    pub span: Span,
}

impl UseItem {
    /// For a `use` of a user module (not `std::`), what it may name, in
    /// the order they are tried: the whole path as a module (every item
    /// of `a/b/c.chr`), then all but the last segment as a module and the
    /// last as one of its items (`c` of `a/b.chr`). Module names join the
    /// segments with `::`; the loader in `chronc` finds files by the same
    /// rule, so the front end and the loader never disagree.
    pub fn user_module_candidates(&self) -> Vec<(String, Option<&Ident>)> {
        let join = |segments: &[Ident]| {
            segments
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join("::")
        };
        let mut out = vec![(join(&self.path), None)];
        if let [parent @ .., item] = &self.path[..]
            && !parent.is_empty()
        {
            out.push((join(parent), Some(item)));
        }
        out
    }
}

/// A constant.
#[derive(Clone, Debug)]
pub struct ConstDef {
    /// Name.
    pub name: Ident,
    /// Declared type.
    pub ty: TypeExpr,
    /// Value.
    pub value: Expr,
    /// The whole declaration.
    pub span: Span,
}

/// An exact time or frequency as written: `num/den` and a unit.
#[derive(Clone, Debug)]
pub struct TimeLit {
    /// The number as written (may be negative, decimal or a ratio).
    pub number: String,
    /// `GHz`, `ps`, ...
    pub unit: String,
    /// Where.
    pub span: Span,
}

/// One clock: a frequency or period and an optional phase.
#[derive(Clone, Debug)]
pub struct ClockSpec {
    /// Frequency or period.
    pub rate: TimeLit,
    /// Phase, if given.
    pub phase: Option<TimeLit>,
    /// Where.
    pub span: Span,
}

/// `clock name = spec;` or `clock name[N] = [spec, ...];`
#[derive(Clone, Debug)]
pub struct ClockDef {
    /// Name.
    pub name: Ident,
    /// Declared array length, if an array.
    pub array_len: Option<Expr>,
    /// One spec, or one per element.
    pub specs: Vec<ClockSpec>,
    /// Whether written as a list `[..]`.
    pub is_list: bool,
    /// The whole declaration.
    pub span: Span,
}

/// A struct declaration.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// Name.
    pub name: Ident,
    /// Compile-time parameters (`struct Pair<T: type, N: u32 = 2>`).
    pub params: Vec<GenericParam>,
    /// Fields in order.
    pub fields: Vec<(Ident, TypeExpr)>,
    /// The whole declaration.
    pub span: Span,
}

/// An enum declaration.
#[derive(Clone, Debug)]
pub struct EnumDef {
    /// Name.
    pub name: Ident,
    /// Variants in order; variant `i` has value `i`.
    pub variants: Vec<Ident>,
    /// The whole declaration.
    pub span: Span,
}

/// A pure function.
#[derive(Clone, Debug)]
pub struct FnDef {
    /// Name.
    pub name: Ident,
    /// Compile-time parameters (`fn parity<W: u32>`), inferred at each
    /// call from the arguments' types.
    pub generics: Vec<GenericParam>,
    /// Parameters.
    pub params: Vec<(Ident, TypeExpr)>,
    /// Return type.
    pub ret: TypeExpr,
    /// Body.
    pub body: Block,
    /// The whole declaration.
    pub span: Span,
}

/// A compile-time parameter `NAME: T = default`.
#[derive(Clone, Debug)]
pub struct GenericParam {
    /// Name.
    pub name: Ident,
    /// Type.
    pub ty: TypeExpr,
    /// Default value.
    pub default: Option<Expr>,
    /// The whole declaration.
    pub span: Span,
}

/// Direction of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Dir {
    /// Input.
    In,
    /// Output.
    Out,
}

/// The kind annotation on a port.
#[derive(Clone, Debug)]
pub enum PortKindAst {
    /// None written.
    Plain,
    /// `cdc`
    Cdc,
    /// `cdc fwft`
    CdcFwft,
    /// `rate e`
    Rate(Expr),
}

/// A unit member.
#[derive(Clone, Debug)]
pub enum UnitMember {
    /// `in|out name: T kind;`
    Port {
        /// `in` or `out`.
        dir: Dir,
        /// The port's name.
        name: Ident,
        /// The element count of a port array (`in rx[N]: T;`).
        len: Option<Expr>,
        /// The item type it carries (of each element of a port array).
        ty: TypeExpr,
        /// How it links: a channel end, or a CDC FIFO read port (`cdc`, `cdc fwft`).
        kind: PortKindAst,
        /// The whole declaration.
        span: Span,
    },
    /// `reg name: T = init;`
    Reg {
        /// The register's name.
        name: Ident,
        /// Its type.
        ty: TypeExpr,
        /// Its value before the first edge (zero when absent).
        init: Option<Expr>,
        /// The whole declaration.
        span: Span,
    },
    /// `stage name: T pipes N;`
    Stage {
        /// The stage register's name.
        name: Ident,
        /// The type of each pipe's value.
        ty: TypeExpr,
        /// How many pipes (one when absent).
        pipes: Option<Expr>,
        /// The whole declaration.
        span: Span,
    },
    /// `counter name;`
    Counter {
        /// The counter's name.
        name: Ident,
        /// The whole declaration.
        span: Span,
    },
    /// `tick { ... }`
    Tick {
        /// The statements run at every edge of the unit's clock.
        body: Block,
        /// The whole `tick` block.
        span: Span,
    },
}

/// A unit.
#[derive(Clone, Debug)]
pub struct UnitDef {
    /// Name.
    pub name: Ident,
    /// Compile-time parameters.
    pub params: Vec<GenericParam>,
    /// Members in order.
    pub members: Vec<UnitMember>,
    /// The whole declaration.
    pub span: Span,
}

/// `inst[idx].port` in a system.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Instance name.
    pub inst: Ident,
    /// Element index of an instance array.
    pub index: Option<Expr>,
    /// Port name.
    pub port: Ident,
    /// Element index of a port array (`a.tx[i]`); none names a single port
    /// or a whole port array.
    pub port_index: Option<Expr>,
    /// Where.
    pub span: Span,
}

/// A system member.
#[derive(Clone, Debug)]
pub enum SystemMember {
    /// `in|out name: T = inst.port;`
    Expose {
        /// `in` or `out`.
        dir: Dir,
        /// The name the system's port is known by outside.
        name: Ident,
        /// The element count when it exposes a whole port array (`in rx[N]: T = a.rx;`).
        len: Option<Expr>,
        /// The item type it carries.
        ty: TypeExpr,
        /// The inner instance port it stands for.
        target: Endpoint,
        /// The whole declaration.
        span: Span,
    },
    /// `inst name[idx]: Target<args> on clock;`
    Inst {
        /// The instance name.
        name: Ident,
        /// The element of an instance array (`inst s[i]`).
        index: Option<Expr>,
        /// The unit or system instantiated.
        target: Ident,
        /// Parameter values given (`<N = 4>`).
        args: Vec<(Ident, Expr)>,
        /// The clock (`on c`, or `on c[i]` of a clock array); none for a system.
        clock: Option<(Ident, Option<Expr>)>,
        /// The whole declaration.
        span: Span,
    },
    /// `connect a -> b latency L capacity C;`
    Connect {
        /// The output port that sends.
        from: Endpoint,
        /// The input port that receives.
        to: Endpoint,
        /// Edges from send to receive (one when absent).
        latency: Option<Expr>,
        /// Items the channel holds (its default when absent).
        capacity: Option<Expr>,
        /// The whole declaration.
        span: Span,
    },
    /// `cdc a -> b depth D sync S;`
    Cdc {
        /// The writer's output port.
        from: Endpoint,
        /// The reader's `cdc` input port.
        to: Endpoint,
        /// Entries of the FIFO (a power of two).
        depth: Expr,
        /// Synchronizer stages (two when absent).
        sync: Option<Expr>,
        /// The whole declaration.
        span: Span,
    },
    /// `for i in a..b { ... }`
    For {
        /// The loop variable, a `u32` constant in each iteration.
        var: Ident,
        /// First value (inclusive, constant).
        start: Expr,
        /// Bound (exclusive, constant).
        end: Expr,
        /// The members declared once per value.
        body: Vec<SystemMember>,
        /// The whole loop.
        span: Span,
    },
    /// `if cond { ... } else { ... }` on constants (conditional generate);
    /// `else if` is an `If` alone in `otherwise`.
    If {
        /// A constant `bool`.
        cond: Expr,
        /// The members declared when it holds.
        then: Vec<SystemMember>,
        /// The members declared when it does not (empty without `else`).
        otherwise: Vec<SystemMember>,
        /// The whole `if`, its `else` arms included.
        span: Span,
    },
}

/// A system.
#[derive(Clone, Debug)]
pub struct SystemDef {
    /// Name.
    pub name: Ident,
    /// Compile-time parameters.
    pub params: Vec<GenericParam>,
    /// Members in order.
    pub members: Vec<SystemMember>,
    /// The whole declaration.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug)]
pub enum TypeExprKind {
    /// `bool`, `u8`, a struct or enum name.
    Named(Ident),
    /// A generic struct with arguments: `Pair<T = u8, N = 4>`.
    Generic {
        /// The struct.
        name: Ident,
        /// Its arguments by parameter name (a type argument as
        /// [`ExprKind::TypeArg`] or a name).
        args: Vec<(Ident, Expr)>,
    },
    /// `[T; N]`
    Array(Box<TypeExpr>, Box<Expr>),
    /// `u<W>` or `i<W>`: an integer whose width is a constant (a literal,
    /// a name, or a parenthesised expression).
    SizedInt {
        /// `i<W>` when true.
        signed: bool,
        /// The width.
        width: Box<Expr>,
    },
}

/// A type as written, with its span.
#[derive(Clone, Debug)]
pub struct TypeExpr {
    /// What.
    pub kind: TypeExprKind,
    /// Where.
    pub span: Span,
}

/// A `{ ... }` block.
#[derive(Clone, Debug)]
pub struct Block {
    /// Statements.
    pub stmts: Vec<Stmt>,
    /// Where, braces included.
    pub span: Span,
}

/// The condition of an `if` arm.
#[derive(Clone, Debug)]
pub enum Cond {
    /// A boolean expression.
    Expr(Expr),
    /// `let Some(x) = e`
    LetSome(Ident, Expr),
}

/// A match pattern.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// `_`
    Wildcard(Span),
    /// An integer, possibly negative.
    Int(BigInt, Option<(bool, u32)>, Span),
    /// `true` / `false`
    Bool(bool, Span),
    /// `E::V`
    Enum(Ident, Ident),
    /// `Some(x)`
    Some(Ident),
    /// `None`
    None(Span),
}

impl Pattern {
    /// Where.
    pub fn span(&self) -> Span {
        match self {
            Pattern::Wildcard(s)
            | Pattern::Int(_, _, s)
            | Pattern::Bool(_, s)
            | Pattern::None(s) => *s,
            Pattern::Enum(a, b) => a.span.to(b.span),
            Pattern::Some(i) => i.span,
        }
    }
}

/// A statement kind.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `let x: T = e;`
    Let {
        /// The local's name.
        name: Ident,
        /// Its declared type; inferred from `value` when absent.
        ty: Option<TypeExpr>,
        /// Its initial value.
        value: Expr,
    },
    /// `place = e;`
    Assign {
        /// The local, or an element or field of it.
        place: Expr,
        /// The new value.
        value: Expr,
    },
    /// `place <= e;`
    RegWrite {
        /// The register, or an element or field of it.
        place: Expr,
        /// The value it takes at the next edge.
        value: Expr,
    },
    /// `c += e;`
    CounterAdd {
        /// The counter.
        name: Ident,
        /// The amount added.
        value: Expr,
    },
    /// `if c {} else if c {} else {}`
    If {
        /// Each condition (`c` or `let Some(x) = e`) with its block, in order.
        arms: Vec<(Cond, Block)>,
        /// The final `else` block.
        otherwise: Option<Block>,
    },
    /// `match e { pats => {} }`
    Match {
        /// The value matched.
        scrutinee: Expr,
        /// Each arm's patterns (alternatives) and block.
        arms: Vec<(Vec<Pattern>, Block)>,
    },
    /// `for i in a..b {}`, or `for i in a..b max M {}`
    For {
        /// The loop variable (a `u32`).
        var: Ident,
        /// First value (inclusive; constant unless `max` is given).
        start: Expr,
        /// Bound (exclusive; constant unless `max` is given).
        end: Expr,
        /// `max M`: a run-time loop of at most `M` iterations, not unrolled.
        max: Option<Expr>,
        /// The loop body.
        body: Block,
    },
    /// `while cond max M {}`: a run-time loop of at most `M` iterations.
    While {
        /// Tested before each iteration.
        cond: Expr,
        /// The bound (required: the checker reports its absence).
        max: Option<Expr>,
        /// The loop body.
        body: Block,
    },
    /// `return e;`
    Return(Expr),
    /// `finish;`
    Finish,
    /// `assert(c, "msg");`
    Assert {
        /// What must hold.
        cond: Expr,
        /// What the fault says when it does not.
        message: String,
    },
    /// `trace("name", k = e, ...);`
    Trace {
        /// The event name, as written.
        name: String,
        /// The name's string literal, quotes included (E0327 labels it).
        name_span: Span,
        /// Each argument's name and value.
        args: Vec<(Ident, Expr)>,
    },
    /// An expression evaluated for its effect.
    Expr(Expr),
}

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `&x`: 1 when every bit of `x` is 1 (a `u1`).
    AndReduce,
    /// `|x`: 1 when any bit of `x` is 1 (a `u1`).
    OrReduce,
    /// `^x`: the parity of `x`'s bits (a `u1`).
    XorReduce,
}

impl UnOp {
    /// Whether the operator folds an integer's bits into one `u1`.
    pub fn is_reduction(self) -> bool {
        matches!(self, UnOp::AndReduce | UnOp::OrReduce | UnOp::XorReduce)
    }

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
            UnOp::BitNot => "~",
            UnOp::AndReduce => "&",
            UnOp::OrReduce => "|",
            UnOp::XorReduce => "^",
        }
    }
}

/// The three forms of a bit slice `x[a ? b]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SliceKind {
    /// `x[hi:lo]`: bits `lo` to `hi`, both constant.
    Range,
    /// `x[base +: w]`: `w` bits from `base` up (`w` constant).
    Up,
    /// `x[base -: w]`: `w` bits from `base` down (`w` constant).
    Down,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `||`
    Or,
    /// `&&`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Or => "||",
            And => "&&",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Shl => "<<",
            Shr => ">>",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
        }
    }

    /// Whether the result is `bool` and the operands share a type.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// An expression kind.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal (negation of a literal is folded in), with its
    /// optional suffix `(signed, width)`.
    Int(BigInt, Option<(bool, u32)>),
    /// `true` / `false`
    Bool(bool),
    /// A type that is not also an expression (`u<W>`), written as a
    /// generic argument or default, where the parameter's kind decides
    /// whether a type or a value is meant.
    TypeArg(Box<TypeExpr>),
    /// A name.
    Name(Ident),
    /// `E::V`
    EnumValue(Ident, Ident),
    /// Unary operation.
    Unary(UnOp, Box<Expr>),
    /// Binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`
    Cast(Box<Expr>, TypeExpr),
    /// `e.field`
    Field(Box<Expr>, Ident),
    /// `e[i]`: an array element, or bit `i` of an integer.
    Index(Box<Expr>, Box<Expr>),
    /// `e[a:b]`, `e[a +: b]`, `e[a -: b]`: a bit slice of an integer.
    Slice(Box<Expr>, SliceKind, Box<Expr>, Box<Expr>),
    /// `{a, b, c}`: the bits of each part, the first the most significant.
    Concat(Vec<Expr>),
    /// `{n{a, b}}`: the concatenation repeated `n` times.
    Replicate(Box<Expr>, Vec<Expr>),
    /// `e.method(args)`
    Method(Box<Expr>, Ident, Vec<Expr>),
    /// `f(args)`
    Call(Ident, Vec<Expr>),
    /// `"text"`, escapes resolved: a value nowhere, `print`'s format only.
    Str(String),
    /// `S { a: e, ... }`
    StructLit(Ident, Vec<(Ident, Expr)>),
    /// `[a, b, c]`
    ArrayLit(Vec<Expr>),
    /// `[e; n]`
    ArrayRepeat(Box<Expr>, Box<Expr>),
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}
