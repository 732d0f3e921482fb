//! Counters as CSV: one row per sample, exact time first.
//!
//! Columns: `time_ps` (exact: whole ps, then `+R/D` when there is a
//! remainder), `time_ps_decimal` (the same time as a decimal number of
//! picoseconds, rounded down to 6 places, for spreadsheets and pandas,
//! which cannot read the exact form), `time_ns` (rounded down to whole
//! ns), `domain`, `cycle`, `counter`, `value` (unsigned, as counters
//! are). The file ends with a `# dropped counter samples: N` line.

use std::path::{Path, PathBuf};

use crate::error::RecordError;
use crate::output::{ChunkedOutput, RecordOutput, push_time, push_u64, push_u128, whole_lines};
use crate::record::CounterRecord;
use crate::recorder::{DropCounts, FifoInterest, Interest, Recorder};
use crate::schema::Schema;
use crate::time::Time;

/// The header row.
pub const HEADER: &str = "time_ps,time_ps_decimal,time_ns,domain,cycle,counter,value";

/// Appends `time` in picoseconds as a decimal, rounded down to 6 places
/// (`1094.091903`; a whole number of ps without a fraction).
fn push_decimal_ps(buf: &mut Vec<u8>, time: Time) {
    push_u128(buf, time.whole_ps());
    let (rem, den) = (u128::from(time.rem()), u128::from(time.den()));
    if rem != 0 {
        let micro = rem * 1_000_000 / den;
        buf.push(b'.');
        for digit in (0..6).rev().map(|k| (micro / 10u128.pow(k)) % 10) {
            buf.push(b'0' + digit as u8);
        }
    }
}

/// The counter CSV recorder.
pub struct CsvWriter {
    out: ChunkedOutput,
    /// `,<domain>,` per counter.
    domains: Vec<Vec<u8>>,
    /// `,<name>,` per counter.
    names: Vec<Vec<u8>>,
}

impl CsvWriter {
    /// Creates (truncating) `path`.
    pub fn create(path: &Path, schema: &Schema) -> Result<CsvWriter, RecordError> {
        schema.validate()?;
        Ok(Self::start(
            ChunkedOutput::create(path, whole_lines)?,
            schema,
        ))
    }

    /// Writes to `output`; `name` names it in errors.
    pub fn with_output(
        output: Box<dyn RecordOutput>,
        name: PathBuf,
        schema: &Schema,
    ) -> Result<CsvWriter, RecordError> {
        schema.validate()?;
        Ok(Self::start(
            ChunkedOutput::new(output, name, whole_lines),
            schema,
        ))
    }

    fn start(mut out: ChunkedOutput, schema: &Schema) -> CsvWriter {
        out.buf().extend_from_slice(HEADER.as_bytes());
        out.buf().push(b'\n');
        CsvWriter {
            out,
            domains: schema
                .counters
                .iter()
                .map(|c| format!(",{},", schema.domains[c.domain as usize].name).into_bytes())
                .collect(),
            names: schema
                .counters
                .iter()
                .map(|c| format!(",{},", c.name).into_bytes())
                .collect(),
        }
    }
}

impl Recorder for CsvWriter {
    fn interest(&self) -> Interest {
        Interest {
            trace: false,
            fifo: FifoInterest::None,
            counter: true,
            tick: false,
            signal: false,
        }
    }

    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        let c = r.counter as usize;
        let (Some(domain), Some(name)) = (self.domains.get(c), self.names.get(c)) else {
            return Err(RecordError::UnknownIndex {
                what: "counter",
                index: r.counter,
            });
        };
        self.out.check()?;
        let buf = self.out.buf();
        push_time(buf, r.time);
        buf.push(b',');
        push_decimal_ps(buf, r.time);
        buf.push(b',');
        push_u128(buf, r.time.floor_ns());
        buf.extend_from_slice(domain);
        push_u64(buf, r.cycle);
        buf.extend_from_slice(name);
        push_u64(buf, r.value);
        buf.push(b'\n');
        self.out.end_record()
    }

    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        self.out.check()?;
        let note = format!("# dropped counter samples: {}\n", dropped.counter);
        self.out.buf().extend_from_slice(note.as_bytes());
        self.out.flush()
    }
}
