"""Structure-aware fuzzing of the certificate checker (issue 11, item 5).

Honest certificates of every kind (tests/attacks/make_corpus.py) are mutated the
way a person editing the JSON would: an integer bumped, two entries swapped, a
key dropped, an entry duplicated, a value replaced by a huge, negative,
boolean, float, string or malformed number, the prime or the point changed, an
embedded certificate or the architecture taken from another certificate. Two
properties must hold for every mutant:

(a) only ``CertificateRejected``, ``CertificateFormatError`` or ``CannotVerify``
    leaves ``check_certificate``, and never the checker's safety net (an
    exception it did not anticipate, reported as "the checker met ..."): both
    are checker bugs;
(b) a mutant the checker accepts proves the honest claim: its ``.claim`` is the
    honest certificate's.

Mutations that only mislead run in this process; values that could make a
careless checker hang (``"1e999999999"``, ``9^9^9^9``, 5000-digit integers) run
through ``check_file``, in an isolated worker with a time budget.

The default profile is bounded and derandomized (a few seconds per kind). The
long profile: ``ATTNGEO_FUZZ=long python3 -m pytest -m fuzz tests/test_check_fuzz.py``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import signal
import time
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from attacks import make_corpus as corpus
from attngeo.check import check_certificate, check_file
from attngeo.exact.engine import INSTALL_HINT
from attngeo.exceptions import CannotVerify, CertificateFormatError, CertificateRejected

REFUSED = (CertificateRejected, CertificateFormatError, CannotVerify)
#: how the checker words an exception it did not anticipate: a refusal, but a bug to fix
_SAFETY_NET = "the checker met"
LONG = os.environ.get("ATTNGEO_FUZZ") == "long"
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
BOUNDED = settings(max_examples=50, derandomize=True, deadline=None, database=None,
                   suppress_health_check=_QUIET)
BOUNDED_ISOLATED = settings(BOUNDED, max_examples=8)
LONG_SETTINGS = settings(max_examples=1500, deadline=None, database=None, suppress_health_check=_QUIET)
LONG_ISOLATED = settings(LONG_SETTINGS, max_examples=150)
#: one in-process check may take this long before it counts as a hang (pool certificates take < 0.2 s)
PER_CHECK_SECONDS = 20
BUDGET = 10.0

KINDS = {
    "dimension": ["dimension", "dimension-deep", "dimension-gap", "dimension-softmax", "dimension-kernel-fields",
                  "dimension-structured", "dimension-identity", "dimension-identity-softmax", "dimension-multihead",
                  "dimension-span", "dimension-rank-mixing"],
    "fiber": ["fiber-random", "fiber-rank1-swap", "fiber-rank1-parallel", "fiber-zero"],
    "deep-fiber": ["deep-fiber-orbit", "deep-fiber-hidden", "deep-fiber-line"],
    "virtual-fiber": ["virtual-fiber-orbit", "virtual-fiber-swap"],
    "singular-point": ["singular-random", "singular-rank1-swap", "singular-rank1-parallel", "singular-by-equations",
                       "singular-by-degrees"],
    "strata": ["strata"],
    "implicit": ["implicit-proved", "implicit-elimination"],
    "implicit-graded": ["implicit-graded-quartic", "implicit-graded-quadrics"],
    "implicit-rank-one": ["implicit-rank-one"],
    "boundary-point": ["boundary-random", "boundary-rank1-parallel", "boundary-zero", "boundary-definite"],
    "local-rank": ["local-rank-separated", "local-rank-jacobian", "local-rank-softmax"],
}
_NEEDS_MSOLVE = {kind for kind, names in KINDS.items() if all(n in corpus.MSOLVE_KINDS for n in names)}
KIND_PARAMS = [pytest.param(k, id=k, marks=[pytest.mark.msolve] if k in _NEEDS_MSOLVE else []) for k in KINDS]

#: keys under which one certificate embeds another
EMBEDDED = ("dimension_certificate", "fiber_certificate", "implicit_certificate", "point_certificate",
            "graded_certificate")

_RATIONAL = re.compile(r"^-?\d+(/\d+)?$")

#: replacements that cannot make even a careless checker hang (in process)
ODD_VALUES = [10**30, -10**30, 2**63, -1, 0, True, False, 0.5, 1.0, -0.0, float("nan"), float("inf"), "x", "",
              "1/0", "1/2/3", " 3", "0x10", "3.5", "-", "1e3", None, [], {}, [[]], {"a": 1}]
#: replacements for the isolated run: a naive reader or parser hangs, runs out of memory or aborts on them
HOSTILE_VALUES = ["1e999999999", "9^9^9^9", "x0^100000", "1/" + "9" * 5000, "(" * 5000, "huge-int", "huge-neg"]


@pytest.fixture(scope="session")
def pool() -> dict:
    return corpus.honest_pool()


@pytest.fixture(scope="session")
def claims(pool) -> dict:
    return {name: check_certificate(cert).claim for name, cert in pool.items()}


# -- walking a certificate ------------------------------------------------------------------------


def _nodes(value, path=()):
    """Every ``(path, value)`` below ``value``, containers included (the root first)."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, path + (i,))


