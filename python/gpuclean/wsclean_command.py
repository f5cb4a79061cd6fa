"""What WSClean's user asked for, read from the command line of the WSClean process the hook
runs in: the deconvolution settings WSClean does not pass to a Python deconvolver (its `meta`
carries only gain, mgain, the iteration counts and thresholds), turned into gpuclean's options.

The command line is read by gpuclean's WSClean option table (C++: app/wsclean/wsclean_option.hpp,
docs/imaging.md's table), which knows each of WSClean's options (3.1's and 3.7's names), how many
values it takes and what the hook does with it: carried into a gpuclean option, passed by WSClean
in `meta`, following from the arrays' layout, meaningless for gpuclean (speed switches of
WSClean's own CLEAN), or refused with the reason. An option given in GPUCLEAN_OPTIONS wins over
WSClean's for the same setting.
"""

import os
import re
import subprocess

from . import _gpuclean
from .errors import UsageError

_VERSION = re.compile(r"WSClean version (\d+)\.(\d+)")


class WscleanCommand:
    """WSClean's command line `args` (args[0] is the program), read by the option table: names are
    WSClean 3.7's with one dash ("-channels-out" also finds 3.1's "-channelsout")."""

    def __init__(self, args):
        self.args = list(args)
        self._options = [("-" + name.lstrip("-"), list(values)) for name, values in _gpuclean.wsclean_read(self.args)]

    def given(self, name):
        return any(n == name for n, _ in self._options)

    def value(self, name, count=1):
        """The `count` values of the last `name` (WSClean's last option wins), or None."""
        for n, values in reversed(self._options):
            if n == name:
                if len(values) < count:
                    raise UsageError(f"WSClean's {name} lacks its value on the command line.")
                return values[0] if count == 1 else values[:count]
        return None

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
    why = _gpuclean.wsclean_hook_refusal(command.args)
    if why:
        raise UsageError(why)


def carried_options(command, tokens):
    """gpuclean's options for what WSClean's command line asks (besides what `meta` carries), those
    that `tokens` (GPUCLEAN_OPTIONS, split) gives left out. Raises UsageError for what cannot be honoured."""
    refuse_options(command)
    return _gpuclean.wsclean_carried(command.args, list(tokens))


def ignored_options(command):
    """WSClean's options given that mean nothing for gpuclean (for the first call's line)."""
    return _gpuclean.wsclean_hook_ignored(command.args)
