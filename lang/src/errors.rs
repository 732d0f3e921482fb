//! The diagnostics of the checking phases, one enum per phase. Every variant
//! has one stable code (see [`crate::diag`] for the scheme), named in its
//! doc; its fields are the values its message and labels show, as each
//! `into_diagnostic` spells out, so they carry no docs of their own.
#![expect(
    missing_docs,
    reason = "variant fields are diagnostic arguments, shown in into_diagnostic"
)]

use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::span::Span;

fn suggest(d: Diagnostic, suggestion: &Option<String>, fallback: &str) -> Diagnostic {
    match suggestion {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d.with_help(fallback.to_string()),
    }
}

/// Name-resolution errors (E02xx) and warnings (W02xx).
#[derive(Clone, Debug)]
pub enum ResolveError {
    /// E0201
    UnknownName {
        span: Span,
        name: String,
        kind: &'static str,
        suggestion: Option<String>,
    },
    /// E0201, for `p.f` where `p` is no name here (often another
    /// instance, whose registers a unit cannot read).
    ForeignMember {
        span: Span,
        name: String,
        field: String,
    },
    /// E0202
    Duplicate {
        span: Span,
        name: String,
        previous: Span,
    },
    /// E0203
    UnknownModule {
        span: Span,
        name: String,
        available: String,
    },
    /// E0208: a `use` of a user module no file was found for.
    NoUserModule {
        span: Span,
        name: String,
        files: String,
    },
    /// E0209: user modules that `use` each other in a cycle.
    ModuleCycle { span: Span, cycle: Vec<String> },
    /// E0210: a name two `use`s of whole modules both bring in, used
    /// without its module.
    AmbiguousName {
        span: Span,
        name: String,
        /// The modules that define it (their last path segments).
        modules: Vec<String>,
    },
    /// E0204
    UnknownImport {
        span: Span,
        module: String,
        name: String,
        suggestion: Option<String>,
    },
    /// E0205
    ConstCycle { span: Span, path: Vec<String> },
    /// E0206
    Recursion { span: Span, cycle: Vec<String> },
    /// E0207
    WrongKind {
        span: Span,
        name: String,
        expected: &'static str,
        found: &'static str,
    },
    /// W0201
    UnusedImport { span: Span },
}

impl IntoDiagnostic for ResolveError {
    fn into_diagnostic(self) -> Diagnostic {
        match self {
            ResolveError::UnknownName { span, name, kind, suggestion } => suggest(
                Diagnostic::error("E0201", format!("unknown {kind} `{name}`"), span, "not found in this scope"),
                &suggestion,
                "declare it, or bring it into scope with `use std::...`",
            ),
            ResolveError::ForeignMember { span, name, field } => Diagnostic::error(
                "E0201",
                format!("unknown name `{name}`"),
                span,
                "no local, constant, register, port or parameter of this name here",
            )
            .with_help(format!(
                "a unit reads only its own registers and ports: if `{name}` is another \
                 instance, have it send `{field}` through an `out` port, `connect` that \
                 port to an `in` port of this unit in the system, and `recv()` it here"
            )),
            ResolveError::Duplicate { span, name, previous } => {
                Diagnostic::error("E0202", format!("`{name}` is defined more than once"), span, "defined again here")
                    .with_label(previous, "first defined here")
                    .with_help("rename one of them")
            }
            ResolveError::NoUserModule { span, name, files } => {
                Diagnostic::error("E0208", format!("no module `{name}`"), span, "no file for this module")
                    .with_help(format!("chronc looks for {files} in the design's folder, then in each `-L DIR`; `std::` names the standard library"))
            }
            ResolveError::ModuleCycle { span, cycle } => {
                Diagnostic::error("E0209", format!("modules use each other in a cycle: {}", cycle.join(" -> ")), span, "closes the cycle")
                    .with_help("move what both need into a module of its own that neither uses back")
            }
            ResolveError::AmbiguousName { span, name, modules } => {
                let written: Vec<String> = modules.iter().map(|m| format!("`{m}::{name}`")).collect();
                Diagnostic::error("E0210", format!("`{name}` is defined by {}: both are imported", modules.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(" and ")), span, "which one?")
                    .with_help(format!("write {}, or import the one you mean by name (`use ...::{name};`)", written.join(" or ")))
            }
            ResolveError::UnknownModule { span, name, available } => {
                Diagnostic::error("E0203", format!("no standard library module `{name}`"), span, "unknown module")
                    .with_help(format!("the standard library has: {available}"))
            }
            ResolveError::UnknownImport { span, module, name, suggestion } => suggest(
                Diagnostic::error("E0204", format!("`std::{module}` has no item `{name}`"), span, "not in this module"),
                &suggestion,
                "import the whole module with `use std::MODULE;` to see what it offers",
            ),
            ResolveError::ConstCycle { span, path } => {
                Diagnostic::error("E0205", format!("constants depend on each other in a cycle: {}", path.join(" -> ")), span, "this constant is part of the cycle")
                    .with_help("break the cycle by writing one of the values directly")
            }
            ResolveError::Recursion { span, cycle } => {
                Diagnostic::error("E0206", format!("recursion is not allowed: {}", cycle.join(" -> ")), span, "this call closes the cycle")
                    .with_help("functions are inlined into hardware; rewrite the recursion as a `for` loop with constant bounds")
            }
            ResolveError::WrongKind { span, name, expected, found } => {
                Diagnostic::error("E0207", format!("`{name}` is a {found}, not a {expected}"), span, format!("expected a {expected}"))
                    .with_help(format!("use a {expected} here"))
            }
            ResolveError::UnusedImport { span } => {
                Diagnostic::warning("W0201", "unused import", span, "nothing imported here is used").with_help("remove this `use`")
            }
        }
    }
}

