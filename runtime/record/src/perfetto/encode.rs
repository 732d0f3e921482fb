//! Hand encoding of the hot packets (track events), byte for byte what
//! prost writes for the same [`super::proto`] structs, without building
//! them: no allocation per event.

use crate::schema::{MAX_ARGS, sign_extend};

/// Appends `v` as a protobuf varint.
#[inline]
pub(crate) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// The encoded length of a varint.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    // 1 byte per started 7 bits, at least one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Reads a varint at the start of `bytes`: its value and length.
pub(crate) fn get_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// One track event, as the writer hands it to the encoder.
pub(crate) struct Event<'a> {
    /// `TrackEvent.Type`.
    pub kind: i32,
    /// Interned name, 0 for none.
    pub name_iid: u64,
    /// Track uuid.
    pub track: u64,
    /// Interned argument names, parallel to `arg_values`.
    pub arg_iids: &'a [u64],
    /// Argument values (raw bits).
    pub arg_values: &'a [u64],
    /// Per argument, its signed width or 0 for unsigned, from
    /// [`crate::EventInfo::signed_widths`]; empty when all are unsigned.
    pub arg_widths: &'a [u32],
    /// Counter value, for counter events.
    pub counter: Option<i64>,
    /// A flow through this event.
    pub flow: Option<u64>,
    /// A flow ending at this event.
    pub terminating_flow: Option<u64>,
}

const TAG_TRACE_PACKET: u8 = 0x0a;

/// Room for the packet header (tag, length, timestamp, sequence id and the
/// track event's tag and length: at most 1 + 10 + 11 + 6 + 1 + 10 bytes)
/// before the track event in [`Scratch`].
const HEAD: usize = 40;

/// The most bytes a packet takes in [`Scratch`]: the header room, the
/// largest track event with [`MAX_ARGS`] annotations (24 bytes each at
/// most, plus type, name, track, counter and two flows: 65), and the
/// sequence flags (6).
const PACKET_MAX: usize = HEAD + MAX_ARGS * 24 + 65 + 6;

/// [`Scratch`]'s size: a power of two at least [`PACKET_MAX`], so that a
/// masked index needs no bounds check.
const SCRATCH: usize = PACKET_MAX.next_power_of_two();

/// Where a packet is encoded before it is appended to the output with one
/// copy: a byte costs a masked store, not a `Vec::push` (capacity check and
/// length store), and nested lengths are patched in place instead of
/// computed in a separate sizing pass. Kept by the writer, so it is not
/// cleared per packet: every byte copied out was written first.
pub(crate) struct Scratch<const N: usize = SCRATCH> {
    bytes: [u8; N],
    len: usize,
}

impl Scratch {
    /// An empty scratch.
    pub(crate) fn new() -> Box<Scratch> {
        Box::new(Scratch {
            bytes: [0; SCRATCH],
            len: 0,
        })
    }
}

impl<const N: usize> Scratch<N> {
    /// Appends a byte. `N` is a power of two and no packet is longer than
    /// [`PACKET_MAX`] (checked in debug builds; the widest event is in the
    /// tests), so the mask never wraps and the store needs no bounds check.
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        debug_assert!(self.len < N && N.is_power_of_two());
        self.bytes[self.len & (N - 1)] = b;
        self.len += 1;
    }

    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    #[inline(always)]
    fn fixed64(&mut self, tag: [u8; 2], v: u64) {
        self.bytes[self.len..self.len + 2].copy_from_slice(&tag);
        self.bytes[self.len + 2..self.len + 10].copy_from_slice(&v.to_le_bytes());
        self.len += 10;
    }
}

/// The field tag and varint value of argument `i`: `uint_value` (3) with the
/// raw bits of an unsigned argument, `int_value` (4) with a signed one
/// sign-extended to 64 bits (a negative one is a 10-byte varint, as prost
/// writes an `int64`).
#[inline(always)]
fn annotation_value(widths: &[u32], i: usize, value: u64) -> (u8, u64) {
    match widths.get(i) {
        Some(&w) if w != 0 => (0x20, sign_extend(value, w) as u64),
        _ => (0x18, value),
    }
}

