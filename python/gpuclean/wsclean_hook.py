"""gpuclean as WSClean's deconvolution engine: the file to give WSClean.

    wsclean ... -python-deconvolution "$(python3 -m gpuclean.wsclean)" observation.ms

WSClean 3.1 calls deconvolve() once per major cycle (python/gpuclean/WSCLEAN_CONTRACT.md). This
file stays free of anything that can fail while WSClean loads it (a failing import hangs WSClean
3.1), and turns every failure into one line on stderr and an incomplete answer, on which WSClean
stops with exit code 255 (an exception would crash it without a message).
"""

import os
import re
import sys


def _package_on_path():
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if package_parent not in sys.path:
        sys.path.insert(0, package_parent)


def _start_gpu_warm_up():
    """WSClean loads this file while it grids the first image: the GPU gets ready meanwhile (the
    CUDA context and cuFFT's first plan). Any failure waits for deconvolve(), which reports it."""
    try:
        if re.search(r"--device(=|\s+)cpu\b", os.environ.get("GPUCLEAN_OPTIONS", "")):
            return
        _package_on_path()
        from gpuclean import _gpuclean
        _gpuclean.start_gpu_warm_up()
    except BaseException:  # noqa: BLE001 -- nothing may fail at load
        pass


def _check_before_gridding():
    """Refuses WSClean's settings that the hook cannot honour as soon as WSClean loads this file,
    not after its first gridding: one line on stderr and WSClean's exit code for a failed
    deconvolution (255). An exception here would hang WSClean 3.1, hence os._exit."""
    try:
        _package_on_path()
        from gpuclean import wsclean
        wsclean.check_command_line()
    except ImportError:
        pass  # deconvolve() reports it
    except BaseException as e:  # noqa: BLE001 -- nothing may escape at load
        message = str(e).strip() or type(e).__name__
        print(f"gpuclean: error: {message.splitlines()[0]}", file=sys.stderr, flush=True)
        os._exit(255)


_check_before_gridding()
_start_gpu_warm_up()


def deconvolve(residual, model, psf, meta):
    try:
        _package_on_path()
        from gpuclean import wsclean
        return wsclean.deconvolve(residual, model, psf, meta)
    except BaseException as e:  # noqa: BLE001 -- WSClean must see a message, never an exception
        message = str(e).strip() or type(e).__name__
        print(f"gpuclean: error: {message.splitlines()[0]}", file=sys.stderr, flush=True)
        return {"residual": residual, "model": model}
