"""gpuclean as WSClean's deconvolution engine (gpuclean.wsclean), end to end with the real WSClean
on a simulated MeerKAT MeasurementSet (data/simulate_ms.py), against WSClean's own deconvolution
with the same settings on the same MS, and against the simulation's truth. Skipped without
wsclean or python3-casacore (scripts/setup.sh installs both)."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE_DIR
from wsclean_runs import hook_file, run_wsclean as wsclean

pytestmark = pytest.mark.skipif(shutil.which("wsclean") is None, reason="wsclean is not installed")
pytest.importorskip("casacore.tables", reason="python3-casacore is not installed")
gpuclean = pytest.importorskip("gpuclean")
sys.path.insert(0, str(SOURCE_DIR / "data"))
from msim.sky import read_truth_csv  # noqa: E402

SIZE, SCALE_ARCSEC = 512, 2.0
COMMON = ["-size", str(SIZE), str(SIZE), "-scale", f"{SCALE_ARCSEC}asec", "-niter", "20000", "-mgain", "0.8",
          "-auto-threshold", "3"]
CYCLE = re.compile(r"gpuclean: major cycle (\d+): .*?(\d+) components in")


@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    """The simulator's default "mixed" sky (8 points, 3 Gaussians) with its noise."""
    folder = tmp_path_factory.mktemp("wsclean")
    out = folder / "sim.ms"
    subprocess.run([sys.executable, SOURCE_DIR / "data" / "simulate_ms.py", "--out", out], check=True,
                   capture_output=True)
    return out


def images(ms, name):
    read = lambda kind: np.asarray(gpuclean.fits.read(ms.parent / f"{name}-{kind}.fits").data, dtype=np.float64)
    return read("residual"), read("model")


def rms(image):
    return float(np.sqrt(np.nanmean(image ** 2)))


def recovered(model, source):
    """The model's flux around a truth source: within its FWHM (at least 3 pixels). The image's x
    runs against RA (l east), y with m; the centre is pixel SIZE / 2."""
    x = SIZE // 2 - source.l_arcsec / SCALE_ARCSEC
    y = SIZE // 2 + source.m_arcsec / SCALE_ARCSEC
    radius = max(3.0, source.fwhm_major_arcsec / SCALE_ARCSEC)
    yy, xx = np.mgrid[:SIZE, :SIZE]
    return float(model[(xx - x) ** 2 + (yy - y) ** 2 <= radius ** 2].sum())


def peak_brightness(source, header):
    """A truth source's peak in Jy/beam once convolved with the restoring beam (BMAJ, BMIN)."""
    bmaj, bmin = header["BMAJ"] * 3600, header["BMIN"] * 3600
    return source.flux_jy * bmaj * bmin / (np.hypot(bmaj, source.fwhm_major_arcsec) *
                                           np.hypot(bmin, source.fwhm_minor_arcsec))


def compare(ms, own_name, hook_name, hook_run, truth_check=True):
    """The acceptance rules: at least 2 major cycles of gpuclean, residual RMS within 5% and model
    flux within 2% of WSClean's own, every source of >= 5 sigma (peak brightness) recovered."""
    assert hook_run.returncode == 0, hook_run.stdout[-3000:] + hook_run.stderr[-2000:]
    cycles = CYCLE.findall(hook_run.stdout)
    assert len(cycles) >= 2, hook_run.stdout[-3000:]
    own_res, own_model = images(ms, own_name)
    res, model = images(ms, hook_name)
    print(f"{hook_name}: {len(cycles)} major cycles; residual rms {rms(res):.4e} (WSClean's own {rms(own_res):.4e}), "
          f"model flux {model.sum():.5f} (own {own_model.sum():.5f})")
    assert rms(res) == pytest.approx(rms(own_res), rel=0.05)
    assert model.sum() == pytest.approx(own_model.sum(), rel=0.02)
    if not truth_check:
        return
    sigma = rms(own_res)
    header = gpuclean.fits.read(ms.parent / f"{own_name}-image.fits").header
    for s in read_truth_csv(ms.with_name("sim-truth.csv")):
        if peak_brightness(s, header) < 5 * sigma:
            continue
        ours, theirs = recovered(model, s), recovered(own_model, s)
        print(f"  {s.kind} {s.flux_jy:.4f} Jy: gpuclean {ours:.4f}, WSClean {theirs:.4f}")
        if s.kind == "point":
            assert ours == pytest.approx(s.flux_jy, rel=0.1)
        else:  # extended: CLEAN recovers part of a Gaussian's flux; at least most of what WSClean does
            assert ours >= 0.9 * theirs


