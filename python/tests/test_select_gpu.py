"""gpuclean.select on CUDA arrays (CuPy, PyTorch): every exact backend gives the CPU reference's
set, as arrays of the library given, on the caller's stream. Skipped without a GPU."""

import numpy as np
import pytest

import gpuclean
from gpuclean import select
from conftest import gpu_array_module
from selection_reference import distributions, expected_top_k

N = 100_003
DATA = distributions(N, seed=11)
LIBS = ["cupy", "torch"]


def to_device(lib_name, lib, x):
    return lib.asarray(x) if lib_name == "cupy" else lib.from_numpy(x).cuda()


def to_numpy(lib_name, a):
    return a.get() if lib_name == "cupy" else a.cpu().numpy()


@pytest.mark.parametrize("lib_name", LIBS)
@pytest.mark.parametrize("name", DATA)
def test_every_exact_backend_gives_the_tie_rule_set(lib_name, name):
    lib = gpu_array_module(lib_name)
    x = DATA[name]
    d_x = to_device(lib_name, lib, x)
    for backend in select.exact_backends():
        for order in select.ORDERS:
            for k in (1, 1024, 65536, N):
                values, indices = select.top_k(d_x, k, order=order, backend=backend)
                assert type(values) is type(d_x) and type(indices) is type(d_x)
                h_idx = to_numpy(lib_name, indices)
                assert h_idx.dtype == np.int64
                order_by_index = np.argsort(h_idx)
                expected = expected_top_k(x, k, order)
                np.testing.assert_array_equal(h_idx[order_by_index], expected, err_msg=f"{backend} {order} k={k}")
                np.testing.assert_array_equal(to_numpy(lib_name, values)[order_by_index], x[expected])


@pytest.mark.parametrize("lib_name", LIBS)
def test_sorted_output_matches_the_cpu_reference(lib_name):
    lib = gpu_array_module(lib_name)
    x = DATA["duplicate_heavy"]
    values, indices = select.top_k(to_device(lib_name, lib, x), 5000, order="largest", sorted=True)
    cpu_values, cpu_indices = select.top_k(x, 5000, order="largest", sorted=True)
    np.testing.assert_array_equal(to_numpy(lib_name, indices), cpu_indices)
    np.testing.assert_array_equal(to_numpy(lib_name, values), cpu_values)


@pytest.mark.parametrize("lib_name", LIBS)
def test_k_above_n_is_refused_as_on_the_host(lib_name):
    lib = gpu_array_module(lib_name)
    d_x = to_device(lib_name, lib, DATA["normal"])
    for backend in select.exact_backends():
        with pytest.raises(gpuclean.UsageError, match=f"k = {N + 1} is more than the {N} elements given"):
            select.top_k(d_x, N + 1, backend=backend)
    _, indices = select.top_k(d_x, N)
    assert indices.shape[0] == N


@pytest.mark.parametrize("lib_name", LIBS)
@pytest.mark.parametrize("name", ["normal", "nan_sprinkled", "duplicate_heavy"])
def test_order_statistics_match_the_cpu_reference(lib_name, name):
    lib = gpu_array_module(lib_name)
    x = DATA[name]
    d_x = to_device(lib_name, lib, x)
    for backend in select.exact_backends():
        assert select.kth(d_x, 4321, backend=backend) == select.kth(x, 4321)
        np.testing.assert_array_equal(select.quantiles(d_x, [0.0, 0.005, 0.5, 0.995, 1.0], backend=backend),
                                      select.quantiles(x, [0.0, 0.005, 0.5, 0.995, 1.0]))


def test_the_callers_stream_is_used_and_completed():
    cupy = gpu_array_module("cupy")
    x = DATA["normal"]
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        d_x = cupy.asarray(x)
        d_y = d_x * 2  # queued on the stream: the selection must see it
        values, indices = select.top_k(d_y, 100, order="largest")
    _, expected = select.top_k(x * 2, 100, order="largest")
    np.testing.assert_array_equal(np.sort(indices.get()), expected)
    other = cupy.cuda.Stream(non_blocking=True)
    values, indices = select.top_k(d_y, 100, order="largest", cuda_stream=other.ptr)
    np.testing.assert_array_equal(np.sort(indices.get()), expected)
