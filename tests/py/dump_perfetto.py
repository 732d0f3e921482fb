#!/usr/bin/env python3
"""Decodes a Chronon Perfetto trace for end-to-end checks in Rust.

Runs check_perfetto.py's wire-format checks (the rules trace_processor
enforces) and its protobuf content decode (monotonic timestamps, balanced
slices, flows that never go back in time or continue after terminating),
then writes what it decoded as JSON, so a test can compare it with
expectations derived from another output (the text logs):

  {"tracks": {"<uuid>": "<track name>"},
   "events": [[ts_ns, "<track uuid>", type, name|null, {arg: value},
               [flow ids], [terminating flow ids], counter|null], ...]}

with events in file order (across tracks).

usage: dump_perfetto.py TRACE OUT.json
Exit status 0 and "ok ..." on success; a message and status 1 otherwise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_perfetto as cp  # noqa: E402


def main():
    if len(sys.argv) != 3:
        cp.fail(__doc__)
    data = open(sys.argv[1], "rb").read()
    events = cp.wire_checks(cp.raw_packets(data))
    packets = cp.decode(data)
    per_track = cp.content(packets)
    names = {}
    for p in packets:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            names[str(td.uuid)] = td.name
    # content() keeps rows per track; recover the file order across tracks.
    order = []
    for p in packets:
        if p.HasField("track_event"):
            order.append(str(p.track_event.track_uuid))
    cursor = {t: 0 for t in per_track}
    rows = []
    for track in order:
        row = per_track[track][cursor[track]]
        cursor[track] += 1
        rows.append([row[0], track] + row[1:])
    json.dump({"tracks": names, "events": rows}, open(sys.argv[2], "w"))
    print("ok %d event packets, %d tracks" % (events, len(per_track)))


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        cp.fail("malformed protobuf: %s" % e)
