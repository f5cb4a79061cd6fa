"""Every option deconvolve takes is the command line's, with its defaults and its refusals."""

import re

import pytest

import gpuclean
from conftest import run_cli

# Each is refused by the command line; deconvolve must refuse it with the same message and the
# exception class of the same exit code.
BAD = [
    {"gain": 0.0}, {"gain": 1.5}, {"mgain": 0.0}, {"threshold": -1.0}, {"auto_threshold": -2.0},
    {"clean_border": 60.0}, {"select_k": 0}, {"beam_patch": 0}, {"threads": -1}, {"niter": "many"},
    {"algorithm": "maxent"}, {"device": "tpu"}, {"beam_fit": "gaussian"}, {"beam_shape": (10.0, 20.0, 0.0)},
    {"beam_shape": (10.0, 5.0)}, {"quicklook": "q.png", "quicklook_range": (60.0, 40.0)}, {"no_such_option": 3},
]


def cli_error(stderr):
    """The command line's error line, less the pointer to --help it adds after a parse error."""
    return re.sub(r"\. Run 'gpuclean --help' for the options\.$", "", stderr.strip().splitlines()[-1])


def cli_form(options):
    args = []
    for key, value in options.items():
        args.append("--" + key.replace("_", "-"))
        args += [repr(v) if isinstance(v, float) else v for v in (value if isinstance(value, tuple) else (value,))]
    return args


@pytest.mark.parametrize("options", BAD, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_refused_as_on_the_command_line(binary, sample, tmp_path, options):
    code, err = run_cli(binary, [*sample, "--output", tmp_path / "r.fits", *cli_form(options)], cwd=tmp_path)
    assert code in (2, 3), err
    with pytest.raises(gpuclean.Error) as raised:
        gpuclean.deconvolve(*map(str, sample), output=str(tmp_path / "r.fits"), **options)
    assert raised.value.exit_code == code
    assert cli_error(err) == f"gpuclean: error: {raised.value}"
    assert not (tmp_path / "r.fits").exists()


# Options whose acceptance is the command line's business (backend names, negative counts): whatever
# it decides, deconvolve decides the same, with the same message when it refuses.
EITHER = [{"select": "no-such-backend", "niter": 10}, {"niter": -1}, {"select_k": -5}]


@pytest.mark.parametrize("options", EITHER, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_accepted_or_refused_as_on_the_command_line(binary, sample, tmp_path, options):
    code, err = run_cli(binary, [*sample, "--output", tmp_path / "cli.fits", "--device", "cpu", *cli_form(options)],
                        cwd=tmp_path)
    try:
        gpuclean.deconvolve(*map(str, sample), output=str(tmp_path / "py.fits"), device="cpu", quiet=True, **options)
    except gpuclean.Error as e:
        assert (e.exit_code, f"gpuclean: error: {e}") == (code, cli_error(err))
    else:
        assert code == 0, err


def test_an_existing_output_is_refused_unless_overwrite(sample, tmp_path):
    out = tmp_path / "r.fits"
    out.write_bytes(b"")
    with pytest.raises(gpuclean.UsageError, match="overwrite"):
        gpuclean.deconvolve(*map(str, sample), output=str(out), niter=1, device="cpu", quiet=True)


def test_other_outputs_need_the_restored_image(sample, tmp_path):
    with pytest.raises(gpuclean.UsageError, match="restored image"):
        gpuclean.deconvolve(*map(str, sample), model=str(tmp_path / "m.fits"), niter=1, quiet=True)


def test_a_missing_input_is_an_input_error(tmp_path):
    with pytest.raises(gpuclean.InputError, match="nope.fits"):
        gpuclean.deconvolve(str(tmp_path / "nope.fits"), str(tmp_path / "psf.fits"), niter=1, quiet=True)


def test_the_option_table_has_the_command_line_defaults():
    table = gpuclean.options()
    assert table["niter"][0] == "100000" and table["gain"][0] == "0.1" and table["algorithm"][0] == "clark"
    assert table["no_negative"][1] == 0 and table["beam_shape"][1] == 3 and table["output"][1] == 1
    assert {"select", "select_k", "device", "auto_threshold", "model", "residual", "json"} <= set(table)
