#!/usr/bin/env python3
"""Independent checks of a Chronon VCD with two readers: pyvcd's tokenizer
(structure, timescale, `#0` before `$dumpvars`, strictly increasing times,
every change) and pywellen (the value of every signal around every change).

usage: check_vcd.py FILE EXPECT.json
EXPECT.json: {"signals": {"<path>.<name>": [[fs, value], ...]}} where path
excludes the design scope; the file must declare exactly these signals and
each must start at 0 and change exactly as listed.
"""
import json
import sys

import pywellen
from vcd.reader import TokenKind, tokenize


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def pyvcd_changes(path):
    names, scopes, changes = {}, [], {}
    times, now, seen_dumpvars, zero_before_dumpvars = [], None, False, False
    timescale = None
    with open(path, "rb") as f:
        for tok in tokenize(f):
            k = tok.kind
            if k is TokenKind.TIMESCALE:
                timescale = (int(getattr(tok.data.magnitude, "value", tok.data.magnitude)), str(getattr(tok.data.unit, "value", tok.data.unit)))
            elif k is TokenKind.SCOPE:
                scopes.append(tok.data.ident)
            elif k is TokenKind.UPSCOPE:
                scopes.pop()
            elif k is TokenKind.VAR:
                full = ".".join(scopes[1:] + [tok.data.reference])
                names[tok.data.id_code] = full
                changes[full] = []
            elif k is TokenKind.CHANGE_TIME:
                if now is not None and tok.data <= now:
                    fail("time %d does not increase after %d" % (tok.data, now))
                now = tok.data
                times.append(now)
                if not seen_dumpvars and now == 0:
                    zero_before_dumpvars = True
            elif k is TokenKind.DUMPVARS:
                seen_dumpvars = True
                if not zero_before_dumpvars:
                    fail("$dumpvars does not follow #0")
            elif k in (TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR):
                v = tok.data.value
                v = int(v) if isinstance(v, str) else v
                changes[names[tok.data.id_code]].append([now, v])
    if timescale != (1, "fs"):
        fail("timescale is %r, not 1 fs" % (timescale,))
    return changes


def main():
    path, expect = sys.argv[1], json.load(open(sys.argv[2]))["signals"]
    got = pyvcd_changes(path)
    if set(got) != set(expect):
        fail("signals %s, expected %s" % (sorted(got), sorted(expect)))
    for name, rows in expect.items():
        have = got[name]
        if not have or have[0] != [0, 0]:
            fail("%s does not start at 0 in $dumpvars" % name)
        if have[1:] != rows:
            fail("%s: changes differ (got %d, expected %d)" % (name, len(have) - 1, len(rows)))
    wave = pywellen.Waveform(path)
    if (wave.timescale.factor, str(wave.timescale.unit)) != (1, "fs"):
        fail("pywellen reads timescale %s %s" % (wave.timescale.factor, wave.timescale.unit))
    checked = 0
    for var in wave.all_vars():
        name = var.full_name.split(".", 1)[1]
        prev = 0
        for fs, value in expect[name]:
            if fs > 0 and var.signal.value_at(fs - 1) != prev:
                fail("pywellen: %s before %d is %r, expected %d" % (name, fs, var.signal.value_at(fs - 1), prev))
            if var.signal.value_at(fs) != value:
                fail("pywellen: %s at %d is %r, expected %d" % (name, fs, var.signal.value_at(fs), value))
            prev = value
            checked += 1
    print("ok %d signals, %d changes checked by both readers" % (len(expect), checked))


if __name__ == "__main__":
    main()
