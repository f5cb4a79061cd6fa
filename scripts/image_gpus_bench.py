#!/usr/bin/env python3
"""`gpuclean image -max-gpus` scaling (issue 37; not a timed test; scripts/gpu-check.sh image-gpus).

    scripts/image_gpus_bench.py --work DIR --out DIR [--case A] [--gpus 1,2,4] [--modes dirty,joined,unjoined]
        [--repeat 1] [--total-timeout 300] [--device gpu]
    scripts/image_gpus_bench.py --table ROWS.json      (the table again from a run's rows)

On one case's MS of scripts/imaging_bench.py (simulated into WORK/CASE/sim.ms, or reused), runs
`gpuclean image` in three modes, each with -max-gpus 1, then the most GPUs, then the rest:
  dirty     -niter 0 -make-psf (the imaging runs' options)
  joined    the loop of scripts/imaging_bench.py --clean (its table in docs/performance.md):
            -multiscale -auto-threshold 3 -auto-mask 5 -mgain 0.8 -niter 1000000 -use-wgridder
            -channels-out N -join-channels -fit-spectral-pol P
  unjoined  the same without -join-channels -fit-spectral-pol
  split     joined with GPUCLEAN_SPLIT_JOINED=1: the session's planes split over the GPUs though
            they fit one (clean/run_plan.hpp), on 2 or more GPUs, against joined's 1-GPU run
and -max-gpus 1 again (--repeat), the run-to-run difference of one GPU; a dirty run on the most
GPUs goes first as a warm-up, not in the table. Per run: its wall time,
the first inversion (the -json summary's seconds.first_inversion: reading, weighting, the PSFs and
first dirty images; for dirty: the timings line's read + weights + invert), the loop, the invert /
deconvolve / predict totals of the major cycles, and max |difference| / peak of every FITS file
against the same file of the first -max-gpus 1 run (Δ image: the restored images, or the dirty
images in dirty mode; Δ any: every file, the worst named). Only the first 1-GPU run's images are
kept. A run is cut at --run-timeout s; when --total-timeout is near, the rest are skipped with a line.
Needs numpy and python-casacore (the pack's Python: $WSC_PYTHON) and gpuclean ($GPUCLEAN_BINARY).
"""

import argparse
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import imaging_bench as bench  # noqa: E402  (the cases, the simulation, run_timed, read_fits)

MODES = ("dirty", "joined", "unjoined", "split")
SPLIT = re.compile(r"the joined planes split over GPUs (\S+)")
VISIBILITIES = re.compile(r"gpuclean image: visibilities (.*)")


def mode_options(mode, c, threads, device):
    """gpuclean image's options for one mode (less -max-gpus, -name, -json and the MS)."""
    dev = ["-device", device] if device else []
    mode = "joined" if mode == "split" else mode
    if mode == "dirty":
        return dev + ["-size", str(c["size"]), str(c["size"]), "-scale", f"{c['scale']:g}asec", "-weight", "briggs",
                      "0", "-niter", "0", "-make-psf", "-channels-out", str(c["channels"]), "-j", str(threads)]
    import imaging_clean_bench as loop  # the loop table's options, as they are there
    line = loop.options(c, argparse.Namespace(niter=1000000, nmiter=None, threads=threads))
    if mode == "unjoined" and "-join-channels" in line:
        i = line.index("-join-channels")
        del line[i:i + 3]  # -join-channels -fit-spectral-pol P
    return dev + line


def ensure_ms(c, folder, workers, timeout):
    """WORK/CASE/sim.ms as imaging_bench.py makes it (reused when its options match); (seconds, note)."""
    ms, stamp = folder / "sim.ms", folder / "sim.json"
    wanted = bench.sim_args(c, ms)
    if ms.exists() and stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return 0.0, "reused"
    stamp.unlink(missing_ok=True)
    cmd = [sys.executable, str(pathlib.Path(bench.__file__).resolve()), "simulate-ms", str(workers)] + wanted
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"the simulation failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-400:]}")
    stamp.write_text(json.dumps(wanted))
    seconds = time.perf_counter() - start
    return seconds, f"simulated in {seconds:.1f} s on {workers} processes"


def measure(row, code, wall, text, summary):
    """Fills a row from the run's exit, wall time, output and -json summary (a path, or None)."""
    row.update(code=code, wall=wall)
    if code != 0:
        tail = [line for line in text.splitlines() if line.strip()][-1:] or [""]
        row["note"] = f"timed out after {wall:.0f} s" if code is None else f"exit {code}: {tail[0][:140]}"
    if m := VISIBILITIES.search(text):
        row["visibilities"] = m.group(1)
    if row["mode"] == "split" and code == 0:
        m = SPLIT.search(text)
        row["note"] = f"split over GPUs {m.group(1)}" if m else "not split (no split line)"
    kv = {}
    for line in bench.GPU_TIMES.findall(text)[-1:]:
        kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
    if "gpus" in kv:
        row["gpus"] = kv["gpus"]
    if summary and pathlib.Path(summary).exists():
        j = json.loads(pathlib.Path(summary).read_text())
        if "gpus" in j:
            row["gpus"] = ",".join(str(g) for g in j["gpus"])
        s, t = j.get("seconds", {}), j.get("totals", {})
        row.update(first=s.get("first_inversion"), loop=s.get("loop"), cycles=t.get("major_cycles"),
                   components=t.get("iterations"), **{k: t.get("seconds", {}).get(k)
                                                      for k in ("invert", "deconvolve", "predict")})
    elif kv:
        num = lambda k: float(kv[k]) if k in kv else 0.0  # noqa: E731
        row.update(first=num("read") + num("weights") + num("invert"), invert=num("invert"))
    return row


