//! Elaboration stays bounded on designs that would report an error per
//! instance: after `MAX_ELAB_DIAGNOSTICS` it stops (a fuzzed design with a
//! 100,000-character name in an error repeated 2^20 times took 18 GB).

use chronon_lang::elab::MAX_ELAB_DIAGNOSTICS;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};

#[test]
fn an_error_per_instance_stops_elaboration() {
    // Each instance gets its own message (`instance index 1048576 is out
    // of range`, `... 1048577 ...`), so merging duplicates alone would keep
    // 100,000 of them.
    let text = "clock c = 1 GHz;\n\
                unit U { tick { } }\n\
                system Top { for i in 0..100000 { inst u[i + 1048576]: U on c; } }\n";
    let mut sources = SourceMap::new();
    sources.add("t.chr", text);
    let result = compile(&mut sources, &CompileOptions::default());
    let n = result.diagnostics.len();
    assert!(result.has_errors());
    assert!(
        (1..=MAX_ELAB_DIAGNOSTICS + 8).contains(&n),
        "{n} diagnostics; the first: {:?}",
        result.diagnostics.first()
    );
}
