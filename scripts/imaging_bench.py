#!/usr/bin/env python3
"""Imaging benchmark (issue 35; not a timed test): `gpuclean image` against WSClean on the same
simulated MeerKAT MeasurementSet and the same cores: time per inversion and per prediction,
visibilities per second, and the MFS dirty image's difference from WSClean's.

    scripts/imaging_bench.py --work /tmp/ib [--case A|B|C|all] [--threads 16] [--json out.json]
    scripts/imaging_bench.py --work /tmp/ib --case A --size 512 --hours 1 --integration 600 --antennas 16
    scripts/imaging_bench.py --work /tmp/ib --case all --dry-run
    scripts/imaging_bench.py --clean --work /tmp/ib --case A|C|T [--device gpu] [--skip wsclean,hook]

--clean (issue 36, scripts/imaging_clean_bench.py): gpuclean image, WSClean + gpuclean's hook and
WSClean alone deconvolving the case's MS with the same options (multiscale, joined channels, a
spectral fit, auto-threshold 3, auto-mask 5, -mgain 0.8): wall time, each major cycle's stages,
MFS residual RMS, model flux and each truth source's recovered flux. Case T (512^2 x 2 channels)
is a smoke run for a machine without a GPU. The rest of this text is about the imaging runs.

Cases (docs/design/imaging-plan.md §7), all Briggs 0, `-niter 0 -make-psf -channels-out N`:
  A  2048^2 at 1.6", 4 channels over 1.36-1.44 GHz, 64 pads x 120 times (241 920 rows)
  B  8192^2 at 1.5", 8 channels over 1.36-1.52 GHz, 64 pads x 30 times over 8 h (60 480 rows)
  C  as B with 496 times (999 936 rows)
The sky (SKY_SIM) is the same 1007-component survey field (100 Gaussians of 5-60") in every case,
within 1500" of the centre in A (inside its 3277" image) and 3600" in B and C. The MS of a case is
made once with data/simulate_ms.py's simulate() by this interpreter, its direct Fourier transform
spread over --sim-workers processes by rows (each row's sum over sources is the serial code's);
WORK/CASE/sim.ms is kept and reused while its simulation options are unchanged (sim.json).

Runs (--runs), each stopped after --timeout s and reported as failed or timed out, never fatal:
  gpu          gpuclean image (the GPU path; run --gpu-repeats times, the table shows the last)
  wsc-wg-nosi  wsclean -use-wgridder -no-small-inversion  (the accuracy reference: the same exactness)
  wsc-wg       wsclean -use-wgridder                      (its default small inversion: what users get)
  gpu-cpu      gpuclean image GPUCLEAN_CPU_OPTIONS         (gpuclean's CPU path)
  wsc-predict  wsclean -predict -use-wgridder             (model images from the sky's truth list)
  gpu-predict  gpuclean image -predict                    (the same model images)
  wsc-ws       wsclean (its default w-stacking)
WSClean's times are its own "Inversion: H:M:S, prediction: H:M:S" line (3.1 prints it after each
output channel, cumulative; the last counts); gpuclean's are its line
"gpuclean image: timings read=.. weights=.. invert=.. predict=.. write=.. inversions=.. samples=..
gridding_vis_per_s=.." on stderr, or its wall time when that line is missing (marked "wall").
Visibilities per second: the MS's rows x channels, twice (dirty image and PSF) over the inversion
time, the same count for every imager; gpuclean's own gridding rate is shown beside it.
Accuracy: max |MFS dirty - wsc-wg-nosi's MFS dirty| / max |wsc-wg-nosi's|; for gpu-predict the
MODEL_DATA column's max |difference| / max |wsc-predict's|.
Needs numpy and python-casacore (the pack's Python: $WSC_PYTHON), wsclean on PATH (--wsclean) and
gpuclean ($GPUCLEAN_BINARY, else build/gpuclean; --gpuclean).
"""

import argparse
import json
import multiprocessing
import os
import pathlib
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time

SOURCE = pathlib.Path(__file__).resolve().parent.parent

# gpuclean's options for its CPU path and for prediction (the lead's names; change them here).
GPUCLEAN_CPU_OPTIONS = ["-device", "cpu"]
GPUCLEAN_GPU_OPTIONS = []
GPUCLEAN_PREDICT_OPTIONS = ["-predict"]

