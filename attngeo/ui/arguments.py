"""Argument types of the command line: each refuses a bad value in one line that names the value and the fix.

Every numeric or list option of ``attngeo`` parses through one of these
``type=`` callables, so a bad value ends as ``attngeo: error: argument
--heads: ...`` and exit code 2 before anything runs. A new option should reuse
them rather than ``type=int``: ``int`` accepts ``0`` and ``-1`` where a count
of heads or tokens is meant. :data:`NEGATIVE` lets argparse read ``-3,3`` as a
(refused) value rather than as an unknown option.

Checks that need several options at once (a value rank against the widths, a
sweep grid left empty by ``a <= d``) are the functions at the end; they raise
:class:`attngeo.exceptions.InvalidInputError` naming the options.
"""

from __future__ import annotations

import argparse
import math
import re

from ..exceptions import InvalidInputError

#: What argparse may take for a (negative) value rather than an option: ``-1``, ``-0.5``, ``-3,3``, ``-3..3``.
NEGATIVE = re.compile(r"^-\d[\d,.]*$|^-\.\d+$")

#: Most values a list or range option may expand to (a typo like ``1..10000000`` is refused, not built).
MOST_VALUES = 10_000
#: Whole numbers stay below 2^63: certificates store them as JSON integers the checker reads as int64.
BELOW = 2**63
#: The longest wait a ``--timeout`` may ask for (115 days); more overflows the system's timers.
MOST_SECONDS = 1e7


def whole(minimum: int = 1, unit: str = ""):
    """A ``type=`` for a whole number ``>= minimum`` (``unit`` names what it counts).

    Examples
    --------
    >>> heads = whole(1)
    >>> heads("4")
    4
    >>> heads("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number >= 1, got '0'
    >>> whole(0)("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number >= 0, got '-1'
    >>> whole(0)(str(2**63))     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number >= 0, got '9223372036854775808' (at most 2^63 - 1)
    """
    what = f"a whole number{' of ' + unit if unit else ''} >= {minimum}"

    def parse(text: str) -> int:
        text = text.strip()
        value = int(text) if re.fullmatch(r"[+-]?\d{1,30}", text) else None
        if value is None or not minimum <= value < BELOW:
            big = value is not None and value >= BELOW
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}" + (" (at most 2^63 - 1)" if big else ""))
        return value

    parse.__name__ = what  # argparse names the type in its own messages
    return parse


def integers(minimum: int = 1, example: str = "3,3,3"):
    """A ``type=`` for comma-separated whole numbers, each ``>= minimum``, as a tuple.

    Examples
    --------
    >>> widths = integers(1)
    >>> widths("3,4,3")
    (3, 4, 3)
    >>> widths("-3,3")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: takes comma-separated whole numbers >= 1 such as 3,3,3; -3 in '-3,3' is not one
    """
    def parse(text: str) -> tuple[int, ...]:
        values = []
        for item in text.split(","):
            item = item.strip()
            if not re.fullmatch(r"[+-]?\d{1,30}", item) or not minimum <= int(item) < BELOW or len(values) >= MOST_VALUES:
                raise argparse.ArgumentTypeError(f"takes comma-separated whole numbers >= {minimum} such as {example}; "
                                                 f"{item or 'an empty entry'} in {text!r} is not one")
            values.append(int(item))
        return tuple(values)

    parse.__name__ = "comma-separated integers"
    return parse


def seconds(text: str) -> float:
    """A ``type=`` for a number of seconds ``> 0``, at most :data:`MOST_SECONDS` (``nan`` and ``inf`` too are refused).

    Examples
    --------
    >>> seconds("2.5")
    2.5
    >>> seconds("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of seconds > 0, got 'inf'
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):  # a subprocess timeout must be a real wait
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    if value > MOST_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at most {MOST_SECONDS:g} seconds (115 days), got {text!r}")
    return value


#: ``--max-memory``: a whole number of MiB > 0.
megabytes = whole(1, "MiB")
#: ``--seed`` and ``--random``: an integer >= 0.
seed = whole(0)


def parse_range(text, name: str) -> list[int]:
    """``"3..6"``, ``"2,3"``, ``"4"``, or (from TOML) ``4`` or ``[2, 3]``, as a list of positive integers.

    Examples
    --------
    >>> parse_range("3..5", "--widths"), parse_range("2,3", "--tokens"), parse_range("4", "--layers")
    ([3, 4, 5], [2, 3], [4])
    >>> parse_range([1, 2], "layers"), parse_range(3, "layers")
    ([1, 2], [3])
    >>> parse_range("5..3", "--widths")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: --widths = '5..3': write a range low..high with 1 <= low <= high, a list 2,3 or one number
    """
    if isinstance(text, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in text):
        values = list(text)
    elif isinstance(text, int) and not isinstance(text, bool):
        values = [text]
    else:
        text = str(text).strip()
        try:
            if ".." in text:
                lo, hi = (int(x) for x in text.split(".."))
                values = list(range(lo, hi + 1)) if hi - lo < MOST_VALUES else []
            else:
                values = [int(x) for x in text.split(",")]
        except ValueError:
            values = []
    if not values or min(values) < 1 or max(values) >= BELOW or len(values) > MOST_VALUES:
        raise InvalidInputError(f"{name} = {text!r}: write a range low..high with 1 <= low <= high, a list 2,3 "
                                "or one number")
    return values


def grid_values(text: str) -> list[int]:
    """A ``type=`` for a sweep axis: :func:`parse_range` with argparse's error.

    Examples
    --------
    >>> grid_values("2..4")
    [2, 3, 4]
    >>> grid_values("0..2")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '0..2': write a range low..high with 1 <= low <= high, a list 2,3 or one number
    """
    try:
        return parse_range(text, "")
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(" = ")) from None


def check_value_ranks(arch) -> None:
    """Refuse a value rank ``b_i > min(d_(i-1), d_i)``: ``V = O U`` reaches every matrix at ``b_i = min``.

    Above it the extra weights only enlarge the stabilizer of ``GL_b``, and the
    naive count (parameters minus the group's dimension) turns meaningless.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> check_value_ranks(Architecture((3, 3), (2,), value_ranks=3))
    >>> check_value_ranks(Architecture((3, 3), (2,), value_ranks=7))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: --value-ranks: b_1 = 7 exceeds min(d_0, d_1) = 3, where V = O U already reaches every 3 x 3 matrix; give b_1 <= 3, or omit --value-ranks for V unfactored
    """
    for i, b in enumerate(arch.value_ranks or (), start=1):
        top = min(arch.widths[i - 1], arch.widths[i])
        if b > top:
            raise InvalidInputError(
                f"--value-ranks: b_{i} = {b} exceeds min(d_{i - 1}, d_{i}) = {top}, where V = O U already reaches "
                f"every {arch.widths[i]} x {arch.widths[i - 1]} matrix; give b_{i} <= {top}, or omit --value-ranks "
                "for V unfactored")


def check_grid(archs: list, flags: str) -> None:
    """Refuse a sweep grid that holds no architecture (every rank above every width).

    Examples
    --------
    >>> check_grid([], "--widths 3 --ranks 5")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: --widths 3 --ranks 5: no architecture has a rank a <= its width d; give a rank <= a width
    """
    if not archs:
        raise InvalidInputError(f"{flags}: no architecture has a rank a <= its width d; give a rank <= a width")
