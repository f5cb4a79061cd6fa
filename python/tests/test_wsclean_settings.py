"""The WSClean hook's settings and rounds, decided in C++ (app/outer/wsclean_options.hpp,
wsclean_round.hpp): GPUCLEAN_OPTIONS parsed once by the command line's parser, WSClean's options
carried by the option table's WSClean names, meta's gain and the version's rules; each round's
budget and WSClean's "continue". Without WSClean."""

import types

import numpy as np
import pytest

from gpuclean import _gpuclean
from gpuclean.errors import UsageError

WSCLEAN = ["wsclean", "-size", "64", "64", "-scale", "2asec", "-niter", "1000", "-mgain", "0.8"]


def meta(**values):
    m = dict(gain=0.1, mgain=0.8, iteration_number=0, max_iterations=1000, major_iter_threshold=0.0,
             final_threshold=0.0, channels=[])
    m.update(values)
    return types.SimpleNamespace(**m)


def settings(options="", extra=(), nchan=1, npol=1, m=None, version=None, beam=(None, "not asked for")):
    asked = []

    def theoretical_beam():
        asked.append(True)
        return beam
    s = _gpuclean.wsclean_settings(options, WSCLEAN + list(extra) + ["obs.ms"], nchan, npol, meta=m, version=version,
                                   ignored=[], theoretical_beam=theoretical_beam)
    return s, asked


def test_gpuclean_options_split_as_a_shell_does():
    assert _gpuclean.split_options("--fits-mask 'my mask.fits'  --select \"a \\\"b\\\"\" x\\ y") == [
        "--fits-mask", "my mask.fits", "--select", 'a "b"', "x y"]
    assert _gpuclean.split_options("  ") == []
    with pytest.raises(UsageError, match="unclosed"):
        _gpuclean.split_options("--fits-mask 'open")


def test_meta_gives_the_gain_and_the_final_threshold_is_the_stopping_rule():
    assert settings(m=meta(gain=0.05))[0].args == ["--gain", "0.05", "--auto-threshold", "0"]
    assert settings("--gain=0.2 --threshold 0.01", m=meta())[0].args == ["--gain=0.2", "--threshold", "0.01"]
    assert settings()[0].args == []  # before the first call: the command lines alone


def test_given_is_what_the_parser_counted():
    # --multiscale-gain alone in GPUCLEAN_OPTIONS: WSClean's -multiscale completes it, its gain loses.
    s, _ = settings("--multiscale-gain 0.3", ["-multiscale", "-multiscale-gain", "0.1"])
    assert s.args == ["--multiscale-gain", "0.3", "--multiscale"]
    s, _ = settings("--niter=50 --fit-spectral-pol 2", ["-channels-out", "4", "-join-channels"], nchan=4, m=meta())
    assert s.niter == 50 and s.fit_given and "--join-channels" in s.args
    s, _ = settings("-v", m=meta())
    assert s.niter is None and not s.fit_given


def test_the_joins_follow_what_wsclean_hands_over():
    assert settings(nchan=4)[0].args == ["--join-channels"]
    assert settings(npol=2)[0].args == ["--join-polarizations"]
    assert settings("--join-channels", nchan=4)[0].args == ["--join-channels"]


def test_the_theoretical_beam_is_asked_for_only_when_wanted():
    s, asked = settings(m=meta(), beam=(2.5, None))
    assert not asked
    s, asked = settings(extra=["-multiscale"], m=meta(), beam=(2.5, None))
    assert asked and s.args[-2:] == ["--multiscale-beam", "2.5"]
    assert s.notes == ["scales in WSClean's theoretical beam of 2.500 pixels"]
    s, asked = settings("--multiscale-beam 3", ["-multiscale"], m=meta(), beam=(2.5, None))
    assert not asked
    s, _ = settings(extra=["-local-rms"], m=meta(), beam=(None, "no MeasurementSet"))
    assert s.notes == ["the local-RMS window in the PSF's fitted beam, not WSClean's theoretical beam "
                       "(no MeasurementSet; give --local-rms-beam)"]


