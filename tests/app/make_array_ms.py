#!/usr/bin/env python3
"""Writes a MeasurementSet of a 1 Jy source at the phase centre (no noise) observed by an array
other than MeerKAT, for PSFs whose restoring beam is hard to fit (tests/app/test_image_beam_vs_wsclean):

  ew:   an east-west line of 14 antennas 144 m apart (WSRT-like): short tracks give fan beams;
  gmrt: a GMRT-like Y of 30 antennas (14 in a central square of ~1 km, 16 on three arms to ~14 km).

The antenna positions are (east, north, up) offsets from data/msim's site, put in place of MeerKAT's
pads; everything else (UVW, DATA, the tables) is data/simulate_ms.py's. Needs Debian's python3-casacore:

  /usr/bin/python3 tests/app/make_array_ms.py --layout ew --out /tmp/ew.ms --hours 1 --dec 30
"""

import argparse
import pathlib
import sys

import numpy as np

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
sys.path.insert(0, str(DATA))
import simulate_ms  # noqa: E402
from msim import layout, sky  # noqa: E402


def ew_enu():
    return np.array([(144.0 * i, 0.0, 0.0) for i in range(14)])


def gmrt_enu():
    rng = np.random.default_rng(7)
    core = [(x, y, 0.0) for x, y in rng.uniform(-500, 500, size=(14, 2))]
    arms = []
    # Three arms (azimuths from north through east): east-north-east, west-north-west, south.
    for azimuth, count in ((70.0, 5), (290.0, 6), (180.0, 5)):
        a = np.radians(azimuth)
        for r in np.geomspace(1500.0, 14000.0, count):
            arms.append((r * np.sin(a), r * np.cos(a), 0.0))
    return np.array(core + arms)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layout", choices=("ew", "gmrt"), required=True, help="the array (see above)")
    p.add_argument("--out", required=True, help="MeasurementSet to write (must not exist)")
    p.add_argument("--hours", type=float, default=1.0, help="track length, centred on transit (1.0)")
    p.add_argument("--integration", type=float, default=300.0, help="integration time [s] (300)")
    p.add_argument("--dec", type=float, default=-28.0, help="phase centre Dec [deg] (-28)")
    p.add_argument("--freq", type=float, default=1.284e9, help="frequency of its one channel [Hz] (1.284e9)")
    p.add_argument("--bandwidth", type=float, default=1e6, help="channel width [Hz] (1e6)")
    a = p.parse_args()
    layout.MEERKAT_ENU = ew_enu() if a.layout == "ew" else gmrt_enu()
    sources = sky.preset_sky("single", np.random.default_rng(0))
    info = simulate_ms.simulate(a.out, sources, len(layout.MEERKAT_ENU), a.hours, a.integration, 1, a.freq,
                                a.bandwidth, 53.0, a.dec, 0.0, correlations="i")
    print(f"make_array_ms: {a.out}: {info['rows']} rows, longest baseline {info['max_baseline_m']:.0f} m")


if __name__ == "__main__":
    main()
