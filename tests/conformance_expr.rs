//! Expression semantics against Icarus Verilog on random well-typed
//! programs.
//!
//! Each case is a generated design of several units, each with registers of
//! random widths (1 to 64) and signedness, a register array reached by
//! run-time indices, a struct register and a 64-bit xorshift stimulus
//! register. Every tick computes random expressions (wrapping `+ - *`,
//! RISC-V division and remainder with zero and overflowing divisors,
//! shifts by amounts below, at and far above the width, comparisons,
//! casts that truncate or extend, bitwise and logical operators, `if`
//! chains and `match`), writes registers (some twice: the last write wins)
//! and traces what it computed. The Verilog twin is produced from the same
//! syntax tree by the translator below, written from docs/language.md and
//! not from Chronon's code: every subexpression goes into a temporary of the
//! exact width and signedness of its Chronon type, so Verilog's
//! context-dependent sizing never applies, and division, remainder and
//! signed shifts are spelled out. The Chronon text is printed with the
//! fewest parentheses the precedence table of docs/language.md allows, so
//! the parser is checked against that table too.
//!
//! `CHRONON_EXPR_CASES=N` and `CHRONON_EXPR_SEED=S` run other or more
//! designs (a local soak); the default is a fixed seed set sized for CI.

#[allow(dead_code)]
#[path = "conformance/harness.rs"]
mod harness;

use std::fmt::Write as _;
use std::path::Path;

use chronon_compiler::run::{RunError, RunOptions, StopAt, run};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;
use chronon_runtime::Picos;
use harness::*;

/// A scalar Chronon type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Bool,
    U(u32),
    I(u32),
}

impl Ty {
    fn width(self) -> u32 {
        match self {
            Ty::Bool => 1,
            Ty::U(w) | Ty::I(w) => w,
        }
    }

    fn signed(self) -> bool {
        matches!(self, Ty::I(_))
    }

    fn mask(self) -> u64 {
        let w = self.width();
        if w == 64 { u64::MAX } else { (1 << w) - 1 }
    }

    /// The bits of the signed minimum (the sign bit alone).
    fn min_bits(self) -> u64 {
        1 << (self.width() - 1)
    }

    fn chr(self) -> String {
        match self {
            Ty::Bool => "bool".into(),
            Ty::U(w) => format!("u{w}"),
            Ty::I(w) => format!("i{w}"),
        }
    }

    /// A Verilog declaration of a variable of this type (unsigned bits, or
    /// `signed` so that comparison, division and `>>>` are signed).
    fn verilog(self, name: &str) -> String {
        match self {
            Ty::Bool => format!("reg {name};"),
            Ty::U(w) => format!("reg [{}:0] {name};", w - 1),
            Ty::I(w) => format!("reg signed [{}:0] {name};", w - 1),
        }
    }

    /// A Verilog constant of these bits, unsigned and of the exact width:
    /// assigned to a variable of the type it keeps its bits, and compared
    /// with one (`==`) it compares bits.
    fn vconst(self, bits: u64) -> String {
        format!("{}'h{:x}", self.width(), bits & self.mask())
    }
}

/// The seeded generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        splitmix(&mut self.0) % n
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    fn bits(&mut self) -> u64 {
        splitmix(&mut self.0)
    }

    /// A width, biased to the ends of the range and to byte boundaries.
    fn width(&mut self) -> u32 {
        const EDGES: [u32; 14] = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64];
        if self.one_in(2) {
            EDGES[self.below(EDGES.len() as u64) as usize]
        } else {
            1 + self.below(64) as u32
        }
    }

    fn int_ty(&mut self) -> Ty {
        let w = self.width();
        if self.one_in(2) { Ty::U(w) } else { Ty::I(w) }
    }

    /// Bits of a value of `ty` that is often a corner (0, 1, all ones,
    /// the signed minimum and maximum).
    fn value(&mut self, ty: Ty) -> u64 {
        let bits = match self.below(8) {
            0 => 0,
            1 => 1,
            2 => u64::MAX,
            3 => ty.min_bits(),
            4 => ty.min_bits().wrapping_sub(1),
            5 => self.below(8),
            _ => self.bits(),
        };
        bits & ty.mask()
    }
}

/// An expression, typed.
#[derive(Clone, Debug)]
enum E {
    /// A literal: its bits and whether it is written without a suffix
    /// (typed by its context).
    Lit {
        ty: Ty,
        bits: u64,
        bare: bool,
    },
    /// A local, a register or a struct field: its Chronon and Verilog names.
    Var {
        ty: Ty,
        chr: String,
        v: String,
    },
    /// An element of a register array at a run-time index (always in
    /// range: out-of-range indices fault, which `fault` tests elsewhere
    /// pin).
    Index {
        ty: Ty,
        chr: String,
        v: String,
        idx: Box<E>,
    },
    Un {
        op: &'static str,
        e: Box<E>,
        ty: Ty,
    },
    Bin {
        op: &'static str,
        l: Box<E>,
        r: Box<E>,
        ty: Ty,
    },
    Cast {
        e: Box<E>,
        ty: Ty,
    },
    /// Bits of an integer (docs/language.md, "Bits"): `e[lo]`, `e[i]`,
    /// `e[hi:lo]`, `e[p +: w]`, `e[p -: w]`; the result is `U(w)`.
    Bits {
        e: Box<E>,
        sel: Sel,
        ty: Ty,
    },
    /// `{a, b, ...}`, or with `times`, `{times{a}}`: unsigned, the widths
    /// summed.
    Concat {
        parts: Vec<E>,
        times: Option<u32>,
        ty: Ty,
    },
    /// A call of a generated function (its result type is `ty`).
    Call {
        name: String,
        args: Vec<E>,
        ty: Ty,
    },
    /// A struct or array register compared (`==`, `!=`) with a literal of
    /// its type, scalar by scalar: the register's Chronon name, the
    /// literal's opening and closing text, and per scalar its Verilog name,
    /// its field name (empty in an array) and the literal's expression.
    Agg {
        op: &'static str,
        reg: String,
        open: String,
        close: String,
        parts: Vec<(String, String, E)>,
    },
}

/// Which bits an [`E::Bits`] takes.
#[derive(Clone, Debug)]
enum Sel {
    /// One bit at a constant position.
    Bit(u32),
    /// One bit at a run-time position (kept in range).
    At(Box<E>),
    /// `[hi:lo]`.
    Range(u32, u32),
    /// `[p +: w]` and `[p -: w]` at a run-time position (kept in range).
    Up(Box<E>, u32),
    Down(Box<E>, u32),
}

impl E {
    fn ty(&self) -> Ty {
        match self {
            E::Bits { ty, .. } | E::Concat { ty, .. } => *ty,
            E::Lit { ty, .. }
            | E::Var { ty, .. }
            | E::Index { ty, .. }
            | E::Un { ty, .. }
            | E::Bin { ty, .. }
            | E::Cast { ty, .. } => *ty,
            E::Agg { .. } => Ty::Bool,
            E::Call { ty, .. } => *ty,
        }
    }

    /// Binding strength in docs/language.md's table (loosest 1).
    fn prec(&self) -> u32 {
        match self {
            E::Lit { .. }
            | E::Var { .. }
            | E::Index { .. }
            | E::Call { .. }
            | E::Bits { .. }
            | E::Concat { .. } => 12,
            E::Un { .. } => 11,
            E::Cast { .. } => 10,
            E::Bin { op, .. } | E::Agg { op, .. } => bin_prec(op),
        }
    }
}

fn bin_prec(op: &str) -> u32 {
    match op {
        "||" => 1,
        "&&" => 2,
        "==" | "!=" | "<" | "<=" | ">" | ">=" => 3,
        "|" => 4,
        "^" => 5,
        "&" => 6,
        "<<" | ">>" => 7,
        "+" | "-" => 8,
        "*" | "/" | "%" => 9,
        _ => unreachable!("operator {op}"),
    }
}

/// The Chronon text of a literal.
/// `style`: 0 decimal, 1 hexadecimal, 2 binary (small values), 3 decimal
/// with `_` separators; a negative value is a `-` and its magnitude.
fn chr_lit(ty: Ty, bits: u64, bare: bool, style: u64) -> String {
    let (negative, magnitude, suffix) = match ty {
        Ty::Bool => return if bits != 0 { "true" } else { "false" }.into(),
        Ty::U(w) => (false, bits, format!("u{w}")),
        Ty::I(w) => {
            let shift = 64 - w;
            let value = ((bits << shift) as i64) >> shift;
            (value < 0, value.unsigned_abs(), format!("i{w}"))
        }
    };
    let digits = match style {
        1 => format!("0x{magnitude:X}"),
        2 if magnitude < 1 << 16 => format!("0b{magnitude:b}"),
        3 => {
            let plain = magnitude.to_string();
            let mut out = String::new();
            for (k, ch) in plain.chars().enumerate() {
                if k > 0 && (plain.len() - k) % 3 == 0 {
                    out.push('_');
                }
                out.push(ch);
            }
            out
        }
        _ => magnitude.to_string(),
    };
    let sign = if negative { "-" } else { "" };
    if bare {
        format!("{sign}{digits}")
    } else {
        format!("{sign}{digits}{suffix}")
    }
}

/// The head of an `if` or `match`: in parentheses when it holds a
/// concatenation, which stands only where a struct literal may
/// (docs/language.md, "Bits").
fn head(text: String) -> String {
    if text.contains('{') {
        format!("({text})")
    } else {
        text
    }
}

