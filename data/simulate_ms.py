#!/usr/bin/env python3
"""Simulates a small MeerKAT MeasurementSet of a known sky, for testing imagers (WSClean) and
gpuclean as their deconvolution engine. Needs numpy and Debian's python3-casacore:

    /usr/bin/python3 data/simulate_ms.py --out /tmp/sim.ms --sky mixed --channels 8

writes /tmp/sim.ms and its truth list /tmp/sim-truth.csv. The same seed gives the same MS.
The observation: 64 MeerKAT pads (or an even subset), a track centred on the field's transit on
2024-01-01, channels spread over the band, visibilities by direct Fourier transform at channel
centres (no time or bandwidth smearing, no primary beam), XX = YY = I (unpolarised sky), plus
Gaussian noise. Import it to call simulate() with a source list of your own.
"""

import argparse
import os
import pathlib
import shutil
import sys
import time


def _needs_debian_python():
    """numpy and python-casacore come from Debian packages, which install for /usr/bin/python3: run
    by another python3 first on PATH (pyenv), the script hands itself over to Debian's."""
    try:
        import casacore.tables  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        debian = "/usr/bin/python3"
        if os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian):
            os.execv(debian, [debian] + sys.argv)
        sys.exit(f"simulate_ms: {e.name} is missing; install Debian's python3-numpy and python3-casacore")


if __name__ == "__main__":
    _needs_debian_python()

import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from msim import layout, sky, tables  # noqa: E402

DAY_MJD = 60310.0  # 2024-01-01


def channel_freqs(channels, centre_hz, bandwidth_hz):
    """Centres of `channels` equal channels spanning the band."""
    width = bandwidth_hz / channels
    return centre_hz + (np.arange(channels) - (channels - 1) / 2) * width, width


