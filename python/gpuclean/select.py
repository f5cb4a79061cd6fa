"""The selection library: top-k and order statistics on NumPy arrays and on CUDA arrays.

Semantics, the same for every backend (select/select_types.hpp):

* The key of x is x (``order="largest"``), -x (``"smallest"``) or |x| (``"largest_abs"``);
  -0 and +0 are equal keys. NaN is never selected.
* :func:`top_k` returns exactly min(k, number of non-NaN elements) elements: every element whose
  key beats the k-th key, then, among elements whose key equals the k-th key, those with the
  lowest indices. So every backend returns the same set, element for element.
* k above the number of elements (NaN included) cannot be met: :func:`top_k` raises
  :class:`gpuclean.UsageError`, a ValueError, as the C++ library and the command line refuse it.
* Order statistics count ranks from 0 over the non-NaN values in ascending order.

Inputs of any shape are read in C order as one flat array; indices are flat indices. Values
are float32: other dtypes are cast (a copy, on the device the data lives on).

NumPy input runs the CPU reference (``backend`` "auto" or "cpu"). CUDA input (CuPy, PyTorch,
or any array with ``__cuda_array_interface__`` or CUDA DLPack, viewed through CuPy) runs on its
device, on the caller's stream (CuPy's current stream, PyTorch's current stream, or
``cuda_stream=``: a pointer or an object with ``.ptr``/``.cuda_stream``), without a copy to the
host; the calls return with the work on that stream complete. Results come back as arrays of
the library given (CuPy in, CuPy out; torch in, torch out), values float32 and indices int64.
Each GPU call takes its scratch from the device's stream-ordered memory pool, which gpuclean
tells to keep freed memory (as the command line does), so repeated calls allocate nothing new.
"""

import numbers

import numpy as np

from . import _arrays, _gpuclean
from .errors import UsageError

ORDERS = ("largest", "smallest", "largest_abs")


def backends():
    """The GPU backends by name (empty in a CPU-only build); "auto" picks by a measured rule."""
    return list(_gpuclean.backends())


def exact_backends():
    """The GPU backends that keep the tie rule exactly (all but the approximate ones)."""
    return list(_gpuclean.exact_backends())


def _count(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise UsageError(f"{name} must be an integer >= 0, not {value!r}")
    return int(value)


def _check_order(order):
    if order not in ORDERS:
        raise UsageError(f"order must be largest, smallest or largest_abs, not {order!r}")


def _host_values(x, backend):
    if backend not in ("auto", "cpu"):
        raise UsageError(f"backend {backend!r} runs on CUDA arrays; NumPy input runs the CPU reference "
                         "(backend 'auto' or 'cpu')")
    return np.ascontiguousarray(x, dtype=np.float32).ravel()


def top_k(x, k, order="largest_abs", backend="auto", sorted=False, *, cuda_stream=None):
    """The k elements with the largest keys: ``(values, indices)``.

    ``sorted=True`` orders them best key first, ties by index; otherwise NumPy results come in
    ascending index order and GPU results in any order. k above ``x.size`` raises UsageError
    (a ValueError); k = ``x.size`` takes every non-NaN element.
    """
    k = _count(k, "k")
    _check_order(order)
    dev = _arrays.device_view(x, cuda_stream)
    if dev is None:
        values, indices = _gpuclean.top_k_cpu(_host_values(x, backend), k, order, bool(sorted))
        return values, indices.astype(np.int64)
    _gpuclean.check_top_k(dev.n, k)  # before the outputs are allocated for k
    values, indices = dev.empty(k)
    count = 0
    if k > 0:
        count = _gpuclean.top_k_gpu(backend, dev.pointer, dev.n, k, order, bool(sorted), dev.stream, dev.device,
                                    dev.pointer_of(values), dev.pointer_of(indices))
    return values[:count], dev.indices64(indices[:count])


def _order_statistics(x, ranks_of, backend, cuda_stream):
    """Values at the ranks ranks_of(n_valid) returns; host NumPy float32."""
    dev = _arrays.device_view(x, cuda_stream)
    if dev is None:
        flat = _host_values(x, backend)
        ranks = ranks_of(int(np.count_nonzero(~np.isnan(flat))))
        return _gpuclean.order_statistics_cpu(flat, ranks)
    ranks = ranks_of(dev.count_valid())
    return np.asarray(_gpuclean.order_statistics_gpu(backend, dev.pointer, dev.n, ranks, dev.stream, dev.device),
                      dtype=np.float32)


def kth(x, k, backend="auto", *, cuda_stream=None):
    """The value of rank k (0-based, ascending) among the non-NaN values, as ``np.partition(x, k)[k]``
    holds it; NaN when k is not below the number of non-NaN values. A float (on the host)."""
    k = _count(k, "k")
    return float(_order_statistics(x, lambda n_valid: [k], backend, cuda_stream)[0])


def quantiles(x, qs, backend="auto", *, cuda_stream=None):
    """Quantiles (fractions in [0, 1]) of the non-NaN values, each the value at the nearest rank to
    q (n_valid - 1), as the quick-look scaling takes them: a NumPy float32 array (on the host).
    NaN for every q when nothing is valid."""
    qs = [float(q) for q in np.atleast_1d(np.asarray(qs, dtype=np.float64))]
    if any(not (0.0 <= q <= 1.0) for q in qs):
        raise UsageError(f"quantiles must lie in [0, 1], not {qs}")

    def ranks_of(n_valid):
        # Nothing valid: rank 0 is beyond the valid values, which gives NaN.
        return list(_gpuclean.quantile_ranks(qs, n_valid)) if n_valid > 0 else [0] * len(qs)

    return _order_statistics(x, ranks_of, backend, cuda_stream)
