"""Every limit the checker enforces, in one place (docs/trust.md lists them with reasons and the time each buys).

A certificate is hostile until proved otherwise: each number below bounds the
work one field can cause *before* that work starts, so a small file cannot
make the checker hang, exhaust memory or crash the interpreter. Inputs beyond
a limit are refused as unusable (exit 2) with a message naming the limit.

Work limits count the replay's arithmetic from the witness's recorded sizes
alone (columns, inputs, blocks, precision), before any of it is done; the
seconds each allows at its limit are measured in docs/trust.md.
"""

from ..exceptions import CertificateFormatError

#: Largest certificate file read (bytes). The largest honest certificates
#: (dimension, d = 64) are a few MB; a single-layer d = 768 witness stays below this.
MAX_FILE_BYTES = 256 * 1024 * 1024
#: Deepest nesting of JSON arrays/objects (honest certificates nest at most 8 deep).
MAX_DEPTH = 32
#: Decimal digits of one integer, or of a numerator or denominator of a rational.
MAX_DIGITS = 2000
#: Widths, ranks and tokens: at most this (keeps every inner product of the
#: dimension checker below 2**63, see dimension.py).
MAX_SIZE = 2047
#: Widths and ranks of a witness that only ranks matrices with FLINT (Theorem C's criterion, the heads of a
#: local-rank certificate): no int64 product to bound, but two n x n ranks; LLaMA-7B's 4096 takes about a
#: minute of the whole check (docs/trust.md), 8192 several.
MAX_WIDE_SIZE = 8192
#: Entries the pairwise (C4) tests of Theorem C convert into FLINT matrices (pairs x 4 stacks x 2 max(a, b) rows x d):
#: honest certificates need none when max(a, b) >= 2 (a full stack of K); 200 groups of a = b = 1 at d = 2047 would
#: convert 6.5e8 (88 s measured): 5e7 is about 7 s.
MAX_PAIR_ENTRIES = 50_000_000
#: Parameters of an architecture (heads multiply them): refused before any array is sized.
MAX_PARAMETERS = 100_000_000
#: Entries of the dense field matrix a dimension certificate's upper witness makes the checker build
#: (rows of every family x parameters): 4*10^8 int64 entries are 3.2 GB. Honest dense witnesses stay below
#: (four layers of width 48: 7.5*10^7); larger networks use the structured witnesses.
MAX_FIELD_ENTRIES = 400_000_000
#: Head moves of the multi-head mixing families built and tested at the point (fields x heads of the layer):
#: O(h^3) small operations for rank-mixing, about 1e-4 s each (loaded); 60 heads of 2 -> 1 are 2.1e5 (23 s).
MAX_MIXING_MOVES = 200_000
#: Work limits count estimated nanoseconds of one core, from a witness's sizes and measured unit costs (each
#: module names its own); docs/trust.md has the seconds measured at each limit.
#: A ball witness's replay (dual-number networks, determinants of balls): honest ones need well under a second
#: (the paper's delta = 10 family: about 1e8 ns; softmax l = 2, d = 32 at identity points: about 3e9).
MAX_BALL_WORK = 60_000_000_000
#: Widths of single-layer certificates (fiber, singular point, strata, boundary, implicit):
#: their checkers expand d' x d quadratic forms in d variables, so the work grows like d^4.
MAX_LAYER_WIDTH = 64
#: Entries of one matrix whose rank a local-rank certificate makes the checker compute over Q (a head's
#: matrix that is rank-deficient mod p; GPT-2's 64 x 768 has 49,152).
MAX_EXACT_RANK_ENTRIES = 200_000
#: Parameters of a layer whose local rank is witnessed by a Jacobian minor at the point (honest: 4,096).
MAX_LOCAL_JACOBIAN_PARAMETERS = 10_000
#: Work of that witness's replay, inputs x parameters x (functionals + t^2 x width): honest d = 16 needs 2 10^7.
MAX_LOCAL_JACOBIAN_WORK = 10**9
#: Pairwise row-space tests of separated heads (only when the stacked K is not of full rank; 12 heads: 66).
MAX_PAIR_TESTS = 20_000
#: Largest prime of a modular witness (products of two residues stay below 2**52).
MAX_PRIME = 1 << 26
#: Polynomials: characters, terms, and the exponent of one variable.
MAX_POLY_CHARS = 4_000_000
MAX_TERMS = 200_000
MAX_EXPONENT = 64
#: Variables of a polynomial ring the checker builds.
MAX_VARIABLES = 400
#: Monomials the checker may enumerate for one staircase or one Hilbert-function degree.
MAX_MONOMIALS = 2_000_000
#: Monomial divisibility tests (monomials enumerated x leading monomials) for all the staircase and
#: Hilbert counts of one certificate: the honest 3,1 a = 3 equations need about 1.7e8.
MAX_MONOMIAL_TESTS = 300_000_000
#: Work of checking a virtual-fiber certificate, in estimated nanoseconds of one core, priced from its sizes and
#: the digits of its numbers (distinct denominators summed, ``factor_digits``) before anything is verified
#: (attngeo/check/fibers/virtual.py, ``price``): the virtual weights and Identity T layer by layer (``d x d``
#: products whose entries grow with the depth), one ``2d x 2d`` dominance determinant per layer and the embedded
#: last layer's ``d_l d^2 (d + 1) / 2`` coefficients. Honest certificates: widths 32,32,32 ranks 8,8 about 1e9
#: (0.1 s measured); 64,64,64,64 ranks 32,32,32 1.2e10 (10 s); 2,000-digit weights at depth 64 of width 64
#: would be about 1e16, refused.
MAX_VIRTUAL_FIBER_WORK = 60_000_000_000
#: Work of all the polynomial evaluations of one deep-fiber certificate (its rebuilt equations, its points'
#: functions, its factors), priced by attngeo/check/fibers/rebuild.py before any is made, in term products times
#: the words of a monomial. Measured 0.2 to 3.7 ns a unit (loaded 2-core machine: widths 4,3,3 ranks 2,2, 2.5e10 in
#: 5.2 s; 8,8 with four heads, 3e8 in 1.1 s), so the limit buys about 40 s at most. Honest certificates (proofs/
#: deep_fibers.py --full, multihead_fibers.py --full): at most 8e7 (widths 3,2,2, ranks 2,1).
MAX_REBUILD_WORK = 10_000_000_000
#: CPU seconds of one msolve replay (deep-fiber and implicit eliminations), priced from the rebuilt system before
#: msolve starts (attngeo/check/msolve.py, replay_bound): above this the certificate is unusable at once, below it
#: msolve runs with its priced bound as its CPU limit. Honest replays measured: at most 54 s (widths 3,2,2, ranks
#: 2,1, priced 116 s); widths 8,8 with four heads (364 variables) is priced at 10^26 s.
MAX_REPLAY_SECONDS = 120
#: Nodes of the branch-and-bound search for the dimension of a monomial ideal.
MAX_SEARCH_NODES = 2_000_000
#: A 'stack point' witness (deep multi-head residual stacks): the entries of one layer, and of the group fields'
#: minor, the checker lists (GPT-2 small's stack: 2.4e6 each), and the inputs of one type's tiny stack
#: (honest ones: at most a few hundred).
MAX_STACK_ENTRIES = 100_000_000
MAX_STACK_INPUTS = 4096
#: Entries of one layer a 'stack point' checker lists and gives owners (4 a d; GPT-2 small 196,608, GPT-2 XL's
#: d = 1600, a = 64 409,600): about 1 us each (loaded); d = 2046, a = 1023 (8.4e6) took 8 to 15 s and 1.3 GB.
MAX_STACK_LAYER_ENTRIES = 4_000_000
#: Multiply-adds of a lightning 'stack point' replay (forward mode of every tiny block mod p, and their ranks),
#: priced before any is done: 10 to 30 ns each were measured (loaded 2-core machine), so the limit buys 20 to 60 s.
#: Honest: l = 32, t = 2 needs 1e8 (1.2 s); l = 64, t = 3 about 9e8 (9.6 s). Before the limit, 400 inputs per type
#: at l = 64 (a 46 kB file) took 42 s, and 4,096 would take minutes.
MAX_STACK_WORK = 2 * 10**9
#: Degree-by-degree implicit equations (kind implicit-graded): the largest degree, the largest block (monomials
#: of one degree and one dominant torus weight) and the sum of squared block sizes, which bounds the evaluation
#: matrices and the products. Honest certificates: widths 4,1 degree 5 has blocks up to 965 monomials and a sum of
#: squares of 4.6e6; widths 3,2 degree 5: 1,194 and 8.7e6.
MAX_GRADED_DEGREE = 8
MAX_GRADED_BLOCK = 6_000
MAX_GRADED_WORK = 50_000_000
#: Generators of a whole-ideal certificate (kind implicit-rank-one, Theorem 7.9), counted from d before any is built:
#: each is rebuilt, parsed and composed with the parametrization. Honest: d = 6 lists 12,950, d = 7 49,098.
MAX_RANK_ONE_GENERATORS = 60_000
#: States of the count of one certificate's blocks (memoized partial weights; about 4 microseconds each). Honest
#: widths 4,1 and 3,2 at degree 5 need 4.5e4; widths 8,1 at degree 6 would need 1.2e7 (a minute).
MAX_GRADED_STATES = 1_000_000
#: Digits of one coefficient of a representative, denominators cleared (honest ones: a few; rational reconstruction
#: modulo a 62-bit prime gives at most 10 per numerator and denominator). The exact ranks of the products grow with
#: them: widths 3,2 a = 2 degree 4 checks in 1.2 s honest, 2.5 s at 100 digits, 91 s at 1,950 digits (loaded).
MAX_GRADED_DIGITS = 100
#: Precision of a ball witness (bits).
MIN_PRECISION, MAX_PRECISION = 53, 1 << 16
#: Rows of one dense minor mod p (a Jacobian or field minor): its determinant costs n^3, the list that hands it
#: to FLINT 36 n^2 bytes (6,000: 1.3 GB and about 50 s). Honest dense witnesses: rank 1,928 at 4,832 parameters.
MAX_DENSE_MINOR = 6000
#: Work of a dense lower witness's replay (reverse mode, one pull-back per minor row), in multiply-adds: layers x
#: heads x (w^2 a + rows x 4 w t (w + t)) + rows x parameters (w the widest width or rank). About 20 ns each were
#: measured (batched small products; 1.6e8 in 3.3 s CPU at widths 32,32,32, t = 6), so the limit buys about a minute.
MAX_JACOBIAN_WORK = 3_000_000_000
#: Estimated nanoseconds of a dense certificate's mod-p witnesses together (check/dimension/dense.py, priced from the
#: recorded ranks before either is replayed): 20 per Jacobian multiply-add above, 10 per field entry, and a third of
#: a nanosecond per n^3 of each n x n minor (FLINT's determinant with its list: 2,000 rows in 2.5 s, 3,000 in 5.7 s;
#: 6,000 took 53 s). Each witness alone may reach its own limits (about 2 min and 1 min); together they may cost a
#: minute. Honest: the largest dense witnesses (rank 1,928 at 4,832 parameters) need about 1e10.
MAX_DENSE_WORK = 60_000_000_000
NS_PER_JACOBIAN_UNIT, NS_PER_FIELD_ENTRY, MINOR_CUBES_PER_NS = 20, 10, 3