/// Chronon text with the fewest parentheses the precedence table allows
/// (plus a few redundant ones, which must not matter).
fn chr(e: &E, rng: &mut Rng) -> String {
    let text = match e {
        E::Lit { ty, bits, bare } => chr_lit(*ty, *bits, *bare, rng.below(5)),
        E::Var { chr, .. } => chr.clone(),
        E::Index { chr: name, idx, .. } => format!("{name}[{}]", self::chr(idx, rng)),
        E::Bits { e: inner, sel, .. } => {
            let s = chr(inner, rng);
            // A literal is parenthesized: `-5i8[3]` is `-(5i8[3])`.
            let s = if inner.prec() < 12 || matches!(**inner, E::Lit { .. }) {
                format!("({s})")
            } else {
                s
            };
            match sel {
                Sel::Bit(i) => format!("{s}[{i}]"),
                Sel::At(i) => format!("{s}[{}]", chr(i, rng)),
                Sel::Range(hi, lo) => format!("{s}[{hi}:{lo}]"),
                Sel::Up(p, w) => format!("{s}[{} +: {w}]", chr(p, rng)),
                Sel::Down(p, w) => format!("{s}[{} -: {w}]", chr(p, rng)),
            }
        }
        E::Concat { parts, times, .. } => {
            let parts: Vec<String> = parts.iter().map(|p| chr(p, rng)).collect();
            match times {
                Some(n) => format!("{{{n}{{{}}}}}", parts.join(", ")),
                None => format!("{{{}}}", parts.join(", ")),
            }
        }
        E::Un { op, e: inner, .. } => {
            let s = chr(inner, rng);
            // `-5u8` would be the literal -5 (docs/language.md: a `-`
            // directly before a literal is part of it).
            if inner.prec() < 11 || matches!(**inner, E::Lit { .. }) {
                format!("{op}({s})")
            } else {
                format!("{op}{s}")
            }
        }
        E::Cast { e: inner, ty } => {
            let s = chr(inner, rng);
            if inner.prec() < 10 {
                format!("({s}) as {}", ty.chr())
            } else {
                format!("{s} as {}", ty.chr())
            }
        }
        E::Call { name, args, .. } => {
            let args: Vec<String> = args.iter().map(|a| chr(a, rng)).collect();
            format!("{name}({})", args.join(", "))
        }
        E::Agg {
            op,
            reg,
            open,
            close,
            parts,
        } => {
            let items: Vec<String> = parts
                .iter()
                .map(|(_, field, e)| {
                    let s = chr(e, rng);
                    if field.is_empty() {
                        s
                    } else {
                        format!("{field}: {s}")
                    }
                })
                .collect();
            format!("{reg} {op} {open}{}{close}", items.join(", "))
        }
        E::Bin { op, l, r, .. } => {
            let p = bin_prec(op);
            // Left-associative; comparisons do not chain at all.
            let lp = if p == 3 { l.prec() <= 3 } else { l.prec() < p };
            let ls = chr(l, rng);
            let rs = chr(r, rng);
            let ls = if lp { format!("({ls})") } else { ls };
            // `a & &b` and `a | |b` do not parse (`&&`, `||`): a reduction
            // after them is parenthesized.
            let reduction_after = matches!(*op, "&" | "|") && rs.starts_with(['&', '|']);
            let rs = if r.prec() <= p || reduction_after {
                format!("({rs})")
            } else {
                rs
            };
            format!("{ls} {op} {rs}")
        }
    };
    if e.prec() < 12 && rng.one_in(12) {
        format!("({text})")
    } else {
        text
    }
}

/// The Verilog translation of one unit: declarations and statements, with
/// names prefixed by the unit's.
struct Verilog {
    prefix: String,
    decls: Vec<String>,
    next: usize,
}

impl Verilog {
    fn temp(&mut self, ty: Ty) -> String {
        let name = format!("{}_t{}", self.prefix, self.next);
        self.next += 1;
        self.decls.push(ty.verilog(&name));
        name
    }

    /// Emits the statements that compute `e` into `out`; the name that
    /// holds its value.
    fn expr(&mut self, e: &E, out: &mut String) -> String {
        match e {
            E::Lit { ty, bits, .. } => {
                let t = self.temp(*ty);
                let _ = writeln!(out, "{t} = {};", ty.vconst(*bits));
                t
            }
            E::Var { v, .. } => v.clone(),
            E::Bits { e: inner, sel, ty } => {
                let b = self.expr(inner, out);
                let at = match sel {
                    Sel::Bit(i) => format!("[{i}]"),
                    Sel::At(i) => format!("[{}]", self.expr(i, out)),
                    Sel::Range(hi, lo) => format!("[{hi}:{lo}]"),
                    Sel::Up(p, w) => format!("[{} +: {w}]", self.expr(p, out)),
                    Sel::Down(p, w) => format!("[{} -: {w}]", self.expr(p, out)),
                };
                let t = self.temp(*ty);
                let _ = writeln!(out, "{t} = {b}{at};");
                t
            }
            E::Concat { parts, times, ty } => {
                let names: Vec<String> = parts.iter().map(|p| self.expr(p, out)).collect();
                let t = self.temp(*ty);
                let joined = names.join(", ");
                match times {
                    Some(n) => writeln!(out, "{t} = {{{n}{{{joined}}}}};"),
                    None => writeln!(out, "{t} = {{{joined}}};"),
                }
                .expect("writing to a String");
                t
            }
            E::Index { ty, v, idx, .. } => {
                let i = self.expr(idx, out);
                let t = self.temp(*ty);
                let _ = writeln!(out, "{t} = {v}[{i}];");
                t
            }
            E::Un { op, e: inner, ty } => {
                let a = self.expr(inner, out);
                let t = self.temp(*ty);
                let _ = writeln!(out, "{t} = {op}{a};");
                t
            }
            E::Cast { e: inner, ty } => {
                // Assignment truncates, or extends by the source's
                // signedness (a bool is an unsigned bit).
                let a = self.expr(inner, out);
                let t = self.temp(*ty);
                let _ = writeln!(out, "{t} = {a};");
                t
            }
            E::Call { name, args, ty } => {
                let names: Vec<String> = args.iter().map(|a| self.expr(a, out)).collect();
                let t = self.temp(*ty);
                let _ = writeln!(out, "{t} = {name}({});", names.join(", "));
                t
            }
            E::Agg { op, parts, .. } => {
                let mut terms = Vec::new();
                for (v, _, e) in parts {
                    let x = self.expr(e, out);
                    terms.push(format!("({v} == {x})"));
                }
                let t = self.temp(Ty::Bool);
                let all = terms.join(" && ");
                let neg = if *op == "!=" { "!" } else { "" };
                let _ = writeln!(out, "{t} = {neg}({all});");
                t
            }
            E::Bin { op, l, r, ty } => {
                let a = self.expr(l, out);
                let b = self.expr(r, out);
                let t = self.temp(*ty);
                let lt = l.ty();
                match *op {
                    // RISC-V: x / 0 is all ones, x % 0 is x, MIN / -1 is
                    // MIN with remainder 0 (Verilog gives x for the first
                    // two).
                    "/" | "%" => {
                        let zero = lt.vconst(0);
                        let ones = lt.vconst(u64::MAX);
                        let (by_zero, overflow) = if *op == "/" {
                            (ones.clone(), a.clone())
                        } else {
                            (a.clone(), zero.clone())
                        };
                        let _ = write!(out, "if ({b} == {zero}) {t} = {by_zero}; else ");
                        if lt.signed() {
                            let min = lt.vconst(lt.min_bits());
                            let _ = write!(
                                out,
                                "if ({a} == {min} && {b} == {ones}) {t} = {overflow}; else "
                            );
                        }
                        let _ = writeln!(out, "{t} = {a} {op} {b};");
                    }
                    // Logical on unsigned, arithmetic on signed; Verilog
                    // shifts by the width or more give 0 (or the sign).
                    ">>" if lt.signed() => {
                        let _ = writeln!(out, "{t} = {a} >>> {b};");
                    }
                    _ => {
                        let _ = writeln!(out, "{t} = {a} {op} {b};");
                    }
                }
                t
            }
        }
    }
}

/// A variable an expression may read: its type and its Chronon and Verilog
/// names.
#[derive(Clone, Debug)]
struct Var {
    ty: Ty,
    chr: String,
    v: String,
}

/// A register array of the unit: element type, names and length.
#[derive(Clone, Debug)]
struct Array {
    ty: Ty,
    chr: String,
    v: String,
    len: u64,
}

/// Generates one unit: its Chronon text and its Verilog twin side by side.
struct UnitGen<'a> {
    rng: &'a mut Rng,
    /// Readable variables (registers, struct fields, the stimulus, the
    /// locals declared so far).
    vars: Vec<Var>,
    /// Registers and struct fields (written with `<=`).
    regs: Vec<Var>,
    locals: Vec<Var>,
    array: Array,
    /// The struct's name and fields (names and Verilog names).
    fields: Vec<Var>,
    strukt: String,
    v: Verilog,
    traces: usize,
    /// Loops so far (each has its own variable).
    loops: usize,
    /// Variants of the unit's enum (`E<n>::V0`, ...), whose register is `e`.
    variants: u64,
    /// The functions it may call: name, parameter types, result type.
    funcs: Vec<Func>,
    /// Generating a function body: no registers, arrays or stimulus.
    in_fn: bool,
    /// The Verilog clock and cycle names, for `$display`.
    clock: String,
}

impl<'a> UnitGen<'a> {
    /// A generator for a function body or a constant: it reads `vars` and
    /// may call `funcs`, and has no registers, arrays, stimulus or ports.
    fn pure(rng: &'a mut Rng, prefix: &str, vars: Vec<Var>, funcs: Vec<Func>) -> Self {
        UnitGen {
            rng,
            vars,
            regs: Vec::new(),
            locals: Vec::new(),
            array: Array {
                ty: Ty::Bool,
                chr: String::new(),
                v: String::new(),
                len: 1,
            },
            fields: Vec::new(),
            strukt: String::new(),
            v: Verilog {
                prefix: prefix.to_string(),
                decls: Vec::new(),
                next: 0,
            },
            traces: 0,
            loops: 0,
            variants: 1,
            funcs,
            in_fn: true,
            clock: String::new(),
        }
    }

    fn var_of(&mut self, ty: Ty) -> Option<E> {
        let of: Vec<&Var> = self.vars.iter().filter(|v| v.ty == ty).collect();
        if of.is_empty() {
            return None;
        }
        let v = of[self.rng.below(of.len() as u64) as usize];
        Some(E::Var {
            ty,
            chr: v.chr.clone(),
            v: v.v.clone(),
        })
    }

    fn any_var(&mut self) -> E {
        if self.vars.is_empty() {
            // The first constant has nothing to read.
            let ty = self.rng.int_ty();
            return self.lit(ty, false);
        }
        let v = &self.vars[self.rng.below(self.vars.len() as u64) as usize];
        E::Var {
            ty: v.ty,
            chr: v.chr.clone(),
            v: v.v.clone(),
        }
    }

    fn lit(&mut self, ty: Ty, bare: bool) -> E {
        let bits = self.rng.value(ty);
        E::Lit { ty, bits, bare }
    }

