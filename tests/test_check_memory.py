"""The checker's memory bounds are true: what docs/trust.md promises is what the allocations peak at (issue 20 item 7).

The dense field matrix of an upper witness is ``rows x parameters`` int64
entries; ``MAX_FIELD_ENTRIES`` (4e8) is 3.2 GB only if the matrix is built in
place, not collected as a list of rows and copied (twice the size), nor stacked
with the kernel rows afterwards (a third copy). numpy reports its buffers to
``tracemalloc``, so the peak is measured, not estimated.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from attngeo.check.arch import Arch
from attngeo.check.dimension import kernelfields
from attngeo.check.dimension.dense import _expected_families, _field_rows

P = 67108859
#: what building a field matrix may hold besides the matrix: a few vectors and per-weight temporaries
SLACK_BYTES = 2 * 2**20


def _peak(call) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        return tracemalloc.get_traced_memory()[1] - before, result
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("widths,ranks", [((40, 36, 40, 36), (6, 6, 6)), ((64, 64), (16,))])
def test_the_group_field_matrix_peaks_at_its_own_size(widths, ranks):
    arch = Arch(widths, ranks, 2)
    point = np.random.default_rng(0).integers(0, P, arch.parameters).astype(np.int64)
    rows = sum(f["size"] for f in _expected_families(arch))
    peak, F = _peak(lambda: _field_rows(arch, point, P))
    assert F.shape == (rows, arch.parameters)
    assert peak <= 8 * F.size + SLACK_BYTES, f"peak {peak / 2**20:.1f} MiB for a {F.nbytes / 2**20:.1f} MiB matrix"


def test_the_whole_field_matrix_with_kernel_rows_is_built_in_place():
    """Groups, then kernel families (an annihilator: widths 24 -> 30 after 24), in one allocation."""
    from attngeo.check.dimension.dense import _field_matrix

    arch = Arch((24, 30, 24, 30), (6, 6, 6), 2)
    assert kernelfields.expected(arch)
    point = np.random.default_rng(1).integers(0, P, arch.parameters).astype(np.int64)
    rows = sum(f["size"] for f in _expected_families(arch) + kernelfields.expected(arch))
    peak, F = _peak(lambda: _field_matrix(arch, point, P, []))
    assert F.shape[1] == arch.parameters and sum(f["size"] for f in _expected_families(arch)) < F.shape[0] <= rows
    assert peak <= 8 * rows * arch.parameters + SLACK_BYTES, f"peak {peak / 2**20:.1f} MiB"
