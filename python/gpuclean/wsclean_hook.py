"""gpuclean as WSClean's deconvolution engine: the file to give WSClean.

    hook=$(gpuclean-wsclean-hook) && wsclean ... -python-deconvolution "$hook" observation.ms

WSClean 3.1 calls deconvolve() once per major cycle (docs/wsclean-contract.md). This
file stays free of anything that can fail while WSClean loads it (a failing import hangs WSClean
3.1), and turns every failure into one line on stderr and an incomplete answer, on which WSClean
stops with exit code 255 (an exception would crash it without a message).
"""

import os
import sys


def _package_on_path():
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if package_parent not in sys.path:
        sys.path.insert(0, package_parent)


def _start_gpu_warm_up():
    """WSClean loads this file while it grids the first image: the GPU gets ready meanwhile (the
    CUDA context and cuFFT's first plan). Any failure waits for deconvolve(), which reports it."""
    try:
        _package_on_path()
        from gpuclean import _gpuclean
        if _gpuclean.device_is_cpu(os.environ.get("GPUCLEAN_OPTIONS", "")):  # the command line's parser
            return
        _gpuclean.start_gpu_warm_up()
    except BaseException:  # noqa: BLE001 -- nothing may fail at load
        pass


def _import_numpy_here():
    """WSClean >= 3.3 calls deconvolve() from several threads under -parallel-deconvolution, and
    radler's pybind11 imports numpy's internals lazily inside a function-local static: one thread
    holds the GIL waiting for that static while another initialises it waiting for the GIL, and
    WSClean hangs (6 of 6 runs of 3.6). Importing them now, in the one thread that loads this
    file, leaves nothing to initialise later."""
    try:
        import warnings
        with warnings.catch_warnings():  # numpy >= 2 warns that numpy.core is numpy._core now
            warnings.simplefilter("ignore")
            import numpy.core.multiarray  # noqa: F401
            import numpy.core._internal
            try:
                import numpy._core._internal  # numpy >= 2: pybind11 asks numpy.core's name for it
                numpy.core._internal._dtype_from_pep3118 = numpy._core._internal._dtype_from_pep3118
            except ImportError:
                pass
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


_import_numpy_here()
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
