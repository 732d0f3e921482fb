//! The canonical layout of `.chr` source (`chronc fmt`).
//!
//! The formatter works on tokens, not on the syntax tree, so that it keeps
//! every comment and can format a file the front end would reject for
//! reasons other than its brackets. It never adds, drops or reorders a token:
//! [`format_source`] checks that on every run and reports a bug rather than
//! return a changed program.

mod layout;
mod token;
mod tree;

#[cfg(test)]
mod tests;

use miette::{Diagnostic, SourceSpan};
use thiserror::Error;

pub use layout::MAX_WIDTH;
pub use token::{KEYWORDS, Token, TokenKind, tokenize};

/// Why a source could not be formatted. The codes are the front end's for
/// the same faults (`chronc fmt` refuses a file that does not parse before
/// it gets here, so these are reached only by direct callers); E0109 is the
/// formatter's own, a bug.
#[derive(Debug, Error, Diagnostic, PartialEq, Eq)]
pub enum FmtError {
    /// A `/*` without its `*/`.
    #[error("unterminated block comment")]
    #[diagnostic(
        code(E0105),
        help("close the comment with `*/`; block comments nest, so every `/*` needs its own `*/`")
    )]
    UnterminatedComment {
        /// The opening `/*`.
        #[label("this comment is never closed")]
        span: SourceSpan,
    },
    /// A `"` without its closing quote on the same line.
    #[error("unterminated string literal")]
    #[diagnostic(
        code(E0101),
        help(
            "close the string with `\"` before the end of the line; write `\\\"` for a quote inside it"
        )
    )]
    UnterminatedString {
        /// The opening quote.
        #[label("this string is never closed")]
        span: SourceSpan,
    },
    /// A closing bracket with no opening one.
    #[error("unmatched closing bracket")]
    #[diagnostic(
        code(E0106),
        help("remove the bracket or add the opening one it closes")
    )]
    UnmatchedClose {
        /// The bracket.
        #[label("nothing to close here")]
        span: SourceSpan,
    },
    /// A closing bracket of the wrong kind.
    #[error("mismatched bracket: expected `{expected}`")]
    #[diagnostic(code(E0106), help("close the innermost open bracket first"))]
    MismatchedBracket {
        /// The open bracket.
        #[label("opened here")]
        open: SourceSpan,
        /// The closing bracket that does not match it.
        #[label("closed by this")]
        close: SourceSpan,
        /// The closing bracket that would match.
        expected: String,
    },
    /// An opening bracket never closed.
    #[error("unclosed bracket")]
    #[diagnostic(code(E0105), help("add the matching closing bracket"))]
    UnclosedBracket {
        /// The bracket.
        #[label("this bracket is never closed")]
        span: SourceSpan,
    },
    /// The layout changed the token sequence: a formatter bug.
    #[error("internal error: formatting would change the program")]
    #[diagnostic(
        code(E0109),
        help(
            "this is a bug in `chronc fmt`; the file was left unchanged, please report it with the file"
        )
    )]
    ChangedTokens {
        /// The first token that differs in the input.
        #[label("first token that the layout changed")]
        span: SourceSpan,
    },
}

/// Formats a whole source file in the canonical layout.
pub fn format_source(src: &str) -> Result<String, FmtError> {
    let tokens = tokenize(src)?;
    let out = layout::Layout::file(&tree::build(tokens.clone())?);
    let again = tokenize(&out).map_err(|_| changed_at(&tokens, 0))?;
    if let Some(i) = (0..tokens.len().max(again.len())).find(|&i| {
        let same = |a: &Token, b: &Token| a.kind == b.kind && a.text == b.text;
        !matches!((tokens.get(i), again.get(i)), (Some(a), Some(b)) if same(a, b))
    }) {
        return Err(changed_at(&tokens, i));
    }
    Ok(out)
}

fn changed_at(tokens: &[Token], i: usize) -> FmtError {
    let span = tokens
        .get(i)
        .or(tokens.last())
        .map_or((0, 0).into(), |t| (t.span.start, t.span.len()).into());
    FmtError::ChangedTokens { span }
}
