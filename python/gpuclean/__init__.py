"""gpuclean: Clark and Hogbom CLEAN deconvolution of radio images, on the GPU or the CPU.

* :func:`deconvolve` runs what ``gpuclean DIRTY PSF -o RESTORED [options]`` runs, on files or
  arrays, with the command line's options as keywords (dashes become underscores).
* :mod:`gpuclean.fits` reads and writes FITS images with their headers (no astropy needed).
* :mod:`gpuclean.select` is the GPU top-k and order-statistics library, on NumPy arrays and
  on CUDA arrays (CuPy, PyTorch) without a copy to the host.
* ``python -m gpuclean.bench`` times gpuclean.select against torch.topk and CuPy.
"""

from . import _gpuclean, errors, fits, select
from ._clean import Result, deconvolve, options
from .errors import Error, InputError, InternalError, RunFailure, UsageError

__all__ = ["deconvolve", "options", "Result", "fits", "select", "errors", "Error", "UsageError",
           "InputError", "RunFailure", "InternalError", "built_with_cuda", "has_gpu", "describe_device"]


def built_with_cuda():
    """True when this package was compiled with the GPU code."""
    return bool(_gpuclean.built_with_cuda)


def has_gpu():
    """True when a CUDA device is usable (always False in a CPU-only build)."""
    return bool(_gpuclean.has_gpu())


def describe_device():
    """The GPU gpuclean would use, in one line, or why there is none."""
    return _gpuclean.describe_device()
