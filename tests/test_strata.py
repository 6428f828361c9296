"""The (rank A, rank V) stratification: dimensions, labels, closure graph, certificates."""

import networkx as nx
import pytest

from conftest import assert_rejected

from attngeo import Architecture, check_certificate
from attngeo.geometry.dimension.dense import certify_dimension
from attngeo.latex import balanced
from attngeo.geometry.loci.strata import stratify


@pytest.mark.parametrize("d,dd,a", [(2, 2, 2), (3, 2, 2), (3, 1, 3), (3, 3, 1)])
def test_strata_dimensions_labels_and_closure_order(d, dd, a):
    arch = Architecture((d, dd), (a,), tokens=2)
    st = stratify(arch, seed=d + dd + a)
    top = st[(min(a, d), min(d, dd))]
    assert top.dimension == certify_dimension(arch).dimension  # the top stratum is dense in M
    assert top.label == "smooth"
    assert st[(0, 0)].label == "singular" and st[(0, 0)].dimension == 0
    assert nx.is_directed_acyclic_graph(st.graph)
    assert st.closure_order()[0] == top.name and st.closure_order()[-1] == "zero"
    for s in st.strata:  # every stratum lies in the closure of the top one, dimensions drop along edges
        assert s.name == top.name or nx.has_path(st.graph, top.name, s.name)
    for u, v in st.graph.edges():
        assert st.graph.nodes[u]["dimension"] > st.graph.nodes[v]["dimension"]
    assert balanced(st.latex())
    check_certificate(st.to_json())


def test_rank_deficient_strata_are_singular_exactly_when_1_lt_a_lt_d():
    st = stratify(Architecture((4, 2), (3,), tokens=2))
    assert [s.name for s in st.disagreements()] == ["(1,2)", "(2,1)", "(2,2)"]  # rank A < a = 3 < d = 4
    assert stratify(Architecture((3, 2), (3,), tokens=2)).disagreements() == []  # a = d: [HMK] holds


def test_tampered_strata_certificates_are_rejected():
    cert = stratify(Architecture((2, 2), (2,), tokens=2)).to_json()
    assert_rejected(cert, lambda c: c["strata"][1].update(label="smooth"), "verdict")
    assert_rejected(cert, lambda c: c["strata"][2].update(lower=7, dimension=7), "bounds")
    assert_rejected(cert, lambda c: c["strata"][2].update(parameter_dimension=9), "dim S")
    assert_rejected(cert, lambda c: c["strata"].pop(1), "exactly")
    assert_rejected(cert, lambda c: c["edges"].pop(), "closure order")
    assert_rejected(cert, lambda c: c["strata"][3]["factors"][0][0].__setitem__(0, "17"), "another point|rank")


@pytest.mark.msolve
def test_singular_strata_ideal_is_hmks_where_they_agree_and_larger_where_not():
    from attngeo.geometry.loci.strata import hmk_singular_ideal

    agree = Architecture((2, 2), (2,), tokens=2)  # a = d: the certified labels are [HMK]'s
    assert stratify(agree).singular_parameter_ideal() == hmk_singular_ideal(agree)
    differ = Architecture((3, 2), (2,), tokens=2)  # 1 < a < d: the (1,2) stratum is singular too
    ours, theirs = stratify(differ).singular_parameter_ideal(), hmk_singular_ideal(differ)
    assert ours <= theirs and not theirs <= ours  # a larger locus: a smaller ideal
