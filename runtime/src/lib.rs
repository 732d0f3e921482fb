//! The Chronon runtime.
