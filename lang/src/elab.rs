//! Elaboration: clocks, the system hierarchy, instances, channels and FIFOs.
//!
//! Starting from the top system, every instance is expanded with concrete
//! parameters, every unit specialization is checked once, and every link is
//! checked against the timing contract (same domain for channels, FIFO
//! depth and synchronizer ranges, port directions and kinds, drivers,
//! zero-latency cycles).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::Ratio;
use num_traits::{Signed, Zero};

use crate::ast::{self, Dir, Item, SystemMember};
use crate::check::{Env, ItemId, Params};
use crate::design::{self as d, PortKind, PortRef, Rational, Type, Value};
use crate::diag::{IntoDiagnostic, did_you_mean};
use crate::errors::{ClockError, ElabError, ResolveError};
use crate::span::Span;

/// An exposed or unit port as seen from a system.
#[derive(Clone)]
struct PortView {
    port: PortRef,
    dir: Dir,
    ty: Type,
    kind: PortKind,
    span: Span,
}

#[derive(Clone)]
enum InstRef {
    Unit(usize),
    Sub(HashMap<String, PortView>),
}

/// What an endpoint names: one port, or every element of a port array.
struct Ends {
    views: Vec<PortView>,
    /// A whole port array (`a.tx`, not `a.tx[i]`).
    array: bool,
}

/// A system member after `for` loops are unrolled: the member and the
/// parameters (loop variables included) in scope.
struct Unrolled<'m> {
    member: &'m SystemMember,
    params: Rc<Params>,
    /// Inside a loop, where `inst a[i]` declares one element.
    in_for: bool,
}

/// The ports a system exposes, as its `expose` members are elaborated.
#[derive(Default)]
struct Exposed {
    /// By outside name: the inner port each stands for.
    views: HashMap<String, PortView>,
    /// Inner ports already exposed, where.
    spans: HashMap<PortRef, Span>,
    /// Outside names already taken, where.
    names: HashMap<String, Span>,
}

enum Slot {
    One(InstRef, Span),
    Array(Vec<Option<InstRef>>, Span),
    /// An instance that failed to elaborate (already reported): links to it are skipped.
    Failed(Span),
}

/// Elaboration state for one design.
pub struct Elab<'e> {
    env: &'e mut Env,
    /// Clocks, arrays expanded.
    pub clocks: Vec<d::Clock>,
    clock_index: HashMap<String, (usize, Option<usize>)>,
    /// Unit specializations.
    pub specs: Vec<d::UnitSpec>,
    spec_keys: HashMap<(ItemId, Vec<(String, Value)>), usize>,
    /// Instances.
    pub instances: Vec<d::Instance>,
    /// Channels.
    pub channels: Vec<d::Channel>,
    /// FIFOs.
    pub fifos: Vec<d::CdcFifo>,
    sys_stack: Vec<ItemId>,
    /// Inputs named by a link: if the link failed it was reported, so the
    /// input is not reported as undriven as well.
    excused: HashSet<PortRef>,
    /// Instances made and system `for` iterations and members unrolled so
    /// far, against [`MAX_ELABORATED`].
    size: usize,
    /// The design passed [`MAX_ELABORATED`] (reported once), or
    /// elaboration reported [`MAX_ELAB_DIAGNOSTICS`]: elaboration stops,
    /// and nothing is reported about what it left undone.
    too_large: bool,
    /// Instances declared in system `for` loops that were not unrolled (a
    /// bound that is not a constant, a length out of range: reported
    /// there), so links to them are skipped instead of reported as links to
    /// unknown instances.
    skipped: Vec<(String, Span)>,
    /// Instances declared only in system `for` loops that ran zero times:
    /// name, the loop's end bound and its range. A link to one is reported
    /// as a use of an empty instance array, not of an unknown instance.
    empty_arrays: Vec<(String, Span, i128, i128)>,
    /// Diagnostics before elaboration began.
    diags_at_start: usize,
}

/// Elaboration stops after this many diagnostics of its own: an error in a
/// unit instantiated 2^20 times is reported once per instance before
/// duplicates are merged (with a 100,000-character name in each, 18 GB).
pub const MAX_ELAB_DIAGNOSTICS: usize = 1000;

/// At most this many instances, system `for` iterations and unrolled
/// system members in one design. Nested loops and systems multiply, so a
/// few small numbers can ask for 2^40 instances; past this bound the design
/// gets E0418 instead of exhausting time and memory.
pub const MAX_ELABORATED: usize = 1 << 20;

/// The instances `members` declare, in nested loops too, with their spans.
fn skipped_insts(members: &[SystemMember], out: &mut Vec<(String, Span)>) {
    for m in members {
        match m {
            SystemMember::Inst { name, span, .. } => out.push((name.name.clone(), *span)),
            SystemMember::For { body, .. } => skipped_insts(body, out),
            SystemMember::If {
                then, otherwise, ..
            } => {
                skipped_insts(then, out);
                skipped_insts(otherwise, out);
            }
            _ => {}
        }
    }
}

/// Converts a written time or frequency to picoseconds; `Err` names the problem.
fn time_ps(t: &ast::TimeLit) -> Result<(Rational, bool), ClockError> {
    let num = t.number.as_str();
    let (neg, num) = match num.strip_prefix('-') {
        Some(n) => (true, n),
        None => (false, num),
    };
    let big = |s: &str| {
        s.parse::<BigInt>()
            .map_err(|_| ClockError::Unrepresentable { span: t.span })
    };
    let mut value: Rational = if let Some((a, b)) = num.split_once('/') {
        let den = big(b)?;
        if den.is_zero() {
            return Err(ClockError::NotPositive { span: t.span });
        }
        Ratio::new(big(a)?, den)
    } else if let Some((a, b)) = num.split_once('.') {
        let scale = BigInt::from(10u32).pow(b.len() as u32);
        Ratio::new(big(a)? * &scale + big(b)?, scale)
    } else {
        Ratio::from_integer(big(num)?)
    };
    if neg {
        value = -value;
    }
    let ps = |n: u64| Ratio::from_integer(BigInt::from(n));
    let (is_freq, scale): (bool, Rational) = match t.unit.as_str() {
        "Hz" => (true, ps(1)),
        "kHz" => (true, ps(1_000)),
        "MHz" => (true, ps(1_000_000)),
        "GHz" => (true, ps(1_000_000_000)),
        "fs" => (false, Ratio::new(BigInt::from(1), BigInt::from(1000))),
        "ps" => (false, ps(1)),
        "ns" => (false, ps(1_000)),
        "us" => (false, ps(1_000_000)),
        "ms" => (false, ps(1_000_000_000)),
        _ => (false, ps(1_000_000_000_000)),
    };
    if is_freq {
        if !value.is_positive() {
            return Err(ClockError::NotPositive { span: t.span });
        }
        Ok((ps(1_000_000_000_000) / (value * scale), true))
    } else {
        Ok((value * scale, false))
    }
}

