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
//! remainder. A trace `<value>` is a decimal: the raw bits of an unsigned
//! argument, a signed one (see [`crate::EventInfo::signed_widths`])
//! sign-extended from its width, with a `-` when negative; an argument
//! wider than 64 bits ([`crate::EventInfo::wide_widths`]) is one such
//! number of its limbs. `manifest.json` holds the schema, the file names,
//! the record counts, the dropped counts and whether the run finished; [`crate::merge`]
//! rebuilds the global order from the directory.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::RecordError;
use crate::output::{CHUNK, ChunkedOutput, RecordOutput, put_u64, put_u128, whole_lines};
use crate::record::{CounterRecord, FifoEventKind, FifoRecord, TraceRecord};
use crate::recorder::{DropCounts, FifoInterest, Interest, Recorder};
use crate::schema::{Schema, sign_extend};
use crate::wide;

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
///
/// Hot path: a line is written straight into its domain's chunk buffer:
/// the `<cycle> <time>ps ` text of the domain's instant (formatted once per
/// instant and domain, then copied), constant pieces precomputed per unit,
/// event, FIFO event and counter (copied in whole 16-byte chunks), and
/// numbers formatted in place. Full chunks go to the destination without
/// another copy.
pub struct TextWriter {
    dir: PathBuf,
    manifest: Manifest,
    logs: Vec<DomainLog>,
    /// `T <unit> ` per unit: the constant start of its trace lines.
    trace_heads: Vec<Piece>,
    /// ` unit=<unit>` per unit, the end of a FIFO tick event's line.
    unit_tails: Vec<Piece>,
    events: Vec<EventText>,
    fifos: Vec<FifoText>,
    /// `C <counter> ` and the counter's domain.
    counters: Vec<(Piece, u32)>,
}

/// Constant text, zero-padded so that copying it is a few fixed-size moves
/// instead of a `memcpy` call of a variable length; the line's cursor then
/// advances by the true length. The first 32 bytes sit inline and are
/// copied unconditionally (one bounds check, two 16-byte moves, no loop and
/// no pointer to follow): nearly every piece (`T <unit> `, `<event> <arg>=`,
/// `F <fifo> <kind> txn=`) fits; longer ones copy the rest in whole 16-byte
/// chunks. Line buffers are sized for the padded lengths.
struct Piece {
    first: [u8; 32],
    rest: Box<[[u8; 16]]>,
    len: usize,
}

impl Piece {
    fn new(text: &[u8]) -> Piece {
        let mut first = [0u8; 32];
        let head = text.len().min(32);
        first[..head].copy_from_slice(&text[..head]);
        let tail = &text[head..];
        let mut rest = vec![[0u8; 16]; tail.len().div_ceil(16)];
        for (chunk, part) in rest.iter_mut().zip(tail.chunks(16)) {
            chunk[..part.len()].copy_from_slice(part);
        }
        Piece {
            first,
            rest: rest.into_boxed_slice(),
            len: text.len(),
        }
    }

    /// Bytes a copy may touch.
    fn padded(&self) -> usize {
        32 + self.rest.len() * 16
    }

    /// Copies the text to `line[pos..]`; returns the position after it.
    #[inline(always)]
    fn put(&self, line: &mut [u8], pos: usize) -> usize {
        line[pos..pos + 32].copy_from_slice(&self.first);
        if !self.rest.is_empty() {
            self.put_rest(line, pos + 32);
        }
        pos + self.len
    }

    /// The chunks beyond the first 32 bytes, one bounds check for all.
    #[inline(never)]
    fn put_rest(&self, line: &mut [u8], pos: usize) {
        let dst = &mut line[pos..pos + 16 * self.rest.len()];
        for (d, s) in dst.chunks_exact_mut(16).zip(self.rest.iter()) {
            d.copy_from_slice(s);
        }
    }
}

struct EventText {
    name: Vec<u8>,
    /// `<event>` and, when it has arguments, ` <first>=`.
    head: Piece,
    /// ` <name>=` for the other arguments.
    rest: Vec<Piece>,
    /// Values a record carries: one per argument, one per limb of a wide
    /// one.
    values: usize,
    /// Bytes the arguments' numbers take at most.
    numbers: usize,
    /// Per argument, its signed width or 0 for unsigned; `None` when every
    /// argument is unsigned, so such events take the plain loop and pay one
    /// test per record for signedness.
    signed: Option<Box<[u32]>>,
    /// Per argument, its signed width (or 0) and its width when wider than
    /// 64 bits (or 0); `None` when no argument is wide, so other events
    /// never look at it.
    wide: Option<Box<[(u32, u32)]>>,
}

/// What a FIFO event's line needs, per FIFO and kind, looked up once per
/// record: the kind's side, its domain and whether it names its unit are
/// known when the writer starts, not per record.
struct FifoKindText {
    /// `F <fifo> <kind> txn=`.
    head: Piece,
    /// The domain of the kind's side (writer or reader).
    domain: u32,
    /// Whether the line ends with ` unit=<unit>` (an event of a tick).
    in_tick: bool,
}

