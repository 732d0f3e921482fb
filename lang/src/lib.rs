//! The .chr front end.