def _get(cert, path):
    for step in path:
        cert = cert[step]
    return cert


def _set(cert, path, value) -> None:
    _get(cert, path[:-1])[path[-1]] = value


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return _is_int(v) or (isinstance(v, str) and bool(_RATIONAL.match(v)))


def _plus(v, delta: int):
    return v + delta if _is_int(v) else str(Fraction(v) + delta)


# -- mutations: each edits ``cert`` in place and says what it did --------------------------------------


def _bump(cert, data, pool) -> str:
    paths = [p for p, v in _nodes(cert) if p and _is_number(v)]
    path = data.draw(st.sampled_from(paths))
    delta = data.draw(st.sampled_from([1, -1, 2, -2, 7]))
    _set(cert, path, _plus(_get(cert, path), delta))
    return f"bump {path} by {delta}"


def _swap(cert, data, pool) -> str:
    lists = [p for p, v in _nodes(cert) if isinstance(v, list) and len({json.dumps(x) for x in v}) > 1]
    path = data.draw(st.sampled_from(lists))
    items = _get(cert, path)
    i = data.draw(st.integers(0, len(items) - 1))
    j = data.draw(st.sampled_from([k for k in range(len(items)) if json.dumps(items[k]) != json.dumps(items[i])]))
    items[i], items[j] = items[j], items[i]
    return f"swap entries {i}, {j} of {path}"


def _drop(cert, data, pool) -> str:
    dicts = [p for p, v in _nodes(cert) if isinstance(v, dict) and v]
    path = data.draw(st.sampled_from(dicts))
    key = data.draw(st.sampled_from(sorted(_get(cert, path))))
    del _get(cert, path)[key]
    return f"drop {path + (key,)}"


def _duplicate(cert, data, pool) -> str:
    lists = [p for p, v in _nodes(cert) if isinstance(v, list) and v]
    path = data.draw(st.sampled_from(lists))
    items = _get(cert, path)
    i = data.draw(st.integers(0, len(items) - 1))
    j = data.draw(st.integers(0, len(items)))
    items.insert(j, copy.deepcopy(items[i]))
    return f"duplicate entry {i} of {path} at {j}"


def _replace(cert, data, pool) -> str:
    paths = [p for p, _ in _nodes(cert) if p]
    path = data.draw(st.sampled_from(paths))
    value = copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES)))
    _set(cert, path, value)
    return f"replace {path} with {value!r}"


_PRIMES = [2, 3, 65537, 67108837, 67108859, 2147483647]


def _prime(cert, data, pool) -> str:
    paths = [p for p, v in _nodes(cert) if p and p[-1] == "prime"]
    path = data.draw(st.sampled_from(paths))
    value = data.draw(st.sampled_from([q for q in _PRIMES if q != _get(cert, path)]))
    _set(cert, path, value)
    return f"prime {path} -> {value}"