def test_hook_file_is_printed_and_loads_without_gpuclean_on_the_path():
    path = hook_file()
    assert path.endswith("wsclean_hook.py") and os.path.isfile(path)
    code = f"import runpy; g = runpy.run_path({path!r}); print(callable(g['deconvolve']))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "True", out.stderr


def test_clark_matches_wsclean_over_major_cycles(ms):
    assert wsclean(ms, "own", COMMON).returncode == 0
    run = wsclean(ms, "hook", COMMON, hook=True)
    compare(ms, "own", "hook", run)
    assert "clark on the cpu" in run.stdout or "clark on the gpu" in run.stdout


def test_joined_channels_with_wscleans_spectral_fit(ms):
    options = COMMON + ["-channels-out", "4", "-join-channels", "-fit-spectral-pol", "2"]
    assert wsclean(ms, "own4", options).returncode == 0
    run = wsclean(ms, "hook4", options, hook=True)
    assert re.search(r"WSClean's spectral fit of 2 terms \(gpuclean's own agrees to [0-9.e-]+\)", run.stdout), \
        run.stdout[-3000:] + run.stderr[-2000:]
    compare(ms, "own4-MFS", "hook4-MFS", run)
    for c in range(4):  # every channel, not only the integrated image
        own_res, own_model = images(ms, f"own4-{c:04d}")
        res, model = images(ms, f"hook4-{c:04d}")
        assert rms(res) == pytest.approx(rms(own_res), rel=0.05)
        assert model.sum() == pytest.approx(own_model.sum(), rel=0.02)


def test_multiscale_matches_wscleans_multiscale(ms):
    own = wsclean(ms, "own-ms", COMMON + ["-multiscale"])
    assert own.returncode == 0
    run = wsclean(ms, "hook-ms", COMMON + ["-multiscale"], hook=True)  # WSClean's option selects gpuclean's
    compare(ms, "own-ms", "hook-ms", run)
    # The scales are measured in WSClean's theoretical beam, read here from WSClean's own log.
    theirs = float(re.search(r"Theoretic beam = ([0-9.]+)''", own.stdout).group(1)) / SCALE_ARCSEC
    ours = float(re.search(r"multiscale on the \w+, .*?scales in WSClean's theoretical beam of ([0-9.]+) pixels",
                           run.stdout).group(1))
    assert ours == pytest.approx(theirs, abs=0.01)


def test_joined_polarizations(ms):
    options = COMMON + ["-pol", "xx,yy", "-join-polarizations"]
    assert wsclean(ms, "own-pol", options).returncode == 0
    run = wsclean(ms, "hook-pol", options, hook=True)
    for pol in ("XX", "YY"):
        compare(ms, f"own-pol-{pol}", f"hook-pol-{pol}", run, truth_check=False)


