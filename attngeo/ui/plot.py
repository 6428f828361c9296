"""Figures from a sweep folder (``OUT/results.csv``): dimension against width, the defect heatmap, time against size.

matplotlib is an optional extra (``pip install 'attngeo[plot]'``); without it
the command says how to install it. Figures are written as PNG or PDF.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from ..exceptions import InvalidInputError
from ..geometry.certificate import check_writable

AXES = {"width": lambda r: int(r["widths"].split(",")[0]), "layers": lambda r: len(r["ranks"].split(",")),
        "rank": lambda r: int(r["ranks"].split(",")[0]), "tokens": lambda r: int(r["tokens"]),
        "heads": lambda r: int(str(r.get("heads") or "1").split(",")[0])}


def read_results(folder) -> list[dict]:
    """The finished rows of ``folder/results.csv``.

    >>> import tempfile
    >>> read_results(tempfile.mkdtemp())   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: cannot read .../results.csv: No such file or directory; give the folder of an attngeo sweep
    """
    path = Path(folder) / "results.csv"
    try:
        with open(path, newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r.get("status") == "done"]
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror}; give the folder of an attngeo sweep") from None
    if not rows:
        raise InvalidInputError(f"{path} holds no finished task to plot")
    return rows


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidInputError("plots need matplotlib: python3 -m pip install 'attngeo[plot]'") from None
    return plt


def plot(folder, out=None, fmt: str = "png", x: str = "width", y: str = "layers") -> list[Path]:
    """Write ``dimension``, ``defect`` and ``time`` figures of a sweep; returns their paths.

    Examples
    --------
    >>> import tempfile, pytest
    >>> _ = pytest.importorskip("matplotlib")
    >>> from attngeo.ui.sweep import grid, sweep
    >>> folder = tempfile.mkdtemp() + "/s"
    >>> _ = sweep(grid([2, 3], [1, 2], [1], [2]), folder, workers=1, progress=None)
    >>> sorted(p.name for p in plot(folder))
    ['defect.png', 'dimension.png', 'time.png']
    """
    if fmt not in ("png", "pdf"):
        raise InvalidInputError(f"--format must be png or pdf, got {fmt!r}")
    if x not in AXES or y not in AXES or x == y:
        raise InvalidInputError(f"--x and --y must be two different axes among {', '.join(AXES)}")
    rows = [r for r in read_results(folder) if r.get("dimension") not in (None, "")]
    plt = _pyplot()
    out = Path(out or folder)
    written = []

    def save(fig, name):
        path = out / f"{name}.{fmt}"
        check_writable(path)
        fig.savefig(path, bbox_inches="tight")
        plt.close(fig)
        written.append(path)

    series = defaultdict(list)
    for r in rows:
        series[(r["ranks"].count(",") + 1, r["ranks"].split(",")[0], r["tokens"], r["normalization"])].append(
            (AXES["width"](r), int(r["dimension"])))
    fig, ax = plt.subplots(figsize=(6, 4))
    for (l, a, t, norm), points in sorted(series.items()):
        points.sort()
        ax.plot(*zip(*points), marker="o", label=f"l={l}, a={a}, t={t}, {norm}")
    ax.set_xlabel("width d")
    ax.set_ylabel("certified dim M")
    ax.set_title("Dimension of the neuromanifold")
    ax.legend(fontsize=7)
    save(fig, "dimension")

    cells = defaultdict(list)
    for r in rows:
        if r.get("naive") not in (None, ""):
            cells[(AXES[x](r), AXES[y](r))].append(int(r["naive"]) - int(r["dimension"]))
    xs, ys = sorted({k[0] for k in cells}), sorted({k[1] for k in cells})
    grid = [[max(cells[(i, j)]) if (i, j) in cells else float("nan") for i in xs] for j in ys]
    fig, ax = plt.subplots(figsize=(6, 4))
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title("defect: naive count - certified dimension (largest per cell)")
    fig.colorbar(image, ax=ax)
    save(fig, "defect")

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog([int(r["parameters"]) for r in rows], [max(float(r["seconds"]), 1e-3) for r in rows], "o")
    ax.set_xlabel("parameters P")
    ax.set_ylabel("seconds")
    ax.set_title("Certification time")
    save(fig, "time")
    return written