    fn leaf(&mut self, ty: Ty, bare_ok: bool) -> E {
        let from = match self.rng.below(10) {
            0..=3 => {
                if let Some(e) = self.var_of(ty) {
                    return e;
                }
                self.any_var()
            }
            4 | 5 => {
                let bare = bare_ok && self.rng.one_in(2);
                return self.lit(ty, bare);
            }
            // Fresh stimulus: some bits of `x`, which changes every edge.
            6 | 7 => match self.vars.iter().find(|v| v.chr == "x").map(var_expr) {
                Some(x) => E::Bin {
                    op: ">>",
                    l: Box::new(x),
                    r: Box::new(E::Lit {
                        ty: Ty::U(32),
                        bits: self.rng.below(64),
                        bare: true,
                    }),
                    ty: Ty::U(64),
                },
                // In a function: parameters only.
                None => self.any_var(),
            },
            _ => self.any_var(),
        };
        if ty == Ty::Bool {
            let fty = from.ty();
            if fty == Ty::Bool {
                return from;
            }
            // A bool from an integer: `x as bool` is not allowed.
            let r = self.lit(fty, true);
            return E::Bin {
                op: if self.rng.one_in(2) { "!=" } else { "<" },
                l: Box::new(from),
                r: Box::new(r),
                ty: Ty::Bool,
            };
        }
        E::Cast {
            e: Box::new(from),
            ty,
        }
    }

    /// A random expression of type `ty`; `bare_ok`: the context types an
    /// unsuffixed literal.
    fn expr(&mut self, ty: Ty, depth: u32, bare_ok: bool) -> E {
        if depth == 0 || self.rng.one_in(5) {
            return self.leaf(ty, bare_ok);
        }
        if ty == Ty::Bool {
            return self.bool_expr(depth);
        }
        let d = depth - 1;
        match self.rng.below(13) {
            11 | 12 => {
                let e = self.bits_expr(d);
                E::Cast { e: Box::new(e), ty }
            }
            0..=3 => {
                const OPS: [&str; 8] = ["+", "-", "*", "/", "%", "&", "|", "^"];
                let op = OPS[self.rng.below(8) as usize];
                let l = self.expr(ty, d, false);
                let r = if (op == "/" || op == "%") && self.rng.one_in(2) {
                    self.divisor(ty)
                } else {
                    self.expr(ty, d, true)
                };
                E::Bin {
                    op,
                    l: Box::new(l),
                    r: Box::new(r),
                    ty,
                }
            }
            4 | 5 => {
                let op = if self.rng.one_in(2) { "<<" } else { ">>" };
                let l = self.expr(ty, d, false);
                let r = self.shift_amount(ty, d);
                E::Bin {
                    op,
                    l: Box::new(l),
                    r: Box::new(r),
                    ty,
                }
            }
            6 => {
                let e = self.expr(ty, d, false);
                // A minus before a literal, even parenthesized, is part of
                // it (`-(5u8)` is the literal -5, which no unsigned type
                // holds: docs/language.md, `a_minus_before_a_literal_is_part_of_it`).
                let folds = matches!(e, E::Lit { .. }) && !ty.signed();
                let op = if self.rng.one_in(2) && !folds {
                    "-"
                } else {
                    "~"
                };
                E::Un {
                    op,
                    e: Box::new(e),
                    ty,
                }
            }
            7 | 8 => {
                let from = if self.rng.one_in(6) {
                    Ty::Bool
                } else if self.rng.one_in(2) {
                    // Same width, other signedness: a reinterpretation.
                    match ty {
                        Ty::U(w) => Ty::I(w),
                        _ => Ty::U(ty.width()),
                    }
                } else {
                    self.rng.int_ty()
                };
                E::Cast {
                    e: Box::new(self.expr(from, d, false)),
                    ty,
                }
            }
            _ => {
                if !self.funcs.is_empty() && self.rng.one_in(2) {
                    self.call(ty, d)
                } else if self.array.ty == ty && !self.in_fn {
                    self.element(d)
                } else {
                    let l = self.expr(ty, d, false);
                    let r = self.expr(ty, d, true);
                    E::Bin {
                        op: "+",
                        l: Box::new(l),
                        r: Box::new(r),
                        ty,
                    }
                }
            }
        }
    }

    /// A run-time position below `n`: `(e % n)` of a `u8` expression.
    fn position(&mut self, n: u32, depth: u32) -> E {
        let e = self.expr(Ty::U(8), depth, false);
        E::Bin {
            op: "%",
            l: Box::new(e),
            r: Box::new(E::Lit {
                ty: Ty::U(8),
                bits: u64::from(n),
                bare: true,
            }),
            ty: Ty::U(8),
        }
    }

    /// A bit select, slice, concatenation, replication or reduction of
    /// random operands: an unsigned value of its own width.
    fn bits_expr(&mut self, d: u32) -> E {
        let from = self.rng.int_ty();
        let w = from.width();
        let base = Box::new(self.expr(from, d, false));
        let one = |e: Box<E>, sel| E::Bits {
            e,
            sel,
            ty: Ty::U(1),
        };
        match self.rng.below(8) {
            0 => one(base, Sel::Bit(self.rng.below(u64::from(w)) as u32)),
            1 => {
                let at = self.position(w, d);
                one(base, Sel::At(Box::new(at)))
            }
            2 => {
                let lo = self.rng.below(u64::from(w)) as u32;
                let hi = lo + self.rng.below(u64::from(w - lo)) as u32;
                E::Bits {
                    e: base,
                    sel: Sel::Range(hi, lo),
                    ty: Ty::U(hi - lo + 1),
                }
            }
            3 | 4 => {
                let k = 1 + self.rng.below(u64::from(w)) as u32;
                let at = self.position(w - k + 1, d);
                let sel = if self.rng.one_in(2) {
                    Sel::Up(Box::new(at), k)
                } else {
                    let top = E::Bin {
                        op: "+",
                        l: Box::new(at),
                        r: Box::new(E::Lit {
                            ty: Ty::U(8),
                            bits: u64::from(k - 1),
                            bare: true,
                        }),
                        ty: Ty::U(8),
                    };
                    Sel::Down(Box::new(top), k)
                };
                E::Bits {
                    e: base,
                    sel,
                    ty: Ty::U(k),
                }
            }
            5 | 6 => {
                let mut parts = vec![*base];
                let mut total = w;
                while self.rng.one_in(2) || parts.len() == 1 {
                    let t = self.rng.int_ty();
                    if total + t.width() > 64 {
                        break;
                    }
                    total += t.width();
                    parts.push(self.expr(t, d, false));
                }
                let times = (parts.len() == 1 || self.rng.one_in(3))
                    .then(|| 1 + self.rng.below(u64::from(64 / total)) as u32);
                let ty = Ty::U(total * times.unwrap_or(1));
                E::Concat { parts, times, ty }
            }
            _ => {
                let op = ["&", "|", "^"][self.rng.below(3) as usize];
                E::Un {
                    op,
                    e: base,
                    ty: Ty::U(1),
                }
            }
        }
    }

    fn bool_expr(&mut self, depth: u32) -> E {
        let d = depth - 1;
        if self.rng.one_in(10) && !self.in_fn {
            return self.aggregate_eq(d);
        }
        match self.rng.below(6) {
            0..=2 => {
                // Mostly a type some variable has, so that variables meet.
                let ty = if self.rng.one_in(3) {
                    self.rng.int_ty()
                } else {
                    self.any_var().ty()
                };
                // Every comparison, on `bool` too (`false < true`, as
                // Verilog compares one bit).
                const OPS: [&str; 6] = ["==", "!=", "<", "<=", ">", ">="];
                let op = OPS[self.rng.below(6) as usize];
                let l = self.expr(ty, d, false);
                let r = self.expr(ty, d, true);
                E::Bin {
                    op,
                    l: Box::new(l),
                    r: Box::new(r),
                    ty: Ty::Bool,
                }
            }
            3 | 4 => {
                const OPS: [&str; 5] = ["&&", "||", "&", "|", "^"];
                let op = OPS[self.rng.below(5) as usize];
                let l = self.expr(Ty::Bool, d, false);
                let r = self.expr(Ty::Bool, d, false);
                E::Bin {
                    op,
                    l: Box::new(l),
                    r: Box::new(r),
                    ty: Ty::Bool,
                }
            }
            _ => E::Un {
                op: "!",
                e: Box::new(self.expr(Ty::Bool, d, false)),
                ty: Ty::Bool,
            },
        }
    }

    /// A call of a random function, its result cast to `ty` (or compared
    /// with zero for a `bool`).
    fn call(&mut self, ty: Ty, depth: u32) -> E {
        let f = self.funcs[self.rng.below(self.funcs.len() as u64) as usize].clone();
        let args = f
            .params
            .iter()
            .map(|&p| self.expr(p, depth, true))
            .collect();
        let call = E::Call {
            name: f.name.clone(),
            args,
            ty: f.ret,
        };
        if f.ret == ty {
            call
        } else if ty == Ty::Bool {
            E::Bin {
                op: "!=",
                l: Box::new(call),
                r: Box::new(E::Lit {
                    ty: f.ret,
                    bits: 0,
                    bare: true,
                }),
                ty: Ty::Bool,
            }
        } else {
            E::Cast {
                e: Box::new(call),
                ty,
            }
        }
    }

    /// The struct or the array register compared with a literal of its
    /// type whose scalars are often the register's own (so that it is
    /// sometimes equal).
    fn aggregate_eq(&mut self, depth: u32) -> E {
        let op = if self.rng.one_in(2) { "==" } else { "!=" };
        let mut parts = Vec::new();
        if self.rng.one_in(2) {
            for f in self.fields.clone() {
                let e = if self.rng.one_in(2) {
                    var_expr(&f)
                } else {
                    self.expr(f.ty, depth, true)
                };
                parts.push((f.v.clone(), f.chr.trim_start_matches("st.").to_string(), e));
            }
            // Parenthesized: the comparison may head an `if`.
            E::Agg {
                op,
                reg: "st".into(),
                open: format!("({} {{ ", self.strukt),
                close: " })".into(),
                parts,
            }
        } else {
            let a = self.array.clone();
            for k in 0..a.len {
                let e = if self.rng.one_in(2) {
                    E::Index {
                        ty: a.ty,
                        chr: a.chr.clone(),
                        v: a.v.clone(),
                        idx: Box::new(E::Lit {
                            ty: Ty::U(32),
                            bits: k,
                            bare: true,
                        }),
                    }
                } else {
                    self.expr(a.ty, depth, true)
                };
                parts.push((format!("{}[{k}]", a.v), String::new(), e));
            }
            E::Agg {
                op,
                reg: a.chr.clone(),
                open: "[".into(),
                close: "]".into(),
                parts,
            }
        }
    }

