"""Adversarial review of the structured dimension witnesses: the stack point (docs/math.md §7.6), the plain point
by weight classes and the composition bound (Lemma 7.3.11). Every hostile file must be refused quickly with a
CertificateRejected or CertificateFormatError; honest ones are confirmed by an independent Jacobian."""

from __future__ import annotations

import copy
import json
import random
import time

import numpy as np
import pytest

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.dimension.stackpoint import certify_stack

REFUSED = (CertificateRejected, CertificateFormatError)


def _stack(d, a, l, **kw):
    return Architecture((d,) * (l + 1), (a,) * l, heads=d // a, value_ranks=a, residual=True, **kw)


def _json(cert):
    return json.loads(json.dumps(cert.to_json()))


@pytest.fixture(scope="module")
def certs():
    return {"light": _json(certify_stack(_stack(6, 3, 2, causal=True), seed=0)),
            "soft": _json(certify_stack(_stack(4, 2, 2, causal=True, normalization="softmax"), seed=0)),
            "plain": _json(certify_dimension(Architecture((96, 96), (8,)), seed=0)),
            "comp": _json(certify_dimension(Architecture((2, 3, 3), (1, 2), heads=3, tokens=2), seed=0))}


def _refused(cert, seconds=5.0):
    start = time.process_time()
    with pytest.raises(REFUSED) as caught:
        check_certificate(cert)
    assert time.process_time() - start < seconds
    return caught.value


def test_honest_certificates_pass(certs):
    for cert in certs.values():
        assert check_certificate(copy.deepcopy(cert)).claim.startswith("dim M = ")


def _deepen(cert, layers, inputs):
    """The stack of ``cert`` (d = 4, a = 2, two heads) made ``layers`` deep, with ``inputs`` random inputs per type:
    a consistent, small file whose replay is as long as the attacker likes."""
    c = copy.deepcopy(cert)
    soft = c["architecture"]["normalization"] == "softmax"
    c["architecture"].update(widths=[4] * (layers + 1), ranks=[2] * layers, heads=[2] * layers,
                             value_ranks=[2] * layers)
    c["parameters"] = 64 * layers
    lw = c["lower_witness"]
    lw["rank"] = c["lower"] = c["upper"] = c["dimension"] = (48 if soft else 46) * layers
    rng = random.Random(1)
    t = c["architecture"]["tokens"]
    for kind, old in lw["inputs"].items():
        lw["inputs"][kind] = [[[rng.randint(-9, 9) for _ in range(t)] for _ in old[0]] for _ in range(inputs)]
    fams = [{"kind": "intra", "size": 4}] + ([] if soft else [{"kind": "scaling", "size": 1}]) \
        + [{"kind": "value", "size": 4}]
    c["upper_witness"]["families"] = [{"kind": f["kind"], "layer": i, "size": f["size"], "head": j}
                                      for i in range(1, layers + 1) for j in (1, 2) for f in fams]
    c["upper_witness"]["field_rank"] = (16 if soft else 18) * layers
    return c


@pytest.fixture(scope="module")
def small():
    return {"light": _json(certify_stack(_stack(4, 2, 2, causal=True), seed=0)),
            "soft": _json(certify_stack(_stack(4, 2, 2, causal=True, normalization="softmax"), seed=0))}


def test_attack_many_inputs_at_64_layers_is_priced_before_the_forward_mode(small):
    """Attack (fixed): 400 inputs per tiny stack at l = 64, a 46 kB file, made the mod-p replay run 42 s (4,096:
    minutes) with no work limit; now the blocks' work is summed and refused before any is replayed."""
    cert = _deepen(small["light"], 64, 400)
    error = _refused(cert, seconds=2)
    assert isinstance(error, CertificateFormatError) and "units of work" in str(error)


def test_attack_softmax_blocks_each_under_the_limit_are_summed():
    """Attack (fixed): an honest softmax stack of 5 layers with its precision raised to 65,536 bits replayed the
    first blocks for 38 s before a later block's work was found above the limit; the sum is now priced first."""
    cert = _json(certify_stack(_stack(4, 2, 5, causal=True, normalization="softmax"), seed=0))
    cert["lower_witness"]["precision"] = 1 << 16
    error = _refused(cert, seconds=2)
    assert isinstance(error, CertificateFormatError) and "units of work" in str(error)


@pytest.mark.parametrize("path", [("dimension",), ("lower_witness", "rank"), ("lower_witness", "blocks"),
                                  ("lower_witness", "largest_block")], ids=str)
def test_attack_a_float_is_not_an_integer(certs, path):
    """Attack (fixed): 10687.0 for 10687 was accepted in the plain point's (and head point's) rank, blocks and
    largest block, and in the top-level dimension of every dimension certificate: the schema is closed."""
    cert = copy.deepcopy(certs["plain"])
    assert cert["lower_witness"]["structured"] == "plain point"
    where = cert
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = float(where[path[-1]])
    _refused(cert)


def test_attack_a_float_head_point_rank_is_refused():
    cert = _json(certify_dimension(Architecture((16, 16), (8,), heads=2, tokens=2), seed=0))
    if cert["lower_witness"].get("structured") != "head point":
        pytest.skip("the head point is not this size's witness")
    cert["lower_witness"]["blocks"] = float(cert["lower_witness"]["blocks"])
    _refused(cert)
