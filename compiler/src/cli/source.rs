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

/// Adds to `sources` the user modules the design's `use` items name, and
/// those they name in turn: `use lib::fifo::Fifo;` is module `lib::fifo`
/// (file `lib/fifo.chr`) unless a file `lib/fifo/Fifo.chr` exists, which
/// is then the module. Each path is looked for in `root` (the design's
/// folder) and then in each `search` folder (`-L DIR`), the first file
/// found winning; `std::` is the embedded standard library and never a
/// file. A module with no file is left to the front end, which reports it
/// (E0208); one that cannot be read is a diagnostic here, at its `use`.
pub fn read_modules(
    sources: &mut SourceMap,
    root: &Path,
    search: &[std::path::PathBuf],
) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut scanned = 0;
    while scanned < sources.len() {
        let file = chronon_lang::span::FileId(scanned as u32);
        scanned += 1;
        let (module, _) = chronon_lang::parse::parse_file(file, &sources.get(file).text);
        for item in &module.items {
            let chronon_lang::ast::Item::Use(u) = item else {
                continue;
            };
            if u.path[0].name == "std" {
                continue;
            }
            for (name, _) in u.user_module_candidates() {
                if sources.module(&name).is_some() {
                    break;
                }
                let relative: std::path::PathBuf =
                    format!("{}.chr", name.replace("::", "/")).into();
                let Some(path) = std::iter::once(root)
                    .chain(search.iter().map(|p| p.as_path()))
                    .map(|dir| dir.join(&relative))
                    .find(|p| p.is_file())
                else {
                    continue;
                };
                match read_source(&path) {
                    Ok(text) => {
                        sources.add_module(name, path.display().to_string(), text);
                    }
                    Err(Unreadable { message, .. }) => {
                        errors.push(
                            Diagnostic::error("E0001", message, u.span, "imported here")
                                .with_help("a module is a readable UTF-8 `.chr` file"),
                        );
                    }
                }
                break;
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The folder a design's modules are found from: the first design file's
/// (the working directory for standard input or a bare file name).
pub fn design_root(files: &[std::path::PathBuf]) -> std::path::PathBuf {
    files
        .first()
        .filter(|p| p.as_os_str() != "-")
        .and_then(|p| p.parent())
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| ".".into(), Path::to_path_buf)
}
