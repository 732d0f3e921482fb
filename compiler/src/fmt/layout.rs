//! Lays out the bracket tree in the canonical style.
//!
//! The layout is a function of the tokens, of where comments stand (on their
//! own line or after code) and of where blank lines separate items; every
//! other line break and space of the input is discarded. Statements and items
//! get a line each, blocks are indented by four spaces, and a bracketed list
//! stays on one line unless it holds a comment or would pass
//! [`MAX_WIDTH`] columns, in which case it gets one element per line; a call
//! whose one argument ends in a `{}` literal keeps its parentheses on the
//! lines of the braces instead. Line comments that end consecutive lines of
//! one indentation are aligned in a column.

use super::token::{Token, TokenKind, tokenize};
use super::tree::{Group, Node};

/// Column limit that decides whether a bracketed list stays on one line.
pub const MAX_WIDTH: usize = 100;

/// One level of indentation.
const INDENT: &str = "    ";

/// Statement heads whose top-level `{}` group is a block of statements.
const BLOCK_HEADS: &[&str] = &[
    "unit", "system", "fn", "tick", "if", "else", "for", "while", "match",
];

/// Operators written with a space on each side.
const BINARY: &[&str] = &[
    "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "&", "|", "^", "<<",
    ">>", "=", "+=", "-=", "->", "=>",
];

/// Punctuation written without a space before it.
const TIGHT_BEFORE: &[&str] = &[",", ";", ":", ")", "]", ".", "::", "..", "..="];

/// Punctuation written without a space after it.
const TIGHT_AFTER: &[&str] = &["(", "[", ".", "::", "..", "..="];

/// Keywords that are called like functions: `Some(v)`, `trace(...)`.
const CALL_KEYWORDS: &[&str] = &["Some", "trace", "assert"];

/// How a token relates to its neighbours, for spacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Plain,
    Unary,
    GenericOpen,
    GenericClose,
}

/// The last token written, as spacing needs to see it.
#[derive(Clone, Debug)]
struct Prev {
    kind: TokenKind,
    text: String,
    role: Role,
}

/// How the elements of an exploded group end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seq {
    /// Statements and items: end at `;`, `,` or after a closing `}`.
    Block,
    /// List elements: end at `,`.
    List,
}

/// The printer state; cloned to try a group on one line.
#[derive(Clone, Default)]
pub struct Layout {
    out: String,
    col: usize,
    indent: usize,
    /// The current statement was broken by a comment: its further lines get
    /// one more level of indentation.
    continuation: bool,
    line_start: bool,
    /// A line comment ends the current line.
    break_pending: bool,
    /// A block comment was just written on this line.
    after_comment: bool,
    prev: Option<Prev>,
    prev2: Option<Prev>,
    /// The next tokens are `Name =` or `>`: after `S`, a `<` opens a
    /// generic struct's arguments.
    args_ahead: bool,
    /// The first word of the current statement.
    head: Option<String>,
    generic_depth: usize,
    /// The innermost group is a concatenation `{a, b}`, written tight
    /// inside its braces as Verilog's is.
    in_concat: bool,
    /// The group about to be written is a concatenation.
    concat_next: bool,
    /// The innermost group opened with `[`: a slice's `:` is tight there.
    in_index: bool,
    /// Byte offsets in `out` of the space before each trailing line comment,
    /// for [`align_trailing_comments`].
    trailing: Vec<usize>,
    /// This printer is a trial of a group on one line: nested groups go
    /// inline without trials of their own (if one cannot, neither can the
    /// group being tried), so each group is tried once and the layout takes
    /// time linear in the tokens times the nesting depth, not exponential.
    trial: bool,
    /// The trial met something that cannot stay on one line (a comment).
    trial_failed: bool,
}

impl Layout {
    /// Lays out a whole file.
    pub fn file(nodes: &[Node]) -> String {
        let mut layout = Layout {
            line_start: true,
            ..Layout::default()
        };
        layout.seq(nodes, Seq::Block);
        if !layout.out.is_empty() && !layout.line_start {
            layout.newline();
        }
        align_trailing_comments(&layout.out, &layout.trailing)
    }

