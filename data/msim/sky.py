"""Sky models (point sources and elliptical Gaussians with power-law spectra, optionally
polarised with a rotation measure), their truth list as CSV, and their visibilities by direct
Fourier transform."""

import csv
import dataclasses
from dataclasses import asdict, dataclass, fields

import numpy as np

C_M_PER_S = 299792458.0
ARCSEC = np.pi / (180 * 3600)
PRESETS = ("single", "points", "mixed", "survey", "polarized")


@dataclass(frozen=True)
class Source:
    """One component. l, m: direction cosines of its position from the phase centre (l towards
    east, m towards north) in arcsec; flux_jy at ref_freq_hz, scaled by (freq / ref)^spectral_index.
    A Gaussian has FWHM axes in arcsec and a position angle from north through east.
    Polarisation: Stokes q_jy, u_jy, v_jy at ref_freq_hz, following the same spectral index, and a
    rotation measure rm_rad_m2: Q + iU at nu is (q + iu) (nu / ref)^alpha exp(2i RM (lambda^2 -
    lambda_ref^2)), V is v (nu / ref)^alpha (see polarized())."""
    kind: str
    l_arcsec: float
    m_arcsec: float
    flux_jy: float
    spectral_index: float = 0.0
    fwhm_major_arcsec: float = 0.0
    fwhm_minor_arcsec: float = 0.0
    pa_deg: float = 0.0
    q_jy: float = 0.0
    u_jy: float = 0.0
    v_jy: float = 0.0
    rm_rad_m2: float = 0.0

    @property
    def is_polarized(self):
        return any((self.q_jy, self.u_jy, self.v_jy, self.rm_rad_m2))


# The truth list's columns: SHAPE_FIELDS always, POLARIZATION_FIELDS when a source is polarised.
SHAPE_FIELDS = tuple(f.name for f in fields(Source))[:8]
POLARIZATION_FIELDS = ("q_jy", "u_jy", "v_jy", "rm_rad_m2")


def polarized(source, fraction, angle_deg, rm_rad_m2=0.0, v_fraction=0.0):
    """`source` with linear polarisation `fraction` (p) at the angle chi0 = angle_deg (from north
    through east) at its reference frequency, a rotation measure and circular fraction v: Q + iU =
    p I exp(2i chi0) and V = v I at the reference frequency; P = p I(nu) at every frequency, and
    chi(lambda^2) = chi0 + RM (lambda^2 - lambda_ref^2)."""
    chi = np.radians(angle_deg)
    cos, sin = (float(x) if abs(x) > 1e-12 else 0.0 for x in (np.cos(2 * chi), np.sin(2 * chi)))  # no 6e-17
    return dataclasses.replace(source, q_jy=fraction * source.flux_jy * cos, u_jy=fraction * source.flux_jy * sin,
                               v_jy=float(v_fraction * source.flux_jy), rm_rad_m2=float(rm_rad_m2))


# --sky polarized: (kind, l, m ["], I [Jy], alpha, FWHM major, minor ["], PA [deg], p, chi0 [deg],
# RM [rad/m^2], v), the positions for --radius 360 (scaled with it).
POLARIZED_PRESET = (
    ("point", 0.0, 0.0, 1.0, -0.7, 0, 0, 0, 0.10, 20.0, 50.0, 0.0),
    ("point", 150.0, -90.0, 0.5, -0.5, 0, 0, 0, 0.30, -45.0, -120.0, 0.0),
    ("gaussian", 230.0, 210.0, 0.4, -0.7, 30.0, 15.0, 30.0, 0.15, 0.0, 10.0, 0.0),
    ("point", -200.0, 160.0, 0.3, -0.9, 0, 0, 0, 0.05, 60.0, 300.0, 0.02),
    ("point", -120.0, -260.0, 0.2, -0.7, 0, 0, 0, 0.0, 0.0, 0.0, -0.05),
    ("point", 300.0, -250.0, 0.1, -0.7, 0, 0, 0, 0.0, 0.0, 0.0, 0.0),
)


