"""`scripts/imaging_bench.py --clean` (issue 36; not a timed test): on one case's MS and the same
cores, WSClean alone, WSClean with gpuclean's hook (-python-deconvolution) and `gpuclean image`,
each with the same WSClean deconvolution options: the whole run's wall time, where each major cycle
goes, the MFS residual's RMS, the model's flux, and each truth source's recovered flux.

The options (CLEAN_OPTIONS, a survey's: oxkat's and the issue's) are given to all three runs, with
`-channels-out N -join-channels -fit-spectral-pol P` (P = the case's `fit`) when N > 1. WSClean
3.1 cannot load a Python deconvolver beside `-multiscale -auto-mask`: there the hook's run gets
`GPUCLEAN_OPTIONS=--multiscale` instead (as scripts/wsclean_bench.py). This module is imported by
imaging_bench.py, which it uses for the case, the simulation, the timed runs and FITS.
"""

import csv
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

import numpy as np

SOURCE = pathlib.Path(__file__).resolve().parent.parent
RUNS = ("gpuclean", "hook", "wsclean")  # this order: under --total-timeout the slowest is the one cut short
LABEL = {"gpuclean": "gpuclean image", "hook": "WSClean + gpuclean's hook", "wsclean": "WSClean alone"}
WEIGHTING = ["-weight", "briggs", "0"]
CLEAN_OPTIONS = ["-multiscale", "-auto-threshold", "3", "-auto-mask", "5", "-mgain", "0.8"]
WSCLEAN_GRIDDER = ["-use-wgridder"]  # gpuclean accepts it (its gridder is always w-stacking with an ES kernel)

STAGE = re.compile(r"^\s*== (.*?) ==\s*$")
DECONVOLVING = re.compile(r"Deconvolving \((\d+)\)")
WSC_DONE = re.compile(r"(\d+) major iterations were performed")
WSC_SUMMARY = re.compile(r"Inversion: (\d+):(\d+):([0-9.]+), prediction: (\d+):(\d+):([0-9.]+), "
                         r"deconvolution: (\d+):(\d+):([0-9.]+)")
WSC_COMPONENTS = re.compile(r"^Total: (\d+) components|^\(?\d*\)? ?Iteration (\d+)")
WSC_VERSION = re.compile(r"WSClean version (\d+)\.(\d+)(?:\.(\d+))?")
HOOK_CYCLE = re.compile(r"^gpuclean: major cycle (\d+): .*?(\d+) components in .*?, ([0-9.]+) s")
GPU_CYCLE = re.compile(r"gpuclean image: major cycle (\d+): (\d+) components \((\d+) in all\)(.*)")
GPU_SUMMARY = re.compile(r"gpuclean image: (\d+) major cycle\(s\), (\d+) components")
GPU_TIMES = re.compile(r"gpuclean image: timings (.*)")
SECONDS = re.compile(r"^([A-Za-z][\w -]*?)[ =:]+([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?) ?(ms|s)$")


def hms(h, m, s):
    return int(h) * 3600 + int(m) * 60 + float(s)


# ---------------------------------------------------------------- the commands

def options(c, args):
    """The WSClean options of all three runs (less -name and the MS)."""
    joined = ["-join-channels", "-fit-spectral-pol", str(c["fit"])] if c["channels"] > 1 else []
    nmiter = ["-nmiter", str(args.nmiter)] if args.nmiter else []
    return (["-size", str(c["size"]), str(c["size"]), "-scale", f"{c['scale']:g}asec"] + WEIGHTING +
            ["-channels-out", str(c["channels"])] + joined + CLEAN_OPTIONS + ["-niter", str(args.niter)] + nmiter +
            WSCLEAN_GRIDDER + ["-j", str(args.threads)])


