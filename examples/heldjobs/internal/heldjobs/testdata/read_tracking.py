"""Read a held-job search's tracking tables with pandas, as a user would.

    python3 read_tracking.py DIR

DIR is a search's tracking/ directory (heldjobs.Track). The script reads
runs.csv and epochs.csv with the dtypes of their _metadata.json, and
runs.jsonl and epochs.jsonl with read_json(lines=True) (both with
round-trip float parsing: float_precision="round_trip", precise_float=True), checks that the
CSV and JSON Lines forms hold the same table, and prints one JSON line:
the row counts, the best run's id and its best epoch's validation loss as
pandas reads them, for TestTrackingPandas to compare with the ledger.
Tested with Debian bookworm's python3-pandas 1.5.3.
"""
import json
import os
import sys

import pandas as pd


def load(d, name):
    with open(os.path.join(d, name + "_metadata.json")) as f:
        meta = json.load(f)
    csv = pd.read_csv(os.path.join(d, name + ".csv"), dtype=meta["pandas_dtypes"], keep_default_na=False, na_values=[""], float_precision="round_trip")
    jsl = pd.read_json(os.path.join(d, name + ".jsonl"), lines=True, precise_float=True)
    if list(csv.columns) != meta["columns"] or list(jsl.columns) != meta["columns"]:
        raise SystemExit(f"{name}: columns {list(csv.columns)} / {list(jsl.columns)}, metadata {meta['columns']}")
    if len(csv) != meta["total_runs"] or len(jsl) != len(csv):
        raise SystemExit(f"{name}: {len(csv)} CSV rows, {len(jsl)} JSON Lines rows, metadata {meta['total_runs']}")
    for c in csv.columns:
        a, b = csv[c], jsl[c]
        if a.dtype.kind == "f":
            if not ((a - b.astype(float)).abs().fillna(0) == 0).all():
                raise SystemExit(f"{name}.{c}: CSV and JSON Lines differ")
    return csv


d = sys.argv[1]
runs = load(d, "runs")
epochs = load(d, "epochs")
best = runs[runs["best"]]
if len(best) != 1:
    raise SystemExit(f"{len(best)} best runs")
b = best.iloc[0]
kept = epochs[(epochs["run_id"] == b["run_id"]) & (epochs["kept"])]
print(json.dumps({
    "runs": len(runs),
    "epochs": len(epochs),
    "best": b["run_id"],
    "best_epoch": int(b["best_epoch"]),
    "kept_valid_loss": float(kept.iloc[0]["valid_loss"]),
    "epochs_sum": int(runs["epochs"].sum()),
    "dtypes": {c: str(t) for c, t in runs.dtypes.items() if c in ("attempt", "best", "lr", "valid_f1", "shape")},
}))
