"""WSClean's -parallel-deconvolution turned into one whole-image gpuclean round per major cycle.

Under -parallel-deconvolution WSClean (3.1, and radler since) splits the image along low-flux
paths into sub-images whose bounding boxes overlap, and calls the Python deconvolver once per
sub-image twice a major cycle: a peak pass (meta.max_iterations == 0; only "level" is used) and a
real pass in any order. After each real call it copies the returned residual back inside the
sub-image's boundary only, and ADDS the whole returned model box into a new model that started at
zero. The model it passes in is cut to the boundary (zero outside). No box position and no
boundary reach Python, so a deconvolver that cleans each box counts the overlaps twice.

:class:`ParallelAdapter` avoids that: it locates every box in the full image by exact matching of
the peak-pass crops (all cut from one residual, so overlapping pixels are bit-identical), cleans
the whole image once on the first real call, and hands each box the part of the model change it
owns, so that WSClean's sum of boxes is the model plus the change exactly once and its copied-back
residual is the whole-image clean's. A pixel's change goes to the box whose incoming model is
non-zero there (its boundary's box: then WSClean's float32 sum has one non-zero term, the same
float32 rounding as without sub-images); where the model is zero, to the first box (in peak-pass
order) that contains it.

WSClean 3.6 calls the hook from several threads at once (radler holds only the GIL around a call,
and numpy and gpuclean release it), so the adapter serves one call at a time under a lock.

Iteration counts: every sub-image's meta.iteration_number is set to the run's total (the count
when the major cycle began plus the round's components). WSClean reads only the first
sub-image's count (for -niter and its log) and stops when any sub-image's count reaches -niter, so
both then see the true total.

PSF: each sub-image gets only the centre of the PSF cut to its size; :meth:`ParallelAdapter.full_psf`
puts those crops back (zero beyond the largest sub-image), so the whole-image clean sees what each
sub-image would have. With WSClean 3.1 (-parallel-deconvolution 100 -j 1, 256x256, 3x3 sub-images,
two joined channels) the boxes were found in every major cycle, the model WSClean passed in the
next cycle equalled the previous model plus the change (to WSClean's own one-ulp rounding of stored
models, which it has without sub-images too), -niter stopped the run at its total, and full_psf
equalled the whole-image PSF where known.
"""

import sys
import threading

import numpy as np

from .errors import UsageError

_LEAVE_OUT = "leave out -parallel-deconvolution"
_MIN_VOTES = 3  # exact pixel matches that propose an offset between two boxes
_HASH_BITS = 22
_MAX_SHARED = 8  # border pixels of equal value beyond which the value is not used to match


def _same(a, b):
    """Element-wise exact equality with NaN equal to NaN."""
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _identical(a, b):
    return a.shape == b.shape and bool(np.all(_same(a, b)))


def _planes(a):
    return a.reshape(-1, a.shape[-2], a.shape[-1])


def _border(plane):
    """The crop's border pixels (finite, non-zero) as (x, y, value)."""
    h, w = plane.shape
    ys, xs = np.mgrid[0:h, 0:w]
    edge = (ys == 0) | (ys == h - 1) | (xs == 0) | (xs == w - 1)
    v = plane[edge]
    keep = np.isfinite(v) & (v != 0)
    return xs[edge][keep], ys[edge][keep], v[keep]


