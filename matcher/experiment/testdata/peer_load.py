#!/usr/bin/python3
"""Peer for BenchmarkLoadUnique: load and de-duplicate the experiment
jobspecs the way the published drivers did before submitting any job
(rainbow-experiments run_experiments.py: yaml.safe_load per file, then an
md5 of json.dumps(sorted(resources.items())) to drop repeats).

    /usr/bin/python3 matcher/experiment/testdata/peer_load.py ../shared/testdata/rainbow

Prints seconds per experiment (best of 3) with the Python and PyYAML
versions. Written for timing only; not used by the Go tests.
"""
import hashlib
import json
import os
import sys
import time

import yaml


def unique(files):
    jobspecs, seen, repeated = {}, set(), 0
    for f in files:
        with open(f) as fd:
            specs = yaml.safe_load(fd)
        for spec in specs:
            if not spec["resources"]:
                continue
            uid = hashlib.md5(json.dumps(sorted(spec["resources"].items())).encode()).hexdigest()
            if uid in seen:
                repeated += 1
                continue
            seen.add(uid)
            jobspecs[spec["name"]] = spec
    return jobspecs, repeated


def main():
    root = sys.argv[1]
    print(f"python {sys.version.split()[0]}, PyYAML {yaml.__version__} (safe_load, pure-Python loader as published)")
    for exp in ["reliabuild", "spack-build"]:
        d = os.path.join(root, exp, "jobspecs")
        files = sorted(os.path.join(d, x) for x in os.listdir(d))
        best = None
        for _ in range(3):
            t = time.perf_counter()
            jobs, rep = unique(files)
            el = time.perf_counter() - t
            best = el if best is None else min(best, el)
        print(f"{exp}: {len(jobs)} unique jobspecs, {rep} repeated, best of 3: {best:.2f} s")


if __name__ == "__main__":
    main()
