"""data/simulate_ms.py's polarised sky, its four correlations and its primary beams write what the
formulas say, and the command lines that predate them write the same MeasurementSets as before.
The formulas are spelled out here on their own (not taken from data/msim), so that a sign
flipped in msim/polarization.py shows. Skipped without python3-casacore."""

import csv
import hashlib
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE_DIR

tables = pytest.importorskip("casacore.tables", reason="python3-casacore is not installed")
sys.path.insert(0, str(SOURCE_DIR / "data"))
import simulate_ms  # noqa: E402
from msim import beam  # noqa: E402
from msim.sky import Source  # noqa: E402

C = 299792458.0
CENTRE_HZ = 1.284e9
ARCSEC = math.pi / (180 * 3600)
SIMULATE_MS = SOURCE_DIR / "data" / "simulate_ms.py"


def simulate(path, sources, **kw):
    options = dict(antennas=8, hours=0.2, integration_s=300.0, channels=4, bandwidth_hz=400e6, noise_jy=0.0)
    options.update(kw)
    return simulate_ms.simulate(path, sources, centre_hz=CENTRE_HZ, **options)


def column(ms, name, subtable=None):
    with tables.table(str(ms) + (f"/{subtable}" if subtable else ""), ack=False) as t:
        return t.getcol(name)


def run_cli(*args):
    return subprocess.run([sys.executable, SIMULATE_MS] + [str(a) for a in args], capture_output=True, text=True)


def fourier_kernel(ms, l_arcsec, m_arcsec):
    """exp(2 pi i (u l + v m + w (n - 1))) [rows, channels] of a unit point source at (l, m)."""
    uvw, freqs = column(ms, "UVW"), column(ms, "CHAN_FREQ", "SPECTRAL_WINDOW")[0]
    l, m = l_arcsec * ARCSEC, m_arcsec * ARCSEC
    n = math.sqrt(1 - l * l - m * m)
    phase = (uvw[:, 0, None] * l + uvw[:, 1, None] * m + uvw[:, 2, None] * (n - 1)) * freqs / C
    return np.exp(2j * np.pi * phase)


def stokes_spectra(freqs, flux, alpha, p, chi0_deg, rm, v):
    """I, Q, U, V [Jy] at freqs: I = flux (nu/nu0)^alpha, Q + iU = p I exp(2i (chi0 + RM (lambda^2 -
    lambda0^2))), V = v I."""
    i = flux * (freqs / CENTRE_HZ) ** alpha
    chi = math.radians(chi0_deg) + rm * ((C / freqs) ** 2 - (C / CENTRE_HZ) ** 2)
    return i, p * i * np.cos(2 * chi), p * i * np.sin(2 * chi), v * i


def polarized_point(l_arcsec, m_arcsec, flux, alpha, p, chi0_deg, rm, v):
    chi = math.radians(chi0_deg)
    return Source("point", l_arcsec, m_arcsec, flux, alpha, q_jy=p * flux * math.cos(2 * chi),
                  u_jy=p * flux * math.sin(2 * chi), v_jy=v * flux, rm_rad_m2=rm)


SOURCE = dict(flux=2.0, alpha=-0.7, p=0.3, chi0_deg=25.0, rm=40.0, v=0.05)


@pytest.mark.parametrize("where", [(0.0, 0.0), (150.0, -90.0)], ids=["phase_centre", "off_axis"])
@pytest.mark.parametrize("feeds", ["linear", "circular"])
def test_correlations_are_the_stokes_combinations(tmp_path, feeds, where):
    ms = tmp_path / "a.ms"
    simulate(ms, [polarized_point(*where, **SOURCE)], correlations=feeds)
    freqs = column(ms, "CHAN_FREQ", "SPECTRAL_WINDOW")[0]
    i, q, u, v = stokes_spectra(freqs, **SOURCE)
    kernel = fourier_kernel(ms, *where)
    data = column(ms, "DATA")
    if feeds == "linear":
        expected = [i + q, u + 1j * v, u - 1j * v, i - q]  # XX, XY, YX, YY
    else:
        expected = [i + v, q + 1j * u, q - 1j * u, i - v]  # RR, RL, LR, LL
    for k in range(4):
        np.testing.assert_allclose(data[:, :, k], expected[k] * kernel, rtol=0, atol=2e-6 * SOURCE["flux"])
    # The inverse relations, as WSClean forms Stokes images from the correlations.
    a, b, c, d = (data[:, :, k] / kernel for k in range(4))
    if feeds == "linear":
        stokes = [(a + d) / 2, (a - d) / 2, (b + c) / 2, (b - c) / 2j]
    else:
        stokes = [(a + d) / 2, (b + c) / 2, (b - c) / 2j, (a - d) / 2]
    for got, want in zip(stokes, (i, q, u, v)):
        np.testing.assert_allclose(got, np.broadcast_to(want, got.shape), rtol=0, atol=5e-6)


