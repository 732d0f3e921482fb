//! Recovery of a truncated Perfetto file: keep the longest prefix of whole
//! packets; a compressed batch that is torn or does not inflate is dropped
//! whole, with everything after it.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;
use prost::Message;

use super::encode::packet_end;
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
pub fn recover(path_in: &Path, path_out: &Path) -> Result<RecoverStats, RecordError> {
    let io_err = |path: &Path| {
        let path: PathBuf = path.to_owned();
        move |source| RecordError::Io { path, source }
    };
    let bytes = fs::read(path_in).map_err(io_err(path_in))?;
    let keep = valid_prefix(&bytes);
    fs::write(path_out, &bytes[..keep.0]).map_err(io_err(path_out))?;
    Ok(RecoverStats {
        packets: keep.1,
        kept_bytes: keep.0 as u64,
        dropped_bytes: (bytes.len() - keep.0) as u64,
    })
}

/// The length and packet count of the longest prefix of whole packets that
/// decode, compressed batches included.
pub(crate) fn valid_prefix(bytes: &[u8]) -> (usize, u64) {
    let mut at = 0;
    let mut packets = 0;
    while let Some(end) = packet_end(bytes, at) {
        if !packet_is_whole(&bytes[at..end]) {
            break;
        }
        at = end;
        packets += 1;
    }
    (at, packets)
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
