"""The rank bounds of one layer's tensor ``sym T`` (docs/multihead.md §4): met by the Jacobian, refused when forged.

``sym T`` flattened with the output index as rows has rank at most ``h b``; with the output and query
indices as rows (``t >= 2``) at most ``h a b``. Where ``r (m + n - r)`` is below the span and the fields'
bound, it is the upper bound; the Jacobian rank (the network code, which knows nothing of the bound)
must reach it, and the flattening at a random point must have exactly rank ``r``.
"""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.exact.rank import random_prime, rank_mod_p
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.dimension.bounds import random_ints, tensor_bound
from attngeo.model.network import split_heads

REFUSED = (CertificateRejected, CertificateFormatError)

#: (widths, a, h, b, the flattening that bounds, the dimension = r (m + n - r))
CASES = [((2, 4), 2, 3, 1, "output", 21), ((2, 5), 1, 4, 1, "output", 28), ((2, 5), 2, 3, 1, "output", 24),
         ((3, 2), 1, 5, 1, "output-query", 35)]


def _flattening_rank(arch: Architecture, flattening: str, seed: int) -> int:
    """The rank mod p of the flattening of ``sym T = Σ_j sym_{r,p} V_j[o, r] A_j[p, q]`` at a random point,
    written here from the definition."""
    rng = random.Random(seed)
    p = random_prime(rng)
    (d, d_out) = arch.widths
    T = np.zeros((d_out, d, d, d), dtype=object)
    for Q, K, U, O in split_heads(arch, random_ints(rng, (arch.parameter_count,)))[0]:
        V, A = (O @ U).astype(object), (K.T @ Q).astype(object)
        T += np.einsum("or,pq->orpq", V, A)
    S = T + T.transpose(0, 2, 1, 3)  # sym in (r, p)
    pairs = [(r, q) for r in range(d) for q in range(r, d)]
    if flattening == "output":
        M = np.array([[S[o, r, s, q] for r, s in pairs for q in range(d)] for o in range(d_out)])
    else:
        M = np.array([[S[o, r, s, q] for r, s in pairs] for o in range(d_out) for q in range(d)])
    return rank_mod_p(np.mod(M, p).astype(np.int64), p)


@pytest.mark.parametrize("widths,a,h,b,flattening,dim", CASES, ids=str)
def test_the_rank_bound_is_met_by_the_jacobian_and_the_flattening_has_that_rank(widths, a, h, b, flattening, dim):
    arch = Architecture(widths, (a,), tokens=2, heads=h, value_ranks=b)
    value, witness = tensor_bound(arch)
    assert (value, witness["flattening"]) == (dim, flattening)
    m, n, r = witness["rows"], witness["columns"], witness["rank"]
    assert r < min(m, n) and r * (m + n - r) == dim
    assert _flattening_rank(arch, flattening, 1) == r  # the bound on the rank is attained: nothing to gain there
    cert = certify_dimension(arch, seed=2)
    assert cert.certified and cert.dimension == dim  # the Jacobian rank meets it
    assert check_certificate(json.loads(json.dumps(cert.to_json()))).claim.startswith(f"dim M = {dim} ")


@pytest.fixture(scope="module")
def cert():
    return json.loads(json.dumps(certify_dimension(Architecture((2, 4), (2,), tokens=2, heads=3, value_ranks=1),
                                                   seed=0).to_json()))


def _with(cert, upper=None, **witness):
    out = copy.deepcopy(cert)
    out["upper_witness"].update(witness)
    if upper is not None:
        out.update(upper=upper)
    return out


def test_the_honest_rank_bound_verifies(cert):
    assert cert["upper_witness"] == {"ambient": "tensor of bounded rank", "flattening": "output", "rows": 4,
                                     "columns": 6, "rank": 3}
    assert check_certificate(cert).claim.startswith("dim M = 21 ")


@pytest.mark.parametrize("change", [
    dict(rank=2, upper=16),                       # a smaller rank: a smaller (false) dimension
    dict(rank=4, upper=24),                       # r = min(m, n): the determinantal formula bounds nothing
    dict(rank=9, upper=9),                        # r > min(m, n): r (m + n - r) is not a bound at all
    dict(rows=3, upper=18), dict(columns=5, upper=18),
    dict(flattening="output-query"),              # another flattening with this one's numbers
    dict(flattening="query"), dict(flattening="input"), dict(flattening=None),
    dict(rank=3.0), dict(rank=True), dict(rank="3"), dict(upper=20), dict(upper=22),
    dict(ambient="symmetric tensor"), dict(ambient="tensor of bounded rank ")], ids=repr)
def test_a_forged_rank_bound_is_refused(cert, change):
    change = dict(change)
    with pytest.raises(REFUSED):
        check_certificate(_with(cert, change.pop("upper", None), **change))


def test_a_rank_bound_with_stray_or_missing_keys_or_on_another_architecture_is_refused(cert):
    for extra in ({"coefficients": 24}, {"prime": 101}, {"structured": "head point"}):
        with pytest.raises(REFUSED):
            check_certificate(_with(cert, **extra))
    for key in ("flattening", "rows", "columns", "rank"):
        out = copy.deepcopy(cert)
        del out["upper_witness"][key]
        with pytest.raises(REFUSED):
            check_certificate(out)
    for arch in ({"value_ranks": [2]}, {"heads": [4]}, {"widths": [2, 5]}, {"normalization": "softmax"}):
        out = copy.deepcopy(cert)
        out["architecture"].update(arch)
        with pytest.raises(REFUSED):
            check_certificate(out)
    # a field witness may not carry the tensor bound's keys (they would be unchecked there)
    field = json.loads(json.dumps(certify_dimension(Architecture((4, 4), (3,), tokens=2, heads=4, value_ranks=3),
                                                    seed=0).to_json()))
    assert "field_rank" in field["upper_witness"]
    for stray in ({"rank": 3}, {"flattening": "output"}, {"coefficients": 12}):
        with pytest.raises(REFUSED):
            check_certificate(_with(field, **stray))
