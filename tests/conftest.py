import copy

import numpy as np
import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.exact.engine import INSTALL_HINT, find_msolve

#: doctests that run an elimination only msolve reaches (their modules may not carry pytest marks)
MSOLVE_DOCTEST_MODULES = ("attngeo.geometry.implicit",)


def pytest_collection_modifyitems(config, items):
    """Skip, with the reason and the fix, what needs msolve when it is not installed."""
    if find_msolve() is not None:
        return
    skip = pytest.mark.skip(reason=f"msolve is not installed; {INSTALL_HINT}")
    for item in items:
        dtest = getattr(item, "dtest", None)  # a doctest item: the module its examples run in
        module = dtest.globs.get("__name__") if dtest is not None else None
        if item.get_closest_marker("msolve") or module in MSOLVE_DOCTEST_MODULES:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def deep_certificate():
    """A small two-layer certificate shared by the checker's negative corpus."""
    return certify_dimension(Architecture((3, 3, 2), (2, 2), tokens=2), seed=7).to_json()


@pytest.fixture(scope="session")
def gap_certificate():
    """t = 1: bounds that do not meet."""
    return certify_dimension(Architecture((3, 3), (2,), tokens=1), seed=3).to_json()


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