def wsclean_version(wsclean):
    try:
        out = subprocess.run([wsclean, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = WSC_VERSION.search(out)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def hook_file(args):
    """(the hook's file, PYTHONPATH for WSClean's Python or None, note). gpuclean's Python package is
    taken from this interpreter's path (the WSClean pack's), else from --gpuclean's build folder."""
    try:
        import gpuclean.wsclean
        return gpuclean.wsclean.hook_path(), None, ""
    except ImportError as e:
        built = pathlib.Path(args.gpuclean).resolve().parent / "python"
        if not (built / "gpuclean" / "wsclean_hook.py").exists():
            return None, None, f"gpuclean's Python package not found ({e}; no {built})"
        sys.path.insert(0, str(built))
        try:
            import gpuclean.wsclean
        except ImportError as e2:
            return None, None, f"gpuclean's Python package in {built} does not import: {e2}"
        path = os.pathsep.join(p for p in (str(built), os.environ.get("PYTHONPATH")) if p)
        return gpuclean.wsclean.hook_path(), path, f"gpuclean's Python package from {built}"


def commands(c, folder, args, version, hook):
    """run -> (command, environment changes, note)."""
    common, ms = options(c, args), str(folder / "sim.ms")
    name = lambda run: ["-name", str(folder / f"clean-{run}")]  # noqa: E731
    device = (["-device", args.device] if args.device else []) + args.gpuclean_options.split()
    hook_path, pythonpath, hook_note = hook
    env = {"GPUCLEAN_OPTIONS": " ".join(args.hook_options.split())}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    line = list(common)
    if version and version < (3, 3) and "-multiscale" in line and "-auto-mask" in line:
        line.remove("-multiscale")
        env["GPUCLEAN_OPTIONS"] = " ".join(["--multiscale", env["GPUCLEAN_OPTIONS"]]).strip()
        hook_note = "; ".join(n for n in (hook_note, "-multiscale given as GPUCLEAN_OPTIONS=--multiscale "
                                          "(WSClean 3.1 takes no Python deconvolver beside -multiscale -auto-mask)") if n)
    out = {
        "gpuclean": ([args.gpuclean, "image"] + device + name("gpuclean") + common + [ms], {}, ""),
        "wsclean": ([args.wsclean] + name("wsclean") + common + [ms], {}, ""),
    }
    if hook_path:
        out["hook"] = ([args.wsclean] + name("hook") + line + ["-python-deconvolution", hook_path, ms], env, hook_note)
    else:
        out["hook"] = (None, env, hook_note)
    return out


# ---------------------------------------------------------------- what a log says

def wsclean_log(stamps):
    """WSClean's stages from its "== ... ==" lines, each timed from its line to the next stage's:
    setup (reordering, weights: before the first stage), psf, dirty (images before the first
    deconvolution), then per major cycle k: deconvolve, predict, invert (the images after it), and
    end (restoring and writing, from "N major iterations were performed" to the exit)."""
    phases = dict(setup=0.0, psf=0.0, dirty=0.0, invert=0.0, deconvolve=0.0, predict=0.0, end=0.0)
    cycles, current, since, cycle = {}, "setup", 0.0, 0
    hook, out = {}, dict(major=None, summary=None, components=None, version=None)

    def close(t):
        phases[current] += t - since
        if cycle and current in ("deconvolve", "predict", "invert"):
            cycles.setdefault(cycle, {}).setdefault(current, 0.0)
            cycles[cycle][current] += t - since

    for t, text in stamps:
        kind = None
        if m := STAGE.match(text):
            if d := DECONVOLVING.match(m.group(1)):
                kind, next_cycle = "deconvolve", int(d.group(1))
            elif m.group(1).startswith("Constructing PSF"):
                kind, next_cycle = "psf", cycle
            elif m.group(1).startswith("Constructing image"):
                kind, next_cycle = ("invert" if cycle else "dirty"), cycle
            elif m.group(1).startswith("Converting model"):
                kind, next_cycle = "predict", cycle
            else:
                kind, next_cycle = "setup", cycle
        elif m := WSC_DONE.search(text):
            out["major"] = int(m.group(1))
            kind, next_cycle = "end", cycle
        if kind:
            close(t)
            current, since, cycle = kind, t, next_cycle
        if m := WSC_SUMMARY.search(text):
            g = m.groups()
            out["summary"] = dict(inversion=hms(*g[0:3]), prediction=hms(*g[3:6]), deconvolution=hms(*g[6:9]))
        if m := WSC_COMPONENTS.match(text):
            out["components"] = int(m.group(1) or m.group(2))
        if m := HOOK_CYCLE.match(text):
            hook[int(m.group(1))] = dict(seconds=float(m.group(3)), components=int(m.group(2)))
        if out["version"] is None and (m := WSC_VERSION.search(text)):
            out["version"] = ".".join(g for g in m.groups() if g)
    if stamps:
        close(stamps[-1][0])
    out["reached"] = cycle
    out["phases"] = phases
    out["cycles"] = [dict(cycle=k, **cycles[k], **({"hook": hook[k]["seconds"], "hook_components": hook[k]["components"]}
                                                   if k in hook else {})) for k in sorted(cycles)]
    if hook:
        out["components"] = sum(h["components"] for h in hook.values())
    return out


def gpuclean_log(stamps):
    """gpuclean's cycle lines (their stamps and any "NAME X s" fields they carry), its summary and
    its timings line (key=value) where it prints one."""
    out = dict(major=None, components=None, cycles=[], timings=None, first_cycle_at=None)
    last = None
    for t, text in stamps:
        if m := GPU_CYCLE.search(text):
            fields = {}
            for part in re.split(r"[;,]", m.group(4)):
                if f := SECONDS.match(part.strip()):
                    fields[f.group(1).strip().replace(" ", "_")] = float(f.group(2)) / (1000 if f.group(3) == "ms" else 1)
            out["cycles"].append(dict(cycle=int(m.group(1)), components=int(m.group(2)), wall=None if last is None
                                      else t - last, **fields))
            out["first_cycle_at"] = out["first_cycle_at"] if out["first_cycle_at"] is not None else t
            out["components"], last = int(m.group(3)), t
        elif m := GPU_SUMMARY.search(text):
            out["major"], out["components"] = int(m.group(1)), int(m.group(2))
            out["summary_at"] = t
        elif m := GPU_TIMES.search(text):
            kv = dict(p.split("=", 1) for p in m.group(1).split() if "=" in p)
            out["timings"] = {k: float(v) for k, v in kv.items() if re.fullmatch(r"[-+0-9.eE]+", v)}
    if out["major"] is None and out["cycles"]:
        out["major"] = len(out["cycles"])
    return out


# ---------------------------------------------------------------- what the images say

def pixel(s, size, scale):
    """x runs against RA (l east), y with m, the phase centre at pixel size / 2 (wsclean_bench.py)."""
    return size // 2 - s.l_arcsec / scale, size // 2 + s.m_arcsec / scale


def disk(image, x, y, radius):
    size = image.shape[0]
    y0, y1 = max(0, int(y - radius) - 1), min(size, int(y + radius) + 2)
    x0, x1 = max(0, int(x - radius) - 1), min(size, int(x + radius) + 2)
    if y0 >= y1 or x0 >= x1:
        return np.zeros(0)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    return image[y0:y1, x0:x1][(xx - x) ** 2 + (yy - y) ** 2 <= radius ** 2]


def source_flux(model, residual, beam_px, s, size, scale):
    """(model, left): the model's flux within max(3 px, 2 major FWHM) of the source, and what the
    residual holds of it: for a point the residual at its nearest pixels (the largest |value| within
    0.75 px, Jy/beam), for a Gaussian the residual's sum over the same disk / the beam's area in pixels
    (tests/app/test_image_clean_vs_wsclean.cpp and scripts/wsclean_bench.py). None outside the image."""
    x, y = pixel(s, size, scale)
    radius = max(3.0, 2 * s.fwhm_major_arcsec / scale)
    if not (radius <= x < size - radius and radius <= y < size - radius):
        return None
    m = float(disk(model, x, y, radius).sum())
    if s.kind == "point":
        near = disk(residual, x, y, 0.75)
        left = float(near[np.argmax(np.abs(near))]) if near.size else 0.0
    else:
        left = float(disk(residual, x, y, radius).sum() / beam_px) if beam_px else 0.0
    return m, left


def images(bench, folder, run, c, truth):
    """Residual RMS, model flux (MFS and per channel) and each truth source's (model, left)."""
    k = c["channels"]
    prefix = folder / (f"clean-{run}-MFS" if k > 1 else f"clean-{run}")
    residual, cards = bench.read_fits(f"{prefix}-residual.fits", header=True)
    model = bench.read_fits(f"{prefix}-model.fits")
    beam_px = None
    if "BMAJ" in cards and "BMIN" in cards:
        beam_px = np.pi / (4 * np.log(2)) * float(cards["BMAJ"]) * float(cards["BMIN"]) * 3600 ** 2 / c["scale"] ** 2
    channels = []
    for i in range(k if k > 1 else 0):
        p = folder / f"clean-{run}-{i:04d}-model.fits"
        channels.append(float(bench.read_fits(p).sum()) if p.exists() else None)
    return dict(rms=float(np.sqrt(np.mean(residual ** 2))), flux=float(model.sum()), channel_flux=channels,
                beam_px=beam_px, sources=[source_flux(model, residual, beam_px, s, c["size"], c["scale"]) for s in truth])


def tidy(folder, run, c, everything=False):
    """Only the MFS residual, model and image stay (8192^2 x 8 writes 11 GiB a run); everything=True:
    none, nor what a stopped WSClean leaves (its temporary images and reordered parts)."""
    keep = set() if everything else {f"clean-{run}{'-MFS' if c['channels'] > 1 else ''}-{k}.fits"
                                     for k in ("residual", "model", "image")}
    for f in list(folder.glob(f"clean-{run}-*.fits")) + (list(folder.glob("sim.ms-*.tmp")) if everything else []):
        if f.name not in keep:
            f.unlink()


# ---------------------------------------------------------------- the case

def truth_list(folder, freqs):
    """The truth sources and their flux averaged over the MS's channels (equal weights)."""
    sys.path.insert(0, str(SOURCE / "data"))
    from msim.sky import read_truth_csv
    path = folder / "sim-truth.csv"
    with open(path, newline="") as f:
        ref = float(next(csv.DictReader(f))["ref_freq_hz"])
    truth = read_truth_csv(path)
    return truth, [float(np.mean(s.flux_jy * (np.asarray(freqs) / ref) ** s.spectral_index)) for s in truth]


def run_case(bench, name, args, began):
    c = bench.case_settings(name, args)
    folder = args.work / name
    folder.mkdir(parents=True, exist_ok=True)
    result = dict(case=name, mode="clean", settings=dict(c), runs={}, notes=[])
    try:
        sim_s, sim_note = bench.ensure_ms(c, folder, args)
    except RuntimeError as e:
        print(f"case {name}: {e}", flush=True)
        result["notes"].append(str(e))
        return result
    result["simulation_s"], result["simulation"] = sim_s, sim_note
    version = wsclean_version(args.wsclean)
    result["wsclean_version"] = ".".join(map(str, version)) if version else None
    hook = hook_file(args) if "hook" not in args.skip else (None, None, "")
    cmds = commands(c, folder, args, version, hook)
    result["options"] = options(c, args)
    wanted = [r for r in RUNS if r not in args.skip]
    if args.dry_run:
        for run in wanted:
            cmd, env, _ = cmds[run]
            print("$ " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + (" " if env else "") +
                  (shlex.join(cmd) if cmd else f"({run}: {cmds[run][2]})"))
        return result
    facts = bench.ms_facts(folder / "sim.ms")
    result["ms"] = dict(rows=facts["rows"], channels=len(facts["freqs"]),
                        freq_range_hz=[float(facts["freqs"][0] - facts["widths"][0] / 2),
                                       float(facts["freqs"][-1] + facts["widths"][-1] / 2)])
    truth, band = truth_list(folder, facts["freqs"])
    result["truth"] = [dict(kind=s.kind, flux_jy=s.flux_jy, band_jy=b, fwhm_major_arcsec=s.fwhm_major_arcsec,
                            l_arcsec=s.l_arcsec, m_arcsec=s.m_arcsec) for s, b in zip(truth, band)]
    for run in RUNS:
        if run in args.skip:
            result["runs"][run] = dict(run=run, label=LABEL[run], code=None, skipped=True, note="skipped (--skip)")
            continue
        cmd, changes, note = cmds[run]
        r = result["runs"][run] = dict(run=run, label=LABEL[run], code=None, wall=0.0, note="", setup=note,
                                       command=shlex.join(cmd) if cmd else None, env=changes)
        if cmd is None:
            r["note"] = f"not run: {note}"
            print(f"{name} {run}: not run: {note}", flush=True)
            continue
        left = args.total_timeout - 15 - (time.perf_counter() - began) if args.total_timeout else args.timeout
        timeout = min(args.timeout, left)
        if timeout < 5:
            r["note"] = "not run: under 5 s left of --total-timeout"
            print(f"{name} {run}: not run (--total-timeout)", flush=True)
            continue
        env = dict(os.environ)
        for key, value in changes.items():
            env.pop(key, None) if not value else env.__setitem__(key, value)
        tidy(folder, run, c, everything=True)  # an earlier run's images must not be read as this one's
        repeats = args.gpu_repeats if run == "gpuclean" else 1
        for attempt in range(repeats):
            if attempt:  # what is left of --total-timeout
                left = args.total_timeout - 15 - (time.perf_counter() - began) if args.total_timeout else timeout
                timeout = max(5.0, min(timeout, left))
            stamps = []
            log = folder / (f"clean-{run}.log" if attempt == repeats - 1 else f"clean-{run}-{attempt + 1}.log")
            code, wall, _ = bench.run_timed(cmd, log, timeout, folder, env=env, stamps=stamps)
            if attempt < repeats - 1:
                result.setdefault("first_runs", {})[run] = dict(code=code, wall=wall)
        r.update(code=code, wall=wall, log=str(log), ran=True)
        r.update(wsclean_log(stamps) if run != "gpuclean" else gpuclean_log(stamps))
        if code != 0 and not args.keep_images:
            tidy(folder, run, c, everything=True)
        if code is None:
            r["note"] = f"stopped after {wall:.0f} s" + (
                f", in major cycle {r['reached']}" if r.get("reached") else
                f", after {len(r['cycles'])} major cycle(s)" if r.get("cycles") else "")
        elif code != 0:
            tail = [t for _, t in stamps if t.strip()][-1:] or [""]
            r["note"] = f"exit {code}: {tail[0][:160]}"
        else:
            try:
                r.update(images(bench, folder, run, c, truth))
            except (OSError, ValueError, KeyError) as e:
                r["note"] = f"images not read: {e}"
            if not args.keep_images:
                tidy(folder, run, c)
        print(f"{name} {run}: exit {code}, wall {wall:.2f} s, {r.get('major') or r.get('reached') or 0} major cycle(s)" +
              (f", residual RMS {r['rms'] * 1e6:.2f} µJy, model flux {r['flux']:.5f} Jy" if r.get("rms") is not None
               else "") + (f" ({r['note']})" if r.get("note") else ""), flush=True)
    return result


# ---------------------------------------------------------------- the report

def fmt(value, form=".2f"):
    return "" if value is None else format(value, form)


def reference_sigma(runs):
    for run in ("wsclean", "hook", "gpuclean"):
        if runs.get(run, {}).get("rms") is not None:
            return runs[run]["rms"], run
    return None, None


def recovery(r, truth, sigma):
    """(recovered, checked, median (model + left) / truth, median model / truth) over the truth
    sources of at least 5σ inside the image: recovered = within 5 % + 3σ (points), 10 % + 3σ per beam
    of the disk (Gaussians)."""
    if r.get("sources") is None or sigma is None:
        return None
    ok, ratios, model_ratios = 0, [], []
    for t, got in zip(truth, r["sources"]):
        if got is None or t["band_jy"] < 5 * sigma:
            continue
        m, left = got
        ratios.append((m + left) / t["band_jy"])
        model_ratios.append(m / t["band_jy"])
        if t["kind"] == "point":
            ok += abs(m + left - t["band_jy"]) <= 0.05 * t["band_jy"] + 3 * sigma
        else:
            beams = max(1.0, np.pi * max(3.0, 2 * t["fwhm_major_arcsec"] / r["scale"]) ** 2 / (r.get("beam_px") or 1))
            ok += abs(m + left - t["band_jy"]) <= 0.10 * t["band_jy"] + 3 * sigma * np.sqrt(beams)
    if not ratios:
        return 0, 0, None, None
    return ok, len(ratios), float(np.median(ratios)), float(np.median(model_ratios))


def speedup(r, ref):
    """ref's wall over r's; "> x" where ref was stopped (its wall is a lower bound)."""
    if not r or r.get("code") != 0 or not ref or not ref.get("ran") or not ref.get("wall"):
        return ""
    text = f"{ref['wall'] / r['wall']:.1f}×"
    return text if ref.get("code") == 0 else "> " + text if ref.get("code") is None else ""


def report(bench, results, args, device):
    gpu, cpu, cores, usable = device
    lines = []
    for res in results:
        c, runs = res["settings"], res["runs"]
        ms = res.get("ms", {})
        rows, chans = ms.get("rows", c["rows"]), ms.get("channels", c["channels"])
        lo, hi = ms.get("freq_range_hz", [c["freq"] - c["bandwidth"] / 2, c["freq"] + c["bandwidth"] / 2])
        sigma, sigma_run = reference_sigma(runs)
        truth = res.get("truth", [])
        lines += [f"\n### Case {res['case']}, deconvolved: {c['size']}² at {c['scale']:g}″, {chans} channels "
                  f"({lo / 1e9:.3f}–{hi / 1e9:.3f} GHz), Briggs 0, multiscale"
                  + (f", joined, {c['fit']}-term fit" if chans > 1 else ""),
                  f"Device: {gpu}; CPU: {cpu}, {cores} cores ({usable} usable); WSClean "
                  f"{res.get('wsclean_version') or '(version unknown)'} and gpuclean with `-j {args.threads}`; "
                  f"gpuclean image {'`-device ' + args.device + '`' if args.device else 'with its default -device'}"
                  + (f", and `{args.gpuclean_options}` for it alone" if args.gpuclean_options else "") + ".",
                  f"MS: {rows:,} rows ({c['antennas']} MeerKAT pads × {c['times']} times of {c['integration']:.4g} s), "
                  f"{rows * chans:,} samples, XX and YY; sky: {bench.sky_text(c)}; {res.get('simulation', '')}.",
                  f"Options of all three runs: `{' '.join(res.get('options', []))}`; WSClean's gridder is its "
                  f"w-gridder (gpuclean accepts `-use-wgridder` without effect); the hook's run adds "
                  f"`-python-deconvolution`" + (f" ({runs['hook']['setup']})" if runs.get("hook", {}).get("setup") else "")
                  + (f", GPUCLEAN_OPTIONS `{args.hook_options}`" if args.hook_options else "") + ".",
                  "",
                  "| run | wall [s] | major cycles | components | speed-up vs WSClean alone | vs WSClean + hook | "
                  f"MFS residual RMS [µJy] | MFS model flux [Jy] | sources ≥ 5σ recovered (σ = {fmt(sigma and sigma * 1e6)} "
                  f"µJy, {sigma_run or 'none'}) | median (model + residual) / truth | median model / truth | note |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for run in RUNS:
            r = runs.get(run)
            if r is None:
                continue
            r["scale"] = c["scale"]
            rec = recovery(r, truth, sigma)
            wall = "" if not r.get("ran") else fmt(r["wall"]) if r.get("code") is not None else f"> {r['wall']:.0f}"
            ws = speedup(r, runs.get("wsclean")) if run != "wsclean" else ""
            hk = speedup(r, runs.get("hook")) if run == "gpuclean" else ""
            lines.append(f"| {LABEL[run]} | {wall} | {r.get('major') or r.get('reached') or ''} | "
                         f"{'' if r.get('components') is None else r['components']} | {ws} | {hk} | "
                         f"{fmt(r.get('rms') and r['rms'] * 1e6, '.3f')} | {fmt(r.get('flux'), '.5f')} | "
                         f"{'' if rec is None else f'{rec[0]} of {rec[1]}'} | {fmt(rec and rec[2], '.3f')} | "
                         f"{fmt(rec and rec[3], '.3f')} | {r.get('note', '')} |")
        lines += where_time_goes(runs), *per_cycle(runs)
        lines += sources_table(args, res, truth, runs, sigma)
        first = res.get("first_runs", {}).get("gpuclean")
        if first:
            lines.append(f"\ngpuclean's first run (exit {first['code']}): wall {first['wall']:.2f} s; the table shows "
                         f"run {args.gpu_repeats}.")
        lines += [f"note: {n}" for n in res["notes"]]
    return "\n".join(lines)


def where_time_goes(runs):
    """One row per run: WSClean's stages from its stamped log, gpuclean's from its lines."""
    out = ["\nWhere the time goes [s] (WSClean: from its stamped stage lines, setup = reordering and weights; "
           "gpuclean: setup = up to its first cycle line less that cycle's seconds (reading, weights, PSFs and dirty "
           "images), the cycles' seconds from its lines, end = after its last, and its timings line where it prints one)",
           "| run | setup | PSFs + dirty images | invert (cycles) | deconvolve | predict | end (restore, write) | "
           "WSClean's summary: inversion / prediction / deconvolution | gpuclean's figures |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for run in RUNS:
        r = runs.get(run)
        if not r or not r.get("ran"):
            continue
        if run == "gpuclean":
            sums = {k: sum(cy.get(k) or 0 for cy in r.get("cycles", [])) for k in ("deconvolve", "predict", "invert")}
            has = {k: any(k in cy for cy in r.get("cycles", [])) for k in sums}
            start, end = r.get("first_cycle_at"), r.get("summary_at")
            figures = ", ".join(f"{k} {v:g}" for k, v in (r.get("timings") or {}).items())
            first = (r.get("cycles") or [{}])[0]
            if start is not None and all(k in first for k in sums):
                start = fmt(start - sum(first[k] for k in sums))  # the start: its line less cycle 1's seconds
            elif start is not None:
                start = fmt(start) + " (to cycle 1’s line)"
            out.append(f"| {LABEL[run]} | {start or ''} | | {fmt(sums['invert'] if has['invert'] else None)} | "
                       f"{fmt(sums['deconvolve'] if has['deconvolve'] else None)} | "
                       f"{fmt(sums['predict'] if has['predict'] else None)} | "
                       f"{fmt(r['wall'] - end if end is not None else None)} | | {figures} |")
        else:
            p, s = r.get("phases", {}), r.get("summary")
            summary = f"{s['inversion']:.2f} / {s['prediction']:.2f} / {s['deconvolution']:.2f}" if s else ""
            out.append(f"| {LABEL[run]} | {fmt(p.get('setup'))} | {fmt((p.get('psf') or 0) + (p.get('dirty') or 0))} | "
                       f"{fmt(p.get('invert'))} | {fmt(p.get('deconvolve'))} | {fmt(p.get('predict'))} | "
                       f"{fmt(p.get('end'))} | {summary} | |")
    return "\n".join(out)


def per_cycle(runs):
    """Per major cycle k: deconvolve k, predict, and the re-imaging after it."""
    n = max([len(runs.get(r, {}).get("cycles") or []) for r in RUNS] + [0])
    if not n:
        return []
    extra = list(dict.fromkeys(k for cy in runs.get("gpuclean", {}).get("cycles") or [] for k in cy
                               if k not in ("cycle", "components", "wall")))
    out = ["\nPer major cycle [s] (WSClean: deconvolve, predict, invert from its stage lines; the hook's own seconds "
           "from its line; gpuclean: the time between its cycle lines" + (" and the seconds its line gives" if extra else "")
           + ")",
           "| cycle | WSClean alone: deconvolve / predict / invert | WSClean + hook: deconvolve (the hook's own) / "
           "predict / invert | gpuclean: cycle |" + "".join(f" gpuclean: {k} |" for k in extra),
           "| ---: | ---: | ---: | ---: |" + " ---: |" * len(extra)]

    def wsc(run, i):
        cy = (runs.get(run, {}).get("cycles") or [])
        if i >= len(cy):
            return ""
        d = cy[i]
        hook = f" ({d['hook']:.2f})" if "hook" in d else ""
        return f"{fmt(d.get('deconvolve'))}{hook} / {fmt(d.get('predict'))} / {fmt(d.get('invert'))}"
    for i in range(n):
        g = (runs.get("gpuclean", {}).get("cycles") or [])
        gi = g[i] if i < len(g) else {}
        wall = "(with the start)" if i == 0 and gi else fmt(gi.get("wall"))
        out.append(f"| {i + 1} | {wsc('wsclean', i)} | {wsc('hook', i)} | {wall} |" +
                   "".join(f" {fmt(gi.get(k), '.3f')} |" for k in extra))
    return ["\n".join(out)]


def sources_table(args, res, truth, runs, sigma):
    """The brightest --show-sources truth sources inside the image; all of them to WORK/CASE/clean-sources.csv."""
    done = [run for run in RUNS if runs.get(run, {}).get("sources") is not None]
    if not done or not truth:
        return []
    path = args.work / res["case"] / "clean-sources.csv"
    rows = [i for i, t in enumerate(truth) if any(runs[run]["sources"][i] is not None for run in done)]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "kind", "fwhm_major_arcsec", "truth_band_jy"] +
                     [f"{run}_{k}" for run in done for k in ("model_jy", "residual_jy")])
        for i in rows:
            t = truth[i]
            out.writerow([i, t["kind"], t["fwhm_major_arcsec"], f"{t['band_jy']:.6g}"] +
                         [f"{v:.6g}" for run in done for v in (runs[run]["sources"][i] or (0, 0))])
    shown = rows[:args.show_sources]
    lines = [f"\nRecovered flux [Jy], model + residual (model) against the truth averaged over the band, the "
             f"{len(shown)} brightest of {len(rows)} sources inside the image (all in {path})",
             "| source | kind | FWHM [\"] | truth [Jy] | " + " | ".join(LABEL[run] for run in done) + " |",
             "| ---: | --- | ---: | ---: |" + " ---: |" * len(done)]
    for i in shown:
        t = truth[i]
        cells = []
        for run in done:
            m, left = runs[run]["sources"][i]
            cells.append(f"{m + left:.4g} ({m:.4g}), {100 * (m + left) / t['band_jy']:.1f}%")
        lines.append(f"| {i} | {t['kind']} | {t['fwhm_major_arcsec']:.1f} | {t['band_jy']:.4g} | " + " | ".join(cells) + " |")
    return ["\n".join(lines)]
