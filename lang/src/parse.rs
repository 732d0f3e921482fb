//! Parsing: source text to [`crate::ast::Module`] and parse diagnostics.
//!
//! The file is first cut into top-level items by a cheap scan that matches
//! braces and skips comments and strings; each item is then parsed on its own,
//! so one broken item does not hide the errors of the others. Nesting depth is
//! bounded before any parser sees the text, so hostile input cannot overflow
//! the stack.
//!
//! Each item is read first by a hand-written lexer and recursive-descent
//! parser (`descent`), which builds the AST of a clean item; an item it does
//! not accept (a syntax error, anything the builder would report, a `clock`
//! item) is parsed again with pest from `grammar.pest`, the grammar's
//! specification, whose builder produces the same AST and every parse
//! diagnostic. [`parse_file_reference`] parses with pest alone: the
//! reference the fast path is tested against.

mod descent;
mod lexer;

use pest::Parser;
use pest::iterators::Pair;

use num_bigint::{BigInt, Sign};
use std::sync::Arc;

use crate::design::MAX_INT_BITS;

use crate::ast::*;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::span::{FileId, Span};

/// The pest reference parser generated from `grammar.pest`.
mod grammar {
    // The derive generates `Rule`, one variant per rule of the grammar,
    // which documents them.
    #![allow(missing_docs)]

    #[derive(pest_derive::Parser)]
    #[grammar = "grammar.pest"]
    pub(super) struct ChrParser;
}
use grammar::{ChrParser, Rule};

/// Deepest bracket nesting accepted (parentheses, brackets and braces together).
pub const MAX_NESTING: usize = 64;
/// Deepest expression tree accepted (operator chains count one level per operator).
pub const MAX_EXPR_DEPTH: usize = 256;

