//! The output of `print` statements: a trace sink that turns the records
//! of the design's print points into lines (`<time>ps <domain> <cycle>
//! <path>: <text>`) and hands every other call to the sink it wraps (a
//! recording's, when there is one). The runtime gives it the records in
//! the contract's canonical order at the end of each instant, the same on
//! both engines, so the lines are too. A write error stops the printing
//! and the run, and is kept for the report.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use chronon_lang::design::{FormatPiece, Radix};
use chronon_record::{Time, wide};
use chronon_runtime::{FifoEvent, Observation, Timestamp, TraceRecord, TraceSink};

use crate::ir::{PrintFormat, Program, Ty};

/// Where `print` lines go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PrintTo {
    /// Standard output (the default).
    #[default]
    Stdout,
    /// Standard error (`chronc run --json`, whose report owns standard
    /// output).
    Stderr,
    /// Nowhere (`--quiet-print`): no sink is installed for them.
    Quiet,
    /// A buffer the caller reads after the run (tests of the library).
    Buffer(PrintBuffer),
}

impl PrintTo {
    /// The output the lines of `program` go to; `None` when they go
    /// nowhere (quiet, or the program has no `print`).
    pub fn writer(&self, program: &Program) -> Option<Box<dyn Write>> {
        if !prints(program) {
            return None;
        }
        match self {
            PrintTo::Stdout => Some(Box::new(std::io::stdout())),
            PrintTo::Stderr => Some(Box::new(std::io::stderr())),
            PrintTo::Quiet => None,
            PrintTo::Buffer(b) => Some(Box::new(b.clone())),
        }
    }
}

