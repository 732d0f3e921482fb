//! Rebuilds the global order of a text-log directory (contract §7): exact
//! time first; inside an instant, domain declaration order, then unit
//! instance path, then program order.
//!
//! Records that are not a unit's (FIFO commit events and counter samples)
//! come after the domain's unit records in the instant: FIFO commit events
//! by FIFO declaration order, then counters by declaration order, each in
//! the order recorded. FIFO events done in a tick (write, read, consume)
//! belong to that tick's unit and keep their program order among its trace
//! events.
//!
//! The merge streams: it holds one instant per domain, whatever the length
//! of the logs. A torn last line (no newline) is skipped and counted. A
//! recording whose manifest says it is incomplete (the run was killed
//! before it closed its logs) is merged only up to its horizon, the latest
//! time every domain's log reached, since a domain whose log stops earlier
//! may have lost records after it.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::record::FifoEventKind;
use crate::recorder::DropCounts;
use crate::text::{MANIFEST, Manifest};
use crate::time::Time;

/// What a merge saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Records written out.
    pub records: u64,
    /// Torn last lines skipped.
    pub torn_lines: u64,
    /// Whether the manifest says the recording finished.
    pub complete: bool,
    /// Records the recording dropped, from the manifest.
    pub dropped: DropCounts,
    /// For an incomplete recording: the time up to which it was merged
    /// (the earliest of the domains' last record times).
    pub horizon: Option<Time>,
    /// Records after [`MergeStats::horizon`], left out.
    pub beyond_horizon: u64,
}

/// Why a merge failed.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Reading a log or writing the merged output failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file (or `<output>`).
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The manifest is missing or malformed.
    #[error("{}: not a chronon text-log manifest: {message}", path.display())]
    Manifest {
        /// The manifest's path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A log line is malformed or out of time order.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The log.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
    },
}

/// Merges the logs in `dir` into `out`, one line per record:
/// `<time>ps <domain> <cycle> <kind> <rest of the log line>`.
pub fn merge(dir: &Path, out: &mut dyn Write) -> Result<MergeStats, MergeError> {
    let manifest_path = dir.join(MANIFEST);
    let text = std::fs::read(&manifest_path).map_err(|source| MergeError::Io {
        path: manifest_path.clone(),
        source,
    })?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| MergeError::Manifest {
        path: manifest_path.clone(),
        message: e.to_string(),
    })?;
    let schema = &manifest.schema;
    if manifest.files.len() != schema.domains.len() {
        return Err(MergeError::Manifest {
            path: manifest_path,
            message: "one log file per domain expected".to_owned(),
        });
    }
    let ranks = schema.unit_ranks();
    let keys = Keys {
        units: schema
            .units
            .iter()
            .zip(&ranks)
            .map(|(u, &r)| (u.path.clone(), r))
            .collect(),
        fifos: schema
            .fifos
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i as u32))
            .collect(),
        counters: schema
            .counters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i as u32))
            .collect(),
    };
    let mut logs = manifest
        .files
        .iter()
        .map(|f| DomainLog::open(&dir.join(f)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut groups = Vec::with_capacity(logs.len());
    for log in &mut logs {
        groups.push(log.next_instant(&keys)?);
    }
    let horizon = match manifest.complete {
        true => None,
        false => {
            let lasts = manifest
                .files
                .iter()
                .map(|f| last_time(&dir.join(f)))
                .collect::<Result<Vec<_>, _>>()?;
            lasts.into_iter().flatten().min()
        }
    };
    let mut stats = MergeStats {
        complete: manifest.complete,
        dropped: manifest.dropped,
        horizon,
        ..MergeStats::default()
    };
    let out_err = |source| MergeError::Io {
        path: PathBuf::from("<output>"),
        source,
    };
    loop {
        // The earliest instant; ties go to the earlier-declared domain.
        let next = groups
            .iter()
            .enumerate()
            .filter_map(|(d, g)| g.as_ref().map(|g| (g.time, d)))
            .min();
        let Some((_, d)) = next else { break };
        let group = groups[d].take().expect("the chosen domain has an instant");
        let name = &schema.domains[d].name;
        if horizon.is_some_and(|h| group.time > h) {
            stats.beyond_horizon += group.lines.len() as u64;
            groups[d] = logs[d].next_instant(&keys)?;
            continue;
        }
        for line in &group.lines {
            let (cycle, rest) = line.text.split_once(' ').expect("parsed lines have fields");
            let (time, rest) = rest.split_once(' ').expect("parsed lines have fields");
            writeln!(out, "{time} {name} {cycle} {rest}").map_err(out_err)?;
            stats.records += 1;
        }
        groups[d] = logs[d].next_instant(&keys)?;
    }
    for log in &logs {
        stats.torn_lines += log.torn;
    }
    out.flush().map_err(out_err)?;
    Ok(stats)
}

/// The time of the last whole record of the log at `path` (`None`: it
/// has none), read from its end.
fn last_time(path: &Path) -> Result<Option<Time>, MergeError> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |source| MergeError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    // A record line is far shorter than this; from the start if the file is.
    let mut from = len.saturating_sub(1 << 16);
    loop {
        file.seek(SeekFrom::Start(from)).map_err(io)?;
        let mut tail = Vec::new();
        file.read_to_end(&mut tail).map_err(io)?;
        let whole = tail
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(&tail[..0], |end| &tail[..end]);
        let text = String::from_utf8_lossy(whole);
        let mut lines: Vec<&str> = text.split('\n').collect();
        if from > 0 {
            // The first piece may be the end of a line cut by the seek.
            lines.remove(0);
        }
        let last = lines
            .iter()
            .rev()
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|t| t.strip_suffix("ps"))
            .and_then(Time::parse);
        if last.is_some() || from == 0 {
            return Ok(last);
        }
        from = from.saturating_sub(1 << 20);
    }
}

