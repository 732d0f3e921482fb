//! The Chronon back end.

pub mod fmt;