struct FifoText {
    /// Per kind, in [`FifoEventKind::ALL`] order (a fixed array: the kind
    /// indexes it without a bounds check).
    kinds: [FifoKindText; FifoEventKind::ALL.len()],
    /// The text of recent transaction ids, slot `txn % TXN_SLOTS`.
    txns: Box<[TxnText; TXN_SLOTS]>,
}

/// Transaction-id texts kept per FIFO. Every transaction appears in about
/// six lines (write, visible, read, output, consume, sometimes full/empty
/// changes) while up to a FIFO's depth plus the synchronizer's stages are
/// in flight, so the id is formatted once and copied after: one compare
/// and a 24-byte copy instead of about 30 instructions of digits.
const TXN_SLOTS: usize = 32;

/// One transaction id and its digits.
#[derive(Clone, Copy)]
struct TxnText {
    txn: u64,
    /// The digits, then scratch (a copy takes all 24 bytes).
    text: [u8; 24],
    len: usize,
}

impl TxnText {
    fn new(txn: u64) -> TxnText {
        let mut text = [0; 24];
        let len = put_u64(&mut text, 0, txn);
        TxnText { txn, text, len }
    }
}

impl FifoText {
    /// Writes `txn` at `line[pos..]` from the cache, formatting it on a
    /// miss; stores 24 bytes after `pos`; returns the position after it.
    #[inline(always)]
    fn put_txn(&mut self, line: &mut [u8], pos: usize, txn: u64) -> usize {
        let slot = &mut self.txns[(txn % TXN_SLOTS as u64) as usize];
        if slot.txn != txn {
            // A miss formats the id twice, into the cache and into the
            // line: copying the cache's freshly formatted digits (8-byte
            // stores) back with 16-byte loads stalled store-to-load
            // forwarding (4% of this writer's FIFO-line samples).
            slot.txn = txn;
            slot.len = put_u64(&mut slot.text, 0, txn);
            return put_u64(line, pos, txn);
        }
        line[pos..pos + 24].copy_from_slice(&slot.text);
        pos + slot.len
    }
}

/// Longest text of one number: a `u64`.
const NUMBER: usize = 20;

/// Room for the longest `<cycle> <time>ps ` prefix (20 + 1 + 81 + 3 bytes),
/// in whole 16-byte chunks.
const PREFIX: usize = 112;

impl TextWriter {
    /// Creates `dir` (and missing folders above it), a log per domain and
    /// the manifest. Logs of an earlier run in `dir` that this one does not
    /// write (`NN-domain.log` of other domains) are removed, so the
    /// directory holds one recording.
    pub fn create(dir: &Path, schema: &Schema) -> Result<TextWriter, RecordError> {
        schema.validate()?;
        let io = |source| RecordError::Io {
            path: dir.to_owned(),
            source,
        };
        fs::create_dir_all(dir).map_err(io)?;
        let files = log_names(schema);
        for entry in fs::read_dir(dir).map_err(io)? {
            let name = entry.map_err(io)?.file_name();
            let name = name.to_string_lossy();
            if is_log_name(&name) && !files.iter().any(|f| *f == name) {
                fs::remove_file(dir.join(&*name)).map_err(io)?;
            }
        }
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
        let trace_heads: Vec<Piece> = schema
            .units
            .iter()
            .map(|u| Piece::new(format!("T {} ", u.path).as_bytes()))
            .collect();
        let unit_tails: Vec<Piece> = schema
            .units
            .iter()
            .map(|u| Piece::new(format!(" unit={}", u.path).as_bytes()))
            .collect();
        let events: Vec<EventText> = schema
            .events
            .iter()
            .map(|e| {
                let mut head = e.name.clone();
                if let Some(first) = e.args.first() {
                    head.push_str(&format!(" {first}="));
                }
                EventText {
                    name: e.name.as_bytes().to_vec(),
                    head: Piece::new(head.as_bytes()),
                    rest: e
                        .args
                        .iter()
                        .skip(1)
                        .map(|a| Piece::new(format!(" {a}=").as_bytes()))
                        .collect(),
                    values: e.values(),
                    numbers: (0..e.args.len())
                        .map(|i| e.wide_width(i).map_or(NUMBER, wide::decimal_len))
                        .sum(),
                    wide: (0..e.args.len())
                        .any(|i| e.wide_width(i).is_some())
                        .then(|| {
                            (0..e.args.len())
                                .map(|i| {
                                    (e.signed_width(i).unwrap_or(0), e.wide_width(i).unwrap_or(0))
                                })
                                .collect()
                        }),
                    signed: (0..e.args.len())
                        .any(|i| e.signed_width(i).is_some())
                        .then(|| {
                            (0..e.args.len())
                                .map(|i| e.signed_width(i).unwrap_or(0))
                                .collect()
                        }),
                }
            })
            .collect();
        let fifos: Vec<FifoText> = schema
            .fifos
            .iter()
            .map(|f| FifoText {
                kinds: FifoEventKind::ALL.map(|k| FifoKindText {
                    head: Piece::new(format!("F {} {} txn=", f.path, k.name()).as_bytes()),
                    domain: if k.writer_side() {
                        f.writer_domain
                    } else {
                        f.reader_domain
                    },
                    in_tick: k.in_tick(),
                }),
                // Slot i starts with id i: every slot is valid from the start.
                txns: Box::new(std::array::from_fn(|i| TxnText::new(i as u64))),
            })
            .collect();
        let counters: Vec<(Piece, u32)> = schema
            .counters
            .iter()
            .map(|c| (Piece::new(format!("C {} ", c.name).as_bytes()), c.domain))
            .collect();
        // The longest line any record can make, with every piece padded.
        let widest =
            |pieces: &mut dyn Iterator<Item = &Piece>| pieces.map(Piece::padded).max().unwrap_or(0);
        let trace_line = widest(&mut trace_heads.iter())
            + events
                .iter()
                .map(|e| {
                    e.head.padded() + e.rest.iter().map(Piece::padded).sum::<usize>() + e.numbers
                })
                .max()
                .unwrap_or(0);
        let fifo_line = widest(&mut fifos.iter().flat_map(|f| f.kinds.iter().map(|k| &k.head)))
            + NUMBER
            + 5
            + NUMBER
            + widest(&mut unit_tails.iter());
        let counter_line = widest(&mut counters.iter().map(|(p, _)| p)) + NUMBER;
        let line = PREFIX + trace_line.max(fifo_line).max(counter_line) + 1;
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
                    chunk: vec![0; CHUNK + line].into_boxed_slice(),
                    len: 0,
                    prefix: [0; PREFIX],
                    prefix_len: 0,
                    save_from: NOT_PENDING,
                    times: TimeText::default(),
                    records: 0,
                })
                .collect(),
            trace_heads,
            unit_tails,
            events,
            fifos,
            counters,
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

