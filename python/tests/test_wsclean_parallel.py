"""gpuclean.wsclean_parallel against an emulation of WSClean's -parallel-deconvolution (radler's
parallel_deconvolution.cc and python_deconvolution.cc): irregular sub-images split along
random-walk paths, float32 images, a peak pass, real passes in a random order cut after earlier
copy-backs, CopyMasked of the residual, AddSubImage of the models, one iteration count per
sub-image. The adapter must reproduce a whole-image clean exactly."""

import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from gpuclean.errors import UsageError
from gpuclean.wsclean_parallel import ParallelAdapter, locate_boxes


def peak(a):
    """Largest |value| over finite pixels (0 when there is none)."""
    a = np.abs(np.asarray(a, np.float64))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else 0.0


class FakeClean:
    """A deterministic whole-image 'clean': in each plane the k brightest finite pixels above the
    floor lose 30 % into the model, and the residual loses that change spread over 3x3 pixels
    (a PSF's sidelobes reach the neighbours, so the residual changes beyond the model's pixels)."""

    def __init__(self, k=6):
        self.k, self.calls = k, []

    def __call__(self, residual, floor, mgain, budget):
        self.calls.append((residual.shape, floor, mgain, budget))
        change = np.zeros_like(residual)
        planes, cplanes = residual.reshape(-1, *residual.shape[-2:]), change.reshape(-1, *residual.shape[-2:])
        made = 0
        for r, c in zip(planes, cplanes):
            v = np.where(np.isfinite(r), np.abs(r), -1.0).ravel()
            for i in np.argsort(v, kind="stable")[::-1][:self.k]:
                if made >= budget or v[i] <= floor:
                    break
                c.flat[i] = 0.3 * r.flat[i]
                made += 1
        cleaned = residual.copy()
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                w = 1.0 if dx == dy == 0 else 0.1
                cleaned -= w * np.roll(change, (dy, dx), axis=(-2, -1))
        left = peak(cleaned)
        return change, cleaned, {"components": made, "more": made > 0 and left > floor, "peak_left": left}


def split(width, height, gw, gh, rng):
    """radler's sub-images: region index per pixel (random-walk dividing paths within a quarter of a
    sub-image of the even split), each region's bounding box (widened to even size as radler's
    GetBoundingMask does for even images) and its boundary mask inside the box."""
    def paths(n, length, extent):
        avg = extent // n
        out = []
        for k in range(1, n):
            mid = extent * k // n
            lo, hi = mid - avg // 4, mid + avg // 4
            p = np.empty(length, int)
            p[0] = rng.integers(lo, hi + 1)
            for i in range(1, length):
                p[i] = np.clip(p[i - 1] + rng.integers(-1, 2), lo, hi)
            out.append(p)
        return out
    xs, ys = np.meshgrid(np.arange(width), np.arange(height))
    col = sum((xs >= p[:, None]).astype(int) for p in paths(gw, height, width)) if gw > 1 else 0 * xs
    row = sum((ys >= p[None, :]).astype(int) for p in paths(gh, width, height)) if gh > 1 else 0 * ys
    region = row * gw + col
    subs = []
    for k in range(gw * gh):
        yy, xx = np.nonzero(region == k)
        x, y = xx.min(), yy.min()
        w, h = xx.max() + 1 - x, yy.max() + 1 - y
        if width % 2 == 0 and w % 2:
            w += 1
            if x + w >= width:
                x -= 1
        if height % 2 == 0 and h % 2:
            h += 1
            if y + h >= height:
                y -= 1
        subs.append((int(x), int(y), int(w), int(h), region[y:y + h, x:x + w] == k))
    return region, subs


def meta_of(iteration, max_iterations, major_threshold=0.0, final=0.0, mgain=0.8):
    return types.SimpleNamespace(iteration_number=iteration, max_iterations=max_iterations, final_threshold=final,
                                 major_iter_threshold=major_threshold, mgain=mgain, gain=0.1)


