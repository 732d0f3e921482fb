//! Buffered, chunked output with clean failure: records are appended whole
//! to a large buffer, which goes to the underlying writer in big chunks; when
//! the writer fails, the output is cut back to the last whole record.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::RecordError;

/// Bytes buffered before a chunk is written.
pub(crate) const CHUNK: usize = 1 << 20;

/// A destination for a recorder's bytes.
///
/// `discard_tail` lets a failed write be cut back to a valid prefix; a
/// destination that cannot do that leaves the torn tail, which the readers
/// of every format detect and ignore.
pub trait RecordOutput: Write + Send {
    /// Cuts the destination back to its first `keep` bytes.
    fn discard_tail(&mut self, keep: u64) -> io::Result<()>;
}

impl RecordOutput for File {
    fn discard_tail(&mut self, keep: u64) -> io::Result<()> {
        self.set_len(keep)?;
        self.seek(SeekFrom::Start(keep)).map(|_| ())
    }
}

/// Discards everything: measures a writer without its storage.
impl RecordOutput for io::Sink {
    fn discard_tail(&mut self, _keep: u64) -> io::Result<()> {
        Ok(())
    }
}

impl RecordOutput for Vec<u8> {
    fn discard_tail(&mut self, keep: u64) -> io::Result<()> {
        self.truncate(usize::try_from(keep).unwrap_or(usize::MAX));
        Ok(())
    }
}

/// Finds the length of the longest run of whole records at the start of a
/// buffer that holds only whole records.
pub(crate) type PrefixFn = fn(&[u8]) -> usize;

/// The whole-line prefix of a buffer of lines.
pub(crate) fn whole_lines(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last| last + 1)
}

/// A chunked output; see the module doc.
pub(crate) struct ChunkedOutput {
    out: Box<dyn RecordOutput>,
    path: PathBuf,
    buf: Vec<u8>,
    written: u64,
    prefix: PrefixFn,
    failed: Option<(io::ErrorKind, String)>,
}

