//! Renders front-end diagnostics for people, with miette.
//!
//! The front end produces diagnostics as plain data; this is the one place
//! that turns them into text, so `chronc check` and the snapshot tests show
//! the same thing.

use chronon_lang::diag::Diagnostic;
use chronon_lang::span::SourceMap;
use miette::{GraphicalReportHandler, GraphicalTheme};

/// Renders every diagnostic, one after the other, at `width` columns;
/// `color` selects the ANSI theme (use `false` for files and snapshots).
pub fn render_human(
    diags: &[Diagnostic],
    sources: &SourceMap,
    width: usize,
    color: bool,
) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false);
    let mut out = String::new();
    for d in diags {
        let report = d.to_miette(sources);
        if handler.render_report(&mut out, report.as_ref()).is_err() {
            // Rendering into a String cannot fail on I/O; fall back to the plain message.
            out.push_str(&format!(
                "{}[{}]: {}\n",
                severity_word(d),
                d.code,
                d.message
            ));
        }
        out.push('\n');
    }
    out
}

fn severity_word(d: &Diagnostic) -> &'static str {
    if d.is_error() { "error" } else { "warning" }
}

/// The stable JSON form of all diagnostics: an array, one object per
/// diagnostic (documented in docs/language.md).
pub fn render_json(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let all: Vec<serde_json::Value> = diags.iter().map(|d| d.to_json(sources)).collect();
    serde_json::to_string_pretty(&all).expect("JSON values always serialize")
}

#[cfg(test)]
mod tests {
    use chronon_lang::diag::Diagnostic;
    use chronon_lang::span::{SourceMap, Span};
    use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic};

    use super::render_human;

    /// `d` rendered with the whole file as miette's source, as before
    /// diagnostics carried only the lines around their labels.
    fn render_with_whole_file(d: &Diagnostic, sources: &SourceMap) -> String {
        let file = sources.get(d.primary_span().file);
        let labels = d.labels.iter().map(|l| {
            let span = miette::SourceSpan::new((l.span.start as usize).into(), l.span.len());
            match l.primary {
                true => LabeledSpan::new_primary_with_span(Some(l.message.clone()), span),
                false => LabeledSpan::new_with_span(Some(l.message.clone()), span),
            }
        });
        let report = miette::Report::new(
            MietteDiagnostic::new(d.message.clone())
                .with_code(d.code)
                .with_severity(miette::Severity::Error)
                .with_help(d.help.clone())
                .with_labels(labels),
        )
        .with_source_code(miette::NamedSource::new(
            file.name.clone(),
            file.text.clone(),
        ));
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(100)
            .with_links(false);
        let mut out = String::new();
        handler
            .render_report(&mut out, report.as_ref())
            .expect("renders");
        out.push('\n');
        out
    }

    #[test]
    fn a_window_of_lines_renders_as_the_whole_file_does() {
        let mut sources = SourceMap::new();
        let mut text: String = (0..60)
            .map(|i| format!("line {i} of the file: x{i};\n"))
            .collect();
        text.push_str("last line without a newline");
        let file = sources.add("w.chr", text.clone());
        let at = |line: usize, col: usize, len: usize| {
            let start = text.lines().take(line).map(|l| l.len() + 1).sum::<usize>() + col;
            Span::new(file, start, start + len)
        };
        let cases = [
            vec![at(0, 0, 4)],
            vec![at(30, 5, 2)],
            vec![at(60, 0, 4)],
            vec![at(2, 0, 4), at(40, 3, 5)],
            vec![at(59, 1, 3), at(1, 0, 2)],
            vec![at(10, 0, 0)],
        ];
        for (k, spans) in cases.iter().enumerate() {
            let mut d = Diagnostic::error("E0301", format!("case {k}"), spans[0], "here")
                .with_help("a help line");
            for s in &spans[1..] {
                d = d.with_label(*s, "and here");
            }
            let window = render_human(std::slice::from_ref(&d), &sources, 100, false);
            assert_eq!(window, render_with_whole_file(&d, &sources), "case {k}");
        }
    }
}
