"""gpuclean inside WSClean's major cycle (WSClean's -python-deconvolution), WSClean 3.1 to 3.7.

    hook=$(gpuclean-wsclean-hook) && \\
    wsclean -size 2048 2048 -scale 1.5asec -niter 100000 -mgain 0.8 -auto-threshold 3 -multiscale \\
        -python-deconvolution "$hook" obs.ms

gpuclean-wsclean-hook (installed beside gpuclean; build/gpuclean-wsclean-hook in a build tree)
prints the hook file without running Python; `python3 -m gpuclean.wsclean` prints the same file
where that python3 can import this package.

Every major cycle WSClean images the residual from the visibilities and calls
:func:`deconvolve`; gpuclean cleans it down to max(WSClean's major-cycle threshold, its final
threshold, peak x (1 - mgain)), adds the components to the model and returns; WSClean predicts
the model into the visibilities and images again. One session lives for the whole WSClean run:
the PSFs, their spectra, cuFFT plans, device buffers, scale kernels and the --auto-mask state are
made in the first major cycle and kept; later cycles move only the residual. WSClean's float64
arrays are cleaned in float32, as everywhere in gpuclean, and the model change is added to
WSClean's float64 model.

WSClean's own deconvolution options are read from its command line, with WSClean's meanings
(gpuclean.wsclean_command lists what is carried, accepted and refused): -multiscale and the
-multiscale-* options, -fits-mask, -no-negative, -auto-mask, -local-rms (and its window),
-clean-border, -fit-spectral-pol / -fit-spectral-log-pol; -gain, -mgain, -niter and the
thresholds reach the hook through WSClean's meta. gpuclean's own options come from the environment
variable GPUCLEAN_OPTIONS, in the command line's syntax (``gpuclean --help``), and win over
WSClean's for the same setting; gpuclean's --niter is a further limit.
"""

import os
import sys
import threading
import time

import numpy as np

from . import _gpuclean
from .errors import UsageError
from .fits import read_header
from .wsclean_command import WscleanCommand, check_layout, ignored_options, refuse_options, wsclean_version
from .wsclean_parallel import ParallelAdapter

_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wsclean_hook.py")

# The session of this WSClean run (WSClean keeps one interpreter for its whole run): a _Session,
# a _Parallel (-parallel-deconvolution), or False when -niter 0 asks for no cleaning.
_session = None
_start_lock = threading.Lock()


def hook_path():
    """The file to pass to WSClean's -python-deconvolution."""
    return _HOOK


