//! The `.chr` front end: grammar, AST, name resolution, types, elaboration
//! and diagnostics. It knows nothing of the back end and does no I/O beyond
//! the sources it is given.
//!
//! The entry point is [`compile`]: sources in, an elaborated [`design::Design`]
//! (when there is no error and a top system) and every diagnostic out.

pub mod ast;
pub mod check;
pub mod design;
pub mod diag;
pub mod elab;
pub mod errors;
pub mod eval;
pub mod parse;
pub mod span;
pub mod stdlib;

use ast::Item;
use check::Env;
use diag::{Diagnostic, IntoDiagnostic};
use errors::ElabError;
use span::{FileId, SourceMap, Span};

/// What to compile.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The top system; default: the one system no other system instantiates.
    pub top: Option<String>,
    /// Overrides of the top system's parameters: `(NAME, VALUE text)`.
    pub params: Vec<(String, String)>,
    /// Whether a missing or ambiguous top is an error (for running) rather
    /// than a library check (for `chronc check`).
    pub require_top: bool,
}

/// The result of [`compile`].
#[derive(Debug)]
pub struct Compilation {
    /// The design, when there is a top system and no error.
    pub design: Option<design::Design>,
    /// Every diagnostic, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Compilation {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses, checks and elaborates every file in `sources` as one design.
/// Standard-library modules that are used are added to `sources`, so that
/// diagnostics in them can be rendered.
pub fn compile(sources: &mut SourceMap, options: &CompileOptions) -> Compilation {
    let mut diags = Vec::new();
    let mut modules = Vec::new();
    for i in 0..sources.len() {
        let file = FileId(i as u32);
        // A user module is compiled when a `use` names it.
        if sources.is_module(file) {
            continue;
        }
        let (m, d) = parse::parse_file(file, &sources.get(file).text);
        diags.extend(d);
        modules.push(m);
    }
    let mut env = Env::new(sources, modules);
    env.diags.extend(diags);
    let design = elaborate(&mut env, options);
    env.lint_imports();
    let mut diagnostics = std::mem::take(&mut env.diags);
    diag::normalize(&mut diagnostics);
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    Compilation {
        design: if has_errors { None } else { design },
        diagnostics,
    }
}

fn elaborate(env: &mut Env, options: &CompileOptions) -> Option<design::Design> {
    let user: Vec<usize> = (0..env.items.len())
        .filter(|i| env.items[*i].module == 0)
        .collect();
    let systems: Vec<usize> = user
        .iter()
        .copied()
        .filter(|i| matches!(env.items[*i].item, Item::System(_)))
        .collect();
    let instantiated: std::collections::HashSet<String> = systems
        .iter()
        .flat_map(|s| match &env.items[*s].item {
            Item::System(sys) => inst_targets(&sys.members),
            _ => Vec::new(),
        })
        .collect();
    let roots: Vec<usize> = systems
        .iter()
        .copied()
        .filter(|s| !instantiated.contains(&env.items[*s].item.name().name))
        .collect();
    unreachable_cycles(env, &systems, &roots);
    let first_span = user
        .first()
        .map(|i| env.items[*i].item.name().span)
        .unwrap_or_default();

    // Every function of the user's files is checked, called or not; a
    // generic one once per set of parameters its calls infer.
    for &i in &user {
        if matches!(&env.items[i].item, Item::Fn(f) if f.generics.is_empty()) {
            let span = env.items[i].item.name().span;
            env.function(i, &check::Params::new(), span);
        }
        // A generic struct is checked where it is used, once per set of
        // arguments (or alone with its defaults, when all have one).
        let checkable = match &env.items[i].item {
            Item::Struct(s) => s.params.iter().all(|g| g.default.is_some()),
            Item::Enum(_) => true,
            _ => false,
        };
        if checkable {
            let name = env.items[i].item.name().clone();
            env.item_type(i, &name);
        }
        if matches!(env.items[i].item, Item::Const(_)) {
            let span = env.items[i].item.name().span;
            env.const_value(i, span);
        }
    }

    let top = match &options.top {
        Some(name) => match systems
            .iter()
            .find(|s| env.items[**s].item.name().name == *name)
        {
            Some(s) => Some(*s),
            None => {
                // The command line has no span: point at the systems there are.
                let declared: Vec<String> = systems
                    .iter()
                    .map(|s| env.items[*s].item.name().name.clone())
                    .collect();
                let span = systems
                    .first()
                    .map_or(first_span, |s| env.items[*s].item.name().span);
                env.diags.push(
                    ElabError::NoTop {
                        span,
                        name: Some(name.clone()),
                        declared,
                    }
                    .into_diagnostic(),
                );
                None
            }
        },
        None => match roots.as_slice() {
            [one] => Some(*one),
            [] => {
                if options.require_top {
                    env.diags.push(
                        ElabError::NoTop {
                            span: first_span,
                            name: None,
                            declared: Vec::new(),
                        }
                        .into_diagnostic(),
                    );
                }
                None
            }
            several => {
                let candidates: Vec<String> = several
                    .iter()
                    .map(|s| env.items[*s].item.name().name.clone())
                    .collect();
                let span = env.items[several[0]].item.name().span;
                if options.require_top {
                    env.diags
                        .push(ElabError::AmbiguousTop { span, candidates }.into_diagnostic());
                } else {
                    env.diags
                        .push(ElabError::SeveralTops { span, candidates }.into_diagnostic());
                }
                None
            }
        },
    };

    let mut instantiated_units = std::collections::HashSet::new();
    let mut result = None;
    // Check every root (the top first) so that errors in each are reported.
    let mut order: Vec<usize> = top.into_iter().collect();
    if top.is_none() || options.top.is_none() {
        order.extend(roots.iter().copied().filter(|r| Some(*r) != top));
    }
    for (k, sys) in order.iter().enumerate() {
        let mut el = elab::Elab::new(env);
        let overrides = if Some(*sys) == top {
            options.params.clone()
        } else {
            Vec::new()
        };
        let params = el.top(*sys, &overrides);
        for s in &el.specs {
            instantiated_units.insert(s.unit.clone());
        }
        if k == 0 && Some(*sys) == top {
            let elab::Elab {
                clocks,
                specs,
                instances,
                channels,
                fifos,
                ..
            } = el;
            result = params.map(|params| design::Design {
                top: env.items[*sys].item.name().name.clone(),
                params,
                clocks,
                functions: env.functions.clone(),
                specs,
                instances,
                channels,
                fifos,
            });
        }
    }
    if order.is_empty() {
        // A library (or no top): clocks are still checked.
        elab::Elab::new(env);
    }
    // Units not reached from a system are checked with their defaults.
    for &i in &user {
        let Item::Unit(u) = &env.items[i].item else {
            continue;
        };
        let name = u.name.clone();
        if instantiated_units.contains(&name.name) {
            continue;
        }
        if !systems.is_empty() && !instantiated.contains(&name.name) && !name.name.starts_with('_')
        {
            env.diags.push(
                ElabError::UnusedUnit {
                    span: name.span,
                    name: name.name.clone(),
                }
                .into_diagnostic(),
            );
        }
        let u = u.clone();
        if u.params.iter().all(|p| p.default.is_some()) {
            let mut params = check::Params::new();
            let mut ok = true;
            for p in &u.params {
                let ty = env.param_type(0, &params, p);
                match p
                    .default
                    .as_ref()
                    .and_then(|e| env.param_arg(0, &params, p, &ty, e, "a parameter default"))
                {
                    Some(v) => {
                        params.insert(p.name.name.clone(), (ty, v));
                    }
                    None => ok = false,
                }
            }
            if ok {
                env.unit_spec(i, params);
            }
        }
    }
    let _ = Span::default();
    result
}

/// The instances of a system (inside `for` loops too): target name and
/// the instance's span.
fn inst_sites(members: &[ast::SystemMember]) -> Vec<(String, Span)> {
    members
        .iter()
        .flat_map(|m| match m {
            ast::SystemMember::Inst { target, span, .. } => vec![(target.name.clone(), *span)],
            ast::SystemMember::For { body, .. } => inst_sites(body),
            ast::SystemMember::If {
                then, otherwise, ..
            } => {
                let mut sites = inst_sites(then);
                sites.extend(inst_sites(otherwise));
                sites
            }
            _ => Vec::new(),
        })
        .collect()
}

/// Reports E0417 for systems that instantiate each other in a cycle that
/// no root reaches. Elaboration finds the cycles under a root; these it
/// never visits (every system of such a cycle is instantiated, so none is
/// a root), and `chronc check` said nothing about them.
fn unreachable_cycles(env: &mut Env, systems: &[usize], roots: &[usize]) {
    let index: std::collections::HashMap<String, usize> = systems
        .iter()
        .map(|s| (env.items[*s].item.name().name.clone(), *s))
        .collect();
    let sites = |env: &Env, s: usize| -> Vec<(usize, Span)> {
        match &env.items[s].item {
            Item::System(sys) => inst_sites(&sys.members)
                .into_iter()
                .filter_map(|(n, span)| index.get(&n).map(|t| (*t, span)))
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut reached: std::collections::HashSet<usize> = roots.iter().copied().collect();
    let mut stack: Vec<usize> = roots.to_vec();
    while let Some(s) = stack.pop() {
        for (t, _) in sites(env, s) {
            if reached.insert(t) {
                stack.push(t);
            }
        }
    }
    let mut reported: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for &start in systems {
        if reached.contains(&start) || reported.contains(&start) {
            continue;
        }
        // Depth-first from `start` over unreached systems, looking for a
        // path back to it.
        let mut path: Vec<(usize, Span)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut todo: Vec<(usize, usize)> = vec![(start, 0)];
        let mut closing = None;
        while let Some((s, depth)) = todo.pop() {
            path.truncate(depth);
            for (t, span) in sites(env, s) {
                if t == start {
                    closing = Some((s, span));
                    break;
                }
                if !reached.contains(&t) && seen.insert(t) {
                    todo.push((t, depth + 1));
                }
            }
            if let Some((s, span)) = closing {
                path.push((s, span));
                break;
            }
            path.push((s, Span::default()));
        }
        let Some((_, span)) = closing else {
            continue;
        };
        let mut names: Vec<String> = path
            .iter()
            .map(|(s, _)| env.items[*s].item.name().name.clone())
            .collect();
        names.dedup();
        names.push(env.items[start].item.name().name.clone());
        reported.extend(path.iter().map(|(s, _)| *s));
        env.diags
            .push(ElabError::SystemCycle { span, path: names }.into_diagnostic());
    }
}

fn inst_targets(members: &[ast::SystemMember]) -> Vec<String> {
    members
        .iter()
        .flat_map(|m| match m {
            ast::SystemMember::Inst { target, .. } => vec![target.name.clone()],
            ast::SystemMember::For { body, .. } => inst_targets(body),
            ast::SystemMember::If {
                then, otherwise, ..
            } => {
                let mut targets = inst_targets(then);
                targets.extend(inst_targets(otherwise));
                targets
            }
            _ => Vec::new(),
        })
        .collect()
}
