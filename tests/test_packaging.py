"""A wheel holds the whole package and the proof scripts, so `attngeo certify` works after a plain install.

`test_the_wheel_ships_the_package_and_the_proof_scripts` builds the wheel
(``pip wheel --no-deps``, about 10-15 s: pip fetches the build backend into an
isolated environment); the slow test installs it into a fresh virtual
environment and certifies a statement from a folder outside the checkout.
"""

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _packages_on_disk() -> set[str]:
    return {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "attngeo").rglob("*.py")
            if "__pycache__" not in p.parts}


def test_pyproject_lists_every_package_folder_and_maps_the_proofs():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["package-dir"]["attngeo.proofs"] == "proofs"  # proofs/ stays a top-level folder of the repository
    assert set(tool["packages"]) == _packages_on_disk() | {"attngeo.proofs"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of what the build reads (pip builds in place and would leave build/ here)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("attngeo", "proofs"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(dist)],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0 and "satisfies the requirement setuptools" in run.stdout + run.stderr:
        pytest.skip("pip cannot fetch the build backend (setuptools>=68): no package index reachable")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    built, = dist.glob("attngeo-*.whl")
    return built


def test_the_wheel_ships_the_package_and_the_proof_scripts(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    scripts = sorted(p.name for p in (ROOT / "proofs").glob("*.py"))
    assert scripts and {f"attngeo/proofs/{s}" for s in scripts} <= names
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "attngeo").rglob("*.py") if "__pycache__" not in p.parts}
    assert modules <= names, sorted(modules - names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "attngeo = attngeo.ui.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


@pytest.mark.slow
def test_an_installed_wheel_certifies_outside_the_checkout(wheel, tmp_path):
    """Install the wheel (not editable) into a fresh venv and run `attngeo certify` from an unrelated folder."""
    venv = tmp_path / "venv"
    # the dependencies come from this interpreter's site-packages: the test needs no index for them
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True,
                   capture_output=True, timeout=600)
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH: the installed copy must do it alone
    where = subprocess.run([venv / "bin" / "python", "-c", "import attngeo; print(attngeo.__file__)"], cwd=away,
                           env=env, capture_output=True, text=True, timeout=120)
    assert str(venv) in where.stdout, where.stdout + where.stderr
    run = subprocess.run([venv / "bin" / "attngeo", "certify", "--only", "boundary-points", "--out", "c"], cwd=away,
                         env=env, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "boundary-points" in run.stdout and (away / "c" / "report.tex").exists()
    check = subprocess.run([venv / "bin" / "attngeo", "check", "c"], cwd=away, env=env, capture_output=True,
                           text=True, timeout=1200)
    assert check.returncode == 0 and " 0 rejected" in check.stdout
