//! VCD waveforms: registers, ports and FIFO occupancy under a scope per
//! instance, selected by glob patterns.
//!
//! The timescale is 1 fs. A change is dumped at its exact time rounded down
//! to a whole femtosecond (contract §8): the error is in [0, 1 fs) and never
//! accumulates, and changes keep their order. Two changes of one signal
//! within one femtosecond show as the later value. A value wider than 64
//! bits arrives as one signal per limb ([`crate::SignalInfo::limb`]) and is
//! one variable: its limbs' changes of one instant make one change.

use std::path::{Path, PathBuf};

use crate::error::RecordError;
use crate::output::{ChunkedOutput, RecordOutput, push_u128, whole_lines};
use crate::record::{FifoRecord, SignalRecord};
use crate::recorder::{DropCounts, FifoInterest, Interest, Recorder};
use crate::schema::Schema;
use crate::time::Time;

/// Options of the VCD recorder.
#[derive(Clone, Debug, Default)]
pub struct VcdConfig {
    /// Glob patterns (`*` any run of characters, `?` one) over full names:
    /// `<unit path>.<signal>` and `<fifo path>.occupancy`. Empty: all.
    pub patterns: Vec<String>,
}

/// One dumped variable.
struct Var {
    id: Vec<u8>,
    width: u32,
    last: u64,
}

/// One dumped variable of a value wider than 64 bits.
struct WideVar {
    id: Vec<u8>,
    /// Its limbs now, least significant first.
    limbs: Box<[u64]>,
}

/// What a signal feeds.
enum SignalVar {
    /// A variable of its own.
    Narrow(Var),
    /// Limb `limb` of wide variable `var`.
    Limb { var: u32, limb: u32 },
}

/// The VCD recorder; changes must arrive in time order.
pub struct VcdWriter {
    out: ChunkedOutput,
    signals: Vec<Option<SignalVar>>,
    fifos: Vec<Option<Var>>,
    wide: Vec<WideVar>,
    /// A wide variable whose limbs changed at this time and that is not
    /// written yet: the instant's other limb changes may still come.
    pending: Option<(u32, Time)>,
    now_fs: u128,
    last_time: Time,
}

/// Whether `name` matches the glob `pattern`.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// The printable VCD identifier of variable `n`.
fn identifier(mut n: usize) -> Vec<u8> {
    let mut id = Vec::new();
    loop {
        id.push(b'!' + (n % 94) as u8);
        n /= 94;
        if n == 0 {
            return id;
        }
        n -= 1;
    }
}

impl VcdWriter {
    /// Creates (truncating) `path`.
    pub fn create(
        path: &Path,
        schema: &Schema,
        config: &VcdConfig,
    ) -> Result<VcdWriter, RecordError> {
        schema.validate()?;
        let out = ChunkedOutput::create(path, whole_lines)?;
        Self::start(out, schema, config)
    }

    /// Writes to `output`; `name` names it in errors.
    pub fn with_output(
        output: Box<dyn RecordOutput>,
        name: PathBuf,
        schema: &Schema,
        config: &VcdConfig,
    ) -> Result<VcdWriter, RecordError> {
        schema.validate()?;
        Self::start(
            ChunkedOutput::new(output, name, whole_lines),
            schema,
            config,
        )
    }