/// A shared, growable buffer of printed bytes.
#[derive(Clone, Debug, Default)]
pub struct PrintBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl PrintBuffer {
    /// What was printed so far.
    pub fn contents(&self) -> Vec<u8> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl PartialEq for PrintBuffer {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PrintBuffer {}

impl Write for PrintBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `program` has any `print` statement.
pub fn prints(program: &Program) -> bool {
    program.traces.iter().any(|t| t.print.is_some())
}

/// The first write error of a print output, shared with the run that
/// reports it.
pub type PrintError = Rc<RefCell<Option<String>>>;

/// What turns a program's print records into lines: per trace id, the
/// print point's format and argument types (`None` for a trace point);
/// the units' paths and the domains' names; the line being built (reused:
/// no allocation per line once grown).
struct Formatter {
    points: Vec<Option<(PrintFormat, Vec<Ty>)>>,
    paths: Vec<String>,
    domains: Vec<String>,
    line: Vec<u8>,
}

impl Formatter {
    fn new(program: &Program) -> Formatter {
        Formatter {
            points: program
                .traces
                .iter()
                .map(|t| {
                    let tys = t.args.iter().map(|(_, ty)| *ty).collect();
                    t.print.clone().map(|f| (f, tys))
                })
                .collect(),
            paths: program.units.iter().map(|u| u.path.clone()).collect(),
            domains: program.domains.iter().map(|d| d.name.clone()).collect(),
            line: Vec::with_capacity(256),
        }
    }

    /// Whether `r` is a print record.
    fn is_print(&self, r: &TraceRecord<'_>) -> bool {
        self.points
            .get(r.event as usize)
            .is_some_and(Option::is_some)
    }

    /// The line of print record `r` (empty for any other record).
    fn format(&mut self, r: &TraceRecord<'_>) -> &[u8] {
        self.line.clear();
        if let Some(Some((format, tys))) = self.points.get(r.event as usize) {
            let names = (&self.domains[..], &self.paths[..]);
            format_line(&mut self.line, names, r, format, tys);
        }
        &self.line
    }
}

/// The print sink (see the module documentation).
pub struct PrintSink {
    lines: Formatter,
    out: std::io::BufWriter<Box<dyn Write>>,
    inner: Option<Box<dyn TraceSink>>,
    /// Whether `inner` takes trace records.
    inner_traces: bool,
    error: PrintError,
}

impl PrintSink {
    /// Prints `program`'s print records to `out`, passing everything else
    /// to `inner`.
    pub fn new(
        program: &Program,
        out: Box<dyn Write>,
        inner: Option<Box<dyn TraceSink>>,
        error: PrintError,
    ) -> PrintSink {
        let inner_traces = inner
            .as_ref()
            .is_some_and(|s| s.observation(program.fifos.len()).traces);
        PrintSink {
            lines: Formatter::new(program),
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            inner,
            inner_traces,
            error,
        }
    }
}

/// The lines one worker of a parallel run printed since it last handed
/// them over, each with what orders it among every worker's lines: the
/// instant's time, the domain and the unit's rank in path order (the
/// runtime's canonical order within an instant; a unit's lines keep their
/// program order, and a unit runs on one worker).
#[derive(Debug, Default)]
pub struct PrintBatch {
    /// The lines' text, one after another.
    pub text: Vec<u8>,
    /// Per line, in order: its key and where its text ends.
    pub lines: Vec<LineKey>,
}

/// Where a worker's print line goes in the serial run's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineKey {
    /// The instant's time in the runtime's ticks.
    pub ticks: u128,
    /// The printing unit's domain.
    pub domain: u32,
    /// The printing unit's rank in path order.
    pub rank: u32,
    /// Where the line's text ends in [`PrintBatch::text`] (not part of
    /// the order: the first three fields never tie across workers).
    pub end: usize,
}

/// The print lines of one worker of a parallel run: formatted as the
/// serial run's [`PrintSink`] would, kept with their [`LineKey`]s in a
/// batch the worker hands over after each slice of simulated time.
pub struct PrintCapture {
    lines: Formatter,
    ranks: Vec<u32>,
    batch: Rc<RefCell<PrintBatch>>,
    /// Lines of instants at or before this time (ticks) are not kept: a
    /// worker that runs again has handed them over already.
    skip_through: Option<u128>,
}

impl PrintCapture {
    /// Captures `program`'s print lines into `batch`, but for the
    /// instants at or before `skip_through`.
    pub fn new(
        program: &Program,
        batch: Rc<RefCell<PrintBatch>>,
        skip_through: Option<u128>,
    ) -> PrintCapture {
        PrintCapture {
            lines: Formatter::new(program),
            ranks: path_ranks(program),
            batch,
            skip_through,
        }
    }
}

/// Per unit, its rank in instance path order: the runtime's canonical
/// order of units within a domain's instant (`runtime/src/schedule.rs`
/// compares whole paths the same way).
pub(crate) fn path_ranks(program: &Program) -> Vec<u32> {
    let mut by_path: Vec<usize> = (0..program.units.len()).collect();
    by_path.sort_by(|&a, &b| program.units[a].path.cmp(&program.units[b].path));
    let mut ranks = vec![0u32; by_path.len()];
    for (r, &u) in by_path.iter().enumerate() {
        ranks[u] = r as u32;
    }
    ranks
}

impl TraceSink for PrintCapture {
    fn record(&mut self, r: &TraceRecord<'_>) {
        if !self.lines.is_print(r) || self.skip_through.is_some_and(|s| r.time.ticks <= s) {
            return;
        }
        let line = self.lines.format(r);
        let mut batch = self.batch.borrow_mut();
        batch.text.extend_from_slice(line);
        let key = LineKey {
            ticks: r.time.ticks,
            domain: r.domain,
            rank: self.ranks.get(r.unit as usize).copied().unwrap_or(u32::MAX),
            end: batch.text.len(),
        };
        batch.lines.push(key);
    }
}

/// Appends the line of one print record to `line`.
fn format_line(
    line: &mut Vec<u8>,
    (domains, paths): (&[String], &[String]),
    r: &TraceRecord<'_>,
    format: &PrintFormat,
    tys: &[Ty],
) {
    let time = u64::try_from(r.time.ticks_per_ps)
        .ok()
        .and_then(|tpp| Time::new(r.time.ticks, tpp));
    let domain = domains.get(r.domain as usize).map_or("?", |d| d);
    let path = paths.get(r.unit as usize).map_or("?", |p| p);
    let _ = match time {
        Some(t) => write!(line, "{t}ps {domain} {} {path}: ", r.cycle),
        None => write!(line, "{} {domain} {} {path}: ", r.time, r.cycle),
    };
    let mut arg = 0;
    let mut values = format.bools.iter().zip(&format.wide);
    for piece in &format.pieces {
        match piece {
            FormatPiece::Text(text) => line.extend_from_slice(text.as_bytes()),
            FormatPiece::Value(radix) => {
                let Some((&is_bool, wide)) = values.next() else {
                    continue;
                };
                let (shape, n) = match (wide, tys.get(arg)) {
                    (Some(w), _) => (*w, w.0.div_ceil(64) as usize),
                    (None, Some(ty)) => ((u32::from(ty.width), ty.signed), 1),
                    (None, None) => continue,
                };
                if let Some(limbs) = r.args.get(arg..arg + n) {
                    write_value(line, limbs, shape, is_bool, *radix);
                }
                arg += n;
            }
        }
    }
    line.push(b'\n');
}

/// The most limbs a value has (`u1024`).
const MAX_LIMBS: usize = 16;

/// Writes the value held in `limbs` (least significant first; one for a
/// value of at most 64 bits), `width` bits wide, as `radix` says: a signed
/// value's decimal form negative where its sign bit is set, every other
/// form its bits. Works in fixed buffers: no allocation per value.
fn write_value(
    line: &mut Vec<u8>,
    limbs: &[u64],
    (width, signed): (u32, bool),
    is_bool: bool,
    radix: Radix,
) {
    let width = width.clamp(1, 64 * MAX_LIMBS as u32);
    let n = (width.div_ceil(64) as usize).min(limbs.len()).max(1);
    let mut buf = [0u64; MAX_LIMBS];
    buf[..n.min(limbs.len())].copy_from_slice(&limbs[..n.min(limbs.len())]);
    let top_bits = width - 64 * (n as u32 - 1);
    if top_bits < 64 {
        buf[n - 1] &= (1u64 << top_bits) - 1;
    }
    if is_bool && radix == Radix::Decimal {
        let _ = write!(line, "{}", buf[0] != 0);
        return;
    }
    match radix {
        Radix::Decimal => {
            let mut digits = [0u8; wide::MAX_DECIMAL];
            let len = wide::put_decimal(&mut digits, &buf[..n], width, signed);
            line.extend_from_slice(&digits[..len]);
        }
        Radix::Hex | Radix::HexPrefixed => {
            if radix == Radix::HexPrefixed {
                line.extend_from_slice(b"0x");
            }
            write_digits(line, &buf[..n], |line, v, first| {
                let _ = if first {
                    write!(line, "{v:x}")
                } else {
                    write!(line, "{v:016x}")
                };
            });
        }
        Radix::Binary | Radix::BinaryPrefixed => {
            if radix == Radix::BinaryPrefixed {
                line.extend_from_slice(b"0b");
            }
            write_digits(line, &buf[..n], |line, v, first| {
                let _ = if first {
                    write!(line, "{v:b}")
                } else {
                    write!(line, "{v:064b}")
                };
            });
        }
    }
}

/// The limbs from the most significant non-zero one down, the first
/// without leading zeros (a zero value is its one limb).
fn write_digits(line: &mut Vec<u8>, limbs: &[u64], mut put: impl FnMut(&mut Vec<u8>, u64, bool)) {
    let top = limbs.iter().rposition(|&l| l != 0).unwrap_or(0);
    for (k, &l) in limbs[..=top].iter().rev().enumerate() {
        put(line, l, k == 0);
    }
}

impl TraceSink for PrintSink {
    fn record(&mut self, r: &TraceRecord<'_>) {
        if !self.lines.is_print(r) {
            if self.inner_traces
                && let Some(inner) = &mut self.inner
            {
                inner.record(r);
            }
            return;
        }
        if self.error.borrow().is_some() {
            return;
        }
        let line = self.lines.format(r);
        if let Err(e) = self.out.write_all(line) {
            *self.error.borrow_mut() = Some(format!("print output: {e}"));
        }
    }