@pytest.mark.parametrize("feeds,expected_types,receptors", [
    ("linear", [9, 10, 11, 12], ["X", "Y"]), ("circular", [5, 6, 7, 8], ["R", "L"]),
    ("rrll", [5, 8], ["R", "L"]), ("xxyy", [9, 12], ["X", "Y"]), ("i", [1], ["X", "Y"])])
def test_subtables_and_weights_describe_the_correlations(tmp_path, feeds, expected_types, receptors):
    ms = tmp_path / "a.ms"
    info = simulate(ms, [polarized_point(0, 0, **SOURCE)], correlations=feeds, noise_jy=0.1, channels=2)
    ncorr = len(expected_types)
    assert list(column(ms, "CORR_TYPE", "POLARIZATION")[0]) == expected_types
    assert column(ms, "NUM_CORR", "POLARIZATION")[0] == ncorr
    products = {5: [0, 0], 6: [0, 1], 7: [1, 0], 8: [1, 1], 9: [0, 0], 10: [0, 1], 11: [1, 0], 12: [1, 1], 1: [0, 0]}
    assert column(ms, "CORR_PRODUCT", "POLARIZATION")[0].tolist() == [products[t] for t in expected_types]
    with tables.table(f"{ms}/FEED", ack=False) as feed:
        assert all(list(feed.getcell("POLARIZATION_TYPE", r)) == receptors for r in range(feed.nrows()))
        angle = feed.getcell("RECEPTOR_ANGLE", 0)
    np.testing.assert_allclose(angle, [0, np.pi / 2] if receptors == ["X", "Y"] else [0, 0])
    assert column(ms, "DATA").shape == (info["rows"], 2, ncorr)
    np.testing.assert_allclose(column(ms, "WEIGHT"), np.full((info["rows"], ncorr), 1 / 0.1 ** 2), rtol=1e-6)
    np.testing.assert_allclose(column(ms, "SIGMA"), np.full((info["rows"], ncorr), 0.1), rtol=1e-6)


def test_noise_is_the_same_in_every_correlation(tmp_path):
    ms = tmp_path / "a.ms"
    simulate(ms, [], correlations="linear", noise_jy=0.2, antennas=16, hours=0.5, seed=4)
    noise = column(ms, "DATA")
    for k in range(4):
        np.testing.assert_allclose([noise[:, :, k].real.std(), noise[:, :, k].imag.std()], 0.2, rtol=0.06)


def test_rotation_measure_turns_the_angle_by_rm_times_the_lambda_squared_step(tmp_path):
    ms = tmp_path / "a.ms"
    rm, p, chi0 = 150.0, 0.4, -30.0
    simulate(ms, [polarized_point(0, 0, 1.5, -0.8, p, chi0, rm, 0.0)], correlations="linear", channels=6)
    freqs = column(ms, "CHAN_FREQ", "SPECTRAL_WINDOW")[0]
    data = column(ms, "DATA").mean(axis=0)  # at the phase centre every row holds the Stokes values
    i, q, u = (data[:, 0] + data[:, 3]).real / 2, (data[:, 0] - data[:, 3]).real / 2, (data[:, 1] + data[:, 2]).real / 2
    np.testing.assert_allclose(i, 1.5 * (freqs / CENTRE_HZ) ** -0.8, rtol=1e-6)
    np.testing.assert_allclose(np.hypot(q, u), p * i, rtol=1e-5)  # P follows I's spectrum
    chi = 0.5 * np.arctan2(u, q)
    lambda2 = (C / freqs) ** 2
    turn = np.angle(np.exp(2j * (np.diff(chi) - rm * np.diff(lambda2)))) / 2  # modulo pi
    np.testing.assert_allclose(turn, 0, atol=1e-5)
    # ... and at the reference frequency the angle is chi0 (channels straddle it: interpolate in lambda^2).
    lambda2_0 = (C / CENTRE_HZ) ** 2
    expected = math.radians(chi0) + rm * (lambda2 - lambda2_0)
    np.testing.assert_allclose(np.angle(np.exp(2j * (chi - expected))) / 2, 0, atol=1e-5)


