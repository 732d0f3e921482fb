//! The `print` lines of a parallel run, in the serial run's order.
//!
//! Each worker formats its own units' lines ([`PrintCapture`]) and hands
//! them over after every slice of simulated time, with how far it has run.
//! The main thread merges them: a line is written once every worker has
//! run past its instant, in the order of (time, domain, unit rank), which
//! is the runtime's canonical order within an instant (a unit's lines keep
//! their program order, and a unit runs on one worker, so no two workers'
//! keys tie). Lines past the run's final instant (a worker that ran
//! beyond another's stop) are never written. A worker with more than
//! [`QUEUED_LINES`] lines not yet written waits before its next slice, so
//! memory stays bounded however far ahead it could run; the slowest
//! worker's lines are always writable, so the wait always ends.
//!
//! [`PrintCapture`]: crate::run::print::PrintCapture

use std::collections::VecDeque;
use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, channel};

use crate::run::print::PrintBatch;

/// Lines a worker may have handed over and not yet seen written before it
/// waits.
pub(crate) const QUEUED_LINES: usize = 1 << 16;

/// A worker's ends of the merge: where it hands its lines over, and where
/// the batches it handed over come back, emptied, to be filled again (so a
/// worker's steady state allocates nothing for its lines).
pub(crate) struct WorkerLines {
    /// Hand-overs, tagged with the worker's index.
    pub to_merge: Sender<(usize, Handoff)>,
    /// Batches written and emptied.
    pub returned: Receiver<PrintBatch>,
}

impl WorkerLines {
    /// An empty batch: a returned one when there is one.
    pub fn empty_batch(&self) -> PrintBatch {
        self.returned.try_recv().unwrap_or_default()
    }
}

/// What a worker hands over after a slice.
pub(crate) struct Handoff {
    /// Its lines since the last hand-over.
    pub batch: PrintBatch,
    /// Every instant at or before this time (in the runtime's ticks) is
    /// done.
    pub reached: u128,
    /// Before this hand-over: drop the worker's lines after this instant
    /// (it runs again from the start to there, and goes on from there).
    pub cut: Option<u128>,
}

/// One worker's lines not yet written.
struct Queue {
    /// Batches in order, with the next line to write of the first.
    batches: VecDeque<PrintBatch>,
    next: usize,
    /// How far it has run; `None` before its first hand-over.
    reached: Option<u128>,
    /// Where its written batches go back.
    back: Sender<PrintBatch>,
}

impl Queue {
    /// The key and text of the next line.
    fn head(&self) -> Option<(&crate::run::print::LineKey, &[u8])> {
        let b = self.batches.front()?;
        let key = b.lines.get(self.next)?;
        let start = match self.next {
            0 => 0,
            n => b.lines[n - 1].end,
        };
        Some((key, &b.text[start..key.end]))
    }

    /// Drops the lines after instant `cut` (lines come in instant order).
    fn cut_after(&mut self, cut: u128) {
        for b in &mut self.batches {
            if let Some(i) = b.lines.iter().position(|k| k.ticks > cut) {
                b.text.truncate(if i == 0 { 0 } else { b.lines[i - 1].end });
                b.lines.truncate(i);
            }
        }
        // Batches left with nothing to write go back now, so that the
        // first one always has a line to write.
        while let Some(b) = self.batches.front()
            && self.next >= b.lines.len()
            && let Some(mut done) = self.batches.pop_front()
        {
            self.next = 0;
            done.text.clear();
            done.lines.clear();
            let _ = self.back.send(done);
        }
        self.batches.retain(|b| !b.lines.is_empty());
    }

    fn advance(&mut self) {
        self.next += 1;
        if self
            .batches
            .front()
            .is_some_and(|b| self.next >= b.lines.len())
            && let Some(mut done) = self.batches.pop_front()
        {
            self.next = 0;
            done.text.clear();
            done.lines.clear();
            // The worker may have finished; then the batch is dropped.
            let _ = self.back.send(done);
        }
    }
}

/// The merge of every worker's lines into one output.
pub(crate) struct LineMerge {
    inbox: Receiver<(usize, Handoff)>,
    queues: Vec<Queue>,
    out: std::io::BufWriter<Box<dyn Write>>,
    /// The first write error; nothing is written after it.
    pub error: Option<String>,
}

impl LineMerge {
    /// A merge of `workers` workers' lines into `out`, and each worker's
    /// ends of it.
    pub fn new(out: Box<dyn Write>, workers: usize) -> (LineMerge, Vec<WorkerLines>) {
        let (tx, inbox) = channel();
        let (queues, ends) = (0..workers)
            .map(|_| {
                let (back, returned) = channel();
                let queue = Queue {
                    batches: VecDeque::new(),
                    next: 0,
                    reached: None,
                    back,
                };
                let end = WorkerLines {
                    to_merge: tx.clone(),
                    returned,
                };
                (queue, end)
            })
            .unzip();
        let merge = LineMerge {
            inbox,
            queues,
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            error: None,
        };
        (merge, ends)
    }

    /// Takes every hand-over so far and writes the lines every worker has
    /// run past; returns how many lines of each worker it wrote.
    pub fn pump(&mut self) -> Vec<usize> {
        self.receive();
        let frontier = self.queues.iter().map(|q| q.reached).min().flatten();
        self.write_through(frontier)
    }

    /// Writes the lines at or before `last` (the run's final instant, in
    /// ticks; `None`: the run did no instant), drops the rest and flushes;
    /// the first write error, if any.
    pub fn finish(mut self, last: Option<u128>) -> Option<String> {
        self.receive();
        self.write_through(last);
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(format!("print output: {e}"));
        }
        self.error
    }

    fn receive(&mut self) {
        while let Ok((w, h)) = self.inbox.try_recv() {
            let q = &mut self.queues[w];
            if let Some(cut) = h.cut {
                q.cut_after(cut);
                q.reached = Some(cut);
            }
            q.reached = q.reached.max(Some(h.reached));
            if !h.batch.lines.is_empty() {
                q.batches.push_back(h.batch);
            }
        }
    }

    /// Writes, in merge order, every queued line whose instant is at or
    /// before `limit`.
    fn write_through(&mut self, limit: Option<u128>) -> Vec<usize> {
        let mut written = vec![0; self.queues.len()];
        let Some(limit) = limit else {
            return written;
        };
        loop {
            let next = self
                .queues
                .iter()
                .enumerate()
                .filter_map(|(w, q)| q.head().map(|(k, _)| (w, *k)))
                .filter(|(_, k)| k.ticks <= limit)
                .min_by_key(|&(_, k)| (k.ticks, k.domain, k.rank));
            let Some((w, _)) = next else {
                return written;
            };
            if self.error.is_none()
                && let Some((_, text)) = self.queues[w].head()
                && let Err(e) = self.out.write_all(text)
            {
                self.error = Some(format!("print output: {e}"));
            }
            self.queues[w].advance();
            written[w] += 1;
        }
    }
}