# One sky for all cases: hundreds of components, a tenth of them Gaussians (data/msim/sky.py survey_sky).
SKY_SIM = {"sky": "survey", "sources": 1007, "gaussians": 100, "noise": 0.01, "seed": 1}
# fit: the -fit-spectral-pol terms of --clean (issue 36: 2 at 2048^2 x 4, 4 at 8192^2 x 8). T is a
# smoke case for a machine without a GPU (not in "all"), with a sky of its own.
CASES = {
    "A": dict(size=2048, scale=1.6, channels=4, freq=1.40e9, bandwidth=80e6, antennas=64, hours=4.0,
              integration=120.0, radius=1500.0, fit=2),
    "B": dict(size=8192, scale=1.5, channels=8, freq=1.44e9, bandwidth=160e6, antennas=64, hours=8.0,
              integration=960.0, radius=3600.0, fit=4),
    "C": dict(size=8192, scale=1.5, channels=8, freq=1.44e9, bandwidth=160e6, antennas=64, hours=8.0,
              integration=28800 / 496, radius=3600.0, fit=4),
    "T": dict(size=512, scale=2.0, channels=2, freq=1.40e9, bandwidth=80e6, antennas=32, hours=2.0,
              integration=300.0, radius=400.0, fit=2, sky=dict(sources=60, gaussians=6)),
}
RUNS = ("gpu", "wsc-wg-nosi", "wsc-wg", "gpu-cpu", "wsc-predict", "gpu-predict", "wsc-ws")
REFERENCE = "wsc-wg-nosi"
LABEL = {
    "gpu": "gpuclean image (GPU)",
    "wsc-wg-nosi": "wsclean -use-wgridder -no-small-inversion",
    "wsc-wg": "wsclean -use-wgridder",
    "gpu-cpu": "gpuclean image (CPU path)",
    "wsc-predict": "wsclean -predict -use-wgridder",
    "gpu-predict": "gpuclean image -predict",
    "wsc-ws": "wsclean (w-stacking)",
}

WSC_TIMES = re.compile(r"Inversion: (\d+):(\d+):([0-9.]+), prediction: (\d+):(\d+):([0-9.]+)")
WSC_SMALL = re.compile(r"Minimal inversion size: \d+ x \d+, using optimal: (\d+) x (\d+)")
WSC_LAYERS = re.compile(r"Suggested number of w-layers: (\d+)")
GPU_TIMES = re.compile(r"gpuclean image: timings (.*)")


# ---------------------------------------------------------------- simulation (in a child process)

_JOB = None  # (serial predict, sources, uvw, freqs, ref): set before the pool forks


def _predict_rows(bounds):
    predict, sources, uvw, freqs, ref = _JOB
    return predict(sources, uvw[bounds[0]:bounds[1]], freqs, ref)


def simulate_main(argv):
    """`imaging_bench.py simulate-ms WORKERS SIMULATE_MS_ARGS...`: data/simulate_ms.py's main() with
    msim.sky.predict spread over WORKERS forked processes by blocks of rows."""
    workers, sim_argv = int(argv[0]), argv[1:]
    sys.path.insert(0, str(SOURCE / "data"))
    import numpy as np
    import simulate_ms
    from msim import sky
    serial = sky.predict

    def predict(sources, uvw, freqs, ref):
        global _JOB
        if workers <= 1 or len(uvw) < 4 * workers:
            return serial(sources, uvw, freqs, ref)
        _JOB = (serial, sources, uvw, freqs, ref)
        edges = np.linspace(0, len(uvw), 4 * workers + 1).astype(int)
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_predict_rows, list(zip(edges[:-1], edges[1:])))
        _JOB = None
        return np.concatenate(parts)

    sky.predict = predict  # simulate_ms.simulate() calls sky.predict
    simulate_ms.main(sim_argv)
    return 0


# ---------------------------------------------------------------- small helpers

