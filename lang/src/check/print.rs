//! `print("...", values)`: the format string, split at its placeholders,
//! and the values, one integer or `bool` per placeholder.

use super::*;
use crate::design::{FormatPiece, Radix};

/// Splits `text` at its placeholders (`{}`, `{:x}`, `{:#x}`, `{:b}`,
/// `{:#b}`; `{{` and `}}` are braces); `Err` says what is wrong.
pub(super) fn parse_format(text: &str) -> Result<Vec<FormatPiece>, String> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '}' => return Err("a lone `}` (write `}}` for a brace)".into()),
            '{' => {
                let mut spec = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => spec.push(c),
                        None => {
                            return Err(
                                "a `{` that is never closed (write `{{` for a brace)".into()
                            );
                        }
                    }
                }
                let radix = match spec.as_str() {
                    "" => Radix::Decimal,
                    ":x" => Radix::Hex,
                    ":#x" => Radix::HexPrefixed,
                    ":b" => Radix::Binary,
                    ":#b" => Radix::BinaryPrefixed,
                    other => return Err(format!("`{{{other}}}` is not a placeholder")),
                };
                if !literal.is_empty() {
                    pieces.push(FormatPiece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(FormatPiece::Value(radix));
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        pieces.push(FormatPiece::Text(literal));
    }
    Ok(pieces)
}

impl<'e> BodyCx<'e> {
    /// Whether a call of `f` is the `print` builtin: an item of that name
    /// in scope shadows it.
    pub(super) fn is_print(&self, f: &ast::Ident) -> bool {
        f.name == "print" && !self.env.scopes[self.module].contains_key(&f.name)
    }

    /// `print(format, values...)` as a statement (E0335, E0336, E0337).
    pub(super) fn print_stmt(&mut self, args: &[ast::Expr], span: Span) -> Option<StmtKind> {
        if self.in_fn() {
            self.err(TypeError::UnitOpInFn {
                span,
                what: "`print`",
            });
            return None;
        }
        let (format, format_span, values) = match args {
            [
                ast::Expr {
                    kind: A::Str(text),
                    span: at,
                },
                values @ ..,
            ] => (text, *at, values),
            _ => {
                let at = args.first().map_or(span, |a| a.span);
                self.err(TypeError::BadFormat {
                    span: at,
                    problem: "a format string must come first".into(),
                });
                // The values are still checked, for their own errors.
                for v in args.iter().filter(|a| !matches!(a.kind, A::Str(_))) {
                    self.check(v, None);
                }
                return None;
            }
        };
        let format = match parse_format(format) {
            Ok(pieces) => Some(pieces),
            Err(problem) => {
                self.err(TypeError::BadFormat {
                    span: format_span,
                    problem,
                });
                None
            }
        };
        let mut out = Vec::new();
        let mut ok = true;
        for v in values {
            let checked = self.check(v, None);
            match &checked.ty {
                Type::Bool | Type::Int { .. } => {}
                Type::Error => ok = false,
                ty => {
                    self.err(TypeError::PrintValue {
                        span: v.span,
                        ty: ty.to_string(),
                    });
                    ok = false;
                }
            }
            out.push(checked);
        }
        let format = format?;
        let placeholders = format
            .iter()
            .filter(|p| matches!(p, FormatPiece::Value(_)))
            .count();
        if placeholders != values.len() {
            let span = match values.get(placeholders..) {
                Some([first, .., last]) => first.span.to(last.span),
                Some([only]) => only.span,
                _ => format_span,
            };
            self.err(TypeError::FormatCount {
                span,
                placeholders,
                values: values.len(),
            });
            return None;
        }
        ok.then_some(StmtKind::Print { format, args: out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_split_at_placeholders_and_keep_escaped_braces() {
        use FormatPiece::{Text, Value};
        assert_eq!(
            parse_format("a={} b={:x} {{{:#b}}} {:#x}{:b}"),
            Ok(vec![
                Text("a=".into()),
                Value(Radix::Decimal),
                Text(" b=".into()),
                Value(Radix::Hex),
                Text(" {".into()),
                Value(Radix::BinaryPrefixed),
                Text("} ".into()),
                Value(Radix::HexPrefixed),
                Value(Radix::Binary),
            ])
        );
        assert_eq!(parse_format(""), Ok(vec![]));
        assert!(parse_format("{").is_err());
        assert!(parse_format("}").is_err());
        assert!(parse_format("{:o}").unwrap_err().contains("{:o}"));
        assert!(parse_format("{0}").is_err());
    }
}
