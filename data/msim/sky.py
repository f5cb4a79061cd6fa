"""Sky models (point sources and elliptical Gaussians with power-law spectra), their truth list
as CSV, and their visibilities by direct Fourier transform."""

import csv
from dataclasses import asdict, dataclass, fields

import numpy as np

C_M_PER_S = 299792458.0
ARCSEC = np.pi / (180 * 3600)
PRESETS = ("single", "points", "mixed", "survey")


@dataclass(frozen=True)
class Source:
    """One component. l, m: direction cosines of its position from the phase centre (l towards
    east, m towards north) in arcsec; flux_jy at ref_freq_hz, scaled by (freq / ref)^spectral_index.
    A Gaussian has FWHM axes in arcsec and a position angle from north through east."""
    kind: str
    l_arcsec: float
    m_arcsec: float
    flux_jy: float
    spectral_index: float = 0.0
    fwhm_major_arcsec: float = 0.0
    fwhm_minor_arcsec: float = 0.0
    pa_deg: float = 0.0


def preset_sky(name, rng, radius_arcsec=360.0):
    """"single": 1 Jy at the phase centre; "points": 10 point sources; "mixed": 8 point sources and
    3 Gaussians. Fluxes are log-uniform in 10 mJy..1 Jy, spectral indices about -0.7, positions
    uniform within radius_arcsec of the centre and at least 40" apart."""
    if name == "single":
        return [Source("point", 0.0, 0.0, 1.0)]
    if name == "survey":
        raise ValueError("the survey sky takes a source count: call survey_sky")
    if name not in PRESETS:
        raise ValueError(f"unknown sky preset '{name}'; choose one of {', '.join(PRESETS)}")
    kinds = ["point"] * (10 if name == "points" else 8) + ["gaussian"] * (0 if name == "points" else 3)
    positions = []
    while len(positions) < len(kinds):
        p = rng.uniform(-radius_arcsec, radius_arcsec, 2)
        if all(np.hypot(*(p - q)) >= 40.0 for q in positions):
            positions.append(p)
    sources = []
    for kind, (l, m) in zip(kinds, positions):
        flux = 10 ** rng.uniform(-2, 0)
        alpha = rng.normal(-0.7, 0.2)
        if kind == "point":
            sources.append(Source(kind, l, m, flux, alpha))
        else:
            major = rng.uniform(10, 40)
            sources.append(Source(kind, l, m, flux, alpha, major, major * rng.uniform(0.5, 1), rng.uniform(0, 180)))
    return sorted(sources, key=lambda s: -s.flux_jy)


def survey_sky(rng, radius_arcsec, sources=300, gaussians=30, flux_range_jy=(5e-4, 0.5)):
    """A survey field: `sources` components, `gaussians` of them elliptical Gaussians of 5-60"
    FWHM (log-uniform), fluxes drawn from Euclidean source counts (dN/dS ~ S^-2.5) within
    flux_range_jy, spectral indices N(-0.7, 0.3), positions uniform within radius_arcsec of the
    centre. Each source lies outside the others' flux apertures (twice the major FWHM, at least
    10"), so that a source's recovered flux is its own. Brightest first."""
    if not 0 <= gaussians <= sources:
        raise ValueError(f"--gaussians {gaussians} must lie within 0..--sources ({sources})")
    lo, hi = (s ** -1.5 for s in flux_range_jy)
    kinds = ["gaussian"] * gaussians + ["point"] * (sources - gaussians)
    # Gaussians first, so the large apertures are placed while the field is still empty.
    majors = [10 ** rng.uniform(np.log10(5), np.log10(60)) if k == "gaussian" else 0.0 for k in kinds]
    placed = []  # (l, m, aperture radius)
    for major in majors:
        aperture = max(10.0, 2 * major)
        for _ in range(10000):
            r = radius_arcsec * np.sqrt(rng.uniform())
            phi = rng.uniform(0, 2 * np.pi)
            l, m = r * np.sin(phi), r * np.cos(phi)
            if all(np.hypot(l - pl, m - pm) >= aperture + pa for pl, pm, pa in placed):
                placed.append((l, m, aperture))
                break
        else:
            raise ValueError(f"{sources} sources ({gaussians} Gaussians) do not fit apart within --radius "
                             f"{radius_arcsec:g}; raise --radius or lower --sources / --gaussians")
    out = []
    for kind, major, (l, m, _) in zip(kinds, majors, placed):
        flux = (lo - rng.uniform() * (lo - hi)) ** (-1 / 1.5)
        alpha = rng.normal(-0.7, 0.3)
        if kind == "point":
            out.append(Source(kind, l, m, flux, alpha))
        else:
            out.append(Source(kind, l, m, flux, alpha, major, major * rng.uniform(0.5, 1), rng.uniform(0, 180)))
    return sorted(out, key=lambda s: -s.flux_jy)


