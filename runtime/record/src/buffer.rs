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
use crate::record::{
    CounterRecord, FifoEventKind, FifoRecord, SignalRecord, TickRecord, TraceRecord,
};
use crate::recorder::{DropCounts, FifoInterest, Interest, Recorder};
use crate::schema::MAX_ARGS;
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

/// Records are queued as words: a header word (kind tag in the low byte),
/// then fixed fields, then a trace's arguments. About 7 words (56 bytes) a
/// record instead of a 128-byte enum: half the memory the producer writes
/// and the writer thread reads for every record.
const TRACE: u64 = 1;
const FIFO: u64 = 2;
const COUNTER: u64 = 3;
const TICK: u64 = 4;
const SIGNAL: u64 = 5;

/// The words a batch reserves per record: a trace of 8 arguments, most
/// records' size or more (a longer trace grows the batch, once: batches
/// are recycled with their capacity).
const MAX_WORDS: usize = 6 + 8;

/// The three words of a time.
#[inline(always)]
fn time_words(t: Time) -> [u64; 3] {
    let n = t.num();
    [n as u64, (n >> 64) as u64, t.den()]
}

#[inline(always)]
fn time_of(lo: u64, hi: u64, den: u64) -> Time {
    Time::from_parts(u128::from(lo) | u128::from(hi) << 64, den)
}

/// A full batch of encoded records, or the end.
enum Message {
    Batch(Vec<u64>),
    /// The drop counts, and the run's stop time if the producer was told it.
    Finish(DropCounts, Option<Time>),
}

/// The producer's side; see the module doc.
pub struct BufferedRecorder {
    mode: Mode,
    capacity: usize,
    /// Records in `batch`.
    count: usize,
    /// Encoded records; room for `capacity` of the largest.
    batch: Vec<u64>,
    interest: Interest,
    fifo_filter: FifoFilter,
    to_writer: Sender<Message>,
    recycled: Receiver<Vec<u64>>,
    dropped: DropCounts,
    writer: Option<JoinHandle<Result<(), RecordError>>>,
    failure: Option<String>,
    /// Set by the writer thread when its writer fails, so the producer can
    /// stop at once instead of at its next full batch.
    writer_failed: Arc<AtomicBool>,
    /// The run's stop time ([`Recorder::stop_at`]), sent with the finish.
    stop: Option<Time>,
}

