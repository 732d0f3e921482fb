//! Diagnostics as plain data.
//!
//! Every phase has its own error enum (`ParseError`, `ResolveError`,
//! `TypeError`, `ElabError`, `Lint`); each variant knows its stable code and
//! turns into one renderer-neutral [`Diagnostic`]. Codes are `E` + four digits
//! for errors and `W` + four digits for warnings; the first two digits name
//! the phase (01 parse, 02 names, 03 types, 04 elaboration, 05 clocks).
//! Rendering with miette happens once, in the binary.

use serde::Serialize;

use crate::span::{SourceMap, Span};

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The design is rejected.
    Error,
    /// The design is accepted, but something looks wrong.
    Warning,
}

/// A labelled span.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What this place contributes to the diagnostic.
    pub message: String,
    /// Whether this is the main place.
    pub primary: bool,
}

/// One renderer-neutral diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Stable code, e.g. `E0301`.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// One-line summary.
    pub message: String,
    /// The primary label first, then secondary labels.
    pub labels: Vec<Label>,
    /// What to do about it; never empty.
    pub help: String,
}

impl Diagnostic {
    /// An error with a primary label.
    pub fn error(
        code: &'static str,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            labels: vec![Label {
                span,
                message: label.into(),
                primary: true,
            }],
            help: String::new(),
        }
    }

    /// A warning with a primary label.
    pub fn warning(
        code: &'static str,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Self::error(code, message, span, label)
        }
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    /// Sets the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary span.
    pub fn primary_span(&self) -> Span {
        self.labels
            .iter()
            .find(|l| l.primary)
            .map(|l| l.span)
            .unwrap_or_default()
    }

    /// The stable JSON form (see docs/language.md, "Machine-readable diagnostics").
    pub fn to_json(&self, sources: &SourceMap) -> serde_json::Value {
        let file = sources.get(self.primary_span().file).name.clone();
        let labels: Vec<serde_json::Value> = self
            .labels
            .iter()
            .map(|l| {
                let f = sources.get(l.span.file);
                let (line, column) = f.line_col(l.span.start as usize);
                let (end_line, end_column) = f.line_col(l.span.end as usize);
                serde_json::json!({
                    "file": f.name,
                    "start": l.span.start,
                    "end": l.span.end,
                    "line": line,
                    "column": column,
                    "end_line": end_line,
                    "end_column": end_column,
                    "message": l.message,
                    "primary": l.primary,
                })
            })
            .collect();
        serde_json::json!({
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": file,
            "labels": labels,
            "help": self.help,
        })
    }

    /// A miette report for this diagnostic, with the primary file as source.
    /// Labels in other files become notes in the help text, since a miette
    /// report shows one source.
    pub fn to_miette(&self, sources: &SourceMap) -> miette::Report {
        let primary_file = self.primary_span().file;
        let file = sources.get(primary_file);
        // A label on a very long line (generated or minified source) is not
        // drawn: the snippet would repeat the whole line and an underline as
        // long, per diagnostic (2,000 errors on one 23 KB line printed 91
        // MB). The place and the labels' messages are said in words.
        let start = self.primary_span().start as usize;
        let text = file.text.as_str();
        let line_start = text[..start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let drawn = line_end - line_start <= MAX_DRAWN_LINE;
        let mut message = self.message.clone();
        if !drawn {
            let (line, col) = file.line_col(start);
            message.push_str(&format!(
                " at {}:{line}:{col} (a line of {} bytes, not shown)",
                file.name,
                line_end - line_start
            ));
        }
        let mut help = self.help.clone();
        let mut labels = Vec::new();
        for l in &self.labels {
            if drawn && l.span.file == primary_file {
                let span = miette::SourceSpan::new((l.span.start as usize).into(), l.span.len());
                labels.push(if l.primary {
                    miette::LabeledSpan::new_primary_with_span(Some(l.message.clone()), span)
                } else {
                    miette::LabeledSpan::new_with_span(Some(l.message.clone()), span)
                });
            } else {
                let other = sources.get(l.span.file);
                let (line, col) = other.line_col(l.span.start as usize);
                help.push_str(&format!(
                    "\nnote: {} ({}:{}:{})",
                    l.message, other.name, line, col
                ));
            }
        }
        let severity = match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        };
        let diag = miette::MietteDiagnostic::new(message)
            .with_code(self.code)
            .with_severity(severity)
            .with_help(help)
            .with_labels(labels);
        if !drawn {
            return miette::Report::new(diag);
        }
        // Only the lines around the labels go to miette, which would copy
        // the whole file and scan it from the start for every diagnostic
        // (10,000 errors in one file rendered in 3.5 s, quadratically).
        let in_file = self.labels.iter().filter(|l| l.span.file == primary_file);
        let (lo, hi) = in_file.fold((usize::MAX, 0), |(lo, hi), l| {
            (lo.min(l.span.start as usize), hi.max(l.span.end as usize))
        });
        let first = file.line_index(lo).saturating_sub(WINDOW_CONTEXT);
        let last = file.line_index(hi) + WINDOW_CONTEXT;
        let range = file.lines_range(first, last);
        miette::Report::new(diag).with_source_code(Window {
            name: file.name.clone(),
            offset: range.start,
            first_line: first,
            text: file.text[range].to_string(),
        })
    }
}

