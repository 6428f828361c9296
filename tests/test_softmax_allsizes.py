"""The softmax dimension for every size (docs/math.md §8.3, Corollary C): ``attngeo prove softmax-criterion``.

The formula is compared with what no part of its proof uses: certified ball-arithmetic Jacobian ranks of the
layer at random rational points (a lower bound on ``dim M`` each, ``geometry/loci/regularity.ball_rank``), and the
count of the kernel directions of Theorem C (an upper bound). Tampered certificates, wider statements and case
trees that hide the a = b = 1 swap are refused.
"""

from __future__ import annotations

import copy
import random

import pytest

from attngeo import Architecture, CertificateRejected, check_certificate
from attngeo.check.dimension import allsizes as checker
from attngeo.geometry.loci.regularity import ball_rank
from attngeo.theorems.allsizes import piece_at, prove, proved

NAME = "softmax-criterion"


@pytest.fixture(scope="module")
def cert():
    return prove(NAME)


def _value(cert, **sizes) -> int:
    import sympy

    text = cert["formula"][0]["value"]
    return int(sympy.sympify(text, locals={k: sympy.Symbol(k) for k in sizes}).subs(sizes))


def test_the_certificate_verifies_and_states_its_hypotheses(cert):
    claim = check_certificate(cert).claim
    assert claim.startswith("for all sizes: dim M = ") and "a + b + d >= 5" in claim and "g*n*a <= d" in claim
    assert proved(NAME).summary()["shifts"] == ["0", "0", "1"]


#: (d, dd, g, n, a, b, bias): inside the hypotheses, each piece, shared keys, biases, one head without bottleneck
SIZES = [(3, 3, 1, 1, 1, 1, 0), (3, 3, 1, 1, 1, 1, 1), (3, 2, 1, 1, 2, 2, 0), (2, 2, 1, 1, 2, 2, 1),
         (4, 4, 2, 1, 1, 2, 0), (4, 4, 2, 1, 2, 1, 1), (4, 4, 1, 2, 2, 2, 0), (4, 2, 1, 2, 1, 1, 1),
         (3, 4, 1, 1, 2, 3, 0), (4, 3, 1, 1, 1, 3, 1)]


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "d{}_{}_g{}_n{}_a{}_b{}_bias{}".format(*s))
def test_the_formula_is_a_certified_ball_rank_at_a_random_point(cert, sizes):
    """A Jacobian minor whose ball excludes 0 at a random rational point gives ``dim M >= rank``; Theorem C's kernel
    gives ``dim M <= P - dim k``; the statement's formula must be both."""
    d, dd, g, n, a, b, bias = sizes
    arch = Architecture((d, dd), (a,), tokens=2, normalization="softmax", heads=g * n, kv_heads=g, value_ranks=b,
                        biases=bool(bias))
    formula = _value(cert, d=d, dd=dd, g=g, n=n, a=a, b=b, bias=bias)
    kernel = g * (a * a + b * b) + bias * g * (a + b)
    assert formula == arch.parameter_count - kernel
    rng = random.Random(hash(sizes) & 0xFFFF)
    weights = [rng.randint(-3, 3) for _ in range(arch.parameter_count)]
    rank, _ = ball_rank(arch, weights, target=formula, seed=1)
    assert rank == formula, (sizes, rank, formula)


def test_outside_the_hypotheses_the_statement_says_nothing(cert):
    """d = 2 with a = b = 1 and two groups (keys and values may swap between them) is not a size of the theorem."""
    with pytest.raises(Exception, match="violate the hypothesis a \\+ b \\+ d >= 5"):
        piece_at(cert, {"d": 2, "dd": 2, "g": 2, "n": 1, "a": 1, "b": 1, "bias": 0})


# -- the negative corpus ------------------------------------------------------------------------------------------


def _rejected(cert, match, edit):
    forged = copy.deepcopy(cert)
    edit(forged)
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(forged)


def test_a_wider_statement_is_rejected(cert):
    _rejected(cert, "hypotheses is not the checker's statement", lambda c: c["hypotheses"].remove("a + b + d >= 5"))
    _rejected(cert, "hypotheses is not the checker's statement", lambda c: c["hypotheses"].remove("b <= d"))
    _rejected(cert, "formula is not the checker's statement",
              lambda c: c["formula"][0].update(value=c["formula"][0]["value"] + " + 1"))
    _rejected(cert, "argument must be", lambda c: c.update(argument="depth-induction"))
    _rejected(cert, "argument must be", lambda c: c.pop("argument"))
    _rejected(cert, "must have exactly", lambda c: c["pieces"][0].update(core=[[1, 0], [0, 1]]))
    _rejected(cert, "unknown field", lambda c: c["pieces"][0].update(sigma="0"))


@pytest.mark.parametrize("drop, match", [
    ("a + b + d >= 5", "needs d >= 3"),
    ("g*n*a <= d", "needs g\\*n\\*a <= d"),
    ("g*n*b <= dd", "needs g\\*n\\*b <= dd"),
    ("b <= d", "needs b <= d"),
    ("bias <= 1", "needs bias <= 1"),
])
def test_a_wider_table_in_the_checker_is_still_refused_piece_by_piece(cert, monkeypatch, drop, match):
    """Whatever the checker's own table says, each piece must lie where Corollary C's selector point works."""
    theorem = copy.deepcopy(checker.THEOREMS[NAME])
    theorem["hypotheses"].remove(drop)
    monkeypatch.setitem(checker.THEOREMS, NAME, theorem)
    forged = copy.deepcopy(cert)
    forged["hypotheses"] = list(theorem["hypotheses"])
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(forged)


def test_a_wrong_shift_or_a_merged_tree_is_rejected(cert):
    ones = piece_at(cert, {"d": 3, "dd": 3, "g": 1, "n": 1, "a": 1, "b": 1, "bias": 0})
    wide = piece_at(cert, {"d": 4, "dd": 4, "g": 1, "n": 1, "a": 2, "b": 1, "bias": 0})
    _rejected(cert, "0 needs a >= 2 or b >= 2", lambda c: c["pieces"][ones].update(shift="0"))
    _rejected(cert, "1 is Corollary C's point for a = b = 1 only", lambda c: c["pieces"][wide].update(shift="1"))
    _rejected(cert, "must be \"0\" or \"1\"", lambda c: c["pieces"][wide].update(shift="2"))
    _rejected(cert, "must be \"0\" or \"1\"", lambda c: c["pieces"][wide].update(shift=0))

    def merge(c):  # one shift-0 piece for every a = 1 (b = 1 included)
        c["cases"]["lt"] = {"piece": 1}
        del c["pieces"][2]
    _rejected(cert, "0 needs a >= 2 or b >= 2", merge)

    def empty(c):
        c["cases"]["lt"]["lt"] = {"empty": True}
        del c["pieces"][ones]
    _rejected(cert, "marked empty holds sizes", empty)
    _rejected(cert, "does not follow", lambda c: c["pieces"][ones].update(equalities=["a = 1", "b = 2"]))


@pytest.mark.parametrize("name, says", [("deep-fibers", "earlier ranks 2 <= a_i <= d"),
                                        (NAME, "g key-value groups of n heads")])
def test_prove_names_the_networks_beside_the_scope(name, says, capsys):
    """The scope line gives sizes only; the networks line says which architectures (a referee asked where the
    deep-fibers hypotheses on earlier ranks went)."""
    from attngeo.ui.cli import main

    assert main(["prove", name]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert says in lines["networks"] and "scope" in lines