/// Appends one `Trace.packet` holding `event`, as prost would encode the
/// corresponding [`super::proto::TracePacket`].
#[inline]
pub(crate) fn put_event_packet(
    buf: &mut Vec<u8>,
    s: &mut Scratch,
    timestamp: u64,
    sequence_id: u32,
    flags: u32,
    event: &Event<'_>,
) {
    if event.arg_iids.len().min(event.arg_values.len()) > MAX_ARGS {
        return put_event_packet_sized(buf, timestamp, sequence_id, flags, event);
    }
    // The track event first, after room for the header.
    s.len = HEAD;
    for (i, (&iid, &value)) in event.arg_iids.iter().zip(event.arg_values).enumerate() {
        let (tag, value) = annotation_value(event.arg_widths, i, value);
        s.byte(0x22); // debug_annotations = 4
        // At most 22 bytes follow: the length is one byte, patched below.
        let at = s.len;
        s.byte(0);
        s.byte(0x08); // name_iid = 1
        s.varint(iid);
        s.byte(tag); // uint_value = 3 or int_value = 4
        s.varint(value);
        s.bytes[at & (SCRATCH - 1)] = (s.len - at - 1) as u8;
    }
    if event.kind != 0 {
        s.byte(0x48); // type = 9
        s.varint(event.kind as u64);
    }
    if event.name_iid != 0 {
        s.byte(0x50); // name_iid = 10
        s.varint(event.name_iid);
    }
    s.byte(0x58); // track_uuid = 11
    s.varint(event.track);
    if let Some(c) = event.counter {
        s.byte(0xf0); // counter_value = 30, varint
        s.byte(0x01);
        s.varint(c as u64);
    }
    if let Some(id) = event.flow {
        s.fixed64([0xf9, 0x02], id); // flow_ids = 47, fixed64
    }
    if let Some(id) = event.terminating_flow {
        s.fixed64([0x81, 0x03], id); // terminating_flow_ids = 48, fixed64
    }
    let te = s.len - HEAD;
    s.byte(0x68); // sequence_flags = 13
    s.varint(u64::from(flags));
    let end = s.len;
    // The header, then moved to end where the track event starts.
    let packet = 1
        + varint_len(timestamp)
        + 1
        + varint_len(u64::from(sequence_id))
        + 1
        + varint_len(te as u64)
        + (end - HEAD);
    let mut h = Scratch {
        bytes: [0; HEAD.next_power_of_two()],
        len: 0,
    };
    h.byte(TAG_TRACE_PACKET);
    h.varint(packet as u64);
    h.byte(0x40); // timestamp = 8
    h.varint(timestamp);
    h.byte(0x50); // trusted_packet_sequence_id = 10
    h.varint(u64::from(sequence_id));
    h.byte(0x5a); // track_event = 11
    h.varint(te as u64);
    let start = HEAD - h.len;
    s.bytes[start..HEAD].copy_from_slice(&h.bytes[..h.len]);
    buf.extend_from_slice(&s.bytes[start..end]);
}

