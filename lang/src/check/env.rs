//! Module scopes, `use`, name lookup and types: what every item of every
//! module is called and what type each type expression denotes.

use super::*;

/// The prefix of a user module's entry in [`Env::module_names`]
/// (`user:lib::fifo`), which keeps it apart from a std module's.
const USER: &str = "user:";

impl Env {
    /// An environment over the user's modules (already parsed); loads the
    /// standard library modules they `use`.
    pub fn new(sources: &mut SourceMap, user: Vec<ast::Module>) -> Env {
        let mut env = Env {
            items: Vec::new(),
            scopes: vec![FxHashMap::default()],
            aliases: FxHashMap::default(),
            glob_bound: FxHashSet::default(),
            ambiguous: FxHashMap::default(),
            module_names: vec![String::new()],
            diags: Vec::new(),
            used: HashSet::new(),
            consts: HashMap::new(),
            const_stack: Vec::new(),
            types: HashMap::new(),
            struct_types: HashMap::new(),
            type_stack: Vec::new(),
            fn_ids: HashMap::new(),
            fn_stack: Vec::new(),
            functions: Vec::new(),
            broken: FxHashSet::default(),
            loading: Vec::new(),
        };
        env.broken = user.iter().flat_map(|m| m.broken.iter().cloned()).collect();
        let items: Vec<Item> = user.into_iter().flat_map(|m| m.items).collect();
        env.add_items(0, items);
        env.resolve_uses(sources, 0);
        env
    }

    pub(super) fn add_items(&mut self, module: usize, items: Vec<Item>) {
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

    /// `use a::b;` (every item of user module `a::b`) or `use a::b::Item;`
    /// (one item of `a::b`, when no module `a::b::Item` was added): the
    /// module is the file `chronc` added for that path (E0208 when none,
    /// E0209 when it is being loaded: a cycle).
    fn use_user_module(&mut self, sources: &mut SourceMap, module: usize, u: &ast::UseItem) {
        let candidates = u.user_module_candidates();
        let Some((name, item)) = candidates
            .iter()
            .find(|(name, _)| sources.module(name).is_some())
            .cloned()
        else {
            let span = u.path[0].span.to(u.path[u.path.len() - 1].span);
            let files: Vec<String> = candidates
                .iter()
                .map(|(n, _)| format!("`{}.chr`", n.replace("::", "/")))
                .collect();
            self.diags.push(
                ResolveError::NoUserModule {
                    span,
                    files: files.join(" or "),
                    name: candidates[0].0.clone(),
                }
                .into_diagnostic(),
            );
            return;
        };
        if let Some(m) = self.user_module(&name)
            && self.loading.contains(&m)
        {
            let mut cycle: Vec<String> = self.loading
                [self.loading.iter().position(|x| *x == m).unwrap_or(0)..]
                .iter()
                .map(|&l| self.module_names[l].trim_start_matches(USER).to_string())
                .collect();
            cycle.push(name.clone());
            self.diags.push(
                ResolveError::ModuleCycle {
                    span: u.span,
                    cycle,
                }
                .into_diagnostic(),
            );
            return;
        }
        let Some(m) = self.load_user(sources, &name) else {
            return;
        };
        let wanted: Vec<(String, ItemId)> = match item {
            Some(item) => match self.scopes[m].get(&item.name) {
                Some(id) if self.items[*id].module == m => vec![(item.name.clone(), *id)],
                _ => {
                    let suggestion = did_you_mean(
                        &item.name,
                        self.scopes[m]
                            .iter()
                            .filter(|(_, id)| self.items[**id].module == m)
                            .map(|(n, _)| n.as_str()),
                    )
                    .map(str::to_string);
                    self.diags.push(
                        ResolveError::UnknownImport {
                            span: item.span,
                            module: name.clone(),
                            name: item.name.clone(),
                            suggestion,
                        }
                        .into_diagnostic(),
                    );
                    return;
                }
            },
            None => {
                let alias = u.path[u.path.len() - 1].name.clone();
                self.aliases.insert((module, alias), m);
                let own = self.own_items(m);
                self.import_glob(module, own);
                return;
            }
        };
        self.import(module, u.span, wanted);
    }

    /// The items module `m` declares itself, by name (not its imports),
    /// in name order.
    fn own_items(&self, m: usize) -> Vec<(String, ItemId)> {
        let mut own: Vec<(String, ItemId)> = self.scopes[m]
            .iter()
            .filter(|(_, id)| self.items[**id].module == m)
            .map(|(n, id)| (n.clone(), *id))
            .collect();
        own.sort();
        own
    }

    /// Brings every item of a whole module into `module`'s scope, below
    /// its own items and imports by name: a name one of those holds stays
    /// theirs, and a name another whole-module import holds becomes
    /// ambiguous, an error only where it is used unqualified.
    fn import_glob(&mut self, module: usize, wanted: Vec<(String, ItemId)>) {
        for (n, id) in wanted {
            let key = (module, n);
            if let Some(ids) = self.ambiguous.get_mut(&key) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
                continue;
            }
            match self.scopes[module].get(&key.1) {
                None => {
                    self.scopes[module].insert(key.1.clone(), id);
                    self.glob_bound.insert(key);
                }
                Some(prev) if *prev == id => {}
                Some(prev) if self.glob_bound.contains(&key) => {
                    let prev = *prev;
                    self.scopes[module].remove(&key.1);
                    self.glob_bound.remove(&key);
                    self.ambiguous.insert(key, vec![prev, id]);
                }
                Some(_) => {}
            }
        }
    }