    /// A divisor that is often zero, one, -1 (all ones) or the minimum.
    fn divisor(&mut self, ty: Ty) -> E {
        let bits = match self.rng.below(5) {
            0 => 0,
            1 => 1,
            2 => u64::MAX,
            3 => ty.min_bits(),
            _ => 2,
        } & ty.mask();
        if self.rng.one_in(2) {
            let bare = self.rng.one_in(2);
            return E::Lit { ty, bits, bare };
        }
        // A run-time divisor that is zero or -1 half the time: a narrow
        // variable cast up (sign-extended when signed).
        let narrow = if ty.signed() { Ty::I(1) } else { Ty::U(1) };
        let from = self.any_var();
        let one_bit = E::Cast {
            e: Box::new(from),
            ty: narrow,
        };
        E::Cast {
            e: Box::new(one_bit),
            ty,
        }
    }

    /// A shift amount: an unsigned value of any width, often near or past
    /// the width of the shifted type, sometimes huge.
    fn shift_amount(&mut self, ty: Ty, depth: u32) -> E {
        let w = u64::from(ty.width());
        if self.rng.one_in(3) {
            // Mostly in range, some at or past the width.
            let amounts = [
                0,
                1,
                self.rng.below(w),
                self.rng.below(w),
                w - 1,
                w,
                w + 1,
                63,
                64,
                65,
                1000,
                u64::from(u32::MAX),
            ];
            let bits = amounts[self.rng.below(amounts.len() as u64) as usize];
            // A bare amount is a u32.
            let (aty, bare) = if self.rng.one_in(2) {
                (Ty::U(32), true)
            } else {
                let need = 64 - bits.leading_zeros().min(63);
                let aw = need.max(1) + self.rng.below(u64::from(65 - need.max(1))) as u32;
                (Ty::U(aw.min(64)), false)
            };
            return E::Lit {
                ty: aty,
                bits,
                bare,
            };
        }
        let aw = if self.rng.one_in(2) {
            1 + self.rng.below(7) as u32
        } else {
            self.rng.width()
        };
        self.expr(Ty::U(aw), depth, false)
    }

    /// An in-range run-time index into the array.
    fn index(&mut self, depth: u32) -> E {
        let len = self.array.len;
        if self.rng.one_in(6) {
            return E::Lit {
                ty: Ty::U(32),
                bits: self.rng.below(len),
                bare: true,
            };
        }
        let ity = Ty::U(self.rng.width());
        let e = self.expr(ity, depth, false);
        let fits = |n: u64| n <= ity.mask();
        if len.is_power_of_two() && fits(len - 1) && self.rng.one_in(2) {
            with_lit("&", e, len - 1, ity)
        } else if fits(len) {
            with_lit("%", e, len, ity)
        } else {
            E::Bin {
                op: "%",
                l: Box::new(E::Cast {
                    e: Box::new(e),
                    ty: Ty::U(32),
                }),
                r: Box::new(E::Lit {
                    ty: Ty::U(32),
                    bits: len,
                    bare: true,
                }),
                ty: Ty::U(32),
            }
        }
    }

    fn element(&mut self, depth: u32) -> E {
        let idx = self.index(depth);
        E::Index {
            ty: self.array.ty,
            chr: self.array.chr.clone(),
            v: self.array.v.clone(),
            idx: Box::new(idx),
        }
    }

    /// Both texts of an expression: the Chronon text, and the Verilog name
    /// holding its value (its statements appended to `v`).
    fn both(&mut self, e: &E, v: &mut String) -> (String, String) {
        let c = chr(e, self.rng);
        let name = self.v.expr(e, v);
        (c, name)
    }

    /// `count` statements at nesting `depth` (0: the tick's top level,
    /// where `let`s go).
    fn block(&mut self, count: usize, depth: u32, c: &mut String, v: &mut String) {
        for _ in 0..count {
            let pick = self.rng.below(if depth < 2 { 13 } else { 9 });
            match pick {
                0 | 1 if depth == 0 => self.let_stmt(c, v),
                0 | 1 if !self.locals.is_empty() => {
                    let l = self.locals[self.rng.below(self.locals.len() as u64) as usize].clone();
                    let e = self.expr(l.ty, 3, true);
                    let (ec, ev) = self.both(&e, v);
                    let _ = writeln!(c, "{} = {ec};", l.chr);
                    let _ = writeln!(v, "{} = {ev};", l.v);
                }
                0..=4 => self.write(c, v),
                5 | 6 => self.trace(c, v),
                7 | 8 => self.write_element(c, v),
                9 | 10 => self.if_stmt(depth, c, v),
                11 => self.match_stmt(depth, c, v),
                _ => self.for_stmt(depth, c, v),
            }
        }
    }

    /// A `for` loop over a constant range of up to four iterations (maybe
    /// empty) whose body may read its `u32` variable: unrolled by Chronon,
    /// a `for` with non-blocking writes in Verilog (the last write of an
    /// element still wins).
    fn for_stmt(&mut self, depth: u32, c: &mut String, v: &mut String) {
        let from = self.rng.below(3);
        let to = from + self.rng.below(5);
        let n = self.loops;
        self.loops += 1;
        let var = Var {
            ty: Ty::U(32),
            chr: format!("i{n}"),
            v: format!("{}_i{n}", self.v.prefix),
        };
        self.v.decls.push(Ty::U(32).verilog(&var.v));
        let _ = writeln!(c, "for {} in {from}..{to} {{", var.chr);
        let _ = writeln!(
            v,
            "for ({i} = {from}; {i} < {to}; {i} = {i} + 1) begin",
            i = var.v
        );
        self.vars.push(var);
        let count = 1 + self.rng.below(3) as usize;
        self.block(count, depth + 1, c, v);
        self.vars.pop();
        c.push_str("}\n");
        v.push_str("end\n");
    }

    /// Writes and retains of the stage register, each pipe at most once on
    /// every path: per pipe a write, a retain, a choice between them or
    /// nothing; or one write to a run-time pipe.
    fn stage_ops(&mut self, ty: Ty, pipes: u64, c: &mut String, v: &mut String) {
        let p = &self.v.prefix.clone();
        if self.rng.one_in(4) {
            let cond = self.expr(Ty::Bool, 2, false);
            let (cc, cv) = self.both(&cond, v);
            let pty = Ty::U(self.rng.width());
            let raw = self.expr(pty, 2, false);
            let pipe = if pipes <= pty.mask() {
                with_lit("%", raw, pipes, pty)
            } else {
                raw
            };
            let (pc, pv) = self.both(&pipe, v);
            let e = self.expr(ty, 2, true);
            let (ec, ev) = self.both(&e, v);
            let _ = writeln!(c, "if {} {{\ns.write({pc}, {ec});\n}}", head(cc));
            let _ = writeln!(
                v,
                "if ({cv}) begin {p}_sv[{pv}] <= 1'b1; {p}_sd[{pv}] <= {ev}; end"
            );
            return;
        }
        for k in 0..pipes {
            let write = |g: &mut Self, c: &mut String, v: &mut String| {
                let e = g.expr(ty, 3, true);
                let (ec, ev) = g.both(&e, v);
                let _ = writeln!(c, "s.write({k}, {ec});");
                let _ = writeln!(v, "{p}_sv[{k}] <= 1'b1; {p}_sd[{k}] <= {ev};");
            };
            let retain = |c: &mut String, v: &mut String| {
                let _ = writeln!(c, "s.retain({k});");
                let _ = writeln!(v, "{p}_sv[{k}] <= {p}_sv[{k}];");
            };
            match self.rng.below(5) {
                0 => write(self, c, v),
                1 => retain(c, v),
                2 => {}
                _ => {
                    let cond = self.expr(Ty::Bool, 2, false);
                    let (cc, cv) = self.both(&cond, v);
                    let _ = writeln!(c, "if {} {{", head(cc));
                    let _ = writeln!(v, "if ({cv}) begin");
                    write(self, c, v);
                    if self.rng.one_in(2) {
                        c.push_str("} else {\n");
                        v.push_str("end else begin\n");
                        retain(c, v);
                    }
                    c.push_str("}\n");
                    v.push_str("end\n");
                }
            }
        }
    }

    fn let_stmt(&mut self, c: &mut String, v: &mut String) {
        let ty = if self.rng.one_in(5) {
            Ty::Bool
        } else if self.rng.one_in(2) {
            self.any_var().ty()
        } else {
            self.rng.int_ty()
        };
        let e = self.expr(ty, 3, true);
        let bare = matches!(e, E::Lit { bare: true, .. });
        let (ec, ev) = self.both(&e, v);
        let n = self.locals.len();
        let local = Var {
            ty,
            chr: format!("l{n}"),
            v: format!("{}_l{n}", self.v.prefix),
        };
        if bare || self.rng.one_in(2) {
            let _ = writeln!(c, "let {}: {} = {ec};", local.chr, ty.chr());
        } else {
            // The type inferred from the initializer.
            let _ = writeln!(c, "let {} = {ec};", local.chr);
        }
        let _ = writeln!(v, "{} = {ev};", local.v);
        self.v.decls.push(ty.verilog(&local.v));
        self.locals.push(local.clone());
        self.vars.push(local);
    }

