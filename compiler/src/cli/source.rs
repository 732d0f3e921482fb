//! Reading design files for `check`, `run` and `fmt`. A file that cannot
//! be read is a diagnostic like any other (E0001 unreadable, E0002 not
//! UTF-8 text, with the bad byte labelled), so `--format json` and
//! `run --json` carry it too, and every such file is reported, not just
//! the first. A UTF-8 byte-order mark at the start of a file is dropped,
//! as editors and tree-sitter do, so it is neither a syntax error nor a
//! column.

use std::path::Path;

use chronon_lang::diag::Diagnostic;
use chronon_lang::span::{SourceMap, Span};

/// The byte-order mark some editors write at the start of a UTF-8 file.
const BOM: &str = "\u{feff}";

/// Why one file could not be read: the message, and for a file that is
/// not UTF-8 its text up to the first bad byte (lossily) and that byte's
/// offset.
pub struct Unreadable {
    /// `cannot read FILE: why`.
    pub message: String,
    /// The text and the offset of the first bad byte, if the file was read.
    pub bad_byte: Option<(String, usize)>,
}

/// Reads the design files `paths` into `sources`. `Err` holds one
/// diagnostic per file that could not be read; such a file is still added
/// to `sources` (empty, or its valid prefix) so the diagnostic has a place.
pub fn read_sources(
    paths: &[std::path::PathBuf],
    sources: &mut SourceMap,
) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for path in paths {
        let name = match path.as_os_str() == "-" {
            true => "<stdin>".to_string(),
            false => path.display().to_string(),
        };
        match read_source(path) {
            Ok(text) => {
                sources.add(name, text);
            }
            Err(Unreadable { message, bad_byte }) => {
                let not_utf8 = bad_byte.is_some();
                let (text, at) = bad_byte.unwrap_or_default();
                // The snippet's header names the file: the message need not.
                let message = match not_utf8 {
                    true => message
                        .strip_prefix(&format!("cannot read {name}: "))
                        .unwrap_or(&message)
                        .to_string(),
                    false => message,
                };
                let file = sources.add(name, text);
                let span = Span::new(file, at, at);
                errors.push(match not_utf8 {
                    true => Diagnostic::error(
                        "E0002",
                        message,
                        span,
                        "the first byte that is not UTF-8",
                    )
                    .with_help(
                        "design files are UTF-8 text: convert it (`iconv -f latin1 -t utf-8`)",
                    ),
                    false => Diagnostic::error("E0001", message, span, "this file").with_help(
                        "name a readable `.chr` file (a directory or a missing path is not one)",
                    ),
                });
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Reads one design file (`-`: standard input) without a leading
/// byte-order mark; `Err` says `cannot read FILE: why`, and for a file
/// that is not UTF-8 text where its first bad byte is.
pub fn read_source(path: &Path) -> Result<String, Unreadable> {
    let bytes = match path.as_os_str() == "-" {
        true => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map(|_| bytes)
        }
        false => std::fs::read(path),
    };
    match bytes.map(String::from_utf8) {
        Ok(Ok(text)) => Ok(match text.strip_prefix(BOM) {
            Some(rest) => rest.to_string(),
            None => text,
        }),
        Ok(Err(e)) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&valid[start..]).chars().count() + 1;
            let byte = e.as_bytes()[valid.len()];
            let prefix = String::from_utf8_lossy(valid).into_owned();
            let at = prefix.len();
            Err(Unreadable {
                message: format!(
                    "cannot read {}: not UTF-8 text (byte 0x{byte:02x} at line {line}, \
                     column {column}); design files are UTF-8",
                    path.display()
                ),
                bad_byte: Some((prefix, at)),
            })
        }
        Err(e) => Err(Unreadable {
            message: format!("cannot read {}: {e}", path.display()),
            bad_byte: None,
        }),
    }
}
