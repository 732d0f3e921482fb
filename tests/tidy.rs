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

/// Every `.rs` file of the library crates (and `chronc`'s sources, which
/// live in `compiler/src`).
fn library_sources(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "lang/src",
        "runtime/src",
        "runtime/record/src",
        "compiler/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    files
}

/// What reading the environment looks like in Rust source.
const ENV_READS: &[&str] = &["env::var", "env::vars", "env::args", "var_os("];

#[test]
fn library_crates_never_read_the_environment() {
    let root = repo();
    let files = library_sources(&root);
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

/// The repository carries the semantics it implements: `docs/semantics.md`
/// is the project's binding timing contract, word for word (CI has
/// `../shared` beside its clone; the test fails where it is missing).
#[test]
fn the_semantics_page_is_the_binding_timing_contract() {
    let root = repo();
    let binding = root.join("../shared/design/timing-contract.md");
    let binding = std::fs::read_to_string(&binding).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}): the binding contract is checked against it",
            binding.display()
        )
    });
    let ours = std::fs::read_to_string(root.join("docs/semantics.md")).expect("docs/semantics.md");
    assert!(
        ours == binding,
        "docs/semantics.md differs from ../shared/design/timing-contract.md: copy it again"
    );
}

/// The rows of the first table after `heading` in docs/architecture.md, as
/// their cells (backticks kept).
fn table_after(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let at = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}` section"));
    doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The backticked words of a cell.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The `[package] name` and the dependencies on our own crates (normal
/// and dev) of the crate at `dir`, read from its Cargo.toml.
fn crate_of(dir: &Path) -> (String, Vec<String>) {
    let toml = std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
    let mut name = String::new();
    let mut deps = Vec::new();
    let mut section = String::new();
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if section == "[package]" && line.starts_with("name") {
            name = line.split('"').nth(1).expect("a quoted name").to_string();
        } else if ["[dependencies]", "[dev-dependencies]"].contains(&section.as_str())
            && line.starts_with("chronon-")
        {
            deps.push(
                line.split(['.', ' ', '='])
                    .next()
                    .expect("a name")
                    .to_string(),
            );
        }
    }
    deps.sort();
    deps.dedup();
    (name, deps)
}

#[test]
fn the_architecture_crate_table_matches_the_cargo_files() {
    let root = repo();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("architecture.md");
    let rows = table_after(&doc, "## Crates and boundaries");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let members = workspace
        .lines()
        .find(|l| l.starts_with("members"))
        .map(|l| {
            l.split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .expect("workspace members");
    let mut dirs: Vec<String> = rows
        .iter()
        .map(|r| ticked(&r[0])[0].trim_end_matches('/').to_string())
        .collect();
    dirs.sort();
    let mut expected: Vec<String> = members.iter().cloned().chain([".".to_string()]).collect();
    expected.sort();
    assert_eq!(dirs, expected, "the table's crates are not the workspace's");
    for row in &rows {
        let cells = ticked(&row[0]);
        let dir = root.join(cells[0].trim_end_matches('/'));
        let (name, deps) = crate_of(&dir);
        assert_eq!(cells[1], name, "{}: crate name", cells[0]);
        let mut listed: Vec<String> = ticked(&row[2]);
        listed.sort();
        assert_eq!(listed, deps, "{}: the crates it depends on", cells[0]);
    }
}

#[test]
fn the_architecture_code_map_covers_every_module() {
    let root = repo();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("architecture.md");
    let rows = table_after(&doc, "## Code map");
    let mapped: Vec<String> = rows.iter().map(|r| ticked(&r[0])[0].clone()).collect();
    for path in &mapped {
        assert!(
            root.join(path).exists(),
            "the code map names {path}, which does not exist"
        );
    }
    let files = library_sources(&root);
    let mut missing = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(&root)
            .expect("in the repository")
            .display()
            .to_string();
        let covered = mapped
            .iter()
            .any(|m| *m == rel || (m.ends_with('/') && rel.starts_with(m)));
        if !covered {
            missing.push(rel);
        }
    }
    assert!(
        missing.is_empty(),
        "modules missing from docs/architecture.md's code map: {missing:?}"
    );
}
