"""Discovery proposes kernel fields by sampling mod p and claims only those verified exactly over Q."""

import numpy as np
import pytest

from attngeo import Architecture, InvalidInputError
from attngeo.geometry.dimension import discovery


def _hide_kernel_families(monkeypatch):
    monkeypatch.setattr(discovery, "kernel_rows", lambda arch, W, p: np.zeros((0, arch.parameter_count), dtype=np.int64))


def test_the_skew_moves_of_one_token_are_found_again_and_verified(monkeypatch):
    arch = Architecture((3, 2), (2,), tokens=1)
    assert discovery.discover_fields(arch, seed=0) == []  # the known families span the kernel
    _hide_kernel_families(monkeypatch)
    found = discovery.discover_fields(arch, seed=0)
    assert len(found) == 2  # a(a-1) = 2 for a = 2: delta Q = J K and delta K = J Q
    names = arch.variable_names()
    for field in found:
        C = np.array(field.matrix)
        moved = {names[i] for i in np.flatnonzero(C.any(axis=1))}
        read = {names[j] for j in np.flatnonzero(C.any(axis=0))}
        # one moves Q by a combination of K's rows, the other K by Q's: never V
        assert {n[0] for n in moved} | {n[0] for n in read} == {"Q", "K"} and len({n[0] for n in moved}) == 1
        assert field.latex().count(r"\delta") == 6


def test_the_annihilator_of_a_width_one_bottleneck_is_found_when_hidden(monkeypatch):
    arch = Architecture((1, 2, 1), (1, 1), tokens=2)  # layer 1's output spans a line of C^2: w is linear in V_1
    _hide_kernel_families(monkeypatch)
    found = discovery.discover_fields(arch, seed=1)
    assert found and all(discovery._verified(arch, np.array(f.matrix)) for f in found)


def test_discovery_refuses_what_it_cannot_reach():
    with pytest.raises(InvalidInputError, match="at most"):
        discovery.discover_fields(Architecture((6, 6), (3,), tokens=2))
    with pytest.raises(InvalidInputError, match="lightning"):
        discovery.discover_fields(Architecture((2, 2), (1,), tokens=2, normalization="softmax"))


def test_a_field_that_fails_the_exact_check_is_never_claimed():
    arch = Architecture((2, 2), (1,), tokens=2)
    C = np.zeros((arch.parameter_count, arch.parameter_count), dtype=np.int64)
    C[4, 4] = 1  # scale V_1[0, 0] alone: changes the function
    assert not discovery._verified(arch, C)


@pytest.fixture
def without_symmetric_score(monkeypatch):
    """A world where the symmetric-score family is unknown, to prover and checker alike."""
    from attngeo.check.dimension import kernelfields as checker_fields
    from attngeo.geometry.dimension import bounds

    empty = lambda arch, W, p: np.zeros((0, arch.parameter_count), dtype=np.int64)  # noqa: E731
    for module, name, value in ((bounds, "kernel_rows", empty), (bounds, "kernel_families", lambda arch: []),
                                (discovery, "kernel_rows", empty), (checker_fields, "expected", lambda arch: []),
                                (checker_fields, "rows", lambda arch, W, put, p: [])):
        monkeypatch.setattr(module, name, value)


def test_discovered_fields_close_the_gap_and_the_checker_proves_them(without_symmetric_score):
    import copy

    from attngeo import CertificateRejected, certify_dimension, check_certificate

    arch = Architecture((3, 2), (2,), tokens=1)
    cert = certify_dimension(arch, seed=0)
    assert cert.certified and cert.dimension == 3 * 4 // 2 + 2 * 3 - 1 and cert.families[-1] == "discovered(0)"
    doc = cert.to_json()
    assert "dim M = 11" in check_certificate(doc).claim
    bad = copy.deepcopy(doc)
    field = bad["upper_witness"]["families"][-1]["fields"][0]
    row = next(i for i, r in enumerate(field) if any(r))
    field[row] = [0] * len(field[row])
    field[row][row] = 1  # no longer a kernel field: the network changes along it
    with pytest.raises(CertificateRejected, match="not in the kernel"):
        check_certificate(bad)
    bad = copy.deepcopy(doc)
    bad["upper_witness"]["families"][-1]["size"] = 3
    with pytest.raises(CertificateRejected, match="size"):
        check_certificate(bad)


def test_the_checker_refuses_to_expand_a_deep_network_for_a_discovered_field():
    from attngeo import CertificateFormatError, certify_dimension, check_certificate

    cert = certify_dimension(Architecture((2, 2, 2, 2), (1, 1, 1), tokens=2), seed=0).to_json()
    P = cert["parameters"]
    scaling = [[int(i == j) if i < 2 else 0 for j in range(P)] for i in range(P)]
    cert["upper_witness"]["families"].append({"kind": "discovered", "layer": 0, "size": 1, "fields": [scaling]})
    with pytest.raises(CertificateFormatError, match="at most 40 parameters, 2 layers"):
        check_certificate(cert)  # refused at once: the expansion grows like 3^depth