/// A domain log, its chunk buffer and the text `<cycle> <time>ps ` of its
/// last record: an instant usually has several records per domain, and
/// formatting the numbers is a large part of a line's cost.
struct DomainLog {
    out: ChunkedOutput,
    /// `(cycle, time numerator, time denominator)` of `prefix`.
    key: Option<(u64, u128, u64)>,
    /// Lines not yet written; `CHUNK` plus room for the longest line the
    /// schema allows (see `start`), so a line started below `CHUNK` fits.
    chunk: Box<[u8]>,
    /// Bytes used in `chunk`.
    len: usize,
    prefix: [u8; PREFIX],
    prefix_len: usize,
    /// Where in `chunk` the last formatted prefix starts, not yet copied
    /// to `prefix` ([`NOT_PENDING`] when it was); see
    /// [`DomainLog::save_prefix`].
    save_from: usize,
    times: TimeText,
    /// Records written, copied to the manifest at the end (a count here
    /// saves a bounds check on the manifest's vector per record).
    records: u64,
}

/// Formats a domain's edge times with less work than from scratch: its
/// edges are usually one period apart, so the whole/remainder split of the
/// next time is the last one plus the period's (no 128- or 64-bit division
/// per instant), and a remainder's fraction in lowest terms comes from a
/// cache of its text (a domain's remainders cycle through the few values
/// its own period allows).
#[derive(Default)]
struct TimeText {
    /// The last time formatted and its split.
    num: u128,
    den: u64,
    whole: u128,
    rem: u64,
    /// The last step between two times and its split.
    step: u128,
    step_whole: u128,
    step_rem: u64,
    /// Remainders over `den` and the text `R/D` of their fractions in
    /// lowest terms (its length in the last byte), direct-mapped by the
    /// remainder scaled to the table
    /// (`rem * FRACTIONS / den`), so the multiples of `den / D` that a
    /// domain with its own denominator `D <= FRACTIONS` reaches never
    /// collide; a tag of 0 is empty (a zero remainder prints no fraction).
    /// Allocated at the first fraction, kept across resets, cleared when
    /// `den` changes.
    fractions: Box<[(u64, [u8; 24])]>,
    /// `FRACTIONS * 2^64 / den` rounded down (the scaling as a multiply
    /// and shift), or 0 when `den <= FRACTIONS` (the remainder itself).
    scale: u64,
}

/// Entries of [`TimeText::fractions`]: 32 KiB per domain.
const FRACTIONS: usize = 1024;

impl TimeText {
    /// Writes `time` as [`put_time`] does; returns the position after it.
    #[inline(always)]
    fn put(&mut self, line: &mut [u8], pos: usize, time: crate::Time) -> usize {
        let (num, den) = (time.num(), time.den());
        if den != self.den || num < self.num {
            // A new denominator (the first time) or a step back: from
            // scratch, and start over from here.
            let (whole, rem) = time.split();
            let mut fractions = std::mem::take(&mut self.fractions);
            if den != self.den {
                fractions.fill((0, [0; 24]));
            }
            let scale = if den as usize <= FRACTIONS {
                0
            } else {
                // Below 2^64 as den > FRACTIONS; rem < den keeps the
                // scaled slot below FRACTIONS.
                (((FRACTIONS as u128) << 64) / u128::from(den)) as u64
            };
            *self = TimeText {
                scale,
                num,
                den,
                whole,
                rem,
                fractions,
                ..TimeText::default()
            };
        } else {
            let step = num - self.num;
            if step != self.step {
                let (whole, rem) = crate::Time::from_parts(step, den).split();
                (self.step, self.step_whole, self.step_rem) = (step, whole, rem);
            }
            // rem + step_rem < 2 den: at most one carry into the whole part.
            let rem = u128::from(self.rem) + u128::from(self.step_rem);
            let carry = rem >= u128::from(den);
            self.whole += self.step_whole + u128::from(carry);
            self.rem = (rem - if carry { u128::from(den) } else { 0 }) as u64;
            self.num = num;
        }
        let mut pos = put_u128(line, pos, self.whole);
        if self.rem != 0 {
            // `+R/D` in lowest terms, as `Time`'s `Display`.
            line[pos] = b'+';
            pos = self.put_fraction(line, pos + 1);
        }
        pos
    }

