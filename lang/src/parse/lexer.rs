//! The token stream of one item for the hand-written parser
//! ([`super::descent`]).
//!
//! The lexer is exact only where that is cheap: it recognizes the tokens of
//! `grammar.pest` by maximal munch, and gives up (returns `None`) on anything
//! whose reading could differ from pest's character-level one (a digit run
//! that is not one whole integer literal, an unclosed string or comment, a
//! character outside the grammar). Giving up is never wrong: the caller then
//! parses the item with pest, which also reports the error.

/// A keyword of the grammar's `keyword` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kw {
    Use,
    Const,
    Clock,
    Phase,
    Struct,
    Enum,
    Fn,
    Unit,
    System,
    In,
    Out,
    Cdc,
    Fwft,
    Rate,
    Reg,
    Stage,
    Pipes,
    Counter,
    Tick,
    Let,
    If,
    Else,
    Match,
    For,
    While,
    Return,
    Inst,
    On,
    Connect,
    Latency,
    Capacity,
    Depth,
    Sync,
    As,
    True,
    False,
    Finish,
    Assert,
    Trace,
    Some,
    None,
}

/// Every keyword with its spelling; the unit tests hold it equal to the
/// grammar's `keyword` rule, the single source of the list.
#[cfg(test)]
pub(super) const KEYWORDS: &[(&str, Kw)] = &[
    ("use", Kw::Use),
    ("const", Kw::Const),
    ("clock", Kw::Clock),
    ("phase", Kw::Phase),
    ("struct", Kw::Struct),
    ("enum", Kw::Enum),
    ("fn", Kw::Fn),
    ("unit", Kw::Unit),
    ("system", Kw::System),
    ("in", Kw::In),
    ("out", Kw::Out),
    ("cdc", Kw::Cdc),
    ("fwft", Kw::Fwft),
    ("rate", Kw::Rate),
    ("reg", Kw::Reg),
    ("stage", Kw::Stage),
    ("pipes", Kw::Pipes),
    ("counter", Kw::Counter),
    ("tick", Kw::Tick),
    ("let", Kw::Let),
    ("if", Kw::If),
    ("else", Kw::Else),
    ("match", Kw::Match),
    ("for", Kw::For),
    ("while", Kw::While),
    ("return", Kw::Return),
    ("inst", Kw::Inst),
    ("on", Kw::On),
    ("connect", Kw::Connect),
    ("latency", Kw::Latency),
    ("capacity", Kw::Capacity),
    ("depth", Kw::Depth),
    ("sync", Kw::Sync),
    ("as", Kw::As),
    ("true", Kw::True),
    ("false", Kw::False),
    ("finish", Kw::Finish),
    ("assert", Kw::Assert),
    ("trace", Kw::Trace),
    ("Some", Kw::Some),
    ("None", Kw::None),
];