impl ChunkedOutput {
    /// Creates (truncating) a file.
    pub(crate) fn create(path: &Path, prefix: PrefixFn) -> Result<ChunkedOutput, RecordError> {
        let file = File::create(path).map_err(|source| RecordError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(ChunkedOutput::new(Box::new(file), path.to_owned(), prefix))
    }

    /// Wraps any destination; `path` names it in errors.
    pub(crate) fn new(out: Box<dyn RecordOutput>, path: PathBuf, prefix: PrefixFn) -> Self {
        ChunkedOutput {
            out,
            path,
            buf: Vec::with_capacity(CHUNK + CHUNK / 4),
            written: 0,
            prefix,
            failed: None,
        }
    }

    /// The buffer to append one whole record to; call
    /// [`ChunkedOutput::end_record`] after each.
    #[inline]
    pub(crate) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Writes a chunk when enough is buffered.
    #[inline]
    pub(crate) fn end_record(&mut self) -> Result<(), RecordError> {
        if self.buf.len() >= CHUNK {
            self.write_chunk()
        } else {
            Ok(())
        }
    }

    /// Returns the earlier failure, if any, so a stopped output stays stopped.
    #[inline]
    pub(crate) fn check(&self) -> Result<(), RecordError> {
        match &self.failed {
            None => Ok(()),
            Some((kind, message)) => Err(RecordError::Stopped {
                path: self.path.clone(),
                kind: *kind,
                message: message.clone(),
            }),
        }
    }

    /// Writes everything buffered and flushes the destination.
    pub(crate) fn flush(&mut self) -> Result<(), RecordError> {
        self.write_chunk()?;
        if let Err(source) = self.out.flush() {
            return Err(self.fail(source, self.written));
        }
        Ok(())
    }

    fn write_chunk(&mut self) -> Result<(), RecordError> {
        self.check()?;
        match write_all(self.out.as_mut(), &self.buf) {
            Ok(()) => {
                self.written += self.buf.len() as u64;
                self.buf.clear();
                Ok(())
            }
            Err((done, source)) => {
                let keep = self.written + (self.prefix)(&self.buf[..done]) as u64;
                Err(self.fail(source, keep))
            }
        }
    }

    /// Writes `bytes`, whole records only, after whatever is buffered: for
    /// a writer that builds its chunks in memory of its own and so saves a
    /// copy per record. A failure cuts back to the last whole record, as
    /// for buffered records.
    pub(crate) fn write_whole(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        self.write_chunk()?;
        match write_all(self.out.as_mut(), bytes) {
            Ok(()) => {
                self.written += bytes.len() as u64;
                Ok(())
            }
            Err((done, source)) => {
                let keep = self.written + (self.prefix)(&bytes[..done]) as u64;
                Err(self.fail(source, keep))
            }
        }
    }

    fn fail(&mut self, source: io::Error, keep: u64) -> RecordError {
        // Best effort: a destination that cannot be cut keeps a torn tail,
        // which every reader of these formats ignores.
        let _ = self.out.discard_tail(keep);
        self.written = keep;
        self.buf.clear();
        self.failed = Some((source.kind(), source.to_string()));
        RecordError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// Writes all of `bytes`; on failure, how many reached `out` and why.
fn write_all(out: &mut dyn RecordOutput, bytes: &[u8]) -> Result<(), (usize, io::Error)> {
    let mut done = 0;
    while done < bytes.len() {
        match out.write(&bytes[done..]) {
            Ok(0) => {
                let source =
                    io::Error::new(io::ErrorKind::WriteZero, "destination accepted no bytes");
                return Err((done, source));
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => return Err((done, source)),
        }
    }
    Ok(())
}

/// Writes the low `out.len()` decimal digits of `v` into `out`, leading
/// zeros included (the cold path of [`put_u128`]).
fn write_digits(out: &mut [u8], mut v: u64) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// ASCII `'0'` in every byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight decimal digits of `v < 10^8`, leading zeros included, as the
/// bytes of a little-endian word (the first digit in the lowest byte).
/// Branch- and table-free: the halves `abcd` and `efgh` sit in 32-bit
/// lanes, a multiply-shift divides both by 100 at once (exact below
/// 10,000), the four pairs then sit in 16-bit lanes and a second one
/// divides them by 10 (exact below 179).
#[inline(always)]
fn eight_digits(v: u32) -> u64 {
    let v = u64::from(v);
    let x = (v / 10_000) | ((v % 10_000) << 32);
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let pairs = hundreds | ((x - hundreds * 100) << 16);
    let tens = ((pairs * 103) >> 10) & 0x000f_000f_000f_000f;
    let digits = tens | ((pairs - tens * 10) << 8);
    digits | ZEROS
}

/// Writes `v < 10^8` without leading zeros at `line[pos..]`; returns the
/// position after. Always stores 8 bytes: the bytes after the digits are
/// scratch that the rest of the line overwrites, so `line` needs 8 bytes
/// after `pos` whatever the length.
#[inline(always)]
fn put_below_1e8(line: &mut [u8], pos: usize, v: u32) -> usize {
    let w = eight_digits(v);
    // Leading zero digits: the low bytes of `w` that are '0' (at most 7,
    // so that 0 keeps one digit). No table and no branch.
    let skip = ((w ^ ZEROS).trailing_zeros() / 8).min(7) as usize;
    line[pos..pos + 8].copy_from_slice(&(w >> (8 * skip)).to_le_bytes());
    pos + 8 - skip
}

/// Writes the digits of `v` at `line[pos..]`; returns the position after.
/// Stores up to 20 bytes after `pos` (see [`put_below_1e8`]), so `line`
/// needs 20 bytes there. Always inlined: a line formats several numbers,
/// and a call costs about as much as the formatting.
#[inline(always)]
pub(crate) fn put_u64(line: &mut [u8], pos: usize, v: u64) -> usize {
    const E8: u64 = 100_000_000;
    if v < E8 {
        return put_below_1e8(line, pos, v as u32);
    }
    let (high, low) = (v / E8, (v % E8) as u32);
    let pos = if high < E8 {
        put_below_1e8(line, pos, high as u32)
    } else {
        // At most 4 more digits: u64::MAX < 2 * 10^19.
        let pos = put_below_1e8(line, pos, (high / E8) as u32);
        line[pos..pos + 8].copy_from_slice(&eight_digits((high % E8) as u32).to_le_bytes());
        pos + 8
    };
    line[pos..pos + 8].copy_from_slice(&eight_digits(low).to_le_bytes());
    pos + 8
}

/// Writes the digits of `v` at `line[pos..]` (at most 39 bytes); returns the
/// position after.
#[inline]
pub(crate) fn put_u128(line: &mut [u8], pos: usize, v: u128) -> usize {
    match u64::try_from(v) {
        Ok(small) => put_u64(line, pos, small),
        Err(_) => put_u128_wide(line, pos, v),
    }
}

/// [`put_u128`] beyond 2^64 (about 213 days in ps): the high part first,
/// then 19 zero-padded digits; the high part needs at most one more split.
#[cold]
fn put_u128_wide(line: &mut [u8], pos: usize, v: u128) -> usize {
    const E19: u128 = 10_000_000_000_000_000_000;
    let pos = put_u128(line, pos, v / E19);
    write_digits(&mut line[pos..pos + 19], (v % E19) as u64);
    pos + 19
}

/// Writes an exact time in the text form of [`crate::Time`]'s `Display`
/// (at most 81 bytes); returns the position after. The text writer keeps
/// an incremental form of it; this one is the tests' reference.
#[cfg(test)]
pub(crate) fn put_time(line: &mut [u8], pos: usize, t: crate::Time) -> usize {
    let (whole, rem) = t.split();
    let mut pos = put_u128(line, pos, whole);
    if rem != 0 {
        let (rem, den) = crate::time::lowest_terms(rem, t.den());
        line[pos] = b'+';
        pos = put_u64(line, pos + 1, rem);
        line[pos] = b'/';
        pos = put_u64(line, pos + 1, den);
    }
    pos
}

/// Appends the decimal digits of `v`.
///
/// Hot: formats numbers of the VCD and CSV writers. A fixed-size append
/// (inlined, no `memcpy` call) and a truncate instead of a copy of the
/// digits' exact length.
#[inline]
pub(crate) fn push_u64(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 24];
    let n = put_u64(&mut tmp, 0, v);
    let len = buf.len();
    buf.extend_from_slice(&tmp);
    buf.truncate(len + n);
}

/// Appends the decimal digits of `v`.
#[inline]
pub(crate) fn push_u128(buf: &mut Vec<u8>, v: u128) {
    match u64::try_from(v) {
        Ok(small) => push_u64(buf, small),
        Err(_) => {
            let mut tmp = [0u8; 40];
            let n = put_u128(&mut tmp, 0, v);
            buf.extend_from_slice(&tmp[..n]);
        }
    }
}

/// Appends an exact time in the text form of [`crate::Time`]'s `Display`.
#[inline]
pub(crate) fn push_time(buf: &mut Vec<u8>, t: crate::Time) {
    let (whole, rem) = t.split();
    push_u128(buf, whole);
    if rem != 0 {
        let (rem, den) = crate::time::lowest_terms(rem, t.den());
        buf.push(b'+');
        push_u64(buf, rem);
        buf.push(b'/');
        push_u64(buf, den);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_formatting_matches_std() {
        for v in [0u64, 1, 9, 10, 99, 100, 101, 12345, u64::MAX, 1 << 40] {
            let mut buf = Vec::new();
            push_u64(&mut buf, v);
            assert_eq!(buf, v.to_string().as_bytes());
        }
        let mut buf = Vec::new();
        push_u128(&mut buf, u128::MAX);
        assert_eq!(buf, u128::MAX.to_string().as_bytes());
    }

    #[test]
    fn eight_digit_words_match_std() {
        let mut seed = 1u64;
        let values = (0..200_000u32).chain((0..200_000).map(|_| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % 100_000_000) as u32
        }));
        for v in values.chain([99_999_999, 10_000_000, 9_999_999, 99_990_000]) {
            assert_eq!(eight_digits(v).to_le_bytes(), *format!("{v:08}").as_bytes());
        }
    }

    #[test]
    fn slice_formatting_matches_std() {
        // Every power of ten and its neighbours, where a digit count changes.
        let mut values = vec![0u64, u64::MAX];
        for k in 0..20 {
            let p = 10u64.pow(k);
            values.extend([p - 1, p, p + 1]);
        }
        let mut line = [0xffu8; 96];
        for v in values {
            let text = v.to_string();
            let end = put_u64(&mut line, 3, v);
            assert_eq!(&line[3..end], text.as_bytes());
        }
        for v in [
            0u128,
            u128::from(u64::MAX),
            u128::from(u64::MAX) + 1,
            10u128.pow(19),
            10u128.pow(38),
            u128::MAX,
        ] {
            let end = put_u128(&mut line, 1, v);
            assert_eq!(&line[1..end], v.to_string().as_bytes());
        }
        for (num, den) in [(0u128, 1u64), (500_000, 457), (u128::MAX, 7), (3, 4)] {
            let t = crate::Time::new(num, den).expect("nonzero den");
            let end = put_time(&mut line[..], 0, t);
            assert_eq!(&line[..end], t.to_string().as_bytes());
        }
    }
}
