"""The composition bound of deep multi-head networks (docs/multihead.md §4): ``dim M <= Σ_i dim M_i - Σ_{i<l} d_i^2``.

Each layer's function space ``M_i`` is bounded by its own one-layer certificate; ``GL_{d_i}`` moves a
hidden layer's outputs and the next layer's inputs without changing the network, and acts with trivial
stabilizer where the hidden outputs span. The Jacobian rank (the network code, which knows nothing of
the bound) must meet it where it closes a gap, and every forged piece must be refused.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.dimension.bounds import composition_bound, layer_architecture, random_ints

REFUSED = (CertificateRejected, CertificateFormatError)

#: (widths, ranks, keywords, dim M, the layers' own dimensions): each was left as bounds by the fields alone
CASES = [((2, 3, 3), (1, 2), dict(heads=3), 54, (18, 45)),
         ((3, 2, 3), (2, 1), dict(heads=4, value_ranks=2), 50, (36, 18)),
         ((3, 3, 3), (2, 2), dict(heads=4), 99, (54, 54)),
         ((3, 3, 3), (2, 2), dict(heads=4, residual=True), 108, (54, 54)),
         ((2, 2, 2), (2, 2), dict(heads=2, tokens=1), 12, (8, 8))]


@pytest.mark.parametrize("widths,ranks,kw,dim,layers", CASES, ids=str)
def test_the_composition_bound_is_met_by_the_jacobian_and_uses_each_layers_dimension(widths, ranks, kw, dim, layers):
    arch = Architecture(widths, ranks, **{"tokens": 2, **kw})
    cert = certify_dimension(arch, seed=1)
    assert cert.certified and cert.dimension == dim and cert.upper_witness["ambient"] == "composition"
    assert [layer["upper"] for layer in cert.upper_witness["layers"]] == list(layers)
    # each layer's bound is that layer's certified dimension, found again on its own
    assert [certify_dimension(layer_architecture(arch, i), seed=2).dimension for i in (1, 2)] == list(layers)
    hidden = 0 if arch.residual else widths[1] ** 2
    assert dim == sum(layers) - hidden
    assert check_certificate(json.loads(json.dumps(cert.to_json()))).claim.startswith(f"dim M = {dim} ")


def test_no_composition_bound_where_the_hidden_outputs_cannot_span():
    """Two heads of value rank 1 into width 3: the outputs lie in a plane, GL_3 fixes them with a positive-dimensional
    stabilizer, and no subtraction is claimed."""
    arch = Architecture((3, 3, 3), (2, 2), tokens=2, heads=2, value_ranks=1)
    assert composition_bound(arch, random_ints(random.Random(0), (arch.parameter_count,)), 1000003) is None


@pytest.fixture(scope="module")
def certs():
    def make(*args, **kw):
        return json.loads(json.dumps(certify_dimension(Architecture(*args, **kw), seed=0).to_json()))

    return {"plain": make((2, 3, 3), (1, 2), tokens=2, heads=3),
            "residual": make((3, 3, 3), (2, 2), tokens=2, heads=4, residual=True)}


def _refused(cert):
    with pytest.raises(REFUSED):
        check_certificate(cert)


def _edit(cert, change):
    out = copy.deepcopy(cert)
    change(out)
    return out


def test_the_honest_composition_certificates_verify(certs):
    assert check_certificate(certs["plain"]).claim.startswith("dim M = 54 ")
    assert check_certificate(certs["residual"]).claim.startswith("dim M = 108 ")
    assert certs["residual"]["upper_witness"]["inputs"] == []


def _set_upper(n):
    """Claim ``dim M <= n`` alone (the lower bound dropped to an empty minor), so only the upper witness decides."""
    def change(c):
        c["lower_witness"].update(rank=0, rows=[], columns=[], determinant=1)
        c.update(lower=0, upper=n, certified=False, dimension=None)
    return change


@pytest.mark.parametrize("change", [
    lambda c: c["upper_witness"]["layers"][0].update(upper=17),                 # a layer's bound below its own
    lambda c: c["upper_witness"]["layers"][1].update(upper=46),
    lambda c: c["upper_witness"]["layers"][1]["upper_witness"].update(determinant=1),
    lambda c: c["upper_witness"]["layers"].pop(),
    lambda c: c["upper_witness"]["layers"].append(copy.deepcopy(c["upper_witness"]["layers"][0])),
    lambda c: c["upper_witness"]["layers"][0].update(extra=1),
    lambda c: c["upper_witness"]["layers"][0]["upper_witness"].update(layers=[]),
    lambda c: c["upper_witness"]["layers"][0].update(upper_witness=copy.deepcopy(c["upper_witness"])),
    lambda c: c["upper_witness"]["inputs"][0].__setitem__(2, c["upper_witness"]["inputs"][0][1]),  # dependent
    lambda c: c["upper_witness"]["inputs"][0].__setitem__(0, [0, 0]),
    lambda c: c["upper_witness"]["inputs"].pop(),
    lambda c: c["upper_witness"]["inputs"][0].pop(),
    lambda c: c["upper_witness"]["inputs"][0].__setitem__(0, [1 << 40, 1]),
    lambda c: c["upper_witness"].pop("point"),
    lambda c: c["upper_witness"].update(families=[]),
    lambda c: c["upper_witness"].update(ambient="compositions"),
    lambda c: c["architecture"].update(residual=True),                          # no group acts: no subtraction
    lambda c: c["architecture"].update(heads=[3, 2]),
    _set_upper(53), _set_upper(55)], ids=[f"forgery{k}" for k in range(20)])
def test_a_forged_composition_bound_is_refused(certs, change):
    _refused(_edit(certs["plain"], change))


def test_a_residual_network_may_not_subtract_the_hidden_group_nor_a_deep_plain_network_compose(certs):
    cert = certs["residual"]

    def subtract(c):
        c["upper_witness"]["inputs"] = copy.deepcopy(certs["plain"]["upper_witness"]["inputs"])
    _refused(_edit(cert, subtract))
    _refused(_edit(cert, _set_upper(99)))
    # a composition witness on one layer, or on [HMK]'s deep model, is refused by name
    one = json.loads(json.dumps(certify_dimension(Architecture((3, 3), (2,), tokens=2, heads=3), seed=0).to_json()))
    _refused(_edit(one, lambda c: c.update(upper_witness=copy.deepcopy(certs["plain"]["upper_witness"]))))
    plain = json.loads(json.dumps(certify_dimension(Architecture((2, 3, 3), (1, 2), tokens=2), seed=0).to_json()))
    _refused(_edit(plain, lambda c: c.update(upper_witness=copy.deepcopy(certs["plain"]["upper_witness"]))))


def test_the_layers_field_minors_are_priced_together_before_any_is_checked(certs):
    """Two layers each claiming a field minor just inside one witness's limit cost twice the limit together: the
    composition is unusable before either layer's witness is built (an adversary's l-layers-buy-l-times attack)."""
    from attngeo.check.limits import MAX_DENSE_MINOR

    def big(c):
        for layer in c["upper_witness"]["layers"]:
            layer["upper_witness"]["field_rank"] = MAX_DENSE_MINOR
    with pytest.raises(CertificateFormatError, match="together"):
        check_certificate(_edit(certs["plain"], big))
