"""FITS images with their headers, read and written by gpuclean's own reader and writer (CFITSIO),
for users without astropy.

``read`` returns the image plane (NumPy float32, shape (height, width); BLANK and NaN as NaN) and
a :class:`Header` that keeps every data-describing card verbatim (WCS, frequency, HISTORY, ...)
and the stored axes (WSClean's N x N x 1 x 1). ``write`` writes a float32 image with those cards,
atomically (a temporary file renamed into place).
"""

from collections import namedtuple

import numpy as np

from . import _gpuclean
from .errors import InputError

Image = namedtuple("Image", ["data", "header"])


class Header:
    """The cards of an image HDU, less the structural ones (BITPIX, NAXISn, ...), and its axes."""

    def __init__(self, cards=(), axes=(), bitpix=-32):
        self.cards = list(cards)  # 80-character strings
        self.axes = list(axes)    # lengths as stored, axis 1 first
        self.bitpix = bitpix      # as stored; write() always writes float32

    def get(self, keyword, default=None):
        """The value of `keyword`: a float for numbers, a str otherwise (quotes removed)."""
        text = _gpuclean.header_value(self.cards, keyword.upper())
        if text is None:
            return default
        try:
            return float(text)
        except ValueError:
            return text

    def __getitem__(self, keyword):
        value = self.get(keyword)
        if value is None:
            raise KeyError(keyword)
        return value

    def __contains__(self, keyword):
        return _gpuclean.header_value(self.cards, keyword.upper()) is not None

    def __repr__(self):
        return "\n".join(self.cards)


def read(path):
    """The image in ``path`` (primary HDU, or the first image extension): ``Image(data, header)``.

    Raises gpuclean.InputError with the command line's message when it cannot be read."""
    raw = _gpuclean.fits_read(str(path))
    return Image(raw["data"], Header(raw["cards"], raw["axes"], raw["bitpix"]))


def read_header(path):
    """The primary header of the FITS file ``path``, without reading its data (a large image's
    header in microseconds). Raises gpuclean.InputError when it is not FITS."""
    cards = []
    try:
        with open(path, "rb") as f:
            while True:
                block = f.read(2880)
                if len(block) < 2880:
                    raise InputError(f"'{path}' ends inside its FITS header; it is not a whole FITS file.")
                for at in range(0, 2880, 80):
                    card = block[at:at + 80].decode("ascii", errors="replace")
                    if card.startswith("END") and not card[3:].strip():
                        return Header(cards)
                    cards.append(card)
                if not cards or not cards[0].startswith("SIMPLE"):
                    raise InputError(f"'{path}' is not a FITS file (no SIMPLE card).")
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror}.") from None


def write(path, data, header=None, *, overwrite=False, history=()):
    """Writes the 2-D array ``data`` (height, width) as float32 with ``header``'s cards.

    BUNIT and BMAJ/BMIN/BPA come from the header when it has them (BUNIT defaults to JY/BEAM);
    DATE is the time of writing. gpuclean's own provenance cards (ORIGIN, GC*) belong to the run
    that wrote a file and are not copied. ``history`` lines are appended as HISTORY cards.
    Raises gpuclean.UsageError when ``path`` exists and ``overwrite`` is False."""
    header = header if header is not None else Header()
    data = np.ascontiguousarray(data, dtype=np.float32)
    beam = None
    if all(k in header for k in ("BMAJ", "BMIN", "BPA")):
        beam = [header["BMAJ"], header["BMIN"], header["BPA"]]
    _gpuclean.fits_write(str(path), data, header.cards, header.axes, str(header.get("BUNIT", "JY/BEAM")), beam,
                         list(history), bool(overwrite))
