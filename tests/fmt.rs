//! `chronc fmt`: snapshots of the canonical layout of the inputs in
//! `tests/fmt/`, and a check that every example and standard-library file is
//! already in that layout.

use std::path::{Path, PathBuf};

use chronon_compiler::fmt::format_source;

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
