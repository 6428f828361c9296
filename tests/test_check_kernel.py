"""The checker as a kernel: independent of the provers, bounded arithmetic, isolated files."""

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from attngeo import Architecture, CertificateFormatError, CertificateRejected, certify_dimension
from attngeo.check import check_certificate, check_file, check_folder, check_paths
from attngeo.check import kernel

CHECK = Path(__file__).resolve().parents[1] / "attngeo" / "check"
ALLOWED_OUTSIDE = {"flint", "numpy"} | set(sys.stdlib_module_names)


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((0, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or ""


@pytest.mark.parametrize("module", sorted(str(p.relative_to(CHECK)) for p in CHECK.rglob("*.py")))
def test_the_checker_imports_no_prover_module(module):
    depth = len(Path(module).parts)  # check/x.py: 1; check/dimension/x.py: 2
    for level, name in _imports(CHECK / module):
        if level <= depth and level > 0:
            continue  # inside attngeo.check
        if level == depth + 1:
            assert name == "exceptions", f"{module} imports attngeo.{name}: the checker may use only attngeo.exceptions"
            continue
        assert level == 0 and name.split(".")[0] in ALLOWED_OUTSIDE, f"{module} imports {name}"


def test_importing_the_checker_loads_no_prover():
    code = "import sys, attngeo.check; print(sorted(m for m in sys.modules if m.startswith('attngeo')))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout.replace("'", '"'))
    assert all(m == "attngeo" or m == "attngeo.exceptions" or m.startswith("attngeo.check") for m in loaded), loaded


@pytest.mark.parametrize("arch", [
    Architecture((1, 64), (1,), tokens=64),  # d_l t = 4096 outputs: a contraction over them once wrapped int64
    Architecture((3, 4, 2), (2, 1), tokens=3),
    Architecture((4, 4, 4), (2, 3), tokens=2, heads=2, value_ranks=1, residual=True, causal=True),
], ids=str)
def test_the_checkers_pullback_is_the_provers_jacobian(arch):
    """The checker's adjoint formulas against the prover's traced reverse mode, exactly, with residues near p."""
    from attngeo.check.arch import architecture
    from attngeo.check.dimension.dense import _jacobian_rows
    from attngeo.model.jacobian import jacobian_mod_p

    p = (1 << 26) - 5  # prime
    rng = np.random.default_rng(0)
    point = rng.integers(p - 1000, p, arch.parameter_count)  # residues near p: products near 2**52
    X = rng.integers(p - 1000, p, (3,) + arch.input_shape)
    w = rng.integers(p - 1000, p, (3, 2) + arch.output_shape)
    J = jacobian_mod_p(arch, point, X, p, w)
    rows, cols = [5, 0, 3], list(range(0, arch.parameter_count, 3))
    mine = _jacobian_rows(architecture({"kind": "dimension", "architecture": arch.to_dict()}), point, X, w, rows,
                          cols, p)
    assert np.array_equal(mine, J[np.ix_(rows, cols)])


def test_a_wide_output_with_many_tokens_is_checked_exactly():
    # widths 1,64 with t = 64: d_l * t = 4096 products per row, which wrapped int64 before
    cert = certify_dimension(Architecture((1, 64), (1,), tokens=64), seed=1).to_json()
    claim = check_certificate(cert).claim
    assert claim.startswith(f"dim M = {cert['dimension']} ")
    forged = dict(cert, lower=cert["lower"] + 2, upper=cert["upper"] + 2, dimension=cert["dimension"] + 2)
    with pytest.raises(CertificateRejected):
        check_certificate(forged)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("certs")
    for k, seed in enumerate((0, 1)):
        certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=seed).save(root / f"good{k}.json")
    return root


def test_a_worker_that_aborts_or_hangs_costs_one_file_not_the_run(folder, monkeypatch):
    (folder / "abort.json").write_text((folder / "good0.json").read_text())
    (folder / "hang.json").write_text((folder / "good0.json").read_text())
    real = kernel.verify

    def hostile(cert, _seen=[]):  # the forked workers inherit this patch
        import inspect
        path = inspect.stack()[2].frame.f_locals.get("path", "")
        if str(path).endswith("abort.json"):
            os.kill(os.getpid(), 9)  # as the kernel's OOM killer or a FLINT abort would end it
        if str(path).endswith("hang.json"):
            time.sleep(60)
        return real(cert)

    monkeypatch.setattr(kernel, "verify", hostile)
    start = time.monotonic()
    out = dict(check_paths(sorted(str(p) for p in folder.glob("*.json")), seconds=3, workers=2))
    assert time.monotonic() - start < 30
    verdicts = {Path(p).name: type(r).__name__ for p, r in out.items()}
    assert verdicts == {"abort.json": "CertificateFormatError", "hang.json": "CertificateFormatError",
                        "good0.json": "CheckResult", "good1.json": "CheckResult"}
    assert "died" in str(out[str(folder / "abort.json")]) and "time budget" in str(out[str(folder / "hang.json")])
    for name in ("abort.json", "hang.json"):
        (folder / name).unlink()


def test_non_regular_files_are_refused_without_blocking(folder, tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    for path in (fifo, link):
        with pytest.raises(CertificateFormatError, match="not a regular file"):
            check_file(path, seconds=10)
    (tmp_path / "good.json").write_text((folder / "good0.json").read_text())
    out = dict(check_folder(tmp_path, seconds=10))
    assert type(out[str(tmp_path / "good.json")]).__name__ == "CheckResult"
    assert all(isinstance(out[str(p)], CertificateFormatError) for p in (fifo, link))


@pytest.mark.parametrize("text, match", [
    ("[" * 100_000 + "]" * 100_000, "nests deeper"),
    ('{"format": "attngeo-certificate", "version": 1, "version": 1}', "appears twice"),
    ('{"format": "attngeo-certificate", "n": ' + "9" * 5000 + "}", "digits"),
    ('{"format": "attngeo-certificate", "n": NaN}', "not a number"),
])
def test_hostile_json_is_unusable_with_one_line(tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(CertificateFormatError, match=match) as info:
        check_certificate(path)
    assert "\n" not in str(info.value)


def test_unknown_fields_and_prose_are_refused(folder):
    cert = json.loads((folder / "good0.json").read_text())
    with pytest.raises(CertificateRejected, match="unknown field"):
        check_certificate(dict(cert, claim="dim M = 999"))
    forged = dict(cert, notes=["ok\nvalid x.json: dim M = 999"])  # version 1 carried notes; version 2 carries no prose
    with pytest.raises(CertificateRejected, match="unknown field") as info:
        check_certificate(forged)
    assert "\n" not in str(info.value)
    with pytest.raises(CertificateRejected, match="regenerate"):
        check_certificate(dict(cert, version=1))
