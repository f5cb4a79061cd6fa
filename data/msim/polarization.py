"""Correlations from the Stokes sky: the feed conventions in one place.

Ideal feeds: no leakage, unit gains, and no parallactic-angle or feed rotation (the X dipole's
position angle stays 0, north, and Y's 90 degrees, on the sky; R and L keep one phase
reference). The IAU/IEEE conventions of CASA and of Hamaker, Bregman & Sault (1996), which
WSClean follows, with no factor 1/2 on the correlations:

    linear:   XX = I + Q,   XY = U + iV,   YX = U - iV,   YY = I - Q
    circular: RR = I + V,   RL = Q + iU,   LR = Q - iU,   LL = I - V

so that I = (XX + YY)/2, Q = (XX - YY)/2, U = (XY + YX)/2, V = (XY - YX)/(2i), and
I = (RR + LL)/2, V = (RR - LL)/2, Q = (RL + LR)/2, U = (RL - LR)/(2i).

STOKES_TO_CORRELATION is the only place that holds these signs: flip one there and the simulator
writes the other convention (the tests, python/tests/test_simulate_ms_polarization.py, spell the
formulas out on their own, so they would say which).
"""

import numpy as np

STOKES = ("I", "Q", "U", "V")

# Each correlation as the coefficients of the Stokes visibilities (I, Q, U, V).
STOKES_TO_CORRELATION = {
    "XX": (1, 1, 0, 0),
    "XY": (0, 0, 1, 1j),
    "YX": (0, 0, 1, -1j),
    "YY": (1, -1, 0, 0),
    "RR": (1, 0, 0, 1),
    "RL": (0, 1, 1j, 0),
    "LR": (0, 1, -1j, 0),
    "LL": (1, 0, 0, -1),
    "I": (1, 0, 0, 0),
}

# casacore's Stokes enumeration (the POLARIZATION subtable's CORR_TYPE).
CORR_TYPE = {"I": 1, "Q": 2, "U": 3, "V": 4, "RR": 5, "RL": 6, "LR": 7, "LL": 8,
             "XX": 9, "XY": 10, "YX": 11, "YY": 12}


def correlations_from_stokes(stokes, names):
    """[..., len(names)] complex visibilities of the correlations `names` (e.g. ("XX", "XY", "YX",
    "YY")) from `stokes`, a dict of Stokes visibilities ("I", "Q", "U", "V" -> equal-shaped complex
    arrays); a Stokes parameter missing from the dict is zero."""
    shape = stokes["I"].shape
    out = np.zeros(shape + (len(names),), dtype=np.complex128)
    for k, name in enumerate(names):
        for coefficient, s in zip(STOKES_TO_CORRELATION[name], STOKES):
            if coefficient != 0 and s in stokes:
                out[..., k] += coefficient * stokes[s]
    return out