    /// Brings `wanted` into `module`'s scope (E0202 for a name there that
    /// is another item).
    fn import(&mut self, module: usize, span: Span, mut wanted: Vec<(String, ItemId)>) {
        // Scope maps iterate in no fixed order: report clashes in one.
        wanted.sort();
        for (n, id) in wanted {
            let key = (module, n.clone());
            // An import by name wins over a whole module's.
            if self.glob_bound.remove(&key) || self.ambiguous.remove(&key).is_some() {
                self.scopes[module].insert(n, id);
                continue;
            }
            if let Some(prev) = self.scopes[module].get(&n) {
                if *prev != id {
                    let previous = self.items[*prev].item.name().span;
                    self.diags.push(
                        ResolveError::Duplicate {
                            span,
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

    /// User module `name`'s id, if it is loaded (see [`USER`]).
    fn user_module(&self, name: &str) -> Option<usize> {
        self.module_names
            .iter()
            .position(|n| n.strip_prefix(USER) == Some(name))
    }

    /// User module `name`'s id, loading it (and what it uses) the first
    /// time.
    fn load_user(&mut self, sources: &mut SourceMap, name: &str) -> Option<usize> {
        if let Some(m) = self.user_module(name) {
            return Some(m);
        }
        let file = sources.module(name)?;
        let (module_ast, diags) = crate::parse::parse_file(file, &sources.get(file).text);
        self.diags.extend(diags);
        self.broken.extend(module_ast.broken.iter().cloned());
        let m = self.scopes.len();
        self.scopes.push(FxHashMap::default());
        self.module_names.push(format!("{USER}{name}"));
        self.add_items(m, module_ast.items);
        self.loading.push(m);
        self.resolve_uses(sources, m);
        self.loading.pop();
        Some(m)
    }

    pub(super) fn load_std(&mut self, sources: &mut SourceMap, name: &str) -> Option<usize> {
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

    pub(super) fn resolve_uses(&mut self, sources: &mut SourceMap, module: usize) {
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
            if first.name != "std" {
                self.use_user_module(sources, module, &u);
                continue;
            }
            if u.path.len() > 3 {
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
                self.aliases.insert((module, mname.name.clone()), m);
                let own = self.own_items(m);
                self.import_glob(module, own);
                continue;
            };
            self.import(module, u.span, wanted);
        }
    }

    /// Looks a name up in a module's scope and records the use.
    /// A qualified name `m::Item` looks `Item` up among the items of the
    /// module `m` names (see [`Env::aliases`]).
    pub fn lookup(&mut self, module: usize, name: &str) -> Option<ItemId> {
        let id = match name.split_once("::") {
            Some((m, item)) => {
                let m = *self.aliases.get(&(module, m.to_string()))?;
                let id = *self.scopes[m].get(item)?;
                if self.items[id].module != m {
                    return None;
                }
                id
            }
            None => *self.scopes[module].get(name)?,
        };
        self.used.insert((module, id));
        Some(id)
    }

    /// Visible item names of a module, for suggestions.
    pub fn visible(&self, module: usize) -> Vec<String> {
        self.scopes[module].keys().cloned().collect()
    }

    pub(super) fn unknown(
        &mut self,
        module: usize,
        ident: &ast::Ident,
        kind: &'static str,
        extra: &[String],
    ) {
        if self.broken.contains(&ident.name) || self.report_ambiguous(module, ident) {
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

    /// Reports E0210 when `ident` is a name two whole-module imports of
    /// `module` both bring in; returns whether it did.
    pub(crate) fn report_ambiguous(&mut self, module: usize, ident: &ast::Ident) -> bool {
        if let Some(ids) = self.ambiguous.get(&(module, ident.name.clone())) {
            let mut modules: Vec<String> = ids
                .iter()
                .map(|id| {
                    let m = &self.module_names[self.items[*id].module];
                    let m = m.trim_start_matches(USER);
                    m.rsplit("::").next().unwrap_or(m).to_string()
                })
                .collect();
            modules.sort();
            self.diags.push(
                ResolveError::AmbiguousName {
                    span: ident.span,
                    name: ident.name.clone(),
                    modules,
                }
                .into_diagnostic(),
            );
            return true;
        }
        false
    }

    /// Warns about `use` items of the user's module whose imports are unused.
    pub fn lint_imports(&mut self) {
        let mut warnings = Vec::new();
        for e in self.items.iter().filter(|e| e.module == 0) {
            let Item::Use(u) = &e.item else { continue };
            let position = |key: &str| self.module_names.iter().position(|x| x == key);
            let (m, item) = if u.path[0].name == "std" {
                let Some(m) = u.path.get(1).and_then(|n| position(&n.name)) else {
                    continue;
                };
                (m, u.path.get(2))
            } else {
                let loaded = u
                    .user_module_candidates()
                    .into_iter()
                    .find_map(|(name, item)| Some((self.user_module(&name)?, item)));
                let Some(found) = loaded else { continue };
                found
            };
            let any_used = match item {
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
            ast::TypeExprKind::SizedInt { signed, width } => {
                let n = self.const_int(module, params, width, "an integer width");
                match sized_int(*signed, n, width.span) {
                    Ok(t) => t,
                    Err(e) => {
                        self.diags.extend(e.map(IntoDiagnostic::into_diagnostic));
                        Type::Error
                    }
                }
            }
            ast::TypeExprKind::Named(id) => {
                let n = id.name.as_str();
                if n == "bool" {
                    return Type::Bool;
                }
                // A type parameter's value (`check/generics.rs`).
                if let Some((_, Value::Type(t))) = params.get(n) {
                    return t.clone();
                }
                if let Some(rest) = n.strip_prefix('u').or_else(|| n.strip_prefix('i'))
                    && !rest.is_empty()
                    && rest.chars().all(|c| c.is_ascii_digit())
                {
                    return match rest.parse::<u32>() {
                        Ok(w) if (1..=MAX_INT_BITS).contains(&w) => Type::Int {
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
            ast::TypeExprKind::Generic { name, args } => match self.lookup(module, &name.name) {
                Some(item) => self.struct_type(item, name, (module, params), args),
                None => {
                    self.unknown(module, name, "type", &[]);
                    Type::Error
                }
            },
        }
    }

    /// Struct `item` with arguments `args` (written in `at`'s module with
    /// its parameters) and defaults for the rest: one type per set of
    /// values, named `Pair<T = u8, N = 2>`.
    pub(crate) fn struct_type(
        &mut self,
        item: ItemId,
        use_site: &ast::Ident,
        at: (usize, &Params),
        args: &[(ast::Ident, ast::Expr)],
    ) -> Type {
        let Item::Struct(s) = self.items[item].item.clone() else {
            if args.is_empty() {
                return self.item_type(item, use_site);
            }
            self.diags.push(
                ResolveError::WrongKind {
                    span: use_site.span,
                    name: use_site.name.clone(),
                    expected: "generic struct",
                    found: item_kind(&self.items[item].item),
                }
                .into_diagnostic(),
            );
            return Type::Error;
        };
        // Its defaults and fields may name it again (`struct P<T: type = P>`).
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
        let t = self.struct_type_in(item, &s, use_site, at, args);
        self.type_stack.pop();
        t
    }

    /// [`Env::struct_type`] once `item` is on the type stack.
    fn struct_type_in(
        &mut self,
        item: ItemId,
        s: &ast::StructDef,
        use_site: &ast::Ident,
        at: (usize, &Params),
        args: &[(ast::Ident, ast::Expr)],
    ) -> Type {
        let module = self.items[item].module;
        let mut ok = true;
        for (a, _) in args {
            if !s.params.iter().any(|g| g.name.name == a.name) {
                let help = match s.params.len() {
                    0 => format!(
                        "`{}` takes no parameters; remove this argument",
                        s.name.name
                    ),
                    _ => format!(
                        "the parameters are: {}",
                        s.params
                            .iter()
                            .map(|g| g.name.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                self.diags.push(
                    crate::errors::ElabError::BadParam {
                        span: a.span,
                        message: format!("`{}` has no parameter `{}`", s.name.name, a.name),
                        help,
                    }
                    .into_diagnostic(),
                );
                ok = false;
            }
        }
        let mut own = Params::new();
        for g in &s.params {
            let ty = self.param_type(module, &own, g);
            let value = match args.iter().find(|(a, _)| a.name == g.name.name) {
                Some((_, e)) => self.param_arg(at.0, at.1, g, &ty, e, "a struct argument"),
                None => match &g.default {
                    Some(e) => self.param_arg(module, &own, g, &ty, e, "a parameter default"),
                    None => {
                        self.diags.push(
                            crate::errors::ElabError::BadParam {
                                span: use_site.span,
                                message: format!(
                                    "parameter `{}` of struct `{}` has no value",
                                    g.name.name, s.name.name
                                ),
                                help: format!("pass it: `{}<{} = ...>`", s.name.name, g.name.name),
                            }
                            .into_diagnostic(),
                        );
                        None
                    }
                },
            };
            match value {
                Some(v) => {
                    own.insert(g.name.name.clone(), (ty, v));
                }
                None => ok = false,
            }
        }
        if !ok {
            return Type::Error;
        }
        let key = (item, param_key(&own));
        if let Some(t) = self.struct_types.get(&key) {
            return t.clone();
        }
        let shown = s
            .params
            .iter()
            .filter_map(|g| {
                own.get(&g.name.name)
                    .map(|(_, v)| format!("{} = {v}", g.name.name))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let name = if shown.is_empty() {
            s.name.name.clone()
        } else {
            format!("{}<{shown}>", s.name.name)
        };
        // The fields are resolved with the struct off the stack, where
        // `struct_fields` reports one that contains the struct itself.
        self.type_stack.pop();
        let t = self.struct_fields(item, s, name, &own, use_site);
        self.type_stack.push(item);
        self.struct_types.insert(key, t.clone());
        t
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
            // A generic struct named alone takes its defaults.
            Item::Struct(s) if !s.params.is_empty() => {
                return self.struct_type(item, use_site, (module, &Params::new()), &[]);
            }
            Item::Struct(s) => {
                let t = self.struct_fields(item, &s, s.name.name.clone(), &Params::new(), use_site);
                if t == Type::Error {
                    return t;
                }
                t
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
}

impl Env {
    /// The type of struct `item` (`s`) with parameter values `params`,
    /// named `name`: its fields resolved in its module (E0205 for a struct
    /// that contains itself).
    fn struct_fields(
        &mut self,
        item: ItemId,
        s: &ast::StructDef,
        name: String,
        params: &Params,
        use_site: &ast::Ident,
    ) -> Type {
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
        let module = self.items[item].module;
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
            let ft = self.resolve_type(module, params, t);
            fields.push((n.name.clone(), ft));
        }
        self.type_stack.pop();
        let args = s
            .params
            .iter()
            .filter_map(|g| {
                params
                    .get(&g.name.name)
                    .map(|(_, v)| (g.name.name.clone(), v.clone()))
            })
            .collect();
        Type::Struct(Arc::new(d::StructType { name, args, fields }))
    }
}

/// The type `u<n>` or `i<n>` (`signed`), its width `n` already evaluated
/// (`None`: it was not a constant, already reported); an error for a
/// width out of range (E0308), if there is one to report.
pub(super) fn sized_int(
    signed: bool,
    n: Option<i128>,
    span: Span,
) -> Result<Type, Option<TypeError>> {
    let n = n.ok_or(None)?;
    match u32::try_from(n) {
        Ok(width) if (1..=MAX_INT_BITS).contains(&width) => Ok(Type::Int { signed, width }),
        _ => Err(Some(TypeError::BadWidth {
            span,
            name: format!("{}<{n}>", if signed { "i" } else { "u" }),
        })),
    }
}
