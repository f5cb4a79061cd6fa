"""gpuclean inside WSClean's major cycle (WSClean's -python-deconvolution).

    python3 -m gpuclean.wsclean        # prints the file to pass to -python-deconvolution
    GPUCLEAN_OPTIONS="--multiscale" wsclean -size 2048 2048 -scale 1.5asec -niter 100000 \\
        -mgain 0.8 -auto-threshold 3 -python-deconvolution "$(python3 -m gpuclean.wsclean)" obs.ms

Every major cycle WSClean images the residual from the visibilities and calls
:func:`deconvolve`; gpuclean cleans it down to max(WSClean's major-cycle threshold, its final
threshold, peak x (1 - mgain)), adds the components to the model and returns; WSClean predicts
the model into the visibilities and images again. One session lives for the whole WSClean run:
the PSFs, their spectra, cuFFT plans, device buffers, scale kernels and the --auto-mask state are
made in the first major cycle and kept; later cycles move only the residual. WSClean's float64
arrays are cleaned in float32, as everywhere in gpuclean, and the model change is added to
WSClean's float64 model.

gpuclean's options come from the environment variable GPUCLEAN_OPTIONS, in the command line's
syntax (``gpuclean --help``). WSClean's own settings rule where gpuclean's are not given: -gain
(unless --gain), -niter (and --niter, if given, as a further limit), -threshold and
-auto-threshold (through WSClean's final threshold; gpuclean's --auto-threshold is off unless
given), -mgain, and -fit-spectral-pol / -fit-spectral-log-pol (unless given), which gpuclean fits
itself after checking that its fit matches WSClean's.
"""

import os
import shlex
import sys
import time

import numpy as np

from . import _gpuclean
from .errors import UsageError

_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wsclean_hook.py")

# The session of this WSClean run (WSClean 3.1 keeps one interpreter for its whole run).
_session = None


def hook_path():
    """The file to pass to WSClean's -python-deconvolution."""
    return _HOOK


def _given(tokens, name):
    return any(t == name or t.startswith(name + "=") for t in tokens)


def _wsclean_fit(meta, nchan):
    """WSClean's spectral fit as (terms, logarithmic): the terms are as many as its fitter returns,
    and only a logarithmic polynomial reproduces a power law exactly."""
    fitter = meta.spectral_fitter
    terms = len(np.asarray(fitter.fit(np.ones(nchan), 0, 0)))
    if terms == 0:
        return 0, False
    freqs = np.array([c.frequency for c in meta.channels])
    power_law = (freqs / freqs.mean()) ** -0.7
    fitted = np.asarray(fitter.fit_and_evaluate(power_law.copy(), 0, 0))
    logarithmic = terms >= 2 and np.allclose(fitted, power_law, rtol=1e-6, atol=0)
    return terms, logarithmic


def fit_mismatch(meta, terms, logarithmic, trials=8):
    """The largest relative difference between gpuclean's fit and WSClean's (meta.spectral_fitter)
    over random positive spectra: the evidence that the model's spectra are the ones asked for."""
    freqs = [c.frequency for c in meta.channels]
    weights = [c.weight for c in meta.channels]
    rng = np.random.default_rng(12345)
    worst = 0.0
    for _ in range(trials):
        values = rng.uniform(0.5, 2.0, len(freqs))
        theirs = np.asarray(meta.spectral_fitter.fit_and_evaluate(values.copy(), 0, 0), dtype=np.float64)
        ours = _gpuclean.fit_spectrum(values.astype(np.float32), freqs, weights, terms, logarithmic)
        worst = max(worst, float(np.max(np.abs(ours - theirs) / np.abs(theirs))))
    return worst


