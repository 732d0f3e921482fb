//! The Chronon back end.
