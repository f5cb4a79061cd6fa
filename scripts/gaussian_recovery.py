#!/usr/bin/env python3
"""Per-Gaussian flux recovery of CLEAN models against a `gpuclean simulate` truth.

Measured as tests/clean/test_multiscale_field.cpp measures it: each Gaussian's model flux is the
sum of the model image (Jy/pixel) over the pixels whose centres lie within twice the Gaussian's
major FWHM of its centre (the true Gaussian holds all but 2^-16 of its flux there). The test's
Gaussians lie far apart and it divides by the true flux; in a simulated field other sources may
fall inside an aperture, so here the sum is divided by the truth image's sum over the same
aperture, which is the Gaussian's true flux (to 2^-16) when it stands alone. Gaussians whose
aperture holds more than 1% of other sources' flux are marked "blend". A second summary line
takes the Gaussians that are like the test's: alone in their aperture, with a peak of at least
20 sigma (the test's faintest: 0.3 Jy spread over 12 beams; --min-peak-sigma changes it). The peak
is estimated as the flux seen through a round beam of the restoring beam's FWHM, over --noise.

Usage:
  gaussian_recovery.py SIM_DIR --model NAME=MODEL.fits [--model NAME=MODEL.fits ...]
                       [--restored RESTORED.fits] [--noise SIGMA] [--min-peak-sigma S]
SIM_DIR holds sources.csv and truth.fits. A row per Gaussian: its id in sources.csv, its centre
(0-based pixels), FWHM (major x minor, pixels; major in restoring beams), estimated peak over the
noise, true flux, the truth within its circle, and each model's share of that, in percent. --restored gives the restoring beam (BMAJ, BMIN) for
the sizes in beams and the peak/sigma column; --noise is the simulation's thermal noise
(Jy/beam; gpuclean simulate's --noise, default 1e-4).

Needs python3 and numpy only. FITS is read with gpuclean.fits when that package imports, else
with the minimal reader below (single-HDU images as gpuclean writes them: 2880-byte blocks,
big-endian, NAXIS1 fastest, BITPIX -32/-64 or integers with BSCALE/BZERO).
"""

import argparse
import csv
import math
import os
import sys

import numpy as np

BLOCK = 2880
TEST_PEAK_SIGMA = 20.0  # the faintest peak of test_multiscale_field's Gaussians (0.3 Jy, 12 beams), in sigma


def _card_value(text):
    text = text.split("/", 1)[0] if not text.lstrip().startswith("'") else text
    text = text.strip()
    if text.startswith("'"):
        return text[1:text.rfind("'")].rstrip()
    if text in ("T", "F"):
        return text == "T"
    try:
        return int(text)
    except ValueError:
        return float(text)


def read_fits_minimal(path):
    """(data as float64 of shape (height, width), header dict) of a single-HDU FITS image."""
    header = {}
    with open(path, "rb") as f:
        offset = 0
        done = False
        while not done:
            block = f.read(BLOCK)
            if len(block) < BLOCK:
                raise ValueError(f"{path}: the header ends before its END card")
            offset += BLOCK
            for i in range(0, BLOCK, 80):
                card = block[i:i + 80].decode("ascii", "replace")
                key = card[:8].strip()
                if key == "END":
                    done = True
                    break
                if card[8:10] == "= ":
                    header[key] = _card_value(card[10:])
        bitpix = header["BITPIX"]
        axes = [header[f"NAXIS{i}"] for i in range(1, header["NAXIS"] + 1)]
        if len(axes) < 2 or any(a != 1 for a in axes[2:]):
            raise ValueError(f"{path}: expected one 2-D plane, got axes {axes}")
        dtype = {-32: ">f4", -64: ">f8", 8: "u1", 16: ">i2", 32: ">i4", 64: ">i8"}[bitpix]
        count = axes[0] * axes[1]
        f.seek(offset)
        raw = np.fromfile(f, dtype=dtype, count=count)
        if raw.size != count:
            raise ValueError(f"{path}: the data are shorter than NAXIS1 x NAXIS2")
    data = raw.astype(np.float64).reshape(axes[1], axes[0])
    if bitpix > 0:
        if "BLANK" in header:
            blank = raw.reshape(axes[1], axes[0]) == header["BLANK"]
        data = data * header.get("BSCALE", 1.0) + header.get("BZERO", 0.0)
        if "BLANK" in header:
            data[blank] = np.nan
    return data, header


def read_fits(path):
    """(data as float64 (height, width), a get(keyword) function)."""
    try:
        from gpuclean import fits as gfits  # the package's reader (CFITSIO), when built
        image = gfits.read(path)
        data = np.asarray(image.data, dtype=np.float64)
        return data.reshape(data.shape[-2], data.shape[-1]), image.header.get
    except ImportError:
        data, header = read_fits_minimal(path)
        return data, header.get


def gaussians(sim_dir):
    with open(os.path.join(sim_dir, "sources.csv"), newline="") as f:
        return [row for row in csv.DictReader(f) if row["kind"] == "gaussian"]


