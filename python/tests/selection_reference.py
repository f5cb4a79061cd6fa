"""The tie rule written with NumPy (partition for the k-th key), to check gpuclean.select against."""

import numpy as np

KEYS = {"largest": lambda x: x + 0.0, "smallest": lambda x: -x + 0.0, "largest_abs": np.abs}


def expected_top_k(x, k, order):
    """Indices of the top-k under the tie rule, ascending: every key above the k-th key, then the
    lowest-index elements equal to it. NaN keys are never selected."""
    x = np.asarray(x, dtype=np.float32).ravel()
    keys = KEYS[order](x)
    valid = np.flatnonzero(~np.isnan(keys))
    k = min(k, valid.size)
    if k == 0:
        return np.empty(0, dtype=np.int64)
    kth = keys[valid[np.argpartition(-keys[valid], k - 1)[k - 1]]]
    above = valid[keys[valid] > kth]
    ties = valid[keys[valid] == kth][: k - above.size]
    return np.sort(np.concatenate([above, ties]))


def distributions(n, seed):
    rng = np.random.default_rng(seed)
    nan_sprinkled = rng.standard_normal(n).astype(np.float32)
    nan_sprinkled[rng.random(n) < 0.2] = np.nan
    return {
        "normal": rng.standard_normal(n).astype(np.float32),
        "duplicate_heavy": rng.integers(-3, 4, n).astype(np.float32),
        "nan_sprinkled": nan_sprinkled,
        "all_equal": np.full(n, -1.5, dtype=np.float32),
        "signed_zeros": np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(np.float32),
    }
