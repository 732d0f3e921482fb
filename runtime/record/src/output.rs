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
        let mut done = 0;
        while done < self.buf.len() {
            match self.out.write(&self.buf[done..]) {
                Ok(0) => {
                    let source =
                        io::Error::new(io::ErrorKind::WriteZero, "destination accepted no bytes");
                    return Err(self.torn(done, source));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(self.torn(done, source)),
            }
        }
        self.written += done as u64;
        self.buf.clear();
        Ok(())
    }

    /// Handles a failure after `done` bytes of the buffer reached the
    /// destination: cut back to the last whole record and stop.
    fn torn(&mut self, done: usize, source: io::Error) -> RecordError {
        let keep = self.written + (self.prefix)(&self.buf[..done]) as u64;
        self.fail(source, keep)
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

/// Appends the decimal digits of `v`.
///
/// Hot: formats every number of every text record, two digits at a time.
#[inline]
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + v as u8;
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends the decimal digits of `v`.
#[inline]
pub(crate) fn push_u128(buf: &mut Vec<u8>, v: u128) {
    match u64::try_from(v) {
        Ok(small) => push_u64(buf, small),
        Err(_) => {
            use std::io::Write as _;
            // Beyond 2^64 ps (about 213 days) speed no longer matters.
            let _ = write!(buf, "{v}");
        }
    }
}

/// Appends the decimal digits of `v`.
#[inline]
pub(crate) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// Appends an exact time in the text form of [`crate::Time`]'s `Display`.
#[inline]
pub(crate) fn push_time(buf: &mut Vec<u8>, t: crate::Time) {
    let (whole, rem) = t.split();
    push_u128(buf, whole);
    if rem != 0 {
        buf.push(b'+');
        push_u64(buf, rem);
        buf.push(b'/');
        push_u64(buf, t.den());
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
        for v in [0i64, -1, i64::MIN, i64::MAX, -100] {
            let mut buf = Vec::new();
            push_i64(&mut buf, v);
            assert_eq!(buf, v.to_string().as_bytes());
        }
        let mut buf = Vec::new();
        push_u128(&mut buf, u128::MAX);
        assert_eq!(buf, u128::MAX.to_string().as_bytes());
    }
}
