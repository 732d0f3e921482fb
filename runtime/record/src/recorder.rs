//! The interface every recorder implements.

use serde::{Deserialize, Serialize};

use crate::error::RecordError;
use crate::record::{CounterRecord, FifoRecord, SignalRecord, TickRecord, TraceRecord};
use crate::time::Time;

/// Records dropped by a lossy buffer, by kind; every output reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounts {
    /// Trace events.
    pub trace: u64,
    /// FIFO events.
    pub fifo: u64,
    /// Counter samples.
    pub counter: u64,
    /// Unit ticks.
    pub tick: u64,
    /// Signal changes.
    pub signal: u64,
}

impl DropCounts {
    /// All dropped records.
    pub fn total(&self) -> u64 {
        self.trace + self.fifo + self.counter + self.tick + self.signal
    }
}

/// Which FIFO events a recorder uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FifoInterest {
    /// None.
    None,
    /// Every event.
    All,
    /// Only the occupancy, of the FIFOs marked `true` (by FIFO index): an
    /// event whose occupancy equals the previous event's of the same FIFO
    /// changes nothing for it. Indices beyond the list count as `true`, so
    /// the recorder can report them.
    Occupancy(Vec<bool>),
}

/// The record kinds a recorder uses. [`crate::buffer::BufferedRecorder`]
/// queues only these, so a writer's thread, and the producer, pay nothing
/// for records the writer would ignore; the writer's output is the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interest {
    /// Design trace events.
    pub trace: bool,
    /// CDC FIFO events.
    pub fifo: FifoInterest,
    /// Counter samples.
    pub counter: bool,
    /// Unit ticks.
    pub tick: bool,
    /// Signal changes.
    pub signal: bool,
}

impl Interest {
    /// Every record.
    pub fn all() -> Interest {
        Interest {
            trace: true,
            fifo: FifoInterest::All,
            counter: true,
            tick: true,
            signal: true,
        }
    }
}

/// A consumer of run records.
///
/// Records arrive in the run's order: instants in increasing time, and
/// inside an instant in the order the runtime produced them. A recorder
/// ignores the kinds its format does not hold (the default methods). After a
/// write error every call returns an error and the output is a valid prefix.
pub trait Recorder: Send {
    /// A design trace event.
    fn trace(&mut self, record: &TraceRecord<'_>) -> Result<(), RecordError> {
        let _ = record;
        Ok(())
    }

    /// A CDC FIFO event.
    fn fifo(&mut self, record: &FifoRecord) -> Result<(), RecordError> {
        let _ = record;
        Ok(())
    }

    /// A counter sample.
    fn counter(&mut self, record: &CounterRecord) -> Result<(), RecordError> {
        let _ = record;
        Ok(())
    }

    /// A unit tick.
    fn tick(&mut self, record: &TickRecord) -> Result<(), RecordError> {
        let _ = record;
        Ok(())
    }

    /// A register or port value change.
    fn signal(&mut self, record: &SignalRecord) -> Result<(), RecordError> {
        let _ = record;
        Ok(())
    }

    /// The records this recorder uses (default: all). A recorder must
    /// write the same output whether or not it is given the others.
    fn interest(&self) -> Interest {
        Interest::all()
    }

    /// Says that the run stopped at `at` (its last instant, or the time
    /// bound it ran to): no record is later. Call it, at most once, before
    /// [`Recorder::finish`]; a record filter may have dropped the records
    /// near the end, so a writer cannot infer this from what it was given.
    /// A format with spans (Perfetto's tick slices) ends the open ones
    /// there instead of at their natural end, which the run never reached.
    /// The default ignores it.
    fn stop_at(&mut self, at: Time) -> Result<(), RecordError> {
        let _ = at;
        Ok(())
    }

    /// Ends the recording: reports `dropped` in the output and writes
    /// everything out.
    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError>;

    /// Takes a batch of records in the encoding of
    /// [`BufferedRecorder`](crate::buffer::BufferedRecorder), which calls
    /// it once per batch on its writer thread. Keep the default: it decodes
    /// the batch with direct calls to this type's own record methods (the
    /// default is compiled per implementing type), so they can inline
    /// into the decoding loop instead of costing a virtual call and a
    /// record built in memory each.
    #[doc(hidden)]
    fn replay_batch(&mut self, words: &[u64]) -> Result<(), RecordError> {
        crate::buffer::replay(self, words)
    }
}
