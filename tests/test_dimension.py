import pytest

from attngeo import Architecture, NotCertifiedError, certify_dimension, dimension, hmk_formula
from attngeo.model.formulas import single_layer_dimension

SINGLE = [(d, e, a, t) for d, e, a, t in [(1, 1, 1, 2), (2, 3, 1, 2), (3, 3, 2, 2), (3, 2, 3, 3), (4, 4, 4, 2),
                                          (4, 2, 5, 2), (5, 3, 1, 3), (6, 6, 3, 2), (6, 1, 6, 3), (6, 5, 7, 2)]]


@pytest.mark.parametrize("d, d_out, a, t", SINGLE, ids=[f"d{d}-d'{e}-a{a}-t{t}" for d, e, a, t in SINGLE])
def test_single_layer_certified_and_equal_to_the_papers_formula(d, d_out, a, t):
    cert = certify_dimension(Architecture((d, d_out), (a,), t), seed=d * 100 + a)
    assert cert.certified
    assert cert.dimension == single_layer_dimension(d, d_out, a)  # [HMK]: an independent source


@pytest.mark.parametrize("widths, ranks, t", [((3, 3, 3), (2, 2), 3), ((4, 4, 4, 4), (2, 3, 1), 2), ((2, 4, 2), (2, 2), 2),
                                              ((3, 3), (2,), 1), ((5, 2, 5), (1, 2), 2)])
def test_lower_never_exceeds_upper_and_witness_sizes_match(widths, ranks, t):
    cert = certify_dimension(Architecture(widths, ranks, t), seed=11)
    assert 0 <= cert.lower <= cert.upper <= cert.parameters
    assert len(cert.lower_witness["rows"]) == len(cert.lower_witness["columns"]) == cert.lower
    assert cert.upper == cert.parameters - cert.upper_witness["field_rank"]
    assert cert.dimension == (cert.lower if cert.certified else None)


def test_t1_is_reported_as_bounds_not_rounded():
    arch = Architecture((3, 3), (2,), tokens=1)
    cert = certify_dimension(arch, seed=0)
    assert not cert.certified and cert.dimension is None and cert.gap > 0
    assert not hmk_formula(arch).applies
    with pytest.raises(NotCertifiedError, match="<= dim M <="):
        dimension(arch, seed=0)


def test_expanding_bottleneck_is_not_explained_by_the_symmetries():
    # widths 2,4,2: the naive count (symmetry orbit) overshoots; lower stays below it
    cert = certify_dimension(Architecture((2, 4, 2), (2, 2), 2), seed=1)
    assert cert.lower < cert.upper


def test_seed_makes_certificates_reproducible():
    arch = Architecture((3, 2, 2), (1, 2), 2)
    a, b = certify_dimension(arch, seed=5).to_json(), certify_dimension(arch, seed=5).to_json()
    a.pop("seconds"), b.pop("seconds")
    assert a == b


def test_mid_size_certificate_verifies_independently():
    from attngeo import check_certificate

    arch = Architecture((16, 16, 16), (4, 4), 3)
    cert = certify_dimension(arch, seed=0)
    assert cert.certified and check_certificate(cert.to_json()).claim.startswith(f"dim M = {cert.dimension}")
    assert cert.dimension == hmk_formula(arch).value  # compared, not used


@pytest.mark.slow
def test_benchmark_size_certifies_and_verifies():
    from attngeo import check_certificate

    arch = Architecture((32,) * 5, (4,) * 4, 3)
    cert = certify_dimension(arch, seed=0)
    assert cert.certified
    check_certificate(cert.to_json())
