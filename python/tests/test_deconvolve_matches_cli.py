"""gpuclean.deconvolve gives what the command line gives, file for file and pixel for pixel."""

import json

import numpy as np
import pytest

import gpuclean
from conftest import gpu_array_module, run_cli

# A short run keeps the suite quick on a CPU; auto picks the GPU where there is one, for both.
OPTIONS = {"niter": 3000, "gain": 0.1, "auto_threshold": 2.0}
OUTPUTS = {"output": "restored.fits", "model": "model.fits", "residual": "residual.fits",
           "components": "components.csv", "json": "summary.json"}


def cli_args(dirty, psf):
    args = [dirty, psf]
    for key, value in {**OUTPUTS, **OPTIONS}.items():
        args += ["--" + key.replace("_", "-"), repr(value) if isinstance(value, float) else value]
    return args


@pytest.fixture(scope="module")
def cli_outputs(binary, sample, tmp_path_factory):
    where = tmp_path_factory.mktemp("cli")
    code, err = run_cli(binary, cli_args(*sample), cwd=where)
    assert code == 0, err
    return where


def comparable_cards(header):
    return [c for c in header.cards if not c.startswith("DATE    =")]


@pytest.mark.parametrize("name", ["restored.fits", "model.fits", "residual.fits"])
def test_written_files_equal_the_cli_files(cli_outputs, sample, tmp_path, monkeypatch, name):
    # The same relative output names from the same options: HISTORY records the same command line.
    monkeypatch.chdir(tmp_path)
    gpuclean.deconvolve(*map(str, sample), **OUTPUTS, **OPTIONS)
    ours, theirs = gpuclean.fits.read(tmp_path / name), gpuclean.fits.read(cli_outputs / name)
    np.testing.assert_array_equal(ours.data, theirs.data)
    assert comparable_cards(ours.header) == comparable_cards(theirs.header)
    assert any(c.startswith("GCSTOP") for c in ours.header.cards)


def test_components_and_summary_equal_the_cli(cli_outputs, sample, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = gpuclean.deconvolve(*map(str, sample), **OUTPUTS, **OPTIONS)
    assert (tmp_path / "components.csv").read_text() == (cli_outputs / "components.csv").read_text()
    ours, theirs = (json.loads((d / "summary.json").read_text()) for d in (tmp_path, cli_outputs))
    assert set(result.seconds) >= {"read", "clean", "restore", "write"}
    assert set(result.stage_seconds) >= {"select", "minor", "convolve"}
    for summary in (ours, theirs, result.summary):
        # Measurements, not results: times, the device memory in use (other allocations of the
        # process count), and the time-weighted share of busy SMs.
        summary.pop("seconds")
        run = summary["runs"][0]
        run.pop("stage_seconds")
        run.pop("peak_gpu_memory_bytes")
        (run["minor_cycles_gpu"] or {}).pop("sm_busy_fraction", None)
    assert ours == theirs == result.summary
    assert ours["schema"] == "gpuclean-summary" and ours["front_end"] == "clean"
    run = theirs["runs"][0]
    assert result.stop_reason == run["stop_reason"] and result.iterations == run["iterations"]


def test_arrays_give_the_cli_images(cli_outputs, sample):
    dirty, header = gpuclean.fits.read(sample[0])
    psf = gpuclean.fits.read(sample[1]).data
    result = gpuclean.deconvolve(dirty, psf, header=header, **OPTIONS)
    for name in ("restored", "model", "residual"):
        np.testing.assert_array_equal(getattr(result, name), gpuclean.fits.read(cli_outputs / f"{name}.fits").data)
    assert result.beam["bmaj_arcsec"] is not None  # the header's WCS gave the beam in arcsec
    flux = np.zeros_like(result.model)
    np.add.at(flux, (result.components["y"], result.components["x"]), result.components["flux"])
    np.testing.assert_allclose(flux, result.model, rtol=1e-5, atol=1e-7)


def test_a_mask_array_confines_the_components(sample):
    dirty, header = gpuclean.fits.read(sample[0])
    psf = gpuclean.fits.read(sample[1]).data
    mask = np.zeros(dirty.shape, dtype=bool)
    mask[200:300, 100:400] = True
    result = gpuclean.deconvolve(dirty, psf, header=header, mask=mask, niter=500, device="cpu", quiet=True)
    assert result.iterations > 0
    assert mask[result.components["y"], result.components["x"]].all()


def test_input_errors_in_arrays_are_input_errors(sample):
    psf = gpuclean.fits.read(sample[1]).data
    with pytest.raises(gpuclean.InputError, match=r"every pixel of 'dirty \(array\)' is NaN"):
        gpuclean.deconvolve(np.full(psf.shape, np.nan, dtype=np.float32), psf, quiet=True)
    with pytest.raises(gpuclean.InputError, match="PSF"):
        gpuclean.deconvolve(psf, np.full((8, 8), 1.0, dtype=np.float32), quiet=True)


@pytest.mark.parametrize("lib_name", ["cupy", "torch"])
def test_cuda_arrays_give_the_numpy_result(sample, lib_name):
    lib = gpu_array_module(lib_name)
    dirty, header = gpuclean.fits.read(sample[0])
    psf = gpuclean.fits.read(sample[1]).data
    on_gpu = (lib.asarray(dirty), lib.asarray(psf)) if lib_name == "cupy" else \
        (lib.from_numpy(dirty).cuda(), lib.from_numpy(psf).cuda())
    expected = gpuclean.deconvolve(dirty, psf, header=header, quiet=True, **OPTIONS)
    result = gpuclean.deconvolve(*on_gpu, header=header, quiet=True, **OPTIONS)
    np.testing.assert_array_equal(result.restored, expected.restored)
    np.testing.assert_array_equal(result.components, expected.components)


def test_multiscale_through_python_is_the_cli_run(binary, sample, tmp_path, monkeypatch):
    # The multiscale options go through the same parser; the components carry their scale.
    options = {"niter": 600, "multiscale": True, "multiscale_max_scales": 3, "device": "cpu"}
    monkeypatch.chdir(tmp_path)
    code, err = run_cli(binary, [*map(str, sample), "--output", "cli.fits", "--components", "cli.csv", "--niter", "600",
                                 "--multiscale", "--multiscale-max-scales", "3", "--device", "cpu"], cwd=tmp_path)
    assert code == 0, err
    result = gpuclean.deconvolve(*map(str, sample), output="py.fits", components="py.csv", **options)
    assert (tmp_path / "py.csv").read_text() == (tmp_path / "cli.csv").read_text()
    assert result.scales[0]["size_pixels"] == 0
    assert len(result.scales) == 3
    sizes = {s["size_pixels"] for s in result.scales}
    assert set(np.unique(result.components["scale"])) <= sizes
    np.testing.assert_array_equal(gpuclean.fits.read(tmp_path / "py.fits").data,
                                  gpuclean.fits.read(tmp_path / "cli.fits").data)