/// At most this many 64-bit words of storage in one channel or CDC FIFO
/// (1 GiB): a depth of 2^30 items of `[u64; 1000]` would ask the runtime
/// for 8 TB and abort the process.
pub const MAX_BUFFER_WORDS: u64 = 1 << 27;

/// The 64-bit words a value of type `t` takes in the runtime's storage:
/// one per scalar (a `bool` takes a word).
fn storage_words(t: &Type) -> u64 {
    match t {
        Type::Bool | Type::Int { .. } | Type::Enum(_) => 1,
        Type::Array(e, n) => storage_words(e).saturating_mul(u64::from(*n)),
        Type::Struct(s) => s
            .fields
            .iter()
            .fold(0u64, |a, (_, t)| a.saturating_add(storage_words(t))),
        Type::Option(e) => storage_words(e).saturating_add(1),
        Type::Error => 0,
    }
}

/// Where a system member is written.
fn member_span(m: &SystemMember) -> Span {
    match m {
        SystemMember::Expose { span, .. }
        | SystemMember::Inst { span, .. }
        | SystemMember::Connect { span, .. }
        | SystemMember::Cdc { span, .. }
        | SystemMember::For { span, .. }
        | SystemMember::If { span, .. } => *span,
    }
}

fn representable(r: &Rational) -> bool {
    let limit = BigInt::from(1u64 << 63);
    r.numer().abs() < limit && r.denom().abs() < limit
}

impl<'e> Elab<'e> {
    /// Elaborates the clocks of the user's module.
    pub fn new(env: &'e mut Env) -> Self {
        let mut e = Elab {
            env,
            clocks: Vec::new(),
            clock_index: HashMap::new(),
            specs: Vec::new(),
            spec_keys: HashMap::new(),
            instances: Vec::new(),
            channels: Vec::new(),
            fifos: Vec::new(),
            sys_stack: Vec::new(),
            excused: HashSet::new(),
            size: 0,
            too_large: false,
            skipped: Vec::new(),
            empty_arrays: Vec::new(),
            diags_at_start: 0,
        };
        e.diags_at_start = e.env.diags.len();
        e.elaborate_clocks();
        e
    }

    fn err(&mut self, e: impl IntoDiagnostic) {
        self.env.diags.push(e.into_diagnostic());
    }

    /// Whether elaboration has stopped: too large, or too many diagnostics.
    fn stopped(&mut self) -> bool {
        if self.env.diags.len().saturating_sub(self.diags_at_start) > MAX_ELAB_DIAGNOSTICS {
            self.too_large = true;
        }
        self.too_large
    }

    /// Counts one more instance, loop iteration or member against
    /// [`MAX_ELABORATED`]; `false` (reported once, at `span`) past it.
    fn grow(&mut self, span: Span) -> bool {
        if self.stopped() {
            return false;
        }
        self.size += 1;
        if self.size > MAX_ELABORATED {
            self.too_large = true;
            self.err(ElabError::TooLarge {
                span,
                limit: MAX_ELABORATED,
            });
            return false;
        }
        true
    }

    fn elaborate_clocks(&mut self) {
        let clocks: Vec<ast::ClockDef> = self
            .env
            .items
            .iter()
            .filter(|e| e.module == 0)
            .filter_map(|e| {
                if let Item::Clock(c) = &e.item {
                    Some(c.clone())
                } else {
                    None
                }
            })
            .collect();
        for c in clocks {
            let first = self.clocks.len();
            let len = match &c.array_len {
                Some(e) => match self
                    .env
                    .const_int(0, &Params::new(), e, "a clock array length")
                {
                    Some(n) if (1..=4096).contains(&n) => {
                        if c.is_list && c.specs.len() as i128 != n {
                            self.err(ClockError::ArrayLength {
                                span: c.name.span.to(e.span),
                                declared: n,
                                given: c.specs.len(),
                            });
                            continue;
                        }
                        Some(n as usize)
                    }
                    Some(n) => {
                        self.err(crate::errors::TypeError::OutOfRange {
                            span: e.span,
                            what: "clock array length",
                            value: n,
                            range: "in 1..=4096",
                        });
                        continue;
                    }
                    None => continue,
                },
                None => {
                    if c.is_list {
                        self.err(ClockError::ArrayLength {
                            span: c.name.span,
                            declared: 1,
                            given: c.specs.len(),
                        });
                        continue;
                    }
                    None
                }
            };
            let count = len.unwrap_or(1);
            let mut ok = true;
            for i in 0..count {
                let spec = if c.is_list { &c.specs[i] } else { &c.specs[0] };
                let Some((period, phase)) = self.clock_spec(spec) else {
                    ok = false;
                    break;
                };
                let name = if len.is_some() {
                    format!("{}[{}]", c.name.name, i)
                } else {
                    c.name.name.clone()
                };
                self.clocks.push(d::Clock {
                    name,
                    period_ps: period,
                    phase_ps: phase,
                    span: spec.span,
                });
            }
            if ok {
                self.clock_index.insert(c.name.name.clone(), (first, len));
            } else {
                self.clocks.truncate(first);
            }
        }
    }

    fn clock_spec(&mut self, spec: &ast::ClockSpec) -> Option<(Rational, Rational)> {
        let period = match time_ps(&spec.rate) {
            Ok((p, _)) if p.is_positive() => p,
            Ok(_) => {
                self.err(ClockError::NotPositive {
                    span: spec.rate.span,
                });
                return None;
            }
            Err(e) => {
                self.err(e);
                return None;
            }
        };
        let phase = match &spec.phase {
            None => Ratio::from_integer(BigInt::zero()),
            Some(t) => match time_ps(t) {
                Ok((_, true)) => {
                    self.err(ClockError::PhaseUnit { span: t.span });
                    return None;
                }
                Ok((p, false)) if p.is_negative() => {
                    self.err(ClockError::NegativePhase { span: t.span });
                    return None;
                }
                Ok((p, false)) => p,
                Err(e) => {
                    self.err(e);
                    return None;
                }
            },
        };
        if !representable(&period) || !representable(&phase) {
            self.err(ClockError::Unrepresentable { span: spec.span });
            return None;
        }
        Some((period, phase))
    }

