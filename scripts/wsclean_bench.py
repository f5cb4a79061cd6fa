#!/usr/bin/env python3
"""WSClean's own deconvolution against gpuclean's hook inside the same WSClean major cycles, on a
simulated MeerKAT-like MeasurementSet with a known sky: time per major cycle and in total, final
residual RMS and model flux, and each source's recovered flux against the simulation's truth.

    scripts/wsclean_bench.py --work /tmp/wsb [--size 2048] [--scale 1.5] [--algorithms clark,multiscale]
    scripts/wsclean_bench.py --work /tmp/wss --preset survey [--size 4096] [--threads 16] [--nmiter 6]

Makes WORK/sim.ms with data/simulate_ms.py unless it exists (--sim passes options to it), then runs
WSClean's own deconvolution and WSClean with gpuclean's hook (-python-deconvolution) with the same
WSClean settings.
* The default preset runs each of --algorithms (GPUCLEAN_OPTIONS="--multiscale" for the hook's
  multiscale run; GPUCLEAN_EXTRA adds options to it) on the 11-source sky.
* --preset survey runs oxkat-like settings (8 channels joined, a 4-term spectral fit, multiscale,
  auto-mask, local RMS; see SURVEY_OPTIONS) at 4096^2 on a 300-source sky (SURVEY_SIM): both runs
  get the same WSClean command line, the hook's adds only -python-deconvolution and runs without
  GPUCLEAN_OPTIONS, so the hook takes every setting from WSClean's own options.
The hook runs twice by default (once in the survey preset; --hook-runs): the first run on a fresh
machine also fills CUDA's caches (cuFFT's plans for these sizes); the tables show the last, and a
line the first. WSClean's output is read through a pseudo-terminal, so that each line is stamped
when WSClean prints it: a major cycle's deconvolution time runs from WSClean's
"== Deconvolving (N) ==" to the next line that starts another stage ("== ..."). For the hook, that
includes WSClean's copies into and out of Python and its noise estimate (RMS map); the hook's own
time (its printed line) and the difference are shown beside it. The totals are WSClean's own
"deconvolution:" figure. Each WSClean run is stopped after --timeout seconds and reported as
timed out, with the major cycle it had reached (--total-timeout bounds the whole script).

Recovered flux: the model's sum within twice a source's major FWHM (at least 3 pixels) of its true
position, against the truth's flux averaged over the MS's channels with equal weights (the sky's
spectral indices make the multi-frequency image's flux differ from the reference frequency's).
With several output channels the MFS images (NAME-MFS-residual.fits, NAME-MFS-model.fits) are read.
Needs numpy, python-casacore (for the simulation) and gpuclean's Python package (to read FITS).
"""

import argparse
import csv
import os
import pathlib
import pty
import re
import shutil
import select
import signal
import subprocess
import sys
import time

import numpy as np

SOURCE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SOURCE / "data"))
from msim.sky import read_truth_csv  # noqa: E402

import gpuclean.fits  # noqa: E402
import gpuclean.wsclean  # noqa: E402
from gpuclean.wsclean_command import wsclean_version  # noqa: E402

STAGE = re.compile(r"^\s*== (.*) ==\s*$")
DECONVOLVING = re.compile(r"^\s*== Deconvolving \((\d+)\) ==")
HOOK = re.compile(r"^gpuclean: major cycle (\d+): .*?(\d+) components in .*?, ([0-9.]+) s")
SUMMARY = re.compile(r"deconvolution: (\d+):(\d+):([0-9.]+)")

DEFAULT_OPTIONS = "-niter 1000000 -mgain 0.8 -auto-threshold 3 -weight briggs 0"
DEFAULT_SIM = "--hours 4 --integration 120 --radius 1200"
# oxkat's imaging settings for a MeerKAT L-band field, at the band of the simulation below.
SURVEY_OPTIONS = ("-channels-out 8 -join-channels -fit-spectral-pol 4 -multiscale -auto-mask 5 -local-rms "
                  "-auto-threshold 3 -mgain 0.8 -niter 1000000 -weight briggs 0")
# 145 152 rows x 8 channels keep WSClean's gridding short; sources within 2700" stay inside a
# 4096^2 image of 1.5" pixels; --noise 0.05 gives an image noise of tens of uJy, below a fifth of
# the faintest source (0.5 mJy).
SURVEY_SIM = ("--sky survey --sources 300 --gaussians 30 --radius 2700 --channels 8 --freq 1.44e9 "
              "--bandwidth 160e6 --hours 6 --integration 300 --noise 0.05")


