//! The Chronon runtime: exact multi-clock time, the calendar of instants, and
//! the execution of tick functions over flat state with registers, stage
//! registers, channels and CDC FIFOs, following the timing contract.
//!
//! The runtime knows no syntax. A compiler (or a test) declares a design with
//! [`DesignBuilder`], gives each unit a [`Tick`] (a Rust closure, or a
//! [`NativeTick`] wrapping an `extern "C"` function that calls the entry points
//! in [`ffi`]) and runs the resulting [`Simulation`].

pub mod calendar;
mod channel;
pub mod config;
pub mod design;
pub mod fault;
pub mod ffi;
mod fifo;
mod schedule;
mod sim;
mod stage;
pub mod tick;
pub mod time;
pub mod trace;

pub use calendar::{Calendar, CalendarConfig, TimeBase};
pub use config::RuntimeConfig;
pub use design::{
    AssertId, BuildError, DesignBuilder, DomainId, FifoId, FifoSpec, InPort, OutPort, StageId,
    UnitId,
};
pub use fault::{Fault, FaultKind};
pub use fifo::{FIFO_DEPTH_RANGE, FIFO_SYNC_RANGE, ReadPort};
pub use schedule::Cluster;
pub use sim::{Drain, FifoFlags, RunLimit, Simulation, Stop};
pub use tick::{
    NativeEdges, NativeEdgesFn, NativeGroup, NativeGroupFn, NativeTick, NativeTickFn, Tick, TickCtx,
};
pub use time::{Clock, Picos, TimeError};
pub use trace::{
    FifoEvent, FifoEventKind, FifoKinds, MemorySink, Observation, OwnedRecord, Timestamp,
    TraceRecord, TraceSink,
};
