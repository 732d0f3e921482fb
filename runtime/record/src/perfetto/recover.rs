//! Recovery of a truncated Perfetto file: keep the longest prefix of whole
//! packets; of a compressed batch that is torn or does not inflate whole,
//! keep the whole packets its valid deflate prefix holds (a trace of one
//! torn batch recovered nothing before), and drop the rest of the file.
//! An output that would hold nothing is removed, never left empty.

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
    /// Packets kept from inside the torn compressed batch that ended the
    /// prefix (written uncompressed after it).
    pub salvaged_packets: u64,
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
    let kept = (|| {
        while read_field(&mut input, &mut field).map_err(in_err)? && packet_is_whole(&field) {
            output.write_all(&field).map_err(out_err)?;
            stats.packets += 1;
            stats.kept_bytes += field.len() as u64;
        }
        // `field` holds what there is of the packet that ended the prefix.
        for packet in salvage(&field) {
            output.write_all(&packet).map_err(out_err)?;
            stats.salvaged_packets += 1;
        }
        output.flush().map_err(out_err)
    })();
    if kept.is_err() || stats.packets + stats.salvaged_packets == 0 {
        drop(output);
        let _ = std::fs::remove_file(path_out);
    }
    kept?;
    stats.dropped_bytes = total - stats.kept_bytes;
    Ok(stats)
}

/// The whole packets inside the compressed batch that `field` (a
/// `Trace.packet` field, possibly torn) starts, as top-level packet fields:
/// what inflates from its valid prefix, up to the first packet that is not
/// whole. Empty for any other field.
fn salvage(field: &[u8]) -> Vec<Vec<u8>> {
    // `Trace.packet` (tag 0x0a, a length), then the packet's
    // `compressed_packets` field (50, length-delimited: 0x92 0x03, a length).
    let Some(rest) = field.strip_prefix(&[0x0a]) else {
        return Vec::new();
    };
    let Some((_, n)) = get_varint(rest) else {
        return Vec::new();
    };
    let Some(rest) = rest[n..].strip_prefix(&[0x92, 0x03]) else {
        return Vec::new();
    };
    let Some((_, n)) = get_varint(rest) else {
        return Vec::new();
    };
    let mut inner = Vec::new();
    let mut decoder = ZlibDecoder::new(&rest[n..]);
    let mut chunk = [0u8; 1 << 13];
    // A torn stream inflates to its valid prefix and then fails.
    while let Ok(got) = decoder.read(&mut chunk) {
        if got == 0 {
            break;
        }
        inner.extend_from_slice(&chunk[..got]);
    }
    let mut packets = Vec::new();
    let mut at = 0;
    while let Some(end) = packet_end(&inner, at) {
        if TracePacket::decode_length_delimited(&inner[at + 1..end]).is_err() {
            break;
        }
        packets.push(inner[at..end].to_vec());
        at = end;
    }
    packets
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
