//! Groups the token stream by its brackets, so that layout can treat a
//! bracketed group as one unit.

use super::FmtError;
use super::token::{Token, TokenKind};

/// A token, or a bracketed group of nodes.
#[derive(Debug)]
pub enum Node {
    /// A single token (comments included).
    Tok(Token),
    /// `(...)`, `[...]` or `{...}`.
    Group(Group),
}

/// A bracketed sequence of nodes.
#[derive(Debug)]
pub struct Group {
    /// The opening bracket.
    pub open: Token,
    /// What lies between the brackets.
    pub items: Vec<Node>,
    /// The closing bracket.
    pub close: Token,
}

impl Node {
    /// The node's token, when it is a single token.
    pub fn tok(&self) -> Option<&Token> {
        match self {
            Node::Tok(t) => Some(t),
            Node::Group(_) => None,
        }
    }

    /// Whether the node is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        self.tok().is_some_and(|t| t.is_punct(p))
    }

    /// Whether the node is a comment.
    pub fn is_comment(&self) -> bool {
        self.tok().is_some_and(Token::is_comment)
    }

    /// The node's first token (the opening bracket of a group).
    pub fn first(&self) -> &Token {
        match self {
            Node::Tok(t) => t,
            Node::Group(g) => &g.open,
        }
    }
}

impl Group {
    /// Whether the group is delimited by `{}`.
    pub fn is_brace(&self) -> bool {
        self.open.text == "{"
    }

    /// Whether a comment occurs anywhere inside the group.
    pub fn has_comment(&self) -> bool {
        self.items.iter().any(|n| match n {
            Node::Tok(t) => t.is_comment(),
            Node::Group(g) => g.has_comment(),
        })
    }
}

/// Builds the bracket tree of `tokens`; brackets must balance.
pub fn build(tokens: Vec<Token>) -> Result<Vec<Node>, FmtError> {
    // A stack of open groups; the bottom entry is the file itself.
    let mut stack: Vec<(Option<Token>, Vec<Node>)> = vec![(None, Vec::new())];
    for tok in tokens {
        let bracket = if tok.kind == TokenKind::Punct {
            tok.text.as_str()
        } else {
            ""
        };
        match bracket {
            "(" | "[" | "{" => stack.push((Some(tok), Vec::new())),
            ")" | "]" | "}" => {
                let Some((Some(open), items)) = stack.pop() else {
                    return Err(FmtError::UnmatchedClose {
                        span: span_of(&tok),
                    });
                };
                if closer(&open.text) != bracket {
                    return Err(FmtError::MismatchedBracket {
                        open: span_of(&open),
                        close: span_of(&tok),
                        expected: closer(&open.text).to_string(),
                    });
                }
                let group = Node::Group(Group {
                    open,
                    items,
                    close: tok,
                });
                stack
                    .last_mut()
                    .expect("the file level is never popped: it has no opening token")
                    .1
                    .push(group);
            }
            _ => stack
                .last_mut()
                .expect("the file level is never popped: it has no opening token")
                .1
                .push(Node::Tok(tok)),
        }
    }
    // Only the innermost unclosed group is reported; the file level is the
    // one entry whose opening token is `None`.
    match stack
        .pop()
        .expect("the file level is never popped: it has no opening token")
    {
        (None, items) => Ok(items),
        (Some(open), _) => Err(FmtError::UnclosedBracket {
            span: span_of(&open),
        }),
    }
}

fn closer(open: &str) -> &'static str {
    match open {
        "(" => ")",
        "[" => "]",
        _ => "}",
    }
}

fn span_of(tok: &Token) -> miette::SourceSpan {
    (tok.span.start, tok.span.len()).into()
}