    /// A sequence of statements or list elements, one per line.
    fn seq(&mut self, nodes: &[Node], mode: Seq) {
        let mut first = true;
        // A block comment that shares its line with the next item leads it.
        let mut leading_comment = false;
        let mut i = 0;
        while i < nodes.len() {
            let node = &nodes[i];
            if let Some(t) = node.tok().filter(|t| t.is_comment()) {
                let leads = t.kind == TokenKind::BlockComment
                    && nodes
                        .get(i + 1)
                        .is_some_and(|n| n.first().newlines_before == 0 && !n.is_comment());
                if t.newlines_before == 0 && !self.line_start && !leads {
                    self.trailing_comment(t);
                } else {
                    self.start_item(t.newlines_before, first);
                    first = false;
                    self.own_line_comment(t);
                    leading_comment = leads;
                }
                i += 1;
                continue;
            }
            let end = item_end(nodes, i, mode);
            if !std::mem::take(&mut leading_comment) {
                self.start_item(node.first().newlines_before, first);
            }
            first = false;
            if mode == Seq::Block {
                self.head = node
                    .tok()
                    .filter(|t| matches!(t.kind, TokenKind::Keyword | TokenKind::Ident))
                    .map(|t| t.text.clone());
            }
            self.item(&nodes[i..end], mode == Seq::Block);
            i = end;
        }
    }

    /// Puts the next item on a fresh line, after one blank line where the
    /// input had any.
    fn start_item(&mut self, newlines_before: usize, first: bool) {
        self.continuation = false;
        if !self.line_start || self.break_pending {
            self.newline();
        }
        if !first && newlines_before >= 2 {
            self.out.push('\n');
        }
    }

    /// One statement or list element.
    fn item(&mut self, nodes: &[Node], top: bool) {
        for (i, node) in nodes.iter().enumerate() {
            self.look_ahead(nodes, i);
            match node {
                Node::Tok(t) if t.is_comment() => {
                    if t.newlines_before == 0 && !self.line_start {
                        self.trailing_comment(t);
                    } else {
                        self.continuation = true;
                        self.own_line_comment(t);
                    }
                    if t.kind == TokenKind::LineComment {
                        self.continuation = true;
                    }
                }
                Node::Tok(t) => self.token(t),
                Node::Group(g) => self.group(g, top),
            }
        }
    }

    fn group(&mut self, g: &Group, top: bool) {
        if g.is_brace() && self.is_block(g, top) {
            self.exploded(g, Seq::Block);
            return;
        }
        self.concat_next = g.is_brace() && self.opens_concat();
        if self.trial {
            // A comment would have exploded the group: the trial fails.
            self.trial_failed |= g.has_comment();
            self.inline(g);
            return;
        }
        if !g.has_comment() {
            let out = std::mem::take(&mut self.out);
            let mut trial = self.clone();
            self.out = out;
            trial.trial = true;
            trial.inline(g);
            trial.trial = false;
            if !trial.trial_failed && trial.col <= MAX_WIDTH && !trial.out.contains('\n') {
                self.out.push_str(&trial.out);
                trial.out = std::mem::take(&mut self.out);
                *self = trial;
                return;
            }
            if hugs_literal(g) {
                // `send(Inst {` ... `});` rather than a line for the lone
                // argument and another for each of its fields.
                self.inline(g);
                return;
            }
        }
        self.exploded(g, Seq::List);
    }

    /// Whether a `{}` group holds statements rather than fields or elements.
    fn is_block(&self, g: &Group, top: bool) -> bool {
        let holds_statements = g.items.iter().any(|n| n.is_punct(";") || n.is_punct("=>"));
        let after_block_word = self
            .prev
            .as_ref()
            .is_some_and(|p| matches!(p.text.as_str(), "=>" | "else" | "tick"));
        let block_statement = top
            && self
                .head
                .as_deref()
                .is_some_and(|h| BLOCK_HEADS.contains(&h));
        holds_statements || after_block_word || block_statement
    }

    /// Whether a `{` here opens a concatenation: where an operand is
    /// expected, or as a replication's inner braces (`{4{b}}`, `{(N){b}}`).
    fn opens_concat(&self) -> bool {
        self.operand_expected()
            || (self.in_concat
                && self
                    .prev
                    .as_ref()
                    .is_some_and(|p| p.kind == TokenKind::Number || p.text == ")"))
    }