/// [`put_event_packet`] for events with more than [`MAX_ARGS`] annotations
/// (a schema never has them; kept so the encoder has no limit): sizes every
/// field first, then pushes the bytes.
fn put_event_packet_sized(
    buf: &mut Vec<u8>,
    timestamp: u64,
    sequence_id: u32,
    flags: u32,
    event: &Event<'_>,
) {
    let mut annotations = 0;
    for (i, (&iid, &value)) in event.arg_iids.iter().zip(event.arg_values).enumerate() {
        let (_, value) = annotation_value(event.arg_widths, i, value);
        let len = 2 + varint_len(iid) + varint_len(value);
        annotations += 1 + varint_len(len as u64) + len;
    }
    let mut te = annotations;
    if event.kind != 0 {
        te += 1 + varint_len(event.kind as u64);
    }
    if event.name_iid != 0 {
        te += 1 + varint_len(event.name_iid);
    }
    te += 1 + varint_len(event.track);
    if let Some(c) = event.counter {
        te += 2 + varint_len(c as u64);
    }
    if event.flow.is_some() {
        te += 2 + 8;
    }
    if event.terminating_flow.is_some() {
        te += 2 + 8;
    }
    let packet = 1
        + varint_len(timestamp)
        + 1
        + varint_len(u64::from(sequence_id))
        + 1
        + varint_len(te as u64)
        + te
        + 1
        + varint_len(u64::from(flags));
    buf.push(TAG_TRACE_PACKET);
    put_varint(buf, packet as u64);
    buf.push(0x40); // timestamp = 8
    put_varint(buf, timestamp);
    buf.push(0x50); // trusted_packet_sequence_id = 10
    put_varint(buf, u64::from(sequence_id));
    buf.push(0x5a); // track_event = 11
    put_varint(buf, te as u64);
    for (i, (&iid, &value)) in event.arg_iids.iter().zip(event.arg_values).enumerate() {
        let (tag, value) = annotation_value(event.arg_widths, i, value);
        buf.push(0x22); // debug_annotations = 4
        put_varint(buf, (2 + varint_len(iid) + varint_len(value)) as u64);
        buf.push(0x08); // name_iid = 1
        put_varint(buf, iid);
        buf.push(tag); // uint_value = 3 or int_value = 4
        put_varint(buf, value);
    }
    if event.kind != 0 {
        buf.push(0x48); // type = 9
        put_varint(buf, event.kind as u64);
    }
    if event.name_iid != 0 {
        buf.push(0x50); // name_iid = 10
        put_varint(buf, event.name_iid);
    }
    buf.push(0x58); // track_uuid = 11
    put_varint(buf, event.track);
    if let Some(c) = event.counter {
        buf.extend_from_slice(&[0xf0, 0x01]); // counter_value = 30, varint
        put_varint(buf, c as u64);
    }
    if let Some(id) = event.flow {
        buf.extend_from_slice(&[0xf9, 0x02]); // flow_ids = 47, fixed64
        buf.extend_from_slice(&id.to_le_bytes());
    }
    if let Some(id) = event.terminating_flow {
        buf.extend_from_slice(&[0x81, 0x03]); // terminating_flow_ids = 48, fixed64
        buf.extend_from_slice(&id.to_le_bytes());
    }
    buf.push(0x68); // sequence_flags = 13
    put_varint(buf, u64::from(flags));
}

/// The length of the longest run of whole `Trace.packet` fields at the start
/// of `bytes`.
pub(crate) fn whole_packets(bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(end) = packet_end(bytes, at) {
        at = end;
    }
    at
}