    /// Parameter values for `item` (a unit or system): defaults, then `args`
    /// evaluated by `eval_arg`.
    fn params_for(
        &mut self,
        item: ItemId,
        args: &[(ast::Ident, Result<Value, ()>, Span)],
        site: Span,
    ) -> Option<(Params, Vec<(String, Value)>)> {
        let module = self.env.items[item].module;
        let gps = match &self.env.items[item].item {
            Item::Unit(u) => u.params.clone(),
            Item::System(s) => s.params.clone(),
            _ => return None,
        };
        let mut params = Params::new();
        let mut list = Vec::new();
        let mut ok = true;
        for (a, _, _) in args {
            if !gps.iter().any(|g| g.name.name == a.name) {
                let suggestion = did_you_mean(&a.name, gps.iter().map(|g| g.name.name.as_str()))
                    .map(str::to_string);
                let help = match suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    // An empty list would read as a help line cut short.
                    None if gps.is_empty() => format!(
                        "`{}` takes no parameters; remove this argument",
                        self.env.items[item].item.name().name
                    ),
                    None => format!(
                        "the parameters are: {}",
                        gps.iter()
                            .map(|g| g.name.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                self.err(ElabError::BadParam {
                    span: a.span,
                    message: format!("no parameter `{}`", a.name),
                    help,
                });
                ok = false;
            }
        }
        for g in &gps {
            let ty = self.env.param_type(module, &params, g);
            let is_type = crate::check::generics::is_type_param(g);
            // A name given several times (`-p N=1 -p N=2`, reported by
            // `top`): every value is checked, so each one's error is shown.
            let mut given = None;
            let mut any = false;
            let mut bad = false;
            for (_, v, span) in args.iter().filter(|(a, _, _)| a.name == g.name.name) {
                any = true;
                let Ok(v) = v else {
                    bad = true;
                    continue;
                };
                let fits_ty = match (&ty, v) {
                    (_, Value::Type(_)) => is_type,
                    (Type::Int { .. }, Value::Int(_) | Value::Wide(_)) => {
                        v.as_big().is_some_and(|x| crate::eval::fits_big(&x, &ty))
                    }
                    (Type::Bool, Value::Bool(_)) => true,
                    _ => false,
                };
                if is_type && !fits_ty {
                    // `-p T=...` from the command line: a value, not a type.
                    self.err(ElabError::BadParam {
                        span: *span,
                        message: format!("parameter `{}` takes a type", g.name.name),
                        help: format!("pass it in the design: `<{} = u16>`", g.name.name),
                    });
                    bad = true;
                    continue;
                }
                if !fits_ty && ty != Type::Error {
                    self.err(ElabError::BadParam {
                        span: *span,
                        message: format!(
                            "value {v} does not fit parameter `{}: {ty}`",
                            g.name.name
                        ),
                        help: format!("give a value of type `{ty}`"),
                    });
                    bad = true;
                    continue;
                }
                given = Some(v.clone());
            }
            if bad {
                ok = false;
                continue;
            }
            let value = match given {
                Some(v) => v,
                None if any => {
                    ok = false;
                    continue;
                }
                None => match &g.default {
                    Some(e) => {
                        match self
                            .env
                            .param_arg(module, &params, g, &ty, e, "a parameter default")
                        {
                            Some(v) => v,
                            None => {
                                ok = false;
                                continue;
                            }
                        }
                    }
                    None => {
                        self.err(ElabError::BadParam {
                            span: site,
                            message: format!("parameter `{}` has no value", g.name.name),
                            help: format!("pass it: `<{} = ...>`", g.name.name),
                        });
                        ok = false;
                        continue;
                    }
                },
            };
            params.insert(g.name.name.clone(), (ty, value.clone()));
            list.push((g.name.name.clone(), value));
        }
        ok.then_some((params, list))
    }

    /// Elaborates a system as the top, with `overrides` of its parameters.
    pub fn top(
        &mut self,
        item: ItemId,
        overrides: &[(String, String)],
    ) -> Option<Vec<(String, Value)>> {
        let name = self.env.items[item].item.name().clone();
        let args: Vec<(ast::Ident, Result<Value, ()>, Span)> = overrides
            .iter()
            .map(|(n, v)| {
                let parsed = parse_cli_value(v);
                if parsed.is_none() {
                    // Digits that do not parse are too large, not unreadable.
                    let digits = v.trim().trim_start_matches('-').replace('_', "");
                    let too_large = !digits.is_empty()
                        && (digits.bytes().all(|c| c.is_ascii_digit())
                            || digits
                                .strip_prefix("0x")
                                .is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit())));
                    let message = if too_large {
                        format!("`-p {n}={v}`: the value does not fit in 64 bits")
                    } else {
                        format!("cannot read `-p {n}={v}`")
                    };
                    self.err(ElabError::BadParam {
                        span: name.span,
                        message,
                        help: "values are integers (decimal, 0x hex, 0b binary, optionally negative) or true/false".into(),
                    });
                }
                (ast::Ident { name: n.clone(), span: name.span }, parsed.ok_or(()), name.span)
            })
            .collect();
        // A name given twice is an error naming every occurrence; each
        // value is still checked by `params_for`.
        let mut seen: Vec<&str> = Vec::new();
        for (n, _) in overrides {
            if seen.contains(&n.as_str()) {
                continue;
            }
            seen.push(n);
            let all: Vec<String> = overrides
                .iter()
                .filter(|(m, _)| m == n)
                .map(|(m, v)| format!("`-p {m}={v}`"))
                .collect();
            if all.len() > 1 {
                self.err(ElabError::BadParam {
                    span: name.span,
                    message: format!(
                        "parameter `{n}` is given {} times: {}",
                        all.len(),
                        all.join(", ")
                    ),
                    help: format!("give `-p {n}=...` once"),
                });
            }
        }
        let repeated = seen.len() < overrides.len();
        let params_list = self.params_for(item, &args, name.span);
        let (params, list) = params_list.filter(|_| !repeated)?;
        self.system(item, params, "top");
        if self.too_large {
            // Half a design: its undriven inputs and missing elements are
            // not the user's to fix.
            return None;
        }
        self.check_design();
        Some(list)
    }