def compare(folder, ref, name, mode, keep):
    """max |a - b| / max |a| of every file ref-* against name-*: (Δ image, Δ any, its file, note)."""
    import numpy as np
    key = "-dirty.fits" if mode == "dirty" else "-image.fits"
    worst_key, worst, worst_file, missing = None, None, "", []
    for f in sorted(folder.glob(f"{ref}-*.fits")):
        suffix = f.name[len(ref):]
        g = folder / f"{name}{suffix}"
        if not g.exists():
            missing.append(suffix.lstrip("-"))
            continue
        a, b = bench.read_fits(f), bench.read_fits(g)
        if a.shape != b.shape:
            missing.append(suffix.lstrip("-") + " (shape)")
            continue
        diff, peak = float(np.max(np.abs(a - b))), float(np.max(np.abs(a)))
        rel = diff / peak if peak > 0 else (0.0 if diff == 0 else float("inf"))
        if suffix.endswith(key):
            worst_key = max(worst_key or 0.0, rel)
        if worst is None or rel > worst:
            worst, worst_file = rel, suffix.lstrip("-")
        if not keep:
            g.unlink()
    if not keep:
        for g in folder.glob(f"{name}-*.fits"):
            g.unlink()
    return worst_key, worst, worst_file, (f"missing {', '.join(missing)}" if missing else "")


def fmt(value, form=".2f"):
    return "" if value is None else format(value, form)