    fn write(&mut self, c: &mut String, v: &mut String) {
        if self.rng.one_in(7) {
            let k = self.rng.below(self.variants);
            let p = &self.v.prefix;
            let _ = writeln!(c, "e <= E{}::V{k};", &p[1..]);
            let _ = writeln!(v, "{p}_e <= 8'd{k};");
            return;
        }
        if self.rng.one_in(6) {
            // The whole struct (its fields may also be written one by one,
            // before or after: per field, the last write wins).
            let fields = self.fields.clone();
            let mut parts = Vec::new();
            let mut writes = Vec::new();
            for f in &fields {
                let e = self.expr(f.ty, 2, true);
                let (ec, ev) = self.both(&e, v);
                let name = f.chr.trim_start_matches("st.");
                parts.push(format!("{name}: {ec}"));
                writes.push(format!("{} <= {ev};", f.v));
            }
            let _ = writeln!(c, "st <= {} {{ {} }};", self.strukt, parts.join(", "));
            let _ = writeln!(v, "{}", writes.join(" "));
            return;
        }
        let r = self.regs[self.rng.below(self.regs.len() as u64) as usize].clone();
        if r.ty != Ty::Bool && self.rng.one_in(3) {
            // Some bits of the register: the other bits keep their next
            // value, and later writes win bit by bit (Verilog's
            // non-blocking part selects).
            let w = r.ty.width();
            let k = 1 + self.rng.below(u64::from(w)) as u32;
            let (sel_c, sel_v) = match self.rng.below(3) {
                0 => {
                    let lo = self.rng.below(u64::from(w - k + 1)) as u32;
                    let hi = lo + k - 1;
                    (format!("[{hi}:{lo}]"), format!("[{hi}:{lo}]"))
                }
                n => {
                    let at = self.position(w - k + 1, 2);
                    let (pc, pv) = self.both(&at, v);
                    if n == 1 {
                        (format!("[{pc} +: {k}]"), format!("[{pv} +: {k}]"))
                    } else {
                        let top = format!("({pc}) + {}", k - 1);
                        let tv = self.v.temp(Ty::U(8));
                        let _ = writeln!(v, "{tv} = {pv} + {};", k - 1);
                        (format!("[{top} -: {k}]"), format!("[{tv} -: {k}]"))
                    }
                }
            };
            let e = self.expr(Ty::U(k), 3, true);
            let (ec, ev) = self.both(&e, v);
            let _ = writeln!(c, "{}{sel_c} <= {ec};", r.chr);
            let _ = writeln!(v, "{}{sel_v} <= {ev};", r.v);
            return;
        }
        let e = self.expr(r.ty, 3, true);
        let (ec, ev) = self.both(&e, v);
        let _ = writeln!(c, "{} <= {ec};", r.chr);
        let _ = writeln!(v, "{} <= {ev};", r.v);
    }

    fn write_element(&mut self, c: &mut String, v: &mut String) {
        let a = self.array.clone();
        if self.rng.one_in(5) {
            let mut parts = Vec::new();
            let mut writes = Vec::new();
            for k in 0..a.len {
                let e = self.expr(a.ty, 1, true);
                let (ec, ev) = self.both(&e, v);
                parts.push(ec);
                writes.push(format!("{}[{k}] <= {ev};", a.v));
            }
            let _ = writeln!(c, "{} <= [{}];", a.chr, parts.join(", "));
            let _ = writeln!(v, "{}", writes.join(" "));
            return;
        }
        let idx = self.index(2);
        let (ic, iv) = self.both(&idx, v);
        let e = self.expr(a.ty, 3, true);
        let (ec, ev) = self.both(&e, v);
        let _ = writeln!(c, "{}[{ic}] <= {ec};", a.chr);
        let _ = writeln!(v, "{}[{iv}] <= {ev};", a.v);
    }

    /// A trace of up to eight values; `args` of (name, expression).
    fn emit_trace(&mut self, name: &str, args: &[(String, E)], c: &mut String, v: &mut String) {
        let mut cs = Vec::new();
        let mut fmt = Vec::new();
        let mut vs = Vec::new();
        for (k, e) in args {
            let (ec, ev) = self.both(e, v);
            cs.push(format!("{k} = {ec}"));
            fmt.push(format!("{k}=%0d"));
            vs.push(ev);
        }
        let _ = writeln!(c, "trace(\"{name}\", {});", cs.join(", "));
        let prefix = &self.v.prefix;
        let _ = writeln!(
            v,
            "if ({prefix}_now <= limit) $display(\"{clk} %0d %0dps T top.{prefix} {name} {}\", cyc_{clk}, {prefix}_now, {});",
            fmt.join(" "),
            vs.join(", "),
            clk = self.clock,
        );
    }

    fn trace(&mut self, c: &mut String, v: &mut String) {
        let n = 1 + self.rng.below(8);
        let args: Vec<(String, E)> = (0..n)
            .map(|k| {
                let ty = if self.rng.one_in(2) {
                    self.any_var().ty()
                } else {
                    self.rng.int_ty()
                };
                (format!("k{k}"), self.expr(ty, 3, false))
            })
            .collect();
        let name = format!("t{}", self.traces);
        self.traces += 1;
        self.emit_trace(&name, &args, c, v);
    }

    fn if_stmt(&mut self, depth: u32, c: &mut String, v: &mut String) {
        let arms = 1 + self.rng.below(3);
        let mut closes = 0;
        for arm in 0..arms {
            let cond = self.expr(Ty::Bool, 3, false);
            let (cc, cv) = self.both(&cond, v);
            let head = if arm == 0 { "if" } else { " else if" };
            // A struct literal never heads an `if`, but a concatenation
            // may: `head` parenthesizes it.
            let _ = writeln!(c, "{head} {} {{", self::head(cc));
            let _ = writeln!(v, "if ({cv}) begin");
            let n = 1 + self.rng.below(3) as usize;
            self.block(n, depth + 1, c, v);
            c.push('}');
            v.push_str("end else begin\n");
            closes += 1;
        }
        if self.rng.one_in(2) {
            c.push_str(" else {\n");
            let n = 1 + self.rng.below(3) as usize;
            self.block(n, depth + 1, c, v);
            c.push('}');
        }
        c.push('\n');
        for _ in 0..closes {
            v.push_str("end\n");
        }
    }

    fn match_stmt(&mut self, depth: u32, c: &mut String, v: &mut String) {
        let ty = match self.rng.below(4) {
            0 => Ty::Bool,
            1 => self.rng.int_ty(),
            _ => {
                let w = 1 + self.rng.below(4) as u32;
                if self.rng.one_in(2) {
                    Ty::U(w)
                } else {
                    Ty::I(w)
                }
            }
        };
        // On the enum register a quarter of the time.
        let on_enum = self.rng.one_in(4);
        let (ec, t) = if on_enum {
            ("e".to_string(), format!("{}_e", self.v.prefix))
        } else {
            let e = self.expr(ty, 3, false);
            let (ec, ev) = self.both(&e, v);
            let t = self.v.temp(ty);
            let _ = writeln!(v, "{t} = {ev};");
            (ec, t)
        };
        // Distinct patterns: the whole range of a narrow type, corners of
        // a wide one, the enum's variants.
        let mut values: Vec<u64> = Vec::new();
        for _ in 0..6 {
            let bits = if on_enum {
                self.rng.below(self.variants)
            } else if ty.width() <= 4 {
                self.rng.below(ty.mask() + 1)
            } else {
                self.rng.value(ty)
            };
            // Now and then a pattern again: a later arm that never runs.
            if !values.contains(&bits) || self.rng.one_in(6) {
                values.push(bits);
            }
        }
        let ty = if on_enum { Ty::U(8) } else { ty };
        let enum_name = format!("E{}", &self.v.prefix[1..]);
        let _ = writeln!(c, "match {} {{", head(ec));
        let mut first = true;
        let mut rest = values.as_slice();
        // Sometimes `_` comes before other arms: it still runs only when no
        // other arm matches (docs/language.md, as Verilog's `default`), so
        // in Verilog its code ends the `if` chain wherever it stands.
        let early_default = self.rng.one_in(6);
        let mut default = None;
        while !rest.is_empty() && !self.rng.one_in(4) {
            if early_default && !first && default.is_none() {
                let mut dv = String::new();
                c.push_str("_ => {\n");
                let n = 1 + self.rng.below(2) as usize;
                self.block(n, depth + 1, c, &mut dv);
                c.push_str("}\n");
                default = Some(dv);
            }
            let take = (1 + self.rng.below(2) as usize).min(rest.len());
            let (pats, tail) = rest.split_at(take);
            rest = tail;
            let pc: Vec<String> = pats
                .iter()
                .map(|&b| {
                    if on_enum {
                        format!("{enum_name}::V{b}")
                    } else {
                        chr_lit(ty, b, true, self.rng.below(5))
                    }
                })
                .collect();
            let pv: Vec<String> = pats
                .iter()
                .map(|&b| format!("{t} == {}", ty.vconst(b)))
                .collect();
            let _ = writeln!(c, "{} => {{", pc.join(" | "));
            let _ = writeln!(
                v,
                "{}if ({}) begin",
                if first { "" } else { "else " },
                pv.join(" || ")
            );
            first = false;
            let n = 1 + self.rng.below(2) as usize;
            self.block(n, depth + 1, c, v);
            c.push_str("}\n");
            v.push_str("end\n");
        }
        if let Some(dv) = default {
            v.push_str("else begin\n");
            v.push_str(&dv);
            v.push_str("end\n");
        } else if self.rng.one_in(2) || first {
            c.push_str("_ => {\n");
            v.push_str(if first { "begin\n" } else { "else begin\n" });
            let n = 1 + self.rng.below(2) as usize;
            self.block(n, depth + 1, c, v);
            c.push_str("}\n");
            v.push_str("end\n");
        }
        c.push_str("}\n");
    }
}

/// A generated pure function.
#[derive(Clone, Debug)]
struct Func {
    name: String,
    params: Vec<Ty>,
    ret: Ty,
}

