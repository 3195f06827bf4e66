"""Side-by-side peer for the eventlog package: a straightforward Python
reader of HTCondor's classic event-log text format and a NumPy builder of
held-job tensors in the default framing (rows = state at t0 + m*frame,
forward-filled), the shape the Go Builder makes at M = J = 10, E = 46.

HTCondor's own Python bindings (htcondor.JobEventLog) are not installed on
the build machine, so this script is the named peer. Usage:

    go run ./examples/eventlog -out /tmp/ev        # writes /tmp/ev/global.log
    /usr/bin/python3 eventlog/testdata/peer_eventlog.py /tmp/ev/global.log

It prints events per code (compare with /tmp/ev/codes.csv), the number of
labelled held jobs, and throughput per CPU second (time.process_time), the
measure the Go example and benchmarks also print, so that a loaded shared
machine does not distort the ratio. Versions used: Python 3.11.2,
NumPy 1.24.2 (Debian packages).
"""
import re
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime

import numpy as np

HEADER = re.compile(r"^(\d{3}) \((-?\d+)\.(-?\d+)\.(-?\d+)\) (\S+) (\d\d:\d\d:\d\d)(?:\.\d+)?Z? ?(.*)$")
E, M, J, FRAME = 46, 10, 10, 60.0


def read(path, year=2023):
    """Returns a list of (code, (cluster, proc, subproc), unix seconds, body)."""
    events = []
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        cur = None
        body = []
        for line in f:
            line = line.rstrip("\r\n")
            if cur is None:
                if not line.strip():
                    continue
                m = HEADER.match(line)
                if m is None:
                    raise ValueError("bad header: %r" % line)
                date, clock = m.group(5), m.group(6)
                if "/" in date:
                    date = "%04d-%s-%s" % (year, date[:2], date[3:5])
                t = datetime.fromisoformat(date + "T" + clock).timestamp()
                cur = (int(m.group(1)), (int(m.group(2)), int(m.group(3)), int(m.group(4))), t)
                body = [m.group(7)]
            elif line == "...":
                events.append(cur + ("\n".join(body),))
                cur = None
            else:
                body.append(line)
    return events


def label(evs):
    held = released = False
    last = None
    for code, _, _, body in evs:
        if code == 12:
            held = True
        elif code == 13 and held:
            released = True
        if code not in (28, 6):
            last = (code, body)
    if not held or last is None:
        return -1
    code, body = last
    if code == 9:
        return 0
    if code == 5:
        normal = "(1) Normal termination" in body
        if normal:
            return 1 if released else -1
        return 0
    return -1


def build(jobs, seed=1):
    keys = list(jobs)
    times, codes, first, last = [], [], [], []
    for k in keys:
        ev = [(t, c) for c, _, t, _ in jobs[k] if c < E and c != 28]
        ev.sort(key=lambda x: x[0])
        times.append(np.array([t for t, _ in ev]))
        codes.append(np.array([c for _, c in ev], dtype=np.int64))
        first.append(ev[0][0] if ev else np.inf)
        last.append(ev[-1][0] if ev else -np.inf)
    first, last = np.array(first), np.array(last)
    rng = np.random.default_rng(seed)
    samples, labels = [], []
    steps = np.arange(M) * FRAME
    for i, k in enumerate(keys):
        if not any(c == 12 for c, _, _, _ in jobs[k]):
            continue
        lab = label(jobs[k])
        if lab < 0 or len(times[i]) == 0:
            continue
        lo = first[i]
        hi = lo + (M - 1) * FRAME
        cand = np.flatnonzero((first <= hi) & (last >= lo))
        cand = cand[cand != i]
        ctx = rng.choice(cand, size=min(J - 1, len(cand)), replace=False) if len(cand) else []
        x = np.zeros((J, M, E), dtype=np.float32)
        for row, jj in enumerate([i] + list(ctx)):
            idx = np.searchsorted(times[jj], lo + steps, side="right") - 1
            ok = idx >= 0
            x[row, np.flatnonzero(ok), codes[jj][idx[ok]]] = 1
        samples.append(x)
        labels.append(lab)
    return samples, labels


def main():
    path = sys.argv[1]
    with open(path, "rb") as f:
        size = len(f.read())
    c0 = time.process_time()
    events = read(path)
    c1 = time.process_time()
    counts = Counter(c for c, _, _, _ in events)
    jobs = defaultdict(list)
    for ev in events:
        if ev[1][0] >= 0:
            jobs[ev[1]].append(ev)
    c2 = time.process_time()
    samples, labels = build(jobs)
    c3 = time.process_time()
    for code in sorted(counts):
        print("%03d,%d" % (code, counts[code]))
    print("events %d, jobs %d, samples %d (release %d, remove %d)" % (
        len(events), len(jobs), len(samples), labels.count(1), labels.count(0)))
    print("read: %.1f MB per CPU second (%.2f s)" % (size / 1e6 / (c1 - c0), c1 - c0))
    print("build: %.0f samples per CPU second (%.2f s, M=J=%d, E=%d)" % (len(samples) / (c3 - c2), c3 - c2, M, E))


if __name__ == "__main__":
    main()
