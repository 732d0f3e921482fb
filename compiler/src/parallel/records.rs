//! The recording of a parallel run, in the serial run's order.
//!
//! Each worker records its own units through the serial sink into keyed
//! streams ([`WorkerRecording`], one stream per writer) and hands them over
//! after every slice of simulated time, with how far it has run. The main
//! thread merges them writer by writer: a record goes to its writer once
//! every worker has run past its instant, smallest key first (the key is
//! where the serial run hands the record over, `record::keyed`), so each
//! writer receives exactly the serial run's records in the serial run's
//! order and writes the same bytes. Records past the run's final instant (a
//! worker that ran beyond another's stop) are never written. A worker with
//! more than [`QUEUED_RECORDS`] records not yet written waits before its
//! next slice, so memory stays bounded however far ahead it could run.
//!
//! [`WorkerRecording`]: crate::record::WorkerRecording

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, Sender, channel};

use chronon_record::RecordError;
use chronon_record::buffer::BufferedRecorder;
use chronon_record::keyed::{Key, KeyedStream};

/// Records a worker may have handed over and not yet seen written before
/// it waits.
pub(crate) const QUEUED_RECORDS: usize = 1 << 17;

/// A worker's ends of the merge: where it hands its streams over, and
/// where written streams come back emptied, to be filled again.
pub(crate) struct WorkerRecords {
    /// Hand-overs, tagged with the worker's index.
    pub to_merge: Sender<(usize, RecordHandoff)>,
    /// Streams written and emptied.
    pub returned: Receiver<KeyedStream>,
}

impl WorkerRecords {
    /// An empty stream: a returned one when there is one.
    pub fn empty_stream(&self) -> KeyedStream {
        self.returned.try_recv().unwrap_or_default()
    }
}

/// What a worker hands over after a slice.
pub(crate) struct RecordHandoff {
    /// Per writer, its records since the last hand-over.
    pub streams: Vec<KeyedStream>,
    /// Every instant at or before this time (in the runtime's ticks) is
    /// done.
    pub reached: u128,
    /// Before this hand-over: drop the worker's records after this
    /// instant (it runs again from the start to there, and goes on from
    /// there).
    pub cut: Option<u128>,
}

/// One worker's streams for one writer, not yet written.
#[derive(Default)]
struct Queue {
    streams: VecDeque<KeyedStream>,
    /// The word of the next record in the first stream.
    at: usize,
    /// Records of the first stream written.
    done: usize,
}

/// One worker's queues, one per writer.
struct WorkerQueue {
    writers: Vec<Queue>,
    reached: Option<u128>,
    back: Sender<KeyedStream>,
}

/// The merge of every worker's records into the writers.
pub(crate) struct RecordMerge {
    inbox: Receiver<(usize, RecordHandoff)>,
    workers: Vec<WorkerQueue>,
    /// The writers, in the recording plan's order.
    recorders: Vec<BufferedRecorder>,
    /// The first writer error; nothing is written after it.
    pub error: Option<RecordError>,
}

impl RecordMerge {
    /// A merge of `workers` workers' records into `recorders`, and each
    /// worker's ends of it.
    pub fn new(
        recorders: Vec<BufferedRecorder>,
        workers: usize,
    ) -> (RecordMerge, Vec<WorkerRecords>) {
        let (tx, inbox) = channel();
        let writers = recorders.len();
        let (queues, ends) = (0..workers)
            .map(|_| {
                let (back, returned) = channel();
                let queue = WorkerQueue {
                    writers: (0..writers).map(|_| Queue::default()).collect(),
                    reached: None,
                    back,
                };
                let end = WorkerRecords {
                    to_merge: tx.clone(),
                    returned,
                };
                (queue, end)
            })
            .unzip();
        let merge = RecordMerge {
            inbox,
            workers: queues,
            recorders,
            error: None,
        };
        (merge, ends)
    }