    fn start(
        mut out: ChunkedOutput,
        schema: &Schema,
        config: &VcdConfig,
    ) -> Result<VcdWriter, RecordError> {
        let selected = |name: &str| {
            config.patterns.is_empty() || config.patterns.iter().any(|p| glob_match(p, name))
        };
        // (scope path, variable name, width, which slot)
        let mut vars: Vec<(Vec<&str>, &str, u32, Slot)> = Vec::new();
        for (i, s) in schema.signals.iter().enumerate() {
            let unit = &schema.units[s.unit as usize].path;
            // A wide value is one variable, declared at its limb 0.
            if s.limb == 0 && selected(&format!("{unit}.{}", s.name)) {
                vars.push((unit.split('.').collect(), &s.name, s.width, Slot::Signal(i)));
            }
        }
        for (i, f) in schema.fifos.iter().enumerate() {
            if selected(&format!("{}.occupancy", f.path)) {
                let width = (32 - f.depth.leading_zeros()).max(1);
                vars.push((
                    f.path.split('.').collect(),
                    "occupancy",
                    width,
                    Slot::Fifo(i),
                ));
            }
        }
        vars.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)));
        let mut signals: Vec<Option<SignalVar>> = schema.signals.iter().map(|_| None).collect();
        let mut wide: Vec<WideVar> = Vec::new();
        let mut fifos: Vec<Option<Var>> = schema.fifos.iter().map(|_| None).collect();
        let mut head = String::new();
        head.push_str(
            "$comment\n  Chronon VCD. Timescale 1 fs: every change is at its exact time rounded\n  \
             down to a whole femtosecond; the error is in [0, 1 fs) and never accumulates.\n$end\n",
        );
        head.push_str("$timescale 1fs $end\n");
        head.push_str(&format!("$scope module {} $end\n", schema.design));
        let mut open: Vec<&str> = Vec::new();
        let mut dumpvars = String::new();
        for (n, (scope, name, width, slot)) in vars.iter().enumerate() {
            let common = open.iter().zip(scope).take_while(|(a, b)| a == b).count();
            for _ in common..open.len() {
                head.push_str("$upscope $end\n");
            }
            open.truncate(common);
            for seg in &scope[common..] {
                head.push_str(&format!("$scope module {seg} $end\n"));
                open.push(seg);
            }
            let id = identifier(n);
            let id_text = String::from_utf8(id.clone()).expect("identifiers are ASCII");
            head.push_str(&format!("$var wire {width} {id_text} {name} $end\n"));
            if *width == 1 {
                dumpvars.push_str(&format!("0{id_text}\n"));
            } else {
                dumpvars.push_str(&format!("b0 {id_text}\n"));
            }
            let var = Var {
                id,
                width: *width,
                last: 0,
            };
            match slot {
                Slot::Signal(i) if *width > 64 => {
                    let w = wide.len() as u32;
                    let limbs = width.div_ceil(64);
                    for limb in 0..limbs {
                        if let Some(entry) = signals.get_mut(i + limb as usize) {
                            *entry = Some(SignalVar::Limb { var: w, limb });
                        }
                    }
                    wide.push(WideVar {
                        id: var.id,
                        limbs: vec![0; limbs as usize].into_boxed_slice(),
                    });
                }
                Slot::Signal(i) => signals[*i] = Some(SignalVar::Narrow(var)),
                Slot::Fifo(i) => fifos[*i] = Some(var),
            }
        }
        for _ in 0..open.len() + 1 {
            head.push_str("$upscope $end\n");
        }
        head.push_str("$enddefinitions $end\n#0\n$dumpvars\n");
        head.push_str(&dumpvars);
        head.push_str("$end\n");
        out.buf().extend_from_slice(head.as_bytes());
        Ok(VcdWriter {
            out,
            signals,
            fifos,
            wide,
            pending: None,
            now_fs: 0,
            last_time: Time::ZERO,
        })
    }

    /// Writes the pending wide variable's value, if one is pending.
    fn flush_wide(&mut self) -> Result<(), RecordError> {
        let Some((w, time)) = self.pending.take() else {
            return Ok(());
        };
        self.out.check()?;
        if time < self.last_time {
            return Err(RecordError::OutOfOrder {
                time: time.to_string(),
                last: self.last_time.to_string(),
            });
        }
        let fs = time
            .floor_fs()
            .ok_or_else(|| RecordError::TimeOverflow(time.to_string()))?;
        self.last_time = time;
        let var = &self.wide[w as usize];
        let buf = self.out.buf();
        if fs > self.now_fs {
            self.now_fs = fs;
            buf.push(b'#');
            push_u128(buf, fs);
            buf.push(b'\n');
        }
        buf.push(b'b');
        let top = var.limbs.iter().rposition(|&l| l != 0).unwrap_or(0);
        for (k, limb) in var.limbs[..=top].iter().rev().enumerate() {
            let bytes = limb.to_be_bytes();
            let n = if k == 0 {
                (64 - limb.leading_zeros()).max(1) as usize
            } else {
                64
            };
            let mut digits = [0u8; 64];
            for i in (64 - n) / 8..8 {
                digits[8 * i..8 * i + 8].copy_from_slice(&BINARY[usize::from(bytes[i])]);
            }
            buf.extend_from_slice(&digits[64 - n..]);
        }
        buf.push(b' ');
        buf.extend_from_slice(&var.id);
        buf.push(b'\n');
        self.out.end_record()
    }

    /// Takes a change of limb `limb` of wide variable `w` at `time`.
    fn limb_change(
        &mut self,
        w: u32,
        limb: u32,
        time: Time,
        value: u64,
    ) -> Result<(), RecordError> {
        let Some(var) = self.wide.get(w as usize) else {
            return Ok(());
        };
        if var.limbs.get(limb as usize) == Some(&value) {
            return Ok(());
        }
        if let Some((p, t)) = self.pending
            && (p != w || t != time)
        {
            self.flush_wide()?;
        }
        if let Some(l) = self.wide[w as usize].limbs.get_mut(limb as usize) {
            *l = value;
        }
        self.pending = Some((w, time));
        Ok(())
    }

    #[inline]
    fn change(
        out: &mut ChunkedOutput,
        now_fs: &mut u128,
        last_time: &mut Time,
        var: &mut Var,
        time: Time,
        value: u64,
    ) -> Result<(), RecordError> {
        out.check()?;
        // Changes come in groups at one instant: the same time as the last
        // change (same parts) needs neither the exact comparison nor the
        // division, and `now_fs` is already its femtosecond.
        let same = time.num() == last_time.num() && time.den() == last_time.den();
        if !same && time < *last_time {
            return Err(RecordError::OutOfOrder {
                time: time.to_string(),
                last: last_time.to_string(),
            });
        }
        let value = if var.width == 64 {
            value
        } else {
            value & ((1 << var.width) - 1)
        };
        if value == var.last {
            return Ok(());
        }
        let new_fs = if same {
            None
        } else {
            let fs = time
                .floor_fs()
                .ok_or_else(|| RecordError::TimeOverflow(time.to_string()))?;
            *last_time = time;
            Some(fs)
        };
        var.last = value;
        let buf = out.buf();
        // `now_fs` is always the femtosecond of `last_time`.
        if let Some(fs) = new_fs
            && fs > *now_fs
        {
            *now_fs = fs;
            buf.push(b'#');
            push_u128(buf, fs);
            buf.push(b'\n');
        }
        if var.width == 1 {
            buf.push(b'0' + value as u8);
        } else {
            // Binary digits eight at a time from a table, then the
            // significant ones in one copy (not a push per bit).
            let n = (64 - value.leading_zeros()).max(1) as usize;
            let mut digits = [0u8; 64];
            let bytes = value.to_be_bytes();
            for i in (64 - n) / 8..8 {
                digits[8 * i..8 * i + 8].copy_from_slice(&BINARY[usize::from(bytes[i])]);
            }
            buf.push(b'b');
            buf.extend_from_slice(&digits[64 - n..]);
            buf.push(b' ');
        }
        buf.extend_from_slice(&var.id);
        buf.push(b'\n');
        out.end_record()
    }
}