/// Parse-phase errors. A variant's fields are the values its message and
/// labels show ([`IntoDiagnostic`] below); its doc names its code.
#[derive(Clone, Debug)]
#[expect(
    missing_docs,
    reason = "fields are the diagnostic's arguments, shown in into_diagnostic"
)]
pub enum ParseError {
    /// E0101: the text does not match the grammar.
    Syntax {
        span: Span,
        expected: Vec<String>,
        found: String,
    },
    /// E0102: brackets or operators nested too deeply.
    TooDeep { span: Span, limit: usize },
    /// E0103: an integer literal does not fit [`MAX_INT_BITS`] bits.
    LiteralTooLarge { span: Span },
    /// E0104: a literal suffix names no integer type.
    BadSuffix { span: Span, suffix: String },
    /// E0105: a `{`, `(`, `[` or block comment is never closed.
    Unclosed { span: Span, what: &'static str },
    /// E0106: a closing bracket without an opening one.
    UnexpectedClose { span: Span, ch: char },
    /// E0107: a string literal with an unknown escape.
    BadEscape { span: Span },
    /// E0108: a struct literal directly in the head of `if`, `match` or
    /// `for`, where `Name {` starts the body.
    StructInHead {
        span: Span,
        name: String,
        head: &'static str,
    },
}

impl IntoDiagnostic for ParseError {
    fn into_diagnostic(self) -> Diagnostic {
        match self {
            ParseError::Syntax {
                span,
                expected,
                found,
            } => {
                let exp = join_alternatives(&expected);
                Diagnostic::error(
                    "E0101",
                    format!("syntax error: expected {exp}, found {found}"),
                    span,
                    format!("expected {exp}"),
                )
                .with_help("check this item against the syntax in docs/language.md")
            }
            ParseError::TooDeep { span, limit } => Diagnostic::error(
                "E0102",
                "nesting too deep",
                span,
                format!("more than {limit} levels deep"),
            )
            .with_help("split the expression or block into smaller pieces (functions, locals)"),
            ParseError::LiteralTooLarge { span } => Diagnostic::error(
                "E0103",
                "integer literal too large",
                span,
                format!("does not fit in {MAX_INT_BITS} bits"),
            )
            .with_help(format!("integers are at most {MAX_INT_BITS} bits wide")),
            ParseError::BadSuffix { span, suffix } => Diagnostic::error(
                "E0104",
                format!("invalid literal suffix `{suffix}`"),
                span,
                "not an integer type",
            )
            .with_help("a suffix is `u1` ... `u1024` or `i1` ... `i1024`"),
            ParseError::Unclosed { span, what } => Diagnostic::error(
                "E0105",
                format!("unclosed {what}"),
                span,
                "opened here and never closed",
            )
            .with_help("add the missing closing delimiter"),
            ParseError::UnexpectedClose { span, ch } => Diagnostic::error(
                "E0106",
                format!("unexpected `{ch}`"),
                span,
                "nothing to close here",
            )
            .with_help("remove it, or add the matching opening delimiter"),
            ParseError::BadEscape { span } => Diagnostic::error(
                "E0107",
                "unknown escape in string",
                span,
                "not one of \\\" \\\\ \\n \\t",
            )
            .with_help("strings allow the escapes \\\", \\\\, \\n and \\t"),
            ParseError::StructInHead { span, name, head } => Diagnostic::error(
                "E0108",
                format!("struct literal in the head of `{head}`"),
                span,
                format!("`{name} {{` reads as the name `{name}` and the start of the body"),
            )
            .with_help(format!(
                "put the struct literal in parentheses: `({name} {{ ... }})`"
            )),
        }
    }
}

fn join_alternatives(items: &[String]) -> String {
    match items {
        [] => "something else".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

/// Parses one file. Always returns a module (of the items that parsed) and
/// every parse diagnostic.
pub fn parse_file(file: FileId, text: &str) -> (Module, Vec<Diagnostic>) {
    parse_with(file, text, true)
}

/// Parses one file with pest alone (the grammar's reference parser): the
/// same result as [`parse_file`], slower. For the differential tests and the
/// front-end benchmark.
pub fn parse_file_reference(file: FileId, text: &str) -> (Module, Vec<Diagnostic>) {
    parse_with(file, text, false)
}

fn parse_with(file: FileId, text: &str, fast: bool) -> (Module, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut module = Module::default();
    let mut dropped = Vec::new();
    let items = split_items(file, text, &mut diags, &mut dropped);
    // An item skipped for its delimiters or nesting is reported there; its
    // uses are not reported again as unknown names.
    for (start, end) in dropped {
        if let Some(name) = declared_name(&text[start..end]) {
            module.broken.push(name.to_string());
        }
    }
    for (start, end) in items {
        let chunk = &text[start..end];
        if fast && let Some(item) = descent::parse_item(file, start, chunk) {
            module.items.push(item);
            continue;
        }
        let (items, errors) = (module.items.len(), diags.len());
        parse_item_pest(file, start, chunk, &mut module, &mut diags);
        if module.items.len() == items
            && diags.len() > errors
            && let Some(name) = declared_name(chunk)
        {
            module.broken.push(name.to_string());
        }
    }
    (module, diags)
}

/// The name an item's text declares (`unit Name ...`, `const Name ...`), read
/// without parsing, for items that failed to parse.
fn declared_name(chunk: &str) -> Option<&str> {
    const KEYWORDS: [&str; 7] = ["const", "clock", "struct", "enum", "fn", "unit", "system"];
    let keyword = KEYWORDS.iter().find(|k| {
        chunk.starts_with(**k)
            && !chunk[k.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })?;
    let mut rest = &chunk[keyword.len()..];
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

fn parse_item_pest(
    file: FileId,
    start: usize,
    chunk: &str,
    module: &mut Module,
    diags: &mut Vec<Diagnostic>,
) {
    match ChrParser::parse(Rule::item_eoi, chunk) {
        Ok(mut pairs) => {
            let item_eoi = pairs.next().expect("item_eoi matched");
            let mut b = Builder {
                file,
                base: start,
                diags,
                keywords_as_names: Vec::new(),
            };
            let errors = b.diags.len();
            if let Some(item) = item_eoi.into_inner().next()
                && let Some(it) = b.item(item)
                // An expression nested too deeply was replaced by `0` (E0102):
                // the item is left out like one that does not parse, so the
                // stand-in draws no type errors and its uses no E0201.
                && !b.diags[errors..].iter().any(|d| d.code == "E0102")
            {
                module.items.push(it);
            }
            module.broken.append(&mut b.keywords_as_names);
        }
        Err(e) => diags.push(syntax_error(file, start, chunk, e).into_diagnostic()),
    }
}

fn syntax_error(file: FileId, base: usize, chunk: &str, e: pest::error::Error<Rule>) -> ParseError {
    // Pest names only rules in its plain errors; the detailed attempts also
    // name the literal tokens expected at the farthest position. Detail costs
    // time, so it is switched on only once a first error is seen (and left
    // on, so that every later report is made the same way).
    pest::set_error_detail(true);
    let detailed = ChrParser::parse(Rule::item_eoi, chunk)
        .err()
        .and_then(|e| e.parse_attempts());
    let (pos, mut expected) = match detailed {
        Some(att) => {
            let mut words: Vec<String> = Vec::new();
            for t in att.expected_tokens() {
                let token = t.to_string();
                let is_range = token.len() == 4 && &token[1..3] == "..";
                if !is_range
                    && token != "BUILTIN_RULE"
                    && !token.trim().is_empty()
                    && !token.starts_with("//")
                    && !token.starts_with("/*")
                {
                    words.push(format!("`{token}`"));
                }
            }
            for cs in att.call_stacks() {
                let rule = cs.deepest.get_rule().copied().or(cs.parent);
                if let Some(w) = rule.and_then(describe) {
                    words.push(w.to_string());
                }
            }
            (att.max_position, words)
        }
        None => {
            let pos = match e.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((s, _)) => s,
            };
            let words = match &e.variant {
                pest::error::ErrorVariant::ParsingError { positives, .. } => positives
                    .iter()
                    .filter_map(|r| describe(*r))
                    .map(str::to_string)
                    .collect(),
                pest::error::ErrorVariant::CustomError { message } => vec![message.clone()],
            };
            (pos, words)
        }
    };
    simplify_expected(&mut expected);
    let rest = &chunk[pos.min(chunk.len())..];
    let found = match rest.chars().next() {
        None => "end of item".to_string(),
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            format!("`{word}`")
        }
        Some(c) => format!("`{c}`"),
    };
    if let Some((start, name, head)) = struct_in_head(chunk, pos) {
        return ParseError::StructInHead {
            span: Span::new(file, base + start, base + pos),
            name: name.to_string(),
            head,
        };
    }
    let len = rest.chars().next().map_or(0, char::len_utf8);
    ParseError::Syntax {
        span: Span::new(file, base + pos, base + pos + len),
        expected,
        found,
    }
}

/// Recognises a syntax error at the `:` of `Name { field:` where `Name {`
/// followed the head of an `if`, `match` or `for` (a struct literal there
/// is not allowed, so `{` opened the body): the start of `Name`, the name
/// and the head's keyword.
fn struct_in_head(chunk: &str, pos: usize) -> Option<(usize, &str, &'static str)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if !chunk.get(pos..)?.starts_with(':') || chunk.get(pos..)?.starts_with("::") {
        return None;
    }
    let before = chunk[..pos].trim_end();
    let field = before.trim_end_matches(is_word);
    if field.len() == before.len() {
        return None;
    }
    let name_end = field.trim_end().strip_suffix('{')?.trim_end();
    let name_start = name_end.trim_end_matches(is_word);
    let name = &name_end[name_start.len()..];
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return None;
    }
    // The statement the name is in: after the last `;`, `{` or `}`.
    let stmt_start = name_start.rfind([';', '{', '}']).map_or(0, |i| i + 1);
    let stmt = name_start[stmt_start..].trim_start();
    let stmt = stmt.strip_prefix("else").map_or(stmt, str::trim_start);
    let head = ["if", "match", "for"].into_iter().find(|k| {
        stmt.strip_prefix(k)
            .is_some_and(|r| r.starts_with(|c: char| !is_word(c)))
    })?;
    Some((name_start.len(), name, head))
}

/// Shortens an "expected" list: binary operators collapse into "an
/// operator", the tokens that can start an expression disappear behind "an
/// expression", and "an item" is dropped when anything more precise remains.
fn simplify_expected(words: &mut Vec<String>) {
    const BINARY: &[&str] = &[
        "`!=`", "`%`", "`&&`", "`&`", "`*`", "`+`", "`-`", "`.`", "`/`", "`<<`", "`<=`", "`<`",
        "`==`", "`>=`", "`>>`", "`>`", "`[`", "`^`", "`as`", "`|`", "`||`",
    ];
    const EXPR_START: &[&str] = &[
        "`\"`",
        "`!`",
        "`(`",
        "`0b`",
        "`0x`",
        "`_`",
        "`false`",
        "`true`",
        "`{`",
        "`~`",
        "a unary operator",
    ];
    // Tokens that start an operand and also continue one (`-x`, `a - b`;
    // `[1]`, `a[1]`; the reductions `&x` and `a & b`): they count towards
    // neither list alone.
    const EITHER: &[&str] = &["`-`", "`[`", "`&`", "`|`", "`^`"];
    // The time-unit rule's description lists the units: drop the same
    // units as literal tokens, so the list is not printed twice.
    const UNITS: &[&str] = &[
        "`Hz`", "`kHz`", "`MHz`", "`GHz`", "`fs`", "`ps`", "`ns`", "`us`", "`ms`", "`s`",
    ];
    if words.iter().any(|w| w.starts_with("a unit (")) {
        words.retain(|w| !UNITS.contains(&w.as_str()));
    }
    let binary = words
        .iter()
        .filter(|w| BINARY.contains(&w.as_str()) && !EITHER.contains(&w.as_str()))
        .count();
    if words.iter().any(|w| w == "an expression")
        || words
            .iter()
            .filter(|w| EXPR_START.contains(&w.as_str()))
            .count()
            >= 3
    {
        words.retain(|w| !EXPR_START.contains(&w.as_str()) && !EITHER.contains(&w.as_str()));
        words.push("an expression".to_string());
    }
    if binary >= 3 {
        words.retain(|w| !BINARY.contains(&w.as_str()));
        words.push("an operator".to_string());
    }
    let item = "an item (`use`, `const`, `clock`, `struct`, `enum`, `fn`, `unit`, `system`)";
    if words.len() > 1 {
        words.retain(|w| w != item);
    }
    words.sort();
    words.dedup();
}

/// Words for a grammar rule in "expected ..." messages; `None` hides it.
fn describe(rule: Rule) -> Option<&'static str> {
    use Rule::*;
    Some(match rule {
        ident => "a name",
        int_lit => "an integer",
        string_lit => "a string",
        bool_lit => "`true` or `false`",
        item_eoi | use_item | const_item | clock_item | struct_item | enum_item | fn_item
        | unit_item | system_item => {
            "an item (`use`, `const`, `clock`, `struct`, `enum`, `fn`, `unit`, `system`)"
        }
        EOI => "the end of the item",
        time_lit | time_num => "a time or frequency (e.g. `1 GHz`, `1094 ps`)",
        time_unit => "a unit (`Hz`, `kHz`, `MHz`, `GHz`, `fs`, `ps`, `ns`, `us`, `ms`, `s`)",
        clock_spec | clock_list => "a clock (e.g. `1 GHz phase 10 ps`)",
        field_decl => "a field `name: type`",
        fn_param => "a parameter `name: type`",
        generic_params | generic_param => "a parameter `NAME: type = default`",
        port_decl | reg_decl | stage_decl | counter_decl | tick_block => {
            "a unit member (`in`, `out`, `reg`, `stage`, `counter`, `tick`)"
        }
        port_kind | cdc_fwft | cdc_plain | rate_spec => "a port kind (`cdc`, `cdc fwft`, `rate N`)",
        expose_decl | inst_decl | connect_decl | cdc_decl | sys_for | sys_if => {
            "a system member (`in`, `out`, `inst`, `connect`, `cdc`, `for`, `if`)"
        }
        generic_args | generic_arg => "parameter values `<NAME = value>`",
        sys_block => "a block `{ ... }` of system members",
        latency_spec => "`latency`",
        capacity_spec => "`capacity`",
        depth_spec => "`depth`",
        sync_spec => "`sync`",
        endpoint => "a port `instance.port`",
        clock_ref => "a clock",
        type_expr | array_type => "a type",
        block => "a block `{ ... }`",
        let_stmt | if_stmt | match_stmt | for_stmt | return_stmt | finish_stmt | assert_stmt
        | trace_stmt | reg_write | counter_add | assign_stmt | expr_stmt => "a statement",
        else_if => "`else if`",
        condition | let_some => "a condition",
        match_arm => "a match arm `pattern => { ... }`",
        pattern | wildcard_pat | some_pat | none_pat | neg_int_pat | enum_pat => "a pattern",
        trace_arg => "a trace argument `name = value`",
        place => "a register or variable",
        expr | arg_expr | cast_expr | unary_expr | postfix_expr | paren_expr | array_lit
        | array_count | call_expr | struct_lit | enum_value | concat | replicate | concat_parts => {
            "an expression"
        }
        slice_tail | slice_op => "a slice bound (`:`, `+:`, `-:`)",
        field_suffix | index_suffix | method_suffix => "`.`, `[` or a method call",
        args => "arguments",
        field_init => "a field `name: value`",
        or_op | and_op | cmp_op | bor_op | bxor_op | band_op | shift_op | add_op | mul_op => {
            "an operator"
        }
        unary_op => "a unary operator",
        port_dir => "`in` or `out`",
        _ => return None,
    })
}

