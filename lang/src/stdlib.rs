//! The standard library, embedded so that `use std::NAME` works from any
//! directory.

/// Every module: name and source text.
pub const MODULES: &[(&str, &str)] = &[
    ("arbiter", include_str!("../../stdlib/arbiter.chr")),
    ("hash", include_str!("../../stdlib/hash.chr")),
    ("lfsr", include_str!("../../stdlib/lfsr.chr")),
    ("traffic", include_str!("../../stdlib/traffic.chr")),
];

/// The source of a module.
pub fn source(name: &str) -> Option<&'static str> {
    MODULES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// Module names, sorted.
pub fn names() -> Vec<&'static str> {
    MODULES.iter().map(|(n, _)| *n).collect()
}
