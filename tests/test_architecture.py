import re

import pytest

from attngeo import Architecture, InvalidArchitectureError


@pytest.mark.parametrize(
    "widths, ranks, tokens, fragment",
    [
        ((3,), (), 2, "at least d_0 and d_1"),
        ((3, 3, 3), (2,), 2, "ranks has 1 entry but widths describe 2 layers"),
        ((3, 0), (1,), 2, "widths[1] = 0"),
        ((3, 3), (-1,), 2, "ranks[0] = -1"),
        ((3, 2.5), (1,), 2, "widths[1] = 2.5 is not an integer"),
        ((3, 3), (1,), 0, "tokens = 0"),
        ((3, 3), (1,), "2", "tokens = '2' is not an integer"),
        ((3, True), (1,), 2, "not an integer"),
    ],
)
def test_inconsistent_architectures_name_the_field(widths, ranks, tokens, fragment):
    with pytest.raises(InvalidArchitectureError, match=re.escape(fragment)):
        Architecture(widths, ranks, tokens)


def test_unknown_normalization():
    with pytest.raises(InvalidArchitectureError, match="normalization"):
        Architecture((2, 2), (1,), 2, "relu")


@pytest.mark.parametrize("widths, ranks", [((3, 3), (2,)), ((4, 2, 5), (1, 3)), ((2, 3, 4, 5), (1, 2, 3))])
def test_parameter_count_matches_blocks(widths, ranks):
    arch = Architecture(widths, ranks)
    blocks = list(arch.blocks())
    assert sum(b.size for b in blocks) == arch.parameter_count
    assert arch.parameter_count == sum(2 * a * d + e * d for a, d, e in zip(ranks, widths, widths[1:]))
    # offsets tile the parameter vector without gaps
    assert [b.offset for b in blocks] == [sum(x.size for x in blocks[:k]) for k in range(len(blocks))]
    assert len(set(arch.variable_names())) == arch.parameter_count


def test_frozen_and_round_trip():
    arch = Architecture([3, 3], [2], tokens=3)
    assert arch.widths == (3, 3)
    assert Architecture.from_dict(arch.to_dict()) == arch
    with pytest.raises(Exception):
        arch.tokens = 4


def test_parameter_count_is_the_blocks_total_for_every_variant():
    from attngeo import Architecture

    for kw in ({}, {"heads": 3}, {"heads": (2, 1), "value_ranks": 2}, {"value_ranks": (1, 3), "residual": True},
               {"heads": 2, "causal": True}):
        arch = Architecture((3, 3, 3), (2, 1), tokens=2, **kw)
        assert arch.parameter_count == sum(b.size for b in arch.blocks()) == len(arch.variable_names())