/// Type and tick-body errors (E03xx) and warnings (W03xx).
#[derive(Clone, Debug)]
pub enum TypeError {
    /// E0301
    Mismatch {
        span: Span,
        expected: String,
        found: String,
    },
    /// E0302
    CannotInfer { span: Span },
    /// E0303
    LiteralOverflow {
        span: Span,
        value: num_bigint::BigInt,
        ty: String,
    },
    /// E0304
    BadCast {
        span: Span,
        from: String,
        to: String,
    },
    /// E0305
    BadOperand { span: Span, op: String, ty: String },
    /// E0306
    NotAValue {
        span: Span,
        name: String,
        what: &'static str,
        help: &'static str,
    },
    /// E0307
    NotConstant { span: Span, what: &'static str },
    /// E0308
    BadWidth { span: Span, name: String },
    /// E0309
    IndexOutOfRange { span: Span, index: i128, len: u64 },
    /// E0310
    UnknownField {
        span: Span,
        name: String,
        ty: String,
        suggestion: Option<String>,
    },
    /// E0311
    StructLiteral { span: Span, message: String },
    /// E0312
    UnknownMethod {
        span: Span,
        method: String,
        what: String,
        available: &'static str,
    },
    /// E0313
    WrongSide {
        span: Span,
        method: String,
        port: String,
        kind: &'static str,
        help: &'static str,
    },
    /// E0314
    ArgCount {
        span: Span,
        what: String,
        expected: usize,
        found: usize,
    },
    /// E0315
    WriteNotRegister {
        span: Span,
        name: String,
        what: &'static str,
    },
    /// E0316
    AssignNotLocal {
        span: Span,
        name: String,
        what: &'static str,
    },
    /// E0317
    RegWriteOutsideTick { span: Span },
    /// E0318
    UnitOpInFn { span: Span, what: &'static str },
    /// E0319
    ReturnInTick { span: Span },
    /// E0320
    MissingReturn { span: Span, name: String },
    /// E0321
    StageTwice {
        span: Span,
        first: Span,
        first_label: &'static str,
        stage: String,
        pipe: i128,
    },
    /// E0322
    NoValue { span: Span, method: String },
    /// E0323
    BadPattern { span: Span, expected: String },
    /// E0324
    OutOfRange {
        span: Span,
        what: &'static str,
        value: i128,
        range: &'static str,
    },
    /// E0325
    RandomType { span: Span, found: Option<String> },
    /// E0326: `span` covers the arguments past the limit; `lone` is the type
    /// and value count of the argument there when it is one aggregate;
    /// `aggregates` lists the earlier arguments that count several values
    /// (span, type, count).
    TraceTooLarge {
        span: Span,
        event: String,
        values: u64,
        limit: u64,
        lone: Option<(String, u64)>,
        aggregates: Vec<(Span, String, u64)>,
    },
    /// E0304: a struct cast whose integer is not as wide as the struct
    /// (`bits`; `None` when the struct holds an enum or option, which
    /// have no bits to pack), or whose other side is not an integer.
    StructCast {
        span: Span,
        from: String,
        to: String,
        bits: Option<u32>,
        other_int: bool,
    },
    /// E0338: a type parameter's argument or default that is not a type.
    NotAType { span: Span },
    /// E0334: a string literal where a value is needed (strings are only
    /// `print`'s format).
    StringValue { span: Span },
    /// E0335: a `print` format that does not parse (`problem` says why),
    /// or a `print` with no format string first.
    BadFormat { span: Span, problem: String },
    /// E0336: a `print` whose placeholders and values differ in number;
    /// `span` covers the values past the placeholders, or the format when
    /// values are missing.
    FormatCount {
        span: Span,
        placeholders: usize,
        values: usize,
    },
    /// E0337: a `print` value that is not an integer or `bool`.
    PrintValue { span: Span, ty: String },
    /// E0327: a `trace` name the recorders cannot carry; `problem` says
    /// which character (or that it is empty).
    BadTraceName {
        span: Span,
        name: String,
        problem: String,
    },
    /// E0330: a constant bit position past an integer's width; `what`
    /// says which bits, with the verb (`bit 8 is`, `bits 11:4 are`).
    BitOutOfRange {
        span: Span,
        what: String,
        ty: String,
        width: u32,
    },
    /// E0331: a slice that selects no bits or more than its integer has.
    BadSlice { span: Span, message: String },
    /// E0340: a generic function's parameter that no argument fixes.
    CannotInferParam {
        /// The call.
        span: Span,
        /// The function.
        function: String,
        /// The parameter.
        param: String,
        /// Where the parameter is declared.
        declared: Span,
    },
    /// E0341: a port array used without an element, or with an index that
    /// is not known once the loops are unrolled.
    PortArrayIndex {
        /// The array's name, or its index.
        span: Span,
        /// The port array.
        array: String,
        /// What is wrong, for the message.
        message: String,
        /// The label at `span`.
        label: String,
    },
    /// E0311: a literal of a generic struct whose parameters neither its
    /// context nor defaults give.
    UnknownStructParams {
        /// The struct's name in the literal.
        span: Span,
        /// The struct.
        name: String,
    },
    /// E0342: a `while` loop without `max`.
    UnboundedLoop {
        /// The loop.
        span: Span,
    },
    /// E0309, for an index that depends on loop variables: out of range in
    /// one iteration.
    IndexOutOfRangeAt {
        /// The index.
        span: Span,
        /// Its value there.
        index: i128,
        /// The array's length.
        len: u64,
        /// The iteration (`i = 3`).
        at: String,
    },
    /// E0339: `/` or `%` on values wider than `MAX_DIVIDE_BITS`.
    WideDivision {
        /// The operation.
        span: Span,
        /// `/` or `%`.
        op: &'static str,
        /// The operands' width.
        width: u32,
    },
    /// E0332: a concatenation or replication wider than `MAX_INT_BITS`.
    TooWide {
        span: Span,
        what: &'static str,
        width: u64,
    },
    /// E0333: an integer literal without a width in a concatenation.
    UnsizedPart { span: Span },
    /// W0301
    UnusedState {
        span: Span,
        what: &'static str,
        name: String,
    },
    /// W0302
    UnusedPort { span: Span, name: String },
    /// W0303
    Unreachable { span: Span, after: Span },
    /// W0304
    UnusedLocal { span: Span, name: String },
    /// W0305: a `match` pattern that can never be the one that runs.
    ShadowedPattern {
        span: Span,
        /// The earlier pattern that takes its values.
        earlier: Span,
        /// Whether `span` is a `_` arm followed by other arms.
        wildcard_not_last: bool,
    },
}

impl IntoDiagnostic for TypeError {
    fn into_diagnostic(self) -> Diagnostic {
        use TypeError::*;
        match self {
            Mismatch { span, expected, found } => Diagnostic::error("E0301", format!("type mismatch: expected `{expected}`, found `{found}`"), span, format!("this is `{found}`"))
                .with_help("types never change implicitly; convert with `as` where that is meant"),
            CannotInfer { span } => Diagnostic::error("E0302", "cannot infer the type of this literal", span, "no type here tells its width")
                .with_help("give the literal a suffix (e.g. `5u8`) or annotate the variable"),
            LiteralOverflow { span, value, ty } => Diagnostic::error("E0303", format!("literal `{value}` does not fit in `{ty}`"), span, format!("out of range for `{ty}`"))
                .with_help("use a wider type, or a value in range"),
            BadCast { span, from, to } => Diagnostic::error("E0304", format!("cannot convert `{from}` to `{to}` with `as`"), span, "invalid conversion")
                .with_help("`as` converts between integer types, and from `bool` or an enum to an integer; for `x as bool` write `x != 0`"),
            BadOperand { span, op, ty } => {
                let help = match op.as_str() {
                    "[]" => "indexing takes arrays, and integers for their bits (`x[3]`)",
                    "[:]" | "[+:]" | "[-:]" | "{}" | "unary &" | "unary |" | "unary ^" => {
                        "bit selects, slices, concatenation and reductions take integers and `bool`"
                    }
                    _ => "arithmetic and bitwise operators take integers; `!`, `&&`, `||` take bool",
                };
                Diagnostic::error("E0305", format!("operator `{op}` is not defined on `{ty}`"), span, format!("`{ty}` here"))
                    .with_help(help)
            }
            NotAValue { span, name, what, help } => Diagnostic::error("E0306", format!("`{name}` is a {what}, not a value"), span, format!("a {what}")).with_help(help),
            NotConstant { span, what } => Diagnostic::error("E0307", format!("{what} must be a compile-time constant"), span, "depends on run-time state")
                .with_help("use literals, constants and parameters here"),
            BadWidth { span, name } => Diagnostic::error("E0308", format!("`{name}` is not a valid integer type"), span, "width out of range")
                .with_help("integer types are `u1` ... `u1024` and `i1` ... `i1024`"),
            IndexOutOfRange { span, index, len } => Diagnostic::error("E0309", format!("index {index} is out of range for an array of {len}"), span, "out of range")
                .with_help(format!("valid indices are 0 to {}", len.saturating_sub(1))),
            UnknownField { span, name, ty, suggestion } => suggest(
                Diagnostic::error("E0310", format!("`{ty}` has no field `{name}`"), span, "unknown field"),
                &suggestion,
                "check the struct declaration",
            ),
            StructLiteral { span, message } => Diagnostic::error("E0311", message, span, "in this struct value")
                .with_help("give every field exactly once"),
            UnknownMethod { span, method, what, available } => Diagnostic::error("E0312", format!("no method `{method}` on {what}"), span, "unknown method")
                .with_help(format!("available: {available}")),
            WrongSide { span, method, port, kind, help } => Diagnostic::error("E0313", format!("`{method}()` is not available on {kind} `{port}`"), span, "wrong side of the channel or FIFO")
                .with_help(help),
            ArgCount { span, what, expected, found } => Diagnostic::error("E0314", format!("{what} takes {expected} argument(s), {found} given"), span, "wrong number of arguments")
                .with_help("pass the declared arguments"),
            WriteNotRegister { span, name, what } => Diagnostic::error("E0315", format!("`<=` writes registers, and `{name}` is a {what}"), span, "not a register")
                .with_help("assign locals with `=`; only registers take `<=`"),
            AssignNotLocal { span, name, what } => Diagnostic::error("E0316", format!("cannot assign `{name}` with `=`: it is a {what}"), span, "not a local variable")
                .with_help("write registers with `<=`; constants, parameters and ports cannot be assigned"),
            RegWriteOutsideTick { span } => Diagnostic::error("E0317", "register write outside a tick", span, "functions have no registers")
                .with_help("functions are pure: return the value and write the register in the tick"),
            UnitOpInFn { span, what } => Diagnostic::error("E0318", format!("{what} is only allowed in a tick"), span, "inside a function")
                .with_help("functions are pure: move this into the unit's tick"),
            ReturnInTick { span } => Diagnostic::error("E0319", "`return` outside a function", span, "ticks do not return")
                .with_help("use `if` to skip the rest of the tick, or `finish;` to stop the run"),
            MissingReturn { span, name } => Diagnostic::error("E0320", format!("function `{name}` does not end with `return`"), span, "the body may end without a value")
                .with_help("end the body with `return value;`"),
            StageTwice { span, first, first_label, stage, pipe } => Diagnostic::error("E0321", format!("pipe {pipe} of stage register `{stage}` is written or retained twice in one tick"), span, "second write or retain")
                .with_label(first, first_label)
                .with_help("write or retain each pipe at most once per tick"),
            NoValue { span, method } if method == "print" => Diagnostic::error("E0322", "`print()` has no value", span, "used as a value")
                .with_help("`print` is a statement of its own: `print(\"x = {}\", x);`"),
            NoValue { span, method } => Diagnostic::error("E0322", format!("`{method}()` has no value"), span, "used as a value")
                .with_help("call it as a statement; `try_send(v)` returns whether the item was sent"),
            BadPattern { span, expected } => Diagnostic::error("E0323", format!("this pattern does not match a `{expected}`"), span, "wrong kind of pattern")
                .with_help("match integers with literals, enums with `E::V`, bools with `true`/`false`, options with `Some(x)`/`None`"),
            OutOfRange { span, what, value, range } => Diagnostic::error("E0324", format!("{what} {value} is out of range"), span, format!("must be {range}"))
                .with_help(format!("{what} must be {range}")),
            BitOutOfRange { span, what, ty, width } => Diagnostic::error("E0330", format!("{what} out of range for `{ty}`"), span, "out of range")
                .with_help(format!("the bits of a `{ty}` are 0 (the least significant) to {}", width.saturating_sub(1))),
            BadSlice { span, message } => Diagnostic::error("E0331", message, span, "in this slice")
                .with_help("`x[hi:lo]` takes bits lo to hi (hi >= lo, constants); `x[base +: w]` takes w bits from base up, `x[base -: w]` w bits from base down (w a constant of at least 1)"),
            CannotInferParam { span, function, param, declared } => Diagnostic::error("E0340", format!("cannot infer parameter `{param}` of `{function}` from this call"), span, format!("no argument's type fixes `{param}`"))
                .with_label(declared, "declared here")
                .with_help(format!("give `{param}` a default, or write it into a parameter's type (`x: u<{param}>`, `x: [T; {param}]`) so an argument fixes it")),
            PortArrayIndex { span, array, message, label } => Diagnostic::error("E0341", message, span, label)
                .with_help(format!("name an element of `{array}` with a constant or the variable of an enclosing `for` loop (`{array}[i]`); to choose one at run time, test each: `for i in 0..N {{ if i == k {{ ... {array}[i] ... }} }}`")),
            UnknownStructParams { span, name } => Diagnostic::error("E0311", format!("the parameters of `{name}` are not known here"), span, "a generic struct")
                .with_help(format!("give the value a type with them: `let v: {name}<T = u8> = {name} {{ ... }}`, or give the parameters defaults")),
            UnboundedLoop { span } => Diagnostic::error("E0342", "a `while` loop needs a bound", span, "no `max`")
                .with_help("write `while cond max N { ... }`: at most N iterations in one tick (more is a run-time fault), so every tick ends"),
            IndexOutOfRangeAt { span, index, len, at } => Diagnostic::error("E0309", format!("index {index} is out of range for an array of {len} when {at}"), span, format!("{index} when {at}"))
                .with_help(format!("valid indices are 0 to {}; narrow the loop's range or the index", len.saturating_sub(1))),
            WideDivision { span, op, width } => Diagnostic::error("E0339", format!("`{op}` on {width}-bit values: division and remainder take at most {} bits", crate::check::MAX_DIVIDE_BITS), span, format!("{width}-bit operands"))
                .with_help("divide values of at most 128 bits (cast or slice the operands), or by a power of two with a shift"),
            TooWide { span, what, width } => Diagnostic::error("E0332", format!("this {what} is {width} bits wide; values are at most {} bits", crate::design::MAX_INT_BITS), span, format!("{width} bits"))
                .with_help("split it into values of at most 1024 bits (a struct or an array holds more)"),
            UnsizedPart { span } => Diagnostic::error("E0333", "an integer literal in a concatenation needs a width", span, "how many bits is this?")
                .with_help("give the literal a type suffix (`5u4`), or convert it (`(5 as u4)`)"),
            RandomType { span, found: Some(ty) } => Diagnostic::error("E0325", format!("`random()` cannot give a `{ty}`"), span, format!("a `{ty}` is expected here"))
                .with_help("`random()` gives an integer or `bool`; draw each field separately"),
            RandomType { span, found: None } => Diagnostic::error("E0325", "the type of `random()` cannot be inferred", span, "no type here tells its width")
                .with_help("annotate the variable (`let r: u32 = random();`) or convert with `as` (`random() as u8`)"),
            TraceTooLarge { span, event, values, limit, lone, aggregates } => {
                let label = match lone {
                    Some((ty, count)) => format!("past the first {limit} values: a `{ty}` records {count}"),
                    None => format!("past the first {limit} values"),
                };
                let mut d = Diagnostic::error("E0326", format!("`trace(\"{event}\", ...)` records {values} values; at most {limit} fit in one event"), span, label);
                for (at, ty, count) in aggregates {
                    d = d.with_label(at, format!("a `{ty}` records {count} values"));
                }
                d.with_help(format!("split it into several `trace` statements of at most {limit} values each; a struct, array or option argument records one value per field, element and valid bit"))
            }
            StructCast { span, from, to, bits, other_int } => {
                let (label, help) = match (bits, other_int) {
                    (Some(b), true) => (format!("the struct is {b} bits wide"), format!("a struct converts to and from an integer of its total width: `u{b}` or `i{b}`")),
                    (Some(b), false) => ("not an integer".to_string(), format!("a struct converts only to and from an integer of its total width (`u{b}`)")),
                    (None, _) => ("a field has no fixed bits".to_string(), "only structs of integers, `bool`s, and structs and arrays of them convert with `as`; an enum or option field does not".to_string()),
                };
                Diagnostic::error("E0304", format!("cannot convert `{from}` to `{to}` with `as`"), span, label).with_help(help)
            }
            NotAType { span } => Diagnostic::error("E0338", "a type parameter takes a type", span, "not a type")
                .with_help("give a type name or an array type: `T = u16`, `T = Packet`, `T = [u8; 4]`"),
            StringValue { span } => Diagnostic::error("E0334", "a string literal is not a value", span, "used as a value")
                .with_help("a string is only the format of `print`: `print(\"x = {}\", x);`"),
            BadFormat { span, problem } => Diagnostic::error("E0335", "this `print` format cannot be used", span, problem)
                .with_help("a format is a string literal first in `print`; `{}` prints a value in decimal, `{:x}` and `{:#x}` in hexadecimal, `{:b}` and `{:#b}` in binary; `{{` and `}}` print braces"),
            FormatCount { span, placeholders, values } => {
                let label = if values > placeholders { "no placeholder for these" } else { "placeholders without a value" };
                Diagnostic::error("E0336", format!("the format has {placeholders} placeholder{} but {values} value{} follow{}", plural(placeholders), plural(values), if values == 1 { "s" } else { "" }), span, label)
                    .with_help("give one value per `{}` placeholder, in order")
            }
            PrintValue { span, ty } => Diagnostic::error("E0337", format!("`print` cannot show a `{ty}`"), span, "not an integer or `bool`")
                .with_help("print each field or element on its own: `print(\"{} {}\", p.a, p.b)`"),
            BadTraceName { span, name, problem } => Diagnostic::error("E0327", format!("trace name {name:?} cannot be recorded"), span, problem)
                .with_help("a trace name is one or more printable ASCII characters other than space, `=`, `,`, `\"` and `\\` (the text log and `--trace-filter` use them as separators); write e.g. `a_b`"),
            UnusedState { span, what, name } => Diagnostic::warning("W0301", format!("{what} `{name}` is never used"), span, "unused")
                .with_help("remove it, or prefix the name with `_`".to_string()),
            UnusedPort { span, name } => Diagnostic::warning("W0302", format!("port `{name}` is never used by the tick"), span, "unused")
                .with_help("remove it, or prefix the name with `_`"),
            Unreachable { span, after } => Diagnostic::warning("W0303", "unreachable statement", span, "never runs")
                .with_label(after, "control never gets past this")
                .with_help("remove the statements after `return` or `finish`"),
            UnusedLocal { span, name } => Diagnostic::warning("W0304", format!("variable `{name}` is never read"), span, "its value is never read")
                .with_help("remove the `let` (keep the expression as a statement if it acts), or prefix the name with `_`"),
            ShadowedPattern { span, earlier, wildcard_not_last: true } => Diagnostic::warning("W0305", "`_` arm before other arms", span, "runs only when no other arm matches")
                .with_label(earlier, "a later arm")
                .with_help("move the `_` arm last: in Chronon it is the default arm wherever it stands, not the first match"),
            ShadowedPattern { span, earlier, wildcard_not_last: false } => Diagnostic::warning("W0305", "pattern already matched by an earlier arm", span, "this arm never runs for this value")
                .with_label(earlier, "matched here first")
                .with_help("remove the repeated pattern"),
        }
    }
}

/// Elaboration (system) errors (E04xx) and warnings (W04xx).
#[derive(Clone, Debug)]
pub enum ElabError {
    /// E0401
    CrossDomain {
        span: Span,
        from: String,
        from_dom: String,
        from_span: Span,
        to: String,
        to_dom: String,
        to_span: Span,
    },
    /// E0402
    ZeroLatencyCycle { span: Span, path: Vec<String> },
    /// E0403
    Undriven { span: Span, port: String },
    /// E0403, for elements of one input port array: one report for all.
    UndrivenElements {
        span: Span,
        /// `top.u.rx`.
        array: String,
        /// The elements' indices, in order.
        elements: Vec<usize>,
    },
    /// E0404
    ExposedTwice {
        span: Span,
        previous: Span,
        what: String,
    },
    /// E0405
    Direction {
        span: Span,
        port: String,
        is: &'static str,
        needs: &'static str,
    },
    /// E0406
    CdcDepth { span: Span, depth: i128 },
    /// E0407
    SyncLength { span: Span, sync: i128 },
    /// E0408
    FifoSide {
        span: Span,
        message: String,
        help: &'static str,
    },
    /// E0409
    MissingClock { span: Span, name: String },
    /// E0410
    ClockOnSystem { span: Span },
    /// E0411
    NoTop {
        span: Span,
        name: Option<String>,
        /// The systems the design declares (for the help line).
        declared: Vec<String>,
    },
    /// E0412
    AmbiguousTop { span: Span, candidates: Vec<String> },
    /// E0413
    InstanceElement { span: Span, message: String },
    /// E0413: a link to an instance array whose only `for` loop ran zero
    /// times.
    EmptyInstanceArray {
        span: Span,
        name: String,
        bound: Span,
        range: String,
    },
    /// E0414
    BadParam {
        span: Span,
        message: String,
        help: String,
    },
    /// E0415
    PayloadMismatch {
        span: Span,
        from: String,
        to: String,
    },
    /// E0416
    ChannelParam {
        span: Span,
        what: &'static str,
        value: i128,
        range: &'static str,
    },
    /// E0417
    SystemCycle { span: Span, path: Vec<String> },
    /// E0418: `span` is where elaboration passed the limit.
    TooLarge { span: Span, limit: usize },
    /// E0419: a port array where one port is needed, one port where an
    /// array is, or arrays of different lengths joined whole.
    PortArrayLink {
        span: Span,
        message: String,
        label: String,
    },
    /// W0401
    UnusedUnit { span: Span, name: String },
    /// W0402
    SeveralTops { span: Span, candidates: Vec<String> },
}

impl IntoDiagnostic for ElabError {
    fn into_diagnostic(self) -> Diagnostic {
        use ElabError::*;
        match self {
            CrossDomain { span, from, from_dom, from_span, to, to_dom, to_span } => Diagnostic::error(
                "E0401",
                format!("`connect` between clock domains: `{from}` is on `{from_dom}`, `{to}` is on `{to_dom}`"),
                span,
                "a channel joins ports of one domain",
            )
            .with_label(from_span, format!("`{from}` is on `{from_dom}`"))
            .with_label(to_span, format!("`{to}` is on `{to_dom}`"))
            .with_help("cross clock domains with a CDC FIFO: `cdc a.out -> b.in depth 16;` and declare the input `cdc`"),
            ZeroLatencyCycle { span, path } => Diagnostic::error("E0402", format!("zero-latency connections form a cycle: {}", path.join(" -> ")), span, "this connection closes the cycle")
                .with_help("give one connection of the cycle `latency 1` or more"),
            Undriven { span, port } => Diagnostic::error("E0403", format!("input `{port}` is not driven by anything"), span, "no connection or FIFO reaches this port")
                .with_help("connect an output to it, or remove the port"),
            UndrivenElements { span, array, elements } => {
                let list: Vec<String> = elements.iter().map(|e| e.to_string()).collect();
                Diagnostic::error("E0403", format!("element{} {} of input port array `{array}` {} not driven by anything", if elements.len() == 1 { "" } else { "s" }, list.join(", "), if elements.len() == 1 { "is" } else { "are" }), span, "no connection or FIFO reaches these ports")
                    .with_help(format!("connect an output to each element (`connect a.tx -> {}[i];`), or a port array of the same length to the whole array", array.split('.').skip(1).collect::<Vec<_>>().join(".")))
            }
            PortArrayLink { span, message, label } => Diagnostic::error("E0419", message, span, label)
                .with_help("name one element (`a.tx[i]`), or join whole port arrays of one length (`connect a.tx -> b.rx;`, `in rx[N]: T = a.rx;`)"),
            ExposedTwice { span, previous, what } => Diagnostic::error("E0404", format!("{what} is exposed twice"), span, "exposed again here")
                .with_label(previous, "first exposed here")
                .with_help("expose each inner port once, under one name"),
            Direction { span, port, is, needs } => Diagnostic::error("E0405", format!("`{port}` is an {is} port, used as an {needs}"), span, format!("needs an {needs} port"))
                .with_help("connections go from an output (`out`) to an input (`in`)"),
            CdcDepth { span, depth } => Diagnostic::error("E0406", format!("CDC FIFO depth {depth} is not a power of two in 2..=2^30"), span, "invalid depth")
                .with_help("use a power of two such as 16"),
            SyncLength { span, sync } => Diagnostic::error("E0407", format!("synchronizer length {sync} is out of range"), span, "must be in 2..=64")
                .with_help("use `sync 2` (the default) or more, up to 64"),
            FifoSide { span, message, help } => Diagnostic::error("E0408", message, span, "wrong kind of port for this link").with_help(help),
            MissingClock { span, name } => Diagnostic::error("E0409", format!("unit instance `{name}` has no clock"), span, "needs `on CLOCK`")
                .with_help("write `inst name: Unit on clock;`"),
            ClockOnSystem { span } => Diagnostic::error("E0410", "a system instance takes no clock", span, "systems bring their own clocks")
                .with_help("remove `on ...`; the units inside a system name their clocks"),
            NoTop { span, name, declared } => match name {
                Some(n) if declared.is_empty() => Diagnostic::error("E0411", format!("no system named `{n}`"), span, "the design declares no system")
                    .with_help("declare a `system` that instantiates the units, and pass its name to --top"),
                Some(n) => Diagnostic::error("E0411", format!("no system named `{n}`"), span, "the first system declared")
                    .with_help(format!("--top takes one of the systems the design declares: {}", declared.join(", "))),
                None => Diagnostic::error("E0411", "the design has no top system", span, "no system here")
                    .with_help("declare a `system` that instantiates the units"),
            },
            AmbiguousTop { span, candidates } => Diagnostic::error("E0412", format!("several systems could be the top: {}", candidates.join(", ")), span, "one candidate")
                .with_help("choose one with --top NAME"),
            InstanceElement { span, message } => Diagnostic::error("E0413", message, span, "instance declaration")
                .with_help("declare each element of an instance array exactly once, from 0 up"),
            EmptyInstanceArray { span, name, bound, range } => Diagnostic::error(
                "E0413",
                format!("instance array `{name}` has no elements: its `for` loop ran zero times"),
                span,
                "no element to link to",
            )
            .with_label(bound, format!("the loop's range is `{range}`"))
            .with_help(format!(
                "give the loop at least one iteration, or put the links to `{name}` in a loop over the same range"
            )),
            BadParam { span, message, help } => Diagnostic::error("E0414", message, span, "parameter").with_help(help),
            PayloadMismatch { span, from, to } => Diagnostic::error("E0415", format!("link joins `{from}` to `{to}`"), span, "payload types differ")
                .with_help("both ends of a link carry the same type"),
            ChannelParam { span, what, value, range } => Diagnostic::error("E0416", format!("{what} {value} is out of range"), span, format!("must be {range}"))
                .with_help(format!("{what} must be {range}")),
            SystemCycle { span, path } => Diagnostic::error("E0417", format!("systems instantiate each other in a cycle: {}", path.join(" -> ")), span, "this instance closes the cycle")
                .with_help("a system cannot contain itself"),
            TooLarge { span, limit } => Diagnostic::error("E0418", format!("the design elaborates to more than {limit} instances and system loop iterations"), span, "the limit is passed here")
                .with_help("nested loops and systems multiply: use fewer instances or shorter `for` loops, or pass smaller parameters"),
            UnusedUnit { span, name } => Diagnostic::warning("W0401", format!("unit `{name}` is never instantiated"), span, "unused")
                .with_help("instantiate it in a system, or remove it"),
            SeveralTops { span, candidates } => Diagnostic::warning("W0402", format!("several systems could be the top: {}; each was checked", candidates.join(", ")), span, "one candidate")
                .with_help("choose one with --top NAME to elaborate a design"),
        }
    }
}

/// Clock errors (E05xx).
#[derive(Clone, Debug)]
pub enum ClockError {
    /// E0501
    NotPositive { span: Span },
    /// E0502
    NegativePhase { span: Span },
    /// E0503
    PhaseUnit { span: Span },
    /// E0504
    ArrayLength {
        span: Span,
        declared: i128,
        given: usize,
    },
    /// E0505
    Unrepresentable { span: Span },
}

impl IntoDiagnostic for ClockError {
    fn into_diagnostic(self) -> Diagnostic {
        use ClockError::*;
        match self {
            NotPositive { span } => Diagnostic::error("E0501", "clock frequency or period must be positive", span, "zero or negative")
                .with_help("give a positive frequency (`914 MHz`) or period (`1094 ps`)"),
            NegativePhase { span } => Diagnostic::error("E0502", "clock phase must not be negative", span, "negative phase")
                .with_help("a phase is a delay in [0, ...); add a period to it if needed"),
            PhaseUnit { span } => Diagnostic::error("E0503", "a phase is a time, not a frequency", span, "frequency unit")
                .with_help("write the phase in fs, ps, ns, us, ms or s"),
            ArrayLength { span, declared, given } => Diagnostic::error("E0504", format!("clock array declares {declared} elements but lists {given}"), span, "length mismatch")
                .with_help("list one clock per element"),
            Unrepresentable { span } => Diagnostic::error("E0505", "clock period or phase cannot be represented", span, "too large or too fine")
                .with_help("periods and phases must be exact rationals of picoseconds with numerator and denominator below 2^63"),
        }
    }
}

/// `"s"` unless `n` is 1, for messages that count.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
