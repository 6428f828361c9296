"""The engine markers are right for every combination of engines (issue 20 item 10).

A test that needs msolve, Singular or either must say so (``msolve``,
``singular``, ``engine`` marks, tests/conftest.py), or it fails instead of being
skipped on a machine without that engine. Absence is simulated by pointing
``ATTNGEO_MSOLVE`` / ``ATTNGEO_SINGULAR`` at a missing file; the suites of the
test files that use the engines must then pass (whatever needs the missing
engine skipped with its install hint). With msolve present almost nothing is
skipped, so the combinations *without* msolve are the ones that find a missing mark.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MISSING = "/nonexistent/engine"
COMBINATIONS = {
    "Singular only": {"ATTNGEO_MSOLVE": MISSING},
    "neither": {"ATTNGEO_MSOLVE": MISSING, "ATTNGEO_SINGULAR": MISSING},
    "msolve only": {"ATTNGEO_SINGULAR": MISSING},
}
#: the tests that once failed for a missing mark (a default-engine elimination beside Singular; an implicit run)
QUICK = ["tests/test_ideal.py::test_singular_and_the_default_engine_agree_on_the_singular_locus",
         "tests/test_engine.py::test_the_deadline_stops_python_work_and_is_disarmed_after",
         "tests/test_report.py::test_singular_points_report_says_refuted_where_hmk_fails"]
#: every file that touches an engine, and the doctests of the modules that do (the slow run)
EVERY = ["tests/test_ideal.py", "tests/test_engine.py", "tests/test_implicit.py", "tests/test_interop.py",
         "tests/test_deepfiber.py", "tests/test_report.py", "tests/test_strata.py", "tests/test_theorems.py",
         "tests/test_latex.py", "tests/test_headfiber.py", "tests/test_fibercheck.py", "tests/test_cli.py",
         "attngeo/exact", "attngeo/geometry/loci", "attngeo/geometry/fibers"]


def _suite(files: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *files],
                          cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800)


@pytest.mark.parametrize("combination", ["Singular only", "neither"])
def test_the_engine_tests_pass_or_skip_without_msolve(combination):
    run = _suite(QUICK, COMBINATIONS[combination])
    assert run.returncode == 0, run.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("combination", list(COMBINATIONS))
def test_every_engine_test_passes_or_skips_in_every_combination(combination):
    run = _suite(EVERY, COMBINATIONS[combination])
    assert run.returncode == 0, run.stdout[-3000:]


def _skip_calls():
    """Every skip written in the tests and in the package's doctests: (where, call)."""
    import ast

    for path in sorted([*ROOT.glob("tests/*.py"), *ROOT.glob("attngeo/**/*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("skip", "skipif", "importorskip"):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def test_every_skip_in_the_suite_says_what_is_missing_or_which_marker():
    """A skip a user can act on (issue 36 item 7): a reason on every skip and importorskip of the test files; the
    doctests' ``>>>`` lines are strings here, checked by the next test."""
    import ast

    bare = []
    for where, call in _skip_calls():
        keywords = {k.arg: k.value for k in call.keywords}
        reason = keywords.get("reason") if call.func.attr != "skip" else (call.args[0] if call.args else
                                                                            keywords.get("reason"))
        if reason is None or (isinstance(reason, ast.Constant) and not str(reason.value).strip()):
            bare.append(where)
    assert not bare, f"skips without a reason: {bare}"


def test_the_doctests_skip_with_the_missing_package_named():
    import re

    bare = []
    for path in sorted(ROOT.glob("attngeo/**/*.py")):
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if ">>>" in line and "importorskip(" in line and "reason=" not in line:
                bare.append(f"{path.relative_to(ROOT)}:{k}")
            if ">>>" in line and re.search(r"pytest\.skip\(\s*\)", line):
                bare.append(f"{path.relative_to(ROOT)}:{k}")
    assert not bare, f"doctest skips without a reason: {bare}"
