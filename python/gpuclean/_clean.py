"""gpuclean.deconvolve: the single command ``gpuclean DIRTY PSF -o RESTORED [options]`` as a call.

The keywords are the command line's options, dashes as underscores, with its defaults, checks
and messages: the arguments go through the command line's own parser (see :func:`options`).
"""

import json
import os

import numpy as np

from . import _arrays, _gpuclean
from .fits import Header, read


def options():
    """The command line's options as ``{keyword: (default, values, description, range, wsclean)}``
    (docs/options.md), where values is 0 for a flag (pass True), 1 for one value, 2 or 3 for a
    sequence (beam_shape), -1 for a list (multiscale_scales); range is the legal values ("(0, 1]",
    ">= 0", "clark, hogbom"; empty: any) and wsclean WSClean's option of the same meaning (or empty)."""
    return {row[0].replace("-", "_"): (row[1], row[3], row[2], row[5], row[6]) for row in _gpuclean.option_table()}


def _arguments(kwargs):
    """Keywords as command-line arguments, in the order given (so that HISTORY reads as the command
    line would); None leaves an option at its default, False leaves a flag out."""
    table = {row[0].replace("-", "_"): row[3] for row in _gpuclean.option_table()}
    args = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        values = table.get(key, 1)  # unknown names go to the parser, which names them
        if values == 0 or value is True:
            args.append(flag if value is True else f"{flag}={value}")
        elif isinstance(value, (list, tuple, np.ndarray)):
            args += [flag] + [_text(v) for v in value]
        else:
            args += [flag, _text(value)]
    return args


def _text(value):
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))  # round-trips exactly
    return str(value)


def _is_path(x):
    return isinstance(x, (str, os.PathLike))


class Result:
    """What a run produced.

    ``model`` (Jy/pixel), ``residual`` and ``restored`` (Jy/beam) are NumPy float32 arrays of
    shape (height, width); ``components`` is a structured array (x, y, flux, scale: its scale in
    pixels, 0 without multiscale) in the order found
    (the CSV sums those at one pixel). ``noise_map`` is the local noise map (Jy/beam) of a run with
    ``local_rms=True`` and ``noise_map=FILE``, else None. ``summary`` is the command line's --json summary
    (docs/summary-json.md): one run of one plane. Its keys are also attributes, with those of its
    run (``summary["runs"][0]``) and plane (``summary["planes"][0]``): ``stop_reason``,
    ``iterations``, ``major_cycles``, ``peak_residual``, ``threshold``, ``noise_sigma``,
    ``stage_seconds`` (CLEAN's stages), ``rms_residual``, ``model_flux``, ``restored_peak``,
    ``beam``, ``seconds`` (the run's stages: read, clean, restore, write), ``settings``, ...
    """

    def __init__(self, raw):
        self.model = raw["model"]
        self.residual = raw["residual"]
        self.restored = raw["restored"]
        self.noise_map = raw.get("noise_map")
        n = len(raw["component_flux"])
        self.components = np.empty(
            n, dtype=[("x", np.uint32), ("y", np.uint32), ("flux", np.float32), ("scale", np.float64)])
        self.components["x"] = raw["component_x"]
        self.components["y"] = raw["component_y"]
        self.components["flux"] = raw["component_flux"]
        self.components["scale"] = raw["component_scale"]
        self.summary = json.loads(raw["summary_json"])
        # The summary's own keys last: they win over the run's and plane's (its planes, seconds).
        for block in (self.summary["planes"][0], self.summary["runs"][0], self.summary):
            for key, value in block.items():
                setattr(self, key, value)

    def __repr__(self):
        return (f"<gpuclean.Result {self.settings['algorithm']} on {self.device}: {self.iterations} components, "
                f"stop {self.stop_reason}, peak residual {self.peak_residual:.4g}>")


def deconvolve(dirty, psf, *, mask=None, header=None, cuda_stream=None, **kwargs):
    """CLEAN ``dirty`` with ``psf`` as ``gpuclean DIRTY PSF [options]`` does; returns a :class:`Result`.

    dirty, psf: FITS file names (read as the command line reads them), or 2-D arrays of shape
        (height, width): NumPy, or CUDA arrays (CuPy, PyTorch, any with ``__cuda_array_interface__``
        or CUDA DLPack). A CUDA dirty image (float32, C-contiguous, on the current device) is read
        in place by a GPU run: copied on the device, never to the host; its NaN pixels are found
        there (a byte per pixel comes back only when it has NaNs), and the summary says
        ``image.dirty_on_device``. Only a run that ends up on the CPU (``device="cpu"``, or too
        little GPU memory under ``device="auto"``) downloads it. The PSF is copied to the host:
        it is checked, normalised and fitted there, and transformed on the GPU after upload.
    cuda_stream: the stream a CUDA dirty image is ready on (a pointer, or an object with ``.ptr``
        or ``.cuda_stream``); default: CuPy's current stream, or PyTorch's for a tensor.
    mask: with arrays, a 2-D array whose non-zero pixels may be cleaned (``fits_mask=`` names a
        FITS mask instead).
    header: with arrays, the dirty image's :class:`gpuclean.fits.Header` (from
        ``gpuclean.fits.read``): its WCS gives the beam in arcsec, and written outputs keep it.
    kwargs: the command line's options, dashes as underscores, e.g. ``niter=1000``,
        ``auto_threshold=3``, ``algorithm="hogbom"``, ``device="cpu"``, ``select="auto"``,
        ``no_negative=True``, ``beam_shape=(30, 20, 45)``. ``output=`` (``-o``) and ``model=``,
        ``residual=``, ``components=``, ``json=``, ``quicklook=`` write the same files as the
        command line (``output`` is needed for any of them); without them nothing is written.
        See :func:`options` for the full list and defaults.

    Raises gpuclean.UsageError, InputError, RunFailure or InternalError with the command line's
    message.
    """
    if _is_path(dirty) and _is_path(psf):
        raw = _gpuclean.run([os.fspath(dirty), os.fspath(psf)] + _arguments(kwargs), None, None, [], [], None)
        return Result(raw)
    if _is_path(dirty):
        dirty, header = read(dirty)
    if _is_path(psf):
        psf = read(psf).data
    header = header if header is not None else Header()
    mask = None if mask is None else np.asarray(_arrays.to_host(mask)) != 0
    if _arrays.is_cuda_array(dirty) and _gpuclean.built_with_cuda and str(kwargs.get("device", "auto")) != "cpu":
        pointer, height, width, stream = _arrays.device_image(dirty, cuda_stream)
        raw = _gpuclean.run_device(_arguments(kwargs), pointer, height, width, stream, _host_image(psf),
                                   header.cards, header.axes, mask)
        return Result(raw)
    raw = _gpuclean.run(_arguments(kwargs), _host_image(dirty), _host_image(psf), header.cards, header.axes, mask)
    return Result(raw)


def _host_image(x):
    return np.ascontiguousarray(_arrays.to_host(x), dtype=np.float32)


def _options_doc():
    rows = [f"    {key}: {text} (default: {default or 'none' if values else 'off'}{'; ' + legal if legal else ''})"
            for key, (default, values, text, legal, _) in options().items()]
    return "\n\nOptions (the command line's, from its parser):\n\n" + "\n".join(rows) + "\n"


deconvolve.__doc__ += _options_doc()
