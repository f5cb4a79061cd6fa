"""gpuclean.deconvolve on a CUDA dirty image (CuPy, PyTorch): a GPU run reads it in place and
makes exactly what the same run makes from a NumPy array; NaN pixels are found on the device;
arrays it cannot read in place are refused with a message that says how to fix them; a CPU run
downloads it. Skipped without a GPU."""

import numpy as np
import pytest

import gpuclean
from conftest import gpu_array_module
from gpuclean import fits

OPTIONS = dict(niter=3000, device="gpu", auto_threshold=3)
LIBS = ["cupy", "torch"]


def to_device(lib_name, lib, x):
    return lib.asarray(x) if lib_name == "cupy" else lib.from_numpy(np.ascontiguousarray(x)).cuda()


@pytest.fixture(scope="module")
def images(sample):
    dirty, header = fits.read(sample[0])
    return np.ascontiguousarray(dirty, dtype=np.float32), header, fits.read(sample[1]).data


def assert_same(a, b):
    for name in ("model", "residual", "restored"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.components, b.components)
    assert a.stop_reason == b.stop_reason and a.major_cycles == b.major_cycles


@pytest.mark.parametrize("lib_name", LIBS)
def test_a_cuda_dirty_image_is_read_in_place_with_the_host_runs_result(lib_name, images, monkeypatch):
    lib = gpu_array_module(lib_name)
    dirty, header, psf = images
    on_host = gpuclean.deconvolve(dirty, psf, header=header, **OPTIONS)
    # No download of the dirty image: to_host is only ever called for the PSF.
    from gpuclean import _arrays
    real_to_host = _arrays.to_host
    seen = []
    monkeypatch.setattr(_arrays, "to_host", lambda x: seen.append(_arrays.is_cuda_array(x)) or real_to_host(x))
    on_device = gpuclean.deconvolve(to_device(lib_name, lib, dirty), psf, header=header, **OPTIONS)
    assert not any(seen)
    assert on_device.image["dirty_on_device"] is True
    assert on_host.image["dirty_on_device"] is False
    assert_same(on_device, on_host)


@pytest.mark.parametrize("lib_name", LIBS)
def test_nan_pixels_are_found_on_the_device(lib_name, images):
    lib = gpu_array_module(lib_name)
    dirty, header, psf = images
    holed = dirty.copy()
    holed[100:120, 30:90] = np.nan
    on_host = gpuclean.deconvolve(holed, psf, header=header, **OPTIONS)
    on_device = gpuclean.deconvolve(to_device(lib_name, lib, holed), psf, header=header, **OPTIONS)
    assert on_device.image["nan_pixels"] == 20 * 60 == on_host.image["nan_pixels"]
    assert_same(on_device, on_host)
    assert np.isnan(on_device.residual[110, 50])


@pytest.mark.parametrize("lib_name", LIBS)
def test_arrays_that_cannot_be_read_in_place_are_refused(lib_name, images):
    lib = gpu_array_module(lib_name)
    dirty, header, psf = images
    d = to_device(lib_name, lib, dirty.astype(np.float64))
    with pytest.raises(ValueError, match="float32"):
        gpuclean.deconvolve(d, psf, **OPTIONS)
    d = to_device(lib_name, lib, dirty)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuclean.deconvolve(d.T, psf, **OPTIONS)
    with pytest.raises(ValueError, match="2-D"):
        gpuclean.deconvolve(d.reshape(-1), psf, **OPTIONS)


@pytest.mark.parametrize("lib_name", LIBS)
def test_a_cpu_run_downloads_a_cuda_dirty_image(lib_name, images):
    lib = gpu_array_module(lib_name)
    dirty, header, psf = images
    options = dict(OPTIONS, device="cpu")
    on_device = gpuclean.deconvolve(to_device(lib_name, lib, dirty), psf, header=header, **options)
    on_host = gpuclean.deconvolve(dirty, psf, header=header, **options)
    assert on_device.image["dirty_on_device"] is False
    assert_same(on_device, on_host)