    /// Writes a group's opening bracket and enters it; returns what
    /// [`Layout::leave`] restores.
    fn enter(&mut self, g: &Group) -> (usize, bool, bool) {
        let concat = std::mem::take(&mut self.concat_next);
        let saved = (
            std::mem::take(&mut self.generic_depth),
            self.in_concat,
            self.in_index,
        );
        self.concat_next = concat;
        self.token(&g.open);
        self.concat_next = false;
        self.in_concat = concat;
        self.in_index = g.open.text == "[";
        saved
    }

    /// Writes a group's closing bracket and restores the state outside it.
    fn leave(&mut self, g: &Group, (depth, concat, index): (usize, bool, bool)) {
        self.token(&g.close);
        self.generic_depth = depth;
        self.in_concat = concat;
        self.in_index = index;
    }

    /// Notes whether the nodes after `nodes[i]` are `Name =` or `>`: a
    /// `<` there opens a generic struct's arguments (`S<N = 1>`, `S<>`),
    /// not a comparison.
    fn look_ahead(&mut self, nodes: &[Node], i: usize) {
        self.args_ahead = match (nodes.get(i + 1), nodes.get(i + 2)) {
            (Some(Node::Tok(a)), _) if a.kind == TokenKind::Punct && a.text == ">" => true,
            (Some(Node::Tok(a)), Some(Node::Tok(b))) => {
                a.kind == TokenKind::Ident && b.kind == TokenKind::Punct && b.text == "="
            }
            _ => false,
        };
    }

    /// A group on the current line.
    fn inline(&mut self, g: &Group) {
        let saved = self.enter(g);
        for (i, node) in g.items.iter().enumerate() {
            self.look_ahead(&g.items, i);
            if self.trial && (self.trial_failed || self.col > MAX_WIDTH) {
                // Past the limit: the trial has failed, the rest is moot.
                self.trial_failed = true;
                break;
            }
            match node {
                Node::Tok(t) => self.token(t),
                Node::Group(inner) => self.group(inner, false),
            }
        }
        self.leave(g, saved);
    }

    /// A group with one statement or element per line.
    fn exploded(&mut self, g: &Group, mode: Seq) {
        let head = self.head.clone();
        let saved = self.enter(g);
        if !g.items.is_empty() {
            let continuation = self.continuation;
            let step = 1 + usize::from(continuation);
            self.indent += step;
            self.seq(&g.items, mode);
            self.indent -= step;
            self.newline();
            self.continuation = continuation;
        }
        self.leave(g, saved);
        self.head = head;
    }

    fn token(&mut self, tok: &Token) {
        let role = self.role(tok);
        if self.break_pending {
            self.newline();
        }
        if self.line_start {
            self.write_indent();
        } else if self.after_comment || self.space_before(tok, role) || self.would_merge(tok) {
            self.write(" ");
        }
        self.write(&tok.text);
        self.after_comment = false;
        match role {
            Role::GenericOpen => self.generic_depth += 1,
            Role::GenericClose => self.generic_depth -= tok.text.len(),
            Role::Plain | Role::Unary => {}
        }
        self.prev2 = self.prev.replace(Prev {
            kind: tok.kind,
            text: tok.text.clone(),
            role,
        });
    }

    fn role(&self, tok: &Token) -> Role {
        if tok.kind != TokenKind::Punct {
            return Role::Plain;
        }
        match tok.text.as_str() {
            "!" | "~" => Role::Unary,
            "-" | "&" | "|" | "^" if self.operand_expected() => Role::Unary,
            "<" if self.opens_generics() => Role::GenericOpen,
            ">" if self.generic_depth > 0 => Role::GenericClose,
            // `Q<T = u<8>>`: one token that closes two lists.
            ">>" if self.generic_depth > 1 => Role::GenericClose,
            _ => Role::Plain,
        }
    }

    /// Whether the previous token leaves an operand to come, so that `-`
    /// is a sign rather than a subtraction.
    fn operand_expected(&self) -> bool {
        match &self.prev {
            None => true,
            Some(p) => match p.kind {
                TokenKind::Punct => {
                    !matches!(p.text.as_str(), ")" | "]" | "}") && p.role != Role::GenericClose
                }
                TokenKind::Keyword => !matches!(p.text.as_str(), "true" | "false" | "None"),
                _ => false,
            },
        }
    }