def run_stamped(args, env, log, timeout):
    """Runs `args` with its output on a pseudo-terminal (line-buffered), stopping it after
    `timeout` seconds; returns the exit code (None if stopped), and the lines with the time each
    arrived, in seconds from the start."""
    master, slave = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=slave, stderr=slave, env=env, close_fds=True, start_new_session=True)
    os.close(slave)
    lines, pending, stopped = [], b"", False
    with open(log, "w") as out:
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
                # WSClean's threads and the hook's interpreter are one process group (its own session).
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                stopped = True
                break
            if not select.select([master], [], [], min(left, 1.0))[0]:
                continue
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
        if stopped:
            out.write(f"{time.perf_counter() - start:10.3f} wsclean_bench: stopped after --timeout {timeout:g} s\n")
    os.close(master)
    return (None if stopped else proc.wait()), lines


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


def progress(lines):
    """How far a stopped run got: the major cycles it entered and its last stage."""
    entered = [int(m.group(1)) for _, text in lines if (m := DECONVOLVING.match(text))]
    stages = [m.group(1) for _, text in lines if (m := STAGE.match(text))]
    where = f"in major cycle {entered[-1]}" if entered else "before the first major cycle"
    return f"{where}, last stage '{stages[-1] if stages else 'none'}'"


def wsclean_total(lines):
    for _, text in reversed(lines):
        if m := SUMMARY.search(text):
            return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return float("nan")


def image(path):
    return np.asarray(gpuclean.fits.read(path).data, dtype=np.float64).squeeze()


def pixel(source, size, scale):
    """x runs against RA (l east), y with m, the phase centre at pixel size / 2."""
    return size // 2 - source.l_arcsec / scale, size // 2 + source.m_arcsec / scale


def recovered(model, source, size, scale):
    """The model's flux within twice the source's major FWHM (at least 3 pixels) of its position."""
    x, y = pixel(source, size, scale)
    radius = max(3.0, 2 * source.fwhm_major_arcsec / scale)
    y0, y1 = max(0, int(y - radius) - 1), min(size, int(y + radius) + 2)
    x0, x1 = max(0, int(x - radius) - 1), min(size, int(x + radius) + 2)
    if y0 >= y1 or x0 >= x1:
        return 0.0  # outside the image
    yy, xx = np.mgrid[y0:y1, x0:x1]
    return float(model[y0:y1, x0:x1][(xx - x) ** 2 + (yy - y) ** 2 <= radius ** 2].sum())


def band_flux(source, freqs, ref_hz):
    return float(np.mean(source.flux_jy * (freqs / ref_hz) ** source.spectral_index))


def truth_ref_hz(path):
    with open(path, newline="") as f:
        return float(next(csv.DictReader(f))["ref_freq_hz"])


def ms_freqs(ms):
    from casacore.tables import table
    with table(str(ms / "SPECTRAL_WINDOW"), ack=False) as spw:
        return np.asarray(spw.getcol("CHAN_FREQ")[0])


def option_value(tokens, name, count=1):
    """The values after WSClean option `name` in `tokens` (its last use), or None."""
    at = [i for i, t in enumerate(tokens) if t == name]
    return tokens[at[-1] + 1:at[-1] + 1 + count] if at else None


