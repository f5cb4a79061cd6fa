"""Where the built command line and the bundled sample are (ctest sets GPUCLEAN_BINARY and
GPUCLEAN_SOURCE_DIR; run by hand, the defaults fit a build in build/)."""

import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("GPUCLEAN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SAMPLE = SOURCE_DIR / "data" / "sample"


@pytest.fixture(scope="session")
def binary():
    path = pathlib.Path(os.environ.get("GPUCLEAN_BINARY", SOURCE_DIR / "build" / "gpuclean"))
    if not path.exists():
        pytest.fail(f"no gpuclean binary at {path}; set GPUCLEAN_BINARY")
    return path


@pytest.fixture(scope="session")
def sample():
    return SAMPLE / "dirty.fits", SAMPLE / "psf.fits"


def run_cli(binary, args, cwd=None):
    """Runs the command line; returns (exit code, stderr). GPUCLEAN_CLI_LIBRARY_PATH, when set, is
    the binary's LD_LIBRARY_PATH (scripts/gpu-check.sh python keeps the pack's libraries away from
    Python itself)."""
    env = dict(os.environ, GPUCLEAN_NO_HUGE_PAGES="1")
    if "GPUCLEAN_CLI_LIBRARY_PATH" in os.environ:
        env["LD_LIBRARY_PATH"] = os.environ["GPUCLEAN_CLI_LIBRARY_PATH"]
    p = subprocess.run([str(binary)] + [str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env)
    return p.returncode, p.stderr


def gpu_array_module(name):
    """CuPy or PyTorch with a usable GPU and a CUDA build of gpuclean, or a skip."""
    import gpuclean
    lib = pytest.importorskip(name)
    if name == "torch" and not lib.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    if name == "cupy":
        try:
            lib.cuda.runtime.getDeviceCount()
        except Exception as e:  # no driver or device
            pytest.skip(f"CuPy sees no CUDA device ({e})")
    if not gpuclean.has_gpu():
        pytest.skip("gpuclean has no usable GPU (CPU-only build or no device)")
    return lib
