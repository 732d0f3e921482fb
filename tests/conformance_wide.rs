//! Integers wider than 64 bits against Icarus Verilog: random designs
//! whose registers have widths around the limb boundaries (65, 127, 128,
//! 129, 200, 256, 512, 1024, and narrow ones beside them), each updated on
//! every edge by a random expression of every wide form: `+ - * & | ^`,
//! `/ %` up to 128 bits, negation and `~`, shifts by constants and by a
//! run-time amount, casts between widths and signedness, constant and
//! run-time slices, concatenation (with comparisons and reductions as
//! one-bit parts) and replication. Each design has a Verilog twin in
//! which every subexpression is a variable of the exact width and
//! signedness of its Chronon type, so Verilog's context-dependent sizing
//! never applies; Icarus prints every register after the last edge, and
//! both engines must end with the same values.
//! `CHRONON_WIDE_CASES` and `CHRONON_WIDE_SEED` run more designs.

#[allow(dead_code)]
#[path = "conformance/harness.rs"]
mod harness;

use std::fmt::Write as _;
use std::process::Command;

use chronon_compiler::run::{RunOptions, StopAt, run};
use chronon_compiler::simulate::{EngineKind, RegisterValue};
use chronon_lang::span::SourceMap;
use chronon_runtime::Picos;
use harness::{Scratch, compile_twin, env_u64};
use num_bigint::{BigInt, BigUint};

/// Edges each design runs.
const EDGES: u64 = 6;

/// Registers of each design besides the shift amount `p`.
const REGS: usize = 6;

/// An integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct T {
    w: u32,
    s: bool,
}

impl T {
    fn chr(self) -> String {
        format!("{}{}", if self.s { "i" } else { "u" }, self.w)
    }

    fn verilog(self, name: &str) -> String {
        let signed = if self.s { "signed " } else { "" };
        format!("reg {signed}[{}:0] {name};", self.w - 1)
    }

    fn mask(self) -> BigUint {
        (BigUint::from(1u8) << self.w) - 1u8
    }

    /// A Chronon literal of these bits: hex with a suffix, or a signed
    /// decimal for a signed type whose sign bit is set.
    fn literal(self, bits: &BigUint) -> String {
        if self.s && bits.bit(u64::from(self.w) - 1) {
            let v = BigInt::from(bits.clone()) - (BigInt::from(1) << self.w);
            format!("{v}{}", self.chr())
        } else {
            format!("{bits:#x}{}", self.chr())
        }
    }

