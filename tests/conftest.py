import copy

import numpy as np
import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.exact.engine import INSTALL_HINT, find_msolve, find_singular

#: doctests that run an elimination only msolve reaches (their modules may not carry pytest marks)
MSOLVE_DOCTEST_MODULES = ("attngeo.geometry.loci.implicit", "attngeo.ui.listings")

#: marker -> (is the engine here?, why a test is skipped without it). The default engine ("auto") is msolve
#: when installed, else python-flint (at most 6 variables): a test that eliminates more with the default
#: engine needs the msolve mark, one that names Singular the singular mark, one that compares both, both;
#: ``implicit_equations`` takes Singular when it is there, so its callers need only "an engine".
ENGINES = {
    "msolve": (lambda: find_msolve() is not None, f"msolve is not installed; {INSTALL_HINT}"),
    "singular": (lambda: find_singular() is not None,
                 "Singular is not installed; apt-get install singular (or set ATTNGEO_SINGULAR)"),
    "engine": (lambda: find_msolve() is not None or find_singular() is not None,
               f"neither msolve nor Singular is installed; {INSTALL_HINT}"),
}


def pytest_collection_modifyitems(config, items):
    """Skip, with the reason and the fix, what needs an engine that is not installed (ATTNGEO_MSOLVE and
    ATTNGEO_SINGULAR pointing at a missing file simulate its absence)."""
    for name, (present, reason) in ENGINES.items():
        if present():
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            dtest = getattr(item, "dtest", None)  # a doctest item: the module its examples run in
            module = dtest.globs.get("__name__") if dtest is not None else None
            if item.get_closest_marker(name) or (name == "msolve" and module in MSOLVE_DOCTEST_MODULES):
                item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After every run, what was left out and how to run it: each skip's reason (it names the missing tool and its
    install line, or the marker) with its count, and the tests the default ``-m 'not slow'`` deselects."""
    from collections import Counter

    reasons = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    deselected = len(terminalreporter.stats.get("deselected", []))
    if not reasons and not deselected:
        return
    terminalreporter.section("tests left out, and how to run them (README, \"Tests\")")
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"{n:5d} skipped: {reason}")
    if deselected:
        terminalreporter.write_line(f"{deselected:5d} deselected (the default -m 'not slow' of pyproject.toml, or "
                                    "-k): python3 -m pytest -m slow runs the slow ones (minutes)")


@pytest.fixture(scope="session")
def deep_certificate():
    """A small two-layer certificate shared by the checker's negative corpus."""
    return certify_dimension(Architecture((3, 3, 2), (2, 2), tokens=2), seed=7).to_json()


@pytest.fixture(scope="session")
def gap_certificate():
    """An honest certificate of bounds that do not meet.

    Every small architecture is now certified, so the gap is made honestly: the
    lower witness keeps a nonsingular sub-minor one smaller than the proved one,
    which proves ``lower - 1`` (a true but weaker bound).
    """
    from attngeo.exact.rank import det_mod_p
    from attngeo.model.jacobian import jacobian_mod_p

    cert = certify_dimension(Architecture((3, 3), (2,), tokens=1), seed=3).to_json()
    lw = cert["lower_witness"]
    p, c = lw["prime"], len(lw["functionals"][0])
    J = jacobian_mod_p(Architecture((3, 3), (2,), tokens=1), np.array(lw["point"]), np.array(lw["inputs"]), p,
                       np.array(lw["functionals"]))
    J = J.reshape(-1, J.shape[-1])
    for drop in range(len(lw["rows"])):
        rows, cols = lw["rows"][:drop] + lw["rows"][drop + 1:], lw["columns"][:drop] + lw["columns"][drop + 1:]
        det = det_mod_p(J[np.ix_(rows, cols)], p)
        if det:
            break
    lw.update(rows=rows, columns=cols, rank=len(rows), determinant=int(det))
    cert.update(lower=len(rows), certified=False, dimension=None)
    return cert


def random_instance(arch, seed, bound, n_inputs):
    """A random integer point and ``n_inputs`` random integer inputs for ``arch``."""
    rng = np.random.default_rng(seed)
    point = rng.integers(-bound, bound + 1, arch.parameter_count)
    return point, rng.integers(-bound, bound + 1, (n_inputs,) + arch.input_shape)


def assert_rejected(cert: dict, tamper, match: str | None = None) -> None:
    """Apply ``tamper`` to a copy of ``cert``; the checker must reject the result."""
    bad = copy.deepcopy(cert)
    tamper(bad)
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(bad)


#: A value for :func:`tampered` that removes the key instead of setting it.
DELETE = object()


def tampered(cert: dict, path: tuple, value):
    """A copy of ``cert`` with ``value`` at ``path`` (a tuple of keys): a callable maps the old value to the new
    one, :data:`DELETE` removes the key."""
    out = copy.deepcopy(cert)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value(node[path[-1]]) if callable(value) else value
    return out