impl BufferedRecorder {
    /// Starts a writer thread that feeds `inner`. Only the records `inner`
    /// declares an [`Interest`] in are queued.
    pub fn spawn(mut inner: Box<dyn Recorder>, config: BufferConfig) -> BufferedRecorder {
        let capacity = config.batch_records.max(1);
        let queue = config.queue_batches.max(1);
        let interest = inner.interest();
        let (to_writer, from_producer) = bounded::<Message>(queue);
        // Room for every batch in flight, so returning one never blocks.
        let (recycle, recycled) = bounded::<Vec<u64>>(queue + 2);
        let writer_failed = Arc::new(AtomicBool::new(false));
        let failed = writer_failed.clone();
        let writer = std::thread::Builder::new()
            .name("chronon-record".to_owned())
            .spawn(move || {
                let result = (|| {
                    for message in from_producer {
                        match message {
                            Message::Batch(mut batch) => {
                                inner.replay_batch(&batch)?;
                                batch.clear();
                                let _ = recycle.try_send(batch);
                            }
                            Message::Finish(dropped, stop) => {
                                if let Some(at) = stop {
                                    inner.stop_at(at)?;
                                }
                                return inner.finish(&dropped);
                            }
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
            count: 0,
            batch: Vec::with_capacity(capacity * MAX_WORDS),
            fifo_filter: FifoFilter::new(&interest.fifo),
            interest,
            to_writer,
            recycled,
            dropped: DropCounts::default(),
            writer: Some(writer),
            failure: None,
            writer_failed,
            stop: None,
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

    /// What the writer uses (see [`Recorder::interest`]).
    pub fn interest(&self) -> &Interest {
        &self.interest
    }

    /// Makes room for one record; `false` when lossy mode dropped it, and
    /// `count` is its kind's drop counter.
    #[inline(always)]
    fn room(&mut self, count: fn(&mut DropCounts) -> &mut u64) -> Result<bool, RecordError> {
        if self.count == self.capacity && !self.ship()? {
            *count(&mut self.dropped) += 1;
            return Ok(false);
        }
        self.count += 1;
        Ok(true)
    }

    /// Sends the full batch; `false` when lossy mode found the queue full.
    #[cold]
    fn ship(&mut self) -> Result<bool, RecordError> {
        self.stopped()?;
        // Only this producer sends, so a queue with room stays that way.
        if self.mode == Mode::Lossy && self.to_writer.is_full() {
            return Ok(false);
        }
        let fresh = self
            .recycled
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.capacity * MAX_WORDS));
        let batch = std::mem::replace(&mut self.batch, fresh);
        self.count = 0;
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

/// What a writer's [`FifoInterest`] passes of the FIFO records, with the
/// occupancy filter's state: one per writer, fed every record in order.
#[derive(Debug, Clone)]
pub struct FifoFilter {
    /// The interest is [`FifoInterest::All`]: one flag test per FIFO
    /// record instead of matching the enum.
    all: bool,
    interest: FifoInterest,
    /// Per FIFO: the occupancy of its last event passed on (or dropped),
    /// for [`FifoInterest::Occupancy`].
    occupancy: Vec<u32>,
}

impl FifoFilter {
    /// The filter of `interest`, before any record.
    pub fn new(interest: &FifoInterest) -> FifoFilter {
        FifoFilter {
            all: matches!(interest, FifoInterest::All),
            occupancy: match interest {
                FifoInterest::Occupancy(fifos) => vec![0; fifos.len()],
                _ => Vec::new(),
            },
            interest: interest.clone(),
        }
    }

    /// Whether the writer takes `r`: every event, none, or (occupancy)
    /// a shown FIFO's record whose occupancy differs from the last one's.
    #[inline(always)]
    pub fn passes(&mut self, r: &FifoRecord) -> bool {
        if self.all {
            return true;
        }
        match &self.interest {
            FifoInterest::None => false,
            FifoInterest::All => true,
            FifoInterest::Occupancy(shown) => {
                let f = r.fifo as usize;
                match self.occupancy.get_mut(f) {
                    // Updated for dropped events too, so that in lossy mode
                    // kept plus dropped events are the lossless ones.
                    Some(last) if !shown[f] || *last == r.occupancy => false,
                    Some(last) => {
                        *last = r.occupancy;
                        true
                    }
                    None => true,
                }
            }
        }
    }
}

/// The words of the record that starts with `head` (encoded by the
/// `put_*` functions); `None` for an unknown tag.
#[inline(always)]
pub(crate) fn record_words(head: u64) -> Option<usize> {
    match head & 0xff {
        TRACE => Some(6 + ((head >> 8) & 0xff) as usize),
        FIFO => Some(7),
        COUNTER => Some(6),
        TICK | SIGNAL => Some(5),
        _ => None,
    }
}

impl BufferedRecorder {
    /// Queues `words`, one record as the `put_*` functions encode it,
    /// whose writer's interest was applied when it was encoded (a keyed
    /// stream's, [`crate::keyed`]); in lossy mode a drop counts it by its
    /// kind.
    #[inline]
    pub(crate) fn push_encoded(&mut self, words: &[u64]) -> Result<(), RecordError> {
        let count: fn(&mut DropCounts) -> &mut u64 = match words.first().map(|h| h & 0xff) {
            Some(TRACE) => |d| &mut d.trace,
            Some(FIFO) => |d| &mut d.fifo,
            Some(COUNTER) => |d| &mut d.counter,
            Some(TICK) => |d| &mut d.tick,
            Some(SIGNAL) => |d| &mut d.signal,
            _ => return Err(RecordError::WriterThread),
        };
        if self.room(count)? {
            // A push per word: records are a few words, and a copy of a
            // length known only here is a `memcpy` call.
            for &w in words {
                self.batch.push(w);
            }
        }
        Ok(())
    }
}

/// Hands a batch's records to the writer, decoded (see
/// [`Recorder::replay_batch`]).
#[inline(always)]
pub(crate) fn replay<R: Recorder + ?Sized>(
    inner: &mut R,
    mut w: &[u64],
) -> Result<(), RecordError> {
    while !w.is_empty() {
        let used = replay_one(inner, w)?;
        w = &w[used..];
    }
    Ok(())
}

/// Appends a trace record's words to `batch`.
#[inline(always)]
pub(crate) fn put_trace(batch: &mut Vec<u64>, r: &TraceRecord<'_>) {
    let [lo, hi, den] = time_words(r.time);
    batch.extend_from_slice(&[
        TRACE | (r.args.len() as u64) << 8 | u64::from(r.domain) << 32,
        u64::from(r.unit) | u64::from(r.event) << 32,
        r.cycle,
        lo,
        hi,
        den,
    ]);
    // A push per argument: events have a few, and a copy of a length
    // known only here was a `memcpy` call per record.
    for &arg in r.args {
        batch.push(arg);
    }
}

/// Appends a FIFO record's words to `batch`.
#[inline(always)]
pub(crate) fn put_fifo(batch: &mut Vec<u64>, r: &FifoRecord) {
    let [lo, hi, den] = time_words(r.time);
    batch.extend_from_slice(&[
        FIFO | (r.kind as u64) << 8 | u64::from(r.fifo) << 32,
        u64::from(r.unit) | u64::from(r.occupancy) << 32,
        r.cycle,
        lo,
        hi,
        den,
        r.txn,
    ]);
}

/// Appends a counter record's words to `batch`.
#[inline(always)]
pub(crate) fn put_counter(batch: &mut Vec<u64>, r: &CounterRecord) {
    let [lo, hi, den] = time_words(r.time);
    batch.extend_from_slice(&[
        COUNTER | u64::from(r.counter) << 32,
        r.cycle,
        lo,
        hi,
        den,
        r.value,
    ]);
}

/// Appends a tick record's words to `batch`.
#[inline(always)]
pub(crate) fn put_tick(batch: &mut Vec<u64>, r: &TickRecord) {
    let [lo, hi, den] = time_words(r.time);
    batch.extend_from_slice(&[TICK | u64::from(r.unit) << 32, r.cycle, lo, hi, den]);
}

/// Appends a signal record's words to `batch`.
#[inline(always)]
pub(crate) fn put_signal(batch: &mut Vec<u64>, r: &SignalRecord) {
    let [lo, hi, den] = time_words(r.time);
    batch.extend_from_slice(&[SIGNAL | u64::from(r.signal) << 32, lo, hi, den, r.value]);
}

/// Hands the first record of `w` (encoded by the `put_*` functions) to
/// `inner`; returns how many words it took.
#[inline(always)]
pub(crate) fn replay_one<R: Recorder + ?Sized>(
    inner: &mut R,
    w: &[u64],
) -> Result<usize, RecordError> {
    let kind_of = |k: u64| FifoEventKind::ALL.get(k as usize).copied();
    // Each record's words are taken with one length check (a slice
    // pattern) instead of a bounds check per index, and a malformed record
    // is an error, never a panic; the error is built only on that path (an
    // eager `ok_or` built and dropped one per FIFO record: 20 M of the text
    // writer's 530 M instructions).
    let Some(&head) = w.first() else {
        return Err(RecordError::WriterThread);
    };
    let high = (head >> 32) as u32;
    let used = match head & 0xff {
        TRACE => {
            let len = ((head >> 8) & 0xff) as usize;
            let Some([_, unit_event, cycle, lo, hi, den, args @ ..]) = w.get(..6 + len) else {
                return Err(RecordError::WriterThread);
            };
            inner.trace(&TraceRecord {
                domain: high,
                cycle: *cycle,
                time: time_of(*lo, *hi, *den),
                unit: *unit_event as u32,
                event: (*unit_event >> 32) as u32,
                args,
            })?;
            6 + len
        }
        FIFO => {
            let (Some(kind), Some(&[_, unit_occupancy, cycle, lo, hi, den, txn])) =
                (kind_of((head >> 8) & 0xff), w.get(..7))
            else {
                return Err(RecordError::WriterThread);
            };
            inner.fifo(&FifoRecord {
                fifo: high,
                kind,
                cycle,
                time: time_of(lo, hi, den),
                unit: unit_occupancy as u32,
                txn,
                occupancy: (unit_occupancy >> 32) as u32,
            })?;
            7
        }
        COUNTER => {
            let Some(&[_, cycle, lo, hi, den, value]) = w.get(..6) else {
                return Err(RecordError::WriterThread);
            };
            inner.counter(&CounterRecord {
                counter: high,
                cycle,
                time: time_of(lo, hi, den),
                value,
            })?;
            6
        }
        TICK => {
            let Some(&[_, cycle, lo, hi, den]) = w.get(..5) else {
                return Err(RecordError::WriterThread);
            };
            inner.tick(&TickRecord {
                unit: high,
                cycle,
                time: time_of(lo, hi, den),
            })?;
            5
        }
        SIGNAL => {
            let Some(&[_, lo, hi, den, value]) = w.get(..5) else {
                return Err(RecordError::WriterThread);
            };
            inner.signal(&SignalRecord {
                signal: high,
                time: time_of(lo, hi, den),
                value,
            })?;
            5
        }
        // Only this module writes batches: an unknown tag is a bug.
        _ => return Err(RecordError::WriterThread),
    };
    Ok(used)
}

impl Recorder for BufferedRecorder {
    // Inlined into the producer's sink: the call's prologue and epilogue
    // were a third of a FIFO record's instructions, and a record read back
    // from the caller's stack in other widths than it was stored in (two
    // `u32` stores, one `u64` load) stalled store-to-load forwarding: 47%
    // of this method's samples in a VCD run sat on that load.
    #[inline(always)]
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        if !self.interest.trace {
            return Ok(());
        }
        if r.args.len() > MAX_ARGS {
            return Err(RecordError::ArgCount {
                event: format!("#{}", r.event),
                declared: MAX_ARGS,
                got: r.args.len(),
            });
        }
        if !self.room(|d| &mut d.trace)? {
            return Ok(());
        }
        put_trace(&mut self.batch, r);
        Ok(())
    }

    // Inlined into the producer's sink: the call's prologue and epilogue
    // were a third of a FIFO record's instructions, and a record read back
    // from the caller's stack in other widths than it was stored in (two
    // `u32` stores, one `u64` load) stalled store-to-load forwarding: 47%
    // of this method's samples in a VCD run sat on that load.
    #[inline(always)]
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        if !self.fifo_filter.passes(r) {
            return Ok(());
        }
        if !self.room(|d| &mut d.fifo)? {
            return Ok(());
        }
        put_fifo(&mut self.batch, r);
        Ok(())
    }

    // Inlined into the producer's sink: the call's prologue and epilogue
    // were a third of a FIFO record's instructions, and a record read back
    // from the caller's stack in other widths than it was stored in (two
    // `u32` stores, one `u64` load) stalled store-to-load forwarding: 47%
    // of this method's samples in a VCD run sat on that load.
    #[inline(always)]
    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        if !self.interest.counter || !self.room(|d| &mut d.counter)? {
            return Ok(());
        }
        put_counter(&mut self.batch, r);
        Ok(())
    }

    // Inlined into the producer's sink: the call's prologue and epilogue
    // were a third of a FIFO record's instructions, and a record read back
    // from the caller's stack in other widths than it was stored in (two
    // `u32` stores, one `u64` load) stalled store-to-load forwarding: 47%
    // of this method's samples in a VCD run sat on that load.
    #[inline(always)]
    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        if !self.interest.tick || !self.room(|d| &mut d.tick)? {
            return Ok(());
        }
        put_tick(&mut self.batch, r);
        Ok(())
    }

    // Inlined into the producer's sink: the call's prologue and epilogue
    // were a third of a FIFO record's instructions, and a record read back
    // from the caller's stack in other widths than it was stored in (two
    // `u32` stores, one `u64` load) stalled store-to-load forwarding: 47%
    // of this method's samples in a VCD run sat on that load.
    #[inline(always)]
    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        if !self.interest.signal || !self.room(|d| &mut d.signal)? {
            return Ok(());
        }
        put_signal(&mut self.batch, r);
        Ok(())
    }

    fn interest(&self) -> Interest {
        self.interest.clone()
    }

    /// Kept, and given to the writer right before its `finish`, after every
    /// record: it applies to the whole run.
    fn stop_at(&mut self, at: Time) -> Result<(), RecordError> {
        self.stop = Some(at);
        Ok(())
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
        self.count = 0;
        if self.to_writer.send(Message::Batch(batch)).is_err()
            || self
                .to_writer
                .send(Message::Finish(total, self.stop))
                .is_err()
        {
            return Err(self.join_failure());
        }
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(RecordError::WriterThread),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Keeps what reaches it as text; declares the interest it is given.
    struct Collect(Arc<Mutex<Vec<String>>>, Interest);

    impl Recorder for Collect {
        fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
            self.0.lock().expect("lock").push(format!("{r:?}"));
            Ok(())
        }
        fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
            self.0.lock().expect("lock").push(format!("{r:?}"));
            Ok(())
        }
        fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
            self.0.lock().expect("lock").push(format!("{r:?}"));
            Ok(())
        }
        fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
            self.0.lock().expect("lock").push(format!("{r:?}"));
            Ok(())
        }
        fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
            self.0.lock().expect("lock").push(format!("{r:?}"));
            Ok(())
        }
        fn interest(&self) -> Interest {
            self.1.clone()
        }
        fn finish(&mut self, _: &DropCounts) -> Result<(), RecordError> {
            Ok(())
        }
    }

    fn fifo(fifo: u32, kind: FifoEventKind, occupancy: u32, time: Time) -> FifoRecord {
        FifoRecord {
            fifo,
            kind,
            cycle: u64::MAX,
            time,
            unit: u32::MAX,
            txn: u64::MAX - 1,
            occupancy,
        }
    }

    /// Every field survives the word encoding, at its extremes (times
    /// beyond 2^64, all argument counts, every FIFO kind); the interest
    /// filters, and the occupancy filter passes exactly the changes.
    #[test]
    fn records_cross_the_queue_unchanged_and_filtered() {
        let wide = Time::new(u128::MAX - 5, u64::MAX).expect("nonzero");
        let small = Time::new(7, 3).expect("nonzero");
        let args: Vec<u64> = (0..MAX_ARGS as u64).map(|i| u64::MAX - i).collect();
        let mut sent = Vec::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let config = BufferConfig {
            mode: Mode::Lossless,
            batch_records: 3,
            queue_batches: 1,
        };
        let mut b =
            BufferedRecorder::spawn(Box::new(Collect(seen.clone(), Interest::all())), config);
        for (i, &time) in [wide, small].iter().enumerate() {
            for len in 0..=MAX_ARGS {
                let r = TraceRecord {
                    domain: u32::MAX - i as u32,
                    cycle: u64::MAX - len as u64,
                    time,
                    unit: 3,
                    event: u32::MAX,
                    args: &args[..len],
                };
                b.trace(&r).expect("trace");
                sent.push(format!("{r:?}"));
            }
            for kind in FifoEventKind::ALL {
                let r = fifo(u32::MAX, kind, u32::MAX, time);
                b.fifo(&r).expect("fifo");
                sent.push(format!("{r:?}"));
            }
            let c = CounterRecord {
                counter: 9,
                cycle: 1,
                time,
                value: u64::MAX,
            };
            b.counter(&c).expect("counter");
            sent.push(format!("{c:?}"));
            let t = TickRecord {
                unit: 2,
                cycle: u64::MAX,
                time,
            };
            b.tick(&t).expect("tick");
            sent.push(format!("{t:?}"));
            let s = SignalRecord {
                signal: u32::MAX,
                time,
                value: u64::MAX,
            };
            b.signal(&s).expect("signal");
            sent.push(format!("{s:?}"));
        }
        b.finish(&DropCounts::default()).expect("finish");
        assert_eq!(*seen.lock().expect("lock"), sent);

        // Occupancy of FIFO 0 only (FIFO 1 not shown, FIFO 5 unknown to the
        // list and so passed on); no signals or traces.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let interest = Interest {
            trace: false,
            fifo: FifoInterest::Occupancy(vec![true, false]),
            counter: false,
            tick: false,
            signal: false,
        };
        let mut b = BufferedRecorder::spawn(Box::new(Collect(seen.clone(), interest)), config);
        let mut want = Vec::new();
        for (f, occupancy, passed) in [
            (0, 0, false),
            (0, 1, true),
            (1, 1, false),
            (0, 1, false),
            (5, 1, true),
            (0, 2, true),
            (0, 0, true),
        ] {
            let r = fifo(f, FifoEventKind::Write, occupancy, small);
            b.fifo(&r).expect("fifo");
            if passed {
                want.push(format!("{r:?}"));
            }
        }
        b.trace(&TraceRecord {
            domain: 0,
            cycle: 0,
            time: small,
            unit: 0,
            event: 0,
            args: &[],
        })
        .expect("trace");
        b.signal(&SignalRecord {
            signal: 0,
            time: small,
            value: 1,
        })
        .expect("signal");
        b.finish(&DropCounts::default()).expect("finish");
        assert_eq!(*seen.lock().expect("lock"), want);
    }
}
