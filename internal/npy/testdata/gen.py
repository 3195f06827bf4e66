#!/usr/bin/env python3
"""Generate the NumPy-written fixtures in this directory, or check Go-written files.

    /usr/bin/python3 gen.py   # rewrite the fixtures here (generated with NumPy 1.24.2, Debian python3-numpy)
    python3 gen.py --check D  # read back the files Go wrote into D with
                              #   go test ./internal/npy/ -run TestWriteForNumPy -npy.writedir D

For each fixture NAME.npy the expected values are written next to it as raw
little-endian C-order bytes produced by NumPy's own conversions:
NAME.f64 = arr.astype('<f8'), NAME.f32 = arr.astype('<f4') and, for integer
and bool arrays whose values fit, NAME.i64 = arr.astype('<i8').
For an archive A.npz, key K's expectations are A__K.f64 etc.
"""
import io
import os
import struct
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def expectations(prefix, arr):
    with open(prefix + ".f64", "wb") as f:
        f.write(np.ascontiguousarray(arr.astype("<f8")).tobytes())
    with open(prefix + ".f32", "wb") as f:
        f.write(np.ascontiguousarray(arr.astype("<f4")).tobytes())
    if arr.dtype.kind in "biu":
        if arr.dtype.kind != "u" or arr.size == 0 or int(arr.max()) <= 2**63 - 1:
            with open(prefix + ".i64", "wb") as f:
                f.write(np.ascontiguousarray(arr.astype("<i8")).tobytes())


def values(dt, shape, rng):
    n = int(np.prod(shape))
    dt = np.dtype(dt)
    if dt.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True)
        v[:3] = [info.min, info.max, 0][: min(3, n)]
    else:
        info = np.finfo(dt)
        v = rng.standard_normal(n) * 100
        v = v.astype(dt.newbyteorder("="))
        special = [0.0, -0.0, np.nan, np.inf, -np.inf, info.max, info.tiny, info.smallest_subnormal, -1.5]
        k = min(len(special), n)
        v[:k] = np.array(special[:k], dtype=v.dtype)
    return v.astype(dt).reshape(shape)


def save(name, arr, **kw):
    path = os.path.join(HERE, name + ".npy")
    with open(path, "wb") as f:
        if kw:
            np.lib.format.write_array(f, arr, **kw)
        else:
            np.save(f, arr)
    expectations(os.path.join(HERE, name), arr)


def raw_npy(header_text, data, version=(1, 0)):
    """An .npy file with a hand-written header dictionary."""
    h = header_text.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(h)) + h + data