    fn system(&mut self, item: ItemId, params: Params, path: &str) -> HashMap<String, PortView> {
        let Item::System(sys) = self.env.items[item].item.clone() else {
            return HashMap::new();
        };
        let module = self.env.items[item].module;
        self.sys_stack.push(item);
        let mut slots: HashMap<String, Slot> = HashMap::new();
        // `for` loops are unrolled once; instances are declared from the
        // unrolled members, then links made from the same list.
        let mut members = Vec::new();
        self.unroll(module, &sys.members, &Rc::new(params), false, &mut members);
        let skipped = std::mem::take(&mut self.skipped);
        // Taken before the subsystems below are elaborated, put back for
        // this system's links.
        let empty_arrays = std::mem::take(&mut self.empty_arrays);
        self.declare_insts(module, &members, path, &mut slots);
        self.empty_arrays = empty_arrays;
        for (name, span) in skipped {
            slots.entry(name).or_insert(Slot::Failed(span));
        }
        if self.too_large {
            self.sys_stack.pop();
            return HashMap::new();
        }
        for (name, slot) in &slots {
            if let Slot::Array(elems, span) = slot {
                let missing: Vec<String> = elems
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.is_none())
                    .map(|(i, _)| i.to_string())
                    .collect();
                if !missing.is_empty() {
                    self.err(ElabError::InstanceElement {
                        span: *span,
                        message: format!(
                            "element(s) {} of instance array `{name}` never declared",
                            missing.join(", ")
                        ),
                    });
                }
            }
        }
        let mut exposed = Exposed::default();
        self.links(module, &members, &slots, &mut exposed);
        self.empty_arrays.clear();
        self.sys_stack.pop();
        exposed.views
    }

    fn const_in(
        &mut self,
        module: usize,
        params: &Params,
        e: &ast::Expr,
        what: &'static str,
    ) -> Option<i128> {
        self.env.const_int(module, params, e, what)
    }

    /// Flattens a system body: every `for` loop is unrolled (its variable
    /// bound in the members' parameters), other members are listed in
    /// order with the parameters in scope.
    fn unroll<'m>(
        &mut self,
        module: usize,
        members: &'m [SystemMember],
        params: &Rc<Params>,
        in_for: bool,
        out: &mut Vec<Unrolled<'m>>,
    ) {
        for m in members {
            if self.too_large {
                return;
            }
            if let SystemMember::If {
                cond,
                then,
                otherwise,
                ..
            } = m
            {
                // Conditional generate: only the arm the constant picks is
                // declared; both are skipped when it has no value.
                let what = "a system `if` condition";
                match self.env.const_expr(module, params, cond, &Type::Bool, what) {
                    Some(Value::Bool(true)) => self.unroll(module, then, params, in_for, out),
                    Some(Value::Bool(false)) => self.unroll(module, otherwise, params, in_for, out),
                    _ => {
                        skipped_insts(then, &mut self.skipped);
                        skipped_insts(otherwise, &mut self.skipped);
                    }
                }
                continue;
            }
            let SystemMember::For {
                var,
                start,
                end,
                body,
                ..
            } = m
            else {
                if !self.grow(member_span(m)) {
                    return;
                }
                out.push(Unrolled {
                    member: m,
                    params: params.clone(),
                    in_for,
                });
                continue;
            };
            let (Some(a), Some(b)) = (
                self.const_in(module, params, start, "a loop bound"),
                self.const_in(module, params, end, "a loop bound"),
            ) else {
                skipped_insts(body, &mut self.skipped);
                continue;
            };
            if b - a > 1 << 20 {
                self.err(crate::errors::TypeError::OutOfRange {
                    span: end.span,
                    what: "loop length",
                    value: b - a,
                    range: "at most 1048576",
                });
                skipped_insts(body, &mut self.skipped);
                continue;
            }
            if b <= a {
                let mut names = Vec::new();
                skipped_insts(body, &mut names);
                for (name, _) in names {
                    self.empty_arrays.push((name, end.span, a, b));
                }
            }
            for i in a..b {
                if !self.grow(end.span) {
                    return;
                }
                let mut p = (**params).clone();
                p.insert(var.name.clone(), (Type::uint(32), Value::Int(i)));
                self.unroll(module, body, &Rc::new(p), true, out);
            }
        }
    }

    fn declare_insts(
        &mut self,
        module: usize,
        members: &[Unrolled<'_>],
        path: &str,
        slots: &mut HashMap<String, Slot>,
    ) {
        for u in members {
            if self.stopped() {
                return;
            }
            let (params, in_for) = (&*u.params, u.in_for);
            let SystemMember::Inst {
                name,
                index,
                target,
                args,
                clock,
                span,
            } = u.member
            else {
                continue;
            };
            let Some(titem) = self.env.lookup(module, &target.name) else {
                if self.env.broken.contains(&target.name)
                    || self.env.report_ambiguous(module, target)
                {
                    continue;
                }
                let suggestion = did_you_mean(
                    &target.name,
                    self.env.visible(module).iter().map(String::as_str),
                )
                .map(str::to_string);
                self.err(ResolveError::UnknownName {
                    span: target.span,
                    name: target.name.clone(),
                    kind: "unit or system",
                    suggestion,
                });
                continue;
            };
            let arg_vals: Vec<(ast::Ident, Result<Value, ()>, Span)> = args
                .iter()
                .map(|(n, e)| {
                    let v = self.arg_value(module, params, titem, n, e);
                    (n.clone(), v.ok_or(()), e.span)
                })
                .collect();
            // Element or array?
            let (elem_index, array_len) = match index {
                None => (None, None),
                Some(e) => match self.const_in(module, params, e, "an instance index") {
                    Some(v) if in_for => (Some(v), None),
                    Some(v) => (None, Some(v)),
                    None => continue,
                },
            };
            let make = |this: &mut Self, elem: Option<usize>| -> Option<InstRef> {
                let ipath = match elem {
                    Some(i) => format!("{path}.{}[{i}]", name.name),
                    None => format!("{path}.{}", name.name),
                };
                this.instantiate(
                    module, params, titem, target, &arg_vals, clock, *span, &ipath,
                )
            };
            match (elem_index, array_len) {
                (None, None) => {
                    if let Some(prev) = slots.get(&name.name) {
                        let previous = match prev {
                            Slot::One(_, s) | Slot::Array(_, s) | Slot::Failed(s) => *s,
                        };
                        self.err(ResolveError::Duplicate {
                            span: name.span,
                            name: name.name.clone(),
                            previous,
                        });
                        continue;
                    }
                    match make(self, None) {
                        Some(r) => slots.insert(name.name.clone(), Slot::One(r, *span)),
                        None => slots.insert(name.name.clone(), Slot::Failed(*span)),
                    };
                }
                (None, Some(n)) => {
                    if !(1..=1 << 20).contains(&n) {
                        self.err(ElabError::InstanceElement {
                            span: *span,
                            message: format!(
                                "instance array length {n} is out of range: it must be in \
                                 1..=1048576"
                            ),
                        });
                        continue;
                    }
                    if slots.contains_key(&name.name) {
                        self.err(ElabError::InstanceElement {
                            span: *span,
                            message: format!("instance array `{}` is declared twice", name.name),
                        });
                        continue;
                    }
                    let elems: Vec<Option<InstRef>> =
                        (0..n as usize).map(|i| make(self, Some(i))).collect();
                    slots.insert(name.name.clone(), Slot::Array(elems, *span));
                }
                (Some(i), _) => {
                    if !(0..1 << 20).contains(&i) {
                        self.err(ElabError::InstanceElement {
                            span: *span,
                            message: format!(
                                "instance index {i} is out of range: it must be in 0..1048576"
                            ),
                        });
                        continue;
                    }
                    let i = i as usize;
                    let entry = slots
                        .entry(name.name.clone())
                        .or_insert_with(|| Slot::Array(Vec::new(), *span));
                    match entry {
                        Slot::Failed(_) => {}
                        Slot::One(..) => {
                            self.err(ElabError::InstanceElement {
                                span: *span,
                                message: format!(
                                    "`{}` is a single instance, not an array",
                                    name.name
                                ),
                            });
                        }
                        Slot::Array(elems, _) => {
                            if elems.get(i).is_some_and(Option::is_some) {
                                self.err(ElabError::InstanceElement {
                                    span: *span,
                                    message: format!(
                                        "element {i} of `{}` is declared twice",
                                        name.name
                                    ),
                                });
                                continue;
                            }
                            let r = make(self, Some(i));
                            if let Some(Slot::Array(elems, _)) = slots.get_mut(&name.name) {
                                if elems.len() <= i {
                                    elems.resize(i + 1, None);
                                }
                                elems[i] = r;
                            }
                        }
                    }
                }
            }
        }
    }

    fn arg_value(
        &mut self,
        module: usize,
        params: &Params,
        target: ItemId,
        name: &ast::Ident,
        e: &ast::Expr,
    ) -> Option<Value> {
        let tmodule = self.env.items[target].module;
        let gp = match &self.env.items[target].item {
            Item::Unit(u) => u.params.iter().find(|g| g.name.name == name.name).cloned(),
            Item::System(s) => s.params.iter().find(|g| g.name.name == name.name).cloned(),
            _ => None,
        };
        match gp {
            Some(g) => {
                let ty = self.env.param_type(tmodule, &Params::new(), &g);
                self.env
                    .param_arg(module, params, &g, &ty, e, "a parameter value")
            }
            None => Some(Value::Int(0)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn instantiate(
        &mut self,
        _module: usize,
        params: &Params,
        titem: ItemId,
        target: &ast::Ident,
        args: &[(ast::Ident, Result<Value, ()>, Span)],
        clock: &Option<(ast::Ident, Option<ast::Expr>)>,
        span: Span,
        path: &str,
    ) -> Option<InstRef> {
        if !self.grow(span) {
            return None;
        }
        match &self.env.items[titem].item {
            Item::Unit(_) => {
                let Some((cname, cidx)) = clock else {
                    self.err(ElabError::MissingClock {
                        span,
                        name: path.rsplit('.').next().unwrap_or(path).to_string(),
                    });
                    return None;
                };
                let domain = self.clock_ref(cname, cidx.as_ref(), params)?;
                let (p, list) = self.params_for(titem, args, span)?;
                let key = (titem, list);
                let spec = match self.spec_keys.get(&key) {
                    Some(s) => *s,
                    None => {
                        let s = self.env.unit_spec(titem, p);
                        self.specs.push(s);
                        self.spec_keys.insert(key, self.specs.len() - 1);
                        self.specs.len() - 1
                    }
                };
                self.instances.push(d::Instance {
                    path: path.to_string(),
                    spec,
                    domain,
                    span,
                });
                Some(InstRef::Unit(self.instances.len() - 1))
            }
            Item::System(_) => {
                if let Some((c, _)) = clock {
                    self.err(ElabError::ClockOnSystem { span: c.span });
                }
                if let Some(pos) = self.sys_stack.iter().position(|x| *x == titem) {
                    let mut p: Vec<String> = self.sys_stack[pos..]
                        .iter()
                        .map(|i| self.env.items[*i].item.name().name.clone())
                        .collect();
                    p.push(target.name.clone());
                    self.err(ElabError::SystemCycle { span, path: p });
                    return None;
                }
                let (p, _) = self.params_for(titem, args, span)?;
                Some(InstRef::Sub(self.system(titem, p, path)))
            }
            other => {
                let found = crate::check::item_kind(other);
                self.err(ResolveError::WrongKind {
                    span: target.span,
                    name: target.name.clone(),
                    expected: "unit or system",
                    found,
                });
                None
            }
        }
    }

    fn clock_ref(
        &mut self,
        name: &ast::Ident,
        index: Option<&ast::Expr>,
        params: &Params,
    ) -> Option<usize> {
        let Some((first, len)) = self.clock_index.get(&name.name).copied() else {
            let names: Vec<String> = self.clock_index.keys().cloned().collect();
            let suggestion =
                did_you_mean(&name.name, names.iter().map(String::as_str)).map(str::to_string);
            let known =
                self.env.scopes[0].contains_key(&name.name) || self.env.broken.contains(&name.name);
            if !known {
                self.err(ResolveError::UnknownName {
                    span: name.span,
                    name: name.name.clone(),
                    kind: "clock",
                    suggestion,
                });
            }
            return None;
        };
        match (len, index) {
            (None, None) => Some(first),
            (Some(n), Some(e)) => {
                let i = self.env.const_int(0, params, e, "a clock index")?;
                if i < 0 || i >= n as i128 {
                    self.err(crate::errors::TypeError::IndexOutOfRange {
                        span: e.span,
                        index: i,
                        len: n as u64,
                    });
                    return None;
                }
                Some(first + i as usize)
            }
            (Some(_), None) => {
                self.err(crate::errors::TypeError::Mismatch {
                    span: name.span,
                    expected: "one clock (`name[i]`)".into(),
                    found: "a clock array".into(),
                });
                None
            }
            (None, Some(e)) => {
                self.err(crate::errors::TypeError::BadOperand {
                    span: e.span,
                    op: "[]".into(),
                    ty: "a single clock".into(),
                });
                None
            }
        }
    }

    fn endpoint(
        &mut self,
        module: usize,
        params: &Params,
        slots: &HashMap<String, Slot>,
        ep: &ast::Endpoint,
    ) -> Option<Ends> {
        let Some(slot) = slots.get(&ep.inst.name) else {
            if let Some((_, bound, a, b)) = self
                .empty_arrays
                .iter()
                .find(|(n, ..)| *n == ep.inst.name)
                .cloned()
            {
                self.err(ElabError::EmptyInstanceArray {
                    span: ep.inst.span,
                    name: ep.inst.name.clone(),
                    bound,
                    range: format!("{a}..{b}"),
                });
                return None;
            }
            let names: Vec<&str> = slots.keys().map(String::as_str).collect();
            let suggestion = did_you_mean(&ep.inst.name, names).map(str::to_string);
            self.err(ResolveError::UnknownName {
                span: ep.inst.span,
                name: ep.inst.name.clone(),
                kind: "instance",
                suggestion,
            });
            return None;
        };
        let r = match (slot, &ep.index) {
            (Slot::Failed(_), _) => return None,
            (Slot::One(r, _), None) => r.clone(),
            (Slot::Array(elems, _), Some(e)) => {
                let i = self.const_in(module, params, e, "an instance index")?;
                match usize::try_from(i).ok().and_then(|i| elems.get(i)) {
                    Some(Some(r)) => r.clone(),
                    Some(None) => return None,
                    None => {
                        self.err(crate::errors::TypeError::IndexOutOfRange {
                            span: e.span,
                            index: i,
                            len: elems.len() as u64,
                        });
                        return None;
                    }
                }
            }
            (Slot::Array(..), None) => {
                self.err(ElabError::InstanceElement {
                    span: ep.inst.span,
                    message: format!("`{}` is an instance array; name one element", ep.inst.name),
                });
                return None;
            }
            (Slot::One(..), Some(e)) => {
                self.err(ElabError::InstanceElement {
                    span: e.span,
                    message: format!("`{}` is a single instance, not an array", ep.inst.name),
                });
                return None;
            }
        };
        // A port by its name in the instance: a unit's ports (port array
        // elements are named `tx[0]`, ...), or the names a system exposes.
        let view = |me: &Self, name: &str| -> Option<PortView> {
            match &r {
                InstRef::Unit(inst) => {
                    let spec = &me.specs[me.instances[*inst].spec];
                    let pi = spec.ports.iter().position(|p| p.name == name)?;
                    let p = &spec.ports[pi];
                    Some(PortView {
                        port: PortRef {
                            instance: *inst,
                            port: pi,
                        },
                        dir: p.dir,
                        ty: p.ty.clone(),
                        kind: p.kind.clone(),
                        span: ep.span,
                    })
                }
                InstRef::Sub(ports) => ports.get(name).map(|v| PortView {
                    span: ep.span,
                    ..v.clone()
                }),
            }
        };
        let name = &ep.port.name;
        let elements = |me: &Self| -> Vec<PortView> {
            (0..)
                .map_while(|i| view(me, &format!("{name}[{i}]")))
                .collect()
        };
        if let Some(e) = &ep.port_index {
            let i = self.const_in(module, params, e, "a port index")?;
            if let Some(v) = view(self, &format!("{name}[{i}]")) {
                return Some(Ends {
                    views: vec![v],
                    array: false,
                });
            }
            let len = elements(self).len();
            if len > 0 {
                self.err(crate::errors::TypeError::IndexOutOfRange {
                    span: e.span,
                    index: i,
                    len: len as u64,
                });
            } else if view(self, name).is_some() {
                self.err(ElabError::PortArrayLink {
                    span: e.span,
                    message: format!(
                        "`{}.{name}` is a single port, not a port array",
                        ep.inst.name
                    ),
                    label: "indexes a single port".into(),
                });
            } else {
                self.unknown_port(&r, ep);
            }
            return None;
        }
        if let Some(v) = view(self, name) {
            return Some(Ends {
                views: vec![v],
                array: false,
            });
        }
        let views = elements(self);
        if views.is_empty() {
            self.unknown_port(&r, ep);
            return None;
        }
        Some(Ends { views, array: true })
    }

    /// Reports a port name the instance does not have, with the nearest
    /// name it does (a port array by its own name).
    fn unknown_port(&mut self, r: &InstRef, ep: &ast::Endpoint) {
        let names: Vec<String> = match r {
            InstRef::Unit(inst) => self.specs[self.instances[*inst].spec]
                .ports
                .iter()
                .map(|p| p.name.clone())
                .collect(),
            InstRef::Sub(ports) => ports.keys().cloned().collect(),
        };
        let mut names: Vec<&str> = names
            .iter()
            .map(|n| n.split('[').next().unwrap_or(n))
            .collect();
        names.sort_unstable();
        names.dedup();
        let suggestion = did_you_mean(&ep.port.name, names).map(str::to_string);
        self.err(ResolveError::UnknownName {
            span: ep.port.span,
            name: ep.port.name.clone(),
            kind: "port",
            suggestion,
        });
    }

    fn port_name(&self, p: PortRef) -> String {
        let inst = &self.instances[p.instance];
        format!("{}.{}", inst.path, self.specs[inst.spec].ports[p.port].name)
    }

    /// A system's `expose`, `connect` and `cdc` members, in order (its
    /// instances are elaborated by then): each checked and recorded, or
    /// reported.
    fn links(
        &mut self,
        module: usize,
        members: &[Unrolled<'_>],
        slots: &HashMap<String, Slot>,
        exposed: &mut Exposed,
    ) {
        for u in members {
            let params = &*u.params;
            match u.member {
                SystemMember::For { .. } | SystemMember::If { .. } | SystemMember::Inst { .. } => {}
                SystemMember::Expose { .. } => {
                    self.expose(module, params, slots, u.member, exposed)
                }
                SystemMember::Connect { .. } | SystemMember::Cdc { .. } => {
                    self.link(module, params, slots, u.member)
                }
            }
        }
    }

    /// `expose dir name: T = inst.port;`: the port the system shows outside.
    fn expose(
        &mut self,
        module: usize,
        params: &Params,
        slots: &HashMap<String, Slot>,
        member: &SystemMember,
        exposed: &mut Exposed,
    ) {
        let SystemMember::Expose {
            dir,
            name,
            len,
            ty,
            target,
            ..
        } = member
        else {
            return;
        };
        let want = self.env.resolve_type(module, params, ty);
        let Some(Ends { views, array }) = self.endpoint(module, params, slots, target) else {
            return;
        };
        // A failed expose was reported: its inner inputs are not reported
        // as undriven as well.
        let excuse = |me: &mut Self, views: &[PortView]| {
            me.excused.extend(views.iter().map(|v| v.port));
        };
        match len {
            None if array => {
                excuse(self, &views);
                self.err(ElabError::PortArrayLink {
                    span: target.span,
                    message: format!(
                        "`{}.{}` is a port array of {}: expose it whole (`{} {}[{}]: ...`), or one element",
                        target.inst.name,
                        target.port.name,
                        views.len(),
                        if *dir == Dir::In { "in" } else { "out" },
                        name.name,
                        views.len()
                    ),
                    label: "a port array".into(),
                });
            }
            None => self.expose_one(name.name.clone(), views[0].clone(), member, &want, exposed),
            Some(e) => {
                let Some(n) = self.const_in(module, params, e, "a port array length") else {
                    return;
                };
                if !array || n != views.len() as i128 {
                    excuse(self, &views);
                    let what = if array {
                        format!("a port array of {}", views.len())
                    } else {
                        "a single port".to_string()
                    };
                    self.err(ElabError::PortArrayLink {
                        span: target.span,
                        message: format!(
                            "`{}[{n}]` exposes `{}.{}`, which is {what}",
                            name.name, target.inst.name, target.port.name
                        ),
                        label: what,
                    });
                    return;
                }
                for (i, v) in views.into_iter().enumerate() {
                    let element = format!("{}[{i}]", name.name);
                    self.expose_one(element, v, member, &want, exposed);
                }
            }
        }
    }

    /// One exposed port: `outside` names `v` (the port `member` exposes,
    /// or one element of it).
    fn expose_one(
        &mut self,
        outside: String,
        v: PortView,
        member: &SystemMember,
        want: &Type,
        exposed: &mut Exposed,
    ) {
        let SystemMember::Expose {
            dir,
            name,
            ty,
            target,
            span,
            ..
        } = member
        else {
            return;
        };
        if v.dir != *dir {
            self.err(ElabError::Direction {
                span: target.span,
                port: self.port_name(v.port),
                is: dir_word(v.dir),
                needs: dir_word(*dir),
            });
            return;
        }
        if v.ty != *want && *want != Type::Error {
            self.err(crate::errors::TypeError::Mismatch {
                span: ty.span,
                expected: v.ty.to_string(),
                found: want.to_string(),
            });
            return;
        }
        // `rx` and `rx[0]` are one name to a link (`sub.rx`).
        let other = match outside.split_once('[') {
            Some((base, _)) => base.to_string(),
            None => format!("{outside}[0]"),
        };
        if let Some(prev) = exposed.names.get(&outside).or(exposed.names.get(&other)) {
            self.err(ResolveError::Duplicate {
                span: name.span,
                name: outside,
                previous: *prev,
            });
            return;
        }
        if let Some(prev) = exposed.spans.get(&v.port) {
            self.err(ElabError::ExposedTwice {
                span: *span,
                previous: *prev,
                what: format!("port `{}`", self.port_name(v.port)),
            });
            return;
        }
        exposed.names.insert(outside.clone(), name.span);
        exposed.spans.insert(v.port, *span);
        exposed.views.insert(outside, v);
    }

    /// The two ends of a `connect` or `cdc`, resolved, when both exist
    /// and go from an output to an input (else reported). The reader's
    /// port counts as driven even when the writer is wrong, so it draws no
    /// second error for being unconnected.
    fn link_ends(
        &mut self,
        module: usize,
        params: &Params,
        slots: &HashMap<String, Slot>,
        from: &ast::Endpoint,
        to: &ast::Endpoint,
    ) -> Option<Vec<(PortView, PortView)>> {
        let a = self.endpoint(module, params, slots, from);
        let b = self.endpoint(module, params, slots, to);
        if let Some(b) = &b {
            self.excused.extend(b.views.iter().map(|v| v.port));
        }
        let (a, b) = (a?, b?);
        if a.array != b.array || a.views.len() != b.views.len() {
            let what = |e: &Ends, ep: &ast::Endpoint| {
                if e.array {
                    format!(
                        "port array `{}.{}` of {}",
                        ep.inst.name,
                        ep.port.name,
                        e.views.len()
                    )
                } else {
                    format!("the single port `{}.{}`", ep.inst.name, ep.port.name)
                }
            };
            self.err(ElabError::PortArrayLink {
                span: from.span.to(to.span),
                message: format!("this link joins {} to {}", what(&a, from), what(&b, to)),
                label: "ends of different sizes".into(),
            });
            return None;
        }
        let mut pairs = Vec::with_capacity(a.views.len());
        for (a, b) in a.views.into_iter().zip(b.views) {
            if self.directions(&a, &b) {
                pairs.push((a, b));
            }
        }
        Some(pairs)
    }

    /// A `connect` or `cdc`: a channel or FIFO per pair of ports its ends
    /// name (one pair, or one per element of two port arrays).
    fn link(
        &mut self,
        module: usize,
        params: &Params,
        slots: &HashMap<String, Slot>,
        member: &SystemMember,
    ) {
        let (SystemMember::Connect { from, to, .. } | SystemMember::Cdc { from, to, .. }) = member
        else {
            return;
        };
        let Some(pairs) = self.link_ends(module, params, slots, from, to) else {
            return;
        };
        for (a, b) in pairs {
            match member {
                SystemMember::Connect { .. } => self.connect(module, params, member, a, b),
                _ => self.cdc(module, params, member, a, b),
            }
        }
    }

    /// `connect a.out -> b.in latency L capacity C;`: a same-domain
    /// channel between two ports already resolved.
    fn connect(
        &mut self,
        module: usize,
        params: &Params,
        member: &SystemMember,
        a: PortView,
        b: PortView,
    ) {
        let SystemMember::Connect {
            to,
            latency,
            capacity,
            span,
            ..
        } = member
        else {
            return;
        };
        if matches!(b.kind, PortKind::CdcRegistered | PortKind::CdcFwft) {
            self.err(ElabError::FifoSide {
                span: to.span,
                message: format!("`connect` into `cdc` input `{}`", self.port_name(b.port)),
                help: "a `cdc` input is fed by a CDC FIFO: write `cdc a.out -> b.in depth 16;`, or drop `cdc` from the input",
            });
            return;
        }
        if a.ty != b.ty {
            self.err(ElabError::PayloadMismatch {
                span: *span,
                from: a.ty.to_string(),
                to: b.ty.to_string(),
            });
            return;
        }
        let da = self.instances[a.port.instance].domain;
        let db = self.instances[b.port.instance].domain;
        if da != db {
            self.err(ElabError::CrossDomain {
                span: *span,
                from: self.port_name(a.port),
                from_dom: self.clocks[da].name.clone(),
                from_span: self.instances[a.port.instance].span,
                to: self.port_name(b.port),
                to_dom: self.clocks[db].name.clone(),
                to_span: self.instances[b.port.instance].span,
            });
            return;
        }
        let lat = match latency {
            Some(e) => self.const_in(module, params, e, "a latency"),
            None => Some(1),
        };
        let Some(lat) = lat else { return };
        if !(0..=1 << 20).contains(&lat) {
            let s = latency.as_ref().map_or(*span, |e| e.span);
            self.err(ElabError::ChannelParam {
                span: s,
                what: "latency",
                value: lat,
                range: "in 0..=1048576",
            });
            return;
        }
        let cap = match capacity {
            Some(e) => self.const_in(module, params, e, "a capacity"),
            None => Some(lat + 1),
        };
        let Some(cap) = cap else { return };
        if !(1..=1 << 24).contains(&cap) {
            let s = capacity.as_ref().map_or(*span, |e| e.span);
            self.err(ElabError::ChannelParam {
                span: s,
                what: "capacity",
                value: cap,
                range: "in 1..=16777216",
            });
            return;
        }
        let words = storage_words(&a.ty).saturating_mul(cap as u64);
        if words > MAX_BUFFER_WORDS {
            let s = capacity.as_ref().map_or(*span, |e| e.span);
            self.err(ElabError::ChannelParam {
                span: s,
                what: "channel storage in 64-bit words (capacity x payload)",
                value: i128::from(words),
                range: "at most 134217728 (1 GiB)",
            });
            return;
        }
        self.channels.push(d::Channel {
            from: a.port,
            to: b.port,
            latency: lat as u32,
            capacity: cap as u32,
            span: *span,
        });
    }

    /// `cdc a.out -> b.in depth D sync S;`: a CDC FIFO between two ports
    /// already resolved.
    fn cdc(
        &mut self,
        module: usize,
        params: &Params,
        member: &SystemMember,
        a: PortView,
        b: PortView,
    ) {
        let SystemMember::Cdc {
            from,
            to,
            depth,
            sync,
            span,
        } = member
        else {
            return;
        };
        let style = match b.kind {
            PortKind::CdcRegistered => d::ReadStyle::Registered,
            PortKind::CdcFwft => d::ReadStyle::Fwft,
            _ => {
                self.err(ElabError::FifoSide {
                    span: to.span,
                    message: format!("`cdc` into input `{}`, which is not declared `cdc`", self.port_name(b.port)),
                    help: "declare the reader `in name: T cdc;` (or `cdc fwft`), or use `connect` within one domain",
                });
                return;
            }
        };
        if let PortKind::Out { rate } = a.kind
            && rate > 1
        {
            self.err(ElabError::FifoSide {
                span: from.span,
                message: format!(
                    "output `{}` has rate {rate}, but a CDC FIFO takes one write per edge",
                    self.port_name(a.port)
                ),
                help: "feed the FIFO from an output of rate 1",
            });
            return;
        }
        if a.ty != b.ty {
            self.err(ElabError::PayloadMismatch {
                span: *span,
                from: a.ty.to_string(),
                to: b.ty.to_string(),
            });
            return;
        }
        if self.fifos.iter().any(|f| f.reader == b.port) {
            self.err(ElabError::FifoSide {
                span: to.span,
                message: format!(
                    "`cdc` input `{}` already has a FIFO",
                    self.port_name(b.port)
                ),
                help: "a FIFO has one reader port and a reader port one FIFO; add another input",
            });
            return;
        }
        let Some(dv) = self.const_in(module, params, depth, "a FIFO depth") else {
            return;
        };
        if !(2..=1 << 30).contains(&dv) || (dv & (dv - 1)) != 0 {
            self.err(ElabError::CdcDepth {
                span: depth.span,
                depth: dv,
            });
            return;
        }
        let words = storage_words(&a.ty).saturating_mul(dv as u64);
        if words > MAX_BUFFER_WORDS {
            self.err(ElabError::ChannelParam {
                span: depth.span,
                what: "FIFO storage in 64-bit words (depth x payload)",
                value: i128::from(words),
                range: "at most 134217728 (1 GiB)",
            });
            return;
        }
        let sv = match sync {
            Some(e) => self.const_in(module, params, e, "a synchronizer length"),
            None => Some(2),
        };
        let Some(sv) = sv else { return };
        if !(2..=64).contains(&sv) {
            self.err(ElabError::SyncLength {
                span: sync.as_ref().map_or(*span, |e| e.span),
                sync: sv,
            });
            return;
        }
        self.fifos.push(d::CdcFifo {
            writer: a.port,
            reader: b.port,
            depth: dv as u32,
            sync: sv as u32,
            style,
            span: *span,
        });
    }

    fn directions(&mut self, a: &PortView, b: &PortView) -> bool {
        let mut ok = true;
        if a.dir != Dir::Out {
            self.err(ElabError::Direction {
                span: a.span,
                port: self.port_name(a.port),
                is: "input",
                needs: "output",
            });
            ok = false;
        }
        if b.dir != Dir::In {
            self.err(ElabError::Direction {
                span: b.span,
                port: self.port_name(b.port),
                is: "output",
                needs: "input",
            });
            ok = false;
        }
        ok
    }

    /// Whole-design checks: undriven inputs and zero-latency cycles.
    fn check_design(&mut self) {
        let driven: HashSet<PortRef> = self
            .channels
            .iter()
            .map(|c| c.to)
            .chain(self.fifos.iter().map(|f| f.reader))
            .collect();
        for (i, inst) in self.instances.iter().enumerate() {
            // Undriven elements of a port array, reported together.
            let mut elements: Vec<(&str, Vec<usize>)> = Vec::new();
            for (pi, p) in self.specs[inst.spec].ports.iter().enumerate() {
                let r = PortRef {
                    instance: i,
                    port: pi,
                };
                if p.dir != Dir::In || driven.contains(&r) || self.excused.contains(&r) {
                    continue;
                }
                let element = p
                    .name
                    .strip_suffix(']')
                    .and_then(|n| n.split_once('['))
                    .and_then(|(a, k)| Some((a, k.parse::<usize>().ok()?)));
                match element {
                    Some((array, k)) => match elements.iter_mut().find(|(a, _)| *a == array) {
                        Some((_, ks)) => ks.push(k),
                        None => elements.push((array, vec![k])),
                    },
                    None => {
                        let port = format!("{}.{}", inst.path, p.name);
                        self.env.diags.push(
                            ElabError::Undriven {
                                span: inst.span,
                                port,
                            }
                            .into_diagnostic(),
                        );
                    }
                }
            }
            for (array, ks) in elements {
                self.env.diags.push(
                    ElabError::UndrivenElements {
                        span: inst.span,
                        array: format!("{}.{array}", inst.path),
                        elements: ks,
                    }
                    .into_diagnostic(),
                );
            }
        }
        // Zero-latency cycle: DFS over instances.
        let n = self.instances.len();
        let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (ci, c) in self.channels.iter().enumerate() {
            if c.latency == 0 {
                adj[c.from.instance].push((c.to.instance, ci));
            }
        }
        let mut state = vec![0u8; n];
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            let mut path: Vec<usize> = vec![start];
            state[start] = 1;
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if *next < adj[node].len() {
                    let (to, ci) = adj[node][*next];
                    *next += 1;
                    if state[to] == 1 {
                        let pos = path.iter().position(|x| *x == to).unwrap_or(0);
                        let mut names: Vec<String> = path[pos..]
                            .iter()
                            .map(|i| self.instances[*i].path.clone())
                            .collect();
                        names.push(self.instances[to].path.clone());
                        let span = self.channels[ci].span;
                        self.env.diags.push(
                            ElabError::ZeroLatencyCycle { span, path: names }.into_diagnostic(),
                        );
                        return;
                    } else if state[to] == 0 {
                        state[to] = 1;
                        stack.push((to, 0));
                        path.push(to);
                    }
                } else {
                    state[node] = 2;
                    stack.pop();
                    path.pop();
                }
            }
        }
    }
}

fn dir_word(d: Dir) -> &'static str {
    match d {
        Dir::In => "input",
        Dir::Out => "output",
    }
}

/// Reads a `-p NAME=VALUE` value: an integer (decimal, `0x`, `0b`, optional
/// `-`) or `true`/`false`.
pub fn parse_cli_value(v: &str) -> Option<Value> {
    let v = v.trim().replace('_', "");
    match v.as_str() {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v.as_str()),
    };
    let n = if let Some(h) = body.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b") {
        u64::from_str_radix(b, 2).ok()?
    } else {
        body.parse::<u64>().ok()?
    };
    let n = i128::from(n);
    Some(Value::Int(if neg { -n } else { n }))
}
