"""The singular values bench/linalg.lua (under each choice of cuSOLVER routines) and
bench/linalg_peers.py (CuPy) wrote, against NumPy's of the same matrices: for each
svd_s_<m>x<n>_<who>.f64 beside svd_a_<m>x<n>.f64, the largest difference from NumPy's,
relative to NumPy's largest singular value. Prints "@@ svd_f64_<m>x<n>_<who>_s_err value".
    python3 bench/linalg_accuracy.py DIR
"""
import pathlib
import re
import sys

import numpy as np

out = pathlib.Path(sys.argv[1])
for a_path in sorted(out.glob("svd_a_*.f64")):
    m, n = map(int, re.fullmatch(r"svd_a_(\d+)x(\d+)\.f64", a_path.name).groups())
    want = np.linalg.svd(np.fromfile(a_path).reshape(m, n), compute_uv=False)
    for s_path in sorted(out.glob(f"svd_s_{m}x{n}_*.f64")):
        who = s_path.name[len(f"svd_s_{m}x{n}_"):-len(".f64")]
        got = np.fromfile(s_path)
        err = float(np.abs(got - want).max() / want[0]) if got.shape == want.shape else float("inf")
        print(f"singular values of {m} x {n} by {who}: within {err:.2e} of NumPy's (relative to the largest)")
        print(f"@@ svd_f64_{m}x{n}_{who}_s_err {err:.3e}")