/// Lines of context kept around a diagnostic's labels for miette: more
/// than its renderer shows (one).
const WINDOW_CONTEXT: usize = 3;

/// The lines of a file around a diagnostic's labels, which miette reads as
/// the whole file: spans are translated by `offset`, lines by `first_line`.
struct Window {
    name: String,
    offset: usize,
    first_line: usize,
    text: String,
}

impl miette::SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let local =
            miette::SourceSpan::new(span.offset().saturating_sub(self.offset).into(), span.len());
        let inner = self
            .text
            .read_span(&local, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            miette::SourceSpan::new(
                (inner.span().offset() + self.offset).into(),
                inner.span().len(),
            ),
            inner.line() + self.first_line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// Lines longer than this many bytes are not drawn under a diagnostic
/// (see [`Diagnostic::to_miette`]).
pub const MAX_DRAWN_LINE: usize = 1000;

/// A phase error enum: every variant maps to one diagnostic with a stable code.
pub trait IntoDiagnostic {
    /// The renderer-neutral diagnostic.
    fn into_diagnostic(self) -> Diagnostic;
}

/// Sorts diagnostics by file and position and drops exact duplicates (a
/// unit checked once per specialization reports each fault once).
pub fn normalize(diags: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert(d.clone()));
    diags.sort_by_key(|d| {
        let s = d.primary_span();
        (s.file, s.start, s.end, d.code)
    });
}

/// Edit distance, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Names longer than this get no "did you mean" suggestion.
const MAX_SUGGESTED_LEN: usize = 256;

/// The closest candidate within a small edit distance, if any.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.len() / 3).max(1);
    // The distance is at least the difference in length, and computing it
    // costs the product of the lengths: skip candidates it cannot pick, and
    // names too long to be typos (two names of 100,000 characters took
    // seconds per pair).
    if name.len() > MAX_SUGGESTED_LEN {
        return None;
    }
    candidates
        .into_iter()
        .filter(|c| *c != name && c.len().abs_diff(name.len()) <= limit)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggestions_are_close_names() {
        assert_eq!(did_you_mean("cout", ["count", "clock"]), Some("count"));
        assert_eq!(did_you_mean("zzzz", ["count", "clock"]), None);
    }

    /// A name of 100,000 characters against others as long took seconds per
    /// pair (the distance costs the product of the lengths); the fuzzer's
    /// long identifiers made `chronc check` run for half a minute.
    #[test]
    fn very_long_names_get_no_suggestion_and_cost_nothing() {
        let long = "x".repeat(100_000);
        let other = format!("{}y", "x".repeat(99_999));
        assert_eq!(did_you_mean(&long, [other.as_str(), "count"]), None);
        assert_eq!(
            did_you_mean("cout", [other.as_str(), "count"]),
            Some("count")
        );
    }
}
