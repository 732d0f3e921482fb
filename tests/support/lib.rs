//! Helpers shared by the integration tests and the benchmarks.

pub mod agree;
pub mod designs;
pub mod forms;
pub mod measure;
pub mod tools;
pub mod workloads;
