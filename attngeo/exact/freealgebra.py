"""Noncommutative polynomials with a transpose: matrix identities valid in every size.

An element is a Q-linear combination of *words* in matrix symbols and their
transposes, e.g. ``V Y Y' K' Q Y`` (``'`` = transpose). Words multiply by
concatenation and transpose by reversal (``(M N)' = N' M'``). An identity that
holds here holds for matrices of every compatible size over every commutative
ring, so a symmetry of the layer formula proved here is proved for all widths
and ranks at once (docs/invariance.md).

The layer formula itself is not retyped: :func:`attngeo.model.network.layer` is
evaluated with :class:`WordOps`, so the identity is about the code that computes.
"""

from __future__ import annotations

from fractions import Fraction

Letter = tuple[str, bool]  # (symbol, transposed)
Word = tuple[Letter, ...]


class NCPoly:
    """A noncommutative polynomial over Q in matrix symbols and their transposes.

    ``+``, ``-`` and ``@`` (product) work as for matrices, ``.T`` is the
    transpose; coefficients are exact ``Fraction`` values.

    Parameters
    ----------
    terms : dict, optional
        ``{word: coefficient}`` with a word a tuple of ``(symbol, transposed)``
        letters; zero coefficients are dropped. Usually built from :meth:`symbol`.

    Examples
    --------
    >>> M, N = NCPoly.symbol("M"), NCPoly.symbol("N")
    >>> str((M @ N).T)
    "N' M'"
    >>> ((M @ N).T - N.T @ M.T).is_zero()
    True
    >>> str((M + N) @ (M - N))                  # no commutation: M N and N M stay apart
    'M M - M N + N M - N N'
    """

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Word, Fraction] | None = None):
        self.terms = {w: c for w, c in (terms or {}).items() if c != 0}

    @classmethod
    def symbol(cls, name: str) -> "NCPoly":
        """The polynomial made of one matrix symbol.

        Examples
        --------
        >>> Q = NCPoly.symbol("Q")
        >>> str(Q), str(Q.T), (Q.T.T - Q).is_zero()
        ('Q', "Q'", True)
        """
        return cls({((name, False),): Fraction(1)})

    def __add__(self, other: "NCPoly") -> "NCPoly":
        terms = dict(self.terms)
        for w, c in other.terms.items():
            terms[w] = terms.get(w, 0) + c
        return NCPoly(terms)

    def __neg__(self) -> "NCPoly":
        return NCPoly({w: -c for w, c in self.terms.items()})

    def __sub__(self, other: "NCPoly") -> "NCPoly":
        return self + (-other)

    def __matmul__(self, other: "NCPoly") -> "NCPoly":
        terms: dict[Word, Fraction] = {}
        for w1, c1 in self.terms.items():
            for w2, c2 in other.terms.items():
                terms[w1 + w2] = terms.get(w1 + w2, 0) + c1 * c2
        return NCPoly(terms)

    @property
    def T(self) -> "NCPoly":
        """The transpose: each word reversed, each letter's transpose flipped.

        Examples
        --------
        >>> M, N = NCPoly.symbol("M"), NCPoly.symbol("N")
        >>> str((M @ N.T + M).T)
        "M' + N M'"
        """
        return NCPoly({tuple((s, not tr) for s, tr in reversed(w)): c for w, c in self.terms.items()})

    def derivative(self, tangent: dict[str, "NCPoly"]) -> "NCPoly":
        """Directional derivative: each symbol ``S`` moves along ``tangent[S]`` (absent: fixed).

        Parameters
        ----------
        tangent : dict of str to NCPoly
            The velocity of each moving symbol; a transposed letter moves along
            the transpose of its symbol's velocity.

        Returns
        -------
        NCPoly

        Examples
        --------
        The intra-layer symmetry ``Q -> G Q``, ``K -> G^{-T} K`` has tangent
        ``(E Q, -E' K)``; it fixes ``A = K' Q`` and hence the layer, in every size:

        >>> E, Q, K, V, Y = (NCPoly.symbol(n) for n in "EQKVY")
        >>> phi = V @ Y @ Y.T @ K.T @ Q @ Y
        >>> phi.derivative({"Q": E @ Q, "K": -(E.T @ K)}).is_zero()
        True
        >>> str(phi.derivative({"V": E @ V}))       # moving V alone moves the output
        "E V Y Y' K' Q Y"
        """
        out = NCPoly()
        for word, c in self.terms.items():
            for k, (sym, tr) in enumerate(word):
                if sym not in tangent:
                    continue
                dot = tangent[sym].T if tr else tangent[sym]
                prefix = NCPoly({word[:k]: c})
                suffix = NCPoly({word[k + 1 :]: Fraction(1)})
                out = out + prefix @ dot @ suffix
        return out

    def is_zero(self) -> bool:
        """True for the zero polynomial: an identity that holds for matrices of every size.

        Examples
        --------
        >>> M, N = NCPoly.symbol("M"), NCPoly.symbol("N")
        >>> (M @ N - M @ N).is_zero(), (M @ N - N @ M).is_zero()
        (True, False)
        """
        return not self.terms

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for w, c in sorted(self.terms.items()):
            word = " ".join(s + ("'" if tr else "") for s, tr in w) or "1"
            sign = "-" if c < 0 else "+"
            mag = "" if abs(c) == 1 else f"{abs(c)} "
            parts.append(f"{sign} {mag}{word}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    __repr__ = __str__


class WordOps:
    """Operations object that lets :func:`attngeo.model.network.layer` run on :class:`NCPoly`.

    Examples
    --------
    The layer formula as the code computes it, one word:

    >>> from attngeo.model.network import layer
    >>> Q, K, V, Y = (NCPoly.symbol(n) for n in "QKVY")
    >>> str(layer(WordOps, Q, K, V, Y))
    "V Y Y' K' Q Y"
    >>> str(WordOps.add(WordOps.matmul(Q, K), WordOps.transpose(Q)))
    "Q K + Q'"
    """

    @staticmethod
    def matmul(a: NCPoly, b: NCPoly) -> NCPoly:
        return a @ b

    @staticmethod
    def transpose(a: NCPoly) -> NCPoly:
        return a.T

    @staticmethod
    def add(a: NCPoly, b: NCPoly) -> NCPoly:
        return a + b
