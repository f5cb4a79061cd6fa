#!/usr/bin/env python3
"""WSClean's own deconvolution against gpuclean's hook inside the same WSClean major cycles, on a
simulated MeerKAT-like MeasurementSet with a known sky: time per major cycle and in total, final
residual RMS and model flux, and each source's recovered flux against the simulation's truth.

    scripts/wsclean_bench.py --work /tmp/wsb [--size 2048] [--scale 1.5] [--algorithms clark,multiscale]

Makes WORK/sim.ms with data/simulate_ms.py unless it exists (--sim passes options to it), then runs
for each algorithm WSClean's own deconvolution and WSClean with gpuclean's hook
(GPUCLEAN_OPTIONS="--multiscale" for multiscale; GPUCLEAN_EXTRA adds options to the hook's run),
with the same WSClean settings. The hook runs twice: the first run on a fresh machine also fills
CUDA's caches (cuFFT's plans for these sizes); the tables show the second, and a line the first. WSClean's output is read through a pseudo-terminal, so that each
line is stamped when WSClean prints it: a major cycle's deconvolution time runs from WSClean's
"== Deconvolving (N) ==" to the next line that starts another stage ("== ..."). For the hook, that
includes WSClean's copies into and out of Python; the hook's own time (its printed line) is shown
beside it. The totals are WSClean's own "deconvolution:" figure.

Recovered flux: the model's sum within twice a source's major FWHM (at least 3 pixels) of its true
position, against the truth's flux averaged over the MS's channels with equal weights (the sky's
spectral indices make the multi-frequency image's flux differ from the band centre's).
Needs numpy, python-casacore (for the simulation) and gpuclean's Python package (to read FITS).
"""

import argparse
import os
import pathlib
import pty
import re
import subprocess
import sys
import time

import numpy as np

SOURCE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SOURCE / "data"))
from msim.sky import read_truth_csv  # noqa: E402

import gpuclean.fits  # noqa: E402
import gpuclean.wsclean  # noqa: E402

STAGE = re.compile(r"^\s*== (.*) ==\s*$")
DECONVOLVING = re.compile(r"^\s*== Deconvolving \((\d+)\) ==")
HOOK = re.compile(r"^gpuclean: major cycle (\d+): .*?(\d+) components in .*?, ([0-9.]+) s")
SUMMARY = re.compile(r"deconvolution: (\d+):(\d+):([0-9.]+)")


def run_stamped(args, env, log):
    """Runs `args` with its output on a pseudo-terminal (line-buffered); returns the exit code and
    the lines with the time each arrived, in seconds from the start."""
    master, slave = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    lines, pending = [], b""
    with open(log, "w") as out:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            now = time.perf_counter() - start
            if not chunk:
                break
            pending += chunk
            *done, pending = pending.split(b"\n")
            for raw in done:
                text = raw.decode(errors="replace").rstrip("\r")
                lines.append((now, text))
                out.write(f"{now:10.3f} {text}\n")
    os.close(master)
    return proc.wait(), lines


def cycle_times(lines):
    """Per major cycle: (WSClean's deconvolution stage in s, the hook's own s or None, components or None)."""
    cycles, current, hook = [], None, {}
    for t, text in lines:
        if m := DECONVOLVING.match(text):
            current = t
            continue
        if m := HOOK.match(text):
            hook[int(m.group(1))] = (float(m.group(3)), int(m.group(2)))
        if current is not None and STAGE.match(text):
            cycles.append(t - current)
            current = None
    if current is not None:
        cycles.append(lines[-1][0] - current)
    return [(c, *hook.get(i + 1, (None, None))) for i, c in enumerate(cycles)]


def wsclean_total(lines):
    for _, text in reversed(lines):
        if m := SUMMARY.search(text):
            return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return float("nan")


def image(path):
    return np.asarray(gpuclean.fits.read(path).data, dtype=np.float64).squeeze()


def recovered(model, source, size, scale):
    """The model's flux within twice the source's major FWHM (at least 3 pixels) of its position;
    x runs against RA (l east), y with m, the phase centre at pixel size / 2."""
    x = size // 2 - source.l_arcsec / scale
    y = size // 2 + source.m_arcsec / scale
    radius = max(3.0, 2 * source.fwhm_major_arcsec / scale)
    yy, xx = np.mgrid[:size, :size]
    return float(model[(xx - x) ** 2 + (yy - y) ** 2 <= radius ** 2].sum())


def band_flux(source, freqs, ref_hz):
    return float(np.mean(source.flux_jy * (freqs / ref_hz) ** source.spectral_index))