    fn observes_commits(&self) -> bool {
        self.inner.as_ref().is_some_and(|s| s.observes_commits())
    }

    fn observation(&self, fifos: usize) -> Observation {
        let mut o = match &self.inner {
            Some(inner) => inner.observation(fifos),
            None => Observation {
                traces: true,
                fifo: Vec::new(),
                commits: false,
                occupancy_watch: Vec::new(),
            },
        };
        o.traces = true;
        o
    }

    fn fifo(&mut self, event: &FifoEvent) {
        if let Some(inner) = &mut self.inner {
            inner.fifo(event);
        }
    }

    fn commit_events(&mut self, domain: u32, time: Timestamp, events: &[FifoEvent]) {
        if let Some(inner) = &mut self.inner {
            inner.commit_events(domain, time, events);
        }
    }

    fn fifo_occupancy(&mut self, fifo: u32, domain: u32, time: Timestamp, occupancy: u32) {
        if let Some(inner) = &mut self.inner {
            inner.fifo_occupancy(fifo, domain, time, occupancy);
        }
    }

    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        if let Some(inner) = &mut self.inner {
            inner.domain_committed(domain, cycle, time);
        }
    }

    fn stop_requested(&self) -> bool {
        self.error.borrow().is_some() || self.inner.as_ref().is_some_and(|s| s.stop_requested())
    }