    fn vconst(self, bits: &BigUint) -> String {
        format!("{}'h{bits:x}", self.w)
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let z = (self.0 ^ (self.0 >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, X>(&mut self, xs: &'a [X]) -> &'a X {
        &xs[self.below(xs.len() as u64) as usize]
    }

    fn ty(&mut self) -> T {
        const WIDTHS: [u32; 13] = [65, 100, 127, 128, 129, 191, 200, 256, 512, 1024, 64, 33, 8];
        T {
            w: *self.pick(&WIDTHS),
            s: self.below(2) == 0,
        }
    }

    /// Bits of a value of `t`, often a corner.
    fn value(&mut self, t: T) -> BigUint {
        let mut v = BigUint::default();
        for _ in 0..t.w.div_ceil(64) {
            v = (v << 64u32) | BigUint::from(self.next());
        }
        let v = match self.below(6) {
            0 => BigUint::default(),
            1 => BigUint::from(1u8),
            2 => t.mask(),
            3 => BigUint::from(1u8) << (t.w - 1),
            4 => (BigUint::from(1u8) << (t.w - 1)) - 1u8,
            _ => v,
        };
        v & t.mask()
    }
}

/// A typed expression.
enum E {
    Reg(usize),
    Lit(BigUint),
    Neg(Box<E>),
    Not(Box<E>),
    Bin(&'static str, Box<E>, Box<E>),
    ShiftConst(&'static str, Box<E>, u32),
    ShiftVar(&'static str, Box<E>),
    Cast(Box<E>, T),
    Slice(usize, u32, u32),
    SliceVar(usize, u32),
    Cat(Vec<(E, T)>),
    Rep(u32, Box<E>, T),
    Cmp(&'static str, Box<E>, Box<E>, T),
    Reduce(&'static str, Box<E>, T),
}

struct Gen<'a> {
    rng: &'a mut Rng,
    regs: &'a [T],
}

impl Gen<'_> {
    fn leaf(&mut self, t: T) -> E {
        let same: Vec<usize> = (0..self.regs.len())
            .filter(|k| self.regs[*k] == t)
            .collect();
        match self.rng.below(3) {
            0 if !same.is_empty() => E::Reg(*self.rng.pick(&same)),
            1 => E::Lit(self.rng.value(t)),
            _ => {
                let k = self.rng.below(self.regs.len() as u64) as usize;
                if self.regs[k] == t {
                    E::Reg(k)
                } else {
                    E::Cast(Box::new(E::Reg(k)), self.regs[k])
                }
            }
        }
    }

    /// A register at least `w` bits wide, if any.
    fn reg_of_at_least(&mut self, w: u32) -> Option<usize> {
        let ok: Vec<usize> = (0..self.regs.len())
            .filter(|k| self.regs[*k].w >= w)
            .collect();
        (!ok.is_empty()).then(|| *self.rng.pick(&ok))
    }

    /// An unsigned `w`-bit value of bits: a slice, a concatenation or a
    /// replication.
    fn bits(&mut self, w: u32, depth: u32) -> E {
        match self.rng.below(4) {
            0 if w >= 2 => {
                let k = 2 + self.rng.below(2) as u32;
                let mut parts = Vec::new();
                let mut left = w;
                for i in 0..k {
                    let pw = if i + 1 == k || left <= 1 {
                        left
                    } else if self.rng.below(3) == 0 {
                        1
                    } else {
                        1 + self.rng.below(u64::from(left - 1)) as u32
                    };
                    left -= pw;
                    let pt = T { w: pw, s: false };
                    let part = if pw == 1 && self.rng.below(2) == 0 {
                        let ct = self.rng.ty();
                        if self.rng.below(2) == 0 {
                            let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                            let a = self.expr(ct, depth.saturating_sub(1));
                            let b = self.expr(ct, depth.saturating_sub(1));
                            E::Cmp(op, Box::new(a), Box::new(b), ct)
                        } else {
                            let op = *self.rng.pick(&["&", "|", "^"]);
                            E::Reduce(op, Box::new(self.expr(ct, depth.saturating_sub(1))), ct)
                        }
                    } else {
                        self.expr(pt, depth.saturating_sub(1))
                    };
                    parts.push((part, pt));
                    if left == 0 {
                        break;
                    }
                }
                E::Cat(parts)
            }
            1 => {
                let k = [2u32, 3, 4, 5]
                    .into_iter()
                    .find(|k| w.is_multiple_of(*k) && self.rng.below(2) == 0);
                match k {
                    Some(k) => {
                        let pt = T { w: w / k, s: false };
                        E::Rep(k, Box::new(self.expr(pt, depth.saturating_sub(1))), pt)
                    }
                    None => self.leaf(T { w, s: false }),
                }
            }
            2 => match self.reg_of_at_least(w) {
                Some(r) => {
                    let lo = self.rng.below(u64::from(self.regs[r].w - w + 1)) as u32;
                    E::Slice(r, lo + w - 1, lo)
                }
                None => self.leaf(T { w, s: false }),
            },
            _ => match self.reg_of_at_least(w) {
                Some(r) => E::SliceVar(r, w),
                None => self.leaf(T { w, s: false }),
            },
        }
    }

    fn expr(&mut self, t: T, depth: u32) -> E {
        if depth == 0 {
            return self.leaf(t);
        }
        let d = depth - 1;
        let sub = |g: &mut Self| Box::new(g.expr(t, d));
        match self.rng.below(10) {
            0..=2 => {
                let mut ops = vec!["+", "-", "*", "&", "|", "^"];
                if t.w <= 128 {
                    ops.extend(["/", "%"]);
                }
                let op = *self.rng.pick(&ops);
                E::Bin(op, sub(self), sub(self))
            }
            3 => {
                let a = sub(self);
                // `-` before a literal is part of it (and out of range for
                // an unsigned type): negate only other forms.
                if self.rng.below(2) == 0 && !matches!(*a, E::Lit(_)) {
                    E::Neg(a)
                } else {
                    E::Not(a)
                }
            }
            4 => {
                let op = *self.rng.pick(&["<<", ">>"]);
                let k = match self.rng.below(4) {
                    0 => 64,
                    1 => t.w - 1,
                    2 => t.w + self.rng.below(3) as u32,
                    _ => self.rng.below(u64::from(t.w)) as u32,
                };
                E::ShiftConst(op, sub(self), k)
            }
            5 => {
                let op: &'static str = if self.rng.below(2) == 0 { "<<" } else { ">>" };
                E::ShiftVar(op, sub(self))
            }
            6 => {
                let from = self.rng.ty();
                E::Cast(Box::new(self.expr(from, d)), from)
            }
            _ => {
                let bits = self.bits(t.w, d);
                if t.s {
                    E::Cast(Box::new(bits), T { w: t.w, s: false })
                } else {
                    bits
                }
            }
        }
    }
}

/// Writes `e` (of type `t`) as Chronon text and as Verilog statements
/// that leave its value in a fresh variable; returns both.
struct Emit {
    decls: String,
    stmts: String,
    temps: usize,
    regs: Vec<T>,
}

impl Emit {
    fn temp(&mut self, t: T) -> String {
        let name = format!("t{}", self.temps);
        self.temps += 1;
        let _ = writeln!(self.decls, "  {}", t.verilog(&name));
        name
    }

    fn assign(&mut self, t: T, rhs: String) -> String {
        let name = self.temp(t);
        let _ = writeln!(self.stmts, "    {name} = {rhs};");
        name
    }

    /// `(chronon text, verilog variable)` of `e` at type `t`.
    fn emit(&mut self, e: &E, t: T) -> (String, String) {
        match e {
            E::Reg(k) => (format!("r{k}"), format!("r{k}")),
            E::Lit(bits) => (t.literal(bits), self.assign(t, t.vconst(bits))),
            E::Neg(a) => {
                let (c, v) = self.emit(a, t);
                (format!("(-{c})"), self.assign(t, format!("-{v}")))
            }
            E::Not(a) => {
                let (c, v) = self.emit(a, t);
                (format!("(~{c})"), self.assign(t, format!("~{v}")))
            }
            E::Bin(op, a, b) => {
                let (ca, va) = self.emit(a, t);
                let (cb, vb) = self.emit(b, t);
                let text = format!("({ca} {op} {cb})");
                if matches!(*op, "/" | "%") {
                    let name = self.temp(t);
                    let min = t.vconst(&(BigUint::from(1u8) << (t.w - 1)));
                    let (zero, overflow) = if *op == "/" {
                        (
                            if t.s {
                                "-1".to_string()
                            } else {
                                format!("{{{}{{1'b1}}}}", t.w)
                            },
                            va.clone(),
                        )
                    } else {
                        (va.clone(), "0".to_string())
                    };
                    let _ = writeln!(self.stmts, "    if ({vb} == 0) {name} = {zero};");
                    if t.s {
                        let _ = writeln!(
                            self.stmts,
                            "    else if ({va} == {min} && {vb} == -1) {name} = {overflow};"
                        );
                    }
                    let _ = writeln!(self.stmts, "    else {name} = {va} {op} {vb};");
                    return (text, name);
                }
                (text, self.assign(t, format!("{va} {op} {vb}")))
            }
            E::ShiftConst(op, a, k) => {
                let (c, v) = self.emit(a, t);
                let vop = if *op == ">>" && t.s { ">>>" } else { op };
                (
                    format!("({c} {op} {k})"),
                    self.assign(t, format!("{v} {vop} {k}")),
                )
            }
            E::ShiftVar(op, a) => {
                let (c, v) = self.emit(a, t);
                let vop = if *op == ">>" && t.s { ">>>" } else { op };
                (
                    format!("({c} {op} p)"),
                    self.assign(t, format!("{v} {vop} p")),
                )
            }
            E::Cast(a, from) => {
                let (c, v) = self.emit(a, *from);
                (format!("({c} as {})", t.chr()), self.assign(t, v))
            }
            E::Slice(k, hi, lo) => (
                format!("r{k}[{hi}:{lo}]"),
                self.assign(t, format!("r{k}[{hi}:{lo}]")),
            ),
            E::SliceVar(k, w) => {
                let positions = self.regs[*k].w - w + 1;
                (
                    format!("r{k}[(p % {positions}) +: {w}]"),
                    self.assign(t, format!("r{k}[(p % {positions}) +: {w}]")),
                )
            }
            E::Cat(parts) => {
                let (cs, vs): (Vec<String>, Vec<String>) =
                    parts.iter().map(|(p, pt)| self.emit(p, *pt)).unzip();
                (
                    format!("{{{}}}", cs.join(", ")),
                    self.assign(t, format!("{{{}}}", vs.join(", "))),
                )
            }
            E::Rep(k, a, at) => {
                let (c, v) = self.emit(a, *at);
                (
                    format!("{{{k}{{{c}}}}}"),
                    self.assign(t, format!("{{{k}{{{v}}}}}")),
                )
            }
            E::Cmp(op, a, b, at) => {
                let (ca, va) = self.emit(a, *at);
                let (cb, vb) = self.emit(b, *at);
                (
                    format!("({ca} {op} {cb})"),
                    self.assign(t, format!("{va} {op} {vb}")),
                )
            }
            E::Reduce(op, a, at) => {
                let (c, v) = self.emit(a, *at);
                (format!("({op}{c})"), self.assign(t, format!("{op}{v}")))
            }
        }
    }
}

/// A design and its twin.
struct Design {
    chr: String,
    verilog: String,
    regs: Vec<T>,
}

fn design(seed: u64) -> Design {
    let mut rng = Rng(seed);
    let regs: Vec<T> = (0..REGS).map(|_| rng.ty()).collect();
    let inits: Vec<BigUint> = regs.iter().map(|t| rng.value(*t)).collect();
    let mut em = Emit {
        decls: String::new(),
        stmts: String::new(),
        temps: 0,
        regs: regs.clone(),
    };
    let mut chr = String::from("clock c = 1 GHz;\nunit U {\n    reg p: u16 = 0x1234;\n");
    for (k, (t, v)) in regs.iter().zip(&inits).enumerate() {
        let _ = writeln!(chr, "    reg r{k}: {} = {};", t.chr(), t.literal(v));
    }
    chr.push_str("    tick {\n        p <= p * 0x9e37 + 0x7f4a;\n");
    let mut updates = String::new();
    for (k, t) in regs.iter().enumerate() {
        let e = Gen {
            rng: &mut rng,
            regs: &regs,
        }
        .expr(*t, 3);
        let (c, v) = em.emit(&e, *t);
        let _ = writeln!(chr, "        r{k} <= {c};");
        let _ = writeln!(updates, "    r{k} <= {v};");
    }
    chr.push_str("    }\n}\nsystem Top { inst u: U on c; }\n");
    let mut verilog = String::from("module top;\n  reg clk = 0;\n  reg [15:0] p = 16'h1234;\n");
    for (k, t) in regs.iter().enumerate() {
        let _ = writeln!(verilog, "  {}", t.verilog(&format!("r{k}")));
    }
    verilog.push_str(&em.decls);
    verilog.push_str("  initial begin\n");
    for (k, (t, v)) in regs.iter().zip(&inits).enumerate() {
        let _ = writeln!(verilog, "    r{k} = {};", t.vconst(v));
    }
    let _ = writeln!(
        verilog,
        "    repeat ({EDGES}) begin #5 clk = 1; #5 clk = 0; end"
    );
    for k in 0..regs.len() {
        let _ = writeln!(verilog, "    $display(\"r{k} %h\", r{k});");
    }
    verilog.push_str("    $finish;\n  end\n  always @(posedge clk) begin\n");
    verilog.push_str(&em.stmts);
    verilog.push_str(&updates);
    verilog.push_str("    p <= p * 16'h9e37 + 16'h7f4a;\n  end\nendmodule\n");
    Design { chr, verilog, regs }
}

/// The final bits of each register on `chronc`, by name.
fn chronc_values(d: &Design, engine: EngineKind) -> Vec<(String, BigUint)> {
    let mut sources = SourceMap::new();
    sources.add("wide.chr".to_string(), d.chr.clone());
    let mut options = RunOptions::new(
        engine,
        StopAt::Until(Picos::new(i128::from((EDGES - 1) * 1000), 1)),
    );
    options.dump_state = true;
    let report = match run(&mut sources, &options, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{e:?}\n{}", d.chr),
    };
    assert!(report.is_clean(), "{}\n{}", report.summary(true), d.chr);
    report
        .registers
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.name != "p")
        .map(|r| {
            let k: usize = r.name[1..].parse().expect("registers are r0, r1, ...");
            let t = d.regs[k];
            let v = match r.value {
                RegisterValue::Int(v) => BigInt::from(v),
                RegisterValue::Wide(text) => {
                    let (neg, digits) = match text.strip_prefix('-') {
                        Some(rest) => (true, rest),
                        None => (false, text.as_str()),
                    };
                    let digits = digits.strip_prefix("0x").expect("hexadecimal");
                    let m = BigInt::parse_bytes(digits.as_bytes(), 16).expect("hex digits");
                    if neg { -m } else { m }
                }
            };
            let bits = v.mod_floor_pow2(t.w);
            (r.name, bits)
        })
        .collect()
}

trait ModPow2 {
    fn mod_floor_pow2(&self, w: u32) -> BigUint;
}

impl ModPow2 for BigInt {
    fn mod_floor_pow2(&self, w: u32) -> BigUint {
        let m = BigInt::from(1) << w;
        let r = ((self % &m) + &m) % &m;
        r.to_biguint().unwrap_or_default()
    }
}

fn icarus_values(d: &Design) -> Vec<(String, BigUint)> {
    let scratch = Scratch::new("wide");
    let source = scratch.0.join("wide.v");
    std::fs::write(&source, &d.verilog).expect("the twin is written");
    let image = compile_twin(&source, &scratch);
    let out = Command::new("vvp")
        .arg("-n")
        .arg(&image)
        .output()
        .expect("vvp runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(name, _)| name.starts_with('r'))
        .map(|(name, hex)| {
            assert!(
                !hex.contains(['x', 'z']),
                "{name} is undefined in Icarus: {hex}"
            );
            let v = BigUint::parse_bytes(hex.as_bytes(), 16).expect("hex digits");
            (name.to_string(), v)
        })
        .collect()
}

fn check(seed: u64) {
    let d = design(seed);
    let theirs = icarus_values(&d);
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        check_engine(seed, &d, &theirs, engine);
    }
}

fn check_engine(seed: u64, d: &Design, theirs: &[(String, BigUint)], engine: EngineKind) {
    let ours = chronc_values(d, engine);
    if ours != theirs {
        let keep = std::env::temp_dir().join(format!("chronon-wide-{seed:x}"));
        let _ = std::fs::write(keep.with_extension("chr"), &d.chr);
        let _ = std::fs::write(keep.with_extension("v"), &d.verilog);
        let show = |vs: &[(String, BigUint)]| {
            vs.iter()
                .map(|(n, v)| format!("{n} {v:x}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "seed {seed:#x} on {engine:?}: chronc and Icarus disagree (the design and its twin \
             are in {}.chr and .v)\nchronc:\n{}\nicarus:\n{}",
            keep.display(),
            show(&ours),
            show(theirs)
        );
    }
}

/// 24 random designs by default, each on both engines.
#[test]
fn random_wide_expressions_match_icarus() {
    if !chronon_suite::tools::icarus_installed() {
        chronon_suite::tools::missing("iverilog", "the random wide-integer designs");
    }
    let count = env_u64("CHRONON_WIDE_CASES", 24);
    let base = env_u64("CHRONON_WIDE_SEED", 0x71DE_0000);
    for n in 0..count {
        check(base + n);
    }
}

/// The generator's designs use every form (a generator that stopped
/// producing one would make the comparison above weaker without failing);
/// the forms are rare enough that this looks at the first 64 designs.
#[test]
fn the_generator_covers_every_wide_form() {
    let text: String = (0..64).map(|n| design(0x71DE_0000 + n).chr).collect();
    for form in [
        " + ", " - ", " * ", " / ", " % ", " & ", " | ", " ^ ", "(-", "(~", " << ", " >> ", " p)",
        " as ", "] ", "+: ", "{", "}}", " < ", "(&", "(|", "(^",
    ] {
        assert!(text.contains(form), "no design uses `{form}`");
    }
}

/// `tests/designs/wide_paths.chr` sends `k * K` (200 bits) for k = 1, 2,
/// ... through a channel, a stage register and a second channel to one
/// sink and through a CDC FIFO to another; each sink's XOR of what it
/// received must be the XOR of the first `n` multiples, `n` its count, on
/// both engines: no limb lost, reordered or mixed up on the way.
#[test]
fn wide_values_cross_channels_stages_and_fifos_whole() {
    let text = std::fs::read_to_string("tests/designs/wide_paths.chr").expect("the design");
    let k = BigUint::parse_bytes(b"9E3779B97F4A7C15F39CC0605CEDC834108227673AB1", 16)
        .expect("hex digits");
    let modulus = BigUint::from(1u8) << 200u32;
    for engine in [EngineKind::Jit, EngineKind::Interp] {
        let mut sources = SourceMap::new();
        sources.add("wide_paths.chr".to_string(), text.clone());
        let mut options = RunOptions::new(engine, StopAt::Until(Picos::new(299_000, 1)));
        options.dump_state = true;
        let report = run(&mut sources, &options, &mut |_, _| {}).expect("runs");
        let registers = report.registers.unwrap_or_default();
        let value = |unit: &str, name: &str| {
            let r = registers
                .iter()
                .find(|r| r.unit == unit && r.name == name)
                .unwrap_or_else(|| panic!("{unit}.{name}"));
            match &r.value {
                RegisterValue::Int(v) => BigUint::from(*v as u128),
                RegisterValue::Wide(text) => {
                    let digits = text.strip_prefix("0x").expect("unsigned hex");
                    BigUint::parse_bytes(digits.as_bytes(), 16).expect("hex digits")
                }
            }
        };
        for unit in ["top.near", "top.far"] {
            let n = u64::try_from(value(unit, "n")).expect("a count");
            assert!(n > 50, "{unit} received only {n}");
            let want = (1..=n).fold(BigUint::default(), |acc, i| acc ^ ((&k * i) % &modulus));
            assert_eq!(
                value(unit, "acc"),
                want,
                "{unit} on {engine:?} after {n} items"
            );
        }
    }
}

/// The wide benchmarks (`benches/wide/`) compute what a bignum model of
/// them does, on both engines, so their figures time the right work.
#[test]
fn the_wide_benchmarks_match_a_bignum_model() {
    let m1024 = (BigUint::from(1u8) << 1024u32) - 1u8;
    let m128 = (BigUint::from(1u8) << 128u32) - 1u8;
    let low10 = |v: &BigUint| u32::try_from(v & BigUint::from(1023u32)).unwrap_or(0);
    let start = BigUint::parse_bytes(b"12345678901234567890123456789", 10).expect("digits");
    // div128.chr: a <= a / b + 1; b <= b + 1.
    let (mut a, mut b) = (start.clone(), BigUint::from(977u32));
    for _ in 0..30 {
        (a, b) = (((&a / &b) + 1u8) & &m128, (&b + 1u8) & &m128);
    }
    let div = [("a", a), ("b", b)];
    // mul1024.chr: a <= a * b + 1; b <= b + 1; s <= (s << a[9:0]) | (s >> b[9:0]).
    let (mut a, mut b, mut s) = (start, BigUint::from(977u32), BigUint::from(5u8));
    for _ in 0..30 {
        let s2 = ((&s << low10(&a)) & &m1024) | (&s >> low10(&b));
        (a, b, s) = (((&a * &b) + 1u8) & &m1024, (&b + 1u8) & &m1024, s2);
    }
    let mul = [("a", a), ("b", b), ("s", s)];
    for (file, want) in [
        ("benches/wide/div128.chr", &div[..]),
        ("benches/wide/mul1024.chr", &mul[..]),
    ] {
        let text = std::fs::read_to_string(file).expect("the benchmark");
        for engine in [EngineKind::Jit, EngineKind::Interp] {
            let mut sources = SourceMap::new();
            sources.add(file.to_string(), text.clone());
            let mut options = RunOptions::new(engine, StopAt::Until(Picos::new(29 * 10_000, 1)));
            options.dump_state = true;
            let report = run(&mut sources, &options, &mut |_, _| {}).expect("runs");
            for (name, value) in want {
                let got = report
                    .registers
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .find(|r| r.name == *name)
                    .map(|r| match &r.value {
                        RegisterValue::Wide(text) => text.clone(),
                        RegisterValue::Int(v) => format!("{v:#x}"),
                    });
                assert_eq!(
                    got,
                    Some(format!("{value:#x}")),
                    "{file} {name} on {engine:?}"
                );
            }
        }
    }
}
