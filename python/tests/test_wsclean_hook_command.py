"""The README's recipe for WSClean's hook, hook=$(gpuclean-wsclean-hook), whichever python3 comes
first on PATH. Here that python3 is an interpreter without NumPy (as a pyenv or conda one can be),
on which `python3 -m gpuclean.wsclean` fails with a traceback. The command tested is the build
tree's, beside the gpuclean binary (GPUCLEAN_BINARY); scripts/test-package.sh runs the installed
one from the Debian package."""

import os
import pathlib
import subprocess
import sys

import pytest

import gpuclean.wsclean

RECIPE = 'hook=$(gpuclean-wsclean-hook) && printf "%s\\n" "$hook"'


@pytest.fixture(scope="module")
def command(binary):
    path = pathlib.Path(binary).with_name("gpuclean-wsclean-hook")
    if not path.exists():
        # A standalone build of python/ (scripts/gpu-check.sh python) makes no command.
        pytest.skip(f"no gpuclean-wsclean-hook beside {binary}")
    return path


@pytest.fixture
def python_without_numpy(tmp_path):
    """A folder whose python3 is this interpreter unable to import NumPy."""
    shadow = tmp_path / "shadow" / "numpy"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    folder = tmp_path / "bin"
    folder.mkdir()
    python3 = folder / "python3"
    python3.write_text(f'#!/bin/sh\nPYTHONPATH={shadow.parent}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "$@"\n')
    python3.chmod(0o755)
    return folder


def shell(script, path, cwd):
    env = dict(os.environ, PATH=os.pathsep.join(str(p) for p in path))
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, cwd=cwd)


def test_recipe_prints_the_hook_with_a_python3_without_numpy_first_on_path(command, python_without_numpy, tmp_path):
    path = [python_without_numpy, command.parent, *os.environ["PATH"].split(os.pathsep)]
    # The first python3 on PATH is the one without NumPy, and the module's recipe fails on it.
    assert shell("command -v python3", path, tmp_path).stdout.strip() == str(python_without_numpy / "python3")
    old = shell("python3 -m gpuclean.wsclean", path, tmp_path)
    assert old.returncode != 0 and "numpy" in old.stderr, old.stderr

    run = shell(RECIPE, path, tmp_path)
    assert run.returncode == 0, run.stderr
    hook = run.stdout.strip()
    assert os.path.isabs(hook) and os.path.isfile(hook), hook
    # The package's own hook file, the one `python3 -m gpuclean.wsclean` prints.
    assert os.path.samefile(hook, gpuclean.wsclean.hook_path())
    # And WSClean's embedded interpreter can load it as WSClean does (runpy; no PYTHONPATH needed):
    code = f"import runpy; g = runpy.run_path({hook!r}); print(callable(g['deconvolve']))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert loaded.stdout.strip() == "True", loaded.stderr


def test_command_through_a_symbolic_link(command, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gpuclean-wsclean-hook").symlink_to(command)
    run = shell(RECIPE, [folder, *os.environ["PATH"].split(os.pathsep)], tmp_path)
    assert run.returncode == 0, run.stderr
    assert os.path.samefile(run.stdout.strip(), gpuclean.wsclean.hook_path())


def test_command_takes_no_arguments(command):
    assert subprocess.run([command, "--help"], capture_output=True).returncode == 0
    wrong = subprocess.run([command, "extra"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "usage" in wrong.stderr
