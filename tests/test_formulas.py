import pytest

from attngeo import Architecture, hmk_formula, naive_count
from attngeo.model.formulas import deep_equal_width_dimension, single_layer_dimension


def test_deep_formula_at_one_layer_is_the_single_layer_formula():
    for d in range(1, 7):
        for e in (d,):
            for a in range(1, d + 1):
                assert deep_equal_width_dimension(1, d, a) == single_layer_dimension(d, e, a)


@pytest.mark.parametrize(
    "widths, ranks, t, applies",
    [((3, 3), (2,), 2, True), ((3, 3), (4,), 2, True), ((3, 3), (2,), 1, False), ((3, 3, 3), (2, 2), 2, True),
     ((3, 3, 3), (4, 4), 2, False), ((3, 2, 3), (2, 2), 2, False)],
)
def test_hypotheses_are_reported(widths, ranks, t, applies):
    f = hmk_formula(Architecture(widths, ranks, t))
    assert f.applies is applies
    assert f.reason


def test_naive_count_equals_deep_formula_for_equal_widths():
    for l in (1, 2, 3):
        for d in range(1, 6):
            for a in range(1, d + 1):
                assert naive_count(Architecture((d,) * (l + 1), (a,) * l)) == deep_equal_width_dimension(l, d, a)
