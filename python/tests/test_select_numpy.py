"""gpuclean.select on NumPy arrays against NumPy under the library's tie rule."""

import numpy as np
import pytest

import gpuclean
from gpuclean import select
from selection_reference import distributions, expected_top_k

N = 1001
DATA = distributions(N, seed=7)
KS = [0, 1, 17, 500, N]


@pytest.mark.parametrize("order", select.ORDERS)
@pytest.mark.parametrize("name", DATA)
def test_top_k_is_the_tie_rule_set(name, order):
    x = DATA[name]
    for k in KS:
        values, indices = select.top_k(x, k, order=order)
        expected = expected_top_k(x, k, order)
        assert indices.dtype == np.int64
        np.testing.assert_array_equal(indices, expected)  # unsorted output: ascending indices
        np.testing.assert_array_equal(values, x[expected])


@pytest.mark.parametrize("name", DATA)
def test_sorted_output_is_best_key_first_then_index(name):
    x = DATA[name]
    values, indices = select.top_k(x, 300, order="largest_abs", sorted=True)
    keys = np.abs(values)
    assert np.all((keys[:-1] > keys[1:]) | ((keys[:-1] == keys[1:]) & (indices[:-1] < indices[1:])))
    np.testing.assert_array_equal(np.sort(indices), expected_top_k(x, 300, "largest_abs"))


@pytest.mark.parametrize("name", DATA)
def test_kth_is_numpy_partition(name):
    x = DATA[name]
    n_valid = np.count_nonzero(~np.isnan(x))
    for k in (0, 1, n_valid // 2, n_valid - 1):
        assert select.kth(x, k) == np.partition(x, k)[k]
    assert np.isnan(select.kth(x, n_valid))


def test_quantiles_are_numpy_nearest_ranks():
    valid = DATA["normal"]  # 1001 values: every q (n - 1) below is a whole rank, NumPy's rounding stays out
    x = np.insert(valid, [0, 10, 500], np.nan)
    qs = [0.0, 0.1, 0.25, 0.5, 0.999, 1.0]
    np.testing.assert_array_equal(select.quantiles(x, qs), np.quantile(valid, qs, method="nearest").astype(np.float32))
    assert np.isnan(select.quantiles(np.full(4, np.nan, dtype=np.float32), [0.5])).all()


def test_any_shape_is_read_flat_in_c_order():
    x = DATA["normal"][:1000].reshape(20, 50)
    _, indices = select.top_k(x, 10, order="largest")
    np.testing.assert_array_equal(indices, expected_top_k(x.ravel(), 10, "largest"))


@pytest.mark.parametrize("call", [lambda: select.top_k(DATA["normal"], -1), lambda: select.top_k(DATA["normal"], 2.5),
                                  lambda: select.top_k(DATA["normal"], 3, order="biggest"),
                                  lambda: select.top_k(DATA["normal"], 3, backend="randomized"),
                                  lambda: select.quantiles(DATA["normal"], [1.5])])
def test_bad_arguments_are_usage_errors(call):
    with pytest.raises(gpuclean.UsageError):
        call()


@pytest.mark.parametrize("k", [N + 1, N + 5])
def test_k_above_n_is_refused(k):
    with pytest.raises(ValueError, match=f"k = {k} is more than the {N} elements given; give k <= {N}") as e:
        select.top_k(DATA["normal"], k)
    assert isinstance(e.value, gpuclean.UsageError)


def test_k_equal_to_n_takes_every_valid_element():
    x = DATA["nan_sprinkled"]
    _, indices = select.top_k(x, N)
    np.testing.assert_array_equal(indices, np.flatnonzero(~np.isnan(x)))
