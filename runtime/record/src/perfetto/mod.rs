//! Perfetto traces: a process per design, a track per domain with a child
//! track per unit, FIFO and counter tracks, interned names, flows that follow
//! each FIFO item from write to consume, optional zlib batches, and
//! recovery of a truncated file.
//!
//! Timestamps are on a sequence-scoped incremental nanosecond clock anchored
//! at BOOTTIME 0: exact times rounded down to whole ns (contract §8), each
//! computed from the exact time, so the error stays in [0, 1 ns). All
//! packets are on one sequence in time order, so records ordered in exact
//! time stay ordered when they share a nanosecond.

mod encode;
pub mod proto;
mod recover;
mod writer;

pub use recover::{RecoverStats, recover};
pub use writer::{CLOCK_ID, PerfettoConfig, PerfettoWriter, SEQUENCE_ID, flow_id, uuid};
