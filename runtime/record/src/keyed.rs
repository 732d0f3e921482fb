//! Records tagged with an ordering key, so that the streams of several
//! producers (the workers of a parallel run) merge into one order.
//!
//! A producer appends each record with its [`Key`] to a [`KeyedStream`]
//! (the key first, then the record in the words [`crate::buffer`] queues);
//! a merge reads the streams' heads with [`KeyedStream::key_at`] and
//! copies the smallest into the writer's buffer with
//! [`KeyedStream::copy_at`], as encoded. Each
//! producer's keys must not fall, and no two producers may share a key: a
//! merge that always takes the smallest head is then the one order of all
//! the records. Streams are plain `Vec<u64>`s, cleared and refilled, so a
//! producer's steady state allocates nothing.

use crate::buffer::{
    BufferedRecorder, put_counter, put_fifo, put_signal, put_tick, put_trace, record_words,
};
use crate::error::RecordError;
use crate::record::{CounterRecord, FifoRecord, SignalRecord, TickRecord, TraceRecord};
use crate::schema::MAX_ARGS;

/// Where a record goes in the merged order: by `time`, then by `order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Key {
    /// The coarse position (a parallel run: the instant's time).
    pub time: u128,
    /// The position among the records of one `time`.
    pub order: u128,
}

impl Key {
    /// The largest key.
    pub const MAX: Key = Key {
        time: u128::MAX,
        order: u128::MAX,
    };
}

/// The words of a key, ahead of each record.
const KEY_WORDS: usize = 4;

/// Keyed records, in the order they were appended.
#[derive(Debug, Default)]
pub struct KeyedStream {
    words: Vec<u64>,
    records: usize,
}

impl KeyedStream {
    /// An empty stream.
    pub fn new() -> KeyedStream {
        KeyedStream::default()
    }

    #[inline(always)]
    fn key(&mut self, key: Key) {
        self.records += 1;
        self.words.extend_from_slice(&[
            (key.time >> 64) as u64,
            key.time as u64,
            (key.order >> 64) as u64,
            key.order as u64,
        ]);
    }

    /// Appends a trace record; a record of more than [`MAX_ARGS`] values
    /// is refused as every writer refuses it.
    pub fn trace(&mut self, key: Key, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        if r.args.len() > MAX_ARGS {
            return Err(RecordError::ArgCount {
                event: format!("#{}", r.event),
                declared: MAX_ARGS,
                got: r.args.len(),
            });
        }
        self.key(key);
        put_trace(&mut self.words, r);
        Ok(())
    }

    /// Appends a FIFO record.
    pub fn fifo(&mut self, key: Key, r: &FifoRecord) {
        self.key(key);
        put_fifo(&mut self.words, r);
    }

    /// Appends a counter record.
    pub fn counter(&mut self, key: Key, r: &CounterRecord) {
        self.key(key);
        put_counter(&mut self.words, r);
    }

    /// Appends a tick record.
    pub fn tick(&mut self, key: Key, r: &TickRecord) {
        self.key(key);
        put_tick(&mut self.words, r);
    }

    /// Appends a signal record.
    pub fn signal(&mut self, key: Key, r: &SignalRecord) {
        self.key(key);
        put_signal(&mut self.words, r);
    }

    /// Drops the records whose key time is after `time` (keys do not fall
    /// in a stream, so they are its last ones); returns how many.
    pub fn cut_after(&mut self, time: u128) -> usize {
        let (mut at, mut kept) = (0, 0);
        while let Some(key) = self.key_at(at).filter(|k| k.time <= time) {
            let Some(next) = self.next_at(at) else {
                let _ = key;
                break;
            };
            (at, kept) = (next, kept + 1);
        }
        let dropped = self.records - kept;
        self.words.truncate(at);
        self.records = kept;
        dropped
    }

    /// Records appended since the last clear.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Whether no record is in the stream.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Empties the stream, keeping its memory.
    pub fn clear(&mut self) {
        self.words.clear();
        self.records = 0;
    }

    /// The key of the record at word `at` (0, or what [`Self::copy_at`]
    /// or [`Self::next_at`] returned); `None` past the last record.
    #[inline]
    pub fn key_at(&self, at: usize) -> Option<Key> {
        let [t1, t0, o1, o0] = *self.words.get(at..at + KEY_WORDS)? else {
            return None;
        };
        Some(Key {
            time: u128::from(t1) << 64 | u128::from(t0),
            order: u128::from(o1) << 64 | u128::from(o0),
        })
    }

    /// Queues the record at word `at` on `to` as it is encoded, with no
    /// decoding (its writer's interest was applied when it was appended:
    /// the stream must be that writer's); returns the word of the next
    /// record.
    #[inline]
    pub fn copy_at(&self, at: usize, to: &mut BufferedRecorder) -> Result<usize, RecordError> {
        match self.next_at(at) {
            Some(next) => {
                to.push_encoded(&self.words[at + KEY_WORDS..next])?;
                Ok(next)
            }
            None => Err(RecordError::WriterThread),
        }
    }

