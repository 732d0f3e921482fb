//! Diagnostic snapshots: every `tests/ui/<CODE>_<what>.chr` is checked, its
//! diagnostics are rendered as `chronc check` renders them (no colour, 100
//! columns) and compared with `tests/snapshots/ui__<CODE>_<what>.snap`, which
//! shows the source too. The file's code must be among the diagnostics.
//!
//! A first line `//@ top: NAME` passes `--top NAME`; `//@ require-top`
//! asks for a top system as `chronc run` does; `//@ param: NAME=VALUE`
//! passes `-p NAME=VALUE` (repeatable, in order).

use std::path::{Path, PathBuf};

use chronon_compiler::diag_render::render_human;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};

fn chr_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "chr"))
        .collect();
    files.sort();
    files
}

fn options_for(text: &str) -> CompileOptions {
    let mut options = CompileOptions::default();
    for line in text.lines().take_while(|l| l.starts_with("//@")) {
        let directive = line.trim_start_matches("//@").trim();
        if let Some(top) = directive.strip_prefix("top:") {
            options.top = Some(top.trim().to_string());
        } else if let Some(param) = directive.strip_prefix("param:") {
            let (n, v) = param
                .split_once('=')
                .unwrap_or_else(|| panic!("`{directive}` is not param: NAME=VALUE"));
            options
                .params
                .push((n.trim().to_string(), v.trim().to_string()));
        } else if directive == "require-top" {
            options.require_top = true;
        } else {
            panic!("unknown directive `{directive}`");
        }
    }
    options
}

#[test]
fn ui_diagnostics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = chr_files(&root.join("tests/ui"));
    assert!(
        files.len() >= 60,
        "expected at least 60 ui cases, found {}",
        files.len()
    );
    for path in files {
        let name = path
            .file_stem()
            .expect("file name")
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("readable ui case");
        let mut sources = SourceMap::new();
        sources.add(format!("tests/ui/{name}.chr"), text.clone());
        // As `chronc check` reports them: the front end's and lowering's limits.
        let diagnostics = chronon_compiler::check::check(&mut sources, &options_for(&text));
        let code = name.split('_').next().expect("name starts with a code");
        assert!(
            diagnostics.iter().any(|d| d.code == code),
            "{name}: expected a {code} diagnostic, got {:?}",
            diagnostics.iter().map(|d| d.code).collect::<Vec<_>>()
        );
        assert!(
            diagnostics.iter().all(|d| !d.help.is_empty()),
            "{name}: every diagnostic has help"
        );
        let rendered = render_human(&diagnostics, &sources, 100, false);
        let snapshot = format!("--- tests/ui/{name}.chr\n{text}--- diagnostics\n{rendered}");
        insta::assert_snapshot!(name.as_str(), snapshot);
    }
}

#[test]
fn examples_and_stdlib_check_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let examples = chr_files(&root.join("examples"));
    assert!(examples.len() >= 7, "expected the seven examples");
    for path in examples
        .iter()
        .chain(chr_files(&root.join("stdlib")).iter())
    {
        let mut sources = SourceMap::new();
        sources.add(
            path.display().to_string(),
            std::fs::read_to_string(path).expect("readable"),
        );
        let is_example = path.parent().is_some_and(|p| p.ends_with("examples"));
        let options = CompileOptions {
            require_top: is_example,
            ..CompileOptions::default()
        };
        let result = compile(&mut sources, &options);
        let rendered = render_human(&result.diagnostics, &sources, 100, false);
        assert!(
            result.diagnostics.is_empty(),
            "{} is not clean:\n{rendered}",
            path.display()
        );
        assert_eq!(
            result.design.is_some(),
            is_example,
            "{}: an example elaborates to a design",
            path.display()
        );
    }
}

#[test]
fn json_diagnostics_are_stable() {
    let mut sources = SourceMap::new();
    sources.add("t.chr", "const A: u8 = 300;\n");
    let result = compile(&mut sources, &CompileOptions::default());
    let json = chronon_compiler::diag_render::render_json(&result.diagnostics, &sources);
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    let d = &v[0];
    assert_eq!(d["code"], "E0303");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["file"], "t.chr");
    assert_eq!(d["labels"][0]["start"], 14);
    assert_eq!(d["labels"][0]["end"], 17);
    assert_eq!(d["labels"][0]["line"], 1);
    assert_eq!(d["labels"][0]["column"], 15);
    assert!(d["help"].as_str().is_some_and(|h| !h.is_empty()));
}

/// The checker's trace limit (E0326) is the recorder's: a trace of exactly
/// that many values, an aggregate among them, checks clean, lowers and gives
/// a schema the recorder accepts, so `chronc run --trace` cannot fail on a
/// design `chronc check` passed.
#[test]
fn trace_limit_is_the_recorders() {
    let limit = chronon_lang::check::MAX_TRACE_VALUES;
    assert_eq!(limit as usize, chronon_record::MAX_ARGS);
    let text = "struct P { a: u8, b: i8 }\n\
                unit U { reg n: u8; reg p: P; tick { n <= n + 1; \
                trace(\"full\", a = [n; 58], b = n, c = n, d = n, e = n, q = p); } }\n\
                clock c = 1 GHz;\n\
                system Top { inst u: U on c; }\n";
    let mut sources = SourceMap::new();
    sources.add("t.chr", text);
    let result = compile(&mut sources, &CompileOptions::default());
    assert!(
        result.diagnostics.is_empty(),
        "{}",
        render_human(&result.diagnostics, &sources, 100, false)
    );
    let design = result.design.expect("a design");
    let program = chronon_compiler::lower::lower(&design, &sources).expect("lowers");
    let built = chronon_compiler::record::program_schema(&program, "t", 1).expect("a schema");
    let event = &built.schema.events[0];
    assert_eq!(event.args.len() as u64, limit, "{event:?}");
    built
        .schema
        .validate()
        .expect("the recorder takes the event");
}