/// Where the (nested) block comment that opens at `start` ends: the index
/// after its `*/`, or `None` when it is not closed.
fn block_comment_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if bytes[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return Some(i);
            }
        } else {
            i += 1;
        }
    }
    None
}

/// Whether the text after a `}` that closed everything in an unbraced item
/// continues that item: the next token (after blanks and comments) is
/// neither the end of the text nor a keyword that starts an item.
fn item_goes_on(rest: &[u8]) -> bool {
    let mut k = 0;
    loop {
        while k < rest.len() && rest[k].is_ascii_whitespace() {
            k += 1;
        }
        if rest[k..].starts_with(b"//") {
            while k < rest.len() && rest[k] != b'\n' {
                k += 1;
            }
        } else if rest[k..].starts_with(b"/*") {
            // An unclosed block comment ends the item.
            match block_comment_end(rest, k) {
                Some(end) => k = end,
                None => return false,
            }
        } else {
            break;
        }
    }
    let word: Vec<u8> = rest[k..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .copied()
        .collect();
    let starts_item = [
        &b"use"[..],
        b"const",
        b"clock",
        b"struct",
        b"enum",
        b"fn",
        b"unit",
        b"system",
    ]
    .contains(&word.as_slice());
    k < rest.len() && !starts_item
}

/// Cuts the text into item byte ranges: an item starting with a braced
/// keyword ends at the brace that closes its body, any other at the `;` at
/// brace depth zero. Also bounds nesting depth and reports unbalanced
/// delimiters (their items are skipped, since pest would only repeat them,
/// and their ranges pushed on `dropped`).
fn split_items(
    file: FileId,
    text: &str,
    diags: &mut Vec<Diagnostic>,
    dropped: &mut Vec<(usize, usize)>,
) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    let mut item_start: Option<usize> = None;
    let mut braced = false;
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut too_deep = false;
    let mut bad_item = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let open = i;
            let end = block_comment_end(bytes, i);
            i = end.unwrap_or(bytes.len());
            if end.is_none() {
                diags.push(
                    ParseError::Unclosed {
                        span: Span::new(file, open, open + 2),
                        what: "block comment",
                    }
                    .into_diagnostic(),
                );
                bad_item = true;
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if item_start.is_none() {
            item_start = Some(i);
            let word: &[u8] = &bytes[i..bytes.len().min(i + 7)];
            braced = [&b"struct"[..], b"enum", b"fn", b"unit", b"system"]
                .iter()
                .any(|k| {
                    word.starts_with(k)
                        && word
                            .get(k.len())
                            .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                });
        }
        match c {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => {
                stack.push((c, i));
                if stack.len() > MAX_NESTING && !too_deep {
                    too_deep = true;
                    diags.push(
                        ParseError::TooDeep {
                            span: Span::new(file, i, i + 1),
                            limit: MAX_NESTING,
                        }
                        .into_diagnostic(),
                    );
                }
            }
            b')' | b']' | b'}' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match stack.last() {
                    Some((o, _)) if *o == open => {
                        stack.pop();
                    }
                    _ => {
                        diags.push(
                            ParseError::UnexpectedClose {
                                span: Span::new(file, i, i + 1),
                                ch: c as char,
                            }
                            .into_diagnostic(),
                        );
                        bad_item = true;
                        stack.clear();
                    }
                }
            }
            _ => {}
        }
        i += 1;
        let at_end = stack.is_empty() && ((c == b'}' && braced) || (c == b';' && !braced));
        // A `}` at depth zero also ends an unbraced item (a `const` whose
        // `;` is missing before the next item), unless the item goes on: a
        // struct literal in a `const` initializer (`const K: S = S { a: 1 };`)
        // is followed by its `;` or an operator, not by an item keyword.
        if at_end || (stack.is_empty() && c == b'}' && !braced && !item_goes_on(&bytes[i..])) {
            if let Some(s) = item_start.take() {
                if too_deep || bad_item {
                    dropped.push((s, i));
                } else {
                    items.push((s, i));
                }
            }
            too_deep = false;
            bad_item = false;
        }
    }
    if let Some(s) = item_start {
        if let Some((ch, pos)) = stack.first() {
            let what = match ch {
                b'(' => "`(`",
                b'[' => "`[`",
                _ => "`{`",
            };
            diags.push(
                ParseError::Unclosed {
                    span: Span::new(file, *pos, pos + 1),
                    what,
                }
                .into_diagnostic(),
            );
        } else if !too_deep && !bad_item {
            items.push((s, bytes.len()));
        } else {
            dropped.push((s, bytes.len()));
        }
    }
    items
}

struct Builder<'d> {
    file: FileId,
    base: usize,
    diags: &'d mut Vec<Diagnostic>,
    /// Keywords written where a name belongs (reported once, here): the
    /// checker is told not to report their uses as unknown names too.
    keywords_as_names: Vec<String>,
}