def _wsclean_arguments(cmdline="/proc/self/cmdline"):
    """The command line of the WSClean process the hook runs in (empty when it cannot be read)."""
    try:
        with open(cmdline, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def wsclean_polarizations(args):
    """The polarizations WSClean was asked for (its -pol, upper case), from the command line `args`
    of the WSClean process the hook runs in; ["I"] (WSClean's default) when it has none. meta does
    not say which polarizations the planes are."""
    for i, a in enumerate(args[:-1]):
        if a == "-pol":
            names = []
            for token in args[i + 1].upper().split(","):  # "xx,yy", "iquv", "xxyy"
                if set(token) <= set("IQUV"):
                    names += list(token)
                else:
                    names += [token[k:k + 2] for k in range(0, len(token), 2)]
            return names
    return ["I"]


def polarization_factor(pols):
    """WSClean 3.1's normalisation of joined polarizations (clean/plane_set.hpp): 0.5 for two or four
    correlations, so that the integrated image is in Stokes I's units, else 1."""
    correlations = [{"XX", "YY"}, {"RR", "LL"}, {"XX", "XY", "YX", "YY"}, {"RR", "RL", "LR", "LL"}]
    return 0.5 if set(pols) in correlations and len(set(pols)) == len(pols) else 1.0


_ANGLE_UNITS = {"": np.pi / 180, "deg": np.pi / 180, "amin": np.pi / 10800, "arcmin": np.pi / 10800,
                "asec": np.pi / 648000, "arcsec": np.pi / 648000, "mas": np.pi / 648e6}


def theoretical_beam_pixels(args):
    """WSClean's theoretical beam (1 / its longest baseline in wavelengths; its log's "Theoretic
    beam") in pixels of its -scale, from the MeasurementSets ending WSClean's command line `args`:
    the longest |uvw| of a row not wholly flagged, at the highest frequency. WSClean measures
    multiscale's automatic scales in this beam. Returns (pixels, None), or (None, why not)."""
    try:
        scale = args[args.index("-scale") + 1]
    except (ValueError, IndexError):
        return None, "WSClean's -scale is not on its command line"
    number = scale.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = scale[len(number):]
    if unit not in _ANGLE_UNITS:
        return None, f"WSClean's -scale {scale} has a unit gpuclean does not know"
    pixel_rad = float(number) * _ANGLE_UNITS[unit]
    sets = []
    for a in reversed(args[1:]):
        if not os.path.isfile(os.path.join(a, "table.dat")):
            break
        sets.append(a)
    if not sets:
        return None, "no MeasurementSet found at the end of WSClean's command line"
    try:
        from casacore.tables import table
    except ImportError:
        return None, "python-casacore is not installed"
    longest = 0.0
    for ms in sets:
        with table(ms, ack=False) as t:
            uvw = t.getcol("UVW")
            used = ~t.getcol("FLAG").all(axis=(1, 2))
        with table(os.path.join(ms, "SPECTRAL_WINDOW"), ack=False) as spw:
            top = float(np.max(spw.getcol("CHAN_FREQ")))
        if used.any():
            longest = max(longest, float(np.linalg.norm(uvw[used], axis=1).max()) * top / 299792458.0)
    if longest <= 0:
        return None, "every row of the MeasurementSets is flagged"
    return 1.0 / longest / pixel_rad, None


class _Session:
    def __init__(self, residual, psf, meta):
        tokens = shlex.split(os.environ.get("GPUCLEAN_OPTIONS", ""))
        self.options = tokens
        nchan, npol = residual.shape[:2]
        args = list(tokens)
        if not _given(tokens, "--gain"):
            args += ["--gain", repr(float(meta.gain))]
        if not _given(tokens, "--auto-threshold") and not _given(tokens, "--threshold"):
            args += ["--auto-threshold", "0"]  # WSClean's final threshold is the stopping rule
        # WSClean hands over every channel (polarization) of a joined run at once.
        for join, count in (("--join-channels", nchan), ("--join-polarizations", npol)):
            if count > 1 and not _given(tokens, join):
                args.append(join)
        self.scale_note = ""
        multiscale = _given(tokens, "--multiscale")
        if multiscale and not _given(tokens, "--multiscale-beam"):
            beam, why_not = theoretical_beam_pixels(_wsclean_arguments())
            if beam:
                args += ["--multiscale-beam", repr(beam)]
                self.scale_note = f", scales in WSClean's theoretical beam of {beam:.3f} pixels"
            else:
                self.scale_note = (f", scales in the PSF's fitted beam, not WSClean's theoretical beam ({why_not}; "
                                   "give --multiscale-beam)")
        self.fit_note = ""
        if nchan > 1 and not (_given(tokens, "--fit-spectral-pol") or _given(tokens, "--fit-spectral-log-pol")):
            terms, logarithmic = _wsclean_fit(meta, nchan)
            if terms:
                worst = fit_mismatch(meta, terms, logarithmic)
                if worst > 1e-4:
                    raise UsageError(
                        f"gpuclean's spectral fit differs from WSClean's by {worst:.1e} (relative); give the fit "
                        "in GPUCLEAN_OPTIONS (--fit-spectral-pol N or --fit-spectral-log-pol N) to use gpuclean's.")
                args += ["--fit-spectral-log-pol" if logarithmic else "--fit-spectral-pol", str(terms)]
                self.fit_note = (f", WSClean's {'logarithmic ' if logarithmic else ''}spectral fit of {terms} terms "
                                 f"(gpuclean's own agrees to {worst:.0e})")
        self.core = _gpuclean.OuterLoopSession(args)
        self.niter = self.core.niter if _given(tokens, "--niter") else None
        freqs = [c.frequency for c in meta.channels]
        weights = [c.weight for c in meta.channels]
        pols = wsclean_polarizations(_wsclean_arguments()) if npol > 1 else ["I"]
        if npol > 1 and len(pols) != npol:
            raise UsageError(f"WSClean passed {npol} polarizations but its -pol names {len(pols)} ({','.join(pols)}).")
        self.core.start(residual, psf, freqs, weights, polarization_factor(pols) if npol > 1 else 1.0)
        self.shape = residual.shape
        self.calls = 0


def deconvolve(residual, model, psf, meta):
    """One WSClean major cycle: WSClean's -python-deconvolution contract (see the module's text)."""
    global _session
    start = time.perf_counter()
    if residual.ndim != 4 or psf.ndim != 3:
        raise UsageError("WSClean passed arrays of an unexpected shape; gpuclean's hook needs WSClean 3.x.")
    if meta.max_iterations == 0:
        raise UsageError("-parallel-deconvolution is not supported by gpuclean's hook (it cleans the whole image "
                         "at once); leave it out.")
    if _session is None:
        _session = _Session(residual, psf, meta)
        first = True
    else:
        if residual.shape != _session.shape:
            raise UsageError(f"the residual changed shape between major cycles ({_session.shape} to "
                             f"{residual.shape}); gpuclean's hook needs -join-channels with -channels-out and "
                             "-join-polarizations with several polarizations, and no -parallel-deconvolution.")
        _session.core.set_residual(residual)
        first = False
    s = _session
    s.calls += 1
    core = s.core
    peak = core.peak()
    floor = max(meta.major_iter_threshold, meta.final_threshold)
    budget = max(0, meta.max_iterations - meta.iteration_number)
    if s.niter is not None:
        budget = min(budget, max(0, s.niter - core.iterations()))
    r = core.clean(floor, meta.mgain, budget)
    meta.iteration_number += r["components"]

    core.add_model_change(model)  # in place, in float64
    if meta.mgain < 1.0:
        out = residual  # WSClean images the next residual from the visibilities and never reads this one
    else:  # -mgain 1: one call, and WSClean writes the residual returned
        out = core.residuals().astype(np.float64)
        unknown = np.isnan(out)
        out[unknown] = residual[unknown]  # flagged planes: WSClean's own residual
    more = (r["stop_reason"] == "threshold" and r["round_floor"] and r["components"] > 0
            and meta.iteration_number < meta.max_iterations
            and (s.niter is None or core.iterations() < s.niter))
    seconds = time.perf_counter() - start
    setup = f"{core.algorithm} on the {core.device}{s.scale_note}{s.fit_note}; " if first else ""
    print(f"gpuclean: major cycle {s.calls}: {setup}{r['components']} components in {r['major_cycles']} cycles, "
          f"peak {peak:.4g} -> {r['peak_left']:.4g} Jy, threshold {r['threshold']:.4g} Jy, {seconds:.3f} s"
          f"{'' if more else '; done (' + r['stop_reason'] + ')'}", flush=True)
    return {"residual": np.ascontiguousarray(out), "model": np.ascontiguousarray(model, dtype=np.float64),
            "level": float(r["peak_left"]), "continue": bool(more)}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print(__doc__.strip(), file=sys.stdout if argv[0] in ("-h", "--help") else sys.stderr)
        return 0 if argv[0] in ("-h", "--help") else 2
    print(hook_path())
    return 0


if __name__ == "__main__":
    sys.exit(main())