/// The eight binary digits of every byte, most significant first.
const BINARY: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut v = 0;
    while v < 256 {
        let mut bit = 0;
        while bit < 8 {
            table[v][bit] = b'0' + ((v >> (7 - bit)) & 1) as u8;
            bit += 1;
        }
        v += 1;
    }
    table
};

enum Slot {
    Signal(usize),
    Fifo(usize),
}

impl Recorder for VcdWriter {
    /// Signals, and the occupancy of the dumped FIFOs: a record that
    /// leaves the occupancy as it was writes nothing. Through `chronc` the
    /// records are the FIFO's committed occupancy at the end of each
    /// instant where it changed (`Observation::occupancy_watch`), never its
    /// events, so `<fifo>.occupancy` has one value per instant.
    fn interest(&self) -> Interest {
        Interest {
            trace: false,
            fifo: FifoInterest::Occupancy(self.fifos.iter().map(Option::is_some).collect()),
            counter: false,
            tick: false,
            signal: true,
        }
    }

    // Inlined into the writer thread's decoding loop (`replay_batch`).
    #[inline(always)]
    fn signal(&mut self, r: &SignalRecord) -> Result<(), RecordError> {
        if let Some(Some(SignalVar::Limb { var, limb })) = self.signals.get(r.signal as usize) {
            let (var, limb) = (*var, *limb);
            return self.limb_change(var, limb, r.time, r.value);
        }
        if self.pending.is_some() {
            self.flush_wide()?;
        }
        match self.signals.get_mut(r.signal as usize) {
            None => Err(RecordError::UnknownIndex {
                what: "signal",
                index: r.signal,
            }),
            Some(None | Some(SignalVar::Limb { .. })) => Ok(()),
            Some(Some(SignalVar::Narrow(var))) => Self::change(
                &mut self.out,
                &mut self.now_fs,
                &mut self.last_time,
                var,
                r.time,
                r.value,
            ),
        }
    }

    // Inlined into the writer thread's decoding loop (`replay_batch`).
    #[inline(always)]
    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        if self.pending.is_some() {
            self.flush_wide()?;
        }
        match self.fifos.get_mut(r.fifo as usize) {
            None => Err(RecordError::UnknownIndex {
                what: "fifo",
                index: r.fifo,
            }),
            Some(None) => Ok(()),
            Some(Some(var)) => Self::change(
                &mut self.out,
                &mut self.now_fs,
                &mut self.last_time,
                var,
                r.time,
                u64::from(r.occupancy),
            ),
        }
    }

    fn stop_at(&mut self, _at: Time) -> Result<(), RecordError> {
        self.flush_wide()
    }

    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        self.flush_wide()?;
        self.out.check()?;
        let note = format!(
            "$comment dropped records: signal {} fifo {} $end\n",
            dropped.signal, dropped.fifo
        );
        self.out.buf().extend_from_slice(note.as_bytes());
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        for (p, n, want) in [
            ("*", "a.b.c", true),
            ("top.*.q", "top.core.q", true),
            ("top.*.q", "top.core.r", false),
            ("t?p.x", "top.x", true),
            ("*.occupancy", "top.f.occupancy", true),
            ("a*b*c", "abbbc", true),
            ("a*b*c", "abbb", false),
            ("", "", true),
        ] {
            assert_eq!(glob_match(p, n), want, "{p} vs {n}");
        }
    }

    #[test]
    fn identifiers_are_distinct_and_printable() {
        let ids: std::collections::HashSet<_> = (0..20_000).map(identifier).collect();
        assert_eq!(ids.len(), 20_000);
        assert!(
            ids.iter()
                .all(|id| id.iter().all(|c| (b'!'..=b'~').contains(c)))
        );
    }
}
