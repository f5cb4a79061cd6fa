"""data/simulate_ms.py writes MeasurementSets that casacore reads back as simulated and that
WSClean images at the right place and flux. Skipped without python3-casacore (or wsclean)."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE_DIR

tables = pytest.importorskip("casacore.tables", reason="python3-casacore is not installed")
sys.path.insert(0, str(SOURCE_DIR / "data"))
import simulate_ms  # noqa: E402
from msim.sky import Source  # noqa: E402

CENTRE_HZ = 1.284e9


def simulate(path, sources, **kw):
    options = dict(antennas=16, hours=0.5, integration_s=600.0, channels=4, bandwidth_hz=200e6, noise_jy=0.0)
    options.update(kw)
    return simulate_ms.simulate(path, sources, centre_hz=CENTRE_HZ, **options)


def column(ms, name, subtable=None):
    with tables.table(str(ms) + (f"/{subtable}" if subtable else ""), ack=False) as t:
        return t.getcol(name)


def test_rows_channels_and_uvw_describe_the_observation(tmp_path):
    ms = tmp_path / "a.ms"
    info = simulate(ms, [Source("point", 0, 0, 1.0)])
    assert info["baselines"] == 16 * 15 // 2 and info["times"] == 3
    assert info["rows"] == info["baselines"] * info["times"] == len(column(ms, "TIME"))
    assert len(np.unique(column(ms, "TIME"))) == 3
    freqs = column(ms, "CHAN_FREQ", "SPECTRAL_WINDOW")[0]
    np.testing.assert_allclose(freqs, CENTRE_HZ + np.array([-75e6, -25e6, 25e6, 75e6]))
    uvw = np.linalg.norm(column(ms, "UVW"), axis=1)
    assert 0 < uvw.min() and uvw.max() <= info["max_baseline_m"] + 1e-6
    assert len(column(ms, "NAME", "ANTENNA")) == 16
    assert list(column(ms, "CORR_TYPE", "POLARIZATION")[0]) == [9, 12]  # XX, YY
    assert column(ms, "DATA").shape == (info["rows"], 4, 2)


def test_point_source_at_phase_centre_is_its_flux_plus_noise(tmp_path):
    ms = tmp_path / "a.ms"
    simulate(ms, [Source("point", 0, 0, 2.0, spectral_index=-0.7)], noise_jy=0.05, seed=3)
    data = column(ms, "DATA")
    freqs = column(ms, "CHAN_FREQ", "SPECTRAL_WINDOW")[0]
    noise = data - (2.0 * (freqs / CENTRE_HZ) ** -0.7)[None, :, None]
    assert abs(noise.mean()) < 5 * 0.05 / np.sqrt(noise.size)
    np.testing.assert_allclose([noise.real.std(), noise.imag.std()], 0.05, rtol=0.05)
    np.testing.assert_allclose(column(ms, "WEIGHT"), 1 / 0.05 ** 2)


def test_same_seed_same_visibilities(tmp_path):
    sources = [Source("gaussian", 30, -20, 0.5, -0.7, 20, 10, 45)]
    simulate(tmp_path / "a.ms", sources, noise_jy=0.1, seed=7)
    simulate(tmp_path / "b.ms", sources, noise_jy=0.1, seed=7)
    np.testing.assert_array_equal(column(tmp_path / "a.ms", "DATA"), column(tmp_path / "b.ms", "DATA"))


def test_command_line_writes_the_ms_and_its_truth_list(tmp_path):
    out = tmp_path / "cli.ms"
    args = ["--out", out, "--sky", "mixed", "--antennas", "8", "--hours", "0.2", "--channels", "2"]
    run = lambda: subprocess.run([sys.executable, SOURCE_DIR / "data" / "simulate_ms.py"] + args,
                                 capture_output=True, text=True)
    assert run().returncode == 0
    truth = (tmp_path / "cli-truth.csv").read_text().splitlines()
    assert len(truth) == 1 + 11 and truth[0].startswith("id,ra_deg,dec_deg")
    again = run()
    assert again.returncode != 0 and "pass --overwrite" in again.stderr


@pytest.mark.skipif(shutil.which("wsclean") is None, reason="wsclean is not installed")
def test_wsclean_dirty_image_peaks_at_the_source_with_its_flux(tmp_path):
    gpuclean = pytest.importorskip("gpuclean")
    ms = tmp_path / "one.ms"
    l_arcsec, m_arcsec = 60.0, -40.0  # east and south of the phase centre
    simulate(ms, [Source("point", l_arcsec, m_arcsec, 1.0)], antennas=32, hours=1.0, noise_jy=0.01)
    run = subprocess.run(["wsclean", "-size", "256", "256", "-scale", "2asec", "-niter", "0",
                          "-name", tmp_path / "one", ms], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:]
    image = gpuclean.fits.read(tmp_path / "one-dirty.fits")
    h = image.header
    x = h["CRPIX1"] - 1 + (l_arcsec / 3600) / h["CDELT1"]  # SIN projection: l, m are direction cosines
    y = h["CRPIX2"] - 1 + (m_arcsec / 3600) / h["CDELT2"]
    peak = np.unravel_index(np.argmax(image.data), image.data.shape)
    assert peak == (round(y), round(x))
    assert image.data[peak] == pytest.approx(1.0, rel=0.05)