def lm_to_radec(l_arcsec, m_arcsec, ra0_deg, dec0_deg):
    """Inverse orthographic (SIN) projection about the phase centre."""
    l, m = l_arcsec * ARCSEC, m_arcsec * ARCSEC
    d0 = np.radians(dec0_deg)
    n = np.sqrt(1 - l * l - m * m)
    dec = np.arcsin(m * np.cos(d0) + n * np.sin(d0))
    ra = np.radians(ra0_deg) + np.arctan2(l, n * np.cos(d0) - m * np.sin(d0))
    return np.degrees(ra) % 360.0, np.degrees(dec)


def write_truth_csv(path, sources, ref_freq_hz, ra0_deg, dec0_deg):
    """One row per source, brightest first: id, kind, RA/Dec, l/m offsets and the shape."""
    names = [f.name for f in fields(Source)]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "ra_deg", "dec_deg", "ref_freq_hz"] + names)
        for i, s in enumerate(sources):
            ra, dec = lm_to_radec(s.l_arcsec, s.m_arcsec, ra0_deg, dec0_deg)
            out.writerow([i, f"{ra:.8f}", f"{dec:.8f}", ref_freq_hz] + [asdict(s)[n] for n in names])


def read_truth_csv(path):
    """The sources of a truth list (as write_truth_csv writes it)."""
    with open(path, newline="") as f:
        return [Source(r["kind"], *(float(r[n.name]) for n in fields(Source)[1:])) for r in csv.DictReader(f)]


def predict(sources, uvw_m, freqs_hz, ref_freq_hz):
    """Stokes I visibilities [rows, channels] (complex128) by direct Fourier transform:
    V = sum S(nu) G(u, v) exp(+2 pi i (u l + v m + w (n - 1))), with u, v, w in wavelengths: the
    sign that goes with casacore's UVW (ANTENNA2 - ANTENNA1); with -2 pi i, WSClean images the sky
    mirrored through the phase centre."""
    vis = np.zeros((len(uvw_m), len(freqs_hz)), dtype=np.complex128)
    inv_wavelength = np.asarray(freqs_hz) / C_M_PER_S
    u, v, w = (uvw_m[:, k, None] * inv_wavelength for k in range(3))
    for s in sources:
        l, m = s.l_arcsec * ARCSEC, s.m_arcsec * ARCSEC
        n = np.sqrt(1 - l * l - m * m)
        flux = s.flux_jy * (np.asarray(freqs_hz) / ref_freq_hz) ** s.spectral_index
        term = flux * np.exp(2j * np.pi * (u * l + v * m + w * (n - 1)))
        if s.kind == "gaussian":
            pa = np.radians(s.pa_deg)
            along = u * np.sin(pa) + v * np.cos(pa)
            across = u * np.cos(pa) - v * np.sin(pa)
            a, b = s.fwhm_major_arcsec * ARCSEC, s.fwhm_minor_arcsec * ARCSEC
            term *= np.exp(-np.pi ** 2 / (4 * np.log(2)) * ((a * along) ** 2 + (b * across) ** 2))
        vis += term
    return vis
