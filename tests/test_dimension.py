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


@pytest.mark.parametrize("d,dd,a", [(3, 3, 2), (3, 2, 2), (4, 2, 2), (2, 3, 1)])
def test_one_token_sees_only_the_symmetric_part_of_a(d, dd, a):
    # t = 1: phi(x) = (x^T A x) V x depends on (sym A, V), up to scaling; sym(K^T Q) fills Sym_d when 2a >= d
    arch = Architecture((d, dd), (a,), tokens=1)
    cert = certify_dimension(arch, seed=0)
    assert not hmk_formula(arch).applies
    sym = d * (d + 1) // 2 if 2 * a >= d else None
    if sym is not None:
        assert cert.certified and cert.dimension == sym + d * dd - 1 == dimension(arch, seed=0)
    assert (a >= 2) == ("symmetric-score(1)" in cert.families)


def test_bounds_that_do_not_meet_are_never_rounded(gap_certificate, monkeypatch):
    from attngeo.geometry.dimension import dense as module
    from attngeo.geometry.certificate import DimensionCertificate

    arch = Architecture((3, 3), (2,), tokens=1)
    weak = DimensionCertificate(arch, gap_certificate["lower"], gap_certificate["upper"],
                                gap_certificate["lower_witness"], gap_certificate["upper_witness"], {}, 0.0, 1)
    assert not weak.certified and weak.dimension is None and weak.gap > 0 and "<= dim M <=" in str(weak)
    monkeypatch.setattr(module, "certify_dimension", lambda arch, **kw: weak)
    with pytest.raises(NotCertifiedError, match="<= dim M <="):
        module.dimension(arch)


@pytest.mark.parametrize("widths,ranks,clipped", [((2, 4, 2), (2, 2), (2, 2, 2)), ((2, 3, 4), (2, 2), (2, 2, 4)),
                                                  ((3, 5, 3, 5), (3, 3, 3), (3, 3, 3, 5))])
def test_expanding_widths_are_explained_by_the_annihilator_fields(widths, ranks, clipped):
    # the network factors through virtual weights: a hidden width wider than every width before it
    # adds nothing, so the dimension is that of the network with the width clipped
    cert = certify_dimension(Architecture(widths, ranks, 2), seed=1)
    assert cert.certified and any(f.startswith("annihilator") for f in cert.families)
    assert cert.dimension == certify_dimension(Architecture(clipped, ranks, 2), seed=1).dimension


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