def fit_mismatch(meta, channels, terms, logarithmic, trials=8):
    """The largest relative difference between gpuclean's fit and WSClean's (meta.spectral_fitter)
    over random positive spectra: the evidence that the model's spectra are the ones asked for."""
    freqs, weights = channels
    # WSClean 3.1's fitter must fit once before it evaluates (fit_and_evaluate alone corrupts its heap).
    theirs_terms = len(np.asarray(meta.spectral_fitter.fit(np.ones(len(freqs)), 0, 0)))
    if theirs_terms != terms:
        raise UsageError(f"WSClean's spectral fitter has {theirs_terms} terms where its command line asks for {terms}; "
                         "give the fit in GPUCLEAN_OPTIONS (--fit-spectral-pol N or --fit-spectral-log-pol N).")
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
    of the WSClean process the hook runs in; ["I"] (WSClean's default) when it has none."""
    return WscleanCommand(args).polarizations()


def polarization_factor(pols):
    """WSClean's normalisation of joined polarizations (clean/plane_set.hpp): 0.5 for two or four
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
    command = WscleanCommand(args)
    scale = command.value("-scale")
    if scale is None:
        return None, "WSClean's -scale is not on its command line"
    number = scale.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = scale[len(number):]
    if unit not in _ANGLE_UNITS:
        return None, f"WSClean's -scale {scale} has a unit gpuclean does not know"
    pixel_rad = float(number) * _ANGLE_UNITS[unit]
    sets = command.measurement_sets
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


def channel_frequencies_and_weights(meta, command, nchan):
    """Each deconvolution channel's frequency (Hz) and weight. WSClean 3.1 always passes them in
    meta.channels; radler (WSClean >= 3.3) only when a spectral fit is asked for. Then they are
    read from the PSFs WSClean has already written (NAME-000N-psf.fits: CRVAL3 and WSCIMGWG)."""
    if len(meta.channels) == nchan:
        return [c.frequency for c in meta.channels], [c.weight for c in meta.channels]
    names = [f"{command.name}-psf.fits"] if nchan == 1 else [f"{command.name}-{c:04d}-psf.fits" for c in range(nchan)]
    if all(os.path.isfile(n) for n in names):
        headers = [read_header(n) for n in names]
        freqs = [float(h.get("CRVAL3", 0.0)) for h in headers]
        weights = [float(h.get("WSCIMGWG", 1.0)) for h in headers]
        if all(f > 0 for f in freqs):
            return freqs, weights
    if nchan == 1:
        return [1.0], [1.0]  # one channel: nothing is weighed against another
    raise UsageError(f"WSClean passed {nchan} channels without their frequencies, and {names[0]} (which gives them) "
                     "is not there; run WSClean in the folder its -name writes to, or give -fit-spectral-pol.")


def _settings(command, nchan, npol, meta=None, version=None):
    """The session's settings, decided in C++ (app/outer/wsclean_options.hpp): GPUCLEAN_OPTIONS,
    WSClean's deconvolution options carried from its command line, the joins of what WSClean hands
    over at once (`nchan` channels, `npol` polarizations) and, with `meta`, its gain, its final
    threshold as the stopping rule, the theoretical beam and the rules of WSClean `version`."""
    refuse_options(command)
    return _gpuclean.wsclean_settings(os.environ.get("GPUCLEAN_OPTIONS", ""), command.args, nchan, npol,
                                      meta=meta, version=version, ignored=ignored_options(command),
                                      theoretical_beam=lambda: theoretical_beam_pixels(command.args))


class _Session:
    def __init__(self, residual, psf, meta, command, version):
        nchan, npol = residual.shape[:2]
        settings = _settings(command, nchan, npol, meta, version)
        notes = list(settings.notes)
        channels = channel_frequencies_and_weights(meta, command, nchan)
        self.core = _gpuclean.OuterLoopSession(settings)
        fit = self.core.spectral_fit if nchan > 1 else (0, False)
        if fit[0] and len(meta.channels) == nchan and not settings.fit_given:
            worst = fit_mismatch(meta, channels, *fit)
            if worst > 1e-4:
                raise UsageError(
                    f"gpuclean's spectral fit differs from WSClean's by {worst:.1e} (relative); give the fit "
                    "in GPUCLEAN_OPTIONS (--fit-spectral-pol N or --fit-spectral-log-pol N) to use gpuclean's.")
            notes.append(f"WSClean's {'logarithmic ' if fit[1] else ''}spectral fit of {fit[0]} terms "
                         f"(gpuclean's own agrees to {worst:.0e})")
        self.notes = "".join(", " + n for n in notes)
        pols = command.polarizations() if npol > 1 else ["I"]
        if npol > 1 and len(pols) != npol:
            raise UsageError(f"WSClean passed {npol} polarizations but its -pol names {len(pols)} ({','.join(pols)}).")
        self.core.start(residual, psf, *channels, polarization_factor(pols) if npol > 1 else 1.0)
        self.shape = residual.shape
        self.calls = 0  # rounds (WSClean's major cycles) so far


def check_command_line(args=None):
    """What can be checked before WSClean's first major cycle, from its command line and
    GPUCLEAN_OPTIONS alone: the layout, WSClean's options, gpuclean's options and, for
    -parallel-deconvolution, WSClean's version. Raises UsageError; returns the WSClean version.
    The hook file runs it when WSClean loads it, so that a refusal comes before the gridding."""
    command = WscleanCommand(_wsclean_arguments() if args is None else args)
    if not command.measurement_sets:
        return None  # not inside WSClean
    version = wsclean_version("/proc/self/exe") if args is None else None
    check_layout(command)
    if command.given("-parallel-deconvolution") and version and version < (3, 3):
        raise UsageError(f"-parallel-deconvolution with WSClean {version[0]}.{version[1]}: it calls a Python "
                         "deconvolver from several threads at once and crashes; leave it out (gpuclean cleans the "
                         "whole image at once on the GPU) or use WSClean 3.3 or later.")
    if command.given("-multiscale") and command.given("-auto-mask") and version and version < (3, 3):
        raise UsageError(f"-multiscale with -auto-mask on WSClean {version[0]}.{version[1]}: WSClean then takes the "
                         "hook for its own multiscale algorithm and corrupts its memory; leave -multiscale out of "
                         "WSClean's command line and give GPUCLEAN_OPTIONS=--multiscale instead.")
    joined = command.given("-join-channels")
    nchan = command.integer("-deconvolution-channels", command.integer("-channels-out", 1)) if joined else 1
    npol = len(command.polarizations()) if command.given("-join-polarizations") else 1
    _settings(command, nchan, npol)  # parses and validates
    return version


def _first_call(residual, psf, meta):
    """Checks what WSClean's command line asks for and starts the session (False: -niter 0, nothing to clean)."""
    command = WscleanCommand(_wsclean_arguments())
    version = check_command_line()
    if command.measurement_sets:  # inside WSClean (not a test calling deconvolve())
        if command.integer("-niter", 0) == 0:
            return False
        if command.given("-parallel-deconvolution"):
            return _Parallel(command, version)
    return _Session(residual, psf, meta, command, version)


def _psfs_on_disk(command, nchan, shape):
    """WSClean's whole-image PSFs [nchan, height, width] from the files it has written, or None."""
    names = [f"{command.name}-psf.fits"] if nchan == 1 else [f"{command.name}-{c:04d}-psf.fits" for c in range(nchan)]
    if not all(os.path.isfile(n) for n in names):
        return None
    from .fits import read
    psfs = np.stack([np.asarray(read(n).data, dtype=np.float64) for n in names])
    return psfs if psfs.shape[1:] == shape else None


class _Parallel:
    """-parallel-deconvolution (WSClean >= 3.3): WSClean's per-sub-image calls served from one
    whole-image gpuclean round per major cycle (gpuclean.wsclean_parallel), through a _Session."""

    def __init__(self, command, version):
        size = command.size
        if size is None:
            raise UsageError("-parallel-deconvolution needs WSClean's -size on its command line to place the "
                             "sub-images; give -size.")
        self.command, self.version = command, version
        self.meta = None  # the meta of the call being served: radler's meta lives only for its call
        self.session = None
        self.adapter = ParallelAdapter(size[0], size[1], self._clean_full, _integrated_peak)
        self.lock = threading.Lock()  # WSClean >= 3.3 calls from several threads at once

    def deconvolve(self, residual, model, psf, meta):
        with self.lock:
            self.meta = meta
            try:
                return self.adapter.deconvolve(residual, model, psf, meta)
            finally:
                self.meta = None

    def _clean_full(self, residual, floor, mgain, budget):
        # The round's floor and mgain come from WSClean's meta (app::next_sub_image_round: the
        # sub-images' major-iteration threshold is the round's own mgain stop); `budget` is what the
        # adapter counted from the sub-images.
        start = time.perf_counter()
        first = self.session is None
        if first:
            nchan = residual.shape[0]
            psf = _psfs_on_disk(self.command, nchan, residual.shape[2:])
            if psf is None:  # the sub-images' PSF crops put back (zero beyond the largest)
                psf = self.adapter.full_psf()
            self.session = _Session(residual, psf, self.meta, self.command, self.version)
            self.session.notes += f", {len(self.adapter.boxes or [1])} WSClean sub-images cleaned as one image"
        else:
            self.session.core.set_residual(residual)
        r, more = _round(self.session, self.meta, first, start, budget)
        change = np.zeros(residual.shape)
        self.session.core.add_model_change(change)
        cleaned = _cleaned_residual(self.session, residual)
        return change, cleaned, {"components": r["components"], "more": more, "peak_left": r["peak_left"]}


def _integrated_peak(residual):
    """The largest |mean over the planes| of a residual [nchan, npol, h, w], flagged planes left out:
    the level a sub-image reports to WSClean's peak pass."""
    planes = residual.reshape(-1, *residual.shape[2:])
    used = [p for p in planes if np.isfinite(p).any()]
    if not used:
        return 0.0
    return float(np.nanmax(np.abs(np.mean(used, axis=0))))


def _cleaned_residual(s, residual):
    """gpuclean's residual now, in float64; flagged planes keep WSClean's own."""
    out = s.core.residuals().astype(np.float64)
    unknown = np.isnan(out)
    out[unknown] = residual[unknown]
    return out


def _round(s, meta, first, start, budget=None):
    """One round of the session for WSClean's call with `meta` (with `budget`: -parallel-deconvolution's
    whole-image round for its sub-images); its floor, budget and whether another major cycle is due
    are decided in C++ (app/outer/wsclean_round.hpp). Prints the major cycle's line; returns the
    round and whether another major cycle is due."""
    core = s.core
    s.calls += 1
    peak = core.peak()
    r = core.wsclean_round(meta, budget)
    more = r["more"]
    seconds = time.perf_counter() - start
    setup = f"{core.algorithm} on the {core.device}{s.notes}; " if first else ""
    print(f"gpuclean: major cycle {s.calls}: {setup}{r['components']} components in {r['major_cycles']} cycles, "
          f"peak {peak:.4g} -> {r['peak_left']:.4g} Jy, threshold {r['threshold']:.4g} Jy, {seconds:.3f} s"
          f"{'' if more else '; done (' + r['stop_reason'] + ')'}", flush=True)
    return r, more


def deconvolve(residual, model, psf, meta):
    """One WSClean major cycle: WSClean's -python-deconvolution contract (see the module's text)."""
    global _session
    start = time.perf_counter()
    if residual.ndim != 4 or psf.ndim != 3:
        raise UsageError("WSClean passed arrays of an unexpected shape; gpuclean's hook needs WSClean 3.x.")
    with _start_lock:  # WSClean >= 3.3 may make its first calls from several threads at once
        first = _session is None
        if first:
            _session = _first_call(residual, psf, meta)
    if _session is False:  # -niter 0: WSClean asked for no cleaning
        print("gpuclean: -niter 0: nothing to clean", flush=True)
        return {"residual": residual, "model": model, "level": 0.0, "continue": False}
    if isinstance(_session, _Parallel):
        return _session.deconvolve(residual, model, psf, meta)
    if meta.max_iterations == 0:
        raise UsageError("WSClean asked for a sub-image's peak without -parallel-deconvolution on its command line; "
                         "gpuclean's hook cannot tell the sub-images apart then.")
    s = _session
    if not first:
        if residual.shape != s.shape:
            raise UsageError(f"the residual changed shape between major cycles ({s.shape} to "
                             f"{residual.shape}); gpuclean's hook needs -join-channels with -channels-out and "
                             "-join-polarizations with several polarizations.")
        s.core.set_residual(residual)
    r, more = _round(s, meta, first, start)
    meta.iteration_number += r["components"]
    s.core.add_model_change(model)  # in place, in float64
    # With -mgain < 1 WSClean images the next residual from the visibilities and never reads this
    # one; with -mgain 1 (one call) it writes the residual returned.
    out = residual if meta.mgain < 1.0 else _cleaned_residual(s, residual)
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
