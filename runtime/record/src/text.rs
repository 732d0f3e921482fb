//! Per-domain text logs plus a JSON manifest, in one directory.
//!
//! Each domain gets `NN-<domain>.log`, one record a line, in the order the
//! run produced them:
//!
//! ```text
//! <cycle> <time>ps T <unit> <event> [<arg>=<value> ...]
//! <cycle> <time>ps F <fifo> <kind> txn=<id> occ=<n> [unit=<unit>]
//! <cycle> <time>ps C <counter> <value>
//! ```
//!
//! `<time>` is exact: whole picoseconds, then `+R/D` when there is a
//! remainder. `manifest.json` holds the schema, the file names, the record
//! counts, the dropped counts and whether the run finished; [`crate::merge`]
//! rebuilds the global order from the directory.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::RecordError;
use crate::output::{ChunkedOutput, RecordOutput, push_i64, push_u64, push_u128, whole_lines};
use crate::record::{CounterRecord, FifoRecord, TraceRecord};
use crate::schema::Schema;
use crate::sink::{DropCounts, Recorder};

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// The manifest's `format` value.
pub const FORMAT: &str = "chronon-text-log";

/// What `manifest.json` holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// Format version, 1.
    pub version: u32,
    /// The run's schema.
    pub schema: Schema,
    /// Log file name per domain, relative to the directory.
    pub files: Vec<String>,
    /// Records written per domain (known once the run finished).
    pub records: Vec<u64>,
    /// Records a lossy buffer dropped.
    pub dropped: DropCounts,
    /// Whether the recording finished; a crashed run leaves `false` and
    /// logs that are a valid prefix.
    pub complete: bool,
}

/// The text-log recorder.
pub struct TextWriter {
    dir: PathBuf,
    manifest: Manifest,
    logs: Vec<DomainLog>,
    units: Vec<Vec<u8>>,
    /// `T <unit> ` per unit: the constant start of its trace lines.
    trace_heads: Vec<Vec<u8>>,
    events: Vec<EventText>,
    fifos: Vec<FifoText>,
    counters: Vec<(Vec<u8>, u32)>,
}

struct EventText {
    name: Vec<u8>,
    /// ` name=` per argument, ready to append.
    args: Vec<Vec<u8>>,
}

struct FifoText {
    path: Vec<u8>,
    writer_domain: u32,
    reader_domain: u32,
}

impl TextWriter {
    /// Creates `dir` (if needed), a log per domain and the manifest.
    pub fn create(dir: &Path, schema: &Schema) -> Result<TextWriter, RecordError> {
        schema.validate()?;
        fs::create_dir_all(dir).map_err(|source| RecordError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let files = log_names(schema);
        let logs = files
            .iter()
            .map(|f| ChunkedOutput::create(&dir.join(f), whole_lines))
            .collect::<Result<Vec<_>, _>>()?;
        Self::start(dir, schema, files, logs)
    }

    /// Like [`TextWriter::create`] but with given destinations for the
    /// logs, one per domain (the manifest still goes to `dir`).
    pub fn with_outputs(
        dir: &Path,
        schema: &Schema,
        outputs: Vec<Box<dyn RecordOutput>>,
    ) -> Result<TextWriter, RecordError> {
        schema.validate()?;
        if outputs.len() != schema.domains.len() {
            return Err(RecordError::UnknownIndex {
                what: "domain output",
                index: outputs.len() as u32,
            });
        }
        fs::create_dir_all(dir).map_err(|source| RecordError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let files = log_names(schema);
        let logs = outputs
            .into_iter()
            .zip(&files)
            .map(|(out, f)| ChunkedOutput::new(out, dir.join(f), whole_lines))
            .collect();
        Self::start(dir, schema, files, logs)
    }

    fn start(
        dir: &Path,
        schema: &Schema,
        files: Vec<String>,
        mut logs: Vec<ChunkedOutput>,
    ) -> Result<TextWriter, RecordError> {
        for (d, log) in schema.domains.iter().zip(&mut logs) {
            let header = format!(
                "# chronon text log v1: domain {} period {}ps phase {}ps\n",
                d.name, d.period, d.phase
            );
            log.buf().extend_from_slice(header.as_bytes());
        }
        let writer = TextWriter {
            dir: dir.to_owned(),
            manifest: Manifest {
                format: FORMAT.to_owned(),
                version: 1,
                schema: schema.clone(),
                records: vec![0; files.len()],
                files,
                dropped: DropCounts::default(),
                complete: false,
            },
            logs: logs
                .into_iter()
                .map(|out| DomainLog {
                    out,
                    key: None,
                    prefix: Vec::with_capacity(64),
                })
                .collect(),
            units: schema
                .units
                .iter()
                .map(|u| u.path.as_bytes().to_vec())
                .collect(),
            trace_heads: schema
                .units
                .iter()
                .map(|u| format!("T {} ", u.path).into_bytes())
                .collect(),
            events: schema
                .events
                .iter()
                .map(|e| EventText {
                    name: e.name.as_bytes().to_vec(),
                    args: e
                        .args
                        .iter()
                        .map(|a| format!(" {a}=").into_bytes())
                        .collect(),
                })
                .collect(),
            fifos: schema
                .fifos
                .iter()
                .map(|f| FifoText {
                    path: f.path.as_bytes().to_vec(),
                    writer_domain: f.writer_domain,
                    reader_domain: f.reader_domain,
                })
                .collect(),
            counters: schema
                .counters
                .iter()
                .map(|c| (c.name.as_bytes().to_vec(), c.domain))
                .collect(),
        };
        writer.write_manifest()?;
        Ok(writer)
    }

    fn write_manifest(&self) -> Result<(), RecordError> {
        let path = self.dir.join(MANIFEST);
        let tmp = self.dir.join(format!("{MANIFEST}.tmp"));
        let json = serde_json::to_vec_pretty(&self.manifest)
            .expect("the manifest is plain data and always serialises");
        fs::write(&tmp, json)
            .and_then(|()| fs::rename(&tmp, &path))
            .map_err(|source| RecordError::Io { path, source })
    }
}

/// A domain log and the text `<cycle> <time>ps ` of its last record: an
/// instant usually has several records per domain, and formatting the
/// numbers is most of a line's cost.
struct DomainLog {
    out: ChunkedOutput,
    /// `(cycle, time numerator, time denominator)` of `prefix`.
    key: Option<(u64, u128, u64)>,
    prefix: Vec<u8>,
}

/// Starts a line in `domain`'s log: cycle and exact time.
#[inline]
fn start_line<'a>(
    logs: &'a mut [DomainLog],
    records: &mut [u64],
    domain: u32,
    cycle: u64,
    time: crate::Time,
) -> Result<&'a mut ChunkedOutput, RecordError> {
    let d = domain as usize;
    let log = logs.get_mut(d).ok_or(RecordError::UnknownIndex {
        what: "domain",
        index: domain,
    })?;
    let DomainLog { out, key, prefix } = log;
    out.check()?;
    records[d] += 1;
    let buf = out.buf();
    let this = (cycle, time.num(), time.den());
    if *key == Some(this) {
        buf.extend_from_slice(prefix);
        return Ok(out);
    }
    let start = buf.len();
    push_u64(buf, cycle);
    buf.push(b' ');
    let (whole, rem) = time.split();
    push_u128(buf, whole);
    if rem != 0 {
        buf.push(b'+');
        push_u64(buf, rem);
        buf.push(b'/');
        push_u64(buf, time.den());
    }
    buf.extend_from_slice(b"ps ");
    prefix.clear();
    prefix.extend_from_slice(&buf[start..]);
    *key = Some(this);
    Ok(out)
}

