//! Every ```chr block of docs/language.md checks without errors (blocks that
//! show `use` alone may warn that the import is unused).

use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};

#[test]
fn every_chr_block_in_the_language_reference_checks() {
    let doc = include_str!("../docs/language.md");
    let mut blocks = Vec::new();
    let mut rest = doc;
    while let Some(start) = rest.find("```chr\n") {
        let body = &rest[start + 7..];
        let end = body.find("```").expect("every ```chr block is closed");
        blocks.push(&body[..end]);
        rest = &body[end + 3..];
    }
    assert!(
        blocks.len() >= 8,
        "the reference shows every construct; found {} blocks",
        blocks.len()
    );
    for (i, block) in blocks.iter().enumerate() {
        let mut sources = SourceMap::new();
        sources.add(format!("docs/language.md block {}", i + 1), *block);
        let result = compile(&mut sources, &CompileOptions::default());
        let errors: Vec<String> = result
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}: {}", d.code, d.message))
            .collect();
        assert!(
            errors.is_empty(),
            "block {} of docs/language.md:\n{block}\nerrors: {errors:#?}",
            i + 1
        );
    }
}
