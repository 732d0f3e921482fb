#!/usr/bin/env python3
"""Independent checks of a Chronon Perfetto trace.

Two decoders that share nothing with the Rust writer:
  * a raw protobuf wire-format walker (this file), which checks the rules the
    real trace_processor enforces on the bytes;
  * Python protobuf with the trace protos that the `perfetto` PyPI package
    ships, which decodes the content, compared with expectations from the
    Rust test.

usage: check_perfetto.py TRACE EXPECT.json [--prefix]
EXPECT.json: {"tracks": {"<uuid>": [[ts_ns, type, name|null, {arg: value},
              [flow ids], [terminating flow ids], counter|null], ...]}}
With --prefix, each track's events must be a prefix of the expected ones
(a recovered, truncated trace).
Exit status 0 and "ok ..." on success; a message and status 1 otherwise.
"""
import json
import sys
import zlib

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SEQ_CLEARED = 1
SEQ_NEEDS = 2


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


# ---------------------------------------------------------------- wire walk
def varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(buf):
    """Yields (field number, wire type, value, raw bytes) for one message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("bad wire type %d" % wt)
        if i > len(buf):
            raise ValueError("truncated field %d" % num)
        yield num, wt, v


def raw_packets(data):
    """The raw TracePacket payloads in file order, compressed ones expanded."""
    out = []
    for num, wt, v in fields(data):
        if num != 1 or wt != 2:
            fail("top-level field %d wire type %d is not Trace.packet" % (num, wt))
        inner = [x for n, w, x in fields(v) if n == 50]
        if inner:
            if len(list(fields(v))) != 1:
                fail("a compressed_packets packet carries other fields")
            out.extend(raw_packets(zlib.decompress(inner[0])))
        else:
            out.append(v)
    return out


def wire_checks(packets):
    seen_tracks = set()
    counter_tracks = set()
    clocks = {}  # clock id -> (unit_multiplier_ns, is_incremental)
    first = True
    snapshot_seen = False
    events = 0
    for idx, p in enumerate(packets):
        fs = list(fields(p))
        nums = {n for n, _, _ in fs}
        get = lambda k: [v for n, _, v in fs if n == k]
        seq = get(10)
        if not seq or seq[0] == 0:
            fail("packet %d has no non-zero trusted_packet_sequence_id" % idx)
        flags = get(13)[0] if get(13) else 0
        if first:
            if not flags & SEQ_CLEARED:
                fail("first packet does not set SEQ_INCREMENTAL_STATE_CLEARED")
            first = False
        elif flags & SEQ_CLEARED:
            fail("packet %d clears incremental state again" % idx)
        if 6 in nums:  # clock_snapshot
            for c in [v for n, _, v in fields(get(6)[0]) if n == 1]:
                cf = {n: v for n, _, v in fields(c)}
                cid = cf.get(1)
                key = (cf.get(4, 1), bool(cf.get(3, 0)))
                if cid in clocks and clocks[cid] != key:
                    fail("clock %d snapshots disagree on multiplier/incremental" % cid)
                clocks[cid] = key
            snapshot_seen = True
        if 8 in nums:  # timestamp on the default clock 64
            if not snapshot_seen or 64 not in clocks:
                fail("packet %d uses clock 64 before a ClockSnapshot anchors it" % idx)
            if 6 not in clocks:
                fail("the snapshot does not anchor clock 64 to BOOTTIME")
        if 60 in nums:  # track_descriptor
            td = {n: v for n, _, v in fields(get(60)[0])}
            uuid = td.get(1)
            if uuid in seen_tracks:
                fail("track %d described twice" % uuid)
            if 5 in td and td[5] not in seen_tracks:
                fail("track %d's parent %d is not described before it" % (uuid, td[5]))
            seen_tracks.add(uuid)
            if 8 in td:
                counter_tracks.add(uuid)
        if 11 in nums:  # track_event
            events += 1
            if not flags & SEQ_NEEDS:
                fail("event packet %d lacks SEQ_NEEDS_INCREMENTAL_STATE" % idx)
            te = list(fields(get(11)[0]))
            for n, wt, _ in te:
                if n in (47, 48) and wt != 1:
                    fail("TrackEvent field %d has wire type %d, not unpacked fixed64" % (n, wt))
            # Each debug annotation (field 4): one interned name and one
            # value: a varint uint_value (3) or int_value (4), or, for a
            # value wider than 64 bits, a string_value (6) of decimal digits
            # with an optional leading '-'.
            for n, wt, v in te:
                if n != 4:
                    continue
                da = list(fields(v))
                values = [(m, w, x) for m, w, x in da if m in (3, 4, 6)]
                ok = [m for m, _, _ in da if m == 1] == [1] and len(values) == 1
                if ok:
                    m, w, x = values[0]
                    ok = w == 0 if m != 6 else w == 2 and is_decimal(x)
                if not ok:
                    fail("packet %d: a debug annotation is not one name_iid and one "
                         "varint uint_value (3) or int_value (4) or decimal "
                         "string_value (6)" % idx)
            tf = {n: v for n, _, v in te}
            track = tf.get(11)
            if track not in seen_tracks:
                fail("event packet %d uses track %s before its descriptor" % (idx, track))
            is_counter = tf.get(9) == 4
            if is_counter != (track in counter_tracks):
                fail("packet %d: counter event/track mismatch on track %d" % (idx, track))
    return events


def is_decimal(raw):
    """Whether raw bytes are a decimal number: digits, an optional '-'."""
    text = raw[1:] if raw[:1] == b"-" else raw
    return len(text) > 0 and all(0x30 <= b <= 0x39 for b in text)


# ---------------------------------------------------------- content decode
def annotation_value(a):
    if a.HasField("string_value"):
        return a.string_value
    return a.int_value if a.HasField("int_value") else a.uint_value


def decode(data):
    trace = pb.Trace()
    trace.ParseFromString(data)
    packets = []
    for p in trace.packet:
        if p.HasField("compressed_packets"):
            inner = pb.Trace()
            inner.ParseFromString(zlib.decompress(p.compressed_packets))
            packets.extend(inner.packet)
        else:
            packets.append(p)
    return packets


def content(packets):
    names, arg_names = {}, {}
    now = None
    tracks = {}
    last_ts = 0
    open_slices = {}
    flows, ended = {}, set()
    for p in packets:
        if p.HasField("interned_data"):
            for e in p.interned_data.event_names:
                if e.iid < 1 or e.iid in names:
                    fail("bad or repeated event-name iid %d" % e.iid)
                names[e.iid] = e.name
            for a in p.interned_data.debug_annotation_names:
                if a.iid < 1 or a.iid in arg_names:
                    fail("bad or repeated annotation-name iid %d" % a.iid)
                arg_names[a.iid] = a.name
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                if c.clock_id == 64:
                    now = c.timestamp
        if not p.HasField("track_event"):
            continue
        now += p.timestamp  # incremental clock
        if now < last_ts:
            fail("timestamps go backwards")
        last_ts = now
        e = p.track_event
        name = names[e.name_iid] if e.name_iid else None
        if e.name_iid and e.name_iid not in names:
            fail("name iid %d not interned" % e.name_iid)
        # Signed arguments are int_value (sign-extended), unsigned uint_value,
        # those wider than 64 bits string_value (kept as the string).
        args = {arg_names[a.name_iid]: annotation_value(a) for a in e.debug_annotations}
        counter = None
        if e.type == pb.TrackEvent.TYPE_COUNTER:
            # Counts past int64 come as double_counter_value.
            if e.HasField("double_counter_value"):
                counter = e.double_counter_value
            else:
                counter = e.counter_value
        row = [now, e.type, name, args, list(e.flow_ids), list(e.terminating_flow_ids), counter]
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            if open_slices.get(e.track_uuid):
                fail("slice begins on track %d while one is open" % e.track_uuid)
            open_slices[e.track_uuid] = True
        if e.type == pb.TrackEvent.TYPE_SLICE_END:
            if not open_slices.get(e.track_uuid):
                fail("slice end without begin on track %d" % e.track_uuid)
            open_slices[e.track_uuid] = False
        for f in list(e.flow_ids) + list(e.terminating_flow_ids):
            if f in ended:
                fail("flow %d continues after it terminated" % f)
            if flows.get(f, now) > now:
                fail("flow %d goes back in time" % f)
            flows[f] = now
        ended.update(e.terminating_flow_ids)
        tracks.setdefault(str(e.track_uuid), []).append(row)
    return tracks


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    data = open(sys.argv[1], "rb").read()
    expect = json.load(open(sys.argv[2]))
    prefix = "--prefix" in sys.argv[3:]
    events = wire_checks(raw_packets(data))
    got = content(decode(data))
    for track, rows in expect["tracks"].items():
        have = got.get(track, [])
        if prefix:
            if have != rows[:len(have)]:
                fail("track %s is not a prefix of the expected events" % track)
        elif have != rows:
            for i, (a, b) in enumerate(zip(have, rows)):
                if a != b:
                    fail("track %s event %d: got %r, expected %r" % (track, i, a, b))
            fail("track %s: got %d events, expected %d" % (track, len(have), len(rows)))
    extra = set(got) - set(expect["tracks"])
    if extra:
        fail("events on unexpected tracks %s" % sorted(extra))
    print("ok %d event packets, %d tracks" % (events, len(got)))


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        fail("malformed protobuf: %s" % e)