def polarized_sky(radius_arcsec=360.0):
    """--sky polarized: POLARIZED_PRESET, its positions scaled by radius_arcsec / 360."""
    scale = radius_arcsec / 360.0
    out = []
    for kind, l, m, flux, alpha, major, minor, pa, p, chi, rm, v in POLARIZED_PRESET:
        component = Source(kind, l * scale, m * scale, flux, alpha, float(major), float(minor), float(pa))
        out.append(polarized(component, p, chi, rm, v))
    return out


def preset_sky(name, rng, radius_arcsec=360.0):
    """"single": 1 Jy at the phase centre; "points": 10 point sources; "mixed": 8 point sources and
    3 Gaussians (fluxes log-uniform in 10 mJy..1 Jy, spectral indices about -0.7, positions uniform
    within radius_arcsec of the centre and at least 40" apart); "polarized": polarized_sky(), which
    draws nothing from rng."""
    if name == "single":
        return [Source("point", 0.0, 0.0, 1.0)]
    if name == "polarized":
        return polarized_sky(radius_arcsec)
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


def write_truth_csv(path, sources, ref_freq_hz, ra0_deg, dec0_deg, pb=None):
    """One row per source, in the given order (brightest first): id, RA/Dec, the reference frequency,
    kind, l/m offsets, flux, spectral index and shape; then q_jy, u_jy, v_jy and rm_rad_m2 when a
    source is polarised, and pb (the primary beam's attenuation at ref_freq_hz, one per source) when
    pb is given. The fluxes are intrinsic: the beam's attenuation is not in them."""
    names = list(SHAPE_FIELDS)
    if any(s.is_polarized for s in sources):
        names += POLARIZATION_FIELDS
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "ra_deg", "dec_deg", "ref_freq_hz"] + names + ([] if pb is None else ["pb"]))
        for i, s in enumerate(sources):
            ra, dec = lm_to_radec(s.l_arcsec, s.m_arcsec, ra0_deg, dec0_deg)
            row = [i, f"{ra:.8f}", f"{dec:.8f}", ref_freq_hz] + [asdict(s)[n] for n in names]
            out.writerow(row + ([] if pb is None else [float(pb[i])]))


def read_truth_csv(path):
    """The sources of a truth list (as write_truth_csv writes it; the polarisation columns are 0
    where absent)."""
    with open(path, newline="") as f:
        return [Source(r["kind"], *(float(r[n]) for n in SHAPE_FIELDS[1:]),
                       *(float(r.get(n) or 0.0) for n in POLARIZATION_FIELDS)) for r in csv.DictReader(f)]