fn inner(p: Pair<'_, Rule>) -> impl Iterator<Item = Pair<'_, Rule>> {
    p.into_inner()
}

impl Builder<'_> {
    fn span(&self, p: &Pair<'_, Rule>) -> Span {
        let s = p.as_span();
        Span::new(self.file, self.base + s.start(), self.base + s.end())
    }

    /// An item's name: an identifier, or a qualified name (`fifo::Fifo`)
    /// as one name with its parts joined by `::`.
    fn item_name(&mut self, p: Pair<'_, Rule>) -> Ident {
        if p.as_rule() != Rule::qualified_name {
            return self.ident(p);
        }
        let span = self.span(&p);
        let parts: Vec<String> = inner(p).map(|q| self.ident(q).name).collect();
        Ident {
            name: parts.join("::"),
            span,
        }
    }

    fn ident(&mut self, p: Pair<'_, Rule>) -> Ident {
        let name = p.as_str();
        let span = self.span(&p);
        if is_keyword(name) {
            self.diags.push(
                ParseError::Syntax {
                    span,
                    expected: vec!["a name".to_string()],
                    found: format!("keyword `{name}`"),
                }
                .into_diagnostic(),
            );
            self.keywords_as_names.push(name.to_string());
        }
        Ident {
            name: name.to_string(),
            span,
        }
    }

    fn item(&mut self, p: Pair<'_, Rule>) -> Option<Item> {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = inner(p).peekable();
        Some(match rule {
            Rule::use_item => Item::Use(UseItem {
                path: it.map(|x| self.ident(x)).collect(),
                span,
            }),
            Rule::const_item => {
                let name = self.ident(it.next()?);
                let ty = self.type_expr(it.next()?);
                let value = self.expr(it.next()?, 0);
                Item::Const(ConstDef {
                    name,
                    ty,
                    value,
                    span,
                })
            }
            Rule::clock_item => {
                let name = self.ident(it.next()?);
                let mut array_len = None;
                if it.peek().map(|p| p.as_rule()) == Some(Rule::clock_array) {
                    array_len = Some(self.expr(inner(it.next()?).next()?, 0));
                }
                let body = it.next()?;
                let is_list = body.as_rule() == Rule::clock_list;
                let specs = if is_list {
                    inner(body).map(|s| self.clock_spec(s)).collect()
                } else {
                    vec![self.clock_spec(body)]
                };
                Item::Clock(ClockDef {
                    name,
                    array_len,
                    specs,
                    is_list,
                    span,
                })
            }
            Rule::struct_item => {
                let name = self.ident(it.next()?);
                let mut params = Vec::new();
                if it.peek().map(|p| p.as_rule()) == Some(Rule::generic_params) {
                    params = self.generic_params(it.next()?);
                }
                let fields = it.map(|f| self.name_type(f)).collect();
                Item::Struct(StructDef {
                    name,
                    params,
                    fields,
                    span,
                })
            }
            Rule::enum_item => {
                let name = self.ident(it.next()?);
                Item::Enum(EnumDef {
                    name,
                    variants: it.map(|v| self.ident(v)).collect(),
                    span,
                })
            }
            Rule::fn_item => {
                let name = self.ident(it.next()?);
                let mut generics = Vec::new();
                if it.peek().map(|p| p.as_rule()) == Some(Rule::generic_params) {
                    generics = self.generic_params(it.next()?);
                }
                let mut params = Vec::new();
                while it.peek().map(|p| p.as_rule()) == Some(Rule::fn_param) {
                    params.push(self.name_type(it.next()?));
                }
                let ret = self.type_expr(it.next()?);
                let body = self.block(it.next()?);
                Item::Fn(FnDef {
                    name,
                    generics,
                    params,
                    ret,
                    body,
                    span,
                })
            }
            Rule::unit_item => {
                let (name, params) = self.header(&mut it)?;
                let members = it.filter_map(|m| self.unit_member(m)).collect();
                Item::Unit(Arc::new(UnitDef {
                    name,
                    params,
                    members,
                    span,
                }))
            }
            Rule::system_item => {
                let (name, params) = self.header(&mut it)?;
                let members = it.filter_map(|m| self.system_member(m)).collect();
                Item::System(Arc::new(SystemDef {
                    name,
                    params,
                    members,
                    span,
                }))
            }
            _ => return None,
        })
    }

    /// `NAME <params>?`: the prologue shared by units and systems.
    fn header<'i>(
        &mut self,
        it: &mut std::iter::Peekable<impl Iterator<Item = Pair<'i, Rule>>>,
    ) -> Option<(Ident, Vec<GenericParam>)> {
        let name = self.ident(it.next()?);
        let mut params = Vec::new();
        if it.peek().map(|p| p.as_rule()) == Some(Rule::generic_params) {
            params = self.generic_params(it.next()?);
        }
        Some((name, params))
    }

    fn name_type(&mut self, p: Pair<'_, Rule>) -> (Ident, TypeExpr) {
        let mut it = inner(p);
        let name = it.next().expect("name in field");
        let ty = it.next().expect("type in field");
        (self.ident(name), self.type_expr(ty))
    }

    fn clock_spec(&mut self, p: Pair<'_, Rule>) -> ClockSpec {
        let span = self.span(&p);
        let mut it = inner(p);
        let rate = self.time_lit(it.next().expect("clock rate"));
        let phase = it.next().map(|t| self.time_lit(t));
        ClockSpec { rate, phase, span }
    }

    fn time_lit(&mut self, p: Pair<'_, Rule>) -> TimeLit {
        let span = self.span(&p);
        let mut it = inner(p);
        let number = it.next().expect("time number").as_str().to_string();
        let unit = it.next().expect("time unit").as_str().to_string();
        TimeLit { number, unit, span }
    }

    fn generic_params(&mut self, p: Pair<'_, Rule>) -> Vec<GenericParam> {
        inner(p)
            .map(|g| {
                let span = self.span(&g);
                let mut it = inner(g);
                let name = self.ident(it.next().expect("param name"));
                let ty = self.type_expr(it.next().expect("param type"));
                let default = it.next().map(|e| self.expr(e, 0));
                GenericParam {
                    name,
                    ty,
                    default,
                    span,
                }
            })
            .collect()
    }

    fn unit_member(&mut self, p: Pair<'_, Rule>) -> Option<UnitMember> {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = inner(p);
        Some(match rule {
            Rule::port_decl => {
                let dir = if it.next()?.as_str() == "in" {
                    Dir::In
                } else {
                    Dir::Out
                };
                let name = self.ident(it.next()?);
                let mut next = it.next()?;
                let mut len = None;
                if next.as_rule() == Rule::port_len {
                    len = Some(self.expr(inner(next).next()?, 0));
                    next = it.next()?;
                }
                let ty = self.type_expr(next);
                let kind = match it.next().and_then(|k| inner(k).next()) {
                    None => PortKindAst::Plain,
                    Some(k) => match k.as_rule() {
                        Rule::cdc_fwft => PortKindAst::CdcFwft,
                        Rule::cdc_plain => PortKindAst::Cdc,
                        _ => PortKindAst::Rate(self.expr(inner(k).next()?, 0)),
                    },
                };
                UnitMember::Port {
                    dir,
                    name,
                    len,
                    ty,
                    kind,
                    span,
                }
            }
            Rule::reg_decl => {
                let name = self.ident(it.next()?);
                let ty = self.type_expr(it.next()?);
                let init = it.next().map(|e| self.expr(e, 0));
                UnitMember::Reg {
                    name,
                    ty,
                    init,
                    span,
                }
            }
            Rule::stage_decl => {
                let name = self.ident(it.next()?);
                let ty = self.type_expr(it.next()?);
                let pipes = it.next().map(|e| self.expr(e, 0));
                UnitMember::Stage {
                    name,
                    ty,
                    pipes,
                    span,
                }
            }
            Rule::counter_decl => UnitMember::Counter {
                name: self.ident(it.next()?),
                span,
            },
            Rule::tick_block => UnitMember::Tick {
                body: self.block(it.next()?),
                span,
            },
            _ => return None,
        })
    }

    /// A loop's optional `max M`, then its body.
    fn bounded_body<'i>(
        &mut self,
        it: &mut impl Iterator<Item = Pair<'i, Rule>>,
    ) -> Option<(Option<Expr>, Block)> {
        let mut next = it.next()?;
        let mut max = None;
        if next.as_rule() == Rule::loop_bound {
            max = Some(self.expr(inner(next).next()?, 0));
            next = it.next()?;
        }
        Some((max, self.block(next)))
    }

    fn endpoint(&mut self, p: Pair<'_, Rule>) -> Endpoint {
        let parts: Vec<_> = inner(p).collect();
        // From the first part to the last: the optional `[i]` after the
        // port lets the rule's own span take the whitespace before it.
        let span = match (parts.first(), parts.last()) {
            (Some(a), Some(b)) => self.span(a).to(self.span(b)),
            _ => Span::new(self.file, self.base, self.base),
        };
        let mut parts = parts.into_iter();
        let inst = self.ident(parts.next().expect("endpoint instance"));
        let mut index = None;
        let mut port = parts.next().expect("endpoint port");
        if port.as_rule() == Rule::expr {
            index = Some(self.expr(port, 0));
            port = parts.next().expect("endpoint port after index");
        }
        let port_index = parts
            .next()
            .and_then(|p| inner(p).next())
            .map(|e| self.expr(e, 0));
        Endpoint {
            inst,
            index,
            port: self.ident(port),
            port_index,
            span,
        }
    }

    fn system_member(&mut self, p: Pair<'_, Rule>) -> Option<SystemMember> {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = inner(p).peekable();
        Some(match rule {
            Rule::expose_decl => {
                let dir = if it.next()?.as_str() == "in" {
                    Dir::In
                } else {
                    Dir::Out
                };
                let name = self.ident(it.next()?);
                let mut len = None;
                if it.peek().map(|p| p.as_rule()) == Some(Rule::port_len) {
                    len = Some(self.expr(inner(it.next()?).next()?, 0));
                }
                let ty = self.type_expr(it.next()?);
                let target = self.endpoint(it.next()?);
                SystemMember::Expose {
                    dir,
                    name,
                    len,
                    ty,
                    target,
                    span,
                }
            }
            Rule::inst_decl => {
                let name = self.ident(it.next()?);
                let mut index = None;
                if it.peek().map(|p| p.as_rule()) == Some(Rule::inst_index) {
                    index = Some(self.expr(inner(it.next()?).next()?, 0));
                }
                let target = self.item_name(it.next()?);
                let mut args = Vec::new();
                if it.peek().map(|p| p.as_rule()) == Some(Rule::generic_args) {
                    args = self.generic_args(it.next()?)?;
                }
                let clock = match it.next() {
                    Some(c) => {
                        let mut ci = inner(c);
                        let n = self.ident(ci.next()?);
                        Some((n, ci.next().map(|e| self.expr(e, 0))))
                    }
                    None => None,
                };
                SystemMember::Inst {
                    name,
                    index,
                    target,
                    args,
                    clock,
                    span,
                }
            }
            Rule::connect_decl => {
                let from = self.endpoint(it.next()?);
                let to = self.endpoint(it.next()?);
                let (mut latency, mut capacity) = (None, None);
                for x in it {
                    let r = x.as_rule();
                    let e = self.expr(inner(x).next()?, 0);
                    if r == Rule::latency_spec {
                        latency = Some(e);
                    } else {
                        capacity = Some(e);
                    }
                }
                SystemMember::Connect {
                    from,
                    to,
                    latency,
                    capacity,
                    span,
                }
            }
            Rule::cdc_decl => {
                let from = self.endpoint(it.next()?);
                let to = self.endpoint(it.next()?);
                let depth = self.expr(inner(it.next()?).next()?, 0);
                let sync = match it.next() {
                    Some(s) => Some(self.expr(inner(s).next()?, 0)),
                    None => None,
                };
                SystemMember::Cdc {
                    from,
                    to,
                    depth,
                    sync,
                    span,
                }
            }
            Rule::sys_if => {
                let cond = self.expr(it.next()?, 0);
                let then = self.sys_block(it.next()?);
                let otherwise = match it.next() {
                    Some(e) if e.as_rule() == Rule::sys_if => {
                        self.system_member(e).into_iter().collect()
                    }
                    Some(block) => self.sys_block(block),
                    None => Vec::new(),
                };
                SystemMember::If {
                    cond,
                    then,
                    otherwise,
                    span,
                }
            }
            Rule::sys_for => {
                let var = self.ident(it.next()?);
                let start = self.expr(it.next()?, 0);
                let end = self.expr(it.next()?, 0);
                let body = it.filter_map(|m| self.system_member(m)).collect();
                SystemMember::For {
                    var,
                    start,
                    end,
                    body,
                    span,
                }
            }
            _ => return None,
        })
    }

    /// The members of a `sys_block`.
    fn sys_block(&mut self, p: Pair<'_, Rule>) -> Vec<SystemMember> {
        inner(p).filter_map(|m| self.system_member(m)).collect()
    }

    fn type_expr(&mut self, p: Pair<'_, Rule>) -> TypeExpr {
        let span = self.span(&p);
        let first = inner(p).next().expect("type_expr has one child");
        let kind = match first.as_rule() {
            Rule::array_type => {
                let mut it = inner(first);
                let elem = self.type_expr(it.next().expect("array element type"));
                let len = self.expr(it.next().expect("array length"), 0);
                TypeExprKind::Array(Box::new(elem), Box::new(len))
            }
            Rule::sized_int => self.sized_int(first),
            Rule::generic_type => {
                let mut it = inner(first);
                let name = self.item_name(it.next().expect("generic type name"));
                let args = it
                    .next()
                    .and_then(|a| self.generic_args(a))
                    .unwrap_or_default();
                TypeExprKind::Generic { name, args }
            }
            _ => TypeExprKind::Named(self.item_name(first)),
        };
        TypeExpr { kind, span }
    }

    /// `<N = v, T = u8>`: arguments by parameter name.
    fn generic_args(&mut self, p: Pair<'_, Rule>) -> Option<Vec<(Ident, Expr)>> {
        let mut args = Vec::new();
        for a in inner(p) {
            let mut ai = inner(a);
            let n = self.ident(ai.next()?);
            let v = self.expr(ai.next()?, 0);
            args.push((n, v));
        }
        Some(args)
    }

    /// `u<W>` / `i<W>`.
    fn sized_int(&mut self, p: Pair<'_, Rule>) -> TypeExprKind {
        let mut it = inner(p);
        let signed = it.next().expect("sign").as_str() == "i";
        let width = it.next().expect("width");
        let width = if width.as_rule() == Rule::ident {
            let id = self.ident(width);
            Expr {
                span: id.span,
                kind: ExprKind::Name(id),
            }
        } else {
            self.expr(width, 0)
        };
        TypeExprKind::SizedInt {
            signed,
            width: Box::new(width),
        }
    }

    fn block(&mut self, p: Pair<'_, Rule>) -> Block {
        let span = self.span(&p);
        let stmts = inner(p).filter_map(|s| self.stmt(s)).collect();
        Block { stmts, span }
    }

    fn string(&mut self, p: Pair<'_, Rule>) -> String {
        let raw = p.as_str();
        let body = &raw[1..raw.len() - 1];
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    _ => {
                        let span = self.span(&p);
                        self.diags
                            .push(ParseError::BadEscape { span }.into_diagnostic());
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    fn stmt(&mut self, p: Pair<'_, Rule>) -> Option<Stmt> {
        let span = self.span(&p);
        let rule = p.as_rule();
        let mut it = inner(p).peekable();
        let kind = match rule {
            Rule::let_stmt => {
                let name = self.ident(it.next()?);
                let mut ty = None;
                if it.peek().map(|p| p.as_rule()) == Some(Rule::type_expr) {
                    ty = Some(self.type_expr(it.next()?));
                }
                StmtKind::Let {
                    name,
                    ty,
                    value: self.expr(it.next()?, 0),
                }
            }
            Rule::if_stmt => {
                let mut arms = Vec::new();
                let cond = self.cond(it.next()?);
                arms.push((cond, self.block(it.next()?)));
                let mut otherwise = None;
                for x in it {
                    if x.as_rule() == Rule::else_if {
                        let mut ei = inner(x);
                        let c = self.cond(ei.next()?);
                        arms.push((c, self.block(ei.next()?)));
                    } else {
                        otherwise = Some(self.block(x));
                    }
                }
                if arms.len() > MAX_EXPR_DEPTH {
                    self.diags.push(
                        ParseError::TooDeep {
                            span,
                            limit: MAX_EXPR_DEPTH,
                        }
                        .into_diagnostic(),
                    );
                    return None;
                }
                StmtKind::If { arms, otherwise }
            }
            Rule::match_stmt => {
                let scrutinee = self.expr(it.next()?, 0);
                let mut arms = Vec::new();
                for arm in it {
                    let mut pats = Vec::new();
                    let mut body = None;
                    for x in inner(arm) {
                        if x.as_rule() == Rule::pattern {
                            pats.push(self.pattern(x)?);
                        } else {
                            body = Some(self.block(x));
                        }
                    }
                    arms.push((pats, body?));
                }
                StmtKind::Match { scrutinee, arms }
            }
            Rule::for_stmt => {
                let var = self.ident(it.next()?);
                let start = self.expr(it.next()?, 0);
                let end = self.expr(it.next()?, 0);
                let (max, body) = self.bounded_body(&mut it)?;
                StmtKind::For {
                    var,
                    start,
                    end,
                    max,
                    body,
                }
            }
            Rule::while_stmt => {
                let cond = self.expr(it.next()?, 0);
                let (max, body) = self.bounded_body(&mut it)?;
                StmtKind::While { cond, max, body }
            }
            Rule::return_stmt => StmtKind::Return(self.expr(it.next()?, 0)),
            Rule::finish_stmt => StmtKind::Finish,
            Rule::assert_stmt => {
                let cond = self.expr(it.next()?, 0);
                StmtKind::Assert {
                    cond,
                    message: self.string(it.next()?),
                }
            }
            Rule::trace_stmt => {
                let literal = it.next()?;
                let name_span = self.span(&literal);
                let name = self.string(literal);
                let mut args = Vec::new();
                for a in it {
                    let mut ai = inner(a);
                    let n = self.ident(ai.next()?);
                    args.push((n, self.expr(ai.next()?, 0)));
                }
                StmtKind::Trace {
                    name,
                    name_span,
                    args,
                }
            }
            Rule::reg_write => {
                let place = self.place(it.next()?);
                StmtKind::RegWrite {
                    place,
                    value: self.expr(it.next()?, 0),
                }
            }
            Rule::counter_add => {
                let name = self.ident(it.next()?);
                StmtKind::CounterAdd {
                    name,
                    value: self.expr(it.next()?, 0),
                }
            }
            Rule::assign_stmt => {
                let place = self.place(it.next()?);
                StmtKind::Assign {
                    place,
                    value: self.expr(it.next()?, 0),
                }
            }
            Rule::expr_stmt => StmtKind::Expr(self.expr(it.next()?, 0)),
            _ => return None,
        };
        Some(Stmt { kind, span })
    }

    fn cond(&mut self, p: Pair<'_, Rule>) -> Cond {
        let c = inner(p).next().expect("condition has one child");
        if c.as_rule() == Rule::let_some {
            let mut it = inner(c);
            let name = self.ident(it.next().expect("binding"));
            Cond::LetSome(name, self.expr(it.next().expect("value"), 0))
        } else {
            Cond::Expr(self.expr(c, 0))
        }
    }

    fn pattern(&mut self, p: Pair<'_, Rule>) -> Option<Pattern> {
        let x = inner(p).next()?;
        let span = self.span(&x);
        Some(match x.as_rule() {
            Rule::wildcard_pat => Pattern::Wildcard(span),
            Rule::some_pat => Pattern::Some(self.ident(inner(x).next()?)),
            Rule::none_pat => Pattern::None(span),
            Rule::bool_lit => Pattern::Bool(x.as_str() == "true", span),
            Rule::neg_int_pat => {
                let (v, suffix) = self.int(inner(x).next()?)?;
                Pattern::Int(-v, suffix, span)
            }
            Rule::int_lit => {
                let (v, suffix) = self.int(x)?;
                Pattern::Int(v, suffix, span)
            }
            Rule::enum_pat => {
                let mut it = inner(x);
                let e = self.ident(it.next()?);
                Pattern::Enum(e, self.ident(it.next()?))
            }
            _ => return None,
        })
    }

    /// Value and suffix of an integer literal.
    fn int(&mut self, p: Pair<'_, Rule>) -> Option<(BigInt, Option<(bool, u32)>)> {
        let span = self.span(&p);
        let text = p.as_str().replace('_', "");
        let (radix, digits) = if let Some(h) = text.strip_prefix("0x") {
            (16, h.to_string())
        } else if let Some(b) = text.strip_prefix("0b") {
            (2, b.to_string())
        } else {
            (10, text.clone())
        };
        let (digits, suffix) = match digits.find(['u', 'i']) {
            Some(pos) => (digits[..pos].to_string(), Some(digits[pos..].to_string())),
            None => (digits, None),
        };
        let suffix = match suffix {
            None => None,
            Some(s) => {
                let signed = s.starts_with('i');
                match s[1..].parse::<u32>() {
                    Ok(w) if (1..=MAX_INT_BITS).contains(&w) => Some((signed, w)),
                    _ => {
                        self.diags
                            .push(ParseError::BadSuffix { span, suffix: s }.into_diagnostic());
                        return Some((BigInt::ZERO, None));
                    }
                }
            }
        };
        match literal_value(&digits, radix) {
            Some(v) => Some((v, suffix)),
            None => {
                self.diags
                    .push(ParseError::LiteralTooLarge { span }.into_diagnostic());
                Some((BigInt::ZERO, suffix))
            }
        }
    }

    /// Builds a flat `operand (op operand)*` list into a tree by precedence,
    /// with explicit stacks (no recursion); all operators are left
    /// associative, and comparisons do not chain.
    fn climb(&mut self, parts: Vec<Pair<'_, Rule>>, depth: usize) -> Expr {
        let mut operands: Vec<(Expr, bool)> = Vec::new();
        let mut ops: Vec<(BinOp, Span)> = Vec::new();
        let reduce =
            |this: &mut Self, operands: &mut Vec<(Expr, bool)>, ops: &mut Vec<(BinOp, Span)>| {
                let (op, op_span) = ops.pop().expect("an operator to reduce");
                let (rhs, rhs_cmp) = operands.pop().expect("a right operand");
                let (lhs, lhs_cmp) = operands.pop().expect("a left operand");
                if op.is_comparison() && (lhs_cmp || rhs_cmp) {
                    this.diags.push(
                        ParseError::Syntax {
                            span: op_span,
                            expected: vec!["`&&` or `||` between comparisons".to_string()],
                            found: format!("`{}`", op.symbol()),
                        }
                        .into_diagnostic(),
                    );
                }
                let span = lhs.span.to(rhs.span);
                operands.push((
                    Expr {
                        kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                        span,
                    },
                    op.is_comparison(),
                ));
            };
        let mut it = parts.into_iter();
        let first = it.next().expect("an operand");
        operands.push((self.expr(first, depth), false));
        while let (Some(op_pair), Some(rhs)) = (it.next(), it.next()) {
            let op = binop(op_pair.as_str());
            let op_span = self.span(&op_pair);
            while ops
                .last()
                .is_some_and(|(top, _)| precedence(*top) >= precedence(op))
            {
                reduce(self, &mut operands, &mut ops);
            }
            ops.push((op, op_span));
            operands.push((self.expr(rhs, depth), false));
        }
        while !ops.is_empty() {
            reduce(self, &mut operands, &mut ops);
        }
        operands.pop().expect("one expression remains").0
    }

    fn too_deep(&mut self, span: Span) -> Expr {
        self.diags.push(
            ParseError::TooDeep {
                span,
                limit: MAX_EXPR_DEPTH,
            }
            .into_diagnostic(),
        );
        Expr {
            kind: ExprKind::Int(BigInt::ZERO, None),
            span,
        }
    }

    fn place(&mut self, p: Pair<'_, Rule>) -> Expr {
        let mut it = inner(p);
        let head = self.ident(it.next().expect("place name"));
        let mut e = Expr {
            span: head.span,
            kind: ExprKind::Name(head),
        };
        for (n, s) in it.enumerate() {
            if n > MAX_EXPR_DEPTH {
                return self.too_deep(e.span);
            }
            e = self.suffix(e, s, n + 1);
        }
        e
    }

    fn suffix(&mut self, base: Expr, s: Pair<'_, Rule>, depth: usize) -> Expr {
        let span = base.span.to(self.span(&s));
        let rule = s.as_rule();
        let mut it = inner(s);
        let kind = match rule {
            Rule::field_suffix => {
                ExprKind::Field(Box::new(base), self.ident(it.next().expect("field name")))
            }
            Rule::index_suffix => {
                let idx = self.expr(it.next().expect("index"), depth + 1);
                match it.next() {
                    Some(tail) => {
                        let mut t = inner(tail);
                        let kind = match t.next().expect("slice operator").as_str() {
                            "+:" => SliceKind::Up,
                            "-:" => SliceKind::Down,
                            _ => SliceKind::Range,
                        };
                        let right = self.expr(t.next().expect("slice bound"), depth + 1);
                        ExprKind::Slice(Box::new(base), kind, Box::new(idx), Box::new(right))
                    }
                    None => ExprKind::Index(Box::new(base), Box::new(idx)),
                }
            }
            _ => {
                let name = self.ident(it.next().expect("method name"));
                let args = it
                    .next()
                    .map(|a| inner(a).map(|x| self.expr(x, depth + 1)).collect())
                    .unwrap_or_default();
                ExprKind::Method(Box::new(base), name, args)
            }
        };
        Expr { kind, span }
    }

    /// The parts of a concatenation.
    fn concat_parts(&mut self, p: Pair<'_, Rule>, depth: usize) -> Vec<Expr> {
        inner(p).map(|x| self.expr(x, depth + 1)).collect()
    }

    /// Builds an expression; `depth` is the tree depth above it.
    fn expr(&mut self, p: Pair<'_, Rule>, depth: usize) -> Expr {
        let span = self.span(&p);
        if depth > MAX_EXPR_DEPTH {
            return self.too_deep(span);
        }
        match p.as_rule() {
            Rule::paren_expr => self.expr(inner(p).next().expect("wrapped expression"), depth + 1),
            Rule::type_arg => {
                // The type's own span: the rule's runs on over the blank
                // before its lookahead.
                let sized = inner(p).next().expect("a sized integer type");
                let span = self.span(&sized);
                let kind = self.sized_int(sized);
                Expr {
                    kind: ExprKind::TypeArg(Box::new(TypeExpr { kind, span })),
                    span,
                }
            }
            Rule::expr | Rule::arg_expr => {
                let parts: Vec<_> = inner(p).collect();
                let n_ops = parts.len() / 2;
                if depth + n_ops > MAX_EXPR_DEPTH {
                    return self.too_deep(span);
                }
                self.climb(parts, depth + n_ops)
            }
            Rule::cast_expr => {
                let mut it = inner(p);
                let first = it.next().expect("cast operand");
                let casts: Vec<_> = it.collect();
                if depth + casts.len() > MAX_EXPR_DEPTH {
                    return self.too_deep(span);
                }
                let mut e = self.expr(first, depth + casts.len());
                for t in casts {
                    let ty = self.type_expr(t);
                    let span = e.span.to(ty.span);
                    e = Expr {
                        kind: ExprKind::Cast(Box::new(e), ty),
                        span,
                    };
                }
                e
            }
            Rule::unary_expr => {
                let parts: Vec<_> = inner(p).collect();
                let n_ops = parts.len() - 1;
                if depth + n_ops > MAX_EXPR_DEPTH {
                    return self.too_deep(span);
                }
                let mut parts = parts.into_iter().rev();
                let operand = parts.next().expect("unary operand");
                let mut e = self.expr(operand, depth + n_ops);
                for op in parts {
                    let span = self.span(&op).to(e.span);
                    e = match (op.as_str(), &e.kind) {
                        ("-", ExprKind::Int(v, s)) if v.sign() != Sign::Minus => Expr {
                            kind: ExprKind::Int(-v, *s),
                            span,
                        },
                        (o, _) => {
                            let op = match o {
                                "-" => UnOp::Neg,
                                "!" => UnOp::Not,
                                "&" => UnOp::AndReduce,
                                "|" => UnOp::OrReduce,
                                "^" => UnOp::XorReduce,
                                _ => UnOp::BitNot,
                            };
                            Expr {
                                kind: ExprKind::Unary(op, Box::new(e)),
                                span,
                            }
                        }
                    };
                }
                e
            }
            Rule::postfix_expr => {
                let parts: Vec<_> = inner(p).collect();
                let n = parts.len() - 1;
                if depth + n > MAX_EXPR_DEPTH {
                    return self.too_deep(span);
                }
                let mut it = parts.into_iter();
                let mut e = self.expr(it.next().expect("postfix base"), depth + n);
                for (k, s) in it.enumerate() {
                    e = self.suffix(e, s, depth + n - k);
                }
                e
            }
            Rule::int_lit => {
                let (v, s) = self.int(p).unwrap_or((BigInt::ZERO, None));
                Expr {
                    kind: ExprKind::Int(v, s),
                    span,
                }
            }
            Rule::bool_lit => Expr {
                kind: ExprKind::Bool(p.as_str() == "true"),
                span,
            },
            Rule::string_lit => Expr {
                kind: ExprKind::Str(self.string(p)),
                span,
            },
            Rule::ident => Expr {
                kind: ExprKind::Name(self.ident(p)),
                span,
            },
            Rule::enum_value => {
                let mut it = inner(p);
                let e = self.ident(it.next().expect("enum name"));
                let v = self.ident(it.next().expect("variant"));
                Expr {
                    kind: ExprKind::EnumValue(e, v),
                    span,
                }
            }
            Rule::array_lit => {
                let parts: Vec<Pair<Rule>> = inner(p).collect();
                let repeat = parts.len() == 2 && parts[1].as_rule() == Rule::array_count;
                let mut it = parts.into_iter();
                if repeat {
                    let v = self.expr(it.next().expect("repeated value"), depth + 1);
                    let count = it.next().expect("`; count`");
                    let n = self.expr(inner(count).next().expect("repeat count"), depth + 1);
                    Expr {
                        kind: ExprKind::ArrayRepeat(Box::new(v), Box::new(n)),
                        span,
                    }
                } else {
                    let elems = it.map(|x| self.expr(x, depth + 1)).collect();
                    Expr {
                        kind: ExprKind::ArrayLit(elems),
                        span,
                    }
                }
            }
            Rule::concat => {
                let body = inner(p).next().expect("concat body");
                if body.as_rule() == Rule::replicate {
                    let mut it = inner(body);
                    let n = self.expr(it.next().expect("replication count"), depth + 1);
                    let parts = self.concat_parts(it.next().expect("replicated parts"), depth);
                    Expr {
                        kind: ExprKind::Replicate(Box::new(n), parts),
                        span,
                    }
                } else {
                    Expr {
                        kind: ExprKind::Concat(self.concat_parts(body, depth)),
                        span,
                    }
                }
            }
            Rule::call_expr => {
                let mut it = inner(p);
                let f = self.item_name(it.next().expect("callee"));
                let args = it
                    .next()
                    .map(|a| inner(a).map(|x| self.expr(x, depth + 1)).collect())
                    .unwrap_or_default();
                Expr {
                    kind: ExprKind::Call(f, args),
                    span,
                }
            }
            Rule::struct_lit => {
                let mut it = inner(p);
                let name = self.item_name(it.next().expect("struct name"));
                let fields = it
                    .map(|f| {
                        let mut fi = inner(f);
                        let n = self.ident(fi.next().expect("field name"));
                        (n, self.expr(fi.next().expect("field value"), depth + 1))
                    })
                    .collect();
                Expr {
                    kind: ExprKind::StructLit(name, fields),
                    span,
                }
            }
            _ => Expr {
                kind: ExprKind::Int(BigInt::ZERO, None),
                span,
            },
        }
    }
}

fn precedence(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        Or => 1,
        And => 2,
        Eq | Ne | Lt | Le | Gt | Ge => 3,
        BitOr => 4,
        BitXor => 5,
        BitAnd => 6,
        Shl | Shr => 7,
        Add | Sub => 8,
        Mul | Div | Rem => 9,
    }
}

