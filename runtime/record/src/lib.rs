//! Chronon recorders.
