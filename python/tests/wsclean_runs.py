"""WSClean runs for the tests, with its own deconvolution or with a -python-deconvolution hook."""

import os
import subprocess
import sys


def hook_file():
    """gpuclean's hook file, as the documented recipe finds it (python3 -m gpuclean.wsclean)."""
    out = subprocess.run([sys.executable, "-m", "gpuclean.wsclean"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def run_wsclean(ms, name, options, hook=None, gpuclean_options=None):
    """Runs WSClean on `ms`, writing NAME next to it; returns the CompletedProcess. hook: None for
    WSClean's own deconvolution, True for gpuclean's hook, or a hook file's path. GPUCLEAN_OPTIONS is
    `gpuclean_options`, or unset."""
    env = dict(os.environ)
    env.pop("GPUCLEAN_OPTIONS", None)
    if gpuclean_options is not None:
        env["GPUCLEAN_OPTIONS"] = gpuclean_options
    args = ["wsclean", "-name", str(ms.parent / name)] + options
    if hook:
        args += ["-python-deconvolution", hook_file() if hook is True else str(hook)]
    return subprocess.run(args + [str(ms)], capture_output=True, text=True, env=env, timeout=600)
