//! The Chronon back end: the IR, its interpreter and its Cranelift JIT.

pub mod check;
pub mod config;
pub mod diag_render;
pub mod engine;
pub mod fmt;
pub mod host;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod lower;
pub mod parallel;
pub mod record;
pub mod run;
pub mod simulate;
pub mod testing;