/// Maps names in log lines to their canonical sort slots.
struct Keys {
    units: HashMap<String, u32>,
    fifos: HashMap<String, u32>,
    counters: HashMap<String, u32>,
}

struct Line {
    time: Time,
    /// 0: a unit's tick, 1: FIFO commit, 2: counter sample.
    phase: u8,
    slot: u32,
    text: String,
}

struct Instant {
    time: Time,
    lines: Vec<Line>,
}

struct DomainLog {
    path: PathBuf,
    reader: BufReader<File>,
    line_no: u64,
    pending: Option<Line>,
    last: Option<Time>,
    torn: u64,
}

impl DomainLog {
    fn open(path: &Path) -> Result<DomainLog, MergeError> {
        let file = File::open(path).map_err(|source| MergeError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(DomainLog {
            path: path.to_owned(),
            reader: BufReader::with_capacity(1 << 20, file),
            line_no: 0,
            pending: None,
            last: None,
            torn: 0,
        })
    }

    /// The next instant's lines in canonical order, or `None` at the end.
    fn next_instant(&mut self, keys: &Keys) -> Result<Option<Instant>, MergeError> {
        let first = match self.pending.take() {
            Some(line) => line,
            None => match self.read_line(keys)? {
                Some(line) => line,
                None => return Ok(None),
            },
        };
        let time = first.time;
        let mut lines = vec![first];
        while let Some(line) = self.read_line(keys)? {
            if line.time == time {
                lines.push(line);
            } else {
                self.pending = Some(line);
                break;
            }
        }
        // Stable: program order survives inside a slot.
        lines.sort_by_key(|l| (l.phase, l.slot));
        Ok(Some(Instant { time, lines }))
    }

    fn read_line(&mut self, keys: &Keys) -> Result<Option<Line>, MergeError> {
        loop {
            let mut text = String::new();
            let n = self
                .reader
                .read_line(&mut text)
                .map_err(|source| MergeError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if !text.ends_with('\n') {
                self.torn += 1;
                return Ok(None);
            }
            text.pop();
            if text.starts_with('#') || text.is_empty() {
                continue;
            }
            let line = self.parse(text, keys)?;
            if self.last.is_some_and(|last| line.time < last) {
                return Err(self.error("time goes backwards".to_owned()));
            }
            self.last = Some(line.time);
            return Ok(Some(line));
        }
    }

    fn error(&self, message: String) -> MergeError {
        MergeError::Line {
            path: self.path.clone(),
            line: self.line_no,
            message,
        }
    }

    fn parse(&self, text: String, keys: &Keys) -> Result<Line, MergeError> {
        let mut fields = text.split(' ');
        let _cycle = fields
            .next()
            .and_then(|c| c.parse::<u64>().ok())
            .ok_or_else(|| self.error("bad cycle".to_owned()))?;
        let time = fields
            .next()
            .and_then(|t| t.strip_suffix("ps"))
            .and_then(Time::parse)
            .ok_or_else(|| self.error("bad exact time".to_owned()))?;
        let kind = fields
            .next()
            .ok_or_else(|| self.error("missing record kind".to_owned()))?;
        let name = fields
            .next()
            .ok_or_else(|| self.error("missing name".to_owned()))?;
        let lookup = |map: &HashMap<String, u32>, what: &str, key: &str| {
            map.get(key)
                .copied()
                .ok_or_else(|| self.error(format!("unknown {what} {key:?}")))
        };
        let (phase, slot) = match kind {
            "T" => (0, lookup(&keys.units, "unit", name)?),
            "F" => {
                let fifo_kind = fields
                    .next()
                    .and_then(FifoEventKind::from_name)
                    .ok_or_else(|| self.error("bad FIFO event kind".to_owned()))?;
                if fifo_kind.in_tick() {
                    let unit = fields
                        .find_map(|f| f.strip_prefix("unit="))
                        .ok_or_else(|| self.error("FIFO tick event without unit=".to_owned()))?;
                    (0, lookup(&keys.units, "unit", unit)?)
                } else {
                    (1, lookup(&keys.fifos, "fifo", name)?)
                }
            }
            "C" => (2, lookup(&keys.counters, "counter", name)?),
            other => return Err(self.error(format!("unknown record kind {other:?}"))),
        };
        Ok(Line {
            time,
            phase,
            slot,
            text,
        })
    }
}
