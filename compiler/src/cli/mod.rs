//! The `chronc` subcommands, one per module.

pub mod check;
pub mod fmt;
pub mod run;
pub mod trace;
