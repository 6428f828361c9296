"""Typesetting with the machine's LaTeX: what it has (``pdflatex``, each package) and a PDF run as often as needed.

A plain ``texlive-latex-base`` has ``pdflatex`` but no TikZ (``tikz.sty`` comes with ``texlive-latex-extra``'s
``pgf``); the report's figures and the tests ask :func:`missing` rather than assume either. ``kpsewhich`` finds a
package where LaTeX itself would.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path

from .exceptions import AttngeoError

#: What to install, per tool or package a test or the report may need (Debian package names).
INSTALL = {"pdflatex": "texlive-latex-base", "kpsewhich": "texlive-latex-base", "pdftotext": "poppler-utils",
           "pdfinfo": "poppler-utils", "tikz.sty": "texlive-latex-extra (pgf)", "amsmath.sty": "texlive-latex-base",
           "longtable.sty": "texlive-latex-base"}

#: A log line that asks for another run (longtable's column widths, references, labels).
RERUN = re.compile(r"Rerun (LaTeX|to get)|Label\(s\) may have changed|Table widths have changed")

#: Runs of pdflatex at most: longtable settles in two or three.
MAX_RUNS = 4


@functools.cache
def has_package(name: str) -> bool:
    """Whether LaTeX finds ``name`` (``tikz.sty``) on this machine (``kpsewhich``; False without it).

    Examples
    --------
    >>> has_package("no-such-package-anywhere.sty")
    False
    """
    if shutil.which("kpsewhich") is None:
        return False
    run = subprocess.run(["kpsewhich", name], capture_output=True, text=True, timeout=60)
    return run.returncode == 0 and bool(run.stdout.strip())


def missing(*needs: str) -> str | None:
    """Why something cannot be typeset here (naming each missing tool or package and what installs it), or None.

    ``needs`` are programs (``pdflatex``, ``pdftotext``) and LaTeX files (``tikz.sty``).

    Examples
    --------
    >>> missing() is None
    True
    >>> print(missing("no-such-program-here"))      # doctest: +ELLIPSIS
    no-such-program-here is not installed ...
    """
    absent = [n for n in needs if (not has_package(n) if n.endswith(".sty") else shutil.which(n) is None)]
    if not absent:
        return None
    installs = sorted({INSTALL.get(n, n) for n in absent})
    return (f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed "
            f"(apt-get install {' '.join(i.split()[0] for i in installs)})")


def pdf(tex: str | Path, timeout: float = 300.0) -> Path:
    """Typeset ``tex`` (a ``.tex`` file) in its own folder with ``pdflatex``, as many times as its log asks (at most
    :data:`MAX_RUNS`); return the PDF's path.

    Raises
    ------
    AttngeoError
        pdflatex is missing, or the document has an error (the first error line of the log, and where the log is).

    Examples
    --------
    >>> import tempfile
    >>> tex = Path(tempfile.mkdtemp()) / "a.tex"
    >>> _ = tex.write_text("\\\\documentclass{article}\\\\begin{document}$x^2$\\\\end{document}\\n")
    >>> pdf(tex).name if missing("pdflatex") is None else "a.pdf"       # needs pdflatex; says so without it
    'a.pdf'
    """
    tex = Path(tex)
    if shutil.which("pdflatex") is None:
        raise AttngeoError(f"cannot typeset {tex}: {missing('pdflatex')}")
    for _ in range(MAX_RUNS):
        try:
            run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
                                 cwd=tex.parent, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AttngeoError(f"pdflatex took more than {timeout:g} s on {tex}; nothing was typeset") from None
        log = tex.with_suffix(".log")
        text = log.read_text(errors="replace") if log.exists() else run.stdout
        if run.returncode != 0:
            first = next((line for line in text.splitlines() if line.startswith("!")), "pdflatex failed")
            raise AttngeoError(f"pdflatex stopped on {tex}: {first.lstrip('! ')} (the log is {log})")
        if not RERUN.search(text):
            break
    return tex.with_suffix(".pdf")
