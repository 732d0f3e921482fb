//! Name resolution, types and typed bodies.
//!
//! [`Env`] holds every module (the user's files form module 0; each
//! `use std::NAME` loads one embedded standard-library module), resolves
//! names per module, evaluates constants, checks functions once, and checks a
//! unit's tick once per specialization (concrete parameter values).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::ast::{
    self, BinOp, Cond, Dir, ExprKind as A, Item, Pattern, PortKindAst, StmtKind as S, UnOp,
    UnitMember,
};
use crate::design::{self as d, Expr, ExprKind, PlaceElem, PortKind, Stmt, StmtKind, Type, Value};
use crate::diag::{Diagnostic, IntoDiagnostic, did_you_mean};
use crate::errors::{ResolveError, TypeError};
use crate::eval::{EvalError, eval, fits, wrap};
use crate::span::{SourceMap, Span};
use rustc_hash::{FxHashMap, FxHashSet};

/// The largest value a type may hold, in bits (arrays are state, not memory).
pub const MAX_TYPE_BITS: u64 = 1 << 24;

/// The most scalar values one `trace` statement may record (E0326). The
/// recorder keeps a trace record's values inline in a fixed-size record
/// (`chronon_record::MAX_ARGS`, which a test in `tests/` keeps equal to this),
/// so a larger trace is rejected here rather than when a recording starts.
pub const MAX_TRACE_VALUES: u64 = 8;

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
/// aggregates the same way). Saturates instead of overflowing on huge arrays.
fn trace_values(ty: &Type) -> u64 {
    match ty {
        Type::Bool | Type::Int { .. } | Type::Enum(_) => 1,
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

/// The checking environment shared by all phases.
pub struct Env {
    /// Every item of every module.
    pub items: Vec<ItemEntry>,
    /// Per module: name -> item.
    pub scopes: Vec<FxHashMap<String, ItemId>>,
    /// Module names (`""` for the user's files, else the std module name).
    pub module_names: Vec<String>,
    /// Diagnostics so far.
    pub diags: Vec<Diagnostic>,
    /// Items referenced, per referencing module.
    pub used: HashSet<(usize, ItemId)>,
    consts: HashMap<ItemId, Option<(Type, Value)>>,
    const_stack: Vec<ItemId>,
    types: HashMap<ItemId, Type>,
    type_stack: Vec<ItemId>,
    fn_ids: HashMap<ItemId, Option<usize>>,
    fn_stack: Vec<ItemId>,
    /// Checked functions; [`ExprKind::Call`] indexes this.
    pub functions: Vec<d::Function>,
    /// Names of items that failed to parse (already reported): a use of one
    /// is not reported again as an unknown name.
    pub broken: FxHashSet<String>,
}

impl Env {
    /// An environment over the user's modules (already parsed); loads the
    /// standard library modules they `use`.
    pub fn new(sources: &mut SourceMap, user: Vec<ast::Module>) -> Env {
        let mut env = Env {
            items: Vec::new(),
            scopes: vec![FxHashMap::default()],
            module_names: vec![String::new()],
            diags: Vec::new(),
            used: HashSet::new(),
            consts: HashMap::new(),
            const_stack: Vec::new(),
            types: HashMap::new(),
            type_stack: Vec::new(),
            fn_ids: HashMap::new(),
            fn_stack: Vec::new(),
            functions: Vec::new(),
            broken: FxHashSet::default(),
        };
        env.broken = user.iter().flat_map(|m| m.broken.iter().cloned()).collect();
        let items: Vec<Item> = user.into_iter().flat_map(|m| m.items).collect();
        env.add_items(0, items);
        env.resolve_uses(sources, 0);
        env
    }

    fn add_items(&mut self, module: usize, items: Vec<Item>) {
        for item in items {
            let id = self.items.len();
            if !matches!(item, Item::Use(_)) {
                let name = item.name().clone();
                if let Some(prev) = self.scopes[module].get(&name.name) {
                    let previous = self.items[*prev].item.name().span;
                    self.diags.push(
                        ResolveError::Duplicate {
                            span: name.span,
                            name: name.name.clone(),
                            previous,
                        }
                        .into_diagnostic(),
                    );
                } else {
                    self.scopes[module].insert(name.name.clone(), id);
                }
            }
            self.items.push(ItemEntry { module, item });
        }
    }

    fn load_std(&mut self, sources: &mut SourceMap, name: &str) -> Option<usize> {
        if let Some(m) = self.module_names.iter().position(|n| n == name) {
            return Some(m);
        }
        let text = crate::stdlib::source(name)?;
        let file = sources.add(format!("std/{name}.chr"), text);
        let (module_ast, diags) = crate::parse::parse_file(file, text);
        self.diags.extend(diags);
        self.broken.extend(module_ast.broken.iter().cloned());
        let m = self.scopes.len();
        self.scopes.push(FxHashMap::default());
        self.module_names.push(name.to_string());
        self.add_items(m, module_ast.items);
        self.resolve_uses(sources, m);
        Some(m)
    }

    fn resolve_uses(&mut self, sources: &mut SourceMap, module: usize) {
        let uses: Vec<ast::UseItem> = self
            .items
            .iter()
            .filter(|e| e.module == module)
            .filter_map(|e| {
                if let Item::Use(u) = &e.item {
                    Some(u.clone())
                } else {
                    None
                }
            })
            .collect();
        for u in uses {
            let first = &u.path[0];
            if first.name != "std" || u.path.len() > 3 {
                self.diags.push(
                    ResolveError::UnknownModule {
                        span: first.span,
                        name: first.name.clone(),
                        available: crate::stdlib::names().join(", "),
                    }
                    .into_diagnostic(),
                );
                continue;
            }
            let mname = &u.path[1];
            let Some(m) = self.load_std(sources, &mname.name) else {
                self.diags.push(
                    ResolveError::UnknownModule {
                        span: mname.span,
                        name: mname.name.clone(),
                        available: crate::stdlib::names().join(", "),
                    }
                    .into_diagnostic(),
                );
                continue;
            };
            let wanted: Vec<(String, ItemId)> = if let Some(item) = u.path.get(2) {
                match self.scopes[m].get(&item.name) {
                    Some(id) => vec![(item.name.clone(), *id)],
                    None => {
                        let suggestion =
                            did_you_mean(&item.name, self.scopes[m].keys().map(String::as_str))
                                .map(str::to_string);
                        self.diags.push(
                            ResolveError::UnknownImport {
                                span: item.span,
                                module: mname.name.clone(),
                                name: item.name.clone(),
                                suggestion,
                            }
                            .into_diagnostic(),
                        );
                        continue;
                    }
                }
            } else {
                self.scopes[m]
                    .iter()
                    .filter(|(_, id)| self.items[**id].module == m)
                    .map(|(n, id)| (n.clone(), *id))
                    .collect()
            };
            for (n, id) in wanted {
                if let Some(prev) = self.scopes[module].get(&n) {
                    if *prev != id {
                        let previous = self.items[*prev].item.name().span;
                        self.diags.push(
                            ResolveError::Duplicate {
                                span: u.span,
                                name: n.clone(),
                                previous,
                            }
                            .into_diagnostic(),
                        );
                    }
                } else {
                    self.scopes[module].insert(n, id);
                }
            }
        }
    }

    /// Looks a name up in a module's scope and records the use.
    pub fn lookup(&mut self, module: usize, name: &str) -> Option<ItemId> {
        let id = *self.scopes[module].get(name)?;
        self.used.insert((module, id));
        Some(id)
    }

    /// Visible item names of a module, for suggestions.
    pub fn visible(&self, module: usize) -> Vec<String> {
        self.scopes[module].keys().cloned().collect()
    }

    fn unknown(&mut self, module: usize, ident: &ast::Ident, kind: &'static str, extra: &[String]) {
        if self.broken.contains(&ident.name) {
            return;
        }
        let mut cands = self.visible(module);
        cands.extend(extra.iter().cloned());
        let suggestion =
            did_you_mean(&ident.name, cands.iter().map(String::as_str)).map(str::to_string);
        self.diags.push(
            ResolveError::UnknownName {
                span: ident.span,
                name: ident.name.clone(),
                kind,
                suggestion,
            }
            .into_diagnostic(),
        );
    }

    /// Warns about `use` items of the user's module whose imports are unused.
    pub fn lint_imports(&mut self) {
        let mut warnings = Vec::new();
        for e in self.items.iter().filter(|e| e.module == 0) {
            let Item::Use(u) = &e.item else { continue };
            let Some(m) = u
                .path
                .get(1)
                .and_then(|n| self.module_names.iter().position(|x| *x == n.name))
            else {
                continue;
            };
            let any_used = match u.path.get(2) {
                Some(item) => match self.scopes[m].get(&item.name) {
                    Some(id) => self.used.contains(&(0, *id)),
                    None => continue,
                },
                None => self
                    .used
                    .iter()
                    .any(|(um, id)| *um == 0 && self.items[*id].module == m),
            };
            if !any_used {
                warnings.push(ResolveError::UnusedImport { span: u.span }.into_diagnostic());
            }
        }
        self.diags.extend(warnings);
    }

    // ------------------------------------------------------------ types

    /// Resolves a written type.
    pub fn resolve_type(&mut self, module: usize, params: &Params, t: &ast::TypeExpr) -> Type {
        match &t.kind {
            ast::TypeExprKind::Array(elem, len) => {
                let elem = self.resolve_type(module, params, elem);
                match self.const_int(module, params, len, "an array length") {
                    Some(n)
                        if (1..=1 << 20).contains(&n)
                            && elem.bit_width().saturating_mul(n as u64) <= MAX_TYPE_BITS =>
                    {
                        Type::Array(Box::new(elem), n as u32)
                    }
                    Some(n) if (1..=1 << 20).contains(&n) => {
                        self.diags.push(
                            TypeError::OutOfRange {
                                span: len.span,
                                what: "array length",
                                value: n,
                                range: "small enough that the whole array has at most 2^24 bits",
                            }
                            .into_diagnostic(),
                        );
                        Type::Error
                    }
                    Some(n) => {
                        self.diags.push(
                            TypeError::OutOfRange {
                                span: len.span,
                                what: "array length",
                                value: n,
                                range: "in 1..=1048576",
                            }
                            .into_diagnostic(),
                        );
                        Type::Error
                    }
                    None => Type::Error,
                }
            }
            ast::TypeExprKind::Named(id) => {
                let n = id.name.as_str();
                if n == "bool" {
                    return Type::Bool;
                }
                if let Some(rest) = n.strip_prefix('u').or_else(|| n.strip_prefix('i'))
                    && !rest.is_empty()
                    && rest.chars().all(|c| c.is_ascii_digit())
                {
                    return match rest.parse::<u32>() {
                        Ok(w) if (1..=64).contains(&w) => Type::Int {
                            signed: n.starts_with('i'),
                            width: w,
                        },
                        _ => {
                            self.diags.push(
                                TypeError::BadWidth {
                                    span: id.span,
                                    name: n.to_string(),
                                }
                                .into_diagnostic(),
                            );
                            Type::Error
                        }
                    };
                }
                match self.lookup(module, n) {
                    Some(item) => self.item_type(item, id),
                    None => {
                        self.unknown(module, id, "type", &["bool".into(), "u32".into()]);
                        Type::Error
                    }
                }
            }
        }
    }

    pub(crate) fn item_type(&mut self, item: ItemId, use_site: &ast::Ident) -> Type {
        if let Some(t) = self.types.get(&item) {
            return t.clone();
        }
        let module = self.items[item].module;
        let t = match self.items[item].item.clone() {
            Item::Enum(e) => {
                let n = e.variants.len().max(1) as u64;
                let width = (64 - (n - 1).leading_zeros()).max(1);
                let mut seen: HashMap<&str, Span> = HashMap::new();
                for v in &e.variants {
                    if let Some(prev) = seen.insert(&v.name, v.span) {
                        self.diags.push(
                            ResolveError::Duplicate {
                                span: v.span,
                                name: v.name.clone(),
                                previous: prev,
                            }
                            .into_diagnostic(),
                        );
                    }
                }
                Type::Enum(Arc::new(d::EnumType {
                    name: e.name.name.clone(),
                    variants: e.variants.iter().map(|v| v.name.clone()).collect(),
                    width,
                }))
            }
            Item::Struct(s) => {
                if self.type_stack.contains(&item) {
                    self.diags.push(
                        ResolveError::Recursion {
                            span: use_site.span,
                            cycle: vec![s.name.name.clone(), s.name.name.clone()],
                        }
                        .into_diagnostic(),
                    );
                    return Type::Error;
                }
                self.type_stack.push(item);
                let mut fields: Vec<(String, Type)> = Vec::new();
                let mut seen: HashMap<String, Span> = HashMap::new();
                for (n, t) in &s.fields {
                    if let Some(prev) = seen.insert(n.name.clone(), n.span) {
                        self.diags.push(
                            ResolveError::Duplicate {
                                span: n.span,
                                name: n.name.clone(),
                                previous: prev,
                            }
                            .into_diagnostic(),
                        );
                    }
                    let ft = self.resolve_type(module, &Params::new(), t);
                    fields.push((n.name.clone(), ft));
                }
                self.type_stack.pop();
                Type::Struct(Arc::new(d::StructType {
                    name: s.name.name.clone(),
                    fields,
                }))
            }
            other => {
                self.diags.push(
                    ResolveError::WrongKind {
                        span: use_site.span,
                        name: use_site.name.clone(),
                        expected: "type",
                        found: item_kind(&other),
                    }
                    .into_diagnostic(),
                );
                return Type::Error;
            }
        };
        self.types.insert(item, t.clone());
        t
    }

    // ------------------------------------------------------------ constants

    /// The value of a global constant, evaluated once.
    pub fn const_value(&mut self, item: ItemId, use_site: Span) -> Option<(Type, Value)> {
        if let Some(v) = self.consts.get(&item) {
            return v.clone();
        }
        let Item::Const(c) = self.items[item].item.clone() else {
            return None;
        };
        if let Some(pos) = self.const_stack.iter().position(|x| *x == item) {
            let mut path: Vec<String> = self.const_stack[pos..]
                .iter()
                .map(|i| self.items[*i].item.name().name.clone())
                .collect();
            path.push(c.name.name.clone());
            self.diags.push(
                ResolveError::ConstCycle {
                    span: use_site,
                    path,
                }
                .into_diagnostic(),
            );
            self.consts.insert(item, None);
            return None;
        }
        self.const_stack.push(item);
        let module = self.items[item].module;
        let ty = self.resolve_type(module, &Params::new(), &c.ty);
        let v = self.const_expr(module, &Params::new(), &c.value, &ty, "a constant");
        self.const_stack.pop();
        let r = v.map(|v| (ty, v));
        self.consts.insert(item, r.clone());
        r
    }

    /// Checks `e` against `ty` in a constant context and evaluates it.
    pub fn const_expr(
        &mut self,
        module: usize,
        params: &Params,
        e: &ast::Expr,
        ty: &Type,
        what: &'static str,
    ) -> Option<Value> {
        let mut cx = BodyCx::new(self, module, params.clone(), None, BodyKind::Const);
        let te = cx.check(e, Some(ty));
        drop(cx);
        if te.ty == Type::Error {
            return None;
        }
        match eval(&te) {
            Ok(v) => Some(v),
            Err(EvalError::NotConstant) => {
                self.diags
                    .push(TypeError::NotConstant { span: e.span, what }.into_diagnostic());
                None
            }
            Err(EvalError::IndexOutOfRange) => {
                self.diags.push(
                    TypeError::IndexOutOfRange {
                        span: e.span,
                        index: -1,
                        len: 0,
                    }
                    .into_diagnostic(),
                );
                None
            }
        }
    }

    /// A constant integer of any integer type (untyped literals are taken as `u64`...`i64` as needed).
    pub fn const_int(
        &mut self,
        module: usize,
        params: &Params,
        e: &ast::Expr,
        what: &'static str,
    ) -> Option<i128> {
        let mut cx = BodyCx::new(self, module, params.clone(), None, BodyKind::Const);
        let te = cx.check_integer(e);
        drop(cx);
        if te.ty == Type::Error {
            return None;
        }
        if !te.ty.is_int() {
            self.diags.push(
                TypeError::Mismatch {
                    span: e.span,
                    expected: "an integer".into(),
                    found: te.ty.to_string(),
                }
                .into_diagnostic(),
            );
            return None;
        }
        match eval(&te) {
            Ok(v) => v.as_int(),
            Err(_) => {
                self.diags
                    .push(TypeError::NotConstant { span: e.span, what }.into_diagnostic());
                None
            }
        }
    }

    // ------------------------------------------------------------ functions

    /// The checked function for an item, checking it on first use.
    pub fn function(&mut self, item: ItemId, call_site: Span) -> Option<usize> {
        if let Some(id) = self.fn_ids.get(&item) {
            return *id;
        }
        if let Some(pos) = self.fn_stack.iter().position(|x| *x == item) {
            let mut cycle: Vec<String> = self.fn_stack[pos..]
                .iter()
                .map(|i| self.items[*i].item.name().name.clone())
                .collect();
            cycle.push(self.items[item].item.name().name.clone());
            self.diags.push(
                ResolveError::Recursion {
                    span: call_site,
                    cycle,
                }
                .into_diagnostic(),
            );
            return None;
        }
        let Item::Fn(f) = self.items[item].item.clone() else {
            return None;
        };
        self.fn_stack.push(item);
        let module = self.items[item].module;
        let ret = self.resolve_type(module, &Params::new(), &f.ret);
        let mut cx = BodyCx::new(self, module, Params::new(), None, BodyKind::Fn(ret.clone()));
        cx.scopes.push(FxHashMap::default());
        let mut param_ids = Vec::new();
        for (n, t) in &f.params {
            let ty = cx.env.resolve_type(module, &Params::new(), t);
            param_ids.push(cx.declare(n, ty));
        }
        let body = cx.block(&f.body);
        cx.lint_unused_lets();
        let locals = std::mem::take(&mut cx.locals);
        drop(cx);
        if !ends_in_return(&body) {
            self.diags.push(
                TypeError::MissingReturn {
                    span: f.name.span,
                    name: f.name.name.clone(),
                }
                .into_diagnostic(),
            );
        }
        self.fn_stack.pop();
        let id = self.functions.len();
        self.functions.push(d::Function {
            name: f.name.name.clone(),
            params: param_ids,
            locals,
            ret,
            body,
            span: f.name.span,
        });
        self.fn_ids.insert(item, Some(id));
        Some(id)
    }

    fn fn_signature(&mut self, item: ItemId) -> Option<(Vec<Type>, Type)> {
        let Item::Fn(f) = self.items[item].item.clone() else {
            return None;
        };
        let module = self.items[item].module;
        let ps = f
            .params
            .iter()
            .map(|(_, t)| self.resolve_type(module, &Params::new(), t))
            .collect();
        Some((ps, self.resolve_type(module, &Params::new(), &f.ret)))
    }

    // ------------------------------------------------------------ units

    /// Checks a unit with concrete parameters and builds its specialization.
    pub fn unit_spec(&mut self, item: ItemId, params: Params) -> d::UnitSpec {
        let Item::Unit(u) = self.items[item].item.clone() else {
            unreachable!("unit_spec is called on units")
        };
        let module = self.items[item].module;
        let mut info = UnitInfo::default();
        let mut names: HashMap<String, Span> = HashMap::new();
        let mut ticks = Vec::new();
        for m in &u.members {
            let name = match m {
                UnitMember::Port { name, .. }
                | UnitMember::Reg { name, .. }
                | UnitMember::Stage { name, .. }
                | UnitMember::Counter { name, .. } => name,
                UnitMember::Tick { body, span } => {
                    ticks.push((body, *span));
                    continue;
                }
            };
            if let Some(prev) = names.insert(name.name.clone(), name.span) {
                self.diags.push(
                    ResolveError::Duplicate {
                        span: name.span,
                        name: name.name.clone(),
                        previous: prev,
                    }
                    .into_diagnostic(),
                );
                continue;
            }
            match m {
                UnitMember::Port {
                    dir,
                    name,
                    ty,
                    kind,
                    span,
                } => {
                    let ty = self.resolve_type(module, &params, ty);
                    let kind = match (dir, kind) {
                        (Dir::In, PortKindAst::Plain) => PortKind::ChannelIn,
                        (Dir::In, PortKindAst::Cdc) => PortKind::CdcRegistered,
                        (Dir::In, PortKindAst::CdcFwft) => PortKind::CdcFwft,
                        (Dir::Out, PortKindAst::Rate(e)) => {
                            let r = self
                                .const_int(module, &params, e, "a send rate")
                                .unwrap_or(1);
                            if !(1..=1024).contains(&r) {
                                self.diags.push(
                                    TypeError::OutOfRange {
                                        span: e.span,
                                        what: "send rate",
                                        value: r,
                                        range: "in 1..=1024",
                                    }
                                    .into_diagnostic(),
                                );
                            }
                            PortKind::Out {
                                rate: r.clamp(1, 1024) as u32,
                            }
                        }
                        (Dir::Out, PortKindAst::Plain) => PortKind::Out { rate: 1 },
                        (Dir::In, PortKindAst::Rate(_)) => {
                            self.diags.push(
                                TypeError::WrongSide {
                                    span: *span,
                                    method: "rate".into(),
                                    port: name.name.clone(),
                                    kind: "input",
                                    help: "`rate` belongs on output ports",
                                }
                                .into_diagnostic(),
                            );
                            PortKind::ChannelIn
                        }
                        (Dir::Out, _) => {
                            self.diags.push(
                                TypeError::WrongSide {
                                    span: *span,
                                    method: "cdc".into(),
                                    port: name.name.clone(),
                                    kind: "output",
                                    help: "the reader declares `cdc`; an output feeds a FIFO as it is",
                                }
                                .into_diagnostic(),
                            );
                            PortKind::Out { rate: 1 }
                        }
                    };
                    info.ports.push(d::Port {
                        name: name.name.clone(),
                        dir: *dir,
                        ty,
                        kind,
                        span: name.span,
                    });
                }
                UnitMember::Reg { name, ty, init, .. } => {
                    let ty = self.resolve_type(module, &params, ty);
                    let init = match init {
                        Some(e) if ty != Type::Error => self
                            .const_expr(module, &params, e, &ty, "a register's initial value")
                            .unwrap_or_else(|| Value::zero(&ty)),
                        _ => Value::zero(&ty),
                    };
                    info.regs.push(d::Reg {
                        name: name.name.clone(),
                        ty,
                        init,
                        span: name.span,
                    });
                }
                UnitMember::Stage {
                    name, ty, pipes, ..
                } => {
                    let ty = self.resolve_type(module, &params, ty);
                    let n = match pipes {
                        Some(e) => self
                            .const_int(module, &params, e, "a pipe count")
                            .unwrap_or(1),
                        None => 1,
                    };
                    if !(1..=1024).contains(&n) {
                        let span = pipes.as_ref().map_or(name.span, |e| e.span);
                        self.diags.push(
                            TypeError::OutOfRange {
                                span,
                                what: "pipe count",
                                value: n,
                                range: "in 1..=1024",
                            }
                            .into_diagnostic(),
                        );
                    }
                    info.stages.push(d::Stage {
                        name: name.name.clone(),
                        ty,
                        pipes: n.clamp(1, 1024) as u32,
                        span: name.span,
                    });
                }
                UnitMember::Counter { name, .. } => info.counters.push(d::Counter {
                    name: name.name.clone(),
                    span: name.span,
                }),
                UnitMember::Tick { .. } => {}
            }
        }
        if let [_, (_, second), ..] = ticks.as_slice() {
            self.diags.push(
                ResolveError::Duplicate {
                    span: *second,
                    name: "tick".into(),
                    previous: ticks[0].1,
                }
                .into_diagnostic(),
            );
        }
        let n_ports = info.ports.len();
        let n_regs = info.regs.len();
        let n_stages = info.stages.len();
        let n_counters = info.counters.len();
        let mut cx = BodyCx::new(self, module, params.clone(), Some(info), BodyKind::Tick);
        cx.scopes.push(FxHashMap::default());
        let tick = match ticks.first() {
            Some((body, _)) => cx.block(body),
            None => Vec::new(),
        };
        cx.lint_unused_lets();
        let locals = std::mem::take(&mut cx.locals);
        let used = std::mem::take(&mut cx.used_members);
        let random_sites = cx.random_sites;
        let info = cx.unit.take().expect("unit info is set for ticks");
        drop(cx);
        let mut warnings = Vec::new();
        for (i, p) in info.ports.iter().enumerate().take(n_ports) {
            if !used.contains(&(Member::Port, i)) && !p.name.starts_with('_') {
                warnings.push(
                    TypeError::UnusedPort {
                        span: p.span,
                        name: p.name.clone(),
                    }
                    .into_diagnostic(),
                );
            }
        }
        let state = info
            .regs
            .iter()
            .enumerate()
            .take(n_regs)
            .map(|(i, r)| (Member::Reg, i, "register", &r.name, r.span))
            .chain(
                info.stages
                    .iter()
                    .enumerate()
                    .take(n_stages)
                    .map(|(i, s)| (Member::Stage, i, "stage register", &s.name, s.span)),
            )
            .chain(
                info.counters
                    .iter()
                    .enumerate()
                    .take(n_counters)
                    .map(|(i, c)| (Member::Counter, i, "counter", &c.name, c.span)),
            );
        for (kind, i, what, name, span) in state {
            if !used.contains(&(kind, i)) && !name.starts_with('_') {
                warnings.push(
                    TypeError::UnusedState {
                        span,
                        what,
                        name: name.clone(),
                    }
                    .into_diagnostic(),
                );
            }
        }
        self.diags.extend(warnings);
        let param_list = match &self.items[item].item {
            Item::Unit(u) => u
                .params
                .iter()
                .filter_map(|p| {
                    params
                        .get(&p.name.name)
                        .map(|(_, v)| (p.name.name.clone(), v.clone()))
                })
                .collect(),
            _ => Vec::new(),
        };
        d::UnitSpec {
            unit: u.name.name.clone(),
            params: param_list,
            ports: info.ports,
            regs: info.regs,
            stages: info.stages,
            counters: info.counters,
            locals,
            tick,
            random_sites,
            span: u.name.span,
        }
    }
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
    regs: Vec<d::Reg>,
    stages: Vec<d::Stage>,
    counters: Vec<d::Counter>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Member {
    Port,
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
        S::For { body, .. } => assigns(&body.stmts, name),
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

impl<'e> BodyCx<'e> {
    fn new(
        env: &'e mut Env,
        module: usize,
        params: Params,
        unit: Option<UnitInfo>,
        kind: BodyKind,
    ) -> Self {
        BodyCx {
            env,
            module,
            params,
            unit,
            kind,
            locals: Vec::new(),
            scopes: Vec::new(),
            used_members: FxHashSet::default(),
            stage_writes: HashMap::new(),
            random_sites: 0,
            local_reads: Vec::new(),
            lets: Vec::new(),
            loops: Vec::new(),
            pipe_exprs: HashMap::new(),
        }
    }

    /// W0304 for every `let` whose value is never read; called once the
    /// whole body is checked.
    fn lint_unused_lets(&mut self) {
        for &(l, span) in &self.lets {
            if self.local_reads[l] == 0 {
                self.env.diags.push(
                    TypeError::UnusedLocal {
                        span,
                        name: self.locals[l].name.clone(),
                    }
                    .into_diagnostic(),
                );
            }
        }
    }

    fn err(&mut self, e: impl IntoDiagnostic) {
        self.env.diags.push(e.into_diagnostic());
    }

    /// Checks a compile-time integer expression: unsuffixed literals alone
    /// take `i64`, anything else its own type.
    fn check_integer(&mut self, e: &ast::Expr) -> Expr {
        if self.is_untyped(e) {
            let i64_type = Type::Int {
                signed: true,
                width: 64,
            };
            self.check(e, Some(&i64_type))
        } else {
            self.check(e, None)
        }
    }

    /// A compile-time integer written inside a body: checked here, so that a
    /// local or register in it is reported as "not constant" rather than unknown.
    fn const_here(&mut self, e: &ast::Expr, what: &'static str) -> Option<i128> {
        let te = self.check_integer(e);
        if te.ty == Type::Error {
            return None;
        }
        if !te.ty.is_int() {
            self.err(TypeError::Mismatch {
                span: e.span,
                expected: "an integer".into(),
                found: te.ty.to_string(),
            });
            return None;
        }
        match eval(&te) {
            Ok(v) => v.as_int(),
            Err(_) => {
                self.err(TypeError::NotConstant { span: e.span, what });
                None
            }
        }
    }

    /// Resolves a type written inside a body (array lengths may not read state).
    fn type_here(&mut self, t: &ast::TypeExpr) -> Type {
        match &t.kind {
            ast::TypeExprKind::Array(elem, len) => {
                let elem = self.type_here(elem);
                match self.const_here(len, "an array length") {
                    Some(n)
                        if (1..=1 << 20).contains(&n)
                            && elem.bit_width().saturating_mul(n as u64) <= MAX_TYPE_BITS =>
                    {
                        Type::Array(Box::new(elem), n as u32)
                    }
                    Some(n) if (1..=1 << 20).contains(&n) => {
                        self.err(TypeError::OutOfRange {
                            span: len.span,
                            what: "array length",
                            value: n,
                            range: "small enough that the whole array has at most 2^24 bits",
                        });
                        Type::Error
                    }
                    Some(n) => {
                        self.err(TypeError::OutOfRange {
                            span: len.span,
                            what: "array length",
                            value: n,
                            range: "in 1..=1048576",
                        });
                        Type::Error
                    }
                    None => Type::Error,
                }
            }
            ast::TypeExprKind::Named(_) => self.env.resolve_type(self.module, &self.params, t),
        }
    }

    fn declare(&mut self, name: &ast::Ident, ty: Type) -> usize {
        let id = self.new_local(&name.name, ty);
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.name.clone(), id);
        }
        id
    }

    /// A new local, in no scope: the one place that grows `locals`, so its
    /// read counts (`local_reads`) always have an entry per local.
    fn new_local(&mut self, name: &str, ty: Type) -> usize {
        let id = self.locals.len();
        self.locals.push(d::Local {
            name: name.to_string(),
            ty,
        });
        self.local_reads.push(0);
        id
    }

    fn resolve(&mut self, ident: &ast::Ident) -> Resolved {
        let n = ident.name.as_str();
        for s in self.scopes.iter().rev() {
            if let Some(id) = s.get(n) {
                self.local_reads[*id] += 1;
                return Resolved::Local(*id);
            }
        }
        if let Some((t, v)) = self.params.get(n) {
            return Resolved::Value(t.clone(), v.clone());
        }
        if let Some(u) = &self.unit {
            let found = u
                .ports
                .iter()
                .position(|p| p.name == n)
                .map(|i| (Member::Port, i))
                .or_else(|| {
                    u.regs
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::Reg, i))
                })
                .or_else(|| {
                    u.stages
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::Stage, i))
                })
                .or_else(|| {
                    u.counters
                        .iter()
                        .position(|p| p.name == n)
                        .map(|i| (Member::Counter, i))
                });
            if let Some((m, i)) = found {
                self.used_members.insert((m, i));
                return Resolved::Member(m, i);
            }
        }
        match self.env.lookup(self.module, n) {
            Some(item) => match &self.env.items[item].item {
                Item::Const(_) => match self.env.const_value(item, ident.span) {
                    Some((t, v)) => Resolved::Value(t, v),
                    None => Resolved::Value(Type::Error, Value::Int(0)),
                },
                other => Resolved::Other(item_kind(other)),
            },
            None => Resolved::Unknown,
        }
    }

    fn unknown_name(&mut self, ident: &ast::Ident) {
        let mut extra: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        extra.extend(self.params.keys().cloned());
        if let Some(u) = &self.unit {
            extra.extend(u.ports.iter().map(|p| p.name.clone()));
            extra.extend(u.regs.iter().map(|p| p.name.clone()));
            extra.extend(u.stages.iter().map(|p| p.name.clone()));
            extra.extend(u.counters.iter().map(|p| p.name.clone()));
        }
        self.env.unknown(self.module, ident, "name", &extra);
    }

    /// Whether an expression is built from unsuffixed literals only.
    fn is_untyped(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            A::Int(_, None) => true,
            // `random()` takes its type from the context, like a literal.
            A::Call(f, args) => args.is_empty() && self.is_random(f),
            A::Unary(UnOp::Neg | UnOp::BitNot, a) => self.is_untyped(a),
            A::Binary(op, a, b) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                self.is_untyped(a) && (matches!(op, BinOp::Shl | BinOp::Shr) || self.is_untyped(b))
            }
            _ => false,
        }
    }

    /// Whether a call of `f` is the `random()` builtin: an item of that
    /// name in scope shadows it.
    fn is_random(&self, f: &ast::Ident) -> bool {
        f.name == "random" && !self.env.scopes[self.module].contains_key(&f.name)
    }

    /// `random()`: a tick-only value of the integer or `bool` type its
    /// context expects (E0325 otherwise), numbered by call site.
    fn random(&mut self, args: &[ast::Expr], want: Option<&Type>, span: Span) -> Expr {
        if self.kind != BodyKind::Tick {
            self.err(TypeError::UnitOpInFn {
                span,
                what: "`random()`",
            });
            return err_expr(span);
        }
        if !args.is_empty() {
            self.err(TypeError::ArgCount {
                span,
                what: "`random()`".into(),
                expected: 0,
                found: args.len(),
            });
            return err_expr(span);
        }
        let ty = match want {
            Some(Type::Error) => return err_expr(span),
            Some(t) if t.is_int() || *t == Type::Bool => t.clone(),
            other => {
                self.err(TypeError::RandomType {
                    span,
                    found: other.map(|t| t.to_string()),
                });
                return err_expr(span);
            }
        };
        let site = self.random_sites;
        self.random_sites += 1;
        Expr {
            kind: ExprKind::Random(site),
            ty,
            span,
        }
    }

    fn expect(&mut self, e: Expr, want: Option<&Type>) -> Expr {
        if let Some(w) = want
            && *w != e.ty
            && e.ty != Type::Error
            && *w != Type::Error
        {
            self.err(TypeError::Mismatch {
                span: e.span,
                expected: w.to_string(),
                found: e.ty.to_string(),
            });
            return err_expr(e.span);
        }
        e
    }

    /// Checks an expression, with the type the context expects if it knows one.
    fn check(&mut self, e: &ast::Expr, want: Option<&Type>) -> Expr {
        let span = e.span;
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        match &e.kind {
            A::Int(v, suffix) => {
                let ty = match (suffix, want) {
                    (Some((signed, width)), _) => Type::Int {
                        signed: *signed,
                        width: *width,
                    },
                    (None, Some(t)) if t.is_int() => t.clone(),
                    (None, Some(Type::Error)) => return err_expr(span),
                    (None, Some(t)) => {
                        self.err(TypeError::Mismatch {
                            span,
                            expected: t.to_string(),
                            found: "integer".into(),
                        });
                        return err_expr(span);
                    }
                    (None, None) => {
                        self.err(TypeError::CannotInfer { span });
                        return err_expr(span);
                    }
                };
                if !fits(*v, &ty) {
                    self.err(TypeError::LiteralOverflow {
                        span,
                        value: *v,
                        ty: ty.to_string(),
                    });
                    return err_expr(span);
                }
                self.expect(mk(ExprKind::Const(Value::Int(*v)), ty), want)
            }
            A::Bool(b) => self.expect(mk(ExprKind::Const(Value::Bool(*b)), Type::Bool), want),
            A::Name(id) => match self.resolve(id) {
                Resolved::Local(l) => {
                    let ty = self.locals[l].ty.clone();
                    self.expect(mk(ExprKind::Local(l), ty), want)
                }
                Resolved::Value(t, v) => {
                    if t == Type::Error {
                        return err_expr(span);
                    }
                    self.expect(mk(ExprKind::Const(v), t), want)
                }
                Resolved::Member(Member::Reg, i) => {
                    let ty = self
                        .unit
                        .as_ref()
                        .map_or(Type::Error, |u| u.regs[i].ty.clone());
                    self.expect(mk(ExprKind::Reg(i), ty), want)
                }
                Resolved::Member(m, _) => {
                    let (what, help) = match m {
                        Member::Port => ("port", PORT_HELP),
                        Member::Stage => (
                            "stage register",
                            "read a pipe with `s.read(p)` and test it with `s.valid(p)`",
                        ),
                        _ => (
                            "counter",
                            "counters are written with `+=` and reported at the end of a run",
                        ),
                    };
                    self.err(TypeError::NotAValue {
                        span,
                        name: id.name.clone(),
                        what,
                        help,
                    });
                    err_expr(span)
                }
                Resolved::Other(what) => {
                    self.err(TypeError::NotAValue {
                        span,
                        name: id.name.clone(),
                        what,
                        help: "only constants, parameters, locals and registers have values",
                    });
                    err_expr(span)
                }
                Resolved::Unknown => {
                    self.unknown_name(id);
                    err_expr(span)
                }
            },
            A::EnumValue(en, var) => {
                let Some(item) = self.env.lookup(self.module, &en.name) else {
                    self.env.unknown(self.module, en, "enum", &[]);
                    return err_expr(span);
                };
                let ty = self.env.item_type(item, en);
                let Type::Enum(et) = &ty else {
                    return err_expr(span);
                };
                match et.variants.iter().position(|v| *v == var.name) {
                    Some(i) => {
                        self.expect(mk(ExprKind::Const(Value::Int(i as i128)), ty.clone()), want)
                    }
                    None => {
                        let suggestion =
                            did_you_mean(&var.name, et.variants.iter().map(String::as_str))
                                .map(str::to_string);
                        self.err(ResolveError::UnknownName {
                            span: var.span,
                            name: format!("{}::{}", en.name, var.name),
                            kind: "variant",
                            suggestion,
                        });
                        err_expr(span)
                    }
                }
            }
            A::Unary(op, a) => {
                let a = self.check(a, want);
                if a.ty == Type::Error {
                    return a;
                }
                let ok = match op {
                    UnOp::Not => a.ty == Type::Bool,
                    UnOp::Neg | UnOp::BitNot => a.ty.is_int(),
                };
                if !ok {
                    let sym = match op {
                        UnOp::Not => "!",
                        UnOp::Neg => "-",
                        UnOp::BitNot => "~",
                    };
                    self.err(TypeError::BadOperand {
                        span,
                        op: sym.into(),
                        ty: a.ty.to_string(),
                    });
                    return err_expr(span);
                }
                let ty = a.ty.clone();
                mk(ExprKind::Unary(*op, Box::new(a)), ty)
            }
            A::Binary(op, l, r) => self.binary(*op, l, r, want, span),
            A::Cast(a, t) => {
                let to = self.env.resolve_type(self.module, &self.params, t);
                let a = if self.is_untyped(a) {
                    self.check(a, Some(&to))
                } else {
                    self.check(a, None)
                };
                if a.ty == Type::Error || to == Type::Error {
                    return err_expr(span);
                }
                let ok =
                    to.is_int() && matches!(a.ty, Type::Int { .. } | Type::Bool | Type::Enum(_));
                if !ok {
                    self.err(TypeError::BadCast {
                        span,
                        from: a.ty.to_string(),
                        to: to.to_string(),
                    });
                    return err_expr(span);
                }
                self.expect(mk(ExprKind::Cast(Box::new(a)), to), want)
            }
            A::Field(a, f) => {
                let a = self.check(a, None);
                match &a.ty {
                    Type::Struct(st) => match st.fields.iter().position(|(n, _)| *n == f.name) {
                        Some(i) => {
                            let ty = st.fields[i].1.clone();
                            self.expect(mk(ExprKind::Field(Box::new(a), i), ty), want)
                        }
                        None => {
                            let suggestion =
                                did_you_mean(&f.name, st.fields.iter().map(|(n, _)| n.as_str()))
                                    .map(str::to_string);
                            self.err(TypeError::UnknownField {
                                span: f.span,
                                name: f.name.clone(),
                                ty: st.name.clone(),
                                suggestion,
                            });
                            err_expr(span)
                        }
                    },
                    Type::Error => err_expr(span),
                    other => {
                        self.err(TypeError::UnknownField {
                            span: f.span,
                            name: f.name.clone(),
                            ty: other.to_string(),
                            suggestion: None,
                        });
                        err_expr(span)
                    }
                }
            }
            A::Index(a, i) => {
                let a = self.check(a, None);
                let idx = self.index(i);
                match &a.ty {
                    Type::Array(t, n) => {
                        let ty = (**t).clone();
                        if let ExprKind::Const(Value::Int(k)) = idx.kind
                            && k >= i128::from(*n)
                        {
                            self.err(TypeError::IndexOutOfRange {
                                span: i.span,
                                index: k,
                                len: u64::from(*n),
                            });
                        }
                        self.expect(mk(ExprKind::Index(Box::new(a), Box::new(idx)), ty), want)
                    }
                    Type::Error => err_expr(span),
                    other => {
                        self.err(TypeError::BadOperand {
                            span,
                            op: "[]".into(),
                            ty: other.to_string(),
                        });
                        err_expr(span)
                    }
                }
            }
            A::Method(recv, m, args) => {
                let r = self.method(recv, m, args, span);
                match r {
                    MethodResult::Value(e) => self.expect(e, want),
                    MethodResult::Stmt(_) => {
                        self.err(TypeError::NoValue {
                            span,
                            method: m.name.clone(),
                        });
                        err_expr(span)
                    }
                    MethodResult::Error => err_expr(span),
                }
            }
            A::Call(f, args) => {
                if self.kind == BodyKind::Const {
                    self.err(TypeError::NotConstant {
                        span,
                        what: "a function call in a constant",
                    });
                    return err_expr(span);
                }
                if self.is_random(f) {
                    return self.random(args, want, span);
                }
                let Some(item) = self.env.lookup(self.module, &f.name) else {
                    self.env.unknown(self.module, f, "function", &[]);
                    return err_expr(span);
                };
                if !matches!(self.env.items[item].item, Item::Fn(_)) {
                    let found = item_kind(&self.env.items[item].item);
                    self.err(ResolveError::WrongKind {
                        span: f.span,
                        name: f.name.clone(),
                        expected: "function",
                        found,
                    });
                    return err_expr(span);
                }
                let Some((ps, ret)) = self.env.fn_signature(item) else {
                    return err_expr(span);
                };
                if ps.len() != args.len() {
                    self.err(TypeError::ArgCount {
                        span,
                        what: format!("function `{}`", f.name),
                        expected: ps.len(),
                        found: args.len(),
                    });
                    return err_expr(span);
                }
                let targs: Vec<Expr> = args
                    .iter()
                    .zip(&ps)
                    .map(|(a, t)| self.check(a, Some(t)))
                    .collect();
                let Some(fid) = self.env.function(item, f.span) else {
                    return err_expr(span);
                };
                if targs.iter().any(|a| a.ty == Type::Error) {
                    return err_expr(span);
                }
                self.expect(mk(ExprKind::Call(fid, targs), ret), want)
            }
            A::StructLit(name, fields) => {
                let Some(item) = self.env.lookup(self.module, &name.name) else {
                    self.env.unknown(self.module, name, "struct", &[]);
                    return err_expr(span);
                };
                let ty = self.env.item_type(item, name);
                let Type::Struct(st) = &ty else {
                    if ty != Type::Error {
                        self.err(ResolveError::WrongKind {
                            span: name.span,
                            name: name.name.clone(),
                            expected: "struct",
                            found: "type",
                        });
                    }
                    return err_expr(span);
                };
                let mut vals: Vec<Option<Expr>> = vec![None; st.fields.len()];
                let mut bad = false;
                for (fname, fe) in fields {
                    match st.fields.iter().position(|(n, _)| *n == fname.name) {
                        Some(i) => {
                            let v = self.check(fe, Some(&st.fields[i].1));
                            bad |= v.ty == Type::Error;
                            if vals[i].is_some() {
                                self.err(TypeError::StructLiteral {
                                    span: fname.span,
                                    message: format!("field `{}` is given twice", fname.name),
                                });
                                bad = true;
                            }
                            vals[i] = Some(v);
                        }
                        None => {
                            let suggestion = did_you_mean(
                                &fname.name,
                                st.fields.iter().map(|(n, _)| n.as_str()),
                            )
                            .map(str::to_string);
                            self.err(TypeError::UnknownField {
                                span: fname.span,
                                name: fname.name.clone(),
                                ty: st.name.clone(),
                                suggestion,
                            });
                            bad = true;
                        }
                    }
                }
                let missing: Vec<&str> = st
                    .fields
                    .iter()
                    .zip(&vals)
                    .filter(|(_, v)| v.is_none())
                    .map(|((n, _), _)| n.as_str())
                    .collect();
                if !missing.is_empty() && !bad {
                    self.err(TypeError::StructLiteral {
                        span,
                        message: format!(
                            "missing field(s) {} of `{}`",
                            missing.join(", "),
                            st.name
                        ),
                    });
                    return err_expr(span);
                }
                if bad {
                    return err_expr(span);
                }
                let vals = vals
                    .into_iter()
                    .map(|v| v.expect("every field given"))
                    .collect();
                self.expect(mk(ExprKind::StructLit(vals), ty.clone()), want)
            }
            A::ArrayLit(elems) => {
                let elem_want = match want {
                    Some(Type::Array(t, _)) => Some((**t).clone()),
                    Some(Type::Error) => Some(Type::Error),
                    _ => None,
                };
                let mut out = Vec::new();
                let mut et = elem_want;
                for el in elems {
                    let v = self.check(el, et.as_ref());
                    if et.is_none() && v.ty != Type::Error {
                        et = Some(v.ty.clone());
                    }
                    out.push(v);
                }
                if out.iter().any(|v| v.ty == Type::Error) || elems.is_empty() {
                    if elems.is_empty() {
                        self.err(TypeError::OutOfRange {
                            span,
                            what: "array length",
                            value: 0,
                            range: "in 1..=1048576",
                        });
                    }
                    return err_expr(span);
                }
                let ty = Type::Array(Box::new(et.unwrap_or(Type::Error)), out.len() as u32);
                self.expect(mk(ExprKind::ArrayLit(out), ty), want)
            }
            A::ArrayRepeat(v, n) => {
                let elem_want = match want {
                    Some(Type::Array(t, _)) => Some((**t).clone()),
                    Some(Type::Error) => Some(Type::Error),
                    _ => None,
                };
                let v = self.check(v, elem_want.as_ref());
                let count = self.const_here(n, "an array length");
                match count {
                    Some(c)
                        if (1..=1 << 20).contains(&c)
                            && v.ty != Type::Error
                            && v.ty.bit_width().saturating_mul(c as u64) > MAX_TYPE_BITS =>
                    {
                        self.err(TypeError::OutOfRange {
                            span: n.span,
                            what: "array length",
                            value: c,
                            range: "small enough that the whole array has at most 2^24 bits",
                        });
                        err_expr(span)
                    }
                    Some(c) if (1..=1 << 20).contains(&c) && v.ty != Type::Error => {
                        let ty = Type::Array(Box::new(v.ty.clone()), c as u32);
                        self.expect(mk(ExprKind::ArrayRepeat(Box::new(v), c as u32), ty), want)
                    }
                    Some(c) if !(1..=1 << 20).contains(&c) => {
                        self.err(TypeError::OutOfRange {
                            span: n.span,
                            what: "array length",
                            value: c,
                            range: "in 1..=1048576",
                        });
                        err_expr(span)
                    }
                    _ => err_expr(span),
                }
            }
        }
    }

    /// An array index or pipe number: any unsigned integer; literals are `u32`.
    fn index(&mut self, i: &ast::Expr) -> Expr {
        let idx = if self.is_untyped(i) {
            self.check(i, Some(&Type::uint(32)))
        } else {
            self.check(i, None)
        };
        if idx.ty != Type::Error && !idx.ty.is_unsigned() {
            self.err(TypeError::Mismatch {
                span: i.span,
                expected: "an unsigned integer".into(),
                found: idx.ty.to_string(),
            });
            return err_expr(i.span);
        }
        fold(idx)
    }

    fn binary(
        &mut self,
        op: BinOp,
        l: &ast::Expr,
        r: &ast::Expr,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        use BinOp::*;
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        match op {
            Or | And => {
                let a = self.check(l, Some(&Type::Bool));
                let b = self.check(r, Some(&Type::Bool));
                if a.ty == Type::Error || b.ty == Type::Error {
                    return err_expr(span);
                }
                self.expect(
                    mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), Type::Bool),
                    want,
                )
            }
            Shl | Shr => {
                let a = if self.is_untyped(l) {
                    self.check(l, want.filter(|t| t.is_int()))
                } else {
                    self.check(l, None)
                };
                let b = self.index(r);
                if a.ty == Type::Error || b.ty == Type::Error {
                    return err_expr(span);
                }
                if !a.ty.is_int() {
                    self.err(TypeError::BadOperand {
                        span: l.span,
                        op: op.symbol().into(),
                        ty: a.ty.to_string(),
                    });
                    return err_expr(span);
                }
                let ty = a.ty.clone();
                self.expect(mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty), want)
            }
            _ => {
                let cmp = op.is_comparison();
                let operand_want = if cmp {
                    None
                } else {
                    want.filter(|t| t.is_int() || **t == Type::Bool)
                };
                let (a, b) = match (self.is_untyped(l), self.is_untyped(r)) {
                    (true, false) => {
                        let b = self.check(r, operand_want);
                        let a = self.check(l, Some(&b.ty).filter(|t| **t != Type::Error));
                        (a, b)
                    }
                    (true, true) if operand_want.is_none() => {
                        let a = self.check(l, None);
                        (a, err_expr(span))
                    }
                    (_, r_untyped) => {
                        let a = self.check(l, operand_want);
                        if a.ty == Type::Error && r_untyped {
                            return err_expr(span);
                        }
                        let b = self.check(r, Some(&a.ty).filter(|t| **t != Type::Error));
                        (a, b)
                    }
                };
                if a.ty == Type::Error || b.ty == Type::Error {
                    return err_expr(span);
                }
                let ok = match op {
                    // Structs and arrays compare scalar by scalar (the
                    // lowering and the constant evaluator do that).
                    Eq | Ne => matches!(
                        a.ty,
                        Type::Int { .. }
                            | Type::Bool
                            | Type::Enum(_)
                            | Type::Struct(_)
                            | Type::Array(..)
                    ),
                    // `bool` orders `false < true`, as Verilog compares one
                    // bit and Rust orders `bool`.
                    Lt | Le | Gt | Ge => a.ty.is_int() || a.ty == Type::Bool,
                    BitOr | BitXor | BitAnd => a.ty.is_int() || a.ty == Type::Bool,
                    _ => a.ty.is_int(),
                };
                if !ok {
                    self.err(TypeError::BadOperand {
                        span,
                        op: op.symbol().into(),
                        ty: a.ty.to_string(),
                    });
                    return err_expr(span);
                }
                let ty = if cmp { Type::Bool } else { a.ty.clone() };
                let e = mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty);
                self.expect(fold(e), want)
            }
        }
    }

    fn method(
        &mut self,
        recv: &ast::Expr,
        m: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> MethodResult {
        let A::Name(id) = &recv.kind else {
            let r = self.check(recv, None);
            if r.ty != Type::Error {
                self.err(TypeError::UnknownMethod {
                    span: m.span,
                    method: m.name.clone(),
                    what: format!("a value of type `{}`", r.ty),
                    available: "methods exist only on ports and stage registers",
                });
            }
            return MethodResult::Error;
        };
        let resolved = self.resolve(id);
        let (member, idx) = match resolved {
            Resolved::Member(mm @ (Member::Port | Member::Stage), i) => (mm, i),
            Resolved::Unknown => {
                if self.kind != BodyKind::Tick {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "a port or stage register operation",
                    });
                } else {
                    self.unknown_name(id);
                }
                return MethodResult::Error;
            }
            _ => {
                let r = self.check(recv, None);
                if r.ty != Type::Error {
                    self.err(TypeError::UnknownMethod {
                        span: m.span,
                        method: m.name.clone(),
                        what: format!("`{}`", id.name),
                        available: "methods exist only on ports and stage registers",
                    });
                }
                return MethodResult::Error;
            }
        };
        let mk = |kind: ExprKind, ty: Type| Expr { kind, ty, span };
        if member == Member::Stage {
            let st = self
                .unit
                .as_ref()
                .expect("stage members exist only in ticks")
                .stages[idx]
                .clone();
            let want_args = match m.name.as_str() {
                "valid" | "read" | "retain" => 1,
                "write" => 2,
                _ => {
                    self.err(TypeError::UnknownMethod {
                        span: m.span,
                        method: m.name.clone(),
                        what: format!("stage register `{}`", st.name),
                        available: "valid(p), read(p), write(p, v), retain(p)",
                    });
                    return MethodResult::Error;
                }
            };
            if args.len() != want_args {
                self.err(TypeError::ArgCount {
                    span,
                    what: format!("`{}`", m.name),
                    expected: want_args,
                    found: args.len(),
                });
                return MethodResult::Error;
            }
            let pipe = self.index(&args[0]);
            if let ExprKind::Const(Value::Int(k)) = pipe.kind
                && k >= i128::from(st.pipes)
            {
                self.err(TypeError::IndexOutOfRange {
                    span: args[0].span,
                    index: k,
                    len: u64::from(st.pipes),
                });
                return MethodResult::Error;
            }
            if pipe.ty == Type::Error {
                return MethodResult::Error;
            }
            return match m.name.as_str() {
                "valid" => {
                    MethodResult::Value(mk(ExprKind::StageValid(idx, Box::new(pipe)), Type::Bool))
                }
                "read" => {
                    MethodResult::Value(mk(ExprKind::StageRead(idx, Box::new(pipe)), st.ty.clone()))
                }
                "retain" => {
                    self.note_stage(idx, &pipe, span);
                    MethodResult::Stmt(StmtKind::StageRetain { stage: idx, pipe })
                }
                _ => {
                    let v = self.check(&args[1], Some(&st.ty));
                    if v.ty == Type::Error {
                        return MethodResult::Error;
                    }
                    self.note_stage(idx, &pipe, span);
                    MethodResult::Stmt(StmtKind::StageWrite {
                        stage: idx,
                        pipe,
                        value: v,
                    })
                }
            };
        }
        let port = self.unit.as_ref().expect("ports exist only in ticks").ports[idx].clone();
        let (kind_word, available, help): (&'static str, &'static str, &'static str) = match port
            .kind
        {
            PortKind::ChannelIn => (
                "channel input",
                "recv(), peek()",
                "a channel input is read with `recv()` or `peek()`; `request()`/`valid()`/`take()` belong to `cdc` inputs",
            ),
            PortKind::CdcRegistered => (
                "registered CDC input",
                "request(), valid(), take()",
                "a registered `cdc` input is read with `request()`, then `valid()`/`take()`; declare it `cdc fwft` to use `recv()`",
            ),
            PortKind::CdcFwft => (
                "fwft CDC input",
                "recv(), peek()",
                "a `cdc fwft` input is read with `recv()` or `peek()`",
            ),
            PortKind::Out { .. } => (
                "output",
                "can_send(), send(v), try_send(v)",
                "an output is written with `send(v)` or `try_send(v)`; inputs are read",
            ),
        };
        let all = [
            "recv", "peek", "request", "valid", "take", "can_send", "send", "try_send",
        ];
        // Whole names: a substring test let `v()` pass as `recv()`.
        let allowed = available
            .split(", ")
            .any(|a| a.split('(').next() == Some(m.name.as_str()));
        if !allowed {
            if all.contains(&m.name.as_str()) {
                self.err(TypeError::WrongSide {
                    span: m.span,
                    method: m.name.clone(),
                    port: port.name.clone(),
                    kind: kind_word,
                    help,
                });
            } else {
                self.err(TypeError::UnknownMethod {
                    span: m.span,
                    method: m.name.clone(),
                    what: format!("{kind_word} `{}`", port.name),
                    available,
                });
            }
            return MethodResult::Error;
        }
        let n_args = usize::from(matches!(m.name.as_str(), "send" | "try_send"));
        if args.len() != n_args {
            self.err(TypeError::ArgCount {
                span,
                what: format!("`{}`", m.name),
                expected: n_args,
                found: args.len(),
            });
            return MethodResult::Error;
        }
        let opt = Type::Option(Box::new(port.ty.clone()));
        MethodResult::Value(match m.name.as_str() {
            "recv" => mk(ExprKind::Recv(idx), opt),
            "peek" => mk(ExprKind::Peek(idx), opt),
            "take" => mk(ExprKind::Take(idx), opt),
            "request" => mk(ExprKind::Request(idx), Type::Bool),
            "valid" => mk(ExprKind::Valid(idx), Type::Bool),
            "can_send" => mk(ExprKind::CanSend(idx), Type::Bool),
            "send" => {
                let v = self.check(&args[0], Some(&port.ty));
                if v.ty == Type::Error {
                    return MethodResult::Error;
                }
                return MethodResult::Stmt(StmtKind::Send {
                    port: idx,
                    value: v,
                });
            }
            _ => {
                let v = self.check(&args[0], Some(&port.ty));
                if v.ty == Type::Error {
                    return MethodResult::Error;
                }
                mk(ExprKind::TrySend(idx, Box::new(v)), Type::Bool)
            }
        })
    }

    fn note_stage(&mut self, stage: usize, pipe: &Expr, span: Span) {
        let key = match pipe.kind {
            ExprKind::Const(Value::Int(p)) => PipeKey::Const(p),
            _ => match self.loop_pipe(pipe) {
                Some(k) => k,
                None => return,
            },
        };
        if let Some(first) = self.stage_writes.insert((stage, key.clone()), span) {
            let pipe = self.pipe_value(&key, None).unwrap_or(0);
            self.stage_twice(stage, span, first, "first here", pipe);
        }
    }

    fn stage_twice(
        &mut self,
        stage: usize,
        span: Span,
        first: Span,
        label: &'static str,
        pipe: i128,
    ) {
        let name = self
            .unit
            .as_ref()
            .map_or(String::new(), |u| u.stages[stage].name.clone());
        self.err(TypeError::StageTwice {
            span,
            first,
            first_label: label,
            stage: name,
            pipe,
        });
    }

    /// The key of a pipe that depends on one loop variable, if E0321 can
    /// follow it: the loop is short and never assigns the variable.
    fn loop_pipe(&mut self, pipe: &Expr) -> Option<PipeKey> {
        let mut var = None;
        let mut shape = String::new();
        if !pipe_shape(pipe, &mut var, &mut shape) {
            return None;
        }
        let var = var?;
        let lv = self.loops.iter().find(|l| l.slot == var)?;
        if lv.assigned || lv.end - lv.start > MAX_UNROLL_PROOF {
            return None;
        }
        self.pipe_exprs
            .entry(shape.clone())
            .or_insert_with(|| pipe.clone());
        Some(PipeKey::OfLoop { var, shape })
    }

    /// The pipe a key names in iteration `k` of its loop (default: the
    /// loop's first iteration).
    fn pipe_value(&self, key: &PipeKey, k: Option<i128>) -> Option<i128> {
        match key {
            PipeKey::Const(p) => Some(*p),
            PipeKey::OfLoop { var, shape } => {
                let k = match k {
                    Some(k) => k,
                    None => self.loops.iter().find(|l| l.slot == *var)?.start,
                };
                let mut e = self.pipe_exprs.get(shape)?.clone();
                substitute(&mut e, *var, k);
                eval(&e).ok()?.as_int()
            }
        }
    }

    // ------------------------------------------------------------ statements

    fn block(&mut self, b: &ast::Block) -> Vec<Stmt> {
        self.scopes.push(FxHashMap::default());
        let mut out = Vec::new();
        let mut ended: Option<Span> = None;
        for s in &b.stmts {
            if let Some(after) = ended.take() {
                self.err(TypeError::Unreachable {
                    span: s.span,
                    after,
                });
            }
            if let Some(st) = self.stmt(s) {
                if matches!(st.kind, StmtKind::Return(_) | StmtKind::Finish) {
                    ended = Some(st.span);
                }
                out.push(st);
            }
        }
        self.scopes.pop();
        out
    }

    /// Checks a block that runs on some paths only. Returns its statements
    /// and the stage pipes written on every path through it; the path state
    /// is left as it was before the block.
    fn branch(&mut self, b: &ast::Block) -> (Vec<Stmt>, StageSet) {
        let saved = self.stage_writes.clone();
        let r = self.block(b);
        let exit = std::mem::replace(&mut self.stage_writes, saved);
        (r, exit)
    }

    /// After a branching statement: when one of the branches always runs,
    /// a pipe written by every branch is written on every path from here.
    fn join_branches(&mut self, exits: Vec<StageSet>, exhaustive: bool) {
        if !exhaustive {
            return;
        }
        let mut exits = exits.into_iter();
        let Some(mut joined) = exits.next() else {
            return;
        };
        for other in exits {
            joined.retain(|k, _| other.contains_key(k));
        }
        self.stage_writes = joined;
    }

    fn in_fn(&self) -> bool {
        matches!(self.kind, BodyKind::Fn(_))
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Option<Stmt> {
        let span = s.span;
        let kind = match &s.kind {
            S::Let { name, ty, value } => {
                let want = ty.as_ref().map(|t| self.type_here(t));
                let v = self.check(value, want.as_ref());
                let ty = want.unwrap_or_else(|| v.ty.clone());
                let l = self.declare(name, ty);
                if !name.name.starts_with('_') {
                    self.lets.push((l, name.span));
                }
                StmtKind::AssignLocal {
                    local: l,
                    path: Vec::new(),
                    value: v,
                }
            }
            S::Assign { place, value } => {
                let (root, path, ty) = self.place(place)?;
                match root {
                    Resolved::Local(l) => {
                        let v = self.check(value, Some(&ty));
                        StmtKind::AssignLocal {
                            local: l,
                            path,
                            value: v,
                        }
                    }
                    other => {
                        let what = resolved_word(&other);
                        self.err(TypeError::AssignNotLocal {
                            span: place.span,
                            name: place_name(place),
                            what,
                        });
                        return None;
                    }
                }
            }
            S::RegWrite { place, value } => {
                if !matches!(self.kind, BodyKind::Tick) {
                    self.err(TypeError::RegWriteOutsideTick { span });
                    return None;
                }
                let (root, path, ty) = self.place(place)?;
                match root {
                    Resolved::Member(Member::Reg, r) => {
                        let v = self.check(value, Some(&ty));
                        StmtKind::RegWrite {
                            reg: r,
                            path,
                            value: v,
                        }
                    }
                    other => {
                        let what = resolved_word(&other);
                        self.err(TypeError::WriteNotRegister {
                            span: place.span,
                            name: place_name(place),
                            what,
                        });
                        return None;
                    }
                }
            }
            S::CounterAdd { name, value } => {
                if self.in_fn() {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "a counter update",
                    });
                    return None;
                }
                match self.resolve(name) {
                    Resolved::Member(Member::Counter, c) => {
                        let v = self.check(value, Some(&Type::uint(64)));
                        StmtKind::CounterAdd {
                            counter: c,
                            value: v,
                        }
                    }
                    Resolved::Unknown => {
                        self.unknown_name(name);
                        return None;
                    }
                    other => {
                        let what = resolved_word(&other);
                        self.err(ResolveError::WrongKind {
                            span: name.span,
                            name: name.name.clone(),
                            expected: "counter",
                            found: what,
                        });
                        return None;
                    }
                }
            }
            S::If { arms, otherwise } => {
                let mut exits = Vec::new();
                let (mut tail, else_exit) = match otherwise {
                    Some(b) => {
                        let (body, exit) = self.branch(b);
                        (body, Some(exit))
                    }
                    None => (Vec::new(), None),
                };
                let mut built: Vec<(Vec<Stmt>, ArmCond)> = Vec::new();
                for (c, b) in arms {
                    match c {
                        Cond::Expr(e) => {
                            let ce = self.check(e, Some(&Type::Bool));
                            let (body, exit) = self.branch(b);
                            exits.push(exit);
                            built.push((body, ArmCond::Bool(ce)));
                        }
                        Cond::LetSome(n, e) => {
                            let v = self.check(e, None);
                            let inner = match &v.ty {
                                Type::Option(t) => (**t).clone(),
                                Type::Error => Type::Error,
                                other => {
                                    self.err(TypeError::Mismatch {
                                        span: e.span,
                                        expected: "an option (from recv(), peek() or take())"
                                            .into(),
                                        found: other.to_string(),
                                    });
                                    Type::Error
                                }
                            };
                            self.scopes.push(FxHashMap::default());
                            let l = self.declare(n, inner);
                            let (body, exit) = self.branch(b);
                            exits.push(exit);
                            self.scopes.pop();
                            built.push((body, ArmCond::Some(l, v)));
                        }
                    }
                }
                // The arms first, so a joined write keeps the first arm's span.
                let exhaustive = else_exit.is_some();
                exits.extend(else_exit);
                self.join_branches(exits, exhaustive);
                // Chain from the last arm backwards: else-if becomes nesting.
                let mut result: Option<StmtKind> = None;
                for (body, cond) in built.into_iter().rev() {
                    let otherwise = match result.take() {
                        Some(k) => vec![Stmt { kind: k, span }],
                        None => std::mem::take(&mut tail),
                    };
                    result = Some(match cond {
                        ArmCond::Some(binding, value) => StmtKind::IfSome {
                            binding,
                            value,
                            then: body,
                            otherwise,
                        },
                        ArmCond::Bool(cond) => StmtKind::If {
                            cond,
                            then: body,
                            otherwise,
                        },
                    });
                }
                result?
            }
            S::Match { scrutinee, arms } => self.match_stmt(scrutinee, arms, span)?,
            S::For {
                var,
                start,
                end,
                body,
            } => {
                let a = self.const_here(start, "a loop bound");
                let b = self.const_here(end, "a loop bound");
                let (a, b) = (a?, b?);
                let range = 0..=i128::from(u32::MAX);
                if !range.contains(&a) || !range.contains(&b) {
                    let bad = if range.contains(&a) {
                        (end.span, b)
                    } else {
                        (start.span, a)
                    };
                    self.err(TypeError::OutOfRange {
                        span: bad.0,
                        what: "loop bound",
                        value: bad.1,
                        range: "in 0..=4294967295",
                    });
                    return None;
                }
                let unrolled = self
                    .loops
                    .iter()
                    .map(|l| (l.end - l.start).max(1))
                    .fold((b - a).max(0), |n, m| n.saturating_mul(m));
                let too_long = unrolled > MAX_LOOP_ITERATIONS;
                if too_long {
                    self.err(TypeError::OutOfRange {
                        span: start.span.to(end.span),
                        what: "unrolled loop length",
                        value: unrolled,
                        range: "at most 4096 (the lengths of nested loops multiply)",
                    });
                }
                // The body is still checked, for its own errors and uses;
                // a too-long loop counts as one iteration, so loops inside
                // it are not reported again.
                let (a, b) = if too_long { (a, a + 1) } else { (a, b) };
                self.scopes.push(FxHashMap::default());
                let v = self.declare(var, Type::uint(32));
                self.loops.push(LoopVar {
                    slot: v,
                    start: a,
                    end: b,
                    assigned: assigns(&body.stmts, &var.name),
                });
                let (body, mut exit) = self.branch(body);
                self.scopes.pop();
                // Pipes of this loop's variable, written on every path
                // through the body: one pipe per iteration, all in this tick.
                let mut unrolled: Vec<(Span, usize, PipeKey)> = Vec::new();
                exit.retain(|(stage, key), at| {
                    let mine = matches!(key, PipeKey::OfLoop { var, .. } if *var == v);
                    if mine {
                        unrolled.push((*at, *stage, key.clone()));
                    }
                    !mine
                });
                unrolled.sort_unstable_by_key(|(at, stage, _)| (at.start, *stage));
                if b - a >= 2 {
                    // A pipe that does not depend on the variable, written on
                    // every path through the body, is written once per
                    // iteration: provably twice. Pipes written before the
                    // loop were reported inside the body.
                    let mut again: Vec<_> = exit
                        .iter()
                        .filter(|(k, _)| !self.stage_writes.contains_key(k))
                        .map(|(k, &at)| (at, k.clone()))
                        .collect();
                    again.sort_unstable_by_key(|(at, (stage, _))| (at.start, *stage));
                    for (at, (stage, key)) in again {
                        let pipe = self.pipe_value(&key, None).unwrap_or(0);
                        self.stage_twice(stage, at, span, "this loop runs it more than once", pipe);
                    }
                }
                if b > a {
                    // Unrolled, the loop's own pipes are constants: any of
                    // them written twice (by two iterations, or also before
                    // the loop or on every iteration) is provably twice.
                    for (at, stage, key) in unrolled {
                        for k in a..b {
                            let Some(p) = self.pipe_value(&key, Some(k)) else {
                                break;
                            };
                            if exit.insert((stage, PipeKey::Const(p)), at).is_some() {
                                self.stage_twice(
                                    stage,
                                    at,
                                    span,
                                    "with this loop unrolled, it is written twice",
                                    p,
                                );
                                break;
                            }
                        }
                    }
                    self.stage_writes = exit;
                }
                self.loops.pop();
                if too_long {
                    return None;
                }
                StmtKind::For {
                    var: v,
                    start: a as u32,
                    end: b as u32,
                    body,
                }
            }
            S::Return(e) => match &self.kind {
                BodyKind::Fn(ret) => {
                    let ret = ret.clone();
                    StmtKind::Return(self.check(e, Some(&ret)))
                }
                _ => {
                    self.err(TypeError::ReturnInTick { span });
                    return None;
                }
            },
            S::Finish => {
                if self.in_fn() {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "`finish`",
                    });
                    return None;
                }
                StmtKind::Finish
            }
            S::Assert { cond, message } => {
                if self.in_fn() {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "`assert`",
                    });
                    return None;
                }
                StmtKind::Assert {
                    cond: self.check(cond, Some(&Type::Bool)),
                    message: message.clone(),
                }
            }
            S::Trace {
                name,
                name_span,
                args,
            } => {
                if self.in_fn() {
                    self.err(TypeError::UnitOpInFn {
                        span,
                        what: "`trace`",
                    });
                    return None;
                }
                if let Some(problem) = trace_name_problem(name) {
                    self.err(TypeError::BadTraceName {
                        span: *name_span,
                        name: name.clone(),
                        problem,
                    });
                }
                let mut seen: HashMap<&str, Span> = HashMap::new();
                let mut out = Vec::new();
                // Values counted so far, the span of the arguments past the
                // limit, and the aggregates within the limit that count
                // several values each (labelled: they explain the total).
                let mut values = 0u64;
                let mut extra: Option<(Span, Option<TraceArg>)> = None;
                let mut aggregates = Vec::new();
                for (k, v) in args {
                    if let Some(prev) = seen.insert(&k.name, k.span) {
                        self.err(ResolveError::Duplicate {
                            span: k.span,
                            name: k.name.clone(),
                            previous: prev,
                        });
                    }
                    let checked = self.check(v, None);
                    let count = match (&checked.ty, &v.kind) {
                        // A literal (or arithmetic on literals) with no type
                        // to take its width from (E0302) is still one
                        // value, so the count, and E0326, stay right.
                        (Type::Error, A::Int(..) | A::Unary(..) | A::Binary(..)) => 1,
                        (ty, _) => trace_values(ty),
                    };
                    values = values.saturating_add(count);
                    let arg_span = k.span.to(v.span);
                    let described = (arg_span, checked.ty.to_string(), count);
                    if values > MAX_TRACE_VALUES {
                        // The arguments past the limit share the primary
                        // label; one lone aggregate there is described in it.
                        extra = Some(match extra {
                            None => (arg_span, (count > 1).then_some(described)),
                            Some((s, _)) => (s.to(arg_span), None),
                        });
                    } else if count > 1 {
                        aggregates.push(described);
                    }
                    out.push((k.name.clone(), checked));
                }
                if let Some((span, lone)) = extra {
                    self.err(TypeError::TraceTooLarge {
                        span,
                        event: name.clone(),
                        values,
                        limit: MAX_TRACE_VALUES,
                        lone: lone.map(|(_, ty, count)| (ty, count)),
                        aggregates,
                    });
                }
                StmtKind::Trace {
                    name: name.clone(),
                    args: out,
                }
            }
            S::Expr(e) => {
                if let A::Method(recv, m, args) = &e.kind {
                    match self.method(recv, m, args, e.span) {
                        MethodResult::Value(v) => StmtKind::Expr(v),
                        MethodResult::Stmt(k) => k,
                        MethodResult::Error => return None,
                    }
                } else {
                    StmtKind::Expr(self.check(e, None))
                }
            }
        };
        Some(Stmt { kind, span })
    }

    fn match_stmt(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[(Vec<Pattern>, ast::Block)],
        span: Span,
    ) -> Option<StmtKind> {
        let sc = self.check(scrutinee, None);
        if sc.ty == Type::Error {
            return None;
        }
        if let Type::Option(inner) = &sc.ty {
            let inner = (**inner).clone();
            let mut some: Option<(usize, Vec<Stmt>)> = None;
            let mut none: Option<Vec<Stmt>> = None;
            let mut exits = Vec::new();
            let (mut some_seen, mut none_seen) = (false, false);
            for (pats, body) in arms {
                for p in pats {
                    match p {
                        Pattern::Some(n) => {
                            self.scopes.push(FxHashMap::default());
                            let l = self.declare(n, inner.clone());
                            let (b, exit) = self.branch(body);
                            exits.push(exit);
                            self.scopes.pop();
                            some_seen = true;
                            some.get_or_insert((l, b));
                        }
                        Pattern::None(_) | Pattern::Wildcard(_) => {
                            let (b, exit) = self.branch(body);
                            exits.push(exit);
                            if matches!(p, Pattern::Wildcard(_)) {
                                some_seen = true;
                            }
                            none_seen = true;
                            none.get_or_insert(b);
                        }
                        other => self.err(TypeError::BadPattern {
                            span: other.span(),
                            expected: sc.ty.to_string(),
                        }),
                    }
                }
            }
            self.join_branches(exits, some_seen && none_seen);
            let (binding, then) = match some {
                Some(x) => x,
                // No `Some` arm: the value is bound to a local nothing reads.
                None => (self.new_local("_", inner), Vec::new()),
            };
            return Some(StmtKind::IfSome {
                binding,
                value: sc,
                then,
                otherwise: none.unwrap_or_default(),
            });
        }
        if !matches!(sc.ty, Type::Int { .. } | Type::Bool | Type::Enum(_)) {
            self.err(TypeError::BadOperand {
                span: scrutinee.span,
                op: "match".into(),
                ty: sc.ty.to_string(),
            });
            return None;
        }
        let mut out_arms = Vec::new();
        let mut default: Option<Vec<Stmt>> = None;
        let mut exits = Vec::new();
        let mut covered: HashSet<i128> = HashSet::new();
        // First pattern per value, and the `_` arm, for W0305.
        let mut first_at: FxHashMap<i128, Span> = FxHashMap::default();
        let mut wildcard_at: Option<Span> = None;
        for (pats, body) in arms {
            if let (Some(w), Some(p)) = (wildcard_at.take(), pats.first()) {
                self.err(TypeError::ShadowedPattern {
                    span: w,
                    earlier: p.span(),
                    wildcard_not_last: true,
                });
            }
            let mut values = Vec::new();
            let mut wildcard = false;
            for p in pats {
                let before = values.len();
                match (p, &sc.ty) {
                    (Pattern::Wildcard(ws), _) => {
                        wildcard = true;
                        wildcard_at = Some(*ws);
                    }
                    (Pattern::Int(v, suffix, ps), Type::Int { .. }) => {
                        if let Some((signed, width)) = suffix
                            && (Type::Int {
                                signed: *signed,
                                width: *width,
                            }) != sc.ty
                        {
                            self.err(TypeError::Mismatch {
                                span: *ps,
                                expected: sc.ty.to_string(),
                                found: format!("{}{}", if *signed { "i" } else { "u" }, width),
                            });
                            continue;
                        }
                        if !fits(*v, &sc.ty) {
                            self.err(TypeError::LiteralOverflow {
                                span: *ps,
                                value: *v,
                                ty: sc.ty.to_string(),
                            });
                        }
                        values.push(*v);
                    }
                    (Pattern::Bool(b, _), Type::Bool) => values.push(i128::from(*b)),
                    (Pattern::Enum(en, var), Type::Enum(et)) if en.name == et.name => {
                        match et.variants.iter().position(|v| *v == var.name) {
                            Some(i) => values.push(i as i128),
                            None => {
                                let suggestion =
                                    did_you_mean(&var.name, et.variants.iter().map(String::as_str))
                                        .map(str::to_string);
                                self.err(ResolveError::UnknownName {
                                    span: var.span,
                                    name: format!("{}::{}", en.name, var.name),
                                    kind: "variant",
                                    suggestion,
                                });
                            }
                        }
                    }
                    (other, _) => self.err(TypeError::BadPattern {
                        span: other.span(),
                        expected: sc.ty.to_string(),
                    }),
                }
                if let Some(&v) = values.get(before) {
                    match first_at.get(&v) {
                        Some(&earlier) => self.err(TypeError::ShadowedPattern {
                            span: p.span(),
                            earlier,
                            wildcard_not_last: false,
                        }),
                        None => {
                            first_at.insert(v, p.span());
                        }
                    }
                }
            }
            let (b, exit) = self.branch(body);
            exits.push(exit);
            covered.extend(values.iter().copied());
            if wildcard {
                if default.is_none() {
                    default = Some(b.clone());
                }
                if !values.is_empty() {
                    out_arms.push(d::MatchArm { values, body: b });
                }
            } else {
                out_arms.push(d::MatchArm { values, body: b });
            }
        }
        let _ = span;
        let every_value = match &sc.ty {
            Type::Bool => covered.len() == 2,
            Type::Enum(et) => covered.len() == et.variants.len(),
            _ => false,
        };
        self.join_branches(exits, default.is_some() || every_value);
        Some(StmtKind::Match {
            scrutinee: sc,
            arms: out_arms,
            default: default.unwrap_or_default(),
        })
    }

    /// Resolves the root and path of a written place; returns the element type.
    fn place(&mut self, p: &ast::Expr) -> Option<(Resolved, Vec<PlaceElem>, Type)> {
        match &p.kind {
            A::Name(id) => {
                let r = self.resolve(id);
                let ty = match &r {
                    Resolved::Local(l) => {
                        // Written, not read: `resolve` counted a read.
                        self.local_reads[*l] -= 1;
                        self.locals[*l].ty.clone()
                    }
                    Resolved::Member(Member::Reg, i) => self
                        .unit
                        .as_ref()
                        .map_or(Type::Error, |u| u.regs[*i].ty.clone()),
                    Resolved::Unknown => {
                        self.unknown_name(id);
                        return None;
                    }
                    _ => Type::Error,
                };
                Some((r, Vec::new(), ty))
            }
            A::Field(base, f) => {
                let (r, mut path, ty) = self.place(base)?;
                match &ty {
                    Type::Struct(st) => match st.fields.iter().position(|(n, _)| *n == f.name) {
                        Some(i) => {
                            path.push(PlaceElem::Field(i));
                            Some((r, path, st.fields[i].1.clone()))
                        }
                        None => {
                            let suggestion =
                                did_you_mean(&f.name, st.fields.iter().map(|(n, _)| n.as_str()))
                                    .map(str::to_string);
                            self.err(TypeError::UnknownField {
                                span: f.span,
                                name: f.name.clone(),
                                ty: st.name.clone(),
                                suggestion,
                            });
                            None
                        }
                    },
                    Type::Error => Some((r, path, Type::Error)),
                    other => {
                        self.err(TypeError::UnknownField {
                            span: f.span,
                            name: f.name.clone(),
                            ty: other.to_string(),
                            suggestion: None,
                        });
                        None
                    }
                }
            }
            A::Index(base, i) => {
                let (r, mut path, ty) = self.place(base)?;
                let idx = self.index(i);
                match &ty {
                    Type::Array(t, n) => {
                        if let ExprKind::Const(Value::Int(k)) = idx.kind
                            && k >= i128::from(*n)
                        {
                            self.err(TypeError::IndexOutOfRange {
                                span: i.span,
                                index: k,
                                len: u64::from(*n),
                            });
                        }
                        path.push(PlaceElem::Index(idx));
                        Some((r, path, (**t).clone()))
                    }
                    Type::Error => Some((r, path, Type::Error)),
                    other => {
                        self.err(TypeError::BadOperand {
                            span: p.span,
                            op: "[]".into(),
                            ty: other.to_string(),
                        });
                        None
                    }
                }
            }
            _ => None,
        }
    }
}

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
            Value::Int(x) => Value::Int(wrap(x, &e.ty)),
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
