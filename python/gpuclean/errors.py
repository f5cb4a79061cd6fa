"""Exceptions of the gpuclean package, one per exit-code class of the command line.

Each carries the one-line message the command line prints after ``gpuclean: error:`` and the
exit code it would exit with.
"""


class Error(Exception):
    """Any failure gpuclean reports."""

    exit_code = 1


class UsageError(Error, ValueError):
    """A bad option or setting, or an output that exists (exit code 2)."""

    exit_code = 2


class InputError(Error, ValueError):
    """An input that is missing, not FITS, or unusable: a NaN PSF, sizes that do not fit (exit code 3)."""

    exit_code = 3


class RunFailure(Error, RuntimeError):
    """The run failed: cannot write, out of memory, GPU failure, no GPU for device='gpu' (exit code 4)."""

    exit_code = 4


class InternalError(Error, RuntimeError):
    """A defect in gpuclean (exit code 1): please report it."""

    exit_code = 1