def read_fits(path, header=False):
    """The primary array of a FITS file (BITPIX -32/-64/16/32, big-endian), squeezed: enough for
    WSClean's and gpuclean's images without astropy. With header=True: (array, {key: text})."""
    import numpy as np
    with open(path, "rb") as f:
        cards, blocks = {}, 0
        while True:
            block = f.read(2880)
            if len(block) < 2880:
                raise ValueError(f"{path}: truncated FITS header")
            blocks += 1
            for i in range(0, 2880, 80):
                card = block[i:i + 80].decode("ascii", errors="replace")
                key = card[:8].strip()
                if key == "END":
                    break
                if card[8:10] == "= ":
                    cards[key] = card[10:].split("/")[0].strip()
            else:
                continue
            break
        bitpix, naxis = int(cards["BITPIX"]), int(cards["NAXIS"])
        shape = [int(cards[f"NAXIS{i}"]) for i in range(naxis, 0, -1)]
        dtype = {-32: ">f4", -64: ">f8", 16: ">i2", 32: ">i4"}[bitpix]
        count = int(np.prod(shape))
        data = np.frombuffer(f.read(count * abs(bitpix) // 8), dtype=dtype, count=count).reshape(shape)
    scale, zero = float(cards.get("BSCALE", 1)), float(cards.get("BZERO", 0))
    image = (data.astype(np.float64) * scale + zero).squeeze()
    return (image, cards) if header else image


def fits_card(key, value, comment=""):
    if isinstance(value, str):
        text = f"'{value:<8}'"
        text = f"{text:<20}"
    elif isinstance(value, bool):
        text = f"{'T' if value else 'F':>20}"
    else:
        text = f"{value:>20}" if isinstance(value, int) else f"{value:>20.12G}"
    card = f"{key:<8}= {text}" + (f" / {comment}" if comment else "")
    return f"{card:<80}"[:80]


def write_model_fits(path, image, size, scale_arcsec, ra_deg, dec_deg, freq_hz, width_hz):
    """A WSClean-style model image (RA---SIN, DEC--SIN, FREQ, STOKES; the centre at pixel size/2)."""
    import numpy as np
    cards = [fits_card("SIMPLE", True), fits_card("BITPIX", -32), fits_card("NAXIS", 4),
             fits_card("NAXIS1", size), fits_card("NAXIS2", size), fits_card("NAXIS3", 1), fits_card("NAXIS4", 1),
             fits_card("BUNIT", "JY/PIXEL"), fits_card("EQUINOX", 2000.0),
             fits_card("CTYPE1", "RA---SIN"), fits_card("CRPIX1", float(size // 2 + 1)),
             fits_card("CRVAL1", float(ra_deg)), fits_card("CDELT1", -scale_arcsec / 3600), fits_card("CUNIT1", "deg"),
             fits_card("CTYPE2", "DEC--SIN"), fits_card("CRPIX2", float(size // 2 + 1)),
             fits_card("CRVAL2", float(dec_deg)), fits_card("CDELT2", scale_arcsec / 3600), fits_card("CUNIT2", "deg"),
             fits_card("CTYPE3", "FREQ"), fits_card("CRPIX3", 1.0), fits_card("CRVAL3", float(freq_hz)),
             fits_card("CDELT3", float(width_hz)), fits_card("CUNIT3", "Hz"),
             fits_card("CTYPE4", "STOKES"), fits_card("CRPIX4", 1.0), fits_card("CRVAL4", 1.0),
             fits_card("CDELT4", 1.0), f"{'END':<80}"]
    header = "".join(cards)
    header += " " * (-len(header) % 2880)
    data = np.ascontiguousarray(image, dtype=">f4").tobytes()
    with open(path, "wb") as f:
        f.write(header.encode("ascii"))
        f.write(data)
        f.write(b"\0" * (-len(data) % 2880))


def hms(h, m, s):
    return int(h) * 3600 + int(m) * 60 + float(s)


def device_text():
    gpu = "no GPU (nvidia-smi absent)"
    if shutil.which("nvidia-smi"):
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True)
        gpu = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "nvidia-smi failed"
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return gpu, cpu, os.cpu_count(), len(os.sched_getaffinity(0))


def run_timed(cmd, log, timeout, cwd, env=None, stamps=None):
    """Runs cmd (its own session) with its output on a pseudo-terminal, so that WSClean's lines come
    as it prints them (to a file it buffers them, and a stopped run would lose its last progress
    lines), each written to `log` with its time; stops it after `timeout` s. Returns (exit code, or
    None if stopped; wall seconds; the output's text). `stamps`, a list, gets (seconds, line) each."""
    master, slave = pty.openpty()
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True,
                                start_new_session=True)
    except OSError as e:
        os.close(master)
        os.close(slave)
        pathlib.Path(log).write_text(f"$ {shlex.join(cmd)}\nimaging_bench: cannot start: {e}\n")
        return -1, 0.0, f"cannot start: {e}"
    os.close(slave)
    lines, pending, stopped = [], b"", False
    with open(log, "w") as out:
        out.write("$ " + shlex.join(cmd) + "\n")
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
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
            if not chunk:
                break
            now = time.perf_counter() - start
            pending += chunk
            *done, pending = pending.split(b"\n")
            for raw in done:
                text = raw.decode(errors="replace").rstrip("\r")
                lines.append(text)
                if stamps is not None:
                    stamps.append((now, text))
                out.write(f"{now:10.3f} {text}\n")
        if pending:
            lines.append(pending.decode(errors="replace").rstrip("\r"))
            if stamps is not None:
                stamps.append((time.perf_counter() - start, lines[-1]))
            out.write(f"{time.perf_counter() - start:10.3f} {lines[-1]}\n")
        if stopped:
            out.write(f"{time.perf_counter() - start:10.3f} imaging_bench: stopped after {timeout:.0f} s\n")
    os.close(master)
    code = None if stopped else proc.wait()
    return code, time.perf_counter() - start, "\n".join(lines)


# ---------------------------------------------------------------- the cases

def case_settings(name, args):
    c = dict(CASES[name])
    for key in ("size", "scale", "channels", "antennas", "hours", "integration", "radius", "fit"):
        if getattr(args, key) is not None:
            c[key] = getattr(args, key)
    sky_sim = dict(SKY_SIM, **c.pop("sky", {}))
    for key in ("sources", "gaussians"):
        if getattr(args, key) is not None:
            sky_sim[key] = getattr(args, key)
    c["sky"] = sky_sim
    c["times"] = max(1, round(c["hours"] * 3600 / c["integration"]))
    c["rows"] = c["antennas"] * (c["antennas"] - 1) // 2 * c["times"]
    c["samples"] = c["rows"] * c["channels"]
    return c


def sim_args(c, ms):
    s = c["sky"]
    return ["--out", str(ms), "--overwrite", "--sky", s["sky"], "--sources", str(s["sources"]),
            "--gaussians", str(s["gaussians"]), "--radius", f"{c['radius']:g}", "--antennas", str(c["antennas"]),
            "--hours", f"{c['hours']:g}", "--integration", repr(c["integration"]), "--channels", str(c["channels"]),
            "--freq", f"{c['freq']:g}", "--bandwidth", f"{c['bandwidth']:g}", "--noise", f"{s['noise']:g}",
            "--seed", str(s["seed"])]


def ensure_ms(c, folder, args):
    """WORK/CASE/sim.ms, simulated unless it exists with the same options; returns (seconds or None if
    reused, note)."""
    ms, stamp = folder / "sim.ms", folder / "sim.json"
    wanted = sim_args(c, ms)
    if ms.exists() and stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return None, "reused"
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "simulate-ms", str(args.sim_workers)] + wanted
    if args.dry_run:
        print("$ " + shlex.join(cmd))
        return None, "dry run"
    stamp.unlink(missing_ok=True)
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(f"the simulation failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-600:]}")
    stamp.write_text(json.dumps(wanted))
    print(r.stdout.strip(), flush=True)
    return seconds, f"simulated in {seconds:.1f} s on {args.sim_workers} processes"


def ms_facts(ms):
    """Rows, channels (their frequencies and width) and the phase centre of the simulated MS."""
    import numpy as np
    from casacore.tables import table
    with table(str(ms), ack=False) as t:
        rows = t.nrows()
    with table(str(ms / "SPECTRAL_WINDOW"), ack=False) as spw:
        freqs = np.asarray(spw.getcol("CHAN_FREQ")[0])
        widths = np.asarray(spw.getcol("CHAN_WIDTH")[0])
    with table(str(ms / "FIELD"), ack=False) as f:
        ra, dec = np.degrees(f.getcol("PHASE_DIR")[0, 0])
    return dict(rows=rows, freqs=freqs, widths=widths, ra=float(ra) % 360, dec=float(dec))


def make_models(c, folder, facts):
    """model-000K-model.fits per channel: the truth list's components at their nearest pixels (a
    Gaussian as a point of its flux), fluxes at the channel's frequency. Returns the -name prefix."""
    import numpy as np
    sys.path.insert(0, str(SOURCE / "data"))
    from msim.sky import read_truth_csv
    import csv
    truth_path = folder / "sim-truth.csv"
    truth = read_truth_csv(truth_path)
    with open(truth_path, newline="") as f:
        ref = float(next(csv.DictReader(f))["ref_freq_hz"])
    size, scale = c["size"], c["scale"]
    prefix = folder / "model"
    for k, (freq, width) in enumerate(zip(facts["freqs"], facts["widths"])):
        image = np.zeros((size, size), dtype=np.float32)
        for s in truth:
            x, y = round(size // 2 - s.l_arcsec / scale), round(size // 2 + s.m_arcsec / scale)
            if 0 <= x < size and 0 <= y < size:
                image[y, x] += s.flux_jy * (freq / ref) ** s.spectral_index
        name = f"{prefix}-{k:04d}-model.fits" if len(facts["freqs"]) > 1 else f"{prefix}-model.fits"
        write_model_fits(name, image, size, scale, facts["ra"], facts["dec"], freq, width)
    return prefix


def commands(c, folder, args):
    """run name -> command line."""
    base = ["-size", str(c["size"]), str(c["size"]), "-scale", f"{c['scale']:g}asec", "-weight", "briggs", "0",
            "-niter", "0", "-make-psf", "-channels-out", str(c["channels"]), "-j", str(args.threads)]
    predict = ["-size", str(c["size"]), str(c["size"]), "-scale", f"{c['scale']:g}asec",
               "-channels-out", str(c["channels"]), "-j", str(args.threads)]
    ms, model = str(folder / "sim.ms"), str(folder / "model")
    name = lambda run: ["-name", str(folder / run)]  # noqa: E731
    return {
        "gpu": [args.gpuclean, "image"] + GPUCLEAN_GPU_OPTIONS + name("gpu") + base + [ms],
        "wsc-wg-nosi": [args.wsclean] + name("wsc-wg-nosi") + base + ["-use-wgridder", "-no-small-inversion", ms],
        "wsc-wg": [args.wsclean] + name("wsc-wg") + base + ["-use-wgridder", ms],
        "gpu-cpu": [args.gpuclean, "image"] + args.cpu_options + name("gpu-cpu") + base + [ms],
        "wsc-predict": [args.wsclean, "-predict", "-name", model] + predict + ["-use-wgridder", ms],
        "gpu-predict": [args.gpuclean, "image"] + GPUCLEAN_PREDICT_OPTIONS + GPUCLEAN_GPU_OPTIONS
        + ["-name", model] + predict + [ms],
        "wsc-ws": [args.wsclean] + name("wsc-ws") + base + [ms],
    }


def model_data(ms):
    import numpy as np
    from casacore.tables import table
    with table(str(ms), ack=False) as t:
        return np.asarray(t.getcol("MODEL_DATA")) if "MODEL_DATA" in t.colnames() else None


def measure(run, code, wall, log, c, folder):
    """One run's figures from its exit, wall time and log."""
    r = dict(run=run, label=LABEL[run], code=code, wall=wall, invert=None, predict=None, inversions=None,
             predictions=None, source=None, gridding_vis_per_s=None, stages=None, note="")
    if code is None or code != 0:
        tail = [line for line in log.splitlines() if line.strip()][-1:] or [""]
        r["note"] = f"timed out after {wall:.0f} s" if code is None else f"exit {code}: {tail[0][:160]}"
        times = WSC_TIMES.findall(log) if run.startswith("wsc") else []
        if times and not run.endswith("predict"):
            # WSClean prints its cumulative line after each output channel (its PSF and dirty image):
            # the channels it finished give the cost per inversion (each channel grids every row once).
            done = len(times)
            r["invert"] = partial = hms(*times[-1][:3])
            r["inversions"] = 2 * done
            r["per_inversion"] = partial / (2 * done)
            r["vis_per_s"] = 2 * done * c["samples"] / c["channels"] / partial
            r["source"] = f"WSClean's log, {done} of {c['channels']} channels"
        return r
    predicting = run.endswith("predict")
    if run.startswith("wsc"):
        times = WSC_TIMES.findall(log)
        if times:
            *inv, = times[-1]
            r["invert"], r["predict"] = hms(*inv[:3]), hms(*inv[3:])
            r["source"] = "WSClean's log"
        notes = []
        if m := WSC_SMALL.search(log):
            notes.append(f"small inversion at {m.group(1)}x{m.group(2)}")
        elif "not using optimization" in log:
            notes.append("small inversion not used (resolution already below the beam)")
        if m := WSC_LAYERS.search(log):
            notes.append(f"{m.group(1)} w-layers")
        r["note"] = "; ".join(notes)
    else:
        lines = GPU_TIMES.findall(log)
        if lines:
            kv = dict(p.split("=", 1) for p in lines[-1].split() if "=" in p)
            num = lambda k: float(kv[k]) if k in kv else None  # noqa: E731
            r["stages"] = {k: num(k) for k in ("read", "weights", "invert", "predict", "write")}
            r["invert"], r["predict"] = num("invert"), num("predict")
            r["inversions"] = int(num("inversions")) if kv.get("inversions") else None
            r["gridding_vis_per_s"] = num("gridding_vis_per_s")
            r["gpuclean_samples"] = int(num("samples")) if kv.get("samples") else None
            r["source"] = "gpuclean's timings line"
        else:
            # No timings line: the whole run counts (reading and writing included).
            r["source"] = "wall"
            if predicting:
                r["predict"] = wall
            else:
                r["invert"] = wall
    if predicting:
        r["predictions"] = c["channels"]
        r["invert"] = None
        if r["predict"]:
            r["per_prediction"] = r["predict"] / r["predictions"]
            r["vis_per_s"] = c["samples"] / r["predict"]
    else:
        r["inversions"] = r["inversions"] or 2 * c["channels"]  # a dirty image and a PSF per output channel
        if r["invert"]:
            r["per_inversion"] = r["invert"] / r["inversions"]
            r["vis_per_s"] = 2 * c["samples"] / r["invert"]
    return r


def mfs_dirty(folder, run, channels):
    p = folder / (f"{run}-MFS-dirty.fits" if channels > 1 else f"{run}-dirty.fits")
    return read_fits(p) if p.exists() else None


def run_case(name, args, began, device):
    import numpy as np
    c = case_settings(name, args)
    folder = args.work / name
    folder.mkdir(parents=True, exist_ok=True)
    result = dict(case=name, settings={k: v for k, v in c.items()}, runs={}, notes=[])
    try:
        sim_s, sim_note = ensure_ms(c, folder, args)
    except RuntimeError as e:
        print(f"case {name}: {e}", flush=True)
        result["notes"].append(str(e))
        return result
    result["simulation_s"], result["simulation"] = sim_s, sim_note
    cmds = commands(c, folder, args)
    if not args.dry_run:
        facts = ms_facts(folder / "sim.ms")
        result["ms"] = dict(rows=facts["rows"], channels=len(facts["freqs"]),
                            freq_range_hz=[float(facts["freqs"][0] - facts["widths"][0] / 2),
                                           float(facts["freqs"][-1] + facts["widths"][-1] / 2)])
        if facts["rows"] != c["rows"] or len(facts["freqs"]) != c["channels"]:
            result["notes"].append(f"the MS has {facts['rows']} rows x {len(facts['freqs'])} channels, "
                                   f"not the expected {c['rows']} x {c['channels']}")
        c["rows"], c["samples"] = facts["rows"], facts["rows"] * len(facts["freqs"])
        if any(r.endswith("predict") for r in args.runs):
            make_models(c, folder, facts)
    reference = None
    for run in [r for r in RUNS if r in args.runs]:
        repeats = args.gpu_repeats if run == "gpu" else 1
        for attempt in range(repeats):
            cmd = cmds[run]
            if args.dry_run:
                print("$ " + shlex.join(cmd))
                continue
            left = args.total_timeout - 15 - (time.perf_counter() - began) if args.total_timeout else args.timeout
            timeout = min(args.timeout, left)
            if timeout < 5:
                result["runs"][run] = dict(run=run, label=LABEL[run], code=None, wall=0.0,
                                           note="not run: --total-timeout reached")
                print(f"{name} {run}: not run (--total-timeout)", flush=True)
                break
            log = folder / (f"{run}.log" if attempt == repeats - 1 else f"{run}-{attempt + 1}.log")
            code, wall, text = run_timed(cmd, log, timeout, folder)
            r = measure(run, code, wall, text, c, folder)
            if attempt < repeats - 1:
                result.setdefault("first_runs", {})[run] = r
            result["runs"][run] = r
            print(f"{name} {run}: exit {code}, wall {wall:.2f} s, " + (
                f"per inversion {r['per_inversion']:.4f} s" if r.get("per_inversion") else
                f"per prediction {r['per_prediction']:.4f} s" if r.get("per_prediction") else "no timing")
                + (f" ({r['note']})" if r.get("note") else ""), flush=True)
        if args.dry_run:
            continue
        r = result["runs"].get(run, {})
        if r.get("code") != 0:
            continue
        # Accuracy against the reference, while the images are at hand.
        if run.endswith("predict"):
            data = model_data(folder / "sim.ms")
            if run == "wsc-predict" and data is not None:
                np.save(folder / "wsc-predict-model-data.npy", data.astype(np.complex64))
                # Without the column, gpuclean's prediction is compared with what it wrote itself.
                from casacore.tables import table
                with table(str(folder / "sim.ms"), readonly=False, ack=False) as t:
                    t.removecols(["MODEL_DATA"])
            elif run == "gpu-predict" and data is not None and (folder / "wsc-predict-model-data.npy").exists():
                ref = np.load(folder / "wsc-predict-model-data.npy")
                if ref.shape == data.shape and "wsc-predict" in result["runs"] and \
                        result["runs"]["wsc-predict"].get("code") == 0:
                    r["accuracy"] = float(np.max(np.abs(data - ref)) / np.max(np.abs(ref)))
            continue
        image = mfs_dirty(folder, run, c["channels"])
        if run == REFERENCE:
            reference = image
        if image is not None and reference is not None and image.shape == reference.shape:
            r["accuracy"] = float(np.max(np.abs(image - reference)) / np.max(np.abs(reference)))
        if not args.keep_images:
            # 8192^2 x 8 channels is ~7 GB of images a WSClean run: only the MFS dirty image is compared.
            keep = folder / (f"{run}-MFS-dirty.fits" if c["channels"] > 1 else f"{run}-dirty.fits")
            mine = re.compile(rf"{re.escape(run)}-(\d{{4}}-|MFS-)?(dirty|psf|image)\.fits")  # not wsc-wg-nosi's for wsc-wg
            for f in folder.glob("*.fits"):
                if mine.fullmatch(f.name) and f != keep:
                    f.unlink()
    # gpuclean's runs before the reference: compare them now.
    for run in ("gpu", "gpu-cpu"):
        r = result["runs"].get(run)
        if r and r.get("code") == 0 and "accuracy" not in r and reference is not None:
            image = mfs_dirty(folder, run, c["channels"])
            if image is not None and image.shape == reference.shape:
                r["accuracy"] = float(np.max(np.abs(image - reference)) / np.max(np.abs(reference)))
            elif image is not None:
                r["note"] = (r.get("note", "") + f"; MFS dirty shape {image.shape} against {reference.shape}").strip("; ")
    return result


# ---------------------------------------------------------------- the report

def fmt(value, form=".3f", unit=""):
    return "" if value is None else format(value, form) + unit


def rate(value):
    return "" if value is None else f"{value:.3g}".replace("e+0", "e").replace("e+", "e")


def speedup(r, ref):
    mine = r.get("per_prediction") if r["run"].endswith("predict") else r.get("per_inversion")
    theirs = ref.get("per_prediction") if r["run"].endswith("predict") else ref.get("per_inversion")
    if not mine or not theirs:
        return ""
    return f"{theirs / mine:.2f}×"


def sky_text(c):
    s = c["sky"]
    return (f"{s['sources']} components ({s['sources'] - s['gaussians']} points, {s['gaussians']} Gaussians of "
            f"5–60\"), 0.5 mJy–0.5 Jy, within {c['radius']:g}\" of the centre, noise {s['noise']:g} Jy")


def report(results, args, device):
    gpu, cpu, cores, usable = device
    lines = []
    for res in results:
        c = res["settings"]
        ms = res.get("ms", {})
        rows, chans = ms.get("rows", c["rows"]), ms.get("channels", c["channels"])
        lo, hi = ms.get("freq_range_hz", [c["freq"] - c["bandwidth"] / 2, c["freq"] + c["bandwidth"] / 2])
        lines += [f"\n### Case {res['case']}: {c['size']}² at {c['scale']:g}″, {chans} channels "
                  f"({lo / 1e9:.3f}–{hi / 1e9:.3f} GHz), Briggs 0",
                  f"Device: {gpu}; CPU: {cpu}, {cores} cores ({usable} usable), WSClean and gpuclean with "
                  f"`-j {args.threads}`.",
                  f"MS: {rows:,} rows ({c['antennas']} MeerKAT pads × {c['times']} times of {c['integration']:.4g} s), "
                  f"{rows * chans:,} samples (rows × channels), XX and YY; sky: {sky_text(c)}; "
                  f"{res.get('simulation', '')}.",
                  f"Options: `-size {c['size']} {c['size']} -scale {c['scale']:g}asec -weight briggs 0 -niter 0 "
                  f"-make-psf -channels-out {c['channels']} -j {args.threads}` (+ each run's own); prediction: "
                  "the sky's components as points at their nearest pixels, per channel.",
                  "",
                  "| run | wall [s] | inversion / prediction [s] | per inversion [s] | per prediction [s] | "
                  "vis/s | gpuclean's gridding vis/s | speed-up vs -use-wgridder -no-small-inversion | "
                  "speed-up vs -use-wgridder | max \\|Δ\\| / peak | timed by | note |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
        runs = res["runs"]
        ref_nosi, ref_wg = runs.get("wsc-wg-nosi", {}), runs.get("wsc-wg", {})
        ref_pred = runs.get("wsc-predict", {})
        for run in RUNS:
            r = runs.get(run)
            if r is None:
                continue
            predicting = run.endswith("predict")
            total = r.get("predict") if predicting else r.get("invert")
            s1 = speedup(r, ref_pred) if predicting else speedup(r, ref_nosi)
            s2 = "" if predicting else speedup(r, ref_wg)
            acc = r.get("accuracy")
            acc_text = "" if acc is None else f"{acc:.2e}" + (" (MODEL_DATA)" if predicting else "")
            if run == REFERENCE and r.get("code") == 0:
                acc_text = "reference"
            note = r.get("note", "")
            if predicting and s1:
                note = (note + "; speed-up against wsclean -predict -use-wgridder").strip("; ")
            wall = fmt(r.get("wall"), ".2f") if r.get("code") is not None else f"> {r.get('wall', 0):.0f}"
            lines.append(f"| {r['label']} | {wall} | {fmt(total)} | {fmt(r.get('per_inversion'), '.4f')} | "
                         f"{fmt(r.get('per_prediction'), '.4f')} | {rate(r.get('vis_per_s'))} | "
                         f"{rate(r.get('gridding_vis_per_s'))} | {s1} | {s2} | {acc_text} | {r.get('source') or ''} | "
                         f"{note} |")
        first = res.get("first_runs", {}).get("gpu")
        if first:
            lines.append(f"\ngpuclean's first GPU run (CUDA's caches empty): wall {first['wall']:.2f} s, per inversion "
                         f"{fmt(first.get('per_inversion'), '.4f')} s; the table shows run {args.gpu_repeats}.")
        for run in ("gpu", "gpu-cpu", "gpu-predict"):
            st = runs.get(run, {}).get("stages")
            if st:
                lines.append(f"{LABEL[run]} stages [s]: " + ", ".join(f"{k} {v:.3f}" for k, v in st.items() if v is not None))
        for note in res["notes"]:
            lines.append(f"note: {note}")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--work", required=True, type=pathlib.Path, help="folder for the MSs (kept between runs) and images")
    p.add_argument("--case", default="A", choices=("A", "B", "C", "T", "all"),
                   help="which case (A; all: A, B and C; T: 512^2 x 2 channels, a smoke run without a GPU)")
    p.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated subset of {','.join(RUNS)} (all)")
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="-j of every run (usable cores)")
    p.add_argument("--sim-workers", type=int, default=len(os.sched_getaffinity(0)),
                   help="processes for the simulation's Fourier transform (usable cores)")
    p.add_argument("--timeout", type=float, default=400.0, help="seconds one run may take (400)")
    p.add_argument("--total-timeout", type=float, help="seconds for the whole script; runs that would pass it are "
                                                       "cut short or not run (none)")
    p.add_argument("--gpu-repeats", type=int, help="runs of gpuclean's GPU path (--clean: of gpuclean image); the "
                                                   "last is shown (2; --clean 1)")
    p.add_argument("--gpuclean", default=os.environ.get("GPUCLEAN_BINARY") or
                   str(SOURCE / os.environ.get("GPUCLEAN_BUILD", "build") / "gpuclean"),
                   help="gpuclean binary ($GPUCLEAN_BINARY, else $GPUCLEAN_BUILD/gpuclean, else build/gpuclean)")
    p.add_argument("--wsclean", default=shutil.which("wsclean") or "wsclean", help="wsclean binary (on PATH)")
    p.add_argument("--cpu-options", default=" ".join(GPUCLEAN_CPU_OPTIONS),
                   help=f"gpuclean's options for its CPU path ('{' '.join(GPUCLEAN_CPU_OPTIONS)}')")
    p.add_argument("--keep-images", action="store_true",
                   help="keep every image (default: each run's MFS dirty image only; B and C write ~7 GB a run)")
    p.add_argument("--json", type=pathlib.Path, help="write every figure to this JSON file")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    cl = p.add_argument_group("--clean: WSClean alone, WSClean + gpuclean's hook and gpuclean image, deconvolving "
                              "(scripts/imaging_clean_bench.py)")
    cl.add_argument("--clean", action="store_true", help="run the deconvolution benchmark instead of --runs")
    cl.add_argument("--niter", type=int, default=1000000, help="-niter of all three runs (1000000: the thresholds stop)")
    cl.add_argument("--nmiter", type=int, help="-nmiter of all three runs (WSClean's default: 20)")
    cl.add_argument("--skip", default="", help="comma-separated runs left out: wsclean, hook, gpuclean")
    cl.add_argument("--device", choices=("auto", "gpu", "cpu"), help="gpuclean image's -device (none given: its default)")
    cl.add_argument("--hook-options", default="", help="GPUCLEAN_OPTIONS for the hook's run (none: it takes "
                                                       "WSClean's options), e.g. '--device cpu'")
    cl.add_argument("--gpuclean-options", default="", help="further options of gpuclean image's run only, e.g. "
                                                           "'-mf-weighting' (none)")
    cl.add_argument("--fit", type=int, help="-fit-spectral-pol terms (the case's: A and T 2, B and C 4)")
    cl.add_argument("--show-sources", type=int, default=15, help="rows of the per-source table, brightest first (15)")
    small = p.add_argument_group("overrides of the case's settings (for a quick smoke run)")
    for key, kind in (("size", int), ("scale", float), ("channels", int), ("antennas", int), ("hours", float),
                      ("integration", float), ("radius", float), ("sources", int), ("gaussians", int)):
        small.add_argument(f"--{key}", type=kind)
    args = p.parse_args(argv)
    args.runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = [r for r in args.runs if r not in RUNS]
    if unknown:
        p.error(f"unknown runs {', '.join(unknown)}; choose from {', '.join(RUNS)}")
    args.cpu_options = args.cpu_options.split()
    args.gpu_repeats = args.gpu_repeats or (1 if args.clean else 2)
    args.skip = [r.strip() for r in args.skip.split(",") if r.strip()]
    if any(r not in ("wsclean", "hook", "gpuclean") for r in args.skip):
        p.error("--skip takes wsclean, hook and gpuclean")
    if (args.skip or args.device or args.hook_options or args.gpuclean_options or args.fit or args.nmiter) \
            and not args.clean:
        p.error("--skip, --device, --hook-options, --gpuclean-options, --fit and --nmiter belong to --clean")
    for key in ("threads", "sim_workers", "timeout", "gpu_repeats", "niter"):
        if getattr(args, key) <= 0:
            p.error(f"--{key.replace('_', '-')} must be positive")
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["simulate-ms"]:
        return simulate_main(argv[1:])
    began = time.perf_counter()
    args = parse_args(argv)
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    device = device_text()
    print(f"device: {device[0]}; CPU: {device[1]}, {device[2]} cores ({device[3]} usable); gpuclean {args.gpuclean}; "
          f"wsclean {args.wsclean}; python {sys.executable}", flush=True)
    names = ("A", "B", "C") if args.case == "all" else (args.case,)
    if args.clean:
        import imaging_clean_bench as clean  # beside this file
        results = [clean.run_case(sys.modules[__name__], name, args, began) for name in names]
    else:
        results = [run_case(name, args, began, device) for name in names]
    if args.dry_run:
        return 0
    print((clean.report(sys.modules[__name__], results, args, device) if args.clean else report(results, args, device)),
          flush=True)
    if args.json:
        def plain(o):
            return o.tolist() if hasattr(o, "tolist") else str(o)
        args.json.write_text(json.dumps(dict(device=dict(gpu=device[0], cpu=device[1], cores=device[2],
                                                         usable=device[3]), threads=args.threads, results=results),
                                        indent=1, default=plain))
    ok = all(r.get("code") == 0 or r.get("skipped") for res in results for r in res["runs"].values()) and \
        all(not res["notes"] for res in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
