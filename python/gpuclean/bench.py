"""``python -m gpuclean.bench``: gpuclean.select.top_k against torch.topk and CuPy on the same
tensors in the same process.

Each case runs on one float32 array of n uniform values (the same data for every library), with
order "largest" (torch.topk's), unsorted output. Times are CUDA-event times on the library's
current stream: warm-up runs first, then the median of the repeats. GB/s counts one read of the
input (4n bytes); "% peak" compares that with the H100 SXM's 3.08 TB/s (change it with --peak).
gpuclean's call includes its return of the count to the host (it synchronizes the stream);
torch.topk does not synchronize. Each library's result is checked against gpuclean's as a set
of values.
"""

import argparse
import statistics
import sys

import numpy as np

from . import has_gpu, select


def _libraries():
    libs = {}
    try:
        import torch
        if torch.cuda.is_available():
            libs["torch"] = torch
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            libs["cupy"] = cupy
    except Exception:  # CuPy raises its own errors when there is no driver
        pass
    return libs


def _time(run, event, elapsed, synchronize, warmup, repeats):
    """Median milliseconds of run() between two CUDA events on the current stream."""
    for _ in range(warmup):
        run()
    synchronize()
    times = []
    for _ in range(repeats):
        start, stop = event(), event()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(elapsed(start, stop))
    return statistics.median(times)


def _cases_torch(torch, x, k, backend, warmup, repeats):
    event = lambda: torch.cuda.Event(enable_timing=True)
    elapsed = lambda start, stop: start.elapsed_time(stop)
    sync = torch.cuda.synchronize
    ours = select.top_k(x, k, order="largest", backend=backend)
    ref = torch.topk(x, k, largest=True, sorted=False)
    same = torch.equal(torch.sort(ours[0]).values, torch.sort(ref.values).values)
    yield (f"gpuclean[{backend}] (torch)",
           _time(lambda: select.top_k(x, k, order="largest", backend=backend), event, elapsed, sync, warmup, repeats), True)
    yield "torch.topk", _time(lambda: torch.topk(x, k, largest=True, sorted=False), event, elapsed, sync, warmup, repeats), same


def _cases_cupy(cupy, x, k, backend, warmup, repeats):
    event = cupy.cuda.Event
    elapsed = cupy.cuda.get_elapsed_time
    sync = cupy.cuda.runtime.deviceSynchronize
    ours = select.top_k(x, k, order="largest", backend=backend)
    # CuPy has no top-k: argpartition of the negated values, then a gather.
    def cupy_topk():
        idx = cupy.argpartition(-x, k - 1)[:k]
        return x[idx], idx
    same = bool(cupy.array_equal(cupy.sort(ours[0]), cupy.sort(cupy_topk()[0])))
    yield (f"gpuclean[{backend}] (cupy)",
           _time(lambda: select.top_k(x, k, order="largest", backend=backend), event, elapsed, sync, warmup, repeats), True)
    yield "cupy.argpartition", _time(cupy_topk, event, elapsed, sync, warmup, repeats), same


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gpuclean.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="20,22,24,26,28", help="log2 of the sizes (default 20,22,24,26,28)")
    p.add_argument("--ks", default="1,1024,65536", help="k values (default 1,1024,65536)")
    p.add_argument("--backend", default="auto", help="gpuclean backend (default auto)")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--peak", type=float, default=3.08, help="memory bandwidth to compare with, TB/s")
    p.add_argument("--seed", type=int, default=2026)
    a = p.parse_args(argv)
    if not has_gpu():
        print("gpuclean.bench: no usable GPU (or a CPU-only build); nothing to time")
        return 0
    libs = _libraries()
    if not libs:
        print("gpuclean.bench: neither PyTorch with CUDA nor CuPy is installed; nothing to compare with")
        return 0
    print(f"{'n':>11} {'k':>6}  {'implementation':<28} {'median ms':>10} {'GB/s':>8} {'% peak':>7}  same set")
    ok = True
    for log2n in (int(s) for s in a.sizes.split(",")):
        n = 1 << log2n
        host = np.random.default_rng(a.seed).random(n, dtype=np.float32)
        arrays = {}
        if "torch" in libs:
            arrays["torch"] = libs["torch"].from_numpy(host).cuda()
        if "cupy" in libs:
            arrays["cupy"] = libs["cupy"].asarray(host)
        for k in (int(s) for s in a.ks.split(",")):
            if k > n:
                continue
            for name, x in arrays.items():
                cases = _cases_torch if name == "torch" else _cases_cupy
                for label, ms, same in cases(libs[name], x, k, a.backend, a.warmup, a.repeats):
                    gbs = 4.0 * n / (ms * 1e-3) / 1e9
                    ok &= bool(same)
                    print(f"{n:>11} {k:>6}  {label:<28} {ms:>10.4f} {gbs:>8.1f} {100 * gbs / (a.peak * 1e3):>6.1f}%"
                          f"  {'yes' if same else 'NO'}", flush=True)
        del arrays
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
