//! A lossless-enough tokenizer for the formatter: it keeps comments and counts
//! the line breaks before each token, which is all the layout the formatter
//! preserves from its input.

use std::ops::Range;

use super::FmtError;

/// What a token is, as far as layout is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An identifier that is not a keyword (including `_` and type names).
    Ident,
    /// A word of the keyword list.
    Keyword,
    /// An integer, decimal or suffixed literal, kept verbatim.
    Number,
    /// A string literal, kept verbatim with its escapes.
    Str,
    /// `// ...` up to (not including) the end of the line.
    LineComment,
    /// `/* ... */`, possibly nested and spanning lines.
    BlockComment,
    /// An operator or a delimiter.
    Punct,
}

/// One token of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The token's class.
    pub kind: TokenKind,
    /// The token's text; line comments lose trailing whitespace.
    pub text: String,
    /// Byte range in the source.
    pub span: Range<usize>,
    /// Line breaks in the whitespace just before the token.
    pub newlines_before: usize,
}

impl Token {
    /// Whether the token is a comment of either form.
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, TokenKind::LineComment | TokenKind::BlockComment)
    }

    /// Whether the token is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        self.kind == TokenKind::Punct && self.text == p
    }

    /// Whether the token is the keyword `k`.
    pub fn is_keyword(&self, k: &str) -> bool {
        self.kind == TokenKind::Keyword && self.text == k
    }
}

/// The keywords of the language, in the order of `docs/language.md`.
///
/// `tests/editors.rs` checks this list against the pest grammar's `keyword`
/// rule and the editor grammars.
pub const KEYWORDS: &[&str] = &[
    "use", "const", "clock", "phase", "struct", "enum", "fn", "unit", "system", "in", "out", "cdc",
    "fwft", "rate", "reg", "stage", "pipes", "counter", "tick", "let", "if", "else", "match",
    "for", "while", "return", "inst", "on", "connect", "latency", "capacity", "depth", "sync",
    "as", "true", "false", "finish", "assert", "trace", "Some", "None",
];

/// Operators of more than one character, longest first so that the first
/// match is the longest one.
const MULTI_PUNCT: &[&str] = &[
    "..=", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "::", "..", "+=", "-=",
];

/// Splits `src` into tokens, comments included.
pub fn tokenize(src: &str) -> Result<Vec<Token>, FmtError> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    let mut newlines = 0;
    while pos < bytes.len() {
        let c = bytes[pos];
        if c == b'\n' {
            newlines += 1;
            pos += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            pos += 1;
            continue;
        }
        let start = pos;
        let kind = if src[pos..].starts_with("//") {
            pos = src[pos..].find('\n').map_or(bytes.len(), |n| pos + n);
            TokenKind::LineComment
        } else if src[pos..].starts_with("/*") {
            pos = block_comment_end(src, pos)?;
            TokenKind::BlockComment
        } else if c == b'"' {
            pos = string_end(src, pos)?;
            TokenKind::Str
        } else if c.is_ascii_digit() {
            pos = number_end(bytes, pos);
            TokenKind::Number
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
                pos += 1;
            }
            if KEYWORDS.contains(&&src[start..pos]) {
                TokenKind::Keyword
            } else {
                TokenKind::Ident
            }
        } else {
            pos += MULTI_PUNCT
                .iter()
                .find(|p| src[pos..].starts_with(*p))
                .map_or_else(
                    || src[pos..].chars().next().map_or(1, char::len_utf8),
                    |p| p.len(),
                );
            TokenKind::Punct
        };
        let raw = &src[start..pos];
        let text = if kind == TokenKind::LineComment {
            raw.trim_end()
        } else {
            raw
        };
        tokens.push(Token {
            kind,
            text: text.to_string(),
            span: start..pos,
            newlines_before: newlines,
        });
        newlines = 0;
    }
    Ok(tokens)
}

/// End of the (nested) block comment that starts at `start`.
fn block_comment_end(src: &str, start: usize) -> Result<usize, FmtError> {
    let mut depth = 0usize;
    let mut pos = start;
    while pos < src.len() {
        if src[pos..].starts_with("/*") {
            depth += 1;
            pos += 2;
        } else if src[pos..].starts_with("*/") {
            depth -= 1;
            pos += 2;
            if depth == 0 {
                return Ok(pos);
            }
        } else {
            pos += src[pos..].chars().next().map_or(1, char::len_utf8);
        }
    }
    Err(FmtError::UnterminatedComment {
        span: (start, 2).into(),
    })
}

/// End of the string literal that starts at `start` (just past the closing quote).
fn string_end(src: &str, start: usize) -> Result<usize, FmtError> {
    let mut chars = src[start + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '"' => return Ok(start + 1 + i + 1),
            '\n' => break,
            _ => {}
        }
    }
    Err(FmtError::UnterminatedString {
        span: (start, 1).into(),
    })
}

/// End of the number literal at `start`: digits, `_`, a suffix such as `u8`,
/// and one decimal point followed by a digit (`914.5`, but not `0..4`).
fn number_end(bytes: &[u8], start: usize) -> usize {
    let word = |pos: &mut usize| {
        while *pos < bytes.len() && (bytes[*pos].is_ascii_alphanumeric() || bytes[*pos] == b'_') {
            *pos += 1;
        }
    };
    let mut pos = start;
    word(&mut pos);
    if pos + 1 < bytes.len() && bytes[pos] == b'.' && bytes[pos + 1].is_ascii_digit() {
        pos += 1;
        word(&mut pos);
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        tokenize(src)
            .expect("test input tokenizes")
            .into_iter()
            .map(|t| (t.kind, t.text))
            .collect()
    }

    #[test]
    fn literals_stay_whole() {
        use TokenKind::*;
        let cases: &[(&str, &[(TokenKind, &str)])] = &[
            ("914.5 MHz", &[(Number, "914.5"), (Ident, "MHz")]),
            ("0..4", &[(Number, "0"), (Punct, ".."), (Number, "4")]),
            ("0xFF_FFu16", &[(Number, "0xFF_FFu16")]),
            ("-3i12", &[(Punct, "-"), (Number, "3i12")]),
            ("a<=b", &[(Ident, "a"), (Punct, "<="), (Ident, "b")]),
            ("x->y", &[(Ident, "x"), (Punct, "->"), (Ident, "y")]),
            (
                "/* a /* b */ c */d",
                &[(BlockComment, "/* a /* b */ c */"), (Ident, "d")],
            ),
            (
                "\"a\\\"b\" // c  ",
                &[(Str, "\"a\\\"b\""), (LineComment, "// c")],
            ),
            (
                "Some None tick",
                &[(Keyword, "Some"), (Keyword, "None"), (Keyword, "tick")],
            ),
        ];
        for (src, want) in cases {
            let want: Vec<_> = want.iter().map(|(k, s)| (*k, s.to_string())).collect();
            assert_eq!(kinds(src), want, "tokenizing {src:?}");
        }
    }

    #[test]
    fn counts_line_breaks() {
        let toks = tokenize("a\n\n  b c\r\nd").expect("tokenizes");
        let counts: Vec<usize> = toks.iter().map(|t| t.newlines_before).collect();
        assert_eq!(counts, [0, 2, 0, 1]);
    }

    #[test]
    fn unterminated_forms_are_errors() {
        for src in ["/* open /* nested */", "\"no end", "\"line\nbreak\""] {
            assert!(tokenize(src).is_err(), "{src:?} should not tokenize");
        }
    }
}