def setting_text(args, common):
    """The run's settings for the table headings."""
    weight = option_value(common, "-weight", 2)
    weighting = ("-weight " + " ".join(weight if weight[0] == "briggs" else weight[:1])) if weight else "uniform (WSClean's default)"
    channels = option_value(common, "-channels-out")
    joined = f", {channels[0]} channels{' joined' if '-join-channels' in common else ''} (MFS images)" if channels else ""
    nmiter = option_value(common, "-nmiter")
    cap = f", capped at -nmiter {nmiter[0]} major cycles (both runs)" if nmiter else ""
    threads = option_value(common, "-j")
    return (f"{args.size}x{args.size} pixels of {args.scale:g}\", {weighting}{joined}, WSClean -j "
            f"{threads[0] if threads else 'all cores'}{cap}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True, type=pathlib.Path, help="folder for the MS and the images")
    p.add_argument("--preset", choices=("default", "survey"), default="default",
                   help="default: --algorithms on the 11-source sky; survey: oxkat-like settings, 4096^2, 300 sources")
    p.add_argument("--size", type=int, help="image size in pixels (2048; survey 4096)")
    p.add_argument("--scale", type=float, default=1.5, help="pixel size [arcsec] (1.5)")
    p.add_argument("--algorithms", default="clark,multiscale", help="default preset: clark, multiscale or both")
    p.add_argument("--wsclean-options",
                   help=f"the WSClean settings of both runs besides -size, -scale, -name, -j, -nmiter "
                        f"(default: '{DEFAULT_OPTIONS}'; survey: '{SURVEY_OPTIONS}')")
    p.add_argument("--sim", help=f"options of data/simulate_ms.py when WORK/sim.ms does not exist "
                                 f"(default: '{DEFAULT_SIM}'; survey: '{SURVEY_SIM}')")
    p.add_argument("--freq", type=float, help="the truth's reference frequency [Hz] (default: the truth list's)")
    p.add_argument("--threads", type=int, help="WSClean's -j, the same for both runs (default: WSClean's, all cores)")
    p.add_argument("--nmiter", type=int, help="WSClean's -nmiter, the same for both runs (a cap on major cycles)")
    p.add_argument("--timeout", type=float, default=540.0,
                   help="seconds each WSClean run may take before it is stopped and reported as timed out (540)")
    p.add_argument("--total-timeout", type=float,
                   help="seconds for the whole script, simulation included: a run gets at most what is left of it "
                        "(less 10 s for the report), so that a command limit holds (none)")
    p.add_argument("--hook-runs", type=int, choices=(1, 2), help="runs with the hook; the tables show the last (2; survey 1)")
    p.add_argument("--show-sources", type=int, help="rows of the per-source table, brightest first (all; survey 30); "
                                                    "every source goes to WORK/NAME-sources.csv")
    args = p.parse_args(argv)
    survey = args.preset == "survey"
    args.size = args.size or (4096 if survey else 2048)
    args.wsclean_options = args.wsclean_options if args.wsclean_options is not None else (
        SURVEY_OPTIONS if survey else DEFAULT_OPTIONS)
    args.sim = args.sim if args.sim is not None else (SURVEY_SIM if survey else DEFAULT_SIM)
    args.hook_runs = args.hook_runs or (1 if survey else 2)
    if args.show_sources is None:
        args.show_sources = 30 if survey else 1 << 30
    for name in ("size", "threads", "nmiter", "timeout", "total_timeout"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    if survey and args.algorithms != p.get_default("algorithms"):
        p.error("--algorithms belongs to the default preset; the survey preset's algorithm is in its "
                "WSClean options (-multiscale)")
    return args


def runs(args):
    """(label, [(name, engine, extra WSClean options, environment changes)]) per table."""
    hooks = [("hook-first", "hook")] if args.hook_runs == 2 else []
    hooks.append(("hook", "hook"))
    if args.preset == "survey":
        # The hook takes everything from WSClean's command line: no GPUCLEAN_OPTIONS. Its runs go first:
        # under --total-timeout, WSClean's slower own run is the one cut short, after its cycles were timed.
        return [("survey", [(f"survey-{h}", engine, [], {"GPUCLEAN_OPTIONS": None}) for h, engine in hooks] +
                 [("survey-own", "own", [], {})])]
    out = []
    for algorithm in args.algorithms.split(","):
        options = ["--multiscale"] if algorithm == "multiscale" else []
        env = {"GPUCLEAN_OPTIONS": " ".join(options + os.environ.get("GPUCLEAN_EXTRA", "").split())}
        own = ["-multiscale"] if algorithm == "multiscale" else []
        out.append((algorithm, [(f"{algorithm}-own", "own", own, {})] +
                    [(f"{algorithm}-{h}", engine, [], env) for h, engine in hooks]))
    return out


def measure(name, code, lines, wall, args, work, prefix, truth):
    """The figures of one WSClean run (None where it did not finish)."""
    r = dict(cycles=cycle_times(lines), total=wsclean_total(lines), wall=wall, code=code, rms=None, flux=None,
             sources=None, note="")
    if code is None:
        r["note"] = f"timed out after {wall:.0f} s, {progress(lines)}"
    elif code != 0:
        r["note"] = f"WSClean exited {code}; see {work / (name + '.log')}"
        print("\n".join(text for _, text in lines[-15:]))
    else:
        residual, model = image(work / f"{name}{prefix}-residual.fits"), image(work / f"{name}{prefix}-model.fits")
        r.update(rms=float(np.sqrt(np.mean(residual ** 2))), flux=float(model.sum()),
                 sources=[recovered(model, s, args.size, args.scale) for s in truth])
    return r


def main(argv=None):
    began = time.perf_counter()
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    ms = args.work / "sim.ms"
    if not ms.exists():
        sim = [sys.executable, str(SOURCE / "data" / "simulate_ms.py"), "--out", str(ms)] + args.sim.split()
        print(subprocess.run(sim, check=True, capture_output=True, text=True).stdout.strip(), flush=True)
    truth = read_truth_csv(args.work / "sim-truth.csv")
    ref_hz = args.freq or truth_ref_hz(args.work / "sim-truth.csv")
    freqs = ms_freqs(ms)
    hook_file = gpuclean.wsclean.hook_path()
    common = ["-size", str(args.size), str(args.size), "-scale", f"{args.scale}asec"] + args.wsclean_options.split()
    common += ["-j", str(args.threads)] if args.threads else []
    common += ["-nmiter", str(args.nmiter)] if args.nmiter else []
    channels = option_value(common, "-channels-out")
    prefix = "-MFS" if channels and int(channels[0]) > 1 else ""
    inside = [i for i, s in enumerate(truth) if all(0 <= c < args.size for c in pixel(s, args.size, args.scale))]
    print(f"WSClean {' '.join(common)}\n{len(truth)} true sources ({len(inside)} inside the image); "
          f"{os.cpu_count()} CPUs on this machine ({len(os.sched_getaffinity(0))} for this process); "
          f"the hook: {hook_file}", flush=True)
    version = wsclean_version(shutil.which("wsclean") or "wsclean")
    old_wsclean = version if version and version < (3, 3) else None
    print(f"WSClean {'.'.join(map(str, version)) if version else '(version unknown)'}", flush=True)
    results = {}
    for _, plan in runs(args):
        for name, engine, extra, changes in plan:
            env = dict(os.environ)
            for key, value in changes.items():
                env.pop(key, None) if value is None else env.__setitem__(key, value)
            line = common + extra
            if engine == "hook" and old_wsclean and "-multiscale" in line and "-auto-mask" in line:
                # WSClean < 3.3 takes a Python deconvolver for its multiscale algorithm when both are
                # given (the hook refuses it): multiscale goes to gpuclean through GPUCLEAN_OPTIONS.
                line = [o for o in line if o != "-multiscale"]
                env["GPUCLEAN_OPTIONS"] = " ".join([env.get("GPUCLEAN_OPTIONS", ""), "--multiscale"]).strip()
                print(f"{name}: WSClean {old_wsclean[0]}.{old_wsclean[1]}: -multiscale given as GPUCLEAN_OPTIONS="
                      "--multiscale (with -auto-mask it cannot stand on WSClean's command line)", flush=True)
            cmd = ["wsclean", "-name", str(args.work / name)] + line
            cmd += ["-python-deconvolution", hook_file] if engine == "hook" else []
            start = time.perf_counter()
            timeout = args.timeout
            if args.total_timeout:
                timeout = max(1.0, min(timeout, args.total_timeout - 10 - (start - began)))
            code, lines = run_stamped(cmd + [str(ms)], env, args.work / f"{name}.log", timeout)
            r = results[name] = measure(name, code, lines, time.perf_counter() - start, args, args.work, prefix, truth)
            if r["rms"] is None:
                print(f"{name}: {r['note']}", flush=True)
            else:
                print(f"{name}: {len(r['cycles'])} major cycles, deconvolution {r['total']:.3f} s of {r['wall']:.1f} s; "
                      f"residual rms {r['rms'] * 1e6:.2f} µJy, model flux {r['flux']:.5f} Jy", flush=True)
    report(args, common, results, truth, freqs, ref_hz, inside)
    return 0 if all(r["code"] == 0 for r in results.values()) else 1


def fmt(value, form=".3f"):
    return "" if value is None or value != value else format(value, form)


def percent(a, b):
    return f"{100 * (a / b - 1):+.2f}%" if a is not None and b else "n/a"


def report(args, common, results, truth, freqs, ref_hz, inside):
    settings = setting_text(args, common)
    for label, plan in runs(args):
        own = next(results[name] for name, engine, *_ in plan if engine == "own")
        hook_names = [name for name, engine, *_ in plan if engine == "hook"]
        hook = results[hook_names[-1]]
        print(f"\n{label} ({settings}): per major cycle, WSClean's deconvolution stage [s]")
        print("| cycle | WSClean's own | with the hook | the hook's own time | difference (WSClean around the hook) "
              "| components (hook) |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for i in range(max(len(own["cycles"]), len(hook["cycles"]))):
            o = own["cycles"][i][0] if i < len(own["cycles"]) else None
            h, inner, comps = hook["cycles"][i] if i < len(hook["cycles"]) else (None, None, None)
            diff = h - inner if h is not None and inner is not None else None
            print(f"| {i + 1} | {fmt(o)} | {fmt(h)} | {fmt(inner)} | {fmt(diff)} | {'' if comps is None else comps} |")
        stage = lambda r: sum(c[0] for c in r["cycles"])  # noqa: E731
        inner = sum(c[1] or 0 for c in hook["cycles"])
        print(f"| sum of the stages | {fmt(stage(own))} | {fmt(stage(hook))} | {fmt(inner)} | "
              f"{fmt(stage(hook) - inner)} | |")
        ratio = (f"ratio {own['total'] / hook['total']:.1f}x" if own["total"] == own["total"] and hook["total"] > 0
                 else "ratio n/a")
        print(f"| total (WSClean's summary) | {fmt(own['total'])} | {fmt(hook['total'])} | | | {ratio} |")
        print(f"| whole run (wall) | {own['wall']:.1f} | {hook['wall']:.1f} | | | |")
        for r, who in ((own, "WSClean's own run"), (hook, "the hook's run")):
            if r["note"]:
                print(f"{who}: {r['note']}")
        if len(hook_names) > 1:
            first = results[hook_names[0]]
            c0 = first["cycles"][0] if first["cycles"] else (None, None, None)
            print(f"the hook's first run on this machine (CUDA's caches empty): {fmt(first['total'])} s in WSClean's "
                  f"summary, its first major cycle {fmt(c0[0])} s (the hook's own {fmt(c0[1])} s), wall "
                  f"{first['wall']:.1f} s{'; ' + first['note'] if first['note'] else ''}")
        if own["rms"] is None or hook["rms"] is None:
            for r, who in ((own, "WSClean's own run"), (hook, "the hook's run")):
                if r["rms"] is not None:
                    print(f"{who} alone: residual rms {r['rms'] * 1e6:.3f} µJy, model flux {r['flux']:.5f} Jy")
            print("no comparison of residual RMS, model flux and recovered fluxes: a run did not finish")
            continue
        print(f"residual rms ({settings}): own {own['rms'] * 1e6:.3f} µJy, hook {hook['rms'] * 1e6:.3f} µJy "
              f"({percent(hook['rms'], own['rms'])}); model flux: own {own['flux']:.5f}, hook "
              f"{hook['flux']:.5f} Jy ({percent(hook['flux'], own['flux'])})")
        sources_table(args, label, settings, own, hook, truth, freqs, ref_hz, inside)


def sources_table(args, label, settings, own, hook, truth, freqs, ref_hz, inside):
    rows = []
    for i in inside:
        s, t = truth[i], band_flux(truth[i], freqs, ref_hz)
        rows.append((i, s, t, own["sources"][i], hook["sources"][i]))
    path = args.work / f"{label}-sources.csv"
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "kind", "fwhm_major_arcsec", "truth_band_jy", "own_jy", "hook_jy"])
        out.writerows([i, s.kind, s.fwhm_major_arcsec, f"{t:.6g}", f"{o:.6g}", f"{h:.6g}"] for i, s, t, o, h in rows)
    for kind in ("point", "gaussian"):
        some = [(t, o, h) for _, s, t, o, h in rows if s.kind == kind]
        if not some:
            continue
        t, o, h = (np.array(v) for v in zip(*some))
        both = o != 0
        print(f"{kind}s inside the image: {len(some)}; recovered / truth, median (10th-90th percentile): own "
              f"{np.median(o / t):.3f} ({np.percentile(o / t, 10):.3f}-{np.percentile(o / t, 90):.3f}), hook "
              f"{np.median(h / t):.3f} ({np.percentile(h / t, 10):.3f}-{np.percentile(h / t, 90):.3f}); hook / own "
              f"median {np.median(h[both] / o[both]) if both.any() else float('nan'):.3f}, "
              f"{int(np.sum(np.abs(h[both] / o[both] - 1) > 0.1))} of {int(both.sum())} differ by more than 10%")
    shown = rows[:args.show_sources]
    print(f"recovered flux per true source ({settings}), the {len(shown)} brightest of {len(rows)} inside the "
          f"image (all in {path})" if len(shown) < len(rows) else f"recovered flux per true source ({settings})")
    print("| source | kind | FWHM [\"] | truth [Jy] | WSClean's own | hook | hook / own |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for i, s, t, o, h in shown:
        print(f"| {i} | {s.kind} | {s.fwhm_major_arcsec:.1f} | {t:.4f} | {o:.4f} ({100 * o / t:.1f}%) | "
              f"{h:.4f} ({100 * h / t:.1f}%) | {h / o if o else float('nan'):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
