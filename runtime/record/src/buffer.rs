//! A recorder that hands records to a writer thread through a bounded
//! queue of fixed-size batches.
//!
//! Lossless mode blocks the producer while the queue is full, so every
//! record is written and simulated time is unaffected. Lossy mode never
//! blocks: a record that finds the batch full and the queue full is dropped
//! and counted; the counts reach every output through
//! [`Recorder::finish`]. Batches are recycled, so after warm-up no record
//! allocates. A parallel runtime gives each worker its own
//! `BufferedRecorder` over its own writer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam::channel::{Receiver, Sender, bounded};

use crate::error::RecordError;
use crate::record::{CounterRecord, FifoRecord, SignalRecord, TickRecord, TraceRecord};
use crate::schema::MAX_ARGS;
use crate::sink::{DropCounts, Recorder};
use crate::time::Time;

/// What happens when the queue is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The producer waits: nothing is lost.
    Lossless,
    /// Records are dropped and counted.
    Lossy,
}

/// Buffer sizes and mode.
#[derive(Clone, Copy, Debug)]
pub struct BufferConfig {
    /// Lossless or lossy.
    pub mode: Mode,
    /// Records per batch (at least 1).
    pub batch_records: usize,
    /// Full batches the queue holds (at least 1).
    pub queue_batches: usize,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            mode: Mode::Lossless,
            batch_records: 4096,
            queue_batches: 16,
        }
    }
}

/// A record with its trace arguments inline.
#[derive(Clone, Copy)]
enum Owned {
    Trace {
        domain: u32,
        cycle: u64,
        time: Time,
        unit: u32,
        event: u32,
        len: u8,
        args: [u64; MAX_ARGS],
    },
    Fifo(FifoRecord),
    Counter(CounterRecord),
    Tick(TickRecord),
    Signal(SignalRecord),
}

enum Message {
    Batch(Vec<Owned>),
    Finish(DropCounts),
}

/// The producer's side; see the module doc.
pub struct BufferedRecorder {
    mode: Mode,
    capacity: usize,
    batch: Vec<Owned>,
    to_writer: Sender<Message>,
    recycled: Receiver<Vec<Owned>>,
    dropped: DropCounts,
    writer: Option<JoinHandle<Result<(), RecordError>>>,
    failure: Option<String>,
    /// Set by the writer thread when its writer fails, so the producer can
    /// stop at once instead of at its next full batch.
    writer_failed: Arc<AtomicBool>,
}

impl BufferedRecorder {
    /// Starts a writer thread that feeds `inner`.
    pub fn spawn(mut inner: Box<dyn Recorder>, config: BufferConfig) -> BufferedRecorder {
        let capacity = config.batch_records.max(1);
        let queue = config.queue_batches.max(1);
        let (to_writer, from_producer) = bounded::<Message>(queue);
        // Room for every batch in flight, so returning one never blocks.
        let (recycle, recycled) = bounded::<Vec<Owned>>(queue + 2);
        let writer_failed = Arc::new(AtomicBool::new(false));
        let failed = writer_failed.clone();
        let writer = std::thread::Builder::new()
            .name("chronon-record".to_owned())
            .spawn(move || {
                let result = (|| {
                    for message in from_producer {
                        match message {
                            Message::Batch(mut batch) => {
                                for record in &batch {
                                    replay(inner.as_mut(), record)?;
                                }
                                batch.clear();
                                let _ = recycle.try_send(batch);
                            }
                            Message::Finish(dropped) => return inner.finish(&dropped),
                        }
                    }
                    Ok(())
                })();
                if result.is_err() {
                    failed.store(true, Ordering::Release);
                }
                result
            })
            .expect("the OS can start the recording thread");
        BufferedRecorder {
            mode: config.mode,
            capacity,
            batch: Vec::with_capacity(capacity),
            to_writer,
            recycled,
            dropped: DropCounts::default(),
            writer: Some(writer),
            failure: None,
            writer_failed,
        }
    }

    /// Whether the writer has failed: one atomic load, cheap enough to ask
    /// once per simulated instant. The error itself comes back from the
    /// next batch sent or from [`Recorder::finish`].
    pub fn writer_failed(&self) -> bool {
        self.writer_failed.load(Ordering::Acquire)
    }

