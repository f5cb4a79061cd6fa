"""A minimal Hogbom CLEAN in numpy for WSClean's -python-deconvolution, which prints what WSClean
passes in each major cycle: the probe behind docs/wsclean-contract.md. Not for use.

    wsclean ... -python-deconvolution scripts/wsclean_probe_hook.py ms

PROBE_MODE (environment) picks a deliberate misbehaviour, to see what WSClean does with it:
raise, incomplete (dict without level/continue), fortran (F-ordered arrays back), float32,
zero-residual, stop-first (continue=False at once), level-huge (level=1e9).
Keep this file importable without error: WSClean 3.1 hangs on an error while loading it.
"""

import os
import time

import numpy as np

MODE = os.environ.get("PROBE_MODE", "")
calls = 0  # module state survives between major cycles


def subtract_psf(image, psf, y, x, amplitude):
    """image -= amplitude * psf shifted so that its centre (h//2, w//2) lies on (y, x)."""
    h, w = image.shape
    cy, cx = h // 2, w // 2
    y0, y1, x0, x1 = max(0, y - cy), min(h, y - cy + h), max(0, x - cx), min(w, x - cx + w)
    image[y0:y1, x0:x1] -= amplitude * psf[y0 - y + cy:y1 - y + cy, x0 - x + cx:x1 - x + cx]


def find_peak(residual):
    """(y, x, |peak|) of the channel- and polarization-averaged residual."""
    integrated = np.abs(residual.mean(axis=(0, 1)))
    y, x = np.unravel_index(np.argmax(integrated), integrated.shape)
    return int(y), int(x), integrated[y, x]


def describe(residual, psf, meta):
    a = residual
    return (f"shape={a.shape} psf={psf.shape} dtype={a.dtype} C={a.flags.c_contiguous} "
            f"writeable={a.flags.writeable} iter={meta.iteration_number} max_iter={meta.max_iterations} "
            f"major_thr={meta.major_iter_threshold:.4g} final_thr={meta.final_threshold:.4g} "
            f"gain={meta.gain:.3g} mgain={meta.mgain:.3g} square_joined={meta.square_joined_channels} "
            f"channels={[(round(c.frequency / 1e6, 1), round(c.weight, 1)) for c in meta.channels]} "
            f"nan={int(np.isnan(a).sum())}")


def deconvolve(residual, model, psf, meta):
    global calls
    calls += 1
    start = time.perf_counter()
    print(f"PROBE call {calls} mode={MODE or 'hogbom'} {describe(residual, psf, meta)}", flush=True)
    if MODE == "raise":
        raise RuntimeError("probe: a deliberate failure")
    nchan, npol = residual.shape[:2]
    residual = np.nan_to_num(residual)
    y, x, peak = find_peak(residual)
    threshold = max(meta.major_iter_threshold, meta.final_threshold, peak * (1 - meta.mgain))
    first = meta.iteration_number
    while peak > threshold and meta.iteration_number < meta.max_iterations:
        for p in range(npol):
            spectrum = residual[:, p, y, x].copy()
            if nchan > 1:
                spectrum = meta.spectral_fitter.fit_and_evaluate(spectrum, x, y)
            for c in range(nchan):
                model[c, p, y, x] += meta.gain * spectrum[c]
                subtract_psf(residual[c, p], psf[c], y, x, meta.gain * spectrum[c])
        meta.iteration_number += 1
        y, x, peak = find_peak(residual)
    more = bool(peak > meta.final_threshold and meta.iteration_number < meta.max_iterations)
    print(f"PROBE done {calls}: {meta.iteration_number - first} iterations, peak {peak:.4g}, threshold "
          f"{threshold:.4g}, continue={more}, {time.perf_counter() - start:.2f} s", flush=True)
    result = {"residual": residual, "model": model, "level": peak, "continue": more}
    if MODE == "incomplete":
        del result["level"], result["continue"]
    elif MODE == "fortran":
        result.update(residual=np.asfortranarray(residual), model=np.asfortranarray(model))
    elif MODE == "float32":
        result.update(residual=residual.astype(np.float32), model=model.astype(np.float32))
    elif MODE == "zero-residual":
        result["residual"] = np.zeros_like(residual)
    elif MODE == "stop-first":
        result["continue"] = False
    elif MODE == "level-huge":
        result["level"] = 1e9
    return result