    /// Writes `self.rem / self.den` (not zero) in lowest terms, from the
    /// cache when it holds it; returns the position after it.
    #[inline(always)]
    fn put_fraction(&mut self, line: &mut [u8], pos: usize) -> usize {
        let slot = if self.scale == 0 {
            self.rem as usize
        } else {
            ((u128::from(self.rem) * u128::from(self.scale)) >> 64) as usize
        };
        if let Some((tag, text)) = self.fractions.get(slot)
            && *tag == self.rem
        {
            line[pos..pos + 24].copy_from_slice(text);
            return pos + usize::from(text[23]);
        }
        self.fraction_miss(line, pos, slot)
    }

    /// [`TimeText::put_fraction`] without the cache: a gcd, and the text
    /// cached when it fits its entry (both terms below 2^32: 21 bytes).
    #[cold]
    #[inline(never)]
    fn fraction_miss(&mut self, line: &mut [u8], pos: usize, slot: usize) -> usize {
        let (rem, den) = crate::time::lowest_terms(self.rem, self.den);
        let mut at = put_u64(line, pos, rem);
        line[at] = b'/';
        at = put_u64(line, at + 1, den);
        if den <= u64::from(u32::MAX) {
            if self.fractions.is_empty() {
                self.fractions = vec![(0, [0; 24]); FRACTIONS].into_boxed_slice();
            }
            let mut text = [0u8; 24];
            text[..at - pos].copy_from_slice(&line[pos..at]);
            text[23] = (at - pos) as u8;
            self.fractions[slot] = (self.rem, text);
        }
        at
    }
}

/// [`DomainLog::save_from`] with no prefix to save.
const NOT_PENDING: usize = usize::MAX;

impl DomainLog {
    /// Copies the prefix formatted at `chunk[save_from..]` to `prefix`, one
    /// record after it was formatted: copied at once, its bytes (stored as
    /// 8-byte digit words and single bytes) were read back with 16-byte
    /// loads while the stores were still in flight, a store-to-load
    /// forwarding stall that took 12% of the writer's FIFO-line samples.
    /// Nothing writes to `chunk` between the two (a chunk handed to the
    /// output keeps its bytes until the next line starts).
    #[inline(always)]
    fn save_prefix(&mut self) {
        let from = std::mem::replace(&mut self.save_from, NOT_PENDING);
        let saved = &self.chunk[from..from + PREFIX];
        self.prefix[..48].copy_from_slice(&saved[..48]);
        if self.prefix_len > 48 {
            self.prefix[48..].copy_from_slice(&saved[48..]);
        }
    }

    /// Ends the line that fills `chunk[..end]`; writes the chunk when full.
    #[inline]
    fn end_line(&mut self, end: usize) -> Result<(), RecordError> {
        self.len = end;
        if end >= CHUNK {
            self.write_out()?;
        }
        Ok(())
    }

    /// Hands the buffered lines to the output.
    fn write_out(&mut self) -> Result<(), RecordError> {
        let len = std::mem::take(&mut self.len);
        self.out.write_whole(&self.chunk[..len])
    }
}

/// Starts a line in `domain`'s log with its cycle and exact time; returns
/// the log and the position after them in its chunk.
#[inline(always)]
fn start_line(
    logs: &mut [DomainLog],
    domain: u32,
    cycle: u64,
    time: crate::Time,
) -> Result<(&mut DomainLog, usize), RecordError> {
    let d = domain as usize;
    let log = logs.get_mut(d).ok_or_else(|| unknown("domain", domain))?;
    log.out.check()?;
    log.records += 1;
    let start = log.len;
    if log.save_from != NOT_PENDING {
        log.save_prefix();
    }
    let this = (cycle, time.num(), time.den());
    if log.key == Some(this) {
        // The first 48 bytes unconditionally (one bounds check, three
        // 16-byte moves: nearly every prefix fits), whole chunks beyond.
        let n = log.prefix_len;
        let line = &mut log.chunk[start..start + PREFIX];
        line[..48].copy_from_slice(&log.prefix[..48]);
        if n > 48 {
            line[48..].copy_from_slice(&log.prefix[48..]);
        }
        return Ok((log, start + n));
    }
    let line = &mut log.chunk[start..];
    let mut pos = put_u64(line, 0, cycle);
    line[pos] = b' ';
    pos = log.times.put(line, pos + 1, time);
    line[pos..pos + 3].copy_from_slice(b"ps ");
    pos += 3;
    // Saved at the log's next record (see `DomainLog::save_prefix`).
    log.save_from = start;
    log.prefix_len = pos;
    log.key = Some(this);
    Ok((log, start + pos))
}