def _point(cert, data, pool) -> str:
    entries = [p for p, v in _nodes(cert) if len(p) >= 2 and p[-2] == "point" and _is_number(v)]
    path = data.draw(st.sampled_from(entries))
    delta = data.draw(st.sampled_from([1, -1, 3]))
    _set(cert, path, _plus(_get(cert, path), delta))
    return f"point entry {path} moved by {delta}"


_FOREIGN: dict = {}


def _foreign(pool: dict) -> dict:
    """Every certificate that is or is embedded in a pool certificate, by kind (JSON text -> dict)."""
    if id(pool) in _FOREIGN:
        return _FOREIGN[id(pool)]
    out = _FOREIGN[id(pool)] = {}
    for cert in pool.values():
        for _, v in _nodes(cert):
            if isinstance(v, dict) and "kind" in v and "format" in v:
                out.setdefault(v["kind"], {})[json.dumps(v, sort_keys=True)] = v
    return out


def _embed(cert, data, pool) -> str:
    """An embedded certificate swapped for another one, of another point, architecture or kind."""
    paths = [p for p, v in _nodes(cert) if p and p[-1] in EMBEDDED and isinstance(v, dict)]
    path = data.draw(st.sampled_from(paths))
    current = json.dumps(_get(cert, path), sort_keys=True)
    options = {kind: [v for text, v in sorted(certs.items()) if text != current]
               for kind, certs in _foreign(pool).items()}
    kind = data.draw(st.sampled_from(sorted(k for k, v in options.items() if v)))
    value = copy.deepcopy(data.draw(st.sampled_from(options[kind])))
    _set(cert, path, value)
    return f"embed a {kind} certificate of {value.get('architecture')} at {path}"


def _architecture(cert, data, pool) -> str:
    paths = [p for p, v in _nodes(cert) if p and p[-1] == "architecture"]
    path = data.draw(st.sampled_from(paths))
    current = _get(cert, path)
    options = sorted({json.dumps(v["architecture"], sort_keys=True) for v in pool.values()} -
                     {json.dumps(current, sort_keys=True)})
    value = json.loads(data.draw(st.sampled_from(options)))
    _set(cert, path, value)
    return f"architecture {path} -> {value}"


def _applicable(cert) -> list:
    nodes = list(_nodes(cert))
    out = [_bump, _drop, _duplicate, _replace]
    if any(isinstance(v, list) and len({json.dumps(x) for x in v}) > 1 for _, v in nodes):
        out.append(_swap)
    if any(p and p[-1] == "prime" for p, _ in nodes):
        out.append(_prime)
    if any(len(p) >= 2 and p[-2] == "point" and _is_number(v) for p, v in nodes):
        out.append(_point)
    if any(p and p[-1] in EMBEDDED and isinstance(v, dict) for p, v in nodes):
        out.append(_embed)
    if any(p and p[-1] == "architecture" for p, _ in nodes):
        out.append(_architecture)
    return out


# -- the properties ---------------------------------------------------------------------------------


class _TooSlow(BaseException):
    """Not an Exception, so a checker's broad ``except Exception`` cannot turn it into a verdict."""