/// The end of the whole packet starting at `at`, if there is one.
pub(crate) fn packet_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&TAG_TRACE_PACKET) {
        return None;
    }
    let (len, n) = get_varint(&bytes[at + 1..])?;
    let end = (at + 1 + n).checked_add(usize::try_from(len).ok()?)?;
    (end <= bytes.len()).then_some(end)
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::perfetto::proto::{DebugAnnotation, Trace, TracePacket, TrackEvent};

    #[test]
    fn hand_encoding_matches_prost() {
        let cases: Vec<Event<'static>> = vec![
            Event {
                kind: 3,
                name_iid: 7,
                track: 1 << 33,
                arg_iids: &[1, 2],
                arg_values: &[0, u64::MAX],
                arg_widths: &[],
                counter: None,
                flow: Some(5 << 40),
                terminating_flow: None,
            },
            Event {
                kind: 4,
                name_iid: 0,
                track: 9,
                arg_iids: &[],
                arg_values: &[],
                arg_widths: &[],
                counter: Some(-3),
                flow: None,
                terminating_flow: None,
            },
            Event {
                kind: 3,
                name_iid: 300,
                track: 2,
                arg_iids: &[],
                arg_values: &[],
                arg_widths: &[],
                counter: None,
                flow: None,
                terminating_flow: Some(u64::MAX),
            },
            Event {
                kind: 2,
                name_iid: 0,
                track: 2,
                arg_iids: &[],
                arg_values: &[],
                arg_widths: &[],
                counter: None,
                flow: None,
                terminating_flow: None,
            },
            // The largest event the scratch encoder takes: MAX_ARGS
            // annotations and every field at its widest.
            Event {
                kind: -1,
                name_iid: u64::MAX,
                track: u64::MAX,
                arg_iids: &[u64::MAX; MAX_ARGS],
                arg_values: &[u64::MAX; MAX_ARGS],
                arg_widths: &[],
                counter: Some(i64::MIN),
                flow: Some(u64::MAX),
                terminating_flow: Some(1),
            },
            // More annotations than a schema allows: the sizing encoder.
            Event {
                kind: 3,
                name_iid: 1,
                track: 4,
                arg_iids: &[300; MAX_ARGS + 1],
                arg_values: &[1 << 40; MAX_ARGS + 1],
                arg_widths: &[],
                counter: None,
                flow: None,
                terminating_flow: None,
            },
            // Signed arguments at the widest: negative int64 varints are
            // 10 bytes, beside unsigned ones and one-bit signed ones.
            Event {
                kind: 3,
                name_iid: u64::MAX,
                track: u64::MAX,
                arg_iids: &[u64::MAX; MAX_ARGS],
                arg_values: &[1 << 63, 0xfd, 0x8000, u64::MAX, 1, 0x7fff_ffff, 0, 5],
                arg_widths: &[64, 8, 16, 0, 1, 32, 64, 3],
                counter: Some(-1),
                flow: Some(u64::MAX),
                terminating_flow: Some(u64::MAX),
            },
            // Signed beyond the scratch encoder: the sizing one.
            Event {
                kind: 3,
                name_iid: 1,
                track: 4,
                arg_iids: &[300; MAX_ARGS + 1],
                arg_values: &[u64::MAX - 2; MAX_ARGS + 1],
                arg_widths: &[64, 8, 0, 16, 32, 2, 1, 64, 0],
                counter: None,
                flow: None,
                terminating_flow: None,
            },
        ];
        for (i, e) in cases.iter().enumerate() {
            let mut ours = Vec::new();
            // A used scratch: every byte copied out is written first.
            let mut scratch = Scratch::new();
            scratch.bytes.fill(0xee);
            put_event_packet(&mut ours, &mut scratch, 1_000_000 * i as u64, 1, 2, e);
            let mut sized = Vec::new();
            put_event_packet_sized(&mut sized, 1_000_000 * i as u64, 1, 2, e);
            assert_eq!(ours, sized, "case {i}: both encoders");
            let theirs = Trace {
                packet: vec![TracePacket {
                    timestamp: Some(1_000_000 * i as u64),
                    trusted_packet_sequence_id: Some(1),
                    sequence_flags: Some(2),
                    track_event: Some(TrackEvent {
                        debug_annotations: e
                            .arg_iids
                            .iter()
                            .zip(e.arg_values)
                            .enumerate()
                            .map(|(a, (&n, &v))| {
                                // Signed: the low `w` bits, the sign bit
                                // copied above them.
                                let w = e.arg_widths.get(a).copied().unwrap_or(0);
                                let signed = (w != 0).then(|| {
                                    let low = if w == 64 { v } else { v & ((1 << w) - 1) };
                                    if low >> (w - 1) & 1 == 1 && w < 64 {
                                        (low | (u64::MAX << w)) as i64
                                    } else {
                                        low as i64
                                    }
                                });
                                DebugAnnotation {
                                    name_iid: Some(n),
                                    uint_value: if signed.is_some() { None } else { Some(v) },
                                    int_value: signed,
                                }
                            })
                            .collect(),
                        r#type: (e.kind != 0).then_some(e.kind),
                        name_iid: (e.name_iid != 0).then_some(e.name_iid),
                        track_uuid: Some(e.track),
                        counter_value: e.counter,
                        flow_ids: e.flow.into_iter().collect(),
                        terminating_flow_ids: e.terminating_flow.into_iter().collect(),
                    }),
                    ..TracePacket::default()
                }],
            }
            .encode_to_vec();
            assert_eq!(ours, theirs, "case {i}");
            assert_eq!(whole_packets(&ours), ours.len());
            assert_eq!(whole_packets(&ours[..ours.len() - 1]), 0);
        }
    }

    #[test]
    fn varint_lengths() {
        for v in [0u64, 1, 127, 128, 16_383, 16_384, u64::MAX] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v), "{v}");
            assert_eq!(get_varint(&buf), Some((v, buf.len())));
        }
    }
}
