"""gpuclean inside WSClean's major cycle against WSClean's own deconvolution, where their meanings
were found to differ: the logarithmic spectral fit's channel weighting (WSClean's is unweighted),
and -local-rms / -auto-mask over WSClean's major cycles (one noise map per major cycle, in
WSClean's theoretical beam; the auto-mask's masked phase starting on a re-imaged residual).
Each comparison runs WSClean alone and with gpuclean's hook on the same simulated MS (512^2, a few
seconds each). Skipped without wsclean or python3-casacore."""

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE_DIR
from wsclean_runs import run_wsclean

pytestmark = pytest.mark.skipif(shutil.which("wsclean") is None, reason="wsclean is not installed")
pytest.importorskip("casacore.tables", reason="python3-casacore is not installed")
gpuclean = pytest.importorskip("gpuclean")

COMMON = ["-size", "512", "512", "-scale", "2asec", "-niter", "20000", "-mgain", "0.8", "-auto-threshold", "3"]
MAJOR = re.compile(r"== Deconvolving \(\d+\) ==")
THEORETIC_BEAM = re.compile(r"Theoretic beam = ([0-9.]+)''")


def simulate(folder, name, *options):
    out = folder / name
    subprocess.run([sys.executable, SOURCE_DIR / "data" / "simulate_ms.py", "--out", out, *options], check=True,
                   capture_output=True)
    return out


@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    """The simulator's default "mixed" sky (8 points, 3 Gaussians) with its noise."""
    return simulate(tmp_path_factory.mktemp("science"), "sim.ms")


def wsclean(ms, name, options, hook=None, gpuclean_options=None):
    run = run_wsclean(ms, name, options, hook, gpuclean_options)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    return run


def figures(ms, name, run):
    """(residual RMS, model flux, WSClean major cycles) of a run."""
    read = lambda kind: np.asarray(gpuclean.fits.read(ms.parent / f"{name}-{kind}.fits").data, dtype=np.float64)
    residual, model = read("residual"), read("model")
    return float(np.sqrt(np.nanmean(residual ** 2))), float(model.sum()), len(MAJOR.findall(run.stdout))


# The probe runs inside WSClean and compares gpuclean's fit (fed WSClean's own channel weights) with
# WSClean's fitter (meta.spectral_fitter) on random positive spectra.
PROBE = '''
import numpy as np
def deconvolve(residual, model, psf, meta):
    from gpuclean import _gpuclean
    freqs = [c.frequency for c in meta.channels]
    weights = [c.weight for c in meta.channels]
    terms = len(np.asarray(meta.spectral_fitter.fit(np.ones(len(freqs)), 0, 0)))
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(30):
        values = rng.uniform(0.5, 2.0, len(freqs))
        theirs = np.asarray(meta.spectral_fitter.fit_and_evaluate(values.copy(), 0, 0))
        ours = _gpuclean.fit_spectrum(values.astype(np.float32), freqs, weights, terms, True)
        worst = max(worst, float(np.max(np.abs(ours - theirs) / np.abs(theirs))))
    print(f"PROBE terms {terms} weights {min(weights)} {max(weights)} mismatch {worst:.3e}", flush=True)
    return {"residual": residual, "model": model, "level": 0.0, "continue": False}
'''


@pytest.mark.parametrize("terms", [2, 3, 4])
def test_log_fit_matches_wscleans_with_unequal_weights(tmp_path, terms):
    ms = simulate(tmp_path, "band.ms", "--channels", "8", "--freq", "1.44e9", "--bandwidth", "160e6")
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    run = wsclean(ms, "fit", ["-size", "256", "256", "-scale", "4asec", "-niter", "10", "-channels-out", "4",
                              "-join-channels", "-fit-spectral-log-pol", str(terms)], hook=str(probe))
    found = re.search(r"PROBE terms (\d+) weights (\S+) (\S+) mismatch (\S+)", run.stdout)
    assert found, run.stdout[-3000:]
    assert int(found.group(1)) == terms
    low, high, mismatch = (float(found.group(i)) for i in (2, 3, 4))
    assert high > 1.05 * low, "the channel weights must differ for the test to mean anything"
    assert mismatch < 1e-4


# The hook's run has WSClean's own run's command line plus -python-deconvolution: the hook carries
# -auto-mask and -local-rms into gpuclean, with -local-rms-window counted in WSClean's theoretical
# beam. WSClean 3.1 must not be given -multiscale with -auto-mask and a Python deconvolver (its
# ParallelDeconvolution::SetAutoMaskMode static_casts every algorithm, the Python one too, to
# MultiScaleAlgorithm and writes into it; the hook refuses it), so there --multiscale goes in
# GPUCLEAN_OPTIONS. WSClean 3.1 aborts (double free) on its own -multiscale with -local-rms, so only
# -auto-mask is compared with multiscale.
CASES = {
    "auto-mask": ["-auto-mask", "5"],
    "local-rms": ["-local-rms"],
    "auto-mask-local-rms": ["-auto-mask", "5", "-local-rms"],
    "auto-mask-multiscale": ["-auto-mask", "5", "-multiscale"],
}


def wsclean_version():
    from gpuclean.wsclean_command import wsclean_version as version
    return version(shutil.which("wsclean"))


@pytest.mark.parametrize("case", list(CASES))
def test_matches_wscleans_own_run(ms, case):
    own_options = CASES[case]
    hook_options, gpuclean_options = own_options, None
    if "-multiscale" in own_options and wsclean_version() < (3, 3):
        hook_options = [o for o in own_options if o != "-multiscale"]
        gpuclean_options = "--multiscale"
    own_run = wsclean(ms, f"own-{case}", COMMON + own_options)
    hook_run = wsclean(ms, f"hook-{case}", COMMON + hook_options, hook=True, gpuclean_options=gpuclean_options)
    if "-local-rms" in own_options:
        beam = float(THEORETIC_BEAM.search(own_run.stdout).group(1)) / 2.0  # arcsec to pixels of 2asec
        ours = re.search(r"the local-RMS window in WSClean's theoretical beam of ([0-9.]+) pixels", hook_run.stdout)
        assert ours and float(ours.group(1)) == pytest.approx(beam, abs=0.01), hook_run.stdout[-3000:]
    own, hook = figures(ms, f"own-{case}", own_run), figures(ms, f"hook-{case}", hook_run)
    print(f"{case}: residual rms {hook[0]:.4e} (WSClean's own {own[0]:.4e}), model flux {hook[1]:.5f} "
          f"(own {own[1]:.5f}), major cycles {hook[2]} (own {own[2]})")
    assert hook[0] == pytest.approx(own[0], rel=0.02)
    assert hook[1] == pytest.approx(own[1], rel=0.02)
    assert abs(hook[2] - own[2]) <= 1
