"""What WSClean's user asked for, read from the command line of the WSClean process the hook
runs in: the deconvolution settings WSClean does not pass to a Python deconvolver (its `meta`
carries only gain, mgain, the iteration counts and thresholds), turned into gpuclean's options.

WSClean's option names and meanings (`wsclean --help`, versions 3.1 to 3.7):
* carried: each option of gpuclean's option table whose WSClean name reaches the hook from the
  command line (docs/options.md, its WSClean column) maps to that gpuclean option (C++:
  app/outer/wsclean_options.hpp);
* accepted without effect: WSClean's speed switches of its own CLEAN (_NO_MEANING);
* refused: what gpuclean cannot do inside WSClean's loop, each with the reason (_REFUSED).
An option given in GPUCLEAN_OPTIONS wins over WSClean's for the same setting.
"""

import os
import re
import subprocess

from . import _gpuclean
from .errors import UsageError

# Switches of WSClean's own minor loops that change its speed, not what is asked for.
_NO_MEANING = ("-no-fast-subminor", "-no-multiscale-fast-subminor", "-multiscale-convolution-padding",
               "-deconvolution-threads")

_REFUSED = {
    "-iuwt": "selects WSClean's IUWT algorithm instead of the hook",
    "-moresane-ext": "selects MoreSane instead of the hook",
    "-squared-channel-joining": "gpuclean joins channels by their weighted sum only",
    "-link-polarizations": "gpuclean links no polarizations; use -join-polarizations",
    "-force-spectrum": "gpuclean fits each component's spectrum itself",
    "-spectral-correction": "gpuclean applies no spectral correction while cleaning",
    "-horizon-mask": "gpuclean has no horizon mask; give the mask with -fits-mask",
    "-casa-mask": "gpuclean reads FITS masks only; convert it and give -fits-mask",
    "-stop-negative": "gpuclean does not stop on a negative component; -no-negative keeps them out",
    "-save-source-list": "WSClean writes no source list for a Python deconvolver",
}

_VERSION = re.compile(r"WSClean version (\d+)\.(\d+)")


class WscleanCommand:
    """WSClean's command line `args` (args[0] is the program)."""

    def __init__(self, args):
        self.args = list(args)

    def given(self, name):
        return name in self.args[1:]

    def value(self, name, count=1):
        """The `count` values after the last `name` (WSClean's last option wins), or None."""
        for i in range(len(self.args) - 1, 0, -1):
            if self.args[i] == name:
                values = self.args[i + 1:i + 1 + count]
                if len(values) < count:
                    raise UsageError(f"WSClean's {name} lacks its value on the command line.")
                return values[0] if count == 1 else values
        return None

    def last_of(self, *names):
        """Which of `names` comes last on the command line (None: none of them)."""
        at = {n: max((i for i, a in enumerate(self.args) if a == n), default=-1) for n in names}
        name = max(at, key=at.get)
        return name if at[name] >= 0 else None

    def integer(self, name, default):
        text = self.value(name)
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            raise UsageError(f"WSClean's {name} {text} is not a whole number.") from None

    @property
    def name(self):
        return self.value("-name") or "wsclean"

    @property
    def size(self):
        """WSClean's -size (width, height), or None."""
        size = self.value("-size", 2)
        return (int(size[0]), int(size[1])) if size else None

    @property
    def measurement_sets(self):
        """The MeasurementSets at the end of the command line."""
        sets = []
        for a in reversed(self.args[1:]):
            if not os.path.isfile(os.path.join(a, "table.dat")):
                break
            sets.append(a)
        return sets[::-1]

    def polarizations(self):
        """The polarizations asked for (-pol, upper case), ["I"] by default."""
        text = self.value("-pol")
        if text is None:
            return ["I"]
        names = []
        for token in text.upper().split(","):  # "xx,yy", "iquv", "xxyy"
            if set(token) <= set("IQUV"):
                names += list(token)
            else:
                names += [token[k:k + 2] for k in range(0, len(token), 2)]
        return names


def wsclean_version(program):
    """(major, minor) of the WSClean binary `program` (its --version), or None."""
    try:
        out = subprocess.run([program, "--version"], capture_output=True, timeout=30).stdout
        out = out.decode("utf-8", errors="replace")  # WSClean's embedded Python may run in an ASCII locale
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def check_layout(command):
    """Refuses what WSClean cannot deconvolve through a Python deconvolver: several channel or
    polarization groups (WSClean 3.1 starts a second interpreter for the second group and crashes)."""
    channels = command.integer("-channels-out", 1)
    if channels > 1 and not command.given("-join-channels"):
        raise UsageError(f"-channels-out {channels} without -join-channels: WSClean would call the hook once per "
                         "channel and cannot (it crashes at the second); add -join-channels (with -fit-spectral-pol "
                         "for smooth spectra) or image one channel per WSClean run.")
    pols = command.polarizations()
    if len(pols) > 1 and not command.given("-join-polarizations"):
        raise UsageError(f"-pol {command.value('-pol')} without -join-polarizations: WSClean would call the hook once "
                         "per polarization and cannot; add -join-polarizations or image one polarization per run.")


def refuse_options(command):
    """Raises UsageError for WSClean's options that gpuclean's hook cannot honour."""
    for name, why in _REFUSED.items():
        if command.given(name):
            raise UsageError(f"WSClean's {name} cannot be honoured through gpuclean's hook ({why}); leave it out.")
    if command.value("-local-rms-method") not in (None, "rms"):
        raise UsageError(f"WSClean's -local-rms-method {command.value('-local-rms-method')} cannot be honoured "
                         "through gpuclean's hook (it has WSClean's 'rms' map and its own 'mad'); use rms.")


def carried_options(command, tokens):
    """gpuclean's options for what WSClean's command line asks (besides what `meta` carries), those
    that `tokens` (GPUCLEAN_OPTIONS, split) gives left out. Raises UsageError for what cannot be honoured."""
    refuse_options(command)
    return _gpuclean.wsclean_carried(command.args, list(tokens))


def ignored_options(command):
    """WSClean's options given that mean nothing for gpuclean (for the first call's line)."""
    return [name for name in _NO_MEANING if command.given(name)]
