//! Layout rules, one input and its canonical form per case, and properties
//! that hold for any token sequence.

use proptest::prelude::*;

use super::{FmtError, format_source};

/// (input, canonical output) pairs; each states one layout rule.
const CASES: &[(&str, &str)] = &[
    // Spaces around binary operators, none inside brackets or before `;`.
    ("const B = ( 1<<4 )-1 ;", "const B = (1 << 4) - 1;\n"),
    // A sign is tight to its operand; a subtraction is not.
    (
        "const A = -3i12; const C = a - -b;",
        "const A = -3i12;\nconst C = a - -b;\n",
    ),
    // `<=` is spaced as an operator whether it writes a register or compares.
    (
        "tick { r<=r+1; ok = a<=b; }",
        "tick {\n    r <= r + 1;\n    ok = a <= b;\n}\n",
    ),
    // Parameters of units and instances are tight to their name.
    (
        "unit M < W : u32 = 4 , S: u64 = 1 > { }",
        "unit M<W: u32 = 4, S: u64 = 1> {}\n",
    ),
    (
        "system T { inst m : M < W = 8 > on c ; }",
        "system T {\n    inst m: M<W = 8> on c;\n}\n",
    ),
    // A number before `.` keeps its space, or it would read back as a
    // decimal (found by the property test below).
    ("const X = ( 0 . 0 );", "const X = (0 .0);\n"),
    // A comparison is not a parameter list.
    ("const X = a<b;", "const X = a < b;\n"),
    // A function's parameters are tight to its name.
    (
        "fn parity < W : u32 > ( x : u<W> ) -> bool { return ^x == 1; }",
        "fn parity<W: u32>(x: u<W>) -> bool {\n    return ^x == 1;\n}\n",
    ),
    // A width in a type is tight (`u<W>`); `u` compared is not a type.
    (
        "unit U<W: u32> { reg r: u < W >; reg m: [ i<( W * 2 )> ; 4]; tick { let x: u<W> = r as u < W >; b = u < W; } }",
        "unit U<W: u32> {\n    reg r: u<W>;\n    reg m: [i<(W * 2)>; 4];\n    tick {\n        let x: u<W> = r as u<W>;\n        b = u < W;\n    }\n}\n",
    ),
    // Exact ratios in clocks stay one number; `phase` and units are words.
    (
        "clock odd = 1000 / 3 MHz phase 1.5 ns;",
        "clock odd = 1000/3 MHz phase 1.5 ns;\n",
    ),
    (
        "fn f() -> u8 { return 6 / 3; }",
        "fn f() -> u8 {\n    return 6 / 3;\n}\n",
    ),
    // Struct and enum bodies and literals stay on one line when they fit.
    (
        "struct P {id:u16,data:u32}",
        "struct P { id: u16, data: u32 }\n",
    ),
    (
        "const P0 = P{id:1,data:2};",
        "const P0 = P { id: 1, data: 2 };\n",
    ),
    ("enum E {A,B}", "enum E { A, B }\n"),
    // Bit slices are tight around `:`; `+:` and `-:` are spaced like
    // operators. Concatenations are tight inside their braces, as in
    // Verilog, replications too; reductions are tight to their operand.
    (
        "tick { r [ 7 : 4 ] <= x [ i +: 4 ] ; y = { a , b [ 3 : 0 ] } ; z = { 4 { b } } ; }",
        "tick {\n    r[7:4] <= x[i +: 4];\n    y = {a, b[3:0]};\n    z = {4{b}};\n}\n",
    ),
    (
        "tick { p = & x | ( | y ) ^ ^ z ; q = { ( N ) { x [ j -: 2 ] } } ; }",
        "tick {\n    p = &x | (|y) ^ ^z;\n    q = {(N){x[j -: 2]}};\n}\n",
    ),
    // A concatenation inside another, first or later.
    (
        "tick { i = { { 20 { s } } , x [ 31 : 20 ] , { a , b } } ; }",
        "tick {\n    i = {{20{s}}, x[31:20], {a, b}};\n}\n",
    ),
    // Arrays, repeats, indexing, calls and keyword calls.
    (
        "tick { a [ 0 ] <= f ( x ) ; let q = [ 0 ; 8 ] ; trace ( \"t\" , v = Some ( 1 ) ) ; }",
        "tick {\n    a[0] <= f(x);\n    let q = [0; 8];\n    trace(\"t\", v = Some(1));\n}\n",
    ),
    // `if` keeps its space before a parenthesis; `!` and `~` are tight.
    (
        "tick { if (a) { finish; } x = !a & ~b; }",
        "tick {\n    if (a) {\n        finish;\n    }\n    x = !a & ~b;\n}\n",
    ),
    // `else` joins the closing brace; empty blocks are `{}`.
    (
        "tick { if a { } else if b { c += 1; }\nelse { } }",
        "tick {\n    if a {} else if b {\n        c += 1;\n    } else {}\n}\n",
    ),
    // Match arms get a line each, with or without commas.
    (
        "tick { match r { 0 => { finish; } 1 | 2 => {}, _ => x, } }",
        "tick {\n    match r {\n        0 => {\n            finish;\n        }\n        1 | 2 => {},\n        _ => x,\n    }\n}\n",
    ),
    // Paths, fields, ranges and connections.
    (
        "use std :: lfsr ; system S { for i in 0 .. N { connect s[i] . tx->d[i].rx latency 0; } }",
        "use std::lfsr;\nsystem S {\n    for i in 0..N {\n        connect s[i].tx -> d[i].rx latency 0;\n    }\n}\n",
    ),
    // At most one blank line between items, none at the edges of a block.
    (
        "\n\nconst A = 1;\n\n\n\nconst B = 2;\n\n",
        "const A = 1;\n\nconst B = 2;\n",
    ),
    (
        "unit U {\n\n    reg r: u8;\n\n}",
        "unit U {\n    reg r: u8;\n}\n",
    ),
    // Trailing comments stay after their code, with one space.
    ("const A = 1;    // one", "const A = 1; // one\n"),
    (
        "tick {   // why\n  finish; }",
        "tick { // why\n    finish;\n}\n",
    ),
    // Own-line comments are re-indented and keep their blank line.
    (
        "unit U {\n// first\n\n      /* second */\n  reg r: u8;\n// last\n}",
        "unit U {\n    // first\n\n    /* second */\n    reg r: u8;\n    // last\n}\n",
    ),
    // Line breaks inside a statement are dropped unless a comment needs one.
    (
        "connect a.tx -> b.rx\n    latency 2;",
        "connect a.tx -> b.rx latency 2;\n",
    ),
    (
        "connect a.tx -> b.rx // why\nlatency 2;",
        "connect a.tx -> b.rx // why\n    latency 2;\n",
    ),
    ("const A = /* inline */ 1;", "const A = /* inline */ 1;\n"),
    // A block comment before code on its line stays with that code.
    (
        "enum E { A, /* b */ B }",
        "enum E {\n    A,\n    /* b */ B\n}\n",
    ),
    (
        "const A = 1; /* b */ const B = 2;",
        "const A = 1;\n/* b */ const B = 2;\n",
    ),
    (
        "/* a */\nconst A = 1; /* trailing */\n",
        "/* a */\nconst A = 1; /* trailing */\n",
    ),
    // Block comments nest and keep their inner layout.
    (
        "/* a\n   /* b */\n c */\nconst A = 1;",
        "/* a\n   /* b */\n c */\nconst A = 1;\n",
    ),
    // A list with a comment, or one that is too long, gets a line per element.
    (
        "enum E { A, // first\n B }",
        "enum E {\n    A, // first\n    B\n}\n",
    ),
    (
        "clock dom[4] = [250 MHz, 500 MHz phase 37 ps, 1 GHz phase 74 ps, 2 GHz phase 111 ps, 4 GHz phase 1 ps];",
        "clock dom[4] = [\n    250 MHz,\n    500 MHz phase 37 ps,\n    1 GHz phase 74 ps,\n    2 GHz phase 111 ps,\n    4 GHz phase 1 ps\n];\n",
    ),
    // A lone literal argument that is too long keeps the call's parentheses
    // on the lines of its braces.
    (
        "tick { tx.send(Instruction { kind: kind, destination: w >> 4, first: w >> 8, second: next + slot, third: 0 }); }",
        "tick {\n    tx.send(Instruction {\n        kind: kind,\n        destination: w >> 4,\n        first: w >> 8,\n        second: next + slot,\n        third: 0\n    });\n}\n",
    ),
    // Trailing line comments of consecutive lines at one indentation are
    // aligned; a blank line, an own-line comment or a change of indentation
    // starts a new column.
    (
        "reg a: u8; // a\nreg long_name: u8;   // b\n\nreg c: u8;  // c\nreg d: u8;\nreg e: u8; // e\n\ntick { // t\n    r <= 1; // r\n} // end",
        "reg a: u8;         // a\nreg long_name: u8; // b\n\nreg c: u8; // c\nreg d: u8;\nreg e: u8; // e\n\ntick { // t\n    r <= 1; // r\n} // end\n",
    ),
    // Tokens that would fuse are kept apart.
    ("unit A< =1> {}", "unit A< = 1> {}\n"),
    // Windows line ends and tabs are normalised; an empty file stays empty.
    (
        "const A = 1;\r\n\tconst B = 2;\r\n",
        "const A = 1;\nconst B = 2;\n",
    ),
    ("", ""),
    ("\n\n", ""),
];

