"""What a command prints: everything when it fits a terminal, else a summary that says where the rest is.

A command's text or LaTeX output is a :class:`Listing`: a head (what was proved, counts, degrees), a list of
items that grows with the input (generators, files, representatives) and a tail. Printed whole when it is at
most :data:`LIMIT` bytes; longer, the head, the first items, one line saying how many are left out and how to
get them, and the tail. ``--full`` prints everything; ``--output FILE`` writes everything to ``FILE`` and
prints the summary. ``--json`` is for programs and always carries every item (to ``FILE`` with ``--output``).

The limit is what a newcomer's terminal takes in: ``implicit --max-degree 4`` of ``4 -> 1`` once printed
127 kB, its Macaulay2 export 4.2 MB, ``check`` of a certify run 324 kB.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from ..geometry.certificate import check_writable, write_text

#: Bytes a command prints by default.
LIMIT = 10_000

#: At most this share of :data:`LIMIT` goes to the items a summary shows.
SHOWN = LIMIT // 4


def size(n_bytes: int) -> str:
    """A length of output as a person reads it.

    >>> size(812), size(127_490), size(4_174_218)
    ('812 bytes', '127 kB', '4.2 MB')
    """
    if n_bytes < 1000:
        return f"{n_bytes} bytes"
    return f"{n_bytes / 1000:.0f} kB" if n_bytes < 1_000_000 else f"{n_bytes / 1e6:.1f} MB"


def add_options(p, what: str) -> None:
    """``--full`` and ``--output FILE`` for a command whose output grows with its input (``what``: its items).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> add_options(p, "generator")
    >>> p.parse_args(["--output", "all.txt"]).output, p.parse_args([]).full
    ('all.txt', False)
    """
    p.add_argument("--full", action="store_true",
                   help=f"print every {what} even when the output is longer than {LIMIT // 1000} kB (by default "
                        "a longer output is summarized and says how much is left out)")
    p.add_argument("--output", metavar="FILE",
                   help="write the whole output (text, LaTeX, an export or the JSON) to FILE and print the summary")


def check(args) -> None:
    """Refuse an unusable ``--output`` before anything is computed (one line naming the option).

    Examples
    --------
    >>> import argparse
    >>> check(argparse.Namespace(output="/no/such/folder/out.txt"))    # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: --output: cannot write /no/such/folder/out.txt: folder ... does not exist; ...
    """
    if getattr(args, "output", None):
        from ..exceptions import InvalidInputError

        try:
            check_writable(args.output)
        except InvalidInputError as exc:
            raise InvalidInputError(f"--output: {exc}") from None


@dataclass
class Listing:
    """An output with a list that may be long.

    ``render(items)`` turns any leading run of the items into text (a LaTeX listing closes its environments
    there); ``comment`` starts the line that says what is left out, in the output's own syntax (``% `` for
    LaTeX, ``-- `` for a Macaulay2 script), so that a summary still compiles or runs.

    Examples
    --------
    >>> out = Listing("3 generators", ["g1", "g2", "g3"], "\\n".join, "proved: all", noun="generators")
    >>> print(out.text())
    3 generators
    g1
    g2
    g3
    proved: all
    >>> print(out.summary(1))
    3 generators
    g1
    (2 more generators not shown; 33 bytes in all: --full prints them, --output FILE writes everything to FILE)
    proved: all
    """

    head: str
    items: list
    render: Callable[[list], str]
    tail: str = ""
    noun: str = "items"
    comment: str = ""
    #: False: a summary shows none of the items (a few lines of a script would be a broken script)
    preview: bool = True
    #: what a summary says instead of the head (None: the head)
    brief: str | None = None

    def text(self, items: list | None = None) -> str:
        body = self.render(self.items if items is None else items) if (self.items if items is None else items) else ""
        return "\n".join(part for part in (self.head, body, self.tail) if part)

    def summary(self, shown: int | None = None, where: str | None = None) -> str:
        """The head, the first ``shown`` items (by default as many as fit :data:`SHOWN` bytes), a line saying what
        is left out and where it is (``where``: the file holding everything), and the tail."""
        if shown is None and not self.preview:
            shown = 0
        if shown is None:
            shown, used = 0, 0
            while shown < len(self.items) and used + len(str(self.items[shown])) <= SHOWN:
                used += len(str(self.items[shown]))
                shown += 1
        left = len(self.items) - shown
        total = size(len(self.text().encode()))
        if where:
            note = f"the whole output ({total}) is in {where}"
            if left:
                note = f"{left} more {self.noun} not shown; " + note
        else:
            note = (f"({left} more {self.noun} not shown; {total} in all: --full prints them, --output FILE writes "
                    "everything to FILE)")
        middle = self.render(self.items[:shown]) if shown else ""
        head = self.head if self.brief is None else self.brief
        return "\n".join(part for part in (head, middle, self.comment + note, self.tail) if part)


def emit(args, listing: Listing, data: dict | None = None) -> None:
    """Print ``listing`` (or, with ``--json``, ``data``) as the module docstring says: whole when it fits or with
    ``--full``, else its summary; with ``--output FILE`` everything goes to ``FILE`` and the summary is printed.

    Examples
    --------
    >>> import argparse
    >>> long = Listing("1000 files", [f"valid  f{k}.json" for k in range(1000)], "\\n".join, "1000 valid", "files")
    >>> emit(argparse.Namespace(full=False, output=None), long)     # doctest: +ELLIPSIS
    1000 files
    valid  f0.json
    ...
    (... more files not shown; 17 kB in all: --full prints them, --output FILE writes everything to FILE)
    1000 valid
    """
    if getattr(args, "json", False) and data is not None:
        text = json.dumps(data)
        if getattr(args, "output", None):
            write_text(args.output, text + "\n")
            print(f"JSON ({size(len(text.encode()))}) written to {args.output}")
        else:
            print(text)
        return
    full = listing.text()
    if getattr(args, "output", None):
        write_text(args.output, full + "\n")
        print(listing.summary(where=args.output))
    elif getattr(args, "full", False) or len(full.encode()) <= LIMIT:
        print(full)
    else:
        print(listing.summary())
