"""Deep fibers: the gauge, the elimination and the hidden symmetries it finds."""

import random

import pytest

from attngeo import Architecture, InvalidInputError, evaluate
from attngeo.geometry.fibers.deep import deep_fiber, gauge, gauge_point, same_function, staircase
from attngeo.exact.engine import groebner, ring
from attngeo.geometry.symmetry import act

needs_msolve = pytest.mark.msolve


def test_the_gauge_fixes_one_entry_per_symmetry_dimension():
    arch = Architecture((3, 2, 2), (2, 1))
    fixed = gauge(arch)
    # GL_2 + GL_1 (Q blocks) + GL_2 (V_1 block) + two scalings (K_i[0, 0])
    assert len(fixed) == 4 + 1 + 4 + 2
    with pytest.raises(InvalidInputError, match="expanding"):
        gauge(Architecture((2, 3, 2), (1, 1)))
    with pytest.raises(InvalidInputError, match="a_1"):
        gauge(Architecture((2, 2, 2), (3, 1)))


def test_staircase_counts_solutions_with_multiplicity():
    names = ("x", "y")
    ctx = ring(names)
    x, y = ctx.gens()
    assert staircase(groebner([x**2 - 1, y - x], names, "flint")) == 2
    assert staircase(groebner([x**2, y], names, "flint")) == 2  # a double point
    assert staircase(groebner([x * y], names, "flint")) is None  # a curve


def test_same_function_separates_and_identifies():
    arch = Architecture((2, 2, 2), (2, 2))
    p = gauge_point(arch, random.Random(1))
    moved = act(arch, p, "inter", 1, [[1, 1], [0, 2]])
    assert same_function(arch, p, moved)
    other = list(p)
    other[-1] += 1
    assert not same_function(arch, p, other)


@needs_msolve
def test_equal_widths_fiber_is_the_orbit():
    fib = deep_fiber(Architecture((2, 2, 2), (2, 2)), seed=11)
    assert fib.certified and fib.solutions == 1 and not fib.extra


@needs_msolve
def test_a1_equal_1_has_a_hidden_transpose_symmetry():
    arch = Architecture((2, 1, 2), (1, 1))
    fib = deep_fiber(arch, seed=3)
    assert fib.certified and fib.solutions == 2
    (other,) = fib.extra
    rng = random.Random(0)
    for _ in range(3):  # the same function, seen through plain evaluation
        X = [[rng.randint(-5, 5) for _ in range(2)] for _ in range(2)]
        assert evaluate(arch, fib.point, X) == evaluate(arch, other, X)
    assert other != fib.point  # two points of one slice lie on two different orbits


def test_deep_fibers_refuse_t_equal_1():
    with pytest.raises(InvalidInputError, match="t >= 2"):
        deep_fiber(Architecture((2, 2, 2), (2, 2), tokens=1), seed=1)


@needs_msolve
def test_a1_equal_1_and_full_a2_has_a_hidden_line_of_skew_shifts():
    arch = Architecture((2, 2, 2), (1, 2))
    fib = deep_fiber(arch, seed=2025)
    assert fib.certified and fib.solutions is None and fib.line is not None
    moved = [w + 7 * v for w, v in zip(fib.point, fib.line)]
    assert moved != fib.point and same_function(arch, fib.point, moved)
    # the direction moves only K_2, by a skew matrix: A_2 = K_2^T Q_2 changes by a skew matrix
    names = arch.variable_names()
    changed = {n: v for n, v in zip(names, fib.line) if v != 0}
    assert set(changed) <= {"K2_0_1", "K2_1_0"} and changed["K2_0_1"] == -changed["K2_1_0"]


@needs_msolve
def test_factor_verdicts_count_every_root_of_the_eliminant():
    """Each irreducible factor of g is decided at once; the count is the sum of the degrees
    that pass, and W_0's own factor always passes."""
    fib = deep_fiber(Architecture((2, 2, 2), (1, 1)), seed=2025)
    assert fib.factors and sum(f["degree"] for f in fib.factors) == fib.solutions
    assert fib.fiber_points == 1 + len(fib.extra) == 2
    orbit = deep_fiber(Architecture((2, 2, 2), (2, 2)), seed=2025)
    assert orbit.factors == [dict(orbit.factors[0], fiber=True)] and orbit.fiber_points == 1


@needs_msolve
def test_a_basis_outside_shape_position_is_parametrized_and_every_point_checked():
    arch = Architecture((2, 2, 1), (1, 1))
    fib = deep_fiber(arch, seed=2025)
    assert fib.param is not None and fib.param.g.degree() == fib.solutions == 6
    # every rational solution is an honest fiber point, seen through plain evaluation
    rng = random.Random(1)
    X = [[rng.randint(-5, 5) for _ in range(2)] for _ in range(2)]
    for other in fib.extra:
        assert evaluate(arch, other, X) == evaluate(arch, fib.point, X)
    assert fib.certified and fib.fiber_points == 6


def test_parametrize_finds_a_separating_form():
    from attngeo.geometry.fibers.deep import parametrize, rational_solutions

    names = ("x", "y")
    ctx = ring(names)
    x, y = ctx.gens()
    # the four points (+-1, +-1): neither x nor y separates them, a form x + c y does
    basis = groebner([x**2 - 1, y**2 - 1], names, "flint")
    p = parametrize(basis, random.Random(0))
    assert p is not None and p.g.degree() == 4 and any(c != 0 for c in p.form[1:])
    points = {tuple(int(v) for v in pt) for pt in rational_solutions(p)}
    assert points == {(1, 1), (1, -1), (-1, 1), (-1, -1)}
