//! Counters as CSV: one row per sample, exact time first.
//!
//! Columns: `time_ps` (exact: whole ps, then `+R/D` when there is a
//! remainder), `time_ns` (rounded down), `domain`, `cycle`, `counter`,
//! `value`. The file ends with a `# dropped counter samples: N` line.

use std::path::{Path, PathBuf};

use crate::error::RecordError;
use crate::output::{
    ChunkedOutput, RecordOutput, push_i64, push_time, push_u64, push_u128, whole_lines,
};
use crate::record::CounterRecord;
use crate::schema::Schema;
use crate::sink::{DropCounts, FifoInterest, Interest, Recorder};

/// The header row.
pub const HEADER: &str = "time_ps,time_ns,domain,cycle,counter,value";

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
        push_u128(buf, r.time.floor_ns());
        buf.extend_from_slice(domain);
        push_u64(buf, r.cycle);
        buf.extend_from_slice(name);
        push_i64(buf, r.value);
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
