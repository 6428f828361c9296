import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from flint import nmod_mat

from attngeo.exact.rank import maximal_minor_mod_p, rank_mod_p, rank_over_q


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), r=st.integers(0, 5), m=st.integers(1, 7), n=st.integers(1, 7))
def test_maximal_minor_is_nonsingular_and_maximal(seed, r, m, n):
    rng = np.random.default_rng(seed)
    A = rng.integers(-5, 6, (m, r)) @ rng.integers(-5, 6, (r, n))  # rank <= r
    p = 1000003
    rank, rows, cols = maximal_minor_mod_p(A, p)
    assert rank == rank_mod_p(A, p) == len(rows) == len(cols)
    assert rank <= rank_over_q(A) <= min(r, m, n)
    if rank:
        sub = A[np.ix_(rows, cols)] % p
        assert nmod_mat(sub.tolist(), p).det() != 0