def read_sky_csv(path, ref_freq_hz):
    """--sky-file: the sources of a CSV with a header, one component a row, in the truth list's
    columns. Needed: kind (point or gaussian), l_arcsec, m_arcsec, flux_jy (Stokes I at ref_freq_hz).
    Optional (0 when absent or empty): spectral_index, fwhm_major_arcsec, fwhm_minor_arcsec, pa_deg,
    rm_rad_m2 and the polarisation, either in Jy (q_jy, u_jy, v_jy) or as fractions of I
    (pol_frac p, pol_angle_deg chi0, v_frac). Other columns (id, ra_deg, dec_deg, pb) are ignored; a
    ref_freq_hz column must equal ref_freq_hz. A truth list written by this simulator is such a file."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no sources")
    columns = set(rows[0])
    missing = {"kind", "l_arcsec", "m_arcsec", "flux_jy"} - columns
    if missing:
        raise ValueError(f"{path}: no column {', '.join(sorted(missing))}")
    in_jy, as_fractions = columns & {"q_jy", "u_jy", "v_jy"}, columns & {"pol_frac", "pol_angle_deg", "v_frac"}
    if in_jy and as_fractions:
        raise ValueError(f"{path}: give the polarisation in Jy (q_jy, u_jy, v_jy) or as fractions "
                         "(pol_frac, pol_angle_deg, v_frac), not both")

    def number(row, name, line):
        text = (row.get(name) or "").strip()
        try:
            return float(text) if text else 0.0
        except ValueError:
            raise ValueError(f"{path}:{line}: {name} '{text}' is not a number") from None

    sources = []
    for line, r in enumerate(rows, start=2):
        if "ref_freq_hz" in columns and r["ref_freq_hz"].strip():
            ref = number(r, "ref_freq_hz", line)
            if not np.isclose(ref, ref_freq_hz, rtol=1e-9, atol=0):
                raise ValueError(f"{path}:{line}: ref_freq_hz {ref:g} is not --freq {ref_freq_hz:g}; the "
                                 "fluxes must be given at --freq")
        kind = r["kind"].strip()
        if kind not in ("point", "gaussian"):
            raise ValueError(f"{path}:{line}: kind '{kind}' is not point or gaussian")
        s = Source(kind, *(number(r, n, line) for n in SHAPE_FIELDS[1:]),
                   *(number(r, n, line) for n in POLARIZATION_FIELDS))
        if kind == "gaussian" and (s.fwhm_major_arcsec <= 0 or s.fwhm_minor_arcsec <= 0):
            raise ValueError(f"{path}:{line}: a Gaussian needs positive fwhm_major_arcsec and fwhm_minor_arcsec")
        if as_fractions:
            s = polarized(s, number(r, "pol_frac", line), number(r, "pol_angle_deg", line), s.rm_rad_m2,
                          number(r, "v_frac", line))
        sources.append(s)
    return sources


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
            term *= gaussian_taper(s, u, v)
        vis += term
    return vis


def gaussian_taper(s, u, v):
    """The visibility taper of the Gaussian component `s` at u, v (wavelengths)."""
    pa = np.radians(s.pa_deg)
    along = u * np.sin(pa) + v * np.cos(pa)
    across = u * np.cos(pa) - v * np.sin(pa)
    a, b = s.fwhm_major_arcsec * ARCSEC, s.fwhm_minor_arcsec * ARCSEC
    return np.exp(-np.pi ** 2 / (4 * np.log(2)) * ((a * along) ** 2 + (b * across) ** 2))


def predict_stokes(sources, uvw_m, freqs_hz, ref_freq_hz, beam=None):
    """The Stokes visibilities {"I", "Q", "U", "V": [rows, channels] complex128} of `sources` by the
    direct Fourier transform of predict(); Q and U only when a source has linear polarisation, V
    only when one has circular. beam(sin_r, freqs_hz) -> [channels], if given, is the primary beam's
    power pattern at the distance r of a component's centre from the phase centre (the pointing):
    each component's I, Q, U and V are multiplied by it, channel by channel (a Gaussian's shape is
    not; the beam is taken as constant across it)."""
    freqs = np.asarray(freqs_hz, dtype=np.float64)
    inv_wavelength = freqs / C_M_PER_S
    u, v, w = (uvw_m[:, k, None] * inv_wavelength for k in range(3))
    lambda2_offset = (C_M_PER_S / freqs) ** 2 - (C_M_PER_S / ref_freq_hz) ** 2
    shape = (len(uvw_m), len(freqs))
    vis = {"I": np.zeros(shape, dtype=np.complex128)}
    if any(s.q_jy or s.u_jy for s in sources):
        vis["Q"], vis["U"] = np.zeros(shape, dtype=np.complex128), np.zeros(shape, dtype=np.complex128)
    if any(s.v_jy for s in sources):
        vis["V"] = np.zeros(shape, dtype=np.complex128)
    for s in sources:
        l, m = s.l_arcsec * ARCSEC, s.m_arcsec * ARCSEC
        n = np.sqrt(1 - l * l - m * m)
        spectrum = (freqs / ref_freq_hz) ** s.spectral_index
        if beam is not None:
            spectrum = spectrum * beam(np.hypot(l, m), freqs)
        term = np.exp(2j * np.pi * (u * l + v * m + w * (n - 1)))
        if s.kind == "gaussian":
            term *= gaussian_taper(s, u, v)
        vis["I"] += (s.flux_jy * spectrum) * term
        if s.q_jy or s.u_jy:
            p = complex(s.q_jy, s.u_jy) * spectrum * np.exp(2j * s.rm_rad_m2 * lambda2_offset)
            vis["Q"] += p.real * term
            vis["U"] += p.imag * term
        if s.v_jy:
            vis["V"] += (s.v_jy * spectrum) * term
    return vis