/// `count` random functions (each may call the ones before it): their
/// Chronon text, their Verilog text and their signatures.
fn functions(rng: &mut Rng, count: usize) -> (String, String, Vec<Func>) {
    let (mut chr, mut verilog, mut funcs) = (String::new(), String::new(), Vec::new());
    for k in 0..count {
        let name = format!("g{k}");
        let params: Vec<Ty> = (0..1 + rng.below(3))
            .map(|_| {
                if rng.one_in(6) {
                    Ty::Bool
                } else {
                    rng.int_ty()
                }
            })
            .collect();
        let ret = rng.int_ty();
        let vars: Vec<Var> = params
            .iter()
            .enumerate()
            .map(|(n, &ty)| Var {
                ty,
                chr: format!("p{n}"),
                v: format!("{name}_p{n}"),
            })
            .collect();
        let mut g = UnitGen::pure(&mut *rng, &name, vars.clone(), funcs.clone());
        let (mut body, mut vbody) = (String::new(), String::new());
        for _ in 0..g.rng.below(3) {
            g.let_stmt(&mut body, &mut vbody);
        }
        let e = g.expr(ret, 3, true);
        let (ec, ev) = g.both(&e, &mut vbody);
        let signature: Vec<String> = vars
            .iter()
            .map(|p| format!("{}: {}", p.chr, p.ty.chr()))
            .collect();
        let _ = writeln!(
            chr,
            "fn {name}({}) -> {} {{",
            signature.join(", "),
            ret.chr()
        );
        for line in body.lines() {
            let _ = writeln!(chr, "    {line}");
        }
        let _ = writeln!(chr, "    return {ec};\n}}");
        // Verilog: a function of the result's type, inputs of the
        // parameters' types, its temporaries as function variables.
        let inputs: Vec<String> = vars
            .iter()
            .map(|p| {
                p.ty.verilog(&p.v)
                    .replacen("reg", "input", 1)
                    .replace(';', "")
            })
            .collect();
        let head = ret
            .verilog(&name)
            .replacen("reg", "function", 1)
            .replace(';', "");
        let _ = writeln!(verilog, "    {head}({});", inputs.join(", "));
        for d in &g.v.decls {
            let _ = writeln!(verilog, "        {d}");
        }
        verilog.push_str("        begin\n");
        for line in vbody.lines() {
            let _ = writeln!(verilog, "            {line}");
        }
        let _ = writeln!(
            verilog,
            "            {name} = {ev};\n        end\n    endfunction"
        );
        funcs.push(Func { name, params, ret });
    }
    (chr, verilog, funcs)
}

/// `count` random constants, each from literals and the constants before
/// it (evaluated by the compiler, not the engines): their Chronon items,
/// the Verilog declarations (module variables) and the statements that set
/// them before the first edge, and the variables units read.
fn constants(rng: &mut Rng, count: usize) -> (String, String, String, Vec<Var>) {
    let mut g = UnitGen::pure(&mut *rng, "k", Vec::new(), Vec::new());
    let (mut chr, mut body) = (String::new(), String::new());
    for k in 0..count {
        let ty = if g.rng.one_in(6) {
            Ty::Bool
        } else {
            g.rng.int_ty()
        };
        let e = g.expr(ty, 3, true);
        let (ec, ev) = g.both(&e, &mut body);
        let var = Var {
            ty,
            chr: format!("K{k}"),
            v: format!("K{k}"),
        };
        let _ = writeln!(chr, "const {}: {} = {ec};", var.chr, ty.chr());
        let _ = writeln!(body, "{} = {ev};", var.v);
        g.v.decls.push(ty.verilog(&var.v));
        g.vars.push(var);
    }
    let decls: String = g.v.decls.iter().map(|d| format!("    {d}\n")).collect();
    (chr, decls, body, g.vars)
}

/// One generated design: the Chronon text, the Verilog twin and the time
/// limit (ps).
struct Design {
    chr: String,
    verilog: String,
    limit: u64,
}

/// Units per design and edges of the slower clock per run.
const UNITS: usize = 6;
const EDGES: u64 = 120;