    /// Whether recording failed (a write error seen by the merge or by a
    /// writer's thread): the run must stop.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.recorders.iter().any(|r| r.writer_failed())
    }

    /// Takes every hand-over so far and writes the records every worker
    /// has run past; returns how many records of each worker it wrote.
    pub fn pump(&mut self) -> Vec<usize> {
        self.receive();
        let frontier = self.workers.iter().map(|q| q.reached).min().flatten();
        // Key times are the instant's ticks plus one.
        self.write_through(frontier.map(|t| t.saturating_add(1)))
    }

    /// Writes the records at or before the run's final instant `last` (in
    /// ticks; `None`: the run did no instant, and only the initial values
    /// are written), drops the rest, and returns the writers with the
    /// first error, if any.
    pub fn finish(mut self, last: Option<u128>) -> (Vec<BufferedRecorder>, Option<RecordError>) {
        self.receive();
        self.write_through(Some(last.map_or(0, |t| t.saturating_add(1))));
        (self.recorders, self.error)
    }

    fn receive(&mut self) {
        while let Ok((w, h)) = self.inbox.try_recv() {
            let q = &mut self.workers[w];
            if let Some(cut) = h.cut {
                for queue in &mut q.writers {
                    for stream in &mut queue.streams {
                        // Key times are the instants' ticks plus one.
                        stream.cut_after(cut.saturating_add(1));
                    }
                    // The first stream keeps a record to write.
                    while queue.streams.front().is_some() && queue.head().is_none() {
                        queue.next_stream(&q.back);
                    }
                    queue.streams.retain(|s| !s.is_empty());
                }
                q.reached = Some(cut);
            }
            q.reached = q.reached.max(Some(h.reached));
            for (queue, stream) in q.writers.iter_mut().zip(h.streams) {
                match stream.is_empty() {
                    true => {
                        let _ = q.back.send(stream);
                    }
                    false => queue.streams.push_back(stream),
                }
            }
        }
    }

    /// Writes, writer by writer in key order, every queued record whose
    /// key time is at or before `limit`.
    fn write_through(&mut self, limit: Option<u128>) -> Vec<usize> {
        let mut written = vec![0; self.workers.len()];
        let Some(limit) = limit else {
            return written;
        };
        for writer in 0..self.recorders.len() {
            loop {
                // The worker with the smallest head, and the next smallest
                // head of the others: the first worker's records go out
                // in one run up to it (workers' records come in runs).
                let (mut first, mut bound) = (None, Key::MAX);
                for (w, q) in self.workers.iter().enumerate() {
                    let Some(key) = q.writers[writer].head().filter(|k| k.time <= limit) else {
                        continue;
                    };
                    match first {
                        Some((_, k)) if k <= key => bound = bound.min(key),
                        _ => {
                            if let Some((_, k)) = first {
                                bound = bound.min(k);
                            }
                            first = Some((w, key));
                        }
                    }
                }
                let Some((w, _)) = first else {
                    break;
                };
                let WorkerQueue { writers, back, .. } = &mut self.workers[w];
                let queue = &mut writers[writer];
                let recorder = &mut self.recorders[writer];
                // At least one record per round, so that keys that tie
                // (which they never should) cannot stall the merge.
                let mut any = false;
                while let Some(stream) = queue.streams.front() {
                    let Some(key) = stream.key_at(queue.at) else {
                        queue.next_stream(back);
                        continue;
                    };
                    if key.time > limit || (any && key >= bound) {
                        break;
                    }
                    any = true;
                    let next = match &self.error {
                        // After an error the records are only counted off.
                        Some(_) => stream.next_at(queue.at).ok_or(RecordError::WriterThread),
                        None => stream.copy_at(queue.at, recorder),
                    };
                    match next {
                        Ok(at) => {
                            written[w] += 1;
                            queue.done += 1;
                            queue.at = at;
                        }
                        Err(e) => {
                            self.error.get_or_insert(e);
                            // Counted off unwritten.
                            written[w] += stream.records() - queue.done;
                            queue.next_stream(back);
                        }
                    }
                }
                if queue.head().is_none() && !queue.streams.is_empty() {
                    queue.next_stream(back);
                }
            }
        }
        written
    }
}

impl Queue {
    /// The key of the next record.
    fn head(&self) -> Option<Key> {
        self.streams.front()?.key_at(self.at)
    }

    /// Drops the first stream, written, and sends it back emptied.
    fn next_stream(&mut self, back: &Sender<KeyedStream>) {
        (self.at, self.done) = (0, 0);
        if let Some(mut done) = self.streams.pop_front() {
            done.clear();
            // The worker may have finished; then it is dropped.
            let _ = back.send(done);
        }
    }
}