#[test]
fn canonical_layout() {
    for (input, want) in CASES {
        let got = format_source(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(got, *want, "formatting {input:?}");
        let again = format_source(&got).unwrap_or_else(|e| panic!("{got:?}: {e}"));
        assert_eq!(again, got, "formatting is not idempotent on {input:?}");
    }
}

#[test]
fn malformed_input_is_a_diagnostic() {
    let cases: &[(&str, &str)] = &[
        ("const A = /* never closed", "E0105"),
        ("trace(\"open);", "E0101"),
        ("const A = 1);", "E0106"),
        ("fn f( }", "E0106"),
        ("unit U { tick {", "E0105"),
    ];
    for (input, code) in cases {
        let err: FmtError = format_source(input).expect_err(input);
        let got = miette::Diagnostic::code(&err).map(|c| c.to_string());
        assert_eq!(got.as_deref(), Some(*code), "diagnostic for {input:?}");
        let help = miette::Diagnostic::help(&err).map(|h| h.to_string());
        assert!(help.is_some_and(|h| !h.is_empty()), "{code} has no help");
        let labels = miette::Diagnostic::labels(&err)
            .map(|l| l.count())
            .unwrap_or(0);
        assert!(labels > 0, "{code} has no label");
    }
}

/// One token of a random program, with the whitespace written before it.
fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "a",
            "Top",
            "_",
            "tick",
            "unit",
            "system",
            "inst",
            "clock",
            "if",
            "else",
            "match",
            "Some",
            "trace",
            "true",
            "0",
            "1_000",
            "0xFF",
            "914.5",
            "3u8",
            "\"s\\\"\"",
            "+",
            "-",
            "*",
            "/",
            "<",
            ">",
            "<=",
            ">=",
            "=",
            "==",
            "!",
            "~",
            "&",
            "|",
            "&&",
            "->",
            "=>",
            ".",
            "..",
            "::",
            ":",
            ";",
            ",",
            "+=",
        ])
        .prop_map(str::to_string),
        Just("// c\n".to_string()),
        Just("/* c /* d */ */".to_string()),
    ]
}

/// A random token sequence with balanced brackets.
fn program() -> impl Strategy<Value = String> {
    let leaf = prop::collection::vec(
        (atom(), prop::sample::select(vec![" ", "\n", "\n\n", "  "])),
        0..8,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(a, ws)| format!("{a}{ws}"))
            .collect::<String>()
    });
    leaf.prop_recursive(4, 64, 6, |inner| {
        (
            prop::collection::vec(inner, 1..4),
            prop::sample::select(vec![("(", ")"), ("[", "]"), ("{", "}")]),
        )
            .prop_map(|(parts, (open, close))| format!("{open} {} {close}\n", parts.join(" ")))
    })
}

proptest! {
    // A fixed seed: CI must not pass or fail by chance. Change the seed to
    // explore; a failure found that way becomes a case in `CASES`.
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0C4C_0F07),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]
    #[test]
    fn any_balanced_input_formats_idempotently(src in program()) {
        let once = format_source(&src);
        prop_assert!(once.is_ok(), "{src:?}: {once:?}");
        let once = once.unwrap_or_default();
        prop_assert_eq!(format_source(&once).ok(), Some(once.clone()), "not idempotent on {:?}", src);
    }
}