    /// Whether `<` opens the parameters of `unit Name<...>`, `system
    /// Name<...>`, `fn name<...>` or `inst x: Name<...>`, or the width of `u<W>` in a type
    /// position (after `:`, `as`, `->` or `[`), rather than comparing.
    fn opens_generics(&self) -> bool {
        let Some(prev) = &self.prev else { return false };
        let Some(prev2) = &self.prev2 else {
            return false;
        };
        let sized_int = matches!(prev.text.as_str(), "u" | "i")
            && (matches!(prev2.text.as_str(), ":" | "as" | "->" | "[")
                || (prev2.text == "=" && self.generic_depth > 0));
        prev.kind == TokenKind::Ident
            && (matches!(prev2.text.as_str(), "unit" | "system" | "fn" | "struct")
                || sized_int
                || self.args_ahead
                || (prev2.text == ":" && self.head.as_deref() == Some("inst")))
    }

    fn space_before(&self, tok: &Token, role: Role) -> bool {
        let Some(prev) = &self.prev else { return false };
        let text = tok.text.as_str();
        let punct = tok.kind == TokenKind::Punct;
        if tok.is_comment() {
            return true;
        }
        // A number followed by a tight `.` would read back as a decimal
        // (`0 . 5` is not `0.5`): keep the tokens apart.
        if prev.kind == TokenKind::Number && punct && text == "." {
            return true;
        }
        if (punct && TIGHT_BEFORE.contains(&text))
            || matches!(role, Role::GenericOpen | Role::GenericClose)
            || matches!(prev.role, Role::Unary | Role::GenericOpen)
            || (prev.kind == TokenKind::Punct && TIGHT_AFTER.contains(&prev.text.as_str()))
        {
            return false;
        }
        // Concatenations are tight inside their braces (`{a, b}`,
        // `{4{b}}`), and a slice's `:` on both sides (`x[7:0]`; `+:` and
        // `-:` keep their spaces).
        if punct && text == "{" && self.concat_next && self.in_concat {
            let tight = prev.kind == TokenKind::Number || prev.text == ")" || prev.text == "{";
            return !tight;
        }
        if self.in_concat
            && ((prev.text == "{" && prev.kind == TokenKind::Punct) || (punct && text == "}"))
        {
            return false;
        }
        if self.in_index
            && prev.kind == TokenKind::Punct
            && prev.text == ":"
            && !self
                .prev2
                .as_ref()
                .is_some_and(|p| p.kind == TokenKind::Punct && matches!(p.text.as_str(), "+" | "-"))
        {
            return false;
        }
        // Exact ratios in clock declarations read as one number: `1000/3 MHz`.
        if self.head.as_deref() == Some("clock") && (text == "/" || prev.text == "/") {
            return false;
        }
        // `fn name<W: u32>(` is a callee too: its parameters close a list.
        let callee = prev.kind == TokenKind::Ident
            || (prev.kind == TokenKind::Punct && matches!(prev.text.as_str(), ")" | "]"))
            || (prev.role == Role::GenericClose && self.head.as_deref() == Some("fn"));
        match text {
            "(" if punct => !(callee || CALL_KEYWORDS.contains(&prev.text.as_str())),
            "[" if punct => !callee,
            "}" if punct => prev.text != "{",
            _ => true,
        }
    }

    /// Whether `tok` written right after the previous token would read as
    /// different tokens (`<` `=` as `<=`, `/` `/` as a comment).
    fn would_merge(&self, tok: &Token) -> bool {
        let Some(prev) = &self.prev else { return false };
        let joined = format!("{}{}", prev.text, tok.text);
        !tokenize(&joined).is_ok_and(|toks| {
            toks.len() == 2 && toks[0].text == prev.text && toks[1].text == tok.text
        })
    }

    fn trailing_comment(&mut self, tok: &Token) {
        if tok.kind == TokenKind::LineComment {
            self.trailing.push(self.out.len());
        }
        self.write(" ");
        self.comment_text(tok);
    }

    fn own_line_comment(&mut self, tok: &Token) {
        if !self.line_start || self.break_pending {
            self.newline();
        }
        self.write_indent();
        self.comment_text(tok);
    }

