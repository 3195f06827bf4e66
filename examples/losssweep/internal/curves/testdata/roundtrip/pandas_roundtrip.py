#!/usr/bin/env python3
"""Reads sweep's export (rt.csv, rt.jsonl) with pandas, the way
docs/losssweep.md tells a researcher to, and writes what pandas got to
pandas.json: each column's dtype and every cell (floats as repr(), which
Python writes as the shortest text that reads back to the same double;
"nan", "inf", "-inf"; missing values as null).

roundtrip_test.go (beside testdata/) compares pandas.json with the dataset Go exported,
bit for bit, so that a change in the export format that pandas would read
differently fails the Go test, which needs no Python.

Run (Debian bookworm's python3-pandas 1.5.3, numpy 1.24.2):
  /usr/bin/python3 examples/losssweep/internal/curves/testdata/roundtrip/pandas_roundtrip.py examples/losssweep/internal/curves/testdata/roundtrip
"""
import json
import math
import sys

import pandas as pd


def read_csv(d, md):
    dt = md["pandas_dtypes"]
    # An empty cell is missing for numbers and booleans; for strings the
    # export quotes an empty string ("") and leaves a missing one empty.
    na = {c: [""] for c, t in dt.items() if t != "object"}
    return pd.read_csv(
        f"{d}/rt.csv",
        dtype=dt,
        keep_default_na=False,
        na_values=na,
        true_values=["true"],
        false_values=["false"],
        float_precision="round_trip",
    )


def read_jsonl(d, md):
    # pandas.read_json(lines=True, precise_float=True) would do for most
    # exports, but its parser rejects subnormal numbers such as 5e-324
    # ("Range error when decoding numeric as double"); the json module
    # reads every double exactly.
    dt = md["pandas_dtypes"]
    with open(f"{d}/rt.jsonl") as f:
        df = pd.DataFrame.from_records([json.loads(line) for line in f], columns=md["columns"])
    for c, t in dt.items():
        if t == "float64":
            df[c] = pd.to_numeric(df[c].replace({"inf": math.inf, "-inf": -math.inf}), errors="raise").astype("float64")
        else:
            df[c] = df[c].astype(t)
    return df[md["columns"]]


def cell(x):
    if x is None or x is pd.NA:
        return None
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if hasattr(x, "item"):  # numpy scalars
        return cell(x.item())
    return x


def dump(df):
    return {
        "dtypes": {c: str(df[c].dtype) for c in df.columns},
        "rows": [[cell(v) for v in row] for row in df.astype(object).itertuples(index=False)],
    }


def main():
    d = sys.argv[1]
    with open(f"{d}/rt_metadata.json") as f:
        md = json.load(f)
    out = {
        "pandas": pd.__version__,
        "columns": md["columns"],
        "csv": dump(read_csv(d, md)),
        "jsonl": dump(read_jsonl(d, md)),
    }
    with open(f"{d}/pandas.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
