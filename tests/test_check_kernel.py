"""The checker as a kernel: independent of the provers, bounded arithmetic, isolated files."""

import ast
import json
import os
import re
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


# -- docs/trust.md's table of kinds and its count of the checker ----------------------------------------------

TRUST = CHECK.parents[1] / "docs" / "trust.md"
#: What every kind runs (docs/trust.md): the kernel, its readers and limits, the architecture, isolation.
BASE = {"kernel", "reader", "schema", "values", "limits", "arch", "isolation", "lifetime"}


def _closure(module: str) -> set[str]:
    """The modules of attngeo/check (as ``dimension/dense``) that ``module`` imports, transitively, itself included."""
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        package = name.split("/")[:-1]
        for node in ast.walk(ast.parse((CHECK / f"{name}.py").read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.level or node.level - 1 > len(package):
                continue  # absolute imports, and attngeo.exceptions
            base = package[:len(package) - node.level + 1]
            parts = base + (node.module.split(".") if node.module else [])
            for alias in node.names:  # "from . import groups" names a module; "from .x import f" a function of x
                for candidate in ("/".join(parts + [alias.name]), "/".join(parts)):
                    if candidate and (CHECK / f"{candidate}.py").is_file():
                        todo.append(candidate)
                        break
    return seen


def _kinds_table() -> dict:
    """``kind -> (files, [(file, function)])`` as docs/trust.md's table of kinds states them."""
    text = TRUST.read_text()
    section = text[text.index("## Each kind:"):text.index("## Limits")]
    rows, kind = {}, None
    for line in [line for line in section.splitlines() if line.startswith("| ")][1:]:  # after the header
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0]:
            kind = re.match(r"`([\w-]+)`", cells[0]).group(1)
            rows[kind] = (set(re.findall(r"`([\w/]+)\.py`", cells[1])), [])
        rows[kind][1].extend(re.findall(r"`([\w/]+)\.py:(\w+)`", cells[4]))
    return rows


def test_the_trust_table_names_each_kinds_files_and_functions_truly():
    """Every kind has a row; its files are what its module imports beyond the base; every function that row says
    checks a hypothesis exists where it says (a rename or a move must update docs/trust.md)."""
    rows = _kinds_table()
    assert set(rows) == set(kernel.KINDS)
    for kind, (files, references) in rows.items():
        assert files == _closure(kernel.KINDS[kind].replace(".", "/")) - BASE, kind
        assert references, kind
        for path, name in references:
            tree = ast.parse((CHECK / f"{path}.py").read_text())
            defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
            assert name in defined, f"docs/trust.md names {path}.py:{name}, which does not exist"


def _code_lines(path: Path) -> tuple[int, int]:
    """Lines of code (a token outside docstrings and comments) and all lines of a module."""
    import io
    import tokenize

    source = path.read_text()
    doc = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0], "value", None), ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            doc.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    code = {line for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type not in skip
            for line in range(tok.start[0], tok.end[0] + 1) if line not in doc}
    return len(code), len(source.splitlines())


def test_the_trust_page_counts_the_checker():
    """docs/trust.md's size of the trusted base: the modules exactly, the lines of code within 5%."""
    modules = sorted(CHECK.rglob("*.py"))
    code = sum(_code_lines(p)[0] for p in modules)
    stated = re.search(r"`attngeo/check/` \((\d+) modules; about ([\d,]+) lines of code", TRUST.read_text())
    assert stated, "docs/trust.md no longer states the size of attngeo/check/"
    assert int(stated.group(1)) == len(modules)
    assert abs(int(stated.group(2).replace(",", "")) - code) <= 0.05 * code, f"{code} lines of code now"