def table(rows):
    lines = ["| mode | -max-gpus | GPUs used | wall [s] | first inversion [s] | loop [s] | invert [s] | "
             "deconvolve [s] | predict [s] | cycles | components | Δ image / peak | Δ any / peak (file) | note |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    # Per mode, by -max-gpus, the repeat after its first run.
    for r in sorted(rows, key=lambda r: (MODES.index(r["mode"]), r["asked"], bool(r.get("repeat")))):
        asked = f"{r['asked']}" + (" (again)" if r.get("repeat") else "")
        if r.get("code") is None and r.get("skipped"):
            lines.append(f"| {r['mode']} | {asked} | | | | | | | | | | | | {r['skipped']} |")
            continue
        wall = fmt(r.get("wall")) if r.get("code") is not None else f"> {r.get('wall', 0):.0f}"
        delta_any = "" if r.get("delta_any") is None else f"{r['delta_any']:.2e}" + (
            f" ({r.get('delta_file', '')})" if r["delta_any"] > 0 else " (every file)")
        delta_key = "" if r.get("delta_key") is None else f"{r['delta_key']:.2e}"
        if r.get("reference"):
            delta_key, delta_any = "reference", "reference"
        lines.append(f"| {r['mode']} | {asked} | {r.get('gpus', '')} | {wall} | {fmt(r.get('first'))} | "
                     f"{fmt(r.get('loop'))} | {fmt(r.get('invert'))} | {fmt(r.get('deconvolve'))} | "
                     f"{fmt(r.get('predict'))} | {r.get('cycles', '') if r.get('cycles') is not None else ''} | "
                     f"{r.get('components', '') if r.get('components') is not None else ''} | {delta_key} | "
                     f"{delta_any} | {r.get('note', '')} |")
    return "\n".join(lines)


def plan(modes, counts, repeat):
    """(mode, -max-gpus, repeat) in the order they run: per mode 1, the most, the rest; then 1 again;
    then split on the most and the rest."""
    order = [1] + sorted((g for g in counts if g != 1), reverse=True)
    runs = [(m, g, False) for m in modes if m != "split" for g in order]
    runs += [(m, 1, True) for m in modes if m != "split" for _ in range(repeat)]
    return runs + [("split", g, False) for g in order[1:] if "split" in modes]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--work", type=pathlib.Path, help="folder for the MS (kept) and the images")
    p.add_argument("--out", type=pathlib.Path, help="folder for the logs, rows JSON and table (default: WORK)")
    p.add_argument("--case", default="A", choices=tuple(bench.CASES))
    p.add_argument("--gpus", default="1,2,4", help="-max-gpus values (1,2,4; 1 always runs)")
    p.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {','.join(MODES)}")
    p.add_argument("--repeat", type=int, default=1, help="further -max-gpus 1 runs per mode (1)")
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="-j (usable cores)")
    p.add_argument("--device", default="gpu", help="gpuclean image's -device (gpu; cpu for a smoke run)")
    p.add_argument("--gpuclean", default=os.environ.get("GPUCLEAN_BINARY") or str(bench.SOURCE / "build" / "gpuclean"))
    p.add_argument("--run-timeout", type=float, default=120.0, help="seconds one run may take (120)")
    p.add_argument("--total-timeout", type=float, default=300.0, help="seconds for everything (300)")
    p.add_argument("--keep-images", action="store_true", help="keep every run's FITS files")
    p.add_argument("--table", type=pathlib.Path, help="print the table of a run's rows JSON and exit")
    args = p.parse_args(argv)
    if args.table:
        print(table(json.loads(args.table.read_text())["rows"]))
        return 0
    if not args.work:
        p.error("--work is needed")
    began = time.perf_counter()
    left = lambda: args.total_timeout - (time.perf_counter() - began)  # noqa: E731
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        p.error(f"--modes takes {', '.join(MODES)}")
    counts = sorted({int(g) for g in args.gpus.split(",") if g} | {1})
    folder = (args.work / args.case).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    out = (args.out or folder).resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    c = bench.case_settings(args.case, argparse.Namespace(**{k: None for k in (
        "size", "scale", "channels", "antennas", "hours", "integration", "radius", "fit", "sources", "gaussians")}))
    result = dict(case=args.case, settings={k: v for k, v in c.items() if k != "sky"}, threads=args.threads,
                  device=bench.device_text(), gpuclean=args.gpuclean, rows=[])
    try:
        sim_s, note = ensure_ms(c, folder, args.threads, max(10.0, min(180.0, left() - 30)))
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"image-gpus: {e}", flush=True)
        return 1
    result["simulation"] = note
    print(f"case {args.case}: {c['size']}^2, {c['channels']} channels, {c['rows']} rows; MS {note}; -j {args.threads}; "
          f"{left():.0f} s left", flush=True)
    ms = str(folder / "sim.ms")
    status = 0
    # One dirty run on every GPU asked for first, not in the table: the first process after the
    # MS is made pays for loading the binary and the libraries.
    code, wall, _ = bench.run_timed([args.gpuclean, "image", "-max-gpus", str(max(counts)), "-name", str(folder / "warmup")]
                                    + mode_options("dirty", c, args.threads, args.device) + [ms],
                                    out / "logs" / "warmup.log", max(5.0, min(args.run_timeout, left() - 60)), folder)
    print(f"warm-up (dirty, -max-gpus {max(counts)}): exit {code}, wall {wall:.2f} s", flush=True)
    for f in folder.glob("warmup-*.fits"):
        f.unlink()
    for mode, gpus, repeat in plan(modes, counts, args.repeat):
        name = f"{mode}-g{gpus}" + ("r" if repeat else "")
        while any(r["tag"] == name for r in result["rows"]):
            name += "r"
        row = dict(mode=mode, asked=gpus, repeat=repeat, tag=name)
        result["rows"].append(row)
        ref = f"{'joined' if mode == 'split' else mode}-g1"
        has_ref = any(r["tag"] == ref and r.get("code") == 0 for r in result["rows"])
        if left() < 20 or (name != ref and not has_ref):
            row["skipped"] = "skipped: the time is short" if left() < 20 else "skipped: no 1-GPU run to compare with"
            print(f"{name}: {row['skipped']}", flush=True)
            continue
        summary = None if mode == "dirty" else folder / f"{name}.json"
        if summary:
            summary.unlink(missing_ok=True)
        cmd = ([args.gpuclean, "image", "-max-gpus", str(gpus), "-name", str(folder / name)]
               + mode_options(mode, c, args.threads, args.device) + (["-json", str(summary)] if summary else []) + [ms])
        env = dict(os.environ, GPUCLEAN_SPLIT_JOINED="1") if mode == "split" else None
        code, wall, text = bench.run_timed(cmd, out / "logs" / f"{name}.log", min(args.run_timeout, left() - 10), folder,
                                           env=env)
        measure(row, code, wall, text, summary)
        if code == 0 and name == ref:
            row["reference"] = True
        elif code == 0:
            row["delta_key"], row["delta_any"], row["delta_file"], missing = compare(folder, ref, name, mode,
                                                                                     args.keep_images)
            row["note"] = "; ".join(n for n in (row.get("note", ""), missing) if n)
        else:
            status = 1
        print(f"{name}: exit {code}, wall {wall:.2f} s, GPUs {row.get('gpus', '?')}"
              + (f", Δ any {row['delta_any']:.2e}" if row.get("delta_any") is not None else ""), flush=True)
        (out / "image_gpus.json").write_text(json.dumps(result, indent=1, default=str))
    (out / "image_gpus.json").write_text(json.dumps(result, indent=1, default=str))
    text = table(result["rows"])
    (out / "image_gpus.md").write_text(text + "\n")
    gpu, cpu, cores, usable = result["device"]
    print(f"\n{gpu}; {cpu}, {cores} cores ({usable} usable); gpuclean {args.gpuclean}; "
          f"{time.perf_counter() - began:.0f} s in all\n{text}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
