//! `chronc fmt`: snapshots of the canonical layout of the inputs in
//! `tests/fmt/`, a check that every example and standard-library file is
//! already in that layout, and a check that formatting never changes what the
//! front end parses.

use std::path::{Path, PathBuf};

use chronon_compiler::fmt::format_source;
use chronon_lang::parse::parse_file;
use chronon_lang::span::FileId;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn format(path: &Path) -> (String, String) {
    let src = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let out = format_source(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (src, out)
}

#[test]
fn layout_snapshots() {
    insta::glob!("fmt/*.chr", |path| {
        let (src, out) = format(path);
        let again = format_source(&out)
            .unwrap_or_else(|e| panic!("{}: output does not format again: {e}", path.display()));
        assert_eq!(
            again,
            out,
            "{}: formatting is not idempotent",
            path.display()
        );
        insta::with_settings!({
            snapshot_path => "fmt/snapshots",
            prepend_module_to_snapshot => false,
            description => src,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(out);
        });
    });
}

#[test]
fn examples_and_stdlib_are_formatted() {
    let mut unformatted = Vec::new();
    for dir in ["examples", "stdlib"] {
        let Ok(entries) = std::fs::read_dir(repo().join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("directory entries are readable").path();
            if path.extension().is_some_and(|e| e == "chr") {
                let (src, out) = format(&path);
                if src != out {
                    unformatted.push(
                        path.strip_prefix(repo())
                            .unwrap_or(&path)
                            .display()
                            .to_string(),
                    );
                }
            }
        }
    }
    unformatted.sort();
    assert!(
        unformatted.is_empty(),
        "not in the canonical layout (run `cargo run --bin chronc -- fmt {}`):\n{}",
        unformatted.join(" "),
        unformatted.join("\n")
    );
}

/// The front end's parse of `src` with every span blanked, so that two
/// layouts of one program compare equal; `None` when `src` does not parse.
fn parse_without_spans(src: &str) -> Option<String> {
    let (module, diagnostics) = parse_file(FileId(0), src);
    if diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    Some(strip_spans(&format!("{module:?}")))
}

/// Replaces each `Span { file: .., start: .., end: .. }` of an AST's `Debug`
/// text by `Span`.
fn strip_spans(debug: &str) -> String {
    const OPEN: &str = "Span { file: ";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        out.push_str("Span");
        let after = &rest[at + OPEN.len()..];
        let close = after.find(" }").expect("a span's Debug text ends in ` }`");
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

/// Up to 80 bytes of `text` on each side of byte `at`, cut at characters.
fn around(text: &str, at: usize) -> &str {
    let mut from = at.saturating_sub(80).min(text.len());
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (at + 80).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    &text[from..to]
}

/// The `.chr` files of `dir`, sorted.
fn chr_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
        .map(|entry| entry.expect("directory entries are readable").path())
        .filter(|path| path.extension().is_some_and(|e| e == "chr"))
        .collect();
    files.sort();
    files
}

#[test]
fn span_blind_parse_sees_tokens_but_not_layout() {
    let parse = |src: &str| parse_without_spans(src).expect("the sample parses");
    assert_eq!(
        parse("const A: u8 = 1 - 2;"),
        parse("const A : u8 =\n    1-2 ; // same")
    );
    assert_ne!(parse("const A: u8 = 1 - 2;"), parse("const A: u8 = 2 - 1;"));
    assert_ne!(
        parse("const A: u8 = 1 - 2;"),
        parse("const A: u8 = 1 - -2;")
    );
}

#[test]
fn formatting_preserves_the_parse() {
    let mut parsed = 0;
    let mut changed = Vec::new();
    for dir in [
        "examples",
        "stdlib",
        "tests/fmt",
        "tests/ui",
        "tests/designs",
    ] {
        for path in chr_files(dir) {
            let src = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            // Inputs the front end rejects (most of tests/ui) say nothing
            // about whether the layout kept the program.
            let Some(before) = parse_without_spans(&src) else {
                continue;
            };
            parsed += 1;
            let out = format_source(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            match parse_without_spans(&out) {
                Some(after) if after == before => {}
                Some(after) => {
                    let at = before
                        .bytes()
                        .zip(after.bytes())
                        .position(|(a, b)| a != b)
                        .unwrap_or(before.len().min(after.len()));
                    changed.push(format!(
                        "{}: the parse changed\n  before: ...{}\n  after:  ...{}",
                        path.display(),
                        around(&before, at),
                        around(&after, at)
                    ));
                }
                None => changed.push(format!(
                    "{}: the formatted output no longer parses:\n{out}",
                    path.display()
                )),
            }
        }
    }
    assert!(
        parsed >= 20,
        "expected the examples, stdlib and test designs to parse; only {parsed} did"
    );
    assert!(changed.is_empty(), "{}", changed.join("\n\n"));
}