def airy_series(x):
    """[2 J1(x) / x]^2 with J1 by its power series (fine for x below 20)."""
    j1 = sum((-1) ** k * (x / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1)) for k in range(40))
    return (2 * j1 / x) ** 2


def expected_beam(model, r, freqs, dish=13.5, k=1.13):
    lam = C / freqs
    if model == "airy":
        return np.array([airy_series(math.pi * dish * math.sin(r) / w) for w in lam])
    if model == "gaussian":
        return np.exp(-4 * math.log(2) * (r / (k * lam / dish)) ** 2)
    theta_b = math.radians(57.5 / 60) * 1.5e9 / freqs * 13.5 / dish  # Mauch et al. (2020) eq. 3
    x = 1.18896 * r / theta_b
    return (np.cos(math.pi * x) / (1 - 4 * x ** 2)) ** 2


@pytest.mark.parametrize("model,dish,k", [("airy", 13.5, None), ("gaussian", 13.5, None), ("gaussian", 15.0, 1.02),
                                          ("cosine", 13.5, None), ("cosine", 12.0, None)])
def test_primary_beam_attenuates_by_the_model_at_the_source_radius(tmp_path, model, dish, k):
    ms = tmp_path / "a.ms"
    l, m = 1500.0, -1100.0  # 31 arcmin: the half-power point of the 13.5 m L-band beam
    source = polarized_point(l, m, 1.0, -0.7, 0.2, 10.0, 30.0, 0.03)
    extra = {} if k is None else {"beam_fwhm_factor": k}
    simulate(ms, [source], correlations="linear", primary_beam=model, dish_diameter_m=dish, **extra)
    freqs = column(ms, "CHAN_FREQ", "SPECTRAL_WINDOW")[0]
    r = math.asin(math.hypot(l, m) * ARCSEC)
    gain = expected_beam(model, r, freqs, dish, 1.13 if k is None else k)
    assert 0.2 < gain.min() and gain.max() < 0.95  # an attenuation that shows
    i, q, u, v = stokes_spectra(freqs, 1.0, -0.7, 0.2, 10.0, 30.0, 0.03)
    data = column(ms, "DATA") / fourier_kernel(ms, l, m)[:, :, None]
    for got, want in zip(((data[..., 0] + data[..., 3]) / 2, (data[..., 0] - data[..., 3]) / 2,
                          (data[..., 1] + data[..., 2]) / 2, (data[..., 1] - data[..., 2]) / 2j), (i, q, u, v)):
        np.testing.assert_allclose(got, np.broadcast_to(gain * want, got.shape), rtol=0, atol=3e-6)
    np.testing.assert_allclose(column(ms, "DISH_DIAMETER", "ANTENNA"), dish)