fn binop(s: &str) -> BinOp {
    use BinOp::*;
    // `bor_op` and `band_op` end with a lookahead, after which pest's pair
    // also holds the blanks and comments it skipped: `& /* c */` is `&`.
    let s = s.split([' ', '\t', '\r', '\n']).next().unwrap_or(s);
    let s = s.split("/*").next().unwrap_or(s);
    let s = s.split("//").next().unwrap_or(s);
    match s {
        "||" => Or,
        "&&" => And,
        "==" => Eq,
        "!=" => Ne,
        "<" => Lt,
        "<=" => Le,
        ">" => Gt,
        ">=" => Ge,
        "|" => BitOr,
        "^" => BitXor,
        "&" => BitAnd,
        "<<" => Shl,
        ">>" => Shr,
        "+" => Add,
        "-" => Sub,
        "*" => Mul,
        "/" => Div,
        _ => Rem,
    }
}

/// Whether a word is a keyword.
pub fn is_keyword(word: &str) -> bool {
    static KEYWORDS: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
        std::sync::LazyLock::new(|| keywords().into_iter().collect());
    KEYWORDS.contains(word)
}

/// The keywords, as listed by the grammar's `keyword` rule.
pub fn keywords() -> Vec<&'static str> {
    let grammar = include_str!("grammar.pest");
    let start = grammar
        .find("keyword = @{")
        .expect("grammar has a keyword rule");
    let rest = &grammar[start..];
    let end = rest.find('}').expect("keyword rule ends");
    rest[..end].split('"').skip(1).step_by(2).collect()
}

