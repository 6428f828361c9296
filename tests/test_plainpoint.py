"""Structure-aware single layers: the plain point's block rank is the generic rank, and its certificate is checked."""

import copy

import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.geometry.dimension import dense as dense_module
from attngeo.geometry.dimension.plainpoint import applies, certify_structured


@pytest.mark.parametrize("d,dd,a", [(2, 2, 1), (4, 4, 2), (5, 3, 5), (6, 5, 3), (8, 3, 3), (7, 7, 4), (9, 1, 2)])
def test_the_plain_point_reaches_the_rank_of_a_random_point(d, dd, a):
    arch = Architecture((d, dd), (a,), tokens=2)
    plain, dense = certify_structured(arch, seed=1), certify_dimension(arch, seed=1)  # small: the dense path
    assert plain.lower <= dense.upper and dense.lower <= plain.upper  # both are valid bounds on the same number
    assert plain.certified and plain.dimension == dense.dimension
    assert check_certificate(plain.to_json()).claim == check_certificate(dense.to_json()).claim


def test_where_the_plain_point_is_degenerate_the_dense_path_decides():
    arch = Architecture((3, 1), (1,), tokens=2)  # a = 1, d' = 1: the plain point has rank 5 < dim M = 7
    plain = certify_structured(arch, seed=0)
    assert not plain.certified and plain.lower < plain.upper
    assert "<= dim M <=" in check_certificate(plain.to_json()).claim  # an honest bound, checked as such
    assert certify_dimension(arch, seed=0).dimension == plain.upper


def test_large_single_layers_take_the_structured_path(monkeypatch):
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 1)
    cert = certify_dimension(Architecture((12, 12), (3,), tokens=3), seed=0)
    assert cert.lower_witness.get("structured") == "plain point" and cert.dimension == 2 * 3 * 12 + 144 - 9 - 1


def test_the_path_applies_only_where_the_plain_point_exists():
    assert applies(Architecture((4, 3), (2,), tokens=2))
    for arch in (Architecture((4, 3), (2,), tokens=1), Architecture((4, 5), (2,), tokens=2),
                 Architecture((4, 3), (5,), tokens=2), Architecture((2, 2, 2), (1, 1), tokens=2),
                 Architecture((4, 3), (2,), tokens=2, normalization="softmax")):
        assert not applies(arch)


@pytest.fixture(scope="module")
def plain():
    return certify_structured(Architecture((6, 5), (3,), tokens=2), seed=0).to_json()


@pytest.mark.parametrize("tamper", [
    lambda c: c.update(lower=c["lower"] + 1, upper=c["upper"] + 1),
    lambda c: c["lower_witness"].update(rank=c["lower_witness"]["rank"] + 1),
    lambda c: c["lower_witness"].update(blocks=c["lower_witness"]["blocks"] + 1),
    lambda c: c["lower_witness"].update(prime=c["lower_witness"]["prime"] + 1),
    lambda c: c["lower_witness"].update(inputs=[]),
    lambda c: c["upper_witness"]["columns"].__setitem__(0, c["upper_witness"]["columns"][1] + 1),
    lambda c: c["upper_witness"].update(field_rank=c["upper_witness"]["field_rank"] + 1),
    lambda c: c["upper_witness"].update(determinant=(c["upper_witness"]["determinant"] + 1)),
    lambda c: c["upper_witness"]["families"].pop(),
    lambda c: c["architecture"].update(widths=[6, 5, 5], ranks=[3, 3]),
    lambda c: c["architecture"].update(widths=[6, 7]),  # d' > d: no plain point
    lambda c: c["architecture"].update(tokens=1),
])
def test_tampered_structured_certificates_are_rejected(plain, tamper):
    bad = copy.deepcopy(plain)
    tamper(bad)
    with pytest.raises(CertificateRejected):
        check_certificate(bad)


def test_dim_refuses_above_max_memory_before_any_work(capsys):
    from attngeo.ui.cli import main

    assert main(["dim", "--widths", "64,60,64,60,64", "--ranks", "4,4,4,4", "--max-memory", "100"]) == 2
    err = capsys.readouterr().err
    assert "GiB on the dense path, above --max-memory 100 MiB" in err and err.count("\n") == 1
    assert main(["dim", "--widths", "768,768", "--ranks", "64", "--max-memory", "100"]) == 2
    assert "structured path" in capsys.readouterr().err


def test_a_tiny_certificate_of_huge_widths_is_refused_at_once():
    import time

    from attngeo import CertificateFormatError

    def cert(d, a):
        P = 2 * a * d + d * d
        return {"format": "attngeo-certificate", "version": 2, "kind": "dimension",
                "architecture": {"widths": [d, d], "ranks": [a], "tokens": 2, "normalization": "lightning"},
                "parameters": P, "lower": 0, "upper": P, "certified": False, "dimension": None,
                "lower_witness": {"structured": "plain point", "prime": 67108859, "rank": 0, "blocks": 0,
                                  "largest_block": 0},
                "upper_witness": {"structured": "plain point", "prime": 67108859, "families": [], "field_rank": 0,
                                  "columns": [], "determinant": 0}}

    start = time.monotonic()
    with pytest.raises(CertificateFormatError, match="limits"):  # a Gram matrix of 2047 + 2 * 2047 columns
        check_certificate(cert(2047, 2047))
    # weight classes: 2047 x 2047 is now quick, and false (its empty upper witness is refused first: cheap things first)
    with pytest.raises(CertificateRejected, match="families|rank"):
        check_certificate(cert(2047, 1))
    assert time.monotonic() - start < 20  # the listing of every nonzero took 103 s at a = 1


@pytest.mark.parametrize("d,dd,a", [(2, 2, 1), (3, 1, 1), (6, 5, 3), (9, 1, 2), (10, 6, 8), (12, 12, 12), (41, 30, 35)])
def test_weight_classes_give_the_rank_and_blocks_of_the_whole_listing(d, dd, a):
    """One representative per kind of weight class, counted, against every nonzero listed and split (the old
    path): the same rank, the same number of connected blocks, the same largest block; the checker agrees."""
    import numpy as np

    from attngeo.check.arch import Arch
    from attngeo.check.dimension.plainpoint import plain_rank
    from attngeo.geometry.dimension.plainpoint import block_rank, class_rank, column_edges

    P, p = 2 * a * d + dd * d, 67108859
    whole = block_rank(*column_edges(d, dd, a, np.arange(P)), P, p)
    assert class_rank(d, dd, a, p) == whole == plain_rank(Arch((d, dd), (a,), 2), p)


def test_a_tall_block_is_ranked_through_its_gram_matrix():
    import numpy as np

    from attngeo.check.dimension.plainpoint import _gram_rank
    from attngeo.geometry.dimension.plainpoint import gram_rank

    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 300, 900), rng.integers(0, 40, 900)  # a 300 x 40 matrix of counts
    M = np.zeros((300, 40), dtype=np.int64)
    np.add.at(M, (rows, cols), 1)
    from attngeo.exact.rank import rank_mod_p

    assert gram_rank(rows, cols, 40, 101) == _gram_rank(rows, cols, 40, 101) <= rank_mod_p(M, 101)
    assert gram_rank(rows, cols, 40, 67108859) == rank_mod_p(M, 67108859)
