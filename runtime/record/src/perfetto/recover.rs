//! Recovery of a truncated Perfetto file: keep the longest prefix of whole
//! packets; a compressed batch that is torn or does not inflate is dropped
//! whole, with everything after it.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use flate2::read::ZlibDecoder;
use prost::Message;

use super::encode::{get_varint, packet_end};
use super::proto::TracePacket;
use crate::error::RecordError;

/// What recovery kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoverStats {
    /// Whole outer packets kept.
    pub packets: u64,
    /// Bytes kept.
    pub kept_bytes: u64,
    /// Bytes dropped from the tail.
    pub dropped_bytes: u64,
}

/// Writes to `path_out` the longest valid prefix of the trace in `path_in`.
///
/// Streams: memory holds one packet (and one inflated batch) at a time.
pub fn recover(path_in: &Path, path_out: &Path) -> Result<RecoverStats, RecordError> {
    let in_err = |source| RecordError::Read {
        path: path_in.to_owned(),
        source,
    };
    let out_err = |source| RecordError::Io {
        path: path_out.to_owned(),
        source,
    };
    let file = File::open(path_in).map_err(in_err)?;
    let total = file.metadata().map_err(in_err)?.len();
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut output = BufWriter::with_capacity(1 << 20, File::create(path_out).map_err(out_err)?);
    let mut stats = RecoverStats::default();
    let mut field = Vec::new();
    while read_field(&mut input, &mut field).map_err(in_err)? && packet_is_whole(&field) {
        output.write_all(&field).map_err(out_err)?;
        stats.packets += 1;
        stats.kept_bytes += field.len() as u64;
    }
    output.flush().map_err(out_err)?;
    stats.dropped_bytes = total - stats.kept_bytes;
    Ok(stats)
}

/// Reads the next `Trace.packet` field (tag, length, payload) into `field`;
/// `false` at the end of the input or at a torn or malformed field.
fn read_field(input: &mut impl Read, field: &mut Vec<u8>) -> io::Result<bool> {
    field.clear();
    let mut byte = [0u8; 1];
    // Tag, then up to 10 varint bytes of length.
    for _ in 0..11 {
        if input.read(&mut byte)? == 0 {
            return Ok(false);
        }
        field.push(byte[0]);
        if field.len() > 1 && byte[0] < 0x80 {
            break;
        }
    }
    if field[0] != 0x0a {
        return Ok(false);
    }
    let Some((len, _)) = get_varint(&field[1..]) else {
        return Ok(false);
    };
    let header = field.len();
    let Ok(len) = usize::try_from(len) else {
        return Ok(false);
    };
    let got = input.take(len as u64).read_to_end(field)?;
    Ok(got == len && field.len() == header + len)
}
/// Whether one `Trace.packet` field decodes, and when it holds compressed
/// packets, whether they inflate to whole packets.
fn packet_is_whole(field: &[u8]) -> bool {
    // Skip the tag byte; the rest is the length-delimited packet.
    let Ok(packet) = TracePacket::decode_length_delimited(&field[1..]) else {
        return false;
    };
    let Some(compressed) = packet.compressed_packets else {
        return true;
    };
    let mut inner = Vec::new();
    if ZlibDecoder::new(compressed.as_slice())
        .read_to_end(&mut inner)
        .is_err()
    {
        return false;
    }
    let mut at = 0;
    while let Some(end) = packet_end(&inner, at) {
        if TracePacket::decode_length_delimited(&inner[at + 1..end]).is_err() {
            return false;
        }
        at = end;
    }
    at == inner.len()
}