def aperture_sum(image, x, y, r):
    """Sum of image over pixels (i, j) with hypot(i - x, j - y) <= r (i along NAXIS1)."""
    h, w = image.shape
    x0, x1 = max(0, math.floor(x - r)), min(w - 1, math.ceil(x + r))
    y0, y1 = max(0, math.floor(y - r)), min(h - 1, math.ceil(y + r))
    if x0 > x1 or y0 > y1:
        return 0.0
    jj, ii = np.mgrid[y0:y1 + 1, x0:x1 + 1]
    inside = np.hypot(ii - x, jj - y) <= r
    return float(image[y0:y1 + 1, x0:x1 + 1][inside].sum(dtype=np.float64))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sim_dir")
    p.add_argument("--model", action="append", required=True, metavar="NAME=MODEL.fits")
    p.add_argument("--restored", help="a restored image, for the restoring beam")
    p.add_argument("--noise", type=float, default=1e-4, help="the simulation's noise, Jy/beam (default 1e-4)")
    p.add_argument("--min-peak-sigma", type=float, default=TEST_PEAK_SIGMA,
                   help="the second summary's least peak/sigma (default 20: the test's faintest Gaussian)")
    a = p.parse_args(argv)

    models = []
    for spec in a.model:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            p.error(f"--model takes NAME=MODEL.fits, not '{spec}'")
        models.append((name, read_fits(path)[0]))
    truth, truth_get = read_fits(os.path.join(a.sim_dir, "truth.fits"))
    for name, m in models:
        if m.shape != truth.shape:
            sys.exit(f"gaussian_recovery: the {name} model is {m.shape[1]}x{m.shape[0]}, the truth "
                     f"{truth.shape[1]}x{truth.shape[0]}")
    pixel_arcsec = abs(float(truth_get("CDELT2"))) * 3600.0
    beam_px = None
    if a.restored:
        _, get = read_fits(a.restored)
        bmaj, bmin = get("BMAJ"), get("BMIN")
        if bmaj is not None and bmin is not None:
            beam_px = math.sqrt(float(bmaj) * float(bmin)) * 3600.0 / pixel_arcsec

    rows = []
    for g in gaussians(a.sim_dir):
        x, y, flux = float(g["x"]), float(g["y"]), float(g["flux_jy"])
        fmaj = float(g["fwhm_major_arcsec"]) / pixel_arcsec
        fmin = float(g["fwhm_minor_arcsec"]) / pixel_arcsec
        r = 2.0 * fmaj
        truth_in = aperture_sum(truth, x, y, r)
        rec = [100.0 * aperture_sum(m, x, y, r) / truth_in for _, m in models]
        # Peak brightness (Jy/beam) of the Gaussian seen through a round beam of the restoring beam's
        # FWHM, over the noise: how far above the noise its brightest part stands.
        snr = 0.0
        if beam_px and a.noise > 0:
            snr = flux * beam_px ** 2 / math.sqrt((fmaj ** 2 + beam_px ** 2) * (fmin ** 2 + beam_px ** 2)) / a.noise
        rows.append(dict(id=int(g["id"]), x=x, y=y, fmaj=fmaj, fmin=fmin, flux=flux, truth_in=truth_in,
                         blend=abs(truth_in - flux) > 0.01 * flux, rec=rec, snr=snr))

    beam_note = f"restoring beam {beam_px:.2f} px" if beam_px else "no restoring beam given"
    print(f"# per-Gaussian recovery: model flux within 2 x FWHM(major) of each centre / truth there; {beam_note}; "
          f"noise {a.noise:g} Jy/beam")
    head = f"{'id':>5} {'x':>7} {'y':>7} {'FWHM px':>11} {'beams':>5} {'peak/sig':>8} {'flux Jy':>9} " \
           f"{'truth ap':>9}" + "".join(f" {name + ' %':>13}" for name, _ in models) + "  note"
    print(head)
    for row in rows:
        beams = f"{row['fmaj'] / beam_px:5.2f}" if beam_px else f"{'-':>5}"
        snr = f"{row['snr']:8.1f}" if beam_px and a.noise > 0 else f"{'-':>8}"
        print(f"{row['id']:>5} {row['x']:7.1f} {row['y']:7.1f} {row['fmaj']:5.1f}x{row['fmin']:<5.1f} {beams} {snr} "
              f"{row['flux']:9.5f} {row['truth_in']:9.5f}" + "".join(f" {v:13.1f}" for v in row["rec"]) +
              ("  blend" if row["blend"] else ""))
    if not rows:
        print("summary: no Gaussian in sources.csv")
        return 0
    def summary(label, subset):
        if not subset:
            print(f"summary, {label}: none")
            return
        parts = []
        for k, (name, _) in enumerate(models):
            vals = [row["rec"][k] for row in subset]
            within = sum(abs(v - 100.0) <= 5.0 for v in vals)
            parts.append(f"{name} min {min(vals):.1f}% max {max(vals):.1f}% ({within}/{len(vals)} within 5%)")
        print(f"summary, {label}: " + "; ".join(parts))

    summary(f"all {len(rows)} Gaussians", rows)
    if beam_px and a.noise > 0:
        # The test's Gaussians stand alone with peaks of 20 sigma (its 12-beam one) and more.
        alike = [row for row in rows if not row["blend"] and row["snr"] >= a.min_peak_sigma]
        summary(f"{len(alike)} alone in their aperture with peak >= {a.min_peak_sigma:g} sigma"
                + (", as the test's" if a.min_peak_sigma == TEST_PEAK_SIGMA else ""), alike)
    return 0


if __name__ == "__main__":
    sys.exit(main())