    fn stop_poll_interval(&self) -> u32 {
        self.inner.as_ref().map_or(1, |s| s.stop_poll_interval())
    }
}

impl Drop for PrintSink {
    fn drop(&mut self) {
        if let Err(e) = self.out.flush() {
            let mut error = self.error.borrow_mut();
            if error.is_none() {
                *error = Some(format!("print output: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(v: u64, width: u8, signed: bool, is_bool: bool, radix: Radix) -> String {
        wide(&[v], u32::from(width), signed, radix, is_bool)
    }

    fn wide(limbs: &[u64], width: u32, signed: bool, radix: Radix, is_bool: bool) -> String {
        let mut line = Vec::new();
        write_value(&mut line, limbs, (width, signed), is_bool, radix);
        String::from_utf8(line).expect("ascii")
    }

    #[test]
    fn wide_values_show_whole_against_an_independent_bignum() {
        use num_bigint::{BigInt, BigUint};
        let cases: [(&[u64], u32); 5] = [
            (&[u64::MAX, u64::MAX], 128),
            (&[0, 1], 65),
            (&[0x1234, 0, 0x8000_0000_0000_0000], 192),
            (
                &[7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 << 63],
                1024,
            ),
            (&[5, 0], 127),
        ];
        for (limbs, width) in cases {
            let bits = BigUint::from_slice(
                &limbs
                    .iter()
                    .flat_map(|l| [*l as u32, (*l >> 32) as u32])
                    .collect::<Vec<_>>(),
            );
            assert_eq!(
                wide(limbs, width, false, Radix::Decimal, false),
                bits.to_string()
            );
            assert_eq!(
                wide(limbs, width, false, Radix::Hex, false),
                format!("{bits:x}")
            );
            assert_eq!(
                wide(limbs, width, false, Radix::Binary, false),
                format!("{bits:b}")
            );
            let signed = if bits.bit(u64::from(width) - 1) {
                BigInt::from(bits) - (BigInt::from(1) << width)
            } else {
                BigInt::from(bits)
            };
            assert_eq!(
                wide(limbs, width, true, Radix::Decimal, false),
                signed.to_string()
            );
        }
    }

    #[test]
    fn values_show_in_each_radix_by_their_type() {
        assert_eq!(shown(1, 1, false, true, Radix::Decimal), "true");
        assert_eq!(shown(0, 1, false, true, Radix::Decimal), "false");
        assert_eq!(shown(1, 1, false, true, Radix::Binary), "1");
        assert_eq!(shown(0xff, 8, true, false, Radix::Decimal), "-1");
        // A sign-extended word shows the same as a masked one.
        assert_eq!(shown(u64::MAX, 8, true, false, Radix::Decimal), "-1");
        assert_eq!(shown(u64::MAX, 8, true, false, Radix::Hex), "ff");
        assert_eq!(shown(0x80, 8, true, false, Radix::Decimal), "-128");
        assert_eq!(shown(200, 8, false, false, Radix::Decimal), "200");
        assert_eq!(
            shown(0xbeef, 16, false, false, Radix::HexPrefixed),
            "0xbeef"
        );
        assert_eq!(shown(5, 4, false, false, Radix::Binary), "101");
        assert_eq!(shown(5, 4, false, false, Radix::BinaryPrefixed), "0b101");
        assert_eq!(
            shown(u64::MAX, 64, false, false, Radix::Decimal),
            u64::MAX.to_string()
        );
        assert_eq!(
            shown(1 << 63, 64, true, false, Radix::Decimal),
            i64::MIN.to_string()
        );
    }
}
