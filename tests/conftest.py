import pytest

from attngeo import Architecture, certify_dimension


@pytest.fixture(scope="session")
def deep_certificate():
    """A small two-layer certificate shared by the checker's negative corpus."""
    return certify_dimension(Architecture((3, 3, 2), (2, 2), tokens=2), seed=7).to_json()


@pytest.fixture(scope="session")
def gap_certificate():
    """t = 1: bounds that do not meet."""
    return certify_dimension(Architecture((3, 3), (2,), tokens=1), seed=3).to_json()