def test_bessel_j1_without_scipy_matches_the_series_and_scipy():
    x = np.linspace(0, 8, 161)  # the series loses digits to cancellation beyond
    series = np.array([sum((-1) ** k * (t / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
                           for k in range(40)) for t in x])
    np.testing.assert_allclose(beam._bessel_j1_integral(x), series, rtol=0, atol=1e-12)
    scipy_special = pytest.importorskip("scipy.special")
    wide = np.linspace(0, 800, 4001)
    np.testing.assert_allclose(beam._bessel_j1_integral(wide), scipy_special.j1(wide), rtol=0, atol=1e-12)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_command_line_polarized_sky_with_beam_and_its_truth(tmp_path):
    out = tmp_path / "pol.ms"
    run = run_cli("--out", out, "--sky", "polarized", "--correlations", "linear", "--primary-beam", "airy",
                  "--antennas", "6", "--hours", "0.1", "--channels", "2", "--noise", "0")
    assert run.returncode == 0, run.stderr
    rows = read_csv(tmp_path / "pol-truth.csv")
    assert len(rows) == 6 and list(rows[0])[-5:] == ["q_jy", "u_jy", "v_jy", "rm_rad_m2", "pb"]
    for r in rows:
        sin_r = math.hypot(float(r["l_arcsec"]), float(r["m_arcsec"])) * ARCSEC
        assert float(r["pb"]) == pytest.approx(airy_series(math.pi * 13.5 * sin_r * CENTRE_HZ / C) if sin_r else 1.0,
                                               rel=1e-9)
    polarised = [r for r in rows if float(r["q_jy"]) or float(r["u_jy"])]
    assert len(polarised) >= 3 and len({r["rm_rad_m2"] for r in polarised}) >= 3
    assert rows[0]["flux_jy"] == "1.0"  # intrinsic flux, not attenuated

    # The truth list is a sky file: read back, it gives the same visibilities.
    again = tmp_path / "again.ms"
    run = run_cli("--out", again, "--sky-file", tmp_path / "pol-truth.csv", "--correlations", "linear",
                  "--primary-beam", "airy", "--antennas", "6", "--hours", "0.1", "--channels", "2", "--noise", "0")
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(column(again, "DATA"), column(out, "DATA"))
    assert (tmp_path / "again-truth.csv").read_text() == (tmp_path / "pol-truth.csv").read_text()


def test_sky_file_polarisation_as_fractions_or_in_jy(tmp_path):
    common = "kind,l_arcsec,m_arcsec,flux_jy,spectral_index,rm_rad_m2"
    (tmp_path / "frac.csv").write_text(f"{common},pol_frac,pol_angle_deg,v_frac\n"
                                       "point,60,-40,0.8,-0.7,-75,0.25,-30,0.1\npoint,-90,20,0.3,0,0,,,\n")
    chi = math.radians(-30)
    (tmp_path / "jy.csv").write_text(f"{common},q_jy,u_jy,v_jy\n"
                                     f"point,60,-40,0.8,-0.7,-75,{0.2 * math.cos(2 * chi)!r},"
                                     f"{0.2 * math.sin(2 * chi)!r},0.08\npoint,-90,20,0.3,0,0,0,0,0\n")
    for name in ("frac", "jy"):
        run = run_cli("--out", tmp_path / f"{name}.ms", "--sky-file", tmp_path / f"{name}.csv", "--correlations",
                      "circular", "--antennas", "5", "--hours", "0.1", "--channels", "3")
        assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(column(tmp_path / "frac.ms", "DATA"), column(tmp_path / "jy.ms", "DATA"),
                               rtol=0, atol=1e-7)
    rows = read_csv(tmp_path / "frac-truth.csv")
    assert [r["kind"] for r in rows] == ["point", "point"] and float(rows[0]["v_jy"]) == pytest.approx(0.08)
    assert "pb" not in rows[0]


@pytest.mark.parametrize("args,message", [
    (["--sky", "single", "--sky-file", "x.csv"], "not both"),
    (["--beam-fwhm-factor", "1.2"], "belongs to --primary-beam gaussian"),
    (["--primary-beam", "gaussian", "--dish-diameter", "0"], "must be positive"),
    (["--correlations", "xy"], "invalid choice")])
def test_command_line_refuses_contradictions(tmp_path, args, message):
    run = run_cli("--out", tmp_path / "x.ms", *args)
    assert run.returncode != 0 and message in run.stderr


def test_sky_file_errors_name_the_line(tmp_path):
    (tmp_path / "bad.csv").write_text("kind,l_arcsec,m_arcsec,flux_jy,ref_freq_hz\npoint,0,0,1,1.4e9\n")
    run = run_cli("--out", tmp_path / "x.ms", "--sky-file", tmp_path / "bad.csv")
    assert run.returncode != 0 and "bad.csv:2: ref_freq_hz" in run.stderr


def read_fits(path):
    """(header, data) of a FITS file's primary HDU, the data's axes in NumPy's (reversed) order."""
    raw = open(path, "rb").read()
    header, pos = {}, 0
    while raw[pos:pos + 8].decode("ascii").strip() != "END":
        card = raw[pos:pos + 80].decode("ascii")
        pos += 80
        if card[8:10] == "= ":
            value = card[10:].split("/")[0].strip()
            try:
                header[card[:8].strip()] = float(value) if any(c in value for c in ".EeD") else int(value)
            except ValueError:
                header[card[:8].strip()] = value.strip("'").strip()
    pos = -(-(pos + 80) // 2880) * 2880
    shape = [header[f"NAXIS{k}"] for k in range(header["NAXIS"], 0, -1)]
    dtype = {-32: ">f4", -64: ">f8"}[header["BITPIX"]]
    return header, np.frombuffer(raw, dtype, int(np.prod(shape)), pos).reshape(shape)


@pytest.mark.skipif(shutil.which("wsclean") is None, reason="wsclean is not installed")
@pytest.mark.parametrize("feeds", ["linear", "circular"])
def test_wsclean_images_the_stokes_parameters_that_were_simulated(tmp_path, feeds):
    """WSClean's -pol iquv of the simulated correlations gives back I, Q, U and V at the source (all
    of one sign, so that a flipped convention shows)."""
    l_arcsec, m_arcsec = 60.0, -40.0
    source = polarized_point(l_arcsec, m_arcsec, 1.0, 0.0, 0.3, 25.0, 0.0, 0.1)  # Q 0.19, U 0.23, V 0.1
    ms = tmp_path / "pol.ms"
    simulate(ms, [source], antennas=32, hours=1.0, channels=2, bandwidth_hz=100e6, correlations=feeds)
    run = subprocess.run(["wsclean", "-quiet", "-size", "256", "256", "-scale", "2asec", "-niter", "0", "-pol", "iquv",
                          "-name", tmp_path / "pol", ms], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    for name, expected in zip("IQUV", (source.flux_jy, source.q_jy, source.u_jy, source.v_jy)):
        h, image = read_fits(tmp_path / f"pol-{name}-dirty.fits")
        image = image.squeeze()
        x = round(h["CRPIX1"] - 1 + (l_arcsec / 3600) / h["CDELT1"])
        y = round(h["CRPIX2"] - 1 + (m_arcsec / 3600) / h["CDELT2"])
        assert np.unravel_index(np.argmax(np.abs(image)), image.shape) == (y, x), name
        assert image[y, x] == pytest.approx(expected, abs=0.01), name


# ---------------------------------------------------------------- the command lines of before

def content_hash(ms):
    """SHA-256 of every column of the MS and its subtables. float64 and complex128 columns are
    rounded to single precision first: the geometry's last bits follow NumPy's SIMD code paths
    (AVX-512 or not), which the stored DATA (complex64) does not see. The files themselves differ
    between two identical runs: casacore leaves some bytes of table.f0i uninitialised."""
    h = hashlib.sha256()
    for sub in [""] + sorted(d for d in os.listdir(ms) if os.path.isdir(os.path.join(ms, d))):
        with tables.table(os.path.join(ms, sub), ack=False) as t:
            h.update(sub.encode())
            for col in t.colnames():
                if t.nrows() == 0 or not all(t.iscelldefined(col, r) for r in range(t.nrows())):
                    continue
                v = t.getcol(col)
                h.update(col.encode())
                if isinstance(v, (list, dict)):
                    h.update(repr(v).encode())
                    continue
                a = np.asarray(v)
                single = {np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64}
                a = a.astype(single.get(a.dtype, a.dtype))
                h.update(f"{a.dtype}{a.shape}".encode() + np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def truth_hash(path):
    """SHA-256 of the truth list with its numbers at 9 significant digits (survey positions come
    from sin and cos, whose last bits follow NumPy's SIMD code paths)."""
    def fmt(cell):
        try:
            return f"{float(cell):.9g}"
        except ValueError:
            return cell
    rows = [",".join(fmt(c) for c in line.split(",")) for line in open(path).read().splitlines()]
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


# Recorded from data/simulate_ms.py before polarisation, correlations and beams came (the same
# values with NumPy's AVX-512 paths and with NPY_DISABLE_CPU_FEATURES turning them off).
BEFORE = [
    ("--sky mixed --antennas 8 --hours 0.2 --channels 2", "b5ac3d019144bb37", "22813bfe8016929c"),
    ("--sky single --correlations i --noise 0 --antennas 4 --channels 3", "f1217539baa945e5", "5072608ed003ac1f"),
    ("--sky survey --sources 20 --gaussians 5 --radius 600 --antennas 6 --hours 0.5 --integration 600 "
     "--channels 4 --corrected-data --seed 5", "8b8dc56651c69445", "67a53a7a3aec4286"),
    ("--sky points --noise 0 --seed 3 --antennas 16 --hours 0.3 --freq 1.0e9 --bandwidth 100e6",
     "6cce37e27e64a766", "b0a69e327f7d8534"),
]


@pytest.mark.parametrize("args,ms_hash,csv_hash", BEFORE, ids=["mixed", "single_i", "survey", "points"])
def test_command_lines_of_before_write_the_same_ms(tmp_path, args, ms_hash, csv_hash):
    out = tmp_path / "old.ms"
    run = run_cli("--out", out, *args.split())
    assert run.returncode == 0, run.stderr
    assert content_hash(out) == ms_hash
    assert truth_hash(tmp_path / "old-truth.csv") == csv_hash