def generate():
    rng = np.random.default_rng(20261121)
    for kind, sizes in (("b", [1]), ("i", [1, 2, 4, 8]), ("u", [1, 2, 4, 8]), ("f", [2, 4, 8])):
        for size in sizes:
            orders = ["|"] if size == 1 else ["<", ">"]
            for o in orders:
                dt = f"{o}{kind}{size}"
                name = f"{kind}{size}" + {"|": "", "<": "_le", ">": "_be"}[o]
                save(name, values(dt, (3, 4), rng))
    save("f8_3d", values("<f8", (2, 3, 4), rng))
    save("fortran_f8_2d", np.asfortranarray(values("<f8", (3, 5), rng)))
    save("fortran_i4_be_3d", np.asfortranarray(values(">i4", (2, 3, 4), rng)))
    save("scalar_f8", np.array(2.5))
    save("scalar_i2", np.array(-7, dtype="<i2"))
    save("empty_f8", np.zeros((0,), "<f8"))
    save("empty_2d", np.zeros((0, 3), "<u2"))
    save("v2_f8", values("<f8", (4, 2), rng), version=(2, 0))
    save("v3_f4", values("<f4", (5,), rng), version=(3, 0))

    # Header keys in another order and a Python 2 long suffix: both readable.
    a = np.arange(6, dtype="<i4").reshape(2, 3)
    for name, text in (
        ("keys_reordered", "{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4', }"),
        ("py2_long", "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), }"),
    ):
        with open(os.path.join(HERE, name + ".npy"), "wb") as f:
            f.write(raw_npy(text, a.tobytes()))
        expectations(os.path.join(HERE, name), a)

    arrays = {
        "a": values("<f8", (4, 5), rng),
        "b": values(">i4", (3,), rng),
        "c": np.array(True),
        "d": np.asfortranarray(values("<f4", (2, 3), rng)),
    }
    for name, fn in (("stored", np.savez), ("compressed", np.savez_compressed)):
        fn(os.path.join(HERE, name + ".npz"), **arrays)
        for k, v in arrays.items():
            expectations(os.path.join(HERE, f"{name}__{k}"), v)

    # Genuine zip64 records on a small archive: lowering zipfile's limits
    # makes it write zip64 extra fields in the central directory and the
    # zip64 end-of-central-directory record and locator, as it would for a
    # member or archive over 4 GiB.
    saved = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 16, 1
    try:
        np.savez(os.path.join(HERE, "zip64.npz"), **arrays)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved
    for k, v in arrays.items():
        expectations(os.path.join(HERE, f"zip64__{k}"), v)
    raw = open(os.path.join(HERE, "zip64.npz"), "rb").read()
    assert b"PK\x06\x06" in raw and b"PK\x06\x07" in raw, "no zip64 end records"

    # An archive with a text member and a member that is not .npy.
    p = os.path.join(HERE, "mixed.npz")
    with zipfile.ZipFile(p, "w") as z:
        buf = io.BytesIO()
        np.save(buf, arrays["a"])
        z.writestr("a.npy", buf.getvalue())
        z.writestr("notes.txt", b"not an array")
        z.writestr("junk.npy", b"PK this is not npy")
    expectations(os.path.join(HERE, "mixed__a"), arrays["a"])

    bad = {}
    good = open(os.path.join(HERE, "f8_le.npy"), "rb").read()
    bad["bad_truncated_data"] = good[:-5]
    bad["bad_truncated_header"] = good[:40]
    bad["bad_magic"] = b"\x93NUMPZ" + good[6:]
    bad["bad_version"] = good[:6] + b"\x04\x00" + good[8:]
    buf = io.BytesIO()
    np.save(buf, np.zeros(3, dtype=[("x", "<f8"), ("y", "<i4")]))
    bad["bad_structured"] = buf.getvalue()
    buf = io.BytesIO()
    np.save(buf, np.array([1, "a", None], dtype=object), allow_pickle=True)
    bad["bad_object"] = buf.getvalue()
    buf = io.BytesIO()
    np.save(buf, np.zeros(3, dtype="<c16"))
    bad["bad_complex"] = buf.getvalue()
    buf = io.BytesIO()
    np.save(buf, np.array(["ab", "c"]))
    bad["bad_unicode"] = buf.getvalue()
    bad["bad_shape_lies"] = raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }", np.zeros(10).tobytes())
    bad["bad_extra_key"] = raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1, }", np.zeros(1).tobytes())
    bad["bad_missing_key"] = raw_npy("{'descr': '<f8', 'shape': (1,), }", np.zeros(1).tobytes())
    for name, b in bad.items():
        with open(os.path.join(HERE, name + ".npy"), "wb") as f:
            f.write(b)

    stored = open(os.path.join(HERE, "stored.npz"), "rb").read()
    with open(os.path.join(HERE, "bad_truncated.npz"), "wb") as f:
        f.write(stored[: len(stored) // 2])
    with open(os.path.join(HERE, "bad_not_zip.npz"), "wb") as f:
        f.write(b"this is a text file, not a zip archive\n" * 4)
    with zipfile.ZipFile(os.path.join(HERE, "bad_members.npz"), "w") as z:
        z.writestr("lies.npy", raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }", np.zeros(10).tobytes()))
        z.writestr("extra.npy", raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }", np.zeros(11).tobytes()))
        z.writestr("ok.npy", raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", np.ones(2).tobytes()))
    # A deflated member whose CRC is wrong: flip one byte of compressed data.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (64,), }", np.arange(64.0).tobytes()))
    b = bytearray(buf.getvalue())
    b[200] ^= 0x01
    with open(os.path.join(HERE, "bad_corrupt.npz"), "wb") as f:
        f.write(bytes(b))


# Values the Go test writes (TestWriteForNumPy); keep in step with npy_test.go.
def go_written():
    return {
        "f8": (np.array([0.0, -0.0, 1.5, np.nan, np.inf, -np.inf, 1e308, 5e-324], "<f8").reshape(2, 4)),
        "f4": np.array([1.5, -2.25, 3.4028234663852886e38], "<f4"),
        "i1": np.array([-128, 127, 0], "i1"),
        "i2": np.array([-32768, 32767], "<i2"),
        "i4": np.array([-(2**31), 2**31 - 1], "<i4"),
        "i8": np.array([-(2**63), 2**63 - 1, 0, -1, 7, 8], "<i8").reshape(3, 2),
        "u1": np.array([0, 255], "u1"),
        "u2": np.array([0, 65535], "<u2"),
        "u4": np.array([0, 2**32 - 1], "<u4"),
        "u8": np.array([0, 2**64 - 1], "<u8"),
        "b1": np.array([True, False, True], "?"),
        "scalar": np.array(3.25, "<f8"),
        "cube": np.arange(24, dtype="<f8").reshape(2, 3, 4),
    }


def check(d):
    want = go_written()
    failures = 0
    for k, v in want.items():
        got = np.load(os.path.join(d, k + ".npy"))
        ok = got.dtype == v.dtype and got.shape == v.shape and got.tobytes() == v.tobytes()
        print(f"{k}.npy: {'ok' if ok else 'MISMATCH'}")
        failures += not ok
    for arch in ("go_stored.npz", "go_compressed.npz"):
        with np.load(os.path.join(d, arch)) as z:
            for k, v in want.items():
                got = z[k]
                ok = got.dtype == v.dtype and got.shape == v.shape and got.tobytes() == v.tobytes()
                print(f"{arch}[{k}]: {'ok' if ok else 'MISMATCH'}")
                failures += not ok
    print("numpy", np.__version__, "FAILED" if failures else "all Go-written files read back bit for bit")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    generate()