@contextlib.contextmanager
def _deadline(seconds: float):
    def alarm(signum, frame):
        raise _TooSlow(f"one in-process check ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _names(kind: str, pool: dict) -> list[str]:
    names = [n for n in KINDS[kind] if n in pool]
    if not names:
        pytest.skip(f"no honest {kind} certificate here: msolve is not installed; {INSTALL_HINT}")
    return names


def _mutant(kind: str, pool: dict, data) -> tuple[str, dict]:
    name = data.draw(st.sampled_from(_names(kind, pool)), label="honest certificate")
    cert = copy.deepcopy(pool[name])
    for _ in range(data.draw(st.integers(1, 2), label="mutations")):
        mutation = data.draw(st.sampled_from(_applicable(cert)), label="mutation")
        note(mutation(cert, data, pool))
    return name, cert


def _in_process(kind: str, pool: dict, claims: dict, data) -> None:
    name, cert = _mutant(kind, pool, data)
    _judge(cert, claims[name], "the mutant")


def _true_by_the_provers(cert: dict, claim: str) -> bool:
    """A mutant may be an honest certificate of another true claim: the provers must then make the same one.

    Boundary points do this (the zero, square and definite shapes do not depend on
    the rank ``a``), so do degree-by-degree equations (every ``a >= d`` is the same ``M``),
    and so do dimension witnesses that do not read every field of
    the architecture: for one layer the plain point's coefficient map is the same
    for every ``t >= 2``, and a span bound holds with or without a residual connection.
    Local ranks of lightning layers hold for every ``t >= 2`` and with or without a mask.
    """
    if cert.get("kind") == "dimension":
        from attngeo import Architecture, certify_dimension

        truth = certify_dimension(Architecture.from_dict(cert["architecture"]), seed=0)
        return truth.certified and claim.startswith(f"dim M = {truth.dimension} for ")
    if cert.get("kind") == "local-rank":  # one lightning layer's local rank is the same for every t >= 2
        from attngeo import Architecture
        from attngeo.geometry.loci.regularity import local_rank

        truth = local_rank(Architecture.from_dict(cert["architecture"]), cert["point"], seed=0)
        return claim == str(check_certificate(truth.to_json()).claim)
    if cert.get("kind") == "implicit-graded":  # a rank a >= d is the same M: its equations are the same
        from attngeo import Architecture
        from attngeo.geometry.loci.graded import graded_equations

        truth = graded_equations(Architecture.from_dict(cert["architecture"]), cert["max_degree"])
        return check_certificate(truth.to_json()).claim == claim
    if cert.get("kind") != "boundary-point":
        return False
    from attngeo import Architecture
    from attngeo.geometry.loci.boundary import is_boundary_point
    from attngeo.model.layerfunction import LayerFunction

    a = cert["architecture"]
    arch = Architecture(a["widths"], a["ranks"], a["tokens"], a["normalization"])
    den = Fraction(cert["denominator"])
    tensor = [[[[Fraction(x) / den for x in r] for r in m] for m in k] for k in cert["tensor"]]
    v = is_boundary_point(arch, LayerFunction.from_tensor(arch, tensor))
    where = f"(widths {','.join(map(str, a['widths']))}, rank {a['ranks'][0]})"
    return claim.startswith(v.verdict) and where in claim and claim.endswith(f": {v.shape}")


def _write_hostile(cert: dict, path, value: str) -> None:
    """JSON text with ``value`` in place of a placeholder (5000-digit integers cannot go through json.dumps)."""
    digits = {"huge-int": "9" * 5000, "huge-neg": "-" + "8" * 5000}
    text = json.dumps(cert)
    if value in digits:
        text = text.replace('"@HOSTILE@"', digits[value])
    path.write_text(text)


def _isolated(kind: str, pool: dict, claims: dict, data, folder) -> None:
    name = data.draw(st.sampled_from(_names(kind, pool)), label="honest certificate")
    cert = copy.deepcopy(pool[name])
    paths = [p for p, v in _nodes(cert) if p and not isinstance(v, (dict, list))]
    path = data.draw(st.sampled_from(paths), label="where")
    value = data.draw(st.sampled_from(HOSTILE_VALUES), label="hostile value")
    _set(cert, path, "@HOSTILE@" if value.startswith("huge-") else value)
    note(f"{path} = {value[:40]!r}")
    file = folder / "mutant.json"
    _write_hostile(cert, file, value)
    start = time.monotonic()
    try:
        result = check_file(file, seconds=BUDGET, memory_mb=2048)
    except REFUSED as exc:
        assert _SAFETY_NET not in str(exc), f"a checker bug, caught by its safety net: {exc}"
        result = None
    assert time.monotonic() - start < BUDGET + 5
    if result is not None:
        assert result.claim == claims[name]


def _judge(cert: dict, honest_claim: str, what: str) -> None:
    """Properties (a) and (b) for one mutant."""
    with _deadline(PER_CHECK_SECONDS):
        try:
            result = check_certificate(cert)
        except REFUSED as exc:
            assert _SAFETY_NET not in str(exc), f"{what}: a checker bug, caught by its safety net: {exc}"
            return
    assert result.claim == honest_claim or _true_by_the_provers(cert, result.claim), \
        f"{what}: accepted with another claim: {result.claim!r} (honest: {honest_claim!r})"


#: one odd value of each type: the sweep tries every one in every place it reaches
SWEEP_VALUES = [[], {}, None, True, "x", -1, 10**30, 0.5]
#: the sweep's default reach: every key of the certificate (the long run: every node)
SWEEP_NAMES = [n for n in corpus.MSOLVE_KINDS if not n.startswith("deep-fiber")] + ["deep-fiber-orbit"]


def _sweep(pool: dict, claims: dict, name: str, paths) -> None:
    if name not in pool:
        pytest.skip(f"{name} needs msolve, which is not installed; {INSTALL_HINT}")
    failures = []
    for path in paths:
        for value in SWEEP_VALUES:
            cert = copy.deepcopy(pool[name])
            _set(cert, path, copy.deepcopy(value))
            try:
                _judge(cert, claims[name], f"{name}: {path} = {value!r}")
            except AssertionError as exc:  # every failure at once: they are usually one missing type check
                failures.append(str(exc).splitlines()[0])
    assert not failures, f"{len(failures)} mutants:\n" + "\n".join(failures[:30])


@pytest.mark.parametrize("name", [pytest.param(n, id=n, marks=[pytest.mark.msolve] if n in corpus.MSOLVE_KINDS else [])
                                  for n in [*{n for k in KINDS.values() for n in k} - set(corpus.MSOLVE_KINDS),
                                            *SWEEP_NAMES]])
def test_every_field_refuses_a_value_of_the_wrong_type(pool, claims, name):
    """Deterministic: each top-level field replaced by one value of each JSON type, in turn."""
    if name not in pool:
        pytest.skip(f"{name} needs msolve, which is not installed; {INSTALL_HINT}")
    _sweep(pool, claims, name, [(k,) for k in pool[name]])


@pytest.mark.fuzz
@pytest.mark.skipif(not LONG, reason="the long fuzz runs with ATTNGEO_FUZZ=long (python3 -m pytest -m fuzz)")
@pytest.mark.parametrize("name", [pytest.param(n, id=n) for k in KINDS.values() for n in k])
def test_long_sweep_of_every_node(pool, claims, name):
    if name not in pool:
        pytest.skip(f"{name} needs msolve, which is not installed; {INSTALL_HINT}")
    _sweep(pool, claims, name, [p for p, _ in _nodes(pool[name]) if p])


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_mutants_are_refused_or_prove_the_honest_claim(pool, claims, kind):
    BOUNDED(given(data=st.data())(lambda data: _in_process(kind, pool, claims, data)))()


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_hostile_values_are_refused_in_isolation(pool, claims, kind, tmp_path):
    BOUNDED_ISOLATED(given(data=st.data())(lambda data: _isolated(kind, pool, claims, data, tmp_path)))()


@pytest.mark.fuzz
@pytest.mark.skipif(not LONG, reason="the long fuzz runs with ATTNGEO_FUZZ=long (python3 -m pytest -m fuzz)")
@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_long_fuzz(pool, claims, kind, tmp_path):
    LONG_SETTINGS(given(data=st.data())(lambda data: _in_process(kind, pool, claims, data)))()
    LONG_ISOLATED(given(data=st.data())(lambda data: _isolated(kind, pool, claims, data, tmp_path)))()
