//! Generators and doubles for testing the engines against each other; used
//! by this crate's tests and by the workspace's differential tests.

pub mod differential;
pub mod random_channels;
pub mod random_design;
pub mod random_program;
pub mod rng;
pub mod script_host;
