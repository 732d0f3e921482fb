//! The random design generator and the fuzzer's corpus reach every
//! statement and pattern form of docs/language.md ("Tick statements"),
//! listed in `support::forms::FORMS`: a form the generator never writes is
//! never run against the interpreter on random designs, and one missing
//! from the corpus is never mutated by `tests/fuzz_pipeline.rs` (a `match`
//! on an option with no `Some` arm, followed by a `let`, once panicked the
//! checker and neither produced it).

use std::collections::BTreeSet;

use chronon_compiler::testing::random_design::random_design;
use chronon_suite::designs::chr_files;
use chronon_suite::forms::{FORMS, forms_of};

fn missing(found: &BTreeSet<&str>) -> Vec<&'static str> {
    FORMS
        .iter()
        .copied()
        .filter(|f| !found.contains(f))
        .collect()
}

#[test]
fn random_designs_use_every_form() {
    let mut found = BTreeSet::new();
    let mut wide = BTreeSet::new();
    for seed in 0..64 {
        let text = random_design(seed);
        found.extend(forms_of(&text));
        // The engines compare these designs: they must use integers wider
        // than 64 bits too, in registers and in expressions.
        for ty in ["reg r0: u65", "as u65", "as i100", "as u128"] {
            if text.contains(ty) {
                wide.insert(ty);
            }
        }
    }
    assert_eq!(
        missing(&found),
        Vec::<&str>::new(),
        "forms no random design uses"
    );
    assert!(
        wide.len() >= 3,
        "wide types in the random designs: {wide:?}"
    );
}

#[test]
fn the_fuzz_corpus_uses_every_form() {
    let mut found = BTreeSet::new();
    for dir in ["examples", "tests/designs", "stdlib"] {
        for path in chr_files(dir) {
            found.extend(forms_of(&std::fs::read_to_string(&path).expect("readable")));
        }
    }
    assert_eq!(
        missing(&found),
        Vec::<&str>::new(),
        "forms no corpus design uses"
    );
}

/// The list follows the language reference: its tick statement example
/// uses only listed forms, and the classifier tells them apart.
#[test]
fn the_form_list_covers_the_reference_example() {
    let doc = std::fs::read_to_string("docs/language.md").expect("the reference");
    let section = &doc[doc.find("### Tick statements").expect("the section")..];
    let start = section.find("```chr\n").expect("an example") + 7;
    let example = &section[start..start + section[start..].find("```").expect("closed")];
    let found = forms_of(example);
    assert!(found.len() >= 25, "{found:?}");
    assert!(found.iter().all(|f| FORMS.contains(f)));
    let only_wild = forms_of("unit U { in rx: u8; tick { match rx.peek() { _ => { } } } }");
    assert!(only_wild.contains("match with _ alone"), "{only_wild:?}");
}