def simulate(out, sources, antennas=64, hours=1.0, integration_s=300.0, channels=8, centre_hz=1.284e9,
             bandwidth_hz=856e6, ra_deg=53.0, dec_deg=-28.0, noise_jy=0.01, seed=1, correlations="xxyy"):
    """Writes the MS `out` (must not exist) observing `sources` (sky.Source, fluxes at centre_hz);
    noise_jy is the noise of each real and imaginary part. Returns what the MS holds."""
    if correlations not in tables.CORRELATIONS:
        raise ValueError(f"unknown correlations '{correlations}'; choose {' or '.join(tables.CORRELATIONS)}")
    names, itrf = layout.meerkat_itrf(antennas)
    ant1, ant2 = np.triu_indices(antennas, 1)
    n_times = max(1, round(hours * 3600 / integration_s))
    mid_s = layout.transit_mjd(DAY_MJD, ra_deg) * 86400
    times_s = mid_s + (np.arange(n_times) - (n_times - 1) / 2) * integration_s
    row_time = np.repeat(times_s, len(ant1))
    row_ant1, row_ant2 = np.tile(ant1, n_times), np.tile(ant2, n_times)
    uvw = layout.baseline_uvw(itrf, row_ant1, row_ant2, row_time / 86400, ra_deg, dec_deg)
    freqs, width = channel_freqs(channels, centre_hz, bandwidth_hz)

    stokes_i = sky.predict(sources, uvw, freqs, centre_hz)
    ncorr = len(tables.CORRELATIONS[correlations][0])
    data = np.repeat(stokes_i[:, :, None], ncorr, axis=2)
    if noise_jy > 0:
        rng = np.random.default_rng([seed, 1])
        data = data + noise_jy * (rng.standard_normal(data.shape) + 1j * rng.standard_normal(data.shape))

    half = integration_s / 2
    obs = tables.Observation("MeerKAT", names, itrf, layout.DISH_DIAMETER_M, freqs, width, ra_deg, dec_deg,
                             correlations, (times_s[0] - half, times_s[-1] + half))
    tables.write_ms(out, obs, row_ant1, row_ant2, row_time, integration_s, uvw, data, noise_jy)
    return {"rows": len(row_time), "baselines": len(ant1), "times": n_times, "freqs_hz": freqs,
            "max_baseline_m": float(np.max(np.linalg.norm(itrf[row_ant2] - itrf[row_ant1], axis=1)))}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="MeasurementSet to write, e.g. /tmp/sim.ms")
    p.add_argument("--truth", help="truth list CSV (default: OUT without .ms, plus -truth.csv)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT and the truth list if they exist")
    p.add_argument("--sky", default="mixed", choices=sky.PRESETS,
                   help="single: 1 Jy at the phase centre; points: 10 point sources;\n"
                        "mixed: 8 points + 3 Gaussians (default);\n"
                        "survey: --sources components (--gaussians of them Gaussians of 5-60\"),\n"
                        "0.5 mJy..0.5 Jy from Euclidean counts, spectral indices about -0.7")
    p.add_argument("--sources", type=int, help="--sky survey: number of components (300)")
    p.add_argument("--gaussians", type=int, help="--sky survey: how many of them are Gaussians (30)")
    p.add_argument("--radius", type=float, default=360.0,
                   help="sources lie within this distance of the phase centre [arcsec] (360)")
    p.add_argument("--antennas", type=int, default=64, help="MeerKAT pads, 2..64, spread over the pad list (64)")
    p.add_argument("--hours", type=float, default=1.0, help="track length, centred on transit (1.0)")
    p.add_argument("--integration", type=float, default=300.0, help="integration time [s] (300)")
    p.add_argument("--channels", type=int, default=8, help="number of channels (8)")
    p.add_argument("--freq", type=float, default=1.284e9, help="band centre [Hz] (1.284e9)")
    p.add_argument("--bandwidth", type=float, default=856e6, help="total bandwidth [Hz] (856e6, MeerKAT L-band)")
    p.add_argument("--ra", type=float, default=53.0, help="phase centre RA [deg] (53.0)")
    p.add_argument("--dec", type=float, default=-28.0, help="phase centre Dec [deg] (-28.0)")
    p.add_argument("--correlations", default="xxyy", choices=tables.CORRELATIONS, help="xxyy (default) or i")
    p.add_argument("--noise", type=float, default=0.01,
                   help="noise of each real and imaginary part of a visibility [Jy] (0.01)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sky and the noise (1)")
    p.add_argument("--corrected-data", action="store_true",
                   help="also write CORRECTED_DATA, a copy of DATA, as calibration leaves an MS")
    args = p.parse_args(argv)
    for name in ("radius", "hours", "integration", "channels", "freq", "bandwidth"):
        if getattr(args, name) <= 0:
            p.error(f"--{name} must be positive")
    if args.noise < 0:
        p.error("--noise must be 0 or more")
    if args.sky != "survey" and (args.sources is not None or args.gaussians is not None):
        p.error("--sources and --gaussians belong to --sky survey")
    if args.sky == "survey":
        args.sources = 300 if args.sources is None else args.sources
        args.gaussians = 30 if args.gaussians is None else args.gaussians
        if args.sources < 1 or not 0 <= args.gaussians <= args.sources:
            p.error("--sources must be positive and --gaussians within 0..--sources")
    return args


def main(argv=None):
    args = parse_args(argv)
    out = pathlib.Path(args.out)
    truth = pathlib.Path(args.truth) if args.truth else out.with_name(out.name.removesuffix(".ms") + "-truth.csv")
    for path in (out, truth):
        if path.exists() and not args.overwrite:
            sys.exit(f"simulate_ms: {path} exists; remove it or pass --overwrite")
    if out.exists():
        shutil.rmtree(out)
    start = time.perf_counter()
    rng = np.random.default_rng([args.seed, 0])
    if args.sky == "survey":
        try:
            sources = sky.survey_sky(rng, args.radius, args.sources, args.gaussians)
        except ValueError as e:
            sys.exit(f"simulate_ms: {e}")
    else:
        sources = sky.preset_sky(args.sky, rng, args.radius)
    info = simulate(out, sources, args.antennas, args.hours, args.integration, args.channels, args.freq,
                    args.bandwidth, args.ra, args.dec, args.noise, args.seed, args.correlations)
    if args.corrected_data:
        tables.add_corrected_data(out)
    sky.write_truth_csv(truth, sources, args.freq, args.ra, args.dec)
    size_mb = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 1e6
    print(f"simulate_ms: {out}: {info['rows']} rows ({info['baselines']} baselines x {info['times']} times), "
          f"{args.channels} channels, {len(sources)} sources in {truth}; {size_mb:.1f} MB in "
          f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
