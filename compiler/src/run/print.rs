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
use chronon_record::Time;
use chronon_runtime::{FifoEvent, Observation, Timestamp, TraceRecord, TraceSink};

use crate::ir::{PrintFormat, Program, Ty};

/// Where `print` lines go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrintTo {
    /// Standard output (the default).
    #[default]
    Stdout,
    /// Standard error (`chronc run --json`, whose report owns standard
    /// output).
    Stderr,
    /// Nowhere (`--quiet-print`): no sink is installed for them.
    Quiet,
}

/// Whether `program` has any `print` statement.
pub fn prints(program: &Program) -> bool {
    program.traces.iter().any(|t| t.print.is_some())
}

/// The first write error of a print output, shared with the run that
/// reports it.
pub type PrintError = Rc<RefCell<Option<String>>>;

/// The print sink (see the module documentation).
pub struct PrintSink {
    /// Per trace id: the print point's format and argument types, or
    /// `None` for a trace point (forwarded).
    points: Vec<Option<(PrintFormat, Vec<Ty>)>>,
    /// Per unit, its instance path; per domain, its name.
    paths: Vec<String>,
    domains: Vec<String>,
    out: std::io::BufWriter<Box<dyn Write>>,
    /// The line being built (reused: no allocation per line once grown).
    line: Vec<u8>,
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
        let points = program
            .traces
            .iter()
            .map(|t| {
                let tys = t.args.iter().map(|(_, ty)| *ty).collect();
                t.print.clone().map(|f| (f, tys))
            })
            .collect();
        let inner_traces = inner
            .as_ref()
            .is_some_and(|s| s.observation(program.fifos.len()).traces);
        PrintSink {
            points,
            paths: program.units.iter().map(|u| u.path.clone()).collect(),
            domains: program.domains.iter().map(|d| d.name.clone()).collect(),
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            line: Vec::with_capacity(256),
            inner,
            inner_traces,
            error,
        }
    }
}

/// Formats one print record into `line` (cleared first).
fn format_line(
    line: &mut Vec<u8>,
    (domains, paths): (&[String], &[String]),
    r: &TraceRecord<'_>,
    format: &PrintFormat,
    tys: &[Ty],
) {
    line.clear();
    let time = u64::try_from(r.time.ticks_per_ps)
        .ok()
        .and_then(|tpp| Time::new(r.time.ticks, tpp));
    let domain = domains.get(r.domain as usize).map_or("?", |d| d);
    let path = paths.get(r.unit as usize).map_or("?", |p| p);
    let _ = match time {
        Some(t) => write!(line, "{t}ps {domain} {} {path}: ", r.cycle),
        None => write!(line, "{} {domain} {} {path}: ", r.time, r.cycle),
    };
    let mut values = r.args.iter().zip(tys).zip(&format.bools);
    for piece in &format.pieces {
        match piece {
            FormatPiece::Text(text) => line.extend_from_slice(text.as_bytes()),
            FormatPiece::Value(radix) => {
                if let Some(((&v, ty), &is_bool)) = values.next() {
                    write_value(line, v, *ty, is_bool, *radix);
                }
            }
        }
    }
    line.push(b'\n');
}

/// Writes `v`, of type `ty`, as `radix` says.
fn write_value(line: &mut Vec<u8>, v: u64, ty: Ty, is_bool: bool, radix: Radix) {
    let bits = u32::from(ty.width).clamp(1, 64);
    let masked = if bits == 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    };
    let _ = match radix {
        Radix::Decimal if is_bool => write!(line, "{}", masked != 0),
        Radix::Decimal if ty.signed => {
            let shift = 64 - bits;
            write!(line, "{}", ((masked << shift) as i64) >> shift)
        }
        Radix::Decimal => write!(line, "{masked}"),
        Radix::Hex => write!(line, "{masked:x}"),
        Radix::HexPrefixed => write!(line, "{masked:#x}"),
        Radix::Binary => write!(line, "{masked:b}"),
        Radix::BinaryPrefixed => write!(line, "{masked:#b}"),
    };
}

impl TraceSink for PrintSink {
    fn record(&mut self, r: &TraceRecord<'_>) {
        let point = self.points.get(r.event as usize).and_then(Option::as_ref);
        let Some((format, tys)) = point else {
            if self.inner_traces
                && let Some(inner) = &mut self.inner
            {
                inner.record(r);
            }
            return;
        };
        if self.error.borrow().is_some() {
            return;
        }
        let names = (&self.domains[..], &self.paths[..]);
        format_line(&mut self.line, names, r, format, tys);
        if let Err(e) = self.out.write_all(&self.line) {
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

    fn fifo_occupancy(&mut self, fifo: u32, time: Timestamp, occupancy: u32) {
        if let Some(inner) = &mut self.inner {
            inner.fifo_occupancy(fifo, time, occupancy);
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
        let mut line = Vec::new();
        write_value(&mut line, v, Ty { width, signed }, is_bool, radix);
        String::from_utf8(line).expect("ascii")
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