def convolve_same(image, psf):
    """image (x) psf, linear (zero-padded), psf centred at (height // 2, width // 2), in float64."""
    h, w = image.shape
    spectrum = np.fft.rfft2(image, (2 * h, 2 * w)) * np.fft.rfft2(psf, (2 * h, 2 * w))
    return np.fft.irfft2(spectrum, (2 * h, 2 * w))[h // 2:h // 2 + h, w // 2:w // 2 + w]


def test_without_major_cycles_wsclean_writes_gpucleans_residual(ms):
    """-mgain 1 (WSClean's default): one call, and WSClean writes the residual the hook returns
    (with -mgain < 1 it images the next residual itself, and the hook hands back WSClean's own).
    That residual is the dirty image less the model through the PSF, computed here in float64."""
    options = ["-size", "256", "256", "-scale", "4asec", "-niter", "2000", "-auto-threshold", "3"]
    run = wsclean(ms, "hook-once", options, hook=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(CYCLE.findall(run.stdout)) == 1, run.stdout[-3000:]
    res, model = images(ms, "hook-once")
    read = lambda kind: np.asarray(gpuclean.fits.read(ms.parent / f"hook-once-{kind}.fits").data, dtype=np.float64)
    dirty, psf = read("dirty"), read("psf")
    expected = dirty - convolve_same(model, psf)
    print(f"once: residual rms {rms(res):.4e} (dirty {rms(dirty):.4e}), differs from dirty - model (x) psf by "
          f"{np.max(np.abs(res - expected)):.2e} Jy/beam at most")
    assert rms(res) < 0.5 * rms(dirty), "the residual written is the cleaned one"
    assert np.max(np.abs(res - expected)) < 1e-3 * np.max(np.abs(dirty))


@pytest.mark.parametrize("options, message", [
    ("--gain 5", "--gain"),
    ("--no-such-option", "no-such-option"),
    ("-o out.fits", "not for a run inside WSClean"),
    ("--algorithm hogbom --multiscale", "multiscale"),
])
def test_a_bad_option_stops_wsclean_with_gpucleans_message(ms, options, message):
    run = wsclean(ms, "bad", ["-size", "128", "128", "-scale", "8asec", "-niter", "100"], hook=True,
                  gpuclean_options=options)
    assert run.returncode != 0
    line = [l for l in run.stderr.splitlines() if l.startswith("gpuclean: error:")]
    assert len(line) == 1 and message in line[0], run.stderr[-2000:]


@pytest.mark.parametrize("wsclean_niter, gpuclean_options, expected", [
    (150, None, 150),          # WSClean's -niter: its iteration_number reaches it exactly
    (5000, "--niter 120", 120),  # gpuclean's own --niter, a further limit
])
def test_iteration_limits_are_exact(ms, wsclean_niter, gpuclean_options, expected):
    options = ["-size", "256", "256", "-scale", "4asec", "-niter", str(wsclean_niter), "-mgain", "0.8"]
    run = wsclean(ms, "niter", options, hook=True, gpuclean_options=gpuclean_options)
    assert run.returncode == 0, run.stderr[-2000:]
    made = [int(n) for _, n in CYCLE.findall(run.stdout)]
    assert len(made) >= 2 and sum(made) == expected, run.stdout[-3000:]


# WSClean's own deconvolution options, read from its command line: the same command line with
# and without -python-deconvolution gives the same science.

@pytest.fixture(scope="module")
def narrow_ms(tmp_path_factory):
    """An L-band slice of 160 MHz in 8 channels, as survey pipelines image (oxkat: 8 channels,
    -fit-spectral-pol 4): narrow enough for a polynomial to reproduce a power law closely."""
    out = tmp_path_factory.mktemp("narrow") / "sim.ms"
    subprocess.run([sys.executable, SOURCE_DIR / "data" / "simulate_ms.py", "--out", out, "--channels", "8",
                    "--freq", "1.44e9", "--bandwidth", "160e6"], check=True, capture_output=True)
    return out


@pytest.mark.parametrize("channels, terms", [(8, 4), (4, 4), (2, 2)])
def test_survey_spectral_fits_are_read_from_wscleans_command_line(narrow_ms, channels, terms):
    """Ordinary polynomials, also when they reproduce a power law (4 terms on a narrow band) and
    when the terms equal the channels: the fit asked for, never a guess from the fitter's output."""
    options = COMMON + ["-channels-out", str(channels), "-join-channels", "-fit-spectral-pol", str(terms)]
    own, hook = f"own-fit{channels}", f"hook-fit{channels}"
    assert wsclean(narrow_ms, own, options).returncode == 0
    run = wsclean(narrow_ms, hook, options, hook=True)
    assert re.search(rf"WSClean's spectral fit of {terms} terms \(gpuclean's own agrees to", run.stdout), \
        run.stdout[-3000:] + run.stderr[-2000:]
    compare(narrow_ms, f"{own}-MFS", f"{hook}-MFS", run, truth_check=False)


def write_mask(ms, name, boxes):
    """A FITS mask on WSClean's grid (header from a -niter 0 run) that is 1 inside `boxes`
    ((x0, x1, y0, y1) in pixels) and 0 elsewhere."""
    assert wsclean(ms, "template", ["-size", str(SIZE), str(SIZE), "-scale", f"{SCALE_ARCSEC}asec",
                                    "-niter", "0"]).returncode == 0
    template = gpuclean.fits.read(ms.parent / "template-dirty.fits")
    mask = np.zeros((SIZE, SIZE), dtype=np.float32)
    for x0, x1, y0, y1 in boxes:
        mask[y0:y1, x0:x1] = 1.0
    path = ms.parent / name
    gpuclean.fits.write(path, mask, template.header, overwrite=True)
    return path, mask


def test_fits_mask_is_honoured(ms):
    """Components only inside WSClean's -fits-mask, and the same result as WSClean's own run."""
    sources = sorted(read_truth_csv(ms.with_name("sim-truth.csv")), key=lambda s: -s.flux_jy)[:3]
    boxes = []
    for s in sources:  # a box of 24 pixels around each of the three brightest sources
        x = int(round(SIZE // 2 - s.l_arcsec / SCALE_ARCSEC))
        y = int(round(SIZE // 2 + s.m_arcsec / SCALE_ARCSEC))
        boxes.append((x - 12, x + 12, y - 12, y + 12))
    path, mask = write_mask(ms, "mask.fits", boxes)
    options = COMMON + ["-fits-mask", str(path)]
    assert wsclean(ms, "own-mask", options).returncode == 0
    run = wsclean(ms, "hook-mask", options, hook=True)
    compare(ms, "own-mask", "hook-mask", run, truth_check=False)
    _, model = images(ms, "hook-mask")
    assert np.count_nonzero(model) > 0 and np.all(model[mask == 0] == 0), "components outside the mask"


def test_no_negative_is_honoured(ms):
    options = COMMON + ["-no-negative"]
    assert wsclean(ms, "own-pos", options).returncode == 0
    run = wsclean(ms, "hook-pos", options, hook=True)
    compare(ms, "own-pos", "hook-pos", run)
    _, model = images(ms, "hook-pos")
    assert model.min() >= 0.0


def test_niter_zero_cleans_nothing(ms):
    run = wsclean(ms, "hook-none", ["-size", "256", "256", "-scale", "4asec", "-niter", "0"], hook=True)
    assert run.returncode == 0, run.stderr[-2000:]
    if "gpuclean:" in run.stdout:  # WSClean 3.1 calls the hook even so (with a limit of 1)
        assert "-niter 0: nothing to clean" in run.stdout
    model = ms.parent / "hook-none-model.fits"
    if model.exists():
        assert np.all(gpuclean.fits.read(model).data == 0)


@pytest.mark.parametrize("options, message", [
    (["-channels-out", "2"], "without -join-channels"),
    (["-pol", "xx,yy"], "without -join-polarizations"),
    (["-channels-out", "2", "-join-channels", "-squared-channel-joining"], "-squared-channel-joining cannot"),
    (["-local-rms", "-local-rms-method", "rms-with-min"], "rms-with-min"),
])
def test_what_wsclean_cannot_run_through_the_hook_is_refused_at_the_first_call(ms, options, message):
    run = wsclean(ms, "refused", ["-size", "128", "128", "-scale", "8asec", "-niter", "100", "-mgain", "0.8"] + options,
                  hook=True)
    assert run.returncode != 0
    line = [l for l in run.stderr.splitlines() if l.startswith("gpuclean: error:")]
    assert len(line) == 1 and message in line[0], run.stderr[-2000:]


def test_parallel_deconvolution(ms):
    """WSClean >= 3.3: the sub-images are cleaned as one image and the result is WSClean's own run's;
    WSClean 3.1 (which calls the hook from several threads at once there and crashes): refused."""
    from gpuclean.wsclean_command import wsclean_version
    version = wsclean_version(shutil.which("wsclean"))
    options = COMMON + ["-parallel-deconvolution", "256"]
    run = wsclean(ms, "hook-par", options, hook=True)
    if version < (3, 3):
        line = [l for l in run.stderr.splitlines() if l.startswith("gpuclean: error:")]
        assert run.returncode != 0 and len(line) == 1 and "-parallel-deconvolution with WSClean 3.1" in line[0], \
            run.stderr[-2000:]
        return
    assert "sub-images cleaned as one image" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert wsclean(ms, "own-par", options).returncode == 0
    compare(ms, "own-par", "hook-par", run)