def test_the_version_rules_and_the_notes():
    s, _ = settings(extra=["-local-rms"], m=meta(), version=(3, 6))
    assert s.args[-1] == "--local-rms-periodic"
    assert s.notes[0] == "WSClean 3.6" and s.notes[-1] == "the local-RMS window periodic as radler's"
    assert "--local-rms-periodic" not in settings(extra=["-local-rms"], m=meta(), version=(3, 1))[0].args
    s = _gpuclean.wsclean_settings("", WSCLEAN + ["obs.ms"], meta=meta(), ignored=["-no-fast-subminor"])
    assert s.notes == ["-no-fast-subminor mean nothing for gpuclean"]


def test_wsclean_auto_mask_and_the_device():
    assert settings(extra=["-auto-mask", "5"])[0].wsclean_auto_mask
    assert not settings()[0].wsclean_auto_mask
    assert _gpuclean.device_is_cpu("--niter 5 --device=cpu") and _gpuclean.device_is_cpu("--device  cpu")
    assert _gpuclean.device_is_cpu("--multiscale-gain 0.3 --device cpu")  # a part of the line
    assert not _gpuclean.device_is_cpu("--device gpu")
    assert not _gpuclean.device_is_cpu("--device")  # does not parse: the session says so
    assert not _gpuclean.device_is_cpu("")


def test_the_messages_are_the_command_lines():
    with pytest.raises(UsageError, match="--gain must be in"):
        settings("--gain 2", m=meta())
    with pytest.raises(UsageError, match="--device: tpu not in"):
        settings("--device tpu")
    # WSClean took its command line before the hook reads it: a trailing option without its value
    # (which WSClean 3.7 refuses) is left out, not guessed at.
    assert _gpuclean.wsclean_carried(["wsclean", "-auto-mask"], []) == []
    with pytest.raises(UsageError, match="not for a run inside WSClean"):
        settings("--model m.fits")


def _session(options, shape=64):
    """A started CPU session on one point source of 1 Jy under a Gaussian PSF."""
    y, x = np.mgrid[:shape, :shape] - shape // 2
    psf = np.exp(-(x ** 2 + y ** 2) / (2 * 2.0 ** 2)).astype(np.float32)
    residual = np.roll(np.roll(psf, 5, 0), -7, 1)[None, None].copy()
    s, _ = settings("--device cpu " + options, m=meta())
    core = _gpuclean.OuterLoopSession(s)
    core.start(residual, psf[None], [1.4e8], [1.0], 1.0)
    return core


def test_a_round_ends_at_mgain_and_asks_for_another_major_cycle():
    r = _session("").wsclean_round(meta(final_threshold=0.01))
    assert r["budget"] == 1000 and 0 < r["components"] < 1000
    assert r["round_floor"] and r["stop_reason"] == "threshold" and r["more"]


def test_a_round_at_the_final_threshold_or_the_budget_is_the_last():
    core = _session("")
    r = core.wsclean_round(meta(mgain=1.0, final_threshold=0.05))
    assert r["components"] > 0 and r["peak_left"] <= 0.05 and not r["more"]
    r = _session("").wsclean_round(meta(max_iterations=10, iteration_number=7, final_threshold=0.01))
    assert r["budget"] == 3 and r["components"] == 3 and not r["more"]


def test_gpuclean_niter_limits_the_budget_across_rounds():
    core = _session("--niter 10")
    first = core.wsclean_round(meta(mgain=0.5, final_threshold=0.001))
    assert first["budget"] == 10 and 0 < first["components"] < 10 and first["more"]
    second = core.wsclean_round(meta(mgain=0.5, final_threshold=0.001, iteration_number=first["components"]))
    assert second["budget"] == 10 - first["components"]
    assert second["components"] == second["budget"] and not second["more"]


def test_a_sub_image_round_takes_the_adapters_budget_and_the_final_threshold():
    # The major-iteration threshold (the sub-images' peak x (1 - mgain)) is not a floor here.
    r = _session("").wsclean_round(meta(mgain=1.0, major_iter_threshold=0.9, final_threshold=0.05), 500)
    assert r["budget"] == 500 and r["peak_left"] <= 0.05