/// A design of [`UNITS`] random units over two clocks with random periods
/// and phases.
fn design(seed: u64) -> Design {
    let mut rng = Rng(seed);
    let clocks: Vec<(u64, u64)> = (0..2)
        .map(|_| {
            let p = 500 + rng.below(1500);
            (p, rng.below(p))
        })
        .collect();
    let limit = EDGES * clocks.iter().map(|c| c.0).max().unwrap_or(1000);
    let mut chr = String::new();
    let mut decls = String::new();
    let mut always = String::new();
    let mut init = String::new();
    let _ = writeln!(
        chr,
        "// Generated by tests/conformance_expr.rs, seed {seed:#x}."
    );
    for (k, (p, ph)) in clocks.iter().enumerate() {
        let _ = writeln!(chr, "clock c{k} = {p} ps phase {ph} ps;");
    }
    chr.push_str(
        "fn xs(x: u64) -> u64 {\n    let y: u64 = x ^ (x << 13);\n    y = y ^ (y >> 7);\n    return y ^ (y << 17);\n}\n",
    );
    let (fn_chr, fn_verilog, funcs) = functions(&mut rng, 3);
    chr.push_str(&fn_chr);
    let (const_chr, const_decls, const_verilog, consts) = constants(&mut rng, 4);
    chr.push_str(&const_chr);
    let mut system = String::from("system Top {\n");
    for u in 0..UNITS {
        let prefix = format!("u{u}");
        let clock = format!("c{}", u % 2);
        let stim = rng.bits() | 1;
        let mut regs = Vec::new();
        let mut reg_decls = String::new();
        for r in 0..3 + rng.below(5) {
            let ty = if rng.one_in(6) {
                Ty::Bool
            } else {
                rng.int_ty()
            };
            let bits = rng.value(ty);
            let var = Var {
                ty,
                chr: format!("r{r}"),
                v: format!("{prefix}_r{r}"),
            };
            if bits == 0 && rng.one_in(2) {
                let _ = writeln!(reg_decls, "    reg {}: {};", var.chr, ty.chr());
            } else {
                let _ = writeln!(
                    reg_decls,
                    "    reg {}: {} = {};",
                    var.chr,
                    ty.chr(),
                    chr_lit(ty, bits, rng.one_in(2), rng.below(5))
                );
            }
            let _ = writeln!(init, "{} = {};", var.v, ty.vconst(bits));
            regs.push(var);
        }
        let aty = rng.int_ty();
        let len = 1 + rng.below(8);
        let array = Array {
            ty: aty,
            chr: "a".into(),
            v: format!("{prefix}_a"),
            len,
        };
        // An enum register, read as integers of any width (`e as i2`
        // truncates the variant's index) and compared with variants.
        let variants = 2 + rng.below(4);
        let einit = rng.below(variants);
        let _ = writeln!(
            chr,
            "enum E{u} {{ {} }}",
            (0..variants)
                .map(|k| format!("V{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        // In Verilog each read is a variable of its own type, set from the
        // register at the start of the tick (so operands keep their exact
        // width and signedness).
        let mut enum_reads = Vec::new();
        let mut enum_setup = String::new();
        for n in 0..2 {
            let ty = rng.int_ty();
            let var = Var {
                ty,
                chr: format!("(e as {})", ty.chr()),
                v: format!("{prefix}_ev{n}"),
            };
            let _ = writeln!(enum_setup, "{} = {prefix}_e;", var.v);
            enum_reads.push(var);
            let k = rng.below(variants);
            let (op, vop) = if rng.one_in(2) {
                ("==", "==")
            } else {
                ("!=", "!=")
            };
            let var = Var {
                ty: Ty::Bool,
                chr: format!("(e {op} E{u}::V{k})"),
                v: format!("{prefix}_eb{n}"),
            };
            let _ = writeln!(enum_setup, "{} = ({prefix}_e {vop} 8'd{k});", var.v);
            enum_reads.push(var);
        }
        let strukt = format!("S{u}");
        let fields: Vec<Var> = (0..1 + rng.below(3))
            .map(|f| {
                let ty = if rng.one_in(5) {
                    Ty::Bool
                } else {
                    rng.int_ty()
                };
                Var {
                    ty,
                    chr: format!("st.f{f}"),
                    v: format!("{prefix}_st_f{f}"),
                }
            })
            .collect();
        let field_decls: Vec<String> = fields
            .iter()
            .map(|f| format!("{}: {}", f.chr.trim_start_matches("st."), f.ty.chr()))
            .collect();
        let _ = writeln!(chr, "struct {strukt} {{ {} }}", field_decls.join(", "));
        let stim_var = Var {
            ty: Ty::U(64),
            chr: "x".into(),
            v: format!("{prefix}_x"),
        };
        // A stage register: its valid bits and values are readable like
        // registers (`read` of an invalid pipe too: it gives the value last
        // written, docs/language.md).
        let sty = rng.int_ty();
        let pipes = 1 + rng.below(4);
        let mut stage_reads = Vec::new();
        for k in 0..pipes {
            stage_reads.push(Var {
                ty: Ty::Bool,
                chr: format!("s.valid({k})"),
                v: format!("{prefix}_sv[{k}]"),
            });
            stage_reads.push(Var {
                ty: sty,
                chr: format!("s.read({k})"),
                v: format!("{prefix}_sd[{k}]"),
            });
        }
        let mut vars = regs.clone();
        vars.extend(consts.iter().cloned());
        vars.extend(fields.iter().cloned());
        vars.extend(stage_reads.iter().cloned());
        vars.extend(enum_reads.iter().cloned());
        vars.push(stim_var.clone());
        let mut writable = regs.clone();
        writable.extend(fields.iter().cloned());
        let mut g = UnitGen {
            rng: &mut rng,
            vars,
            regs: writable,
            locals: Vec::new(),
            array: array.clone(),
            fields: fields.clone(),
            strukt: strukt.clone(),
            v: Verilog {
                prefix: prefix.clone(),
                decls: Vec::new(),
                next: 0,
            },
            traces: 0,
            loops: 0,
            variants,
            funcs: funcs.clone(),
            in_fn: false,
            clock: clock.clone(),
        };
        let mut body = String::new();
        let mut vbody = String::new();
        let lets = 2 + g.rng.below(4) as usize;
        for _ in 0..lets {
            g.let_stmt(&mut body, &mut vbody);
        }
        let n = 6 + g.rng.below(8) as usize;
        g.block(n, 0, &mut body, &mut vbody);
        g.stage_ops(sty, pipes, &mut body, &mut vbody);
        // Most registers get a next value on every edge (after the random
        // statements: this write wins over theirs).
        for r in regs.iter().chain(&fields) {
            if !g.rng.one_in(4) {
                let e = g.expr(r.ty, 3, true);
                let (ec, ev) = g.both(&e, &mut vbody);
                let _ = writeln!(body, "{} <= {ec};", r.chr);
                let _ = writeln!(vbody, "{} <= {ev};", r.v);
            }
        }
        // The whole state at the end of every tick, eight values a record.
        let mut state: Vec<(String, E)> = Vec::new();
        for r in regs.iter().chain(&fields) {
            state.push((r.chr.replace("st.", "s_"), var_expr(r)));
        }
        state.push((
            "en".into(),
            E::Var {
                ty: Ty::U(8),
                chr: "e as u8".into(),
                v: format!("{prefix}_e"),
            },
        ));
        for (k, r) in stage_reads.iter().enumerate() {
            let name = if k % 2 == 0 { "sv" } else { "sd" };
            state.push((format!("{name}{}", k / 2), var_expr(r)));
        }
        for k in 0..len {
            state.push((
                format!("a{k}"),
                E::Index {
                    ty: aty,
                    chr: "a".into(),
                    v: array.v.clone(),
                    idx: Box::new(E::Lit {
                        ty: Ty::U(32),
                        bits: k,
                        bare: true,
                    }),
                },
            ));
        }
        for (n, chunk) in state.chunks(8).enumerate() {
            g.emit_trace(&format!("state{n}"), chunk, &mut body, &mut vbody);
        }
        let decls_v = std::mem::take(&mut g.v.decls);
        let _ = writeln!(chr, "unit U{u} {{");
        let _ = writeln!(chr, "    reg x: u64 = {stim:#x};");
        chr.push_str(&reg_decls);
        // Aggregate initial values: literals half the time, else zero.
        let a_init: Vec<u64> = (0..len).map(|_| rng.value(aty)).collect();
        let f_init: Vec<u64> = fields.iter().map(|f| rng.value(f.ty)).collect();
        if rng.one_in(2) {
            let items: Vec<String> = a_init
                .iter()
                .map(|&b| chr_lit(aty, b, rng.one_in(2), rng.below(5)))
                .collect();
            let _ = writeln!(
                chr,
                "    reg a: [{}; {len}] = [{}];",
                aty.chr(),
                items.join(", ")
            );
            for (k, b) in a_init.iter().enumerate() {
                let _ = writeln!(init, "{}[{k}] = {};", array.v, aty.vconst(*b));
            }
        } else {
            let _ = writeln!(chr, "    reg a: [{}; {len}];", aty.chr());
            for k in 0..len {
                let _ = writeln!(init, "{}[{k}] = 0;", array.v);
            }
        }
        if rng.one_in(2) {
            let items: Vec<String> = fields
                .iter()
                .zip(&f_init)
                .map(|(f, &b)| {
                    let name = f.chr.trim_start_matches("st.");
                    format!("{name}: {}", chr_lit(f.ty, b, rng.one_in(2), rng.below(5)))
                })
                .collect();
            let _ = writeln!(
                chr,
                "    reg st: {strukt} = {strukt} {{ {} }};",
                items.join(", ")
            );
            for (f, b) in fields.iter().zip(&f_init) {
                let _ = writeln!(init, "{} = {};", f.v, f.ty.vconst(*b));
            }
        } else {
            let _ = writeln!(chr, "    reg st: {strukt};");
            for f in &fields {
                let _ = writeln!(init, "{} = 0;", f.v);
            }
        }
        let _ = writeln!(chr, "    reg e: E{u} = E{u}::V{einit};");
        let _ = writeln!(chr, "    stage s: {} pipes {pipes};", sty.chr());
        let _ = writeln!(chr, "    tick {{");
        for line in body.lines() {
            let _ = writeln!(chr, "        {line}");
        }
        let _ = writeln!(chr, "        x <= xs(x);\n    }}\n}}");
        let _ = writeln!(system, "    inst {prefix}: U{u} on {clock};");
        // Verilog: declarations, the tick as one always block, the
        // initial values.
        let _ = writeln!(decls, "    reg [63:0] {prefix}_x; reg [63:0] {prefix}_now;");
        for r in regs.iter().chain(&fields) {
            let _ = writeln!(decls, "    {}", r.ty.verilog(&r.v));
        }
        let _ = writeln!(
            decls,
            "    {}",
            aty.verilog(&format!("{} [0:{}]", array.v, len - 1))
        );
        let _ = writeln!(decls, "    reg [{}:0] {prefix}_sv;", pipes - 1);
        let _ = writeln!(decls, "    reg [7:0] {prefix}_e;");
        for r in &enum_reads {
            let _ = writeln!(decls, "    {}", r.ty.verilog(&r.v));
        }
        let _ = writeln!(
            decls,
            "    {}",
            sty.verilog(&format!("{prefix}_sd [0:{}]", pipes - 1))
        );
        for d in decls_v {
            let _ = writeln!(decls, "    {d}");
        }
        let _ = writeln!(init, "{} = 64'h{stim:x};", stim_var.v);
        let _ = writeln!(init, "{prefix}_sv = 0;");
        let _ = writeln!(init, "{prefix}_e = {einit};");
        for k in 0..pipes {
            let _ = writeln!(init, "{prefix}_sd[{k}] = 0;");
        }
        let _ = writeln!(always, "    always @(posedge {clock}) begin");
        let _ = writeln!(always, "        {prefix}_now = $time - OFF;");
        // A pipe neither written nor retained is invalid at the next edge;
        // its value holds.
        let _ = writeln!(always, "        {prefix}_sv <= 0;");
        for line in enum_setup.lines() {
            let _ = writeln!(always, "        {line}");
        }
        for line in vbody.lines() {
            let _ = writeln!(always, "        {line}");
        }
        let _ = writeln!(always, "        {prefix}_x <= xs({prefix}_x);\n    end");
    }
    system.push_str("}\n");
    chr.push_str(&system);
    let mut verilog = String::new();
    let _ = writeln!(
        verilog,
        "`timescale 1ps / 1ps\nmodule expr_tb;\n    localparam [63:0] OFF = 64'd100000;\n    \
         reg [63:0] limit;"
    );
    for k in 0..clocks.len() {
        let _ = writeln!(
            verilog,
            "    reg c{k} = 0; reg [63:0] cyc_c{k} = 0;\n    always @(posedge c{k}) cyc_c{k} <= cyc_c{k} + 1;"
        );
    }
    verilog.push_str(
        "    function [63:0] xs(input [63:0] x);\n        reg [63:0] y;\n        begin\n            \
         y = x ^ (x << 13);\n            y = y ^ (y >> 7);\n            xs = y ^ (y << 17);\n        \
         end\n    endfunction\n",
    );
    verilog.push_str(&fn_verilog);
    verilog.push_str(&const_decls);
    verilog.push_str(&decls);
    verilog.push_str(&always);
    let _ = writeln!(verilog, "    initial begin\n        limit = {limit};");
    // The constants, before the first edge.
    for line in const_verilog.lines() {
        let _ = writeln!(verilog, "        {line}");
    }
    for line in init.lines() {
        let _ = writeln!(verilog, "        {line}");
    }
    verilog.push_str("        fork\n");
    for (k, (p, ph)) in clocks.iter().enumerate() {
        let _ = writeln!(
            verilog,
            "            begin #(OFF + {ph}); forever begin c{k} = 1; #({}) c{k} = 0; #({}); end end",
            p / 2,
            p - p / 2
        );
    }
    verilog.push_str(
        "            begin #(OFF + limit + 1); $finish; end\n        join\n    end\nendmodule\n",
    );
    Design {
        chr,
        verilog,
        limit,
    }
}

/// `l op k` for a bare literal `k` of `l`'s type `ty`.
fn with_lit(op: &'static str, l: E, bits: u64, ty: Ty) -> E {
    E::Bin {
        op,
        l: Box::new(l),
        r: Box::new(E::Lit {
            ty,
            bits,
            bare: true,
        }),
        ty,
    }
}

fn var_expr(v: &Var) -> E {
    E::Var {
        ty: v.ty,
        chr: v.chr.clone(),
        v: v.v.clone(),
    }
}

/// Runs one generated design on `chronc` (`engine`) and on Icarus; panics
/// with the seed, the first difference and both texts' paths on a mismatch.
fn check_design(seed: u64, engine: EngineKind) {
    let d = design(seed);
    if let Ok(dir) = std::env::var("CHRONON_EXPR_KEEP") {
        // Every design and its twin, for reading or running by hand.
        let keep = Path::new(&dir).join(format!("expr-{seed:x}"));
        std::fs::write(keep.with_extension("chr"), &d.chr).expect("CHRONON_EXPR_KEEP is writable");
        std::fs::write(keep.with_extension("v"), &d.verilog)
            .expect("CHRONON_EXPR_KEEP is writable");
    }
    let scratch = Scratch::new("expr");
    let source = scratch.0.join("expr.v");
    std::fs::write(&source, &d.verilog).expect("the twin is written");
    let image = compile_twin(&source, &scratch);
    if std::panic::catch_unwind(|| {
        let theirs = run_twin(&image, &[]);
        let ours = run_chronc("expr.chr", &d.chr, d.limit, engine);
        assert_same(&format!("seed {seed:#x} on {engine:?}"), &ours, &theirs);
    })
    .is_err()
    {
        let keep = std::env::temp_dir().join(format!("chronon-expr-{seed:x}"));
        let _ = std::fs::write(keep.with_extension("chr"), &d.chr);
        let _ = std::fs::write(keep.with_extension("v"), &d.verilog);
        panic!(
            "seed {seed:#x}: chronc and Icarus disagree; the design and its twin are in {}.chr and .v",
            keep.display()
        );
    }
}

/// Random designs: 24 from a fixed seed by default (each has [`UNITS`]
/// units; about 10 s of CPU time in a debug build), alternating the
/// engines; `CHRONON_EXPR_CASES` and `CHRONON_EXPR_SEED` for more.
#[test]
fn random_expressions_match_icarus() {
    if !chronon_suite::tools::icarus_installed() {
        chronon_suite::tools::missing("iverilog", "the random expression designs");
    }
    let count = env_u64("CHRONON_EXPR_CASES", 24);
    let base = env_u64("CHRONON_EXPR_SEED", 0x5EED_0000);
    for n in 0..count {
        let engine = if n % 2 == 0 {
            EngineKind::Jit
        } else {
            EngineKind::Interp
        };
        check_design(base + n, engine);
    }
}

/// Runs `text` until `limit_ps` on both engines: unit `top.u` must trace
/// exactly `expected`.
fn expect_lines(name: &str, text: &str, limit_ps: u64, expected: &[&str]) {
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        let logs = run_chronc(name, text, limit_ps, engine);
        assert_eq!(logs["top.u"], expected, "{name} on {engine:?}");
    }
}

/// The codes of the diagnostics that stop `text` from running (it must not
/// run).
fn error_codes(name: &str, text: &str) -> Vec<&'static str> {
    let mut sources = SourceMap::new();
    sources.add(name.to_string(), text.to_string());
    let options = RunOptions::new(EngineKind::Interp, StopAt::Until(Picos::new(0, 1)));
    match run(&mut sources, &options, &mut |_, _| {}) {
        Err(RunError::Compile(diags)) => diags.iter().map(|d| d.code).collect(),
        other => panic!("{name} compiled: {:?}", other.map(|r| r.stop)),
    }
}

/// docs/language.md ("Integer literals"): a `-` before a literal is part of
/// it, also with spaces or parentheses between them, so the range check sees
/// the negative value: `-(5u8)` is an error, not 251. Negating anything else
/// wraps.
#[test]
fn a_minus_before_a_literal_is_part_of_it() {
    let design = |body: &str| {
        format!(
            "clock c = 1 GHz;\nunit U {{\n    reg a: u8 = 5;\n    tick {{\n        {body}\n    }}\n}}\n\
             system Top {{ inst u: U on c; }}\n"
        )
    };
    for bad in ["-(5u8)", "- 5u8", "-((5u8))", "-(300)"] {
        let codes = error_codes("neg.chr", &design(&format!("a <= {bad};")));
        assert!(codes.contains(&"E0303"), "{bad}: {codes:?}");
    }
    let text = design(
        "let b: i8 = -(128);\n        let n: i8 = -128;\n        \
         trace(\"neg\", b = b, c = -(-128i8), d = -(5i8), e = 0u8 - 5u8, f = -a, g = -(a), h = -n);",
    );
    expect_lines(
        "neg.chr",
        &text,
        0,
        &["0 0ps T top.u neg b=-128 c=-128 d=-5 e=251 f=251 g=251 h=-128"],
    );
}

/// docs/language.md (stage register operations): a pipe that is neither
/// written nor retained turns invalid but keeps its value, which `read`
/// still gives; a retain keeps an invalid pipe invalid.
#[test]
fn stage_read_of_an_invalid_pipe_gives_the_last_value() {
    let text = "clock c = 1 GHz;\nunit U {\n    reg n: u32;\n    stage s: u32 pipes 2;\n    tick {\n        \
                trace(\"s\", v0 = s.valid(0), r0 = s.read(0), v1 = s.valid(1), r1 = s.read(1));\n        \
                if n == 0 { s.write(0, 7); }\n        if n == 1 { s.write(1, s.read(0) + 1); }\n        \
                if n == 3 { s.retain(1); }\n        n <= n + 1;\n    }\n}\nsystem Top { inst u: U on c; }\n";
    let expected = [
        "0 0ps T top.u s v0=0 r0=0 v1=0 r1=0",
        "1 1000ps T top.u s v0=1 r0=7 v1=0 r1=0",
        "2 2000ps T top.u s v0=0 r0=7 v1=1 r1=8",
        "3 3000ps T top.u s v0=0 r0=7 v1=0 r1=8",
        "4 4000ps T top.u s v0=0 r0=7 v1=0 r1=8",
    ];
    expect_lines("stage.chr", text, 4000, &expected);
}

/// docs/language.md ("Types"): `==` and `!=` compare structs and arrays
/// scalar by scalar, in ticks and in constants, on both engines.
#[test]
fn structs_and_arrays_compare_for_equality() {
    let text = "clock c = 1 GHz;\nstruct S { f: u8, g: i3 }\nstruct One { v: i5 }\n\
                const K: S = (S { f: 3, g: -1 });\nconst SAME: bool = K == (S { f: 3, g: -1 });\n\
                unit U {\n    reg n: u8;\n    reg st: S;\n    reg one: One;\n    \
                reg arr: [u16; 3] = [1, 2, 3];\n    tick {\n        \
                let e1: bool = st == (S { f: n, g: -1 });\n        \
                let e2: bool = arr != [1, 2, n as u16];\n        \
                let e3: bool = one == One { v: -1 };\n        let e4: bool = K != st;\n        \
                trace(\"eq\", n = n, e1 = e1, e2 = e2, e3 = e3, e4 = e4, same = SAME);\n        \
                if n == 2 { st <= K; one <= One { v: -1 }; }\n        n <= n + 1;\n    }\n}\n\
                system Top { inst u: U on c; }\n";
    let expected = [
        "0 0ps T top.u eq n=0 e1=0 e2=1 e3=0 e4=1 same=1",
        "1 1000ps T top.u eq n=1 e1=0 e2=1 e3=0 e4=1 same=1",
        "2 2000ps T top.u eq n=2 e1=0 e2=1 e3=0 e4=1 same=1",
        "3 3000ps T top.u eq n=3 e1=1 e2=0 e3=1 e4=0 same=1",
        "4 4000ps T top.u eq n=4 e1=0 e2=1 e3=1 e4=0 same=1",
    ];
    expect_lines("eq.chr", text, 4000, &expected);
}

/// A struct literal may initialize a `const` (the grammar's `expr`): the
/// item splitter once ended such a `const` at the literal's `}` and
/// reported E0101 ("found end of item"). A `const` whose `;` is missing
/// before the next item is still one error, not two items swallowed.
#[test]
fn struct_literal_constants() {
    let text = "clock c = 1 GHz;\nstruct S { f: u8, g: i3 }\n\
                const K: S = S { f: 3, g: -1 };\n\
                const SAME: bool = K == S { f: 3, g: -1 } && K != S { f: 4, g: -1 }; // same\n\
                const F: u8 = S { f: 9, g: 0 }.f /* a field */ + 1;\n\
                unit U {\n    reg st: S = K;\n    tick {\n        \
                trace(\"k\", f = st.f, g = st.g, same = SAME, x = F);\n    }\n}\n\
                system Top { inst u: U on c; }\n";
    expect_lines(
        "consts.chr",
        text,
        0,
        &["0 0ps T top.u k f=3 g=-1 same=1 x=10"],
    );
    let missing = "struct S { f: u8 }\nconst K: S = S { f: 3 }\nconst J: u8 = 1;\n";
    let mut sources = SourceMap::new();
    let file = sources.add("missing.chr".to_string(), missing.to_string());
    let (_, diags) = chronon_lang::parse::parse_file(file, missing);
    let errors: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(errors, ["E0101"], "{diags:?}");
}

/// docs/language.md ("Types"): `bool as iN` is 0 or 1 (an unsigned bit, so
/// `true as i1` is -1); an enum converts as its variant's index, truncated
/// or extended like an unsigned value; a shift amount must be unsigned.
#[test]
fn bool_and_enum_casts_and_signed_shift_amounts() {
    let text = "clock c = 1 GHz;\nenum E { V0, V1, V2 }\nunit U {\n    reg e: E = E::V2;\n    \
                tick {\n        trace(\"b\", t1 = true as i1, t8 = true as i8, f4 = false as i4, \
                e2 = e as i2, e1 = e as u1, e9 = e as i9);\n    }\n}\n\
                system Top { inst u: U on c; }\n";
    expect_lines(
        "casts.chr",
        text,
        0,
        &["0 0ps T top.u b t1=-1 t8=1 f4=0 e2=-2 e1=0 e9=2"],
    );
    let signed = "clock c = 1 GHz;\nunit U {\n    reg a: u8;\n    reg s: i8;\n    \
                  tick { a <= a << s; s <= s - 1; }\n}\nsystem Top { inst u: U on c; }\n";
    let codes = error_codes("shift.chr", signed);
    assert!(codes.contains(&"E0301"), "{codes:?}");
}

/// docs/language.md (`match`): the first arm whose pattern matches runs,
/// and `_` only when none does, wherever it stands.
#[test]
fn match_default_arm_anywhere() {
    let text = "clock c = 1 GHz;\nunit U {\n    reg n: u8;\n    tick {\n        let arm: u8 = 0;\n        \
                match n {\n            0 => { arm = 10; }\n            _ => { arm = 99; }\n            \
                1 | 2 => { arm = 12; }\n            2 => { arm = 22; }\n        }\n        \
                trace(\"m\", n = n, arm = arm);\n        n <= n + 1;\n    }\n}\n\
                system Top { inst u: U on c; }\n";
    let expected = [
        "0 0ps T top.u m n=0 arm=10",
        "1 1000ps T top.u m n=1 arm=12",
        "2 2000ps T top.u m n=2 arm=12",
        "3 3000ps T top.u m n=3 arm=99",
    ];
    expect_lines("match.chr", text, 3000, &expected);
}

/// docs/language.md (tick statements): a `let` shadows an earlier local or
/// a register until the end of its block, and a `for` variable inside its
/// loop.
#[test]
fn locals_shadow_until_the_end_of_their_block() {
    let text = "clock c = 1 GHz;\nunit U {\n    reg a: u8 = 5;\n    tick {\n        \
                let t: u8 = 1;\n        let t: u16 = t as u16 + 299;\n        \
                if true { let t: u8 = 7; let a: u8 = t + 1; trace(\"in\", t = t, a = a); }\n        \
                let s: u8 = 0;\n        for a in 0..3 { s = s + a as u8; }\n        \
                trace(\"out\", t = t, a = a, s = s);\n    }\n}\nsystem Top { inst u: U on c; }\n";
    let expected = [
        "0 0ps T top.u in t=7 a=8",
        "0 0ps T top.u out t=300 a=5 s=3",
    ];
    expect_lines("shadow.chr", text, 0, &expected);
}

/// docs/language.md: `&&` and `||` short-circuit, so a guard keeps a
/// run-time index that is out of range from being read (which would
/// fault), on both engines.
#[test]
fn short_circuit_guards_an_out_of_range_index() {
    let text = "clock c = 1 GHz;\nunit U {\n    reg i: u8 = 2;\n    reg a: [u8; 4] = [1, 2, 3, 4];\n    \
                tick {\n        let ok: bool = i < 4 && a[i] > 2;\n        \
                let alt: bool = i >= 4 || a[i] == 3;\n        if i < 4 { a[i] <= a[i] + 10; }\n        \
                trace(\"s\", i = i, ok = ok, alt = alt);\n        i <= i + 1;\n    }\n}\n\
                system Top { inst u: U on c; }\n";
    let expected = [
        "0 0ps T top.u s i=2 ok=1 alt=1",
        "1 1000ps T top.u s i=3 ok=1 alt=0",
        "2 2000ps T top.u s i=4 ok=0 alt=1",
        "3 3000ps T top.u s i=5 ok=0 alt=1",
    ];
    expect_lines("guard.chr", text, 3000, &expected);
}