class Radler:
    """radler's ExecuteParallelRun with a Python deconvolver, in float32 as radler keeps images."""

    def __init__(self, subs, deconvolve, niter, mgain, final, rng, threads=1):
        self.subs, self.deconvolve, self.niter, self.mgain, self.final, self.rng = subs, deconvolve, niter, mgain, final, rng
        self.iterations = [0] * len(subs)
        self.threads, self.mutex = threads, threading.Lock()

    def each(self, job):
        """radler's NestedRun: every sub-image, in a random order, on `threads` threads."""
        order = self.rng.permutation(len(self.subs))
        if self.threads == 1:
            for k in order:
                job(k)
        else:
            with ThreadPoolExecutor(self.threads) as pool:
                list(pool.map(job, order))

    def call(self, k, residual, model, psf, max_iterations, major_threshold):
        meta = meta_of(self.iterations[k], max_iterations, major_threshold, self.final, self.mgain)
        out = self.deconvolve(residual.astype(np.float64), model.astype(np.float64), psf.astype(np.float64), meta)
        self.iterations[k] = meta.iteration_number
        return out["residual"].astype(np.float32), out["model"].astype(np.float32), float(out["level"]), out["continue"]

    def major_iteration(self, residual, model, psf):
        """residual, model [nchan, npol, H, W] float32 (residual updated in place); psf [nchan, H, W].
        Returns the new model and whether another major iteration is due."""
        if len(self.subs) == 1:  # radler's single-threaded run: one call, no peak pass
            r, m, level, more = self.call(0, residual, model, psf, self.niter, 0.0)
            residual[...] = r
            return m, more and self.iterations[0] < self.niter
        crops = []
        for x, y, w, h, mask in self.subs:
            py, px = (psf.shape[1] - h) // 2, (psf.shape[2] - w) // 2
            crops.append(psf[:, py:py + h, px:px + w])
        peaks = [0.0] * len(self.subs)

        def probe(k):
            x, y, w, h, mask = self.subs[k]
            with self.mutex:
                r, m = residual[..., y:y + h, x:x + w].copy(), model[..., y:y + h, x:x + w] * mask
            _, _, peaks[k], _ = self.call(k, r, m, crops[k], 0, 0.0)
        self.each(probe)
        threshold = max(0.0, max(peaks)) * (1.0 - self.mgain)
        result = np.zeros_like(model)
        done = {"finished": 0, "reached": False}

        def clean(k):
            x, y, w, h, mask = self.subs[k]
            with self.mutex:  # the trim, under radler's mutex
                sub, start_model = residual[..., y:y + h, x:x + w].copy(), model[..., y:y + h, x:x + w] * mask
            r, m, level, more = self.call(k, sub, start_model, crops[k], self.niter, threshold)
            with self.mutex:
                if abs(level) <= abs(peaks[k]) * 4.0 and np.isfinite(level):
                    box = residual[..., y:y + h, x:x + w]
                    box[..., mask] = r[..., mask]  # CopyMasked
                else:
                    m, more = start_model, False
                result[..., y:y + h, x:x + w] += m  # AddSubImage
                done["finished"] += not more
                done["reached"] |= self.iterations[k] >= self.niter
        self.each(clean)
        finished, reached = done["finished"], done["reached"]
        return result, finished != len(self.subs) and not reached


def sky(width, height, nchan, npol, rng, subs, nan_channel=None):
    """float32 noise with bright points where sub-images overlap (where a per-box clean counts twice)."""
    image = rng.normal(0, 0.01, (nchan, npol, height, width)).astype(np.float32)
    cover = np.zeros((height, width), int)
    for x, y, w, h, _ in subs:
        cover[y:y + h, x:x + w] += 1
    yy, xx = np.nonzero(cover > 1)
    for i in rng.choice(len(yy), size=min(4, len(yy)), replace=False) if len(yy) else []:
        image[..., yy[i], xx[i]] += np.float32(rng.uniform(2, 5))
    if nan_channel is not None:
        image[nan_channel] = np.nan
    return image


def reimage(residual, cycle):
    """WSClean's next residual from the visibilities: here a deterministic perturbation."""
    return (residual + np.float32(1e-4 * (cycle + 1))).astype(np.float32)


