"""Writes numpy_dataset.npz, a dataset saved by NumPy itself, for
TestReadNumPyDataset. Run from this directory:

    /usr/bin/python3 gen_dataset.py

Generated with Python 3.11.2 and NumPy 1.24.2 (Debian python3-numpy).
"""
import numpy as np

n, J, M, E = 3, 2, 4, 5
# x[i, j, m, e] = 1 where e == (i + j + m) % E: a one-hot pattern the test recomputes.
x = np.zeros((n, J, M, E), dtype=np.float32)
for i in range(n):
    for j in range(J):
        for m in range(M):
            x[i, j, m, (i + j + m) % E] = 1
labels = np.array([1, 0, -1], dtype=np.int8)
jobs = np.array([[10, 0, 0], [11, 2, 0], [12, 0, 1]], dtype=np.int64)
# E, M, frame (ns), J, seed, seedcompat, pad, unlabeled
config = np.array([E, M, 60 * 10**9, J, 7, 1, 0, 1], dtype=np.int64)
np.savez_compressed("numpy_dataset.npz", x=x, labels=labels, jobs=jobs, config=config)
