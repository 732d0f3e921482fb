//! Chronon's native recorders: per-domain text logs with an exact-time merge,
//! Perfetto traces, VCD waveforms and counter CSV.
//!
//! The crate knows nothing of the language or the runtime: a run declares a
//! [`Schema`] once and then hands over fixed-size records ([`TraceRecord`],
//! [`FifoRecord`], ...) through the [`Recorder`] trait. Writers buffer and
//! write in large chunks, never allocate per record, and keep memory bounded
//! however long the run. [`buffer::BufferedRecorder`] moves the writing to
//! a thread, lossless (the producer waits) or lossy (records are dropped and
//! counted when the buffer is full).

pub mod buffer;
pub mod csv;
mod error;
pub mod keyed;
pub mod merge;
mod output;
pub mod perfetto;
mod record;
mod recorder;
mod schema;
pub mod text;
mod time;
pub mod vcd;
pub mod wide;

pub use error::{RecordError, SchemaError};
pub use output::RecordOutput;
pub use record::{CounterRecord, FifoEventKind, FifoRecord, SignalRecord, TickRecord, TraceRecord};
pub use recorder::{DropCounts, FifoInterest, Interest, Recorder};
pub use schema::{
    CounterInfo, DomainInfo, EventInfo, FifoInfo, MAX_ARGS, Schema, SignalInfo, UnitInfo,
    sign_extend,
};
pub use time::Time;
