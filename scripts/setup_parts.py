#!/usr/bin/env python3
"""Where GPU CLEAN runs' setup went, from gpuclean --json summaries (a cube's or a batch's).

For each file: the clean stage's seconds, the runs, and each setup part (stage_seconds.setup_parts)
summed over the runs, then its mean over a worker's first runs (those that made the worker's
resources or cuFFT plans) and over the later ones (fft_plans_made: a count, not ms). Every file
after the first is checked to have the first's planes and runs (rms, model flux, restored peak,
iterations, major cycles, peak residual). A part that grows with the GPUs while its runs stay the same
serialises between workers.

    scripts/setup_parts.py cube_gpus_1.json cube_gpus_4.json
"""
import json
import sys


def runs_of(j):
    if "observations" in j:  # a batch report
        return [r for o in j["observations"] for r in o.get("runs", [])]
    return j.get("runs", [])


def outcome(j):
    """What the run made, per plane and run: equal across GPU and worker counts when bit-identical."""
    runs = runs_of(j)
    planes = j.get("planes", [])
    return ([(p.get("rms_residual"), p.get("model_flux"), p.get("restored_peak")) for p in planes],
            [(r.get("iterations"), r.get("major_cycles"), r.get("peak_residual")) for r in runs])


def main(paths):
    reference = None
    for path in paths:
        j = json.load(open(path))
        if reference is None:
            reference = (path, outcome(j))
        else:
            print("%s: planes and runs %s those of %s" % (
                path, "equal" if outcome(j) == reference[1] else "DIFFER from", reference[0]))
        runs = runs_of(j)
        seconds = j.get("seconds", {})
        print("%s: %d runs, gpus %s, clean %.3f s, setup summed %.3f s" % (
            path, len(runs), j.get("gpus"), seconds.get("clean", float("nan")),
            sum(r["stage_seconds"]["setup"] for r in runs)))
        parts = [r["stage_seconds"].get("setup_parts") for r in runs]
        parts = [p for p in parts if p]
        if not parts:
            print("  no setup_parts (not GPU Clark, or an older gpuclean)")
            continue
        # A worker's first run makes its resources (unless made ahead) and its cuFFT plans.
        is_first = lambda p: p.get("resources", 0) > 0 or p.get("fft_plans_made", 0) > 0
        first = [p for p in parts if is_first(p)]
        later = [p for p in parts if not is_first(p)]
        print("  %-26s %10s %12s %12s" % ("part", "sum s", "first ms", "later ms"))
        for name in parts[0]:
            total = sum(p.get(name, 0) for p in parts)
            mean = lambda ps: (sum(p.get(name, 0) for p in ps) / len(ps)) if ps else float("nan")
            scale = 1 if name == "fft_plans_made" else 1e3
            print("  %-26s %10.3f %12.2f %12.2f" % (name, total, scale * mean(first), scale * mean(later)))
        print("  first runs %d, later runs %d" % (len(first), len(later)))


if __name__ == "__main__":
    main(sys.argv[1:])
