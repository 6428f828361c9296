"""Interop: SymPy forms are exact, and exported Macaulay2 / Singular scripts rebuild an equal ideal."""

import shutil
import subprocess

import pytest
import sympy

from attngeo import Architecture
from attngeo.exact.engine import find_singular, ring
from attngeo.exact.ideal import Ideal, determinantal_ideal
from attngeo.exact.interop import poly_to_sympy, to_sympy


def test_sympy_forms_are_exact_and_round_trip():
    names = ("x", "y", "z")
    x, y, z = ring(names).gens()
    p = x**3 / 7 - 2 * x * y * z + y**2 - z / 3
    expr = poly_to_sympy(p, names)
    assert sympy.Poly(expr, *sympy.symbols(names)).coeffs() == [sympy.Rational(1, 7), -2, 1, sympy.Rational(-1, 3)]
    assert str(expr.subs({"x": 3, "y": 2, "z": 1})) == str(p(3, 2, 1))  # the same value, exactly
    I = determinantal_ideal("A", 2, 3, 2)  # the 2x2 minors of a 2x3 matrix
    assert [sympy.expand(e) for e in I.to_sympy()] == [poly_to_sympy(g, I.variables) for g in I.gens]
    assert to_sympy(I) == I.to_sympy()


def _singular(script: str) -> list[str]:
    run = subprocess.run([find_singular(), "-q", "--no-rc"], input=script + "quit;\n",
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return [line.strip().rstrip(",") for line in run.stdout.splitlines() if line.strip()]


@pytest.mark.singular
@pytest.mark.parametrize("ideal", [
    determinantal_ideal("A", 2, 3, 2),
    Ideal([ring(("x", "y")).gens()[0] ** 2 - ring(("x", "y")).gens()[1] / 2], ("x", "y")),
])
def test_the_singular_script_rebuilds_an_equal_ideal(ideal):
    from attngeo.check.poly import parse

    printed = _singular(ideal.export("singular"))
    ctx = ring(ideal.variables)
    basis = Ideal([parse(t.replace("**", "^"), ctx, "Singular output") for t in printed if not t.startswith("//")],
                  ideal.variables)
    assert basis == ideal  # equal reduced bases: the same ideal


@pytest.mark.msolve
@pytest.mark.singular
def test_the_implicit_quartic_exports_and_rebuilds():
    from attngeo import implicit_equations

    eq = implicit_equations(Architecture((2, 1), (2,), tokens=2))
    assert [len(g) for g in eq.equations] == [7] and eq.equations[0].total_degree() == 4  # one quartic, 7 terms
    test_the_singular_script_rebuilds_an_equal_ideal(eq.ideal)


def _macaulay2_basis(ideal) -> Ideal:
    """Run the exported script in Macaulay2 and read its Groebner basis back in attngeo's names."""
    import re

    from attngeo.check.poly import parse
    from attngeo.exact.interop import macaulay2_name

    script = ideal.export("m2")
    run = subprocess.run([shutil.which("M2"), "--script", "/dev/stdin"], input=script, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    text = run.stdout.strip().removeprefix("matrix {{").removesuffix("}}")
    back = {macaulay2_name(n): n for n in ideal.variables}
    text = re.sub(r"[A-Za-z]\w*_\([\d,]+\)", lambda m: back[m.group(0)], text)  # c_(1,2,1,2) -> c_1_2_12
    ctx = ring(ideal.variables)
    return Ideal([parse(t.strip(), ctx, "Macaulay2 output") for t in text.split(",") if t.strip()], ideal.variables)


@pytest.mark.skipif(shutil.which("M2") is None, reason="Macaulay2 is not installed (apt-get install macaulay2)")
@pytest.mark.parametrize("ideal", [
    determinantal_ideal("A", 2, 3, 2),
    Ideal([ring(("x", "y")).gens()[0] ** 2 - ring(("x", "y")).gens()[1] / 2], ("x", "y")),
])
def test_the_macaulay2_script_rebuilds_an_equal_ideal(ideal):
    assert _macaulay2_basis(ideal) == ideal  # equal reduced bases: the same ideal, read back from the indexed names


@pytest.mark.msolve
@pytest.mark.skipif(shutil.which("M2") is None, reason="Macaulay2 is not installed (apt-get install macaulay2)")
def test_the_implicit_quartic_loads_in_macaulay2_with_coordinate_names():
    from attngeo import implicit_equations

    ideal = implicit_equations(Architecture((2, 1), (2,), tokens=2)).minimal_ideal()
    script = ideal.export("m2")
    assert "c_(1,2,1,2)" in script and "x_1" not in script  # c_k_p_mn as c_(k,p,m,n)
    assert _macaulay2_basis(ideal) == ideal


def test_the_export_scripts_name_every_variable_and_generator():
    ideal = determinantal_ideal("A", 2, 3, 2)
    m2, sing = ideal.export("m2"), ideal.export("singular")
    assert "QQ[A_(1,1), A_(1,2), A_(1,3), A_(2,1)" in m2 and "A_(1,1) = A_1_1" in m2
    assert m2.count(",\n  ") == len(ideal.gens) - 1
    assert "ring r = 0, (A_1_1,A_1_2,A_1_3,A_2_1,A_2_2,A_2_3), dp;" in sing
    with pytest.raises(Exception, match="m2"):
        ideal.export("maple")


@pytest.mark.msolve
@pytest.mark.singular
def test_the_exported_minimal_generators_rebuild_the_whole_ideal():
    """``attngeo implicit --export`` writes the 15 minimal generators of 2,2 a = 2; Singular's basis is G's 39."""
    from attngeo import implicit_equations
    from attngeo.check.poly import parse

    eq = implicit_equations(Architecture((2, 2), (2,), tokens=2))
    script = eq.minimal_ideal().export("singular")
    assert script.count(",\n  ") == len(eq.minimal_generators) - 1 < len(eq.equations) - 1
    ctx = ring(eq.ideal.variables)
    rebuilt = Ideal([parse(t, ctx, "Singular output") for t in _singular(script)], eq.ideal.variables)
    assert rebuilt.groebner().strings() == [str(g) for g in eq.equations]  # the same reduced basis: the same ideal