/// Writes a trace argument: its raw bits as an unsigned number when `width`
/// is 0, else sign-extended from `width` bits, with a `-` when negative (at
/// most 20 bytes either way, what the line buffer reserves per number).
#[inline(always)]
fn put_arg(line: &mut [u8], mut pos: usize, value: u64, width: u32) -> usize {
    if width == 0 {
        return put_u64(line, pos, value);
    }
    let v = sign_extend(value, width);
    if v < 0 {
        line[pos] = b'-';
        pos += 1;
    }
    put_u64(line, pos, v.unsigned_abs())
}

/// Writes the arguments of an event with a wide one: each as [`put_arg`]
/// does, a wide one as one decimal number of its limbs (sign-extended when
/// signed), named by `rest` after the first (whose name the head wrote).
/// Out of the plain loops' way: such events are rare, and their numbers
/// cost a division per 19 digits anyway.
#[inline(never)]
fn put_wide_args(
    line: &mut [u8],
    mut pos: usize,
    rest: &[Piece],
    layout: &[(u32, u32)],
    args: &[u64],
) -> usize {
    let mut digits = [0u8; wide::MAX_DECIMAL];
    let mut at = 0;
    for (i, &(signed, width)) in layout.iter().enumerate() {
        if let Some(name) = i.checked_sub(1).and_then(|i| rest.get(i)) {
            pos = name.put(line, pos);
        }
        if width == 0 {
            pos = put_arg(line, pos, args[at], signed);
            at += 1;
        } else {
            let limbs = width.div_ceil(64) as usize;
            let n = wide::put_decimal(&mut digits, &args[at..at + limbs], width, signed != 0);
            line[pos..pos + n].copy_from_slice(&digits[..n]);
            pos += n;
            at += limbs;
        }
    }
    pos
}

/// The decimal digits of 0 to 99, two bytes each (`"00"` to `"99"`).
const PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        pairs[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    pairs
};

/// Writes `v` like [`put_u64`], with a short path for `v < 100`: a FIFO's
/// occupancy is nearly always below 100, and the general formatter costs
/// about 40 instructions where a table lookup and a two-byte store do.
/// Stores up to 20 bytes after `pos`, as [`put_u64`] does.
#[inline(always)]
fn put_small(line: &mut [u8], pos: usize, v: u32) -> usize {
    if v < 100 {
        let pair = PAIRS[v as usize];
        // One digit below 10: skip the pair's leading '0'.
        let one = usize::from(v < 10);
        line[pos..pos + 2].copy_from_slice(&pair);
        line[pos] = pair[one];
        return pos + 2 - one;
    }
    put_u64(line, pos, u64::from(v))
}

/// The error for an index the schema does not have. A function, so that
/// `ok_or_else` builds it only on the error path (an eager `ok_or` built
/// and dropped one per record).
#[cold]
fn unknown(what: &'static str, index: u32) -> RecordError {
    RecordError::UnknownIndex { what, index }
}