#: Estimated nanoseconds of one core a deep 'identity values' lower witness may buy (check/dimension/identitypoint.py
#: counts them from its sizes). Honest: l = 12, d = 768, a = 4 needs about 2e10.
MAX_IDENTITY_WORK = 40_000_000_000

#: Estimated nanoseconds of one core a singular-point or strata certificate may buy (check/loci/singular.py counts
#: its tangent columns and exact ranks, check/loci/strata.py every stratum's share), embedded certificates included.
MAX_LOCUS_WORK = 60_000_000_000


def refuse_above(work: float, limit: float, what: str) -> None:
    """Refuse (unusable input, exit 2) a witness whose replay needs more work than ``limit`` pays for.

    Examples
    --------
    >>> refuse_above(10, 100, "a small witness")
    >>> refuse_above(2e12, MAX_JACOBIAN_WORK, "this Jacobian minor")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: this Jacobian minor needs about 2.0e+12 units of work, above the checker's limit of 3e+09 (docs/trust.md)
    """
    if work > limit:
        raise CertificateFormatError(f"{what} needs about {work:.1e} units of work, above the checker's limit of "
                                     f"{limit:.0e} (docs/trust.md)")


#: Default budget of one certificate checked in isolation (check_file, check_folder).
DEFAULT_SECONDS = 900.0
DEFAULT_MEMORY_MB = 16384  # address space, not resident memory: a d = 768 structured check maps about 12 GB
#: All-sizes dimension certificates (docs/math.md §7.1): constraints kept while deciding a case split
#: (Fourier–Motzkin), pieces of the split, cells and blocks of a piece, indices of one block, templates of
#: the point, the side of one block, and the number of branches one coefficient's support may take.
MAX_INEQUALITIES = 20_000
MAX_PIECES = 64
MAX_CELLS = 32
MAX_BLOCKS = 2_000
MAX_BLOCK_VARS = 12
MAX_TEMPLATES = 256
MAX_BLOCK_SIDE = 8
MAX_SUPPORT_BRANCHES = 100_000
#: Steps of unification and evaluation one all-sizes certificate may cost (the honest multi-head one needs 1.0*10^5;
#: a file padded with shapes no template uses reaches the limit in about 1 s of CPU).
MAX_PATTERN_WORK = 5_000_000