fn keyword(word: &[u8]) -> Option<Kw> {
    // A match on the bytes compiles to a length switch and a few compares,
    // cheaper than hashing every name.
    Some(match word {
        b"use" => Kw::Use,
        b"const" => Kw::Const,
        b"clock" => Kw::Clock,
        b"phase" => Kw::Phase,
        b"struct" => Kw::Struct,
        b"enum" => Kw::Enum,
        b"fn" => Kw::Fn,
        b"unit" => Kw::Unit,
        b"system" => Kw::System,
        b"in" => Kw::In,
        b"out" => Kw::Out,
        b"cdc" => Kw::Cdc,
        b"fwft" => Kw::Fwft,
        b"rate" => Kw::Rate,
        b"reg" => Kw::Reg,
        b"stage" => Kw::Stage,
        b"pipes" => Kw::Pipes,
        b"counter" => Kw::Counter,
        b"tick" => Kw::Tick,
        b"let" => Kw::Let,
        b"if" => Kw::If,
        b"else" => Kw::Else,
        b"match" => Kw::Match,
        b"for" => Kw::For,
        b"while" => Kw::While,
        b"return" => Kw::Return,
        b"inst" => Kw::Inst,
        b"on" => Kw::On,
        b"connect" => Kw::Connect,
        b"latency" => Kw::Latency,
        b"capacity" => Kw::Capacity,
        b"depth" => Kw::Depth,
        b"sync" => Kw::Sync,
        b"as" => Kw::As,
        b"true" => Kw::True,
        b"false" => Kw::False,
        b"finish" => Kw::Finish,
        b"assert" => Kw::Assert,
        b"trace" => Kw::Trace,
        b"Some" => Kw::Some,
        b"None" => Kw::None,
        _ => return None,
    })
}

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    /// A name that is not a keyword.
    Ident,
    /// A keyword.
    Kw(Kw),
    /// One whole `int_lit` (checked against the grammar's shape).
    Int,
    /// A closed string literal, quotes included.
    Str,
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    ColonColon,
    Dot,
    DotDot,
    Arrow,
    FatArrow,
    Eq,
    EqEq,
    Ne,
    Bang,
    Lt,
    Le,
    Shl,
    Gt,
    Ge,
    Shr,
    Plus,
    PlusEq,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Amp,
    AndAnd,
    Pipe,
    OrOr,
    Tilde,
    /// The end of the item's text (always the last token).
    Eof,
}

