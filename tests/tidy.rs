//! House rules checked on the source tree: library crates take their
//! execution choices from `chronon_compiler::config::ExecConfig` (built by
//! `chronc` in `main`) and never read the environment outside their tests.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// `text` without its test code: a `#[cfg(test)]` item runs from its
/// attribute to the brace that closes it (the scan skips string and
/// character literals and comments, so braces inside them do not count).
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(open) = rest.find(['{', ';']) else {
            return out;
        };
        if rest.as_bytes()[open] == b';' {
            rest = &rest[open + 1..];
            continue;
        }
        rest = &rest[item_end(rest, open)..];
    }
    out.push_str(rest);
    out
}

/// The index just past the brace that closes the one at `open`.
fn item_end(text: &str, open: usize) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// What reading the environment looks like in Rust source.
const ENV_READS: &[&str] = &["env::var", "env::vars", "env::args", "var_os("];

#[test]
fn library_crates_never_read_the_environment() {
    let root = repo();
    let mut files = Vec::new();
    for dir in [
        "lang/src",
        "runtime/src",
        "runtime/record/src",
        "compiler/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    // `chronc` itself: its `main` and `cli/` build the configuration.
    let binary = [
        root.join("compiler/src/main.rs"),
        root.join("compiler/src/cli"),
    ];
    let mut offenders = Vec::new();
    for file in files
        .iter()
        .filter(|f| !binary.iter().any(|b| f.starts_with(b)))
    {
        let text = std::fs::read_to_string(file).expect("source file");
        let code = without_tests(&text);
        for line in code.lines() {
            let code_part = line.split("//").next().unwrap_or("");
            if ENV_READS.iter().any(|p| code_part.contains(p)) {
                offenders.push(format!("{}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "library code reads the environment; take the choice from ExecConfig:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_test_code_filter_drops_test_modules_only() {
    let text = "fn a() { std::env::var(\"X\"); }\n#[cfg(test)]\nmod tests {\n    \
                fn b() { let s = \"}\"; let c = '{'; std::env::var(\"Y\"); }\n}\nfn c() {}\n";
    let kept = without_tests(text);
    assert!(kept.contains("fn a()") && kept.contains("fn c()"), "{kept}");
    assert!(!kept.contains("\"Y\""), "{kept}");
    assert!(without_tests("#[cfg(test)]\nuse x::y;\nfn d() {}").contains("fn d()"));
}