    fn comment_text(&mut self, tok: &Token) {
        self.write(&tok.text);
        if tok.kind == TokenKind::LineComment {
            self.break_pending = true;
        } else {
            self.after_comment = true;
        }
    }

    fn write_indent(&mut self) {
        for _ in 0..self.indent + usize::from(self.continuation) {
            self.write(INDENT);
        }
    }

    fn write(&mut self, s: &str) {
        self.out.push_str(s);
        match s.rfind('\n') {
            Some(n) => self.col = s.len() - n - 1,
            None => self.col += s.chars().count(),
        }
        self.line_start = false;
    }

    fn newline(&mut self) {
        self.out.push('\n');
        self.col = 0;
        self.line_start = true;
        self.break_pending = false;
        self.after_comment = false;
    }
}

/// Whether `g` is a parenthesised list of one element that ends in a `{}`
/// group, as in `send(Inst { ... })`.
fn hugs_literal(g: &Group) -> bool {
    g.open.text == "("
        && !g.items.iter().any(|n| n.is_punct(","))
        && matches!(g.items.last(), Some(Node::Group(last)) if last.is_brace())
}

/// Pads the trailing line comments of consecutive lines that share their
/// indentation so that they start in one column, one space after the longest
/// code among those lines. `at` holds the offset of the space before each
/// such comment, in increasing order; only spaces are inserted, so the
/// result formats to itself.
fn align_trailing_comments(out: &str, at: &[usize]) -> String {
    /// A line that ends in a trailing line comment.
    struct Site {
        offset: usize,
        line: usize,
        indent: usize,
        width: usize,
    }
    let mut sites = Vec::with_capacity(at.len());
    let (mut line, mut scanned) = (0, 0);
    for &offset in at {
        line += out[scanned..offset].matches('\n').count();
        scanned = offset;
        let start = out[..offset].rfind('\n').map_or(0, |n| n + 1);
        let code = &out[start..offset];
        sites.push(Site {
            offset,
            line,
            indent: code.len() - code.trim_start_matches(' ').len(),
            width: code.chars().count(),
        });
    }
    let mut padded = String::with_capacity(out.len());
    let mut copied = 0;
    let mut run_start = 0;
    while run_start < sites.len() {
        let first = &sites[run_start];
        let run_len = sites[run_start..]
            .iter()
            .enumerate()
            .take_while(|(k, s)| s.line == first.line + k && s.indent == first.indent)
            .count();
        let run = &sites[run_start..run_start + run_len];
        let column = run.iter().map(|s| s.width).max().unwrap_or(0);
        for site in run {
            padded.push_str(&out[copied..site.offset]);
            padded.extend(std::iter::repeat_n(' ', column - site.width));
            copied = site.offset;
        }
        run_start += run_len;
    }
    padded.push_str(&out[copied..]);
    padded
}

/// End (exclusive) of the statement or list element that starts at `start`.
fn item_end(nodes: &[Node], start: usize, mode: Seq) -> usize {
    // In a block, `,` separates match arms only: elsewhere it is inside the
    // parameters of `unit Name<A = 1, B = 2>` or `inst x: Name<...>`.
    let mut arm = mode == Seq::List;
    let ends =
        |n: &Node, arm: bool| (arm && n.is_punct(",")) || (mode == Seq::Block && n.is_punct(";"));
    for (j, node) in nodes.iter().enumerate().skip(start) {
        arm |= node.is_punct("=>");
        if ends(node, arm) {
            return j + 1;
        }
        let Node::Group(g) = node else { continue };
        if mode == Seq::List || !g.is_brace() {
            continue;
        }
        // After a `{}` group the statement goes on only where the next token
        // cannot start a statement: `} else`, `};`, `}.field`, `} + 1`.
        match nodes.get(j + 1) {
            Some(next) if ends(next, arm) => return j + 2,
            Some(Node::Group(next)) if !next.is_brace() => {}
            Some(Node::Tok(next))
                if next.is_keyword("else")
                    || next.is_keyword("as")
                    || (next.kind == TokenKind::Punct
                        && BINARY.iter().chain(TIGHT_BEFORE).any(|p| *p == next.text)) => {}
            _ => return j + 1,
        }
    }
    nodes.len()
}
