//! One keyword list: the pest grammar's `keyword` rule is the source, and the
//! editor grammars (TextMate, tree-sitter, Vim), the tree-sitter highlight
//! query, the formatter and the language reference must list the same words.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Contextual words, not keywords: time units of time literals, and `max`
/// of run-time loops (`for i in 0..n max 8`). The tree-sitter grammar has
/// them as anonymous tokens all the same.
const CONTEXTUAL_WORDS: &[&str] = &[
    "Hz", "kHz", "MHz", "GHz", "fs", "ps", "ns", "us", "ms", "s", "max",
];

type Words = BTreeSet<String>;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The words between double quotes in `text`.
fn quoted_words(text: &str) -> Words {
    text.split('"')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// The string literals of the pest rule `keyword = { ... }`.
fn pest_keywords(grammar: &str) -> Words {
    let start = grammar
        .lines()
        .position(|l| l.trim_start().starts_with("keyword") && l.contains('='))
        .expect("lang/src/grammar.pest has a rule named `keyword`");
    let body: String = grammar
        .lines()
        .skip(start)
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let open = body.find('{').expect("the keyword rule has a body");
    let close = body[open..]
        .find('}')
        .expect("the keyword rule's body is closed")
        + open;
    quoted_words(&body[open..close])
}

/// The backquoted words after "Keywords:" in docs/language.md.
fn doc_keywords(doc: &str) -> Words {
    let start = doc
        .find("- Keywords:")
        .expect("docs/language.md lists the keywords");
    let end = doc[start + 2..]
        .find("\n-")
        .map_or(doc.len(), |n| start + 2 + n);
    let list = &doc[start..end];
    let inner = list
        .split('`')
        .nth(1)
        .expect("the keyword list is in backquotes");
    inner.split_whitespace().map(str::to_string).collect()
}

/// Words of the `keywords` patterns of the TextMate grammar, each written
/// `\b(a|b|c)\b`.
fn textmate_keywords(json: &str) -> Words {
    let grammar: serde_json::Value =
        serde_json::from_str(json).expect("the TextMate grammar is JSON");
    let patterns = grammar["repository"]["keywords"]["patterns"]
        .as_array()
        .expect("the TextMate grammar has repository.keywords.patterns");
    patterns
        .iter()
        .flat_map(|p| {
            let regex = p["match"]
                .as_str()
                .expect("each keyword pattern is a match");
            let inner = regex
                .strip_prefix("\\b(")
                .and_then(|r| r.strip_suffix(")\\b"))
                .unwrap_or_else(|| panic!("keyword pattern {regex:?} is not \\b(a|b)\\b"));
            inner.split('|').map(str::to_string).collect::<Vec<_>>()
        })
        .collect()
}

/// Anonymous word tokens of the generated tree-sitter parser, less the units.
fn tree_sitter_keywords(node_types: &str) -> Words {
    let types: serde_json::Value =
        serde_json::from_str(node_types).expect("node-types.json is JSON");
    let mut words = Words::new();
    let mut visit = vec![&types];
    while let Some(v) = visit.pop() {
        match v {
            serde_json::Value::Array(items) => visit.extend(items),
            serde_json::Value::Object(map) => {
                if let (Some(serde_json::Value::String(t)), Some(serde_json::Value::Bool(false))) =
                    (map.get("type"), map.get("named"))
                    && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !CONTEXTUAL_WORDS.contains(&t.as_str())
                {
                    words.insert(t.clone());
                }
                visit.extend(map.values());
            }
            _ => {}
        }
    }
    words
}

/// Words of the `syn keyword` lines of the Vim syntax file (not TODO markers).
fn vim_keywords(syntax: &str) -> Words {
    syntax
        .lines()
        .filter_map(|l| l.strip_prefix("syn keyword "))
        .filter(|l| !l.starts_with("chrTodo"))
        .flat_map(|l| l.split_whitespace().skip(1).map(str::to_string))
        .collect()
}

fn highlight_keywords(query: &str) -> Words {
    quoted_words(query)
        .into_iter()
        .filter(|w| !CONTEXTUAL_WORDS.contains(&w.as_str()))
        .collect()
}

#[test]
fn every_keyword_list_agrees_with_the_grammar() {
    let root = repo();
    let pest = root.join("lang/src/grammar.pest");
    let doc = doc_keywords(&read(&root.join("docs/language.md")));
    // Until the front end's grammar exists, the agreed reference stands in.
    let (source, reference) = if pest.exists() {
        ("lang/src/grammar.pest", pest_keywords(&read(&pest)))
    } else {
        ("docs/language.md", doc.clone())
    };
    assert!(
        reference.len() > 20,
        "{source}: only {} keywords found: {reference:?}",
        reference.len()
    );

    let formatter: Words = chronon_compiler::fmt::KEYWORDS
        .iter()
        .map(|k| k.to_string())
        .collect();
    let editors = root.join("editors");
    let lists = [
        ("docs/language.md", doc),
        ("the formatter (compiler/src/fmt/token.rs)", formatter),
        (
            "editors/vscode/syntaxes/chr.tmLanguage.json",
            textmate_keywords(&read(&editors.join("vscode/syntaxes/chr.tmLanguage.json"))),
        ),
        (
            "editors/tree-sitter-chr/src/node-types.json",
            tree_sitter_keywords(&read(&editors.join("tree-sitter-chr/src/node-types.json"))),
        ),
        (
            "editors/tree-sitter-chr/queries/highlights.scm",
            highlight_keywords(&read(
                &editors.join("tree-sitter-chr/queries/highlights.scm"),
            )),
        ),
        (
            "editors/vim/syntax/chr.vim",
            vim_keywords(&read(&editors.join("vim/syntax/chr.vim"))),
        ),
    ];
    let mut problems = Vec::new();
    for (name, words) in &lists {
        let missing: Vec<_> = reference.difference(words).collect();
        let extra: Vec<_> = words.difference(&reference).collect();
        if !missing.is_empty() || !extra.is_empty() {
            problems.push(format!(
                "{name}: missing {missing:?}, not keywords in {source}: {extra:?}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "keyword lists disagree with {source}:\n{}",
        problems.join("\n")
    );
}

#[test]
fn extractors_read_their_formats() {
    let pest = "ident = @{ x }\nkeyword = @{\n    (\"use\" | \"const\" // a comment \"no\"\n    | \"Some\") ~ !ident_char\n}\n";
    assert_eq!(
        pest_keywords(pest),
        ["Some", "const", "use"].map(String::from).into()
    );
    let doc = "- Keywords: `use const\n  tick`.\n- Integer";
    assert_eq!(
        doc_keywords(doc),
        ["const", "tick", "use"].map(String::from).into()
    );
    let vim = "syn keyword chrA use const\nsyn keyword chrTodo TODO\nsyn match chrB \"x\"\n";
    assert_eq!(vim_keywords(vim), ["const", "use"].map(String::from).into());
    let tm = r#"{"repository": {"keywords": {"patterns": [{"match": "\\b(a|b)\\b"}, {"match": "\\b(c)\\b"}]}}}"#;
    assert_eq!(
        textmate_keywords(tm),
        ["a", "b", "c"].map(String::from).into()
    );
    let nodes = r#"[{"type": "x", "named": true, "children": {"types": [{"type": "tick", "named": false}, {"type": "MHz", "named": false}, {"type": "->", "named": false}]}}]"#;
    assert_eq!(
        tree_sitter_keywords(nodes),
        ["tick"].map(String::from).into()
    );
}