/// A token and its byte range in the item's text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `run` (a maximal run of identifier characters starting with a
/// digit) is exactly one `int_lit`: pest would otherwise read it as an
/// integer followed by more tokens, which only an error path needs.
fn is_int_lit(run: &[u8]) -> bool {
    let (digits, rest): (&[u8], fn(u8) -> bool) = if let Some(r) = run.strip_prefix(b"0x") {
        (r, |c: u8| c.is_ascii_hexdigit())
    } else if let Some(r) = run.strip_prefix(b"0b") {
        (r, |c: u8| c == b'0' || c == b'1')
    } else {
        (run, |c: u8| c.is_ascii_digit())
    };
    if !digits.first().is_some_and(|c| rest(*c)) {
        return false;
    }
    let n = digits
        .iter()
        .position(|c| !(rest(*c) || *c == b'_'))
        .unwrap_or(digits.len());
    match &digits[n..] {
        [] => true,
        [b'u' | b'i', width @ ..] => !width.is_empty() && width.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Cuts one item's text into tokens, ending with [`Tok::Eof`]; `None` where
/// the text leaves the token shapes this lexer reads exactly.
pub(super) fn lex(text: &str) -> Option<Vec<Token>> {
    let b = text.as_bytes();
    let n = b.len();
    if u32::try_from(n).is_err() {
        return None;
    }
    let mut out = Vec::with_capacity(n / 3 + 1);
    let mut i = 0;
    while i < n {
        let c = b[i];
        let start = i;
        let at = |k: usize| b.get(k).copied().unwrap_or(0);
        let kind = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'/' if at(i + 1) == b'/' => {
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if at(i + 1) == b'*' => {
                let mut depth = 0usize;
                loop {
                    if i >= n {
                        return None;
                    }
                    if b[i] == b'/' && at(i + 1) == b'*' {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && at(i + 1) == b'/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while i < n && is_ident_char(b[i]) {
                    i += 1;
                }
                match keyword(&b[start..i]) {
                    Some(k) => Tok::Kw(k),
                    None => Tok::Ident,
                }
            }
            b'0'..=b'9' => {
                while i < n && is_ident_char(b[i]) {
                    i += 1;
                }
                if !is_int_lit(&b[start..i]) {
                    return None;
                }
                Tok::Int
            }
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None | Some(b'\n') => return None,
                        Some(b'"') => break,
                        // An escape takes the next character whole; a
                        // multi-byte one is skipped by the plain bytes after.
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
                Tok::Str
            }
            _ => {
                let (kind, len) = match (c, at(i + 1)) {
                    (b'(', _) => (Tok::LParen, 1),
                    (b')', _) => (Tok::RParen, 1),
                    (b'[', _) => (Tok::LBrack, 1),
                    (b']', _) => (Tok::RBrack, 1),
                    (b'{', _) => (Tok::LBrace, 1),
                    (b'}', _) => (Tok::RBrace, 1),
                    (b',', _) => (Tok::Comma, 1),
                    (b';', _) => (Tok::Semi, 1),
                    (b':', b':') => (Tok::ColonColon, 2),
                    (b':', _) => (Tok::Colon, 1),
                    (b'.', b'.') => (Tok::DotDot, 2),
                    (b'.', _) => (Tok::Dot, 1),
                    (b'-', b'>') => (Tok::Arrow, 2),
                    (b'-', _) => (Tok::Minus, 1),
                    (b'=', b'>') => (Tok::FatArrow, 2),
                    (b'=', b'=') => (Tok::EqEq, 2),
                    (b'=', _) => (Tok::Eq, 1),
                    (b'!', b'=') => (Tok::Ne, 2),
                    (b'!', _) => (Tok::Bang, 1),
                    (b'<', b'=') => (Tok::Le, 2),
                    (b'<', b'<') => (Tok::Shl, 2),
                    (b'<', _) => (Tok::Lt, 1),
                    (b'>', b'=') => (Tok::Ge, 2),
                    (b'>', b'>') => (Tok::Shr, 2),
                    (b'>', _) => (Tok::Gt, 1),
                    (b'+', b'=') => (Tok::PlusEq, 2),
                    (b'+', _) => (Tok::Plus, 1),
                    (b'*', _) => (Tok::Star, 1),
                    (b'/', _) => (Tok::Slash, 1),
                    (b'%', _) => (Tok::Percent, 1),
                    (b'^', _) => (Tok::Caret, 1),
                    (b'&', b'&') => (Tok::AndAnd, 2),
                    (b'&', _) => (Tok::Amp, 1),
                    (b'|', b'|') => (Tok::OrOr, 2),
                    (b'|', _) => (Tok::Pipe, 1),
                    (b'~', _) => (Tok::Tilde, 1),
                    _ => return None,
                };
                i += len;
                kind
            }
        };
        out.push(Token {
            kind,
            start: start as u32,
            end: i as u32,
        });
    }
    out.push(Token {
        kind: Tok::Eof,
        start: n as u32,
        end: n as u32,
    });
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_match_the_grammar() {
        let mut ours: Vec<&str> = KEYWORDS.iter().map(|(w, _)| *w).collect();
        let mut grammar = crate::parse::keywords();
        ours.sort_unstable();
        grammar.sort_unstable();
        assert_eq!(ours, grammar);
        for (w, k) in KEYWORDS {
            assert_eq!(keyword(w.as_bytes()), Some(*k), "{w}");
        }
    }

    #[test]
    fn integer_runs_are_whole_literals_or_refused() {
        for ok in ["0", "1_000", "0x1f_u8", "0b1010i4", "7u64", "1_u8"] {
            assert!(is_int_lit(ok.as_bytes()), "{ok}");
        }
        for bad in ["0x", "0b2", "1as", "1u", "0xg", "12abc", "0X1"] {
            assert!(!is_int_lit(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn tokens_by_maximal_munch() {
        let toks = lex("a <= b->c /* x /* y */ */ \"s\\\"\" // z\n..=>").expect("lexes");
        let kinds: Vec<Tok> = toks.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            [
                Tok::Ident,
                Tok::Le,
                Tok::Ident,
                Tok::Arrow,
                Tok::Ident,
                Tok::Str,
                Tok::DotDot,
                Tok::FatArrow,
                Tok::Eof
            ]
        );
        assert!(lex("\"open").is_none());
        assert!(lex("/* open").is_none());
        assert!(lex("a @ b").is_none());
        assert!(lex("é").is_none());
    }
}
