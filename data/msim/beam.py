"""Primary beams: circularly symmetric power patterns A(r, nu) (1 on axis) of a dish pointed at the
phase centre. An alt-az dish tracking the phase centre keeps a symmetric beam fixed on the sky, so
A depends only on the distance r from the pointing centre and on frequency, not on time.

    airy:     uniformly illuminated dish of diameter D: A = [2 J1(x) / x]^2, x = pi D sin(r) / lambda
              (half power at r = 1.029 lambda / D / 2)
    gaussian: A = exp(-4 ln2 r^2 / FWHM^2), FWHM = k lambda / D
    cosine:   MeerKAT's cosine-tapered illumination (Mauch et al. 2020, ApJ 888, 61, eq. 3; the form of
              Condon & Ransom, Essential Radio Astronomy, eq. 3.95, that Obit's MeerKAT beam, W. Cotton's
              MKCosBeam, also uses): A = [cos(1.18896 pi r / theta_b) / (1 - 4 (1.18896 r / theta_b)^2)]^2,
              theta_b = 57.5' (1.5 GHz / nu), the FWHM (the paper rounds the constant to 1.189); scaled
              by 13.5 m / D for another dish diameter (the same taper on a larger or smaller dish).
"""

import numpy as np

C_M_PER_S = 299792458.0
MODELS = ("none", "airy", "gaussian", "cosine")
MEERKAT_DISH_M = 13.5
# Mauch et al. (2020) eq. 3: theta_b = 57.5 arcmin at 1.5 GHz, scaling as 1/nu.
COSINE_FWHM_RAD_AT_1_5_GHZ = np.radians(57.5 / 60)
COSINE_TAPER = 1.18896
# --beam-fwhm-factor's default: MeerKAT's L-band FWHM, 57.5' at 1.5 GHz, is 1.13 lambda / (13.5 m).
DEFAULT_FWHM_FACTOR = 1.13


def bessel_j1(x):
    """J1(x): scipy's when installed, else Bessel's integral J1(x) = (1/pi) int_0^pi cos(t - x sin t) dt
    by the trapezoidal rule, which converges geometrically for this periodic integrand (agrees with
    scipy to 1e-13 for |x| <= 1000)."""
    x = np.asarray(x, dtype=np.float64)
    try:
        from scipy.special import j1
        return j1(x)
    except ImportError:
        return _bessel_j1_integral(x)


def _bessel_j1_integral(x):
    x = np.asarray(x, dtype=np.float64)
    n = int(64 + 2 * np.max(np.abs(x), initial=0.0))
    t = (np.arange(n) + 0.5) * (np.pi / n)  # the midpoint rule over half the period: exact as the full one
    return np.mean(np.cos(t - x[..., None] * np.sin(t)), axis=-1)


def _airy(sin_r, freqs_hz, dish_m):
    x = np.pi * dish_m * sin_r * np.asarray(freqs_hz) / C_M_PER_S
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 1.0, (2 * bessel_j1(safe) / safe) ** 2)


def _cosine(r, freqs_hz, dish_m):
    theta_b = COSINE_FWHM_RAD_AT_1_5_GHZ * (1.5e9 / np.asarray(freqs_hz)) * (MEERKAT_DISH_M / dish_m)
    rho = COSINE_TAPER * r / theta_b
    denominator = 1 - 4 * rho ** 2
    near = np.abs(denominator) < 1e-8  # cos(pi rho) / (1 - 4 rho^2) -> pi / 4 at rho = 1/2
    ratio = np.cos(np.pi * rho) / np.where(near, 1.0, denominator)
    return np.where(near, np.pi / 4, ratio) ** 2


def power_pattern(model, sin_r, freqs_hz, dish_diameter_m=MEERKAT_DISH_M, fwhm_factor=DEFAULT_FWHM_FACTOR):
    """A(r, nu) of `model` at the distance r from the pointing centre given as sin(r) (the length of
    the direction cosines (l, m)), at each of freqs_hz: an array of freqs_hz's shape."""
    freqs = np.asarray(freqs_hz, dtype=np.float64)
    if model == "none":
        return np.ones_like(freqs)
    sin_r = float(sin_r)
    if model == "airy":
        return _airy(sin_r, freqs, dish_diameter_m)
    r = np.arcsin(min(sin_r, 1.0))
    if model == "gaussian":
        fwhm = fwhm_factor * (C_M_PER_S / freqs) / dish_diameter_m
        return np.exp(-4 * np.log(2) * (r / fwhm) ** 2)
    if model == "cosine":
        return _cosine(r, freqs, dish_diameter_m)
    raise ValueError(f"unknown primary beam '{model}'; choose one of {', '.join(MODELS)}")
