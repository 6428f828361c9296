"""The score scale of a checkpoint's attention: ``q . k`` times ``s``, exactly (docs/math.md §8.1).

Checkpoints multiply every score by ``s = 1/sqrt(a)`` (BERT, GPT-2, LLaMA, ViT), by ``1``
(T5) or by a configured rational. ``1/sqrt(a)`` is irrational unless ``a`` is a square; attngeo
never rounds it: a :class:`ScoreScale` is ``r / sqrt(m)`` with ``r`` rational and ``m`` a
square-free-part radicand (``m = 1`` for a rational scale). Ranks do not depend on it (``Q -> s Q``
is a change of coordinates), ball arithmetic takes it as a ball, and a computation mod ``p`` takes
a square root of ``m`` mod ``p`` where one exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ..exceptions import InvalidInputError

_TEXT = re.compile(r"^(-?\d{1,30})(?:/(\d{1,30}))?(?:/sqrt\((\d{1,12})\))?$")


@dataclass(frozen=True)
class ScoreScale:
    """``ratio / sqrt(radicand)``, with ``radicand`` square-free (1: a rational scale).

    Examples
    --------
    >>> ScoreScale.inverse_sqrt(64), ScoreScale.inverse_sqrt(768), ScoreScale.parse("1/sqrt(12)")
    (ScoreScale('1/8'), ScoreScale('1/16/sqrt(3)'), ScoreScale('1/2/sqrt(3)'))
    >>> float(ScoreScale.inverse_sqrt(768).ball(64).mid()) == 768 ** -0.5
    True
    >>> ScoreScale.parse("0")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: score scale '0': a scale must be a nonzero number, e.g. 1, 1/8 or 1/sqrt(96)
    """

    ratio: Fraction
    radicand: int = 1

    @classmethod
    def inverse_sqrt(cls, n: int) -> "ScoreScale":
        """``1 / sqrt(n)``, the factor of scaled dot-product attention with head dimension ``n``."""
        return cls._normal(Fraction(1), n)

    @classmethod
    def _normal(cls, ratio: Fraction, n: int) -> "ScoreScale":
        if ratio == 0 or n < 1:
            raise InvalidInputError("a score scale must be a nonzero number")
        square = 1  # pull the largest square out of n: r / sqrt(k^2 m) = (r / k) / sqrt(m)
        k = 2
        while k * k <= n:
            while n % (k * k) == 0:
                n //= k * k
                square *= k
            k += 1
        return cls(ratio / square, n)

    @classmethod
    def parse(cls, text: str) -> "ScoreScale":
        """``"1"``, ``"1/8"``, ``"1/sqrt(96)"`` or ``"3/4/sqrt(5)"``; anything else is refused by name."""
        m = _TEXT.match(str(text).strip())
        hint = "a scale must be a nonzero number, e.g. 1, 1/8 or 1/sqrt(96)"
        if not m or (m.group(2) is not None and int(m.group(2)) == 0):
            raise InvalidInputError(f"score scale {text!r}: {hint}")
        ratio = Fraction(int(m.group(1)), int(m.group(2) or 1))
        if ratio == 0 or (m.group(3) is not None and int(m.group(3)) == 0):
            raise InvalidInputError(f"score scale {text!r}: {hint}")
        return cls._normal(ratio, int(m.group(3) or 1))

    @property
    def rational(self) -> bool:
        return self.radicand == 1

    def ball(self, prec: int):
        """The scale as an ``arb`` ball at ``prec`` bits (exact when rational)."""
        from flint import arb, ctx, fmpq

        old = ctx.prec
        ctx.prec = prec
        try:
            value = arb(fmpq(self.ratio.numerator, self.ratio.denominator))
            return value if self.rational else value / arb(self.radicand).sqrt()
        finally:
            ctx.prec = old

    def __str__(self) -> str:
        r = str(self.ratio)
        return r if self.rational else f"{r}/sqrt({self.radicand})"

    def __repr__(self) -> str:
        return f"ScoreScale('{self}')"

    def is_one(self) -> bool:
        return self.rational and self.ratio == 1


ONE = ScoreScale(Fraction(1))