fn log_names(schema: &Schema) -> Vec<String> {
    schema
        .domains
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{i:02}-{}.log", d.name))
        .collect()
}

impl Recorder for TextWriter {
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        let unknown = |what, index| RecordError::UnknownIndex { what, index };
        let event = self
            .events
            .get(r.event as usize)
            .ok_or_else(|| unknown("event", r.event))?;
        if event.args.len() != r.args.len() {
            return Err(RecordError::ArgCount {
                event: String::from_utf8_lossy(&event.name).into_owned(),
                declared: event.args.len(),
                got: r.args.len(),
            });
        }
        let head = self
            .trace_heads
            .get(r.unit as usize)
            .ok_or_else(|| unknown("unit", r.unit))?;
        let log = start_line(
            &mut self.logs,
            &mut self.manifest.records,
            r.domain,
            r.cycle,
            r.time,
        )?;
        let buf = log.buf();
        buf.extend_from_slice(head);
        buf.extend_from_slice(&event.name);
        for (name, &value) in event.args.iter().zip(r.args) {
            buf.extend_from_slice(name);
            push_u64(buf, value);
        }
        buf.push(b'\n');
        log.end_record()
    }

    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        let TextWriter {
            logs,
            manifest,
            units,
            fifos,
            ..
        } = self;
        let fifo = fifos
            .get(r.fifo as usize)
            .ok_or(RecordError::UnknownIndex {
                what: "fifo",
                index: r.fifo,
            })?;
        let domain = if r.kind.writer_side() {
            fifo.writer_domain
        } else {
            fifo.reader_domain
        };
        let unit = if r.kind.in_tick() {
            let unit = units
                .get(r.unit as usize)
                .ok_or(RecordError::UnknownIndex {
                    what: "unit",
                    index: r.unit,
                })?;
            Some(unit.as_slice())
        } else {
            None
        };
        let log = start_line(logs, &mut manifest.records, domain, r.cycle, r.time)?;
        let buf = log.buf();
        buf.extend_from_slice(b"F ");
        buf.extend_from_slice(&fifo.path);
        buf.push(b' ');
        buf.extend_from_slice(r.kind.name().as_bytes());
        buf.extend_from_slice(b" txn=");
        push_u64(buf, r.txn);
        buf.extend_from_slice(b" occ=");
        push_u64(buf, u64::from(r.occupancy));
        if let Some(unit) = unit {
            buf.extend_from_slice(b" unit=");
            buf.extend_from_slice(unit);
        }
        buf.push(b'\n');
        log.end_record()
    }

    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        let (name, domain) =
            self.counters
                .get(r.counter as usize)
                .ok_or(RecordError::UnknownIndex {
                    what: "counter",
                    index: r.counter,
                })?;
        let log = start_line(
            &mut self.logs,
            &mut self.manifest.records,
            *domain,
            r.cycle,
            r.time,
        )?;
        let buf = log.buf();
        buf.extend_from_slice(b"C ");
        buf.extend_from_slice(name);
        buf.push(b' ');
        push_i64(buf, r.value);
        buf.push(b'\n');
        log.end_record()
    }

    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        for log in &mut self.logs {
            log.out.flush()?;
        }
        self.manifest.dropped = *dropped;
        self.manifest.complete = true;
        self.write_manifest()
    }
}
