//! The statement and pattern forms of docs/language.md ("Tick
//! statements"), and which of them a design uses: so a test can ask the
//! random design generator and the fuzzer's corpus to reach every one.

use std::collections::BTreeSet;

use chronon_lang::ast::{self, Cond, ExprKind, Item, Pattern, StmtKind, UnitMember};
use chronon_lang::span::FileId;

/// Every form, by the name [`forms_of`] gives it.
pub const FORMS: &[&str] = &[
    "let with a type",
    "let with an inferred type",
    "local assignment",
    "register write",
    "register element write",
    "register field write",
    "counter add",
    "if",
    "if else",
    "else if",
    "if let",
    "if let else",
    "match on an integer",
    "match arm with alternatives",
    "match with _",
    "match on bool",
    "match on an enum",
    "match on an option: Some and None",
    "match on an option: Some and _",
    "match on an option: None and _",
    "match on an option: Some alone",
    "match on an option: None alone",
    "match with _ alone",
    "for",
    "for with max",
    "while",
    "return",
    "finish",
    "assert",
    "trace",
    "print",
    "method statement",
    "recv",
    "peek",
    "send",
    "try_send",
    "can_send",
    "request",
    "valid",
    "take",
    "stage write",
    "stage read",
    "stage retain",
    "function call",
];

/// The forms the tick bodies and functions of `text` use; panics if it
/// does not parse.
pub fn forms_of(text: &str) -> BTreeSet<&'static str> {
    let (module, diags) = chronon_lang::parse::parse_file(FileId(0), text);
    assert!(diags.is_empty(), "does not parse: {diags:?}\n{text}");
    let mut found = BTreeSet::new();
    for item in &module.items {
        match item {
            Item::Fn(f) => block(&f.body, &mut found),
            Item::Unit(u) => {
                for m in &u.members {
                    if let UnitMember::Tick { body, .. } = m {
                        block(body, &mut found);
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn block(b: &ast::Block, found: &mut BTreeSet<&'static str>) {
    for s in &b.stmts {
        stmt(&s.kind, found);
    }
}

fn stmt(s: &StmtKind, found: &mut BTreeSet<&'static str>) {
    match s {
        StmtKind::Let { ty, value, .. } => {
            found.insert(match ty {
                Some(_) => "let with a type",
                None => "let with an inferred type",
            });
            expr(value, found);
        }
        StmtKind::Assign { value, .. } => {
            found.insert("local assignment");
            expr(value, found);
        }
        StmtKind::RegWrite { place, value } => {
            found.insert(match place.kind {
                ExprKind::Index(..) => "register element write",
                ExprKind::Field(..) => "register field write",
                _ => "register write",
            });
            expr(value, found);
        }
        StmtKind::CounterAdd { value, .. } => {
            found.insert("counter add");
            expr(value, found);
        }
        StmtKind::If { arms, otherwise } => {
            let is_let = matches!(arms[0].0, Cond::LetSome(..));
            found.insert(match (is_let, otherwise.is_some()) {
                (false, false) => "if",
                (false, true) => "if else",
                (true, false) => "if let",
                (true, true) => "if let else",
            });
            if arms.len() > 1 {
                found.insert("else if");
            }
            for (cond, body) in arms {
                match cond {
                    Cond::Expr(e) | Cond::LetSome(_, e) => expr(e, found),
                }
                block(body, found);
            }
            if let Some(b) = otherwise {
                block(b, found);
            }
        }
        StmtKind::Match { scrutinee, arms } => {
            expr(scrutinee, found);
            match_forms(arms, found);
            for (_, body) in arms {
                block(body, found);
            }
        }
        StmtKind::For { max, body, .. } => {
            found.insert(if max.is_some() { "for with max" } else { "for" });
            block(body, found);
        }
        StmtKind::While { cond, body, .. } => {
            found.insert("while");
            expr(cond, found);
            block(body, found);
        }
        StmtKind::Return(e) => {
            found.insert("return");
            expr(e, found);
        }
        StmtKind::Finish => {
            found.insert("finish");
        }
        StmtKind::Assert { cond, .. } => {
            found.insert("assert");
            expr(cond, found);
        }
        StmtKind::Trace { args, .. } => {
            found.insert("trace");
            for (_, e) in args {
                expr(e, found);
            }
        }
        StmtKind::Expr(e) => {
            found.insert("method statement");
            expr(e, found);
        }
    }
}

fn match_forms(arms: &[(Vec<Pattern>, ast::Block)], found: &mut BTreeSet<&'static str>) {
    let pats = || arms.iter().flat_map(|(p, _)| p.iter());
    let (some, none, wild) = (
        pats().any(|p| matches!(p, Pattern::Some(_))),
        pats().any(|p| matches!(p, Pattern::None(_))),
        pats().any(|p| matches!(p, Pattern::Wildcard(_))),
    );
    if arms.iter().any(|(p, _)| p.len() > 1) {
        found.insert("match arm with alternatives");
    }
    if pats().any(|p| matches!(p, Pattern::Int(..))) {
        found.insert("match on an integer");
    }
    if pats().any(|p| matches!(p, Pattern::Bool(..))) {
        found.insert("match on bool");
    }
    if pats().any(|p| matches!(p, Pattern::Enum(..))) {
        found.insert("match on an enum");
    }
    if wild && (some || none || pats().count() > 1) {
        found.insert("match with _");
    }
    found.insert(match (some, none, wild) {
        (true, true, _) => "match on an option: Some and None",
        (true, false, true) => "match on an option: Some and _",
        (false, true, true) => "match on an option: None and _",
        (true, false, false) => "match on an option: Some alone",
        (false, true, false) => "match on an option: None alone",
        (false, false, true) if pats().count() == 1 => "match with _ alone",
        _ => return,
    });
}

fn expr(e: &ast::Expr, found: &mut BTreeSet<&'static str>) {
    match &e.kind {
        ExprKind::Method(recv, name, args) => {
            let form = match name.name.as_str() {
                "recv" => "recv",
                "peek" => "peek",
                "send" => "send",
                "try_send" => "try_send",
                "can_send" => "can_send",
                "request" => "request",
                "valid" => "valid",
                "take" => "take",
                "write" => "stage write",
                "read" => "stage read",
                "retain" => "stage retain",
                _ => "",
            };
            if !form.is_empty() {
                found.insert(form);
            }
            expr(recv, found);
            for a in args {
                expr(a, found);
            }
        }
        ExprKind::Call(name, args) => {
            match name.name.as_str() {
                "random" => {}
                "print" => {
                    found.insert("print");
                }
                _ => {
                    found.insert("function call");
                }
            }
            for a in args {
                expr(a, found);
            }
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a, _) | ExprKind::Field(a, _) => expr(a, found),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) | ExprKind::ArrayRepeat(a, b) => {
            expr(a, found);
            expr(b, found);
        }
        ExprKind::Slice(a, _, l, r) => {
            expr(a, found);
            expr(l, found);
            expr(r, found);
        }
        ExprKind::Concat(parts) => parts.iter().for_each(|e| expr(e, found)),
        ExprKind::Replicate(n, parts) => {
            expr(n, found);
            parts.iter().for_each(|e| expr(e, found));
        }
        ExprKind::StructLit(_, fields) => fields.iter().for_each(|(_, e)| expr(e, found)),
        ExprKind::ArrayLit(items) => items.iter().for_each(|e| expr(e, found)),
        ExprKind::Int(..)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::TypeArg(_)
        | ExprKind::Name(_)
        | ExprKind::EnumValue(..) => {}
    }
}