/// Whether `name` is a log [`log_names`] writes: two or more digits, `-`,
/// a domain name, `.log`.
fn is_log_name(name: &str) -> bool {
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    digits >= 2 && name[digits..].starts_with('-') && name.ends_with(".log")
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
    fn interest(&self) -> Interest {
        Interest {
            trace: true,
            fifo: FifoInterest::All,
            counter: true,
            tick: false,
            signal: false,
        }
    }

    // Inlined into the writer thread's decoding loop (`replay_batch`):
    // the record's fields stay in registers, no call per record.
    #[inline(always)]
    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        let event = self
            .events
            .get(r.event as usize)
            .ok_or_else(|| unknown("event", r.event))?;
        if event.values != r.args.len() {
            return Err(RecordError::ArgCount {
                event: String::from_utf8_lossy(&event.name).into_owned(),
                declared: event.values,
                got: r.args.len(),
            });
        }
        let head = self
            .trace_heads
            .get(r.unit as usize)
            .ok_or_else(|| unknown("unit", r.unit))?;
        let (log, pos) = start_line(&mut self.logs, r.domain, r.cycle, r.time)?;
        let line = &mut log.chunk[..];
        let mut pos = head.put(line, pos);
        pos = event.head.put(line, pos);
        if let Some(layout) = &event.wide {
            pos = put_wide_args(line, pos, &event.rest, layout, r.args);
        } else if let Some((&first, others)) = r.args.split_first() {
            match &event.signed {
                None => {
                    pos = put_u64(line, pos, first);
                    for (name, &value) in event.rest.iter().zip(others) {
                        pos = name.put(line, pos);
                        pos = put_u64(line, pos, value);
                    }
                }
                Some(widths) => {
                    pos = put_arg(line, pos, first, widths[0]);
                    for ((name, &value), &width) in event.rest.iter().zip(others).zip(&widths[1..])
                    {
                        pos = name.put(line, pos);
                        pos = put_arg(line, pos, value, width);
                    }
                }
            }
        }
        line[pos] = b'\n';
        log.end_line(pos + 1)
    }

    // Inlined into the writer thread's decoding loop (`replay_batch`):
    // the record's fields stay in registers, no call per record.
    #[inline(always)]
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        let TextWriter {
            logs,
            unit_tails,
            fifos,
            ..
        } = self;
        let fifo = fifos
            .get_mut(r.fifo as usize)
            .ok_or_else(|| unknown("fifo", r.fifo))?;
        let kind = &fifo.kinds[r.kind as usize];
        let (head, domain) = (&kind.head, kind.domain);
        let tail = if kind.in_tick {
            let tail = unit_tails
                .get(r.unit as usize)
                .ok_or_else(|| unknown("unit", r.unit))?;
            Some(tail)
        } else {
            None
        };
        let (log, pos) = start_line(logs, domain, r.cycle, r.time)?;
        let line = &mut log.chunk[..];
        let mut pos = head.put(line, pos);
        pos = fifo.put_txn(line, pos, r.txn);
        line[pos..pos + 5].copy_from_slice(b" occ=");
        pos = put_small(line, pos + 5, r.occupancy);
        if let Some(tail) = tail {
            pos = tail.put(line, pos);
        }
        line[pos] = b'\n';
        log.end_line(pos + 1)
    }

    // Inlined into the writer thread's decoding loop (`replay_batch`):
    // the record's fields stay in registers, no call per record.
    #[inline(always)]
    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        let (name, domain) = self
            .counters
            .get(r.counter as usize)
            .ok_or_else(|| unknown("counter", r.counter))?;
        let (log, pos) = start_line(&mut self.logs, *domain, r.cycle, r.time)?;
        let line = &mut log.chunk[..];
        let mut pos = name.put(line, pos);
        pos = put_u64(line, pos, r.value);
        line[pos] = b'\n';
        log.end_line(pos + 1)
    }

    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        for (count, log) in self.manifest.records.iter_mut().zip(&self.logs) {
            *count = log.records;
        }
        for log in &mut self.logs {
            log.write_out()?;
            log.out.flush()?;
        }
        self.manifest.dropped = *dropped;
        self.manifest.complete = true;
        self.write_manifest()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{CounterInfo, DomainInfo, EventInfo, FifoInfo, UnitInfo};
    use crate::time::Time;

    /// The incremental time text equals `Time`'s `Display` over steps of
    /// the period, irregular steps, repeats, steps back, a new denominator
    /// and numerators beyond 64 bits.
    #[test]
    fn incremental_times_format_exactly() {
        let mut t = TimeText::default();
        let mut num: u128 = 137 * 457;
        let mut den = 457u64;
        let mut seed = 7u64;
        for i in 0..20_000u64 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            match (seed >> 60, i % 5_000) {
                (_, 2_500) => num = (1u128 << 64) * 3 + u128::from(seed >> 8),
                (_, 4_000) => den = 1 + (seed >> 40),
                (0, _) => num = num.saturating_sub(u128::from(seed >> 50)),
                (1, _) => num += u128::from(seed >> 20),
                (2..=3, _) => {}
                _ => num += 1_000_000,
            }
            puts_as_display(&mut t, num, den);
        }
    }

    /// Asserts that `t` writes `num / den` ps as `Time`'s `Display` does.
    fn puts_as_display(t: &mut TimeText, num: u128, den: u64) {
        let mut line = [0u8; 160];
        let time = crate::Time::new(num, den).expect("nonzero");
        let end = t.put(&mut line, 3, time);
        assert_eq!(
            std::str::from_utf8(&line[3..end]).expect("ascii"),
            time.to_string(),
            "{num}/{den}"
        );
    }

    /// Fractions from the per-domain cache read as `Display` writes them
    /// (lowest terms): periodic edges over composite denominators, whose
    /// remainders repeat and reduce by different factors, below and above
    /// the table's size, and a common denominator of two clocks.
    #[test]
    fn cached_fractions_format_exactly() {
        for (den, step) in [
            (1326u64, 1_000_000u128),
            (3003, 3_000_000),
            (3003, 1_000_000),
            (302_991, 457 * 663 * 5 + 17),
        ] {
            let mut t = TimeText::default();
            let mut num = 137 * u128::from(den);
            for _ in 0..5_000 {
                puts_as_display(&mut t, num, den);
                num += step;
            }
        }
    }

    /// The short path for small numbers and the general one beyond it
    /// write what `Display` does, at any position, for every value up to
    /// 100,000 and the extremes.
    #[test]
    fn small_numbers_format_exactly() {
        let mut line = [b'x'; 48];
        for v in (0..100_000u32).chain([u32::MAX - 1, u32::MAX]) {
            let at = (v % 7) as usize;
            let end = put_small(&mut line, at, v);
            assert_eq!(&line[at..end], v.to_string().as_bytes(), "{v}");
        }
    }

    /// Transaction ids from the per-FIFO cache read as `Display` writes
    /// them through hits, misses, ids that share a slot (`t` and `t + 32`)
    /// and the slots' initial ids.
    #[test]
    fn cached_transaction_ids_format_exactly() {
        let mut fifo = FifoText {
            kinds: FifoEventKind::ALL.map(|_| FifoKindText {
                head: Piece::new(b""),
                domain: 0,
                in_tick: false,
            }),
            txns: Box::new(std::array::from_fn(|i| TxnText::new(i as u64))),
        };
        let mut line = [b'x'; 64];
        let mut seed = 11u64;
        for i in 0..50_000u64 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let txn = match seed >> 61 {
                0 => i / 6,
                1 => i / 6 + 32,
                2 => seed >> 3,
                3 => u64::MAX - (seed >> 62),
                _ => (i / 6).saturating_sub(seed >> 60),
            };
            let at = (i % 9) as usize;
            let end = fifo.put_txn(&mut line, at, txn);
            assert_eq!(&line[at..end], txn.to_string().as_bytes(), "{txn}");
        }
    }

    /// Names longer than one 16-byte chunk and the extreme numbers give the
    /// same lines as an independent `format!`, so the padded pieces and the
    /// in-place numbers never cut, shift or overrun anything.
    #[test]
    fn long_names_and_extreme_numbers_format_exactly() {
        let long = "top.a_rather_long_instance_name.with_another_level_x";
        let schema = Schema {
            design: "t".to_owned(),
            domains: vec![DomainInfo {
                name: "d".to_owned(),
                period: Time::new(1_000_000, 457).expect("nonzero"),
                phase: Time::ZERO,
            }],
            units: vec![
                UnitInfo {
                    path: long.to_owned(),
                    domain: 0,
                },
                UnitInfo {
                    path: "u".to_owned(),
                    domain: 0,
                },
            ],
            events: vec![EventInfo {
                name: "an_event_name_of_thirty_bytes_".to_owned(),
                args: vec![
                    "a".to_owned(),
                    "an_argument_name_beyond_sixteen".to_owned(),
                    "c".to_owned(),
                ],
                signed_widths: vec![],
                wide_widths: vec![],
            }],
            fifos: vec![FifoInfo {
                path: format!("{long}.port_name"),
                writer_domain: 0,
                reader_domain: 0,
                depth: 16,
            }],
            counters: vec![CounterInfo {
                name: format!("{long}.counter"),
                domain: 0,
            }],
            signals: vec![],
        };
        let dir = std::env::temp_dir().join(format!("chronon-text-unit-{}", std::process::id()));
        let mut w = TextWriter::create(&dir, &schema).expect("create");
        let mut want = Vec::new();
        let times = [
            Time::ZERO,
            Time::new(500_000, 457).expect("nonzero"),
            Time::new(u128::MAX, 3).expect("nonzero"),
            Time::new(u128::MAX, u64::MAX).expect("nonzero"),
        ];
        for (i, &time) in times.iter().enumerate() {
            let cycle = [0, 9, 10, u64::MAX][i];
            let args = [u64::MAX, 0, 10u64.pow(i as u32 * 5)];
            for unit in 0..2u32 {
                w.trace(&TraceRecord {
                    domain: 0,
                    cycle,
                    time,
                    unit,
                    event: 0,
                    args: &args,
                })
                .expect("trace");
                want.push(format!(
                    "{cycle} {time}ps T {} an_event_name_of_thirty_bytes_ a={} \
                     an_argument_name_beyond_sixteen={} c={}",
                    schema.units[unit as usize].path, args[0], args[1], args[2]
                ));
            }
            for (kind, occupancy) in [(FifoEventKind::Write, 16), (FifoEventKind::NotEmpty, 0)] {
                w.fifo(&FifoRecord {
                    fifo: 0,
                    kind,
                    cycle,
                    time,
                    unit: 0,
                    txn: u64::MAX - i as u64,
                    occupancy,
                })
                .expect("fifo");
                let unit = if kind.in_tick() {
                    format!(" unit={long}")
                } else {
                    String::new()
                };
                want.push(format!(
                    "{cycle} {time}ps F {long}.port_name {} txn={} occ={occupancy}{unit}",
                    kind.name(),
                    u64::MAX - i as u64
                ));
            }
            for value in [0, 1, i64::MAX as u64, 1 << 63, u64::MAX] {
                w.counter(&CounterRecord {
                    counter: 0,
                    cycle,
                    time,
                    value,
                })
                .expect("counter");
                want.push(format!("{cycle} {time}ps C {long}.counter {value}"));
            }
        }
        w.finish(&DropCounts::default()).expect("finish");
        let text = fs::read_to_string(dir.join("00-d.log")).expect("log");
        let got: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(got, want);
        let _ = fs::remove_dir_all(&dir);
    }

    /// Signed arguments print sign-extended from their width, whether the
    /// record carries masked raw bits or an already sign-extended value;
    /// unsigned arguments beside them print their raw bits; an event with
    /// only unsigned arguments prints as before.
    #[test]
    fn signed_arguments_print_sign_extended() {
        let names = ["b", "w", "d", "q", "one", "u", "s5"];
        let schema = one_unit(vec![
            EventInfo {
                signed_widths: vec![8, 16, 32, 64, 1, 0, 5],
                ..EventInfo::plain("mixed", &names)
            },
            EventInfo {
                signed_widths: vec![0],
                ..EventInfo::plain("plain", &["u"])
            },
        ]);
        let dir = std::env::temp_dir().join(format!("chronon-text-signed-{}", std::process::id()));
        let mut w = TextWriter::create(&dir, &schema).expect("create");
        // (values as records may carry them, the expected text).
        let cases: [([u64; 7], &str); 4] = [
            (
                [0xfd, 0x8000, 0xffff_ffff, u64::MAX, 1, u64::MAX, 0x1f],
                "b=-3 w=-32768 d=-1 q=-1 one=-1 u=18446744073709551615 s5=-1",
            ),
            (
                [
                    (-3i64) as u64,
                    (-2i64) as u64,
                    0x8000_0000,
                    1 << 63,
                    0,
                    7,
                    0x0f,
                ],
                "b=-3 w=-2 d=-2147483648 q=-9223372036854775808 one=0 u=7 s5=15",
            ),
            (
                [0x7f, 0x7fff, 0x7fff_ffff, i64::MAX as u64, 0, 0, 0x10],
                "b=127 w=32767 d=2147483647 q=9223372036854775807 one=0 u=0 s5=-16",
            ),
            ([0, 5, 0, 0, 0, 1, 0], "b=0 w=5 d=0 q=0 one=0 u=1 s5=0"),
        ];
        let mut want = Vec::new();
        for (cycle, (args, text)) in cases.iter().enumerate() {
            trace_at(&mut w, cycle, 0, args).expect("trace");
            want.push(format!("{cycle} {}ps T top mixed {text}", cycle * 1000));
            trace_at(&mut w, cycle, 1, &args[5..6]).expect("trace");
            want.push(format!(
                "{cycle} {}ps T top plain u={}",
                cycle * 1000,
                args[5]
            ));
        }
        finish_and_compare(w, &dir, &want);
    }

    /// A schema of one domain `d` (1 ns period) and one unit `top`.
    fn one_unit(events: Vec<EventInfo>) -> Schema {
        Schema {
            design: "t".to_owned(),
            domains: vec![DomainInfo {
                name: "d".to_owned(),
                period: Time::new(1000, 1).expect("nonzero"),
                phase: Time::ZERO,
            }],
            units: vec![UnitInfo {
                path: "top".to_owned(),
                domain: 0,
            }],
            events,
            ..Schema::default()
        }
    }

    /// A trace record of [`one_unit`]'s unit at edge `cycle`.
    fn trace_at(
        w: &mut TextWriter,
        cycle: usize,
        event: u32,
        args: &[u64],
    ) -> Result<(), RecordError> {
        w.trace(&TraceRecord {
            domain: 0,
            cycle: cycle as u64,
            time: Time::new(1000 * cycle as u128, 1).expect("nonzero"),
            unit: 0,
            event,
            args,
        })
    }

    /// Finishes `w` and compares the lines of [`one_unit`]'s log in `dir`
    /// with `want`.
    fn finish_and_compare(mut w: TextWriter, dir: &Path, want: &[String]) {
        w.finish(&DropCounts::default()).expect("finish");
        let text = fs::read_to_string(dir.join("00-d.log")).expect("log");
        let got: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(got, want);
        let _ = fs::remove_dir_all(dir);
    }

    /// An argument wider than 64 bits prints as one decimal number of its
    /// limbs, sign-extended when signed, between narrow ones; the longest
    /// values (1024 bits, both signs) fit the line.
    #[test]
    fn wide_arguments_print_whole() {
        let schema = one_unit(vec![EventInfo {
            signed_widths: vec![0, 8, 128, 0, 1024],
            wide_widths: vec![65, 0, 128, 1024, 1024],
            ..EventInfo::plain("w", &["a", "n", "s", "big", "sbig"])
        }]);
        assert_eq!(schema.validate(), Ok(()));
        let dir = std::env::temp_dir().join(format!("chronon-text-wide-{}", std::process::id()));
        let mut w = TextWriter::create(&dir, &schema).expect("create");
        let mut min = [0u64; 16];
        min[15] = 1 << 63;
        let cases: [(Vec<u64>, String); 2] = [
            (
                [
                    &[u64::MAX, 1][..],
                    &[0xfd],
                    &[0, 1 << 63],
                    &[u64::MAX; 16],
                    &min,
                ]
                .concat(),
                format!(
                    "a=36893488147419103231 n=-3 s={} big={} sbig=-{}",
                    i128::MIN,
                    "179769313486231590772930519078902473361797697894230657273430081157732675805500963132708477322407536021120113879871393357658789768814416622492847430639474124377767893424865485276302219601246094119453082952085005768838150682342462881473913110540827237163350510684586298239947245938479716304835356329624224137215",
                    "89884656743115795386465259539451236680898848947115328636715040578866337902750481566354238661203768010560056939935696678829394884407208311246423715319737062188883946712432742638151109800623047059726541476042502884419075341171231440736956555270413618581675255342293149119973622969239858152417678164812112068608",
                ),
            ),
            (
                [&[7, 0][..], &[5], &[5, 5], &[0; 16], &[1; 16]].concat(),
                format!(
                    "a=7 n=5 s=92233720368547758085 big=0 sbig={}",
                    (0..16).fold(num_bigint::BigUint::default(), |acc, _| (acc << 64u32)
                        + 1u8)
                ),
            ),
        ];
        let mut want = Vec::new();
        for (cycle, (args, text)) in cases.iter().enumerate() {
            trace_at(&mut w, cycle, 0, args).expect("trace");
            want.push(format!("{cycle} {}ps T top w {text}", cycle * 1000));
        }
        // A record with the arguments' count rather than the limbs' fails.
        assert!(matches!(
            trace_at(&mut w, 2, 0, &[0; 5]),
            Err(RecordError::ArgCount {
                declared: 37,
                got: 5,
                ..
            })
        ));
        finish_and_compare(w, &dir, &want);
    }
}
