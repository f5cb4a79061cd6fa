#!/usr/bin/env python3
"""Simulates a small MeerKAT MeasurementSet of a known sky, for testing imagers (WSClean) and
gpuclean as their deconvolution engine. Needs numpy and Debian's python3-casacore:

    /usr/bin/python3 data/simulate_ms.py --out /tmp/sim.ms --sky mixed --channels 8

writes /tmp/sim.ms and its truth list /tmp/sim-truth.csv. The same seed gives the same MS.
The observation: 64 MeerKAT pads (or an even subset), a track centred on the field's transit on
2024-01-01, channels spread over the band, visibilities by direct Fourier transform at channel
centres (no time or bandwidth smearing), plus Gaussian noise. The sky is Stokes I, Q, U and V
(--sky polarized or a --sky-file with polarisation columns; Faraday rotation by each source's
RM), seen through ideal feeds without parallactic-angle rotation: XX = I + Q, XY = U + iV,
YX = U - iV, YY = I - Q; RR = I + V, RL = Q + iU, LR = Q - iU, LL = I - V (msim/polarization.py),
optionally attenuated by a primary beam (--primary-beam). Import it to call simulate() with a
source list of your own.
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
from msim import beam, layout, polarization, sky, tables  # noqa: E402

DAY_MJD = 60310.0  # 2024-01-01


def channel_freqs(channels, centre_hz, bandwidth_hz):
    """Centres of `channels` equal channels spanning the band."""
    width = bandwidth_hz / channels
    return centre_hz + (np.arange(channels) - (channels - 1) / 2) * width, width


def simulate(out, sources, antennas=64, hours=1.0, integration_s=300.0, channels=8, centre_hz=1.284e9,
             bandwidth_hz=856e6, ra_deg=53.0, dec_deg=-28.0, noise_jy=0.01, seed=1, correlations="xxyy",
             primary_beam="none", dish_diameter_m=layout.DISH_DIAMETER_M, beam_fwhm_factor=beam.DEFAULT_FWHM_FACTOR,
             telescope="MeerKAT"):
    """Writes the MS `out` (must not exist) observing `sources` (sky.Source, fluxes at centre_hz);
    noise_jy is the noise of each real and imaginary part of every correlation. correlations: a
    key of tables.CORRELATIONS; primary_beam: one of beam.MODELS, the dish pointed at the phase
    centre. Returns what the MS holds."""
    if correlations not in tables.CORRELATIONS:
        raise ValueError(f"unknown correlations '{correlations}'; choose {' or '.join(tables.CORRELATIONS)}")
    if primary_beam not in beam.MODELS:
        raise ValueError(f"unknown primary beam '{primary_beam}'; choose {' or '.join(beam.MODELS)}")
    antenna_names, itrf = layout.meerkat_itrf(antennas)
    ant1, ant2 = np.triu_indices(antennas, 1)
    n_times = max(1, round(hours * 3600 / integration_s))
    mid_s = layout.transit_mjd(DAY_MJD, ra_deg) * 86400
    times_s = mid_s + (np.arange(n_times) - (n_times - 1) / 2) * integration_s
    row_time = np.repeat(times_s, len(ant1))
    row_ant1, row_ant2 = np.tile(ant1, n_times), np.tile(ant2, n_times)
    uvw = layout.baseline_uvw(itrf, row_ant1, row_ant2, row_time / 86400, ra_deg, dec_deg)
    freqs, width = channel_freqs(channels, centre_hz, bandwidth_hz)

    names = tables.CORRELATION_NAMES[correlations]
    if primary_beam == "none" and not any(s.q_jy or s.u_jy or s.v_jy for s in sources):
        # Stokes I alone, as before polarisation and beams (imaging_bench.py spreads sky.predict).
        stokes = {"I": sky.predict(sources, uvw, freqs, centre_hz)}
    else:
        gain = None if primary_beam == "none" else (
            lambda sin_r, f: beam.power_pattern(primary_beam, sin_r, f, dish_diameter_m, beam_fwhm_factor))
        stokes = sky.predict_stokes(sources, uvw, freqs, centre_hz, gain)
    if set(stokes) == {"I"} and correlations in ("xxyy", "i", "rrll"):
        data = np.repeat(stokes["I"][:, :, None], len(names), axis=2)  # XX = YY = I, RR = LL = I
    else:
        data = polarization.correlations_from_stokes(stokes, names)
    if noise_jy > 0:
        rng = np.random.default_rng([seed, 1])
        data = data + noise_jy * (rng.standard_normal(data.shape) + 1j * rng.standard_normal(data.shape))

    half = integration_s / 2
    obs = tables.Observation(telescope, antenna_names, itrf, dish_diameter_m, freqs, width, ra_deg, dec_deg,
                             correlations, (times_s[0] - half, times_s[-1] + half))
    tables.write_ms(out, obs, row_ant1, row_ant2, row_time, integration_s, uvw, data, noise_jy)
    return {"rows": len(row_time), "baselines": len(ant1), "times": n_times, "freqs_hz": freqs,
            "max_baseline_m": float(np.max(np.linalg.norm(itrf[row_ant2] - itrf[row_ant1], axis=1)))}


def parse_args(argv):
    epilog = ("examples:\n"
              "  --out /tmp/lin.ms --sky polarized --correlations linear\n"
              "  --out /tmp/circ.ms --sky-file /tmp/lin-truth.csv --correlations circular\n"
              "  --out /tmp/pb.ms --sky survey --radius 1800 --primary-beam cosine\n"
              "The truth list: the intrinsic sky (q_jy, u_jy, v_jy, rm_rad_m2 when polarised;\n"
              "pb, the beam's attenuation at --freq, with --primary-beam). docs/simulate.md.")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=epilog,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="MeasurementSet to write, e.g. /tmp/sim.ms")
    p.add_argument("--truth", help="truth list CSV (default: OUT without .ms, plus -truth.csv)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT and the truth list if they exist")
    p.add_argument("--sky", choices=sky.PRESETS,
                   help="single: 1 Jy at the phase centre; points: 10 point sources;\n"
                        "mixed: 8 points + 3 Gaussians (default);\n"
                        "survey: --sources components (--gaussians of them Gaussians of 5-60\"),\n"
                        "0.5 mJy..0.5 Jy from Euclidean counts, spectral indices about -0.7;\n"
                        "polarized: 6 fixed components (5 points, 1 Gaussian), 4 linearly polarised\n"
                        "(p 5-30%%, RM -120..300 rad/m^2), 2 with Stokes V; see the truth list")
    p.add_argument("--sky-file", metavar="CSV",
                   help="the sky from a CSV instead of --sky: one component a row, the truth list's\n"
                        "columns: kind (point|gaussian), l_arcsec, m_arcsec, flux_jy (Stokes I at --freq);\n"
                        "optional spectral_index, fwhm_major_arcsec, fwhm_minor_arcsec, pa_deg,\n"
                        "rm_rad_m2 [rad/m^2] and q_jy, u_jy, v_jy [Jy at --freq] or fractions of I:\n"
                        "pol_frac, pol_angle_deg (chi0 at --freq, north through east), v_frac.\n"
                        "A truth list of this simulator is such a file")
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
    p.add_argument("--correlations", default="xxyy", choices=tables.CORRELATIONS,
                   help="xxyy: XX, YY (default); i: Stokes I; linear: XX, XY, YX, YY;\n"
                        "circular: RR, RL, LR, LL; rrll: RR, LL. Ideal feeds, no parallactic angle:\n"
                        "XX = I + Q, XY = U + iV, YX = U - iV, YY = I - Q;\n"
                        "RR = I + V, RL = Q + iU, LR = Q - iU, LL = I - V")
    p.add_argument("--primary-beam", default="none", choices=beam.MODELS,
                   help="attenuate the sky by the dish's power pattern A(r, nu), r from the phase\n"
                        "centre (the pointing), per source and channel: none (default);\n"
                        "airy: uniformly lit dish, [2 J1(x)/x]^2, x = pi D sin(r) / lambda;\n"
                        "gaussian: FWHM = --beam-fwhm-factor x lambda / D;\n"
                        "cosine: MeerKAT's cosine taper (Mauch et al. 2020), FWHM 57.5' at 1.5 GHz\n"
                        "scaled as 1/nu (and 13.5 m / D)")
    p.add_argument("--dish-diameter", type=float, default=layout.DISH_DIAMETER_M,
                   help="dish diameter D [m], for the beam and the ANTENNA table (13.5, MeerKAT)")
    p.add_argument("--beam-fwhm-factor", type=float,
                   help=f"--primary-beam gaussian: FWHM in lambda / D ({beam.DEFAULT_FWHM_FACTOR:g}, MeerKAT's L band)")
    p.add_argument("--telescope", default="MeerKAT",
                   help="OBSERVATION's TELESCOPE_NAME (MeerKAT; e.g. ASKAP with --primary-beam gaussian\n"
                        "--dish-diameter 12 --beam-fwhm-factor 1.09, the beam gpuclean corrects ASKAP with)")
    p.add_argument("--noise", type=float, default=0.01,
                   help="noise of each real and imaginary part of a visibility [Jy] (0.01)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sky and the noise (1)")
    p.add_argument("--corrected-data", action="store_true",
                   help="also write CORRECTED_DATA, a copy of DATA, as calibration leaves an MS")
    args = p.parse_args(argv)
    if args.sky_file and args.sky:
        p.error("give --sky or --sky-file, not both")
    if not args.sky_file:
        args.sky = args.sky or "mixed"
    if args.beam_fwhm_factor is not None and args.primary_beam != "gaussian":
        p.error("--beam-fwhm-factor belongs to --primary-beam gaussian")
    args.beam_fwhm_factor = beam.DEFAULT_FWHM_FACTOR if args.beam_fwhm_factor is None else args.beam_fwhm_factor
    for name in ("radius", "hours", "integration", "channels", "freq", "bandwidth", "dish_diameter",
                 "beam_fwhm_factor"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
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
    if args.sky_file:
        try:
            sources = sky.read_sky_csv(args.sky_file, args.freq)
        except (OSError, ValueError) as e:
            sys.exit(f"simulate_ms: {e}")
    elif args.sky == "survey":
        try:
            sources = sky.survey_sky(rng, args.radius, args.sources, args.gaussians)
        except ValueError as e:
            sys.exit(f"simulate_ms: {e}")
    else:
        sources = sky.preset_sky(args.sky, rng, args.radius)
    info = simulate(out, sources, args.antennas, args.hours, args.integration, args.channels, args.freq,
                    args.bandwidth, args.ra, args.dec, args.noise, args.seed, args.correlations,
                    args.primary_beam, args.dish_diameter, args.beam_fwhm_factor, args.telescope)
    if args.corrected_data:
        tables.add_corrected_data(out)
    pb = None
    if args.primary_beam != "none":
        pb = [beam.power_pattern(args.primary_beam, np.hypot(s.l_arcsec, s.m_arcsec) * sky.ARCSEC, [args.freq],
                                 args.dish_diameter, args.beam_fwhm_factor)[0] for s in sources]
    sky.write_truth_csv(truth, sources, args.freq, args.ra, args.dec, pb)
    size_mb = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 1e6
    print(f"simulate_ms: {out}: {info['rows']} rows ({info['baselines']} baselines x {info['times']} times), "
          f"{args.channels} channels, {len(sources)} sources in {truth}; {size_mb:.1f} MB in "
          f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