/// The value of a literal's digits (no `_`, prefix or suffix) in `radix`,
/// if it has at most [`MAX_INT_BITS`] bits. Both parsers read literals
/// with it.
pub(crate) fn literal_value(digits: &str, radix: u32) -> Option<BigInt> {
    if digits.is_empty() {
        return None;
    }
    let v = BigInt::parse_bytes(digits.as_bytes(), radix)?;
    (v.bits() <= u64::from(MAX_INT_BITS)).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_come_from_the_grammar() {
        let k = keywords();
        assert!(k.contains(&"inst") && k.contains(&"None") && k.contains(&"assert"));
        let documented = "use const clock phase struct enum fn unit system in out cdc fwft rate reg stage pipes counter tick let if else \
            match for while return inst on connect latency capacity depth sync as true false finish assert trace Some None";
        let mut documented: Vec<&str> = documented.split_whitespace().collect();
        let mut k = k;
        k.sort_unstable();
        documented.sort_unstable();
        assert_eq!(k, documented);
    }

    #[test]
    fn a_keyword_prefix_is_still_a_name() {
        let (m, d) = parse_file(
            FileId(0),
            "fn f(returned: u8) -> u8 { let instx = returned; return instx; }",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(m.items.len(), 1);
    }

    #[test]
    fn every_broken_item_is_reported() {
        let (m, d) = parse_file(
            FileId(0),
            "const A: u8 = ;\nconst B: u8 = 1;\nfn f( -> u8 { return 1; }\n",
        );
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(m.items.len(), 1);
    }

    #[test]
    fn items_nested_too_deeply_are_broken_not_missing() {
        // A unary chain (the builder's E0102) and brackets (the splitter's):
        // both items are left out and named broken, so the checker reports
        // neither their uses as unknown names nor the stand-in's type.
        let src = format!(
            "unit U {{ reg b: bool; tick {{ b <= {}b; }} }}\nconst K: u8 = {}1{};",
            "!".repeat(1000),
            "(".repeat(100),
            ")".repeat(100)
        );
        let (m, d) = parse_file(FileId(0), &src);
        let codes: Vec<_> = d.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["E0102", "E0102"], "{d:?}");
        assert!(m.items.is_empty());
        let mut broken = m.broken.clone();
        broken.sort();
        assert_eq!(broken, ["K", "U"]);
    }

    #[test]
    fn deep_nesting_is_a_diagnostic() {
        let src = format!("const A: u8 = {}1{};", "(".repeat(5000), ")".repeat(5000));
        let (_, d) = parse_file(FileId(0), &src);
        assert_eq!(d[0].code, "E0102");
        let chain = format!("const A: u8 = 1{};", " + 1".repeat(5000));
        let (_, d) = parse_file(FileId(0), &chain);
        assert_eq!(d[0].code, "E0102");
    }
}
