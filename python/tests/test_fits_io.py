"""gpuclean.fits reads and writes images with their header cards kept."""

import numpy as np
import pytest

import gpuclean


def test_read_gives_the_plane_and_the_data_cards(sample):
    image = gpuclean.fits.read(sample[0])
    assert image.data.shape == (512, 512) and image.data.dtype == np.float32
    assert image.header.axes == [512, 512, 1, 1]
    assert image.header["CTYPE1"].startswith("RA---SIN")
    assert image.header["CRPIX1"] == 257.0
    assert not any(c.startswith(("BITPIX", "NAXIS")) for c in image.header.cards)


def test_write_then_read_keeps_pixels_and_cards(sample, tmp_path):
    image = gpuclean.fits.read(sample[0])
    data = image.data.copy()
    data[3, 5] = np.nan
    gpuclean.fits.write(tmp_path / "copy.fits", data, image.header, history=["written by a test"])
    back = gpuclean.fits.read(tmp_path / "copy.fits")
    np.testing.assert_array_equal(back.data, data)
    assert back.header.axes == image.header.axes
    # The writer owns DATE, BUNIT and gpuclean's provenance (ORIGIN, GC*): a file's, not the data's.
    keep = lambda h: [c for c in h.cards if not c.startswith(("DATE    =", "HISTORY", "BUNIT", "ORIGIN", "GC"))]
    assert keep(back.header) == keep(image.header)
    assert "HISTORY written by a test" in [c.rstrip() for c in back.header.cards]


def test_a_plain_array_needs_no_header(tmp_path):
    data = np.arange(12, dtype=np.float64).reshape(3, 4)
    gpuclean.fits.write(tmp_path / "a.fits", data)
    back = gpuclean.fits.read(tmp_path / "a.fits")
    np.testing.assert_array_equal(back.data, data.astype(np.float32))
    assert back.header.axes == [4, 3] and back.header["BUNIT"] == "JY/BEAM"


def test_write_refuses_an_existing_file_unless_overwrite(tmp_path):
    gpuclean.fits.write(tmp_path / "a.fits", np.zeros((2, 2)))
    with pytest.raises(gpuclean.UsageError, match="a.fits"):
        gpuclean.fits.write(tmp_path / "a.fits", np.ones((2, 2)))
    gpuclean.fits.write(tmp_path / "a.fits", np.ones((2, 2)), overwrite=True)
    assert gpuclean.fits.read(tmp_path / "a.fits").data.sum() == 4


def test_reading_a_file_that_is_not_fits_is_an_input_error(tmp_path):
    (tmp_path / "x.fits").write_text("not a FITS file")
    with pytest.raises(gpuclean.InputError, match="x.fits"):
        gpuclean.fits.read(tmp_path / "x.fits")