    /// Records dropped so far.
    pub fn dropped(&self) -> DropCounts {
        self.dropped
    }

    /// Queues `record`; `count` is its kind's drop counter.
    #[inline]
    fn push(
        &mut self,
        record: Owned,
        count: fn(&mut DropCounts) -> &mut u64,
    ) -> Result<(), RecordError> {
        if self.batch.len() == self.capacity && !self.ship()? {
            *count(&mut self.dropped) += 1;
            return Ok(());
        }
        self.batch.push(record);
        Ok(())
    }

    /// Sends the full batch; `false` when lossy mode found the queue full.
    fn ship(&mut self) -> Result<bool, RecordError> {
        self.stopped()?;
        // Only this producer sends, so a queue with room stays that way.
        if self.mode == Mode::Lossy && self.to_writer.is_full() {
            return Ok(false);
        }
        let fresh = self
            .recycled
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.capacity));
        let batch = std::mem::replace(&mut self.batch, fresh);
        if self.to_writer.send(Message::Batch(batch)).is_err() {
            return Err(self.join_failure());
        }
        Ok(true)
    }

    fn stopped(&self) -> Result<(), RecordError> {
        match &self.failure {
            None => Ok(()),
            Some(message) => Err(RecordError::Stopped {
                path: "<recording thread>".into(),
                kind: std::io::ErrorKind::Other,
                message: message.clone(),
            }),
        }
    }

    /// The writer thread is gone: collect its error.
    fn join_failure(&mut self) -> RecordError {
        let error = match self.writer.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => RecordError::WriterThread,
        };
        self.failure = Some(error.to_string());
        error
    }
}

fn replay(inner: &mut dyn Recorder, record: &Owned) -> Result<(), RecordError> {
    match record {
        Owned::Trace {
            domain,
            cycle,
            time,
            unit,
            event,
            len,
            args,
        } => inner.trace(&TraceRecord {
            domain: *domain,
            cycle: *cycle,
            time: *time,
            unit: *unit,
            event: *event,
            args: &args[..usize::from(*len)],
        }),
        Owned::Fifo(r) => inner.fifo(r),
        Owned::Counter(r) => inner.counter(r),
        Owned::Tick(r) => inner.tick(r),
        Owned::Signal(r) => inner.signal(r),
    }
}

impl Recorder for BufferedRecorder {
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        if r.args.len() > MAX_ARGS {
            return Err(RecordError::ArgCount {
                event: format!("#{}", r.event),
                declared: MAX_ARGS,
                got: r.args.len(),
            });
        }
        let mut args = [0; MAX_ARGS];
        args[..r.args.len()].copy_from_slice(r.args);
        let owned = Owned::Trace {
            domain: r.domain,
            cycle: r.cycle,
            time: r.time,
            unit: r.unit,
            event: r.event,
            len: r.args.len() as u8,
            args,
        };
        self.push(owned, |d| &mut d.trace)
    }

    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        self.push(Owned::Fifo(*r), |d| &mut d.fifo)
    }

    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        self.push(Owned::Counter(*r), |d| &mut d.counter)
    }

    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        self.push(Owned::Tick(*r), |d| &mut d.tick)
    }

    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        self.push(Owned::Signal(*r), |d| &mut d.signal)
    }

    /// Sends what is buffered (waiting, in both modes: the run is over),
    /// then the drop counts, and waits for the writer. `dropped` is added to
    /// this buffer's own counts.
    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        self.stopped()?;
        let total = DropCounts {
            trace: self.dropped.trace + dropped.trace,
            fifo: self.dropped.fifo + dropped.fifo,
            counter: self.dropped.counter + dropped.counter,
            tick: self.dropped.tick + dropped.tick,
            signal: self.dropped.signal + dropped.signal,
        };
        let batch = std::mem::take(&mut self.batch);
        if self.to_writer.send(Message::Batch(batch)).is_err()
            || self.to_writer.send(Message::Finish(total)).is_err()
        {
            return Err(self.join_failure());
        }
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(RecordError::WriterThread),
        }
    }
}