def psf_of(nchan, width, height):
    yy, xx = np.mgrid[0:height, 0:width]
    g = np.exp(-((xx - width // 2) ** 2 + (yy - height // 2) ** 2) / 8.0)
    return np.stack([g * (1 + 0.1 * c) for c in range(nchan)]).astype(np.float32)


def run(width, height, gw, gh, nchan=1, npol=1, nan_channel=None, seed=1, cycles=3, niter=1000,
        deconvolver="adapter", threads=1, fake=None):
    """Runs `cycles` major cycles through the emulation and, beside it, the fake clean on the whole
    image; returns both (model, residual) pairs, per-sub-image iteration counts and the fake's total."""
    rng = np.random.default_rng(seed)
    _, subs = split(width, height, gw, gh, rng)
    residual = sky(width, height, nchan, npol, rng, subs, nan_channel)
    psf = psf_of(nchan, width, height)
    mgain, final = 0.8, 0.02
    fake = fake or FakeClean()
    adapter = ParallelAdapter(width, height, fake, peak)
    if deconvolver == "adapter":
        deconvolve = adapter.deconvolve
    else:  # what a plain per-sub-image deconvolver does: clean its whole box
        def deconvolve(r, m, p, meta):
            if meta.max_iterations == 0:
                return {"residual": r, "model": m, "level": peak(r), "continue": False}
            change, cleaned, stats = fake(r, max(meta.major_iter_threshold, meta.final_threshold), meta.mgain,
                                          meta.max_iterations - meta.iteration_number)
            meta.iteration_number += stats["components"]
            return {"residual": cleaned, "model": m + change, "level": peak(cleaned), "continue": stats["more"]}
    radler = Radler(subs, deconvolve, niter, mgain, final, rng, threads)
    model = np.zeros_like(residual)
    ref_residual, ref_model = residual.copy(), model.copy()
    ref_fake, total = FakeClean(), 0
    for cycle in range(cycles):
        full_psf_check = None
        model, more = radler.major_iteration(residual, model, psf)
        if len(subs) > 1 and deconvolver == "adapter":
            full_psf_check = adapter.full_psf()
        # the same cycle on the whole image
        floor = max(peak(ref_residual) * (1.0 - mgain) if len(subs) > 1 else 0.0, final)
        change, cleaned, stats = ref_fake(ref_residual.astype(np.float64), floor, mgain, niter - total)
        total += stats["components"]
        ref_model = (ref_model.astype(np.float64) + change).astype(np.float32)
        ref_residual = cleaned.astype(np.float32)
        if full_psf_check is not None:  # the sub-image PSFs put back where WSClean cut them
            expected = np.zeros_like(psf)
            for _, _, w, h, _ in subs:
                y, x = (height - h) // 2, (width - w) // 2
                expected[:, y:y + h, x:x + w] = psf[:, y:y + h, x:x + w]
            assert np.array_equal(full_psf_check, expected)
        yield model, residual.copy(), ref_model, ref_residual, radler.iterations, total, more, stats
        residual[...] = reimage(residual, cycle)
        ref_residual = reimage(ref_residual, cycle)


@pytest.mark.parametrize("width,height,gw,gh,nchan,npol,nan", [
    (64, 64, 1, 1, 1, 1, None),
    (64, 48, 2, 2, 1, 1, None),
    (90, 60, 3, 2, 1, 1, None),
    (61, 47, 3, 2, 1, 1, None),  # odd sizes: radler does not widen the boxes
    (96, 80, 3, 3, 3, 2, None),
    (80, 64, 2, 2, 4, 1, 2),     # a flagged (all-NaN) channel
])
def test_matches_whole_image_clean(width, height, gw, gh, nchan, npol, nan):
    for model, residual, ref_model, ref_residual, iterations, total, more, stats in run(
            width, height, gw, gh, nchan, npol, nan):
        assert np.array_equal(model, ref_model, equal_nan=True)
        assert np.array_equal(residual, ref_residual, equal_nan=True)
        assert np.count_nonzero(model) > 0
        assert iterations == [total] * (gw * gh)  # every sub-image carries the run's total
        assert more == stats["more"]


@pytest.mark.parametrize("seed", range(6))
def test_random_layouts(seed):
    rng = np.random.default_rng(100 + seed)
    gw, gh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    width, height = int(rng.integers(40, 100)), int(rng.integers(40, 100))
    for model, residual, ref_model, ref_residual, *_ in run(width, height, gw, gh, 2, 1, None, seed=seed):
        assert np.array_equal(model, ref_model) and np.array_equal(residual, ref_residual)


class SlowClean(FakeClean):
    """Sleeps (releasing the GIL, as numpy and gpuclean do) so that threaded calls overlap."""

    def __call__(self, *args):
        time.sleep(0.02)
        return super().__call__(*args)


def test_threaded_calls():
    """WSClean 3.6 calls the hook from several threads at once: still the whole-image result."""
    for model, residual, ref_model, ref_residual, iterations, total, *_ in run(
            90, 60, 3, 2, 2, 1, None, threads=4, fake=SlowClean()):
        assert np.array_equal(model, ref_model) and np.array_equal(residual, ref_residual)
        assert iterations == [total] * 6


def test_per_box_clean_double_counts():
    """The emulation's check has teeth: cleaning each box (what a plain hook does) does not match."""
    model, residual, ref_model, ref_residual, *_ = next(run(64, 48, 2, 2, deconvolver="per-box"))
    assert not np.array_equal(model, ref_model)


def test_niter_budget_and_stop():
    """The budget is -niter minus the run's total so far, and WSClean stops when the total reaches it."""
    cycles = list(run(64, 48, 2, 2, niter=3, cycles=2))
    assert cycles[0][7]["components"] == 3 and cycles[0][7]["more"]  # the budget, not the floor, stopped it
    assert cycles[0][4] == [3] * 4 and cycles[0][6] is False  # so WSClean stops: the count reached -niter
    assert cycles[1][7]["components"] == 0
    for model, residual, ref_model, ref_residual, *_ in cycles:
        assert np.array_equal(model, ref_model) and np.array_equal(residual, ref_residual)


def crops_of(width=64, height=48, gw=2, gh=2, seed=3):
    rng = np.random.default_rng(seed)
    _, subs = split(width, height, gw, gh, rng)
    image = sky(width, height, 2, 1, rng, subs).astype(np.float64)
    return image, subs


def test_locate_boxes_any_order():
    image, subs = crops_of(90, 60, 3, 2)
    order = np.random.default_rng(0).permutation(len(subs))
    crops = [image[..., subs[k][1]:subs[k][1] + subs[k][3], subs[k][0]:subs[k][0] + subs[k][2]] for k in order]
    assert locate_boxes(crops, 90, 60) == [tuple(subs[k][:4]) for k in order]


def test_crops_of_another_image_raise():
    image, subs = crops_of()
    crops = [image[..., y:y + h, x:x + w].copy() for x, y, w, h, _ in subs]
    crops[1] += 1.0  # no longer cut from the same image
    with pytest.raises(UsageError, match="parallel-deconvolution"):
        locate_boxes(crops, 64, 48)
    crops = [image[..., y:y + h, x:x + w] for x, y, w, h, _ in subs]
    with pytest.raises(UsageError, match="not the image's 70x48"):
        locate_boxes(crops, 70, 48)


def test_protocol_violations_raise():
    image, subs = crops_of()
    psf = np.ones((2, 8, 8))
    adapter = ParallelAdapter(64, 48, FakeClean(), peak)
    x, y, w, h, mask = subs[0]
    box = image[..., y:y + h, x:x + w]
    with pytest.raises(UsageError, match="before any sub-image peak pass"):  # real pass first
        adapter.deconvolve(box, np.zeros_like(box), psf, meta_of(0, 100))
    for x, y, w, h, mask in subs:
        adapter.deconvolve(image[..., y:y + h, x:x + w], np.zeros((2, 1, h, w)), psf, meta_of(0, 0))
    odd = image[..., 0:10, 0:12]
    with pytest.raises(UsageError, match="matches none"):  # a shape no sub-image has
        adapter.deconvolve(odd, np.zeros_like(odd), psf, meta_of(0, 100, 0.1))
    tampered = box.copy()
    tampered[0, 0, 3, 3] += 0.5  # neither the peak pass's value nor the cleaned one
    with pytest.raises(UsageError, match="matches none"):
        adapter.deconvolve(tampered, np.zeros_like(box), psf, meta_of(0, 100, 0.1))
    adapter.deconvolve(box, np.zeros_like(box), psf, meta_of(0, 100, 0.1))
    with pytest.raises(UsageError, match="matches none"):  # the same sub-image twice
        adapter.deconvolve(box, np.zeros_like(box), psf, meta_of(0, 100, 0.1))
    with pytest.raises(UsageError, match="not yet cleaned"):  # a new major cycle too early
        adapter.deconvolve(box, np.zeros_like(box), psf, meta_of(0, 0))
    with pytest.raises(UsageError, match="channels, polarizations"):
        adapter.deconvolve(box[0], np.zeros_like(box[0]), psf, meta_of(0, 0))


def test_real_gpuclean_session():
    """gpuclean's CPU session as clean_full: the sub-image run gives the whole-image round's result."""
    _gpuclean = pytest.importorskip("gpuclean._gpuclean")
    width, height = 64, 64
    rng = np.random.default_rng(7)
    _, subs = split(width, height, 2, 2, rng)
    psf = psf_of(1, width, height)
    residual = sky(width, height, 1, 1, rng, subs)

    def session_clean(full_psf):
        s = _gpuclean.OuterLoopSession(["--device", "cpu", "--auto-threshold", "0", "--gain", "0.1"])
        started = []

        def clean_full(r, floor, mgain, budget):
            r32 = r.astype(np.float32)
            if started:
                s.set_residual(r32)
            else:
                s.start(r32, full_psf, [1.4e8], [1.0], 1.0)
                started.append(True)
            stats = s.clean(floor, mgain, budget)
            change = np.zeros_like(r)
            s.add_model_change(change)
            stats["more"] = stats["components"] > 0 and stats["stop_reason"] == "threshold"
            return change, s.residuals().astype(np.float64), stats
        return clean_full

    adapter = ParallelAdapter(width, height, session_clean(psf), peak)
    radler = Radler(subs, adapter.deconvolve, 1000, 0.8, 0.05, rng)
    model = np.zeros_like(residual)
    work = residual.copy()
    model, _ = radler.major_iteration(work, model, psf)

    reference = session_clean(psf)
    change, cleaned, stats = reference(residual.astype(np.float64), max(peak(residual) * (1 - 0.8), 0.05), 0.8, 1000)
    assert stats["components"] > 0
    assert np.array_equal(model, change.astype(np.float32))
    assert np.array_equal(work, cleaned.astype(np.float32))
    assert radler.iterations == [stats["components"]] * 4