    /// The word of the record after the one at `at`; `None` when there is
    /// no whole record at `at`.
    #[inline]
    pub fn next_at(&self, at: usize) -> Option<usize> {
        let head = *self.words.get(at + KEY_WORDS)?;
        let next = at + KEY_WORDS + record_words(head)?;
        (next <= self.words.len()).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::buffer::BufferConfig;
    use crate::record::FifoEventKind;
    use crate::recorder::{DropCounts, Recorder};
    use crate::time::Time;

    /// Keeps what reaches it as text, where the test reads it.
    #[derive(Default)]
    struct Collect(Arc<Mutex<Vec<String>>>);

    impl Collect {
        fn push(&self, what: String) {
            self.0.lock().expect("lock").push(what);
        }
    }

    impl Recorder for Collect {
        fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
            self.push(format!("{r:?}"));
            Ok(())
        }
        fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
            self.push(format!("{r:?}"));
            Ok(())
        }
        fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
            self.push(format!("{r:?}"));
            Ok(())
        }
        fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
            self.push(format!("{r:?}"));
            Ok(())
        }
        fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
            self.push(format!("{r:?}"));
            Ok(())
        }
        fn finish(&mut self, _: &crate::DropCounts) -> Result<(), RecordError> {
            Ok(())
        }
    }

    /// Two streams merged by their keys give every record once, whole, in
    /// key order; keys at their extremes survive.
    #[test]
    fn streams_merge_by_key_and_records_survive() {
        let time = Time::new(u128::MAX - 3, 7).expect("nonzero");
        let args: Vec<u64> = (0..MAX_ARGS as u64).collect();
        let key = |time: u128, order: u128| Key { time, order };
        let mut a = KeyedStream::new();
        let mut b = KeyedStream::new();
        let mut want = vec![String::new(); 6];
        let trace = TraceRecord {
            domain: 1,
            cycle: 2,
            time,
            unit: 3,
            event: 4,
            args: &args,
        };
        a.trace(key(0, 0), &trace).expect("trace");
        want[0] = format!("{trace:?}");
        let fifo = FifoRecord {
            fifo: 5,
            kind: FifoEventKind::NotEmpty,
            cycle: u64::MAX,
            time,
            unit: 6,
            txn: 7,
            occupancy: 8,
        };
        b.fifo(key(0, 1), &fifo);
        want[1] = format!("{fifo:?}");
        let counter = CounterRecord {
            counter: 9,
            cycle: 10,
            time,
            value: u64::MAX,
        };
        a.counter(key(0, u128::MAX), &counter);
        want[2] = format!("{counter:?}");
        let tick = TickRecord {
            unit: 11,
            cycle: 12,
            time,
        };
        b.tick(key(u128::MAX - 1, 0), &tick);
        want[3] = format!("{tick:?}");
        let signal = SignalRecord {
            signal: 13,
            time,
            value: 14,
        };
        a.signal(key(u128::MAX, 3), &signal);
        want[4] = format!("{signal:?}");
        b.signal(key(u128::MAX, 4), &signal);
        want[5] = format!("{signal:?}");
        let too_many: Vec<u64> = vec![0; MAX_ARGS + 1];
        assert!(
            a.trace(
                key(u128::MAX, 5),
                &TraceRecord {
                    args: &too_many,
                    ..trace
                }
            )
            .is_err()
        );
        assert_eq!((a.records(), b.records()), (3, 3));

        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut out =
            BufferedRecorder::spawn(Box::new(Collect(seen.clone())), BufferConfig::default());
        let (mut at_a, mut at_b) = (0, 0);
        loop {
            match (a.key_at(at_a), b.key_at(at_b)) {
                (Some(ka), kb) if kb.is_none_or(|kb| ka < kb) => {
                    at_a = a.copy_at(at_a, &mut out).expect("copied");
                }
                (_, Some(_)) => at_b = b.copy_at(at_b, &mut out).expect("copied"),
                (None, None) => break,
                (Some(_), None) => unreachable!("the first arm takes it"),
            }
        }
        out.finish(&DropCounts::default()).expect("finish");
        assert_eq!(*seen.lock().expect("lock"), want);
        // A cut keeps the records up to its time, whole: b's first.
        assert_eq!(b.cut_after(0), 2);
        assert_eq!(b.records(), 1);
        assert_eq!(b.key_at(0), Some(key(0, 1)));
        assert_eq!(b.next_at(0).and_then(|n| b.key_at(n)), None);
        a.clear();
        assert!(a.is_empty() && a.key_at(0).is_none());
    }
}