def ms_freqs(ms):
    from casacore.tables import table
    with table(str(ms / "SPECTRAL_WINDOW"), ack=False) as spw:
        return np.asarray(spw.getcol("CHAN_FREQ")[0])


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True, type=pathlib.Path, help="folder for the MS and the images")
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--scale", type=float, default=1.5, help="pixel size [arcsec] (1.5)")
    p.add_argument("--algorithms", default="clark,multiscale")
    p.add_argument("--wsclean-options", default="-niter 1000000 -mgain 0.8 -auto-threshold 3 -weight briggs 0",
                   help="the WSClean settings of both runs (besides -size, -scale, -name)")
    p.add_argument("--sim", default="--hours 4 --integration 120 --radius 1200",
                   help="options of data/simulate_ms.py when WORK/sim.ms does not exist")
    p.add_argument("--freq", type=float, default=1.284e9, help="the simulation's reference frequency [Hz]")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    ms = args.work / "sim.ms"
    if not ms.exists():
        sim = [sys.executable, str(SOURCE / "data" / "simulate_ms.py"), "--out", str(ms)] + args.sim.split()
        print(subprocess.run(sim, check=True, capture_output=True, text=True).stdout.strip(), flush=True)
    truth = read_truth_csv(args.work / "sim-truth.csv")
    freqs = ms_freqs(ms)
    hook_file = gpuclean.wsclean.hook_path()
    common = ["-size", str(args.size), str(args.size), "-scale", f"{args.scale}asec"] + args.wsclean_options.split()
    print(f"WSClean {' '.join(common)}; {len(truth)} true sources; the hook: {hook_file}")
    results = {}
    for algorithm in args.algorithms.split(","):
        # The hook twice: the first run on a fresh machine also fills CUDA's caches (cuFFT's plans
        # for these sizes), which later runs find; the tables show the second, as a user sees it.
        for engine, name in (("own", f"{algorithm}-own"), ("hook", f"{algorithm}-hook-first"),
                             ("hook", f"{algorithm}-hook")):
            env = dict(os.environ)
            cmd = ["wsclean", "-name", str(args.work / name)] + common
            if engine == "own":
                cmd += ["-multiscale"] if algorithm == "multiscale" else []
            else:
                options = ["--multiscale"] if algorithm == "multiscale" else []
                env["GPUCLEAN_OPTIONS"] = " ".join(options + os.environ.get("GPUCLEAN_EXTRA", "").split())
                cmd += ["-python-deconvolution", hook_file]
            start = time.perf_counter()
            code, lines = run_stamped(cmd + [str(ms)], env, args.work / f"{name}.log")
            wall = time.perf_counter() - start
            if code != 0:
                print(f"{name}: WSClean exited {code}; see {args.work / (name + '.log')}")
                print("\n".join(text for _, text in lines[-15:]))
                sys.exit(1)
            residual, model = image(args.work / f"{name}-residual.fits"), image(args.work / f"{name}-model.fits")
            results[name] = dict(cycles=cycle_times(lines), total=wsclean_total(lines), wall=wall,
                                 rms=float(np.sqrt(np.mean(residual ** 2))), flux=float(model.sum()),
                                 sources=[recovered(model, s, args.size, args.scale) for s in truth])
            r = results[name]
            print(f"{name}: {len(r['cycles'])} major cycles, deconvolution {r['total']:.3f} s of {wall:.1f} s; "
                  f"residual rms {r['rms'] * 1e6:.2f} µJy, model flux {r['flux']:.5f} Jy", flush=True)
    report(args, results, truth, freqs)


def report(args, results, truth, freqs):
    for algorithm in args.algorithms.split(","):
        own, hook, first = results[f"{algorithm}-own"], results[f"{algorithm}-hook"], results[f"{algorithm}-hook-first"]
        print(f"\n{algorithm}: per major cycle, WSClean's deconvolution stage [s]")
        print("| cycle | WSClean's own | with the hook | the hook's own time | components |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for i in range(max(len(own["cycles"]), len(hook["cycles"]))):
            o = f"{own['cycles'][i][0]:.3f}" if i < len(own["cycles"]) else ""
            h, inner, comps = hook["cycles"][i] if i < len(hook["cycles"]) else ("", None, None)
            print(f"| {i + 1} | {o} | {h if h == '' else f'{h:.3f}'} | {'' if inner is None else f'{inner:.3f}'} | "
                  f"{'' if comps is None else comps} |")
        print(f"| total (WSClean's summary) | {own['total']:.3f} | {hook['total']:.3f} | "
              f"{sum(c[1] or 0 for c in hook['cycles']):.3f} | ratio {own['total'] / hook['total']:.1f}x |")
        print(f"the hook's first run on this machine (CUDA's caches empty): {first['total']:.3f} s in WSClean's "
              f"summary, its first major cycle {first['cycles'][0][0]:.3f} s (the hook's own {first['cycles'][0][1]:.3f} s); "
              f"WSClean's wall time: own {own['wall']:.1f} s, with the hook {hook['wall']:.1f} s")
        print(f"residual rms: own {own['rms'] * 1e6:.3f} µJy, hook {hook['rms'] * 1e6:.3f} µJy "
              f"({100 * (hook['rms'] / own['rms'] - 1):+.2f}%); model flux: own {own['flux']:.5f}, hook "
              f"{hook['flux']:.5f} Jy ({100 * (hook['flux'] / own['flux'] - 1):+.2f}%)")
        print("| source | kind | FWHM [\"] | truth [Jy] | WSClean's own | hook | hook / own |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for i, s in enumerate(truth):
            t = band_flux(s, freqs, args.freq)
            o, h = own["sources"][i], hook["sources"][i]
            print(f"| {i} | {s.kind} | {s.fwhm_major_arcsec:.1f} | {t:.4f} | {o:.4f} ({100 * o / t:.1f}%) | "
                  f"{h:.4f} ({100 * h / t:.1f}%) | {h / o if o else float('nan'):.3f} |")


if __name__ == "__main__":
    main()