def _hash(values):
    """Equal float64 values (other than 0 and NaN, never matched) get equal hashes."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    return ((bits * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _HASH_BITS)).astype(np.intp)


def _candidate_offsets(keys):
    """For each pair of crops (i, j) that share pixels, the offsets P_j - P_i proposed by at least
    _MIN_VOTES of i's border pixels found in j, most votes first: {i: {j: [(dx, dy), ...]}}. Two
    overlapping boxes always share an edge of their overlap, and that edge is border of one of
    them; so every crop's pixels are looked up among all crops' border pixels (one sorted list)."""
    parts = [_border(p) for p in keys]
    bx, by, bv = (np.concatenate([q[k] for q in parts]) for k in range(3))
    bo = np.concatenate([np.full(len(q[2]), i) for i, q in enumerate(parts)])
    order = np.argsort(bv, kind="stable")
    bx, by, bv, bo = bx[order], by[order], bv[order], bo[order]
    _, first, counts = np.unique(bv, return_index=True, return_counts=True)
    distinct = np.repeat(counts <= _MAX_SHARED, counts)  # a value on many borders tells nothing
    bx, by, bv, bo = bx[distinct], by[distinct], bv[distinct], bo[distinct]
    seen = np.zeros(1 << _HASH_BITS, bool)  # a hash of the border values: most pixels skip the search
    seen[_hash(bv)] = True
    rows = []
    for j, plane in enumerate(keys):
        flat = plane.ravel()
        maybe = np.flatnonzero(seen[_hash(flat)])
        lo = np.searchsorted(bv, flat[maybe], "left")  # NaN and 0 are not in bv: no hits
        n = np.searchsorted(bv, flat[maybe], "right") - lo
        hit = np.flatnonzero(n)
        reps = n[hit]
        entry = np.repeat(lo[hit], reps) + np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        yj, xj = np.divmod(np.repeat(maybe[hit], reps), plane.shape[1])
        other = bo[entry] != j
        rows.append(np.stack([bo[entry], np.full(len(entry), j), bx[entry] - xj, by[entry] - yj], axis=1)[other])
    found, votes = np.unique(np.concatenate(rows), axis=0, return_counts=True)
    strong = votes >= _MIN_VOTES
    found, votes = found[strong], votes[strong]
    out = {}
    for (i, j, dx, dy), _ in sorted(zip(found.tolist(), votes.tolist()), key=lambda r: -r[1]):
        out.setdefault(i, {}).setdefault(j, []).append((dx, dy))
        out.setdefault(j, {}).setdefault(i, []).append((-dx, -dy))
    return out


def _overlap_agrees(a, b, dx, dy):
    """Whether crop b placed at (dx, dy) relative to crop a overlaps it and agrees exactly there."""
    ha, wa = a.shape[-2:]
    hb, wb = b.shape[-2:]
    x0, x1 = max(0, dx), min(wa, dx + wb)
    y0, y1 = max(0, dy), min(ha, dy + hb)
    if x0 >= x1 or y0 >= y1:
        return False
    return bool(np.all(_same(a[..., y0:y1, x0:x1], b[..., y0 - dy:y1 - dy, x0 - dx:x1 - dx])))


def locate_boxes(crops, width, height):
    """The (x, y, w, h) of each crop (arrays [..., h, w] cut from one [..., height, width] image,
    together covering it) in that image, found by exact matching of overlapping pixels. Raises
    UsageError when they do not fit together."""
    n = len(crops)
    shapes = [c.shape[-2:] for c in crops]
    if n == 1:
        if shapes[0] != (height, width):
            raise UsageError(f"WSClean's one sub-image is {shapes[0][1]}x{shapes[0][0]}, not the image's "
                             f"{width}x{height} (-size); give the size WSClean images, or {_LEAVE_OUT}.")
        return [(0, 0, width, height)]
    planes = [_planes(c) for c in crops]
    key = int(np.argmax(np.isfinite(planes[0]).sum(axis=(1, 2))))  # flagged channels are all NaN
    candidates = _candidate_offsets([p[key] for p in planes])
    position = {0: (0, 0)}
    todo = [0]
    while todo:  # breadth-first over verified pairwise offsets
        i = todo.pop(0)
        for j, offsets in candidates.get(i, {}).items():
            off = next((d for d in offsets if _overlap_agrees(crops[i], crops[j], *d)), None)
            if off is None:
                continue
            at = (position[i][0] + off[0], position[i][1] + off[1])
            if j not in position:
                position[j] = at
                todo.append(j)
            elif position[j] != at:
                raise UsageError(f"WSClean's sub-images {i + 1} and {j + 1} match at two different offsets; the "
                                 f"image is too uniform to place them: {_LEAVE_OUT}.")
    if len(position) != n:
        raise UsageError(f"{n - len(position)} of WSClean's {n} sub-images overlap no other by enough exactly equal "
                         f"pixels to be placed; {_LEAVE_OUT}.")
    x0 = min(p[0] for p in position.values())
    y0 = min(p[1] for p in position.values())
    boxes = [(position[i][0] - x0, position[i][1] - y0, shapes[i][1], shapes[i][0]) for i in range(n)]
    right = max(x + w for x, _, w, _ in boxes)
    bottom = max(y + h for _, y, _, h in boxes)
    if (right, bottom) != (width, height):
        raise UsageError(f"WSClean's sub-images span {right}x{bottom} pixels, not the image's {width}x{height} "
                         f"(-size); give the size WSClean deconvolves, or {_LEAVE_OUT}.")
    return boxes


def assemble(crops, boxes, width, height):
    """The full image from its crops; raises UsageError unless they cover it and agree where they
    overlap."""
    lead = crops[0].shape[:-2]
    full = np.full(lead + (height, width), np.nan)
    covered = np.zeros((height, width), bool)
    for c, (x, y, w, h) in zip(crops, boxes):
        if c.shape[:-2] != lead:
            raise UsageError(f"WSClean's sub-images differ in channels or polarizations ({lead} and "
                             f"{c.shape[:-2]}); {_LEAVE_OUT}.")
        full[..., y:y + h, x:x + w] = c
        covered[y:y + h, x:x + w] = True
    if not covered.all():
        raise UsageError(f"WSClean's sub-images leave {int((~covered).sum())} pixels of the image uncovered; "
                         f"{_LEAVE_OUT}.")
    for k, (c, (x, y, w, h)) in enumerate(zip(crops, boxes)):
        if not _identical(full[..., y:y + h, x:x + w], c):
            raise UsageError(f"WSClean's sub-image {k + 1} disagrees with its neighbours where they overlap; "
                             f"{_LEAVE_OUT}.")
    return full


def owners(models, boxes, width, height):
    """Which box each pixel's model change goes to: the box whose (boundary-masked) model is
    non-zero there, else the first box containing it."""
    owner = np.full((height, width), -1, np.int64)
    for k, (m, (x, y, w, h)) in enumerate(zip(models, boxes)):
        nonzero = np.any(_planes(m) != 0, axis=0)  # NaN counts as non-zero
        region = owner[y:y + h, x:x + w]
        clash = nonzero & (region >= 0)
        if clash.any():
            raise UsageError("WSClean passed a model that is non-zero in two sub-images at one pixel (it is expected "
                             f"to cut the model to each sub-image's boundary); {_LEAVE_OUT}.")
        region[nonzero] = k
    for k, (x, y, w, h) in enumerate(boxes):
        region = owner[y:y + h, x:x + w]
        region[region < 0] = k
    return owner


def _f64(a):
    return np.ascontiguousarray(a, dtype=np.float64)


class ParallelAdapter:
    """Serves WSClean's per-sub-image calls (the -python-deconvolution contract) from one
    whole-image clean per major cycle.

    width, height: the image WSClean deconvolves (its -size).
    clean_full(residual, floor, mgain, budget) -> (model_change, cleaned_residual, stats): cleans the
        whole residual [nchan, npol, height, width] (float64) down to floor (and mgain's major-cycle
        stop, which it applies itself) with at most budget components; returns the model change and
        the cleaned residual (same shape) and a dict with at least 'components' (int) and 'more'
        (bool: another major cycle is due).
    peak(residual) -> float: the level a sub-image's residual [nchan, npol, h, w] reports to WSClean
        (as gpuclean's whole-image peak; WSClean takes the maximum over sub-images).
    divergence_limit: WSClean's -divergence-limit (radler's default 4; 0 is off): a sub-image whose
        level rose beyond it is dropped by WSClean, which this warns about.
    """

    def __init__(self, width, height, clean_full, peak, divergence_limit=4.0):
        self.width, self.height = int(width), int(height)
        self._clean_full, self._peak = clean_full, peak
        self.divergence_limit = float(divergence_limit)
        self._crops, self._models, self._levels, self._counts, self._psfs = [], [], [], [], []
        self._round = None
        self.boxes = None  # (x, y, w, h) of each sub-image this major cycle, in peak-pass order
        self.last_stats = None  # clean_full's stats of the latest round
        self._lock = threading.Lock()

    def deconvolve(self, residual, model, psf, meta):
        """One WSClean call: returns the dict WSClean expects. Safe to call from several threads."""
        with self._lock:
            return self._serve(residual, model, psf, meta)

    def _serve(self, residual, model, psf, meta):
        residual = np.asarray(residual)
        model = np.asarray(model)
        if residual.ndim != 4 or model.shape != residual.shape:
            raise UsageError(f"WSClean passed a residual of shape {residual.shape} and a model of shape {model.shape}; "
                             "gpuclean needs [channels, polarizations, height, width] for both (WSClean 3.x).")
        if meta.max_iterations == 0:
            return self._peak_pass(residual, model, psf, meta)
        if self._round is None:
            if not self._crops:
                return self._whole_image(residual, model, meta)
            self._start_round(meta)
        return self._real_pass(residual, model, meta)

    def _peak_pass(self, residual, model, psf, meta):
        if self._round is not None:
            left = len(self.boxes) - len(self._round["served"])
            if left:
                raise UsageError(f"WSClean began a new major cycle with {left} sub-images of the last one not yet "
                                 f"cleaned; {_LEAVE_OUT}.")
            self._crops, self._models, self._levels, self._counts, self._psfs = [], [], [], [], []
            self._round = None
        level = float(self._peak(residual))
        self._crops.append(residual.astype(np.float64, copy=True))
        self._models.append(model.astype(np.float64, copy=True))
        self._levels.append(level)
        self._counts.append(int(meta.iteration_number))
        self._psfs.append(np.array(psf, dtype=np.float64))
        return {"residual": _f64(residual), "model": _f64(model), "level": level, "continue": False}

    def full_psf(self):
        """The PSFs [nchan, height, width] as far as this major cycle's peak pass shows them: WSClean
        hands each sub-image the centre of each channel's PSF cut to the sub-image's size (aocommon's
        Image::Trim/Resize: the crop starts at ((W - w) // 2, (H - h) // 2)); this puts every crop back
        there and leaves zero where no sub-image reaches. Raises UsageError before a peak pass or when
        the crops disagree."""
        if not self._psfs:
            raise UsageError("no sub-image PSF yet: WSClean's peak pass has not run; " + _LEAVE_OUT + ".")
        nchan = self._psfs[0].shape[0]
        full = np.zeros((nchan, self.height, self.width))
        known = np.zeros((self.height, self.width), bool)
        for p in self._psfs:
            if p.ndim != 3 or p.shape[0] != nchan or p.shape[1] > self.height or p.shape[2] > self.width:
                raise UsageError(f"WSClean passed a sub-image PSF of shape {p.shape} for a {self.width}x{self.height} "
                                 f"image; {_LEAVE_OUT}.")
            h, w = p.shape[1:]
            y, x = (self.height - h) // 2, (self.width - w) // 2
            part, seen = full[:, y:y + h, x:x + w], known[y:y + h, x:x + w]
            if not np.all(_same(part[:, seen], p[:, seen])):
                raise UsageError(f"WSClean's sub-image PSFs are not crops of one PSF; {_LEAVE_OUT}.")
            part[...] = p
            seen[...] = True
        return full

    def _whole_image(self, residual, model, meta):
        """One call for the whole image: WSClean without sub-images (or a 1x1 grid, which it runs so)."""
        if residual.shape[-2:] != (self.height, self.width):
            raise UsageError(f"WSClean passed a {residual.shape[-1]}x{residual.shape[-2]} residual before any "
                             f"sub-image peak pass, not the image's {self.width}x{self.height}; {_LEAVE_OUT}.")
        floor = max(meta.major_iter_threshold, meta.final_threshold)
        budget = max(0, int(meta.max_iterations) - int(meta.iteration_number))
        change, cleaned, stats = self._clean_full(_f64(residual), floor, meta.mgain, budget)
        self.last_stats = stats
        meta.iteration_number = int(meta.iteration_number) + int(stats["components"])
        level = self._checked_level(cleaned, None)
        return {"residual": _f64(cleaned), "model": _f64(model + change), "level": level,
                "continue": bool(stats["more"])}

    def _start_round(self, meta):
        """First real call of a major cycle: place the boxes and clean the whole image once."""
        self.boxes = locate_boxes(self._crops, self.width, self.height)
        full = assemble(self._crops, self.boxes, self.width, self.height)
        owner = owners(self._models, self.boxes, self.width, self.height)
        start = max(self._counts + [int(meta.iteration_number)])
        floor = max(meta.major_iter_threshold, meta.final_threshold)
        budget = max(0, int(meta.max_iterations) - start)
        change, cleaned, stats = self._clean_full(full, floor, meta.mgain, budget)
        change, cleaned = _f64(change), _f64(cleaned)
        if change.shape != full.shape or cleaned.shape != full.shape:
            raise ValueError(f"clean_full returned shapes {change.shape} and {cleaned.shape}, not {full.shape}")
        self.last_stats = stats
        self._round = {"change": change, "cleaned": cleaned, "owner": owner, "stats": stats, "served": set(),
                       "total": start + int(stats["components"]),
                       "cleaned32": cleaned.astype(np.float32).astype(np.float64)}

    def _identify(self, residual, model):
        """Which box this real call is: same shape, the same incoming model, and a residual whose every
        pixel is either the peak pass's or the cleaned one (earlier calls' copy-backs), with the most
        pixels still the peak pass's."""
        r = self._round
        fits = []
        for k, (x, y, w, h) in enumerate(self.boxes):
            if k in r["served"] or residual.shape != self._crops[k].shape:
                continue
            same = _same(residual, self._crops[k])
            cleaned32 = r["cleaned32"][..., y:y + h, x:x + w]
            if np.all(same | _same(residual, cleaned32)) and _identical(model, self._models[k]):
                fits.append((int(np.count_nonzero(same)), k))
        fits.sort(reverse=True)
        if not fits:
            raise UsageError(f"a {residual.shape[-1]}x{residual.shape[-2]} sub-image call matches none of this major "
                             f"cycle's {len(self.boxes)} sub-images still due; {_LEAVE_OUT}.")
        if len(fits) > 1 and fits[1][0] == fits[0][0]:
            raise UsageError(f"a sub-image call matches sub-images {fits[0][1] + 1} and {fits[1][1] + 1} equally well; "
                             f"{_LEAVE_OUT}.")
        best = fits[0][1]
        return best

    def _real_pass(self, residual, model, meta):
        r = self._round
        k = self._identify(residual, model)
        r["served"].add(k)
        x, y, w, h = self.boxes[k]
        mine = r["owner"][y:y + h, x:x + w] == k
        out_model = model + np.where(mine, r["change"][..., y:y + h, x:x + w], 0.0)
        out_residual = r["cleaned"][..., y:y + h, x:x + w]
        meta.iteration_number = r["total"]
        level = self._checked_level(out_residual, k)
        return {"residual": _f64(out_residual), "model": _f64(out_model), "level": level,
                "continue": bool(r["stats"]["more"])}

    def _checked_level(self, residual, k):
        level = float(self._peak(residual))
        if not np.isfinite(level):
            raise UsageError(f"the cleaned residual's peak is {level}: the clean diverged; lower -mgain or the gain.")
        if k is not None and self.divergence_limit > 0:
            start = abs(self._levels[k])
            if abs(level) > start * self.divergence_limit:
                x, y, w, h = self.boxes[k]
                print(f"gpuclean: warning: the peak of WSClean's sub-image at ({x},{y}) {w}x{h} rose from {start:.4g} "
                      f"to {abs(level):.4g} Jy, beyond its divergence limit ({self.divergence_limit:g}x): WSClean drops "
                      "that sub-image's share of this major cycle's model change", file=sys.stderr, flush=True)
        return level
