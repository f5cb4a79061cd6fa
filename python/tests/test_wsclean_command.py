"""WSClean's command line read by the hook (gpuclean.wsclean_command): what is carried into
gpuclean's options, what is accepted, what is refused; without WSClean."""

import pytest

from gpuclean.errors import UsageError
from gpuclean.wsclean_command import WscleanCommand, carried_options, check_layout, ignored_options

BASE = ["wsclean", "-size", "512", "512", "-scale", "2asec", "-niter", "1000", "-mgain", "0.8"]


def carried(extra, gpuclean_options=()):
    return carried_options(WscleanCommand(BASE + extra + ["obs.ms"]), list(gpuclean_options))


def test_survey_settings_are_carried_with_their_values():
    args = carried(["-multiscale", "-multiscale-scales", "0,4,12", "-multiscale-scale-bias", "0.7",
                    "-multiscale-shape", "gaussian", "-auto-mask", "5", "-local-rms", "-local-rms-window", "40",
                    "-fits-mask", "m.fits", "-clean-border", "2", "-no-negative", "-channels-out", "8",
                    "-join-channels", "-fit-spectral-pol", "4", "-python-deconvolution", "hook.py"])
    # In the option table's order (docs/options.md).
    assert args == ["--auto-mask", "5", "--local-rms", "--local-rms-window", "40", "--fits-mask", "m.fits",
                    "--no-negative", "--clean-border", "2", "--multiscale", "--multiscale-scales", "0,4,12",
                    "--multiscale-shape", "gaussian", "--multiscale-scale-bias", "0.7", "--fit-spectral-pol", "4"]


def test_the_spectral_fit_is_read_not_guessed():
    assert carried(["-fit-spectral-log-pol", "3"]) == ["--fit-spectral-log-pol", "3"]
    assert carried([]) == []


def test_gpuclean_options_win_for_the_same_setting():
    args = carried(["-fit-spectral-pol", "4", "-auto-mask", "5"], ["--fit-spectral-pol", "2", "--auto-mask=4"])
    assert args == []


def test_the_last_of_negative_and_no_negative_wins():
    assert carried(["-no-negative", "-negative"]) == []
    assert carried(["-negative", "-no-negative"]) == ["--no-negative"]


@pytest.mark.parametrize("option", ["-iuwt", "-squared-channel-joining", "-save-source-list", "-horizon-mask",
                                    "-force-spectrum"])
def test_what_cannot_be_honoured_is_refused_in_one_line(option):
    with pytest.raises(UsageError, match=f"WSClean's {option} cannot be honoured"):
        carried([option, "x"])


def test_rms_with_min_is_refused():
    with pytest.raises(UsageError, match="rms-with-min"):
        carried(["-local-rms", "-local-rms-method", "rms-with-min"])
    # WSClean (3.1 and 3.7): the method alone turns the local RMS on.
    assert carried(["-local-rms-method", "rms"]) == ["--local-rms", "--local-rms-method", "rms"]


def test_speed_switches_are_accepted_and_named():
    assert ignored_options(WscleanCommand(BASE + ["-no-fast-subminor", "obs.ms"])) == ["-no-fast-subminor"]


@pytest.mark.parametrize("extra, message", [
    (["-channels-out", "4"], "without -join-channels"),
    (["-pol", "xx,yy"], "without -join-polarizations"),
])
def test_layouts_wsclean_cannot_run_through_a_hook_are_refused(extra, message):
    with pytest.raises(UsageError, match=message):
        check_layout(WscleanCommand(BASE + extra + ["obs.ms"]))


def test_joined_layouts_pass():
    check_layout(WscleanCommand(BASE + ["-channels-out", "4", "-join-channels", "obs.ms"]))
    check_layout(WscleanCommand(BASE + ["-pol", "xx,yy", "-join-polarizations", "obs.ms"]))
    check_layout(WscleanCommand(BASE + ["-pol", "i", "obs.ms"]))


def test_values_and_defaults():
    command = WscleanCommand(BASE + ["-name", "out/field", "-pol", "xxyy", "-size", "300", "200", "obs.ms"])
    assert command.name == "out/field"
    assert command.size == (300, 200)  # the last -size wins
    assert command.polarizations() == ["XX", "YY"]
    assert WscleanCommand(["wsclean", "obs.ms"]).name == "wsclean"
    assert WscleanCommand(["wsclean", "obs.ms"]).integer("-niter", 0) == 0
    with pytest.raises(UsageError, match="not a whole number"):
        WscleanCommand(["wsclean", "-channels-out", "four"]).integer("-channels-out", 1)
