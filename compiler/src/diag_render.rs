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
