"""Figures from a sweep folder: certified dimension against any axis, the defect heatmap, time against size.

Each figure is meant to be read at a glance:

* ``dimension``: the x axis is any of width, layers, rank, tokens, heads
  (``--x``); one series per combination of whatever else varies in the sweep
  (only that is named in the legend), told apart by colour *and* marker *and*
  line style, so that 12 or 40 series stay distinct; the legend sits outside
  the axes. Architectures with bounds only are drawn as a bar from the lower to
  the upper bound.
* ``defect``: naive count (parameters minus the symmetry group's dimension)
  minus the certified dimension over two axes (``--x``, ``--y``), the number
  written in each cell (``lo..hi`` when the cell holds architectures that
  differ in a third axis; the colour is the largest).
* ``time``: seconds per task against parameters, log-log, with the per-task
  overhead (the median of the fastest tenth of the tasks) drawn as a line and a
  power law ``t ~ P^k`` fitted to the tasks at least three times above it; the
  fitted ``k`` is in the legend.

Rows come from ``OUT/results.jsonl`` (:func:`attngeo.ui.sweep.read_rows`).
Floats here only draw; nothing certified depends on them. matplotlib is an
optional extra (``pip install 'attngeo[plot]'``); without it the command says
how to install it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from ..exceptions import InvalidInputError
from ..geometry.certificate import check_writable
from .sweep import read_rows

#: The axes a figure can use: how to read each from a row, its symbol, its label.
AXES = {"width": (lambda r: r["widths"][0], "d", "width d"), "layers": (lambda r: len(r["ranks"]), "l", "layers l"),
        "rank": (lambda r: r["ranks"][0], "a", "rank a"), "tokens": (lambda r: r["tokens"], "t", "tokens t"),
        "heads": (lambda r: r["heads"][0], "h", "heads h")}
#: Further things that tell two rows apart: named in a series label only when they vary.
FLAGS = {"normalization": lambda r: r["normalization"],
         "value ranks": lambda r: "b=" + ",".join(map(str, r["value_ranks"])) if r.get("value_ranks") else "V whole",
         "residual": lambda r: "residual" if r.get("residual") else "no residual",
         "causal": lambda r: "causal" if r.get("causal") else "not causal"}
#: Cycles of coprime lengths (10, 7, 3): consecutive series differ in colour, marker and line style; 210 are distinct.
MARKERS, LINES = "osD^vPX", ("-", "--", ":")


def read_results(folder) -> list[dict]:
    """The finished rows of a sweep folder (``folder/results.jsonl``), lists of integers per layer.

    >>> import tempfile
    >>> read_results(tempfile.mkdtemp())   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: .../results.jsonl holds no finished task; give the folder of an attngeo sweep
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InvalidInputError(f"cannot read {folder}: no such folder; give the folder of an attngeo sweep")
    rows = [r for r in read_rows(folder).values() if r.get("status") == "done"]
    if not rows:
        raise InvalidInputError(f"{folder / 'results.jsonl'} holds no finished task; give the folder of an attngeo sweep")
    return rows


def style(k: int) -> dict:
    """Colour, marker and line style of the ``k``-th series: each cycles with its own length (10, 7, 3).

    >>> len({tuple(sorted(style(k).items())) for k in range(210)})
    210
    >>> style(0)["color"] != style(1)["color"] and style(0)["marker"] != style(10)["marker"]
    True
    """
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
               "#17becf")  # matplotlib's tab10
    return {"color": palette[k % 10], "marker": MARKERS[k % len(MARKERS)], "linestyle": LINES[k % len(LINES)]}


def _readers(x: str, skip=()) -> dict:
    readers = {name: (read, symbol) for name, (read, symbol, _) in AXES.items() if name != x and name not in skip}
    readers.update({name: (read, None) for name, read in FLAGS.items()})
    return readers


def varying(rows: list[dict], x: str, skip=()) -> list[str]:
    """The axes and flags other than ``x`` (and ``skip``) that take more than one value in ``rows``.

    >>> rows = [{"widths": [d, d], "ranks": [1], "heads": [h], "tokens": 2, "normalization": "lightning"}
    ...         for d in (2, 3) for h in (1, 2)]
    >>> varying(rows, "width"), varying(rows, "heads")
    (['heads'], ['width'])
    """
    return [name for name, (read, _) in _readers(x, skip).items() if len({read(r) for r in rows}) > 1]


def series(rows: list[dict], x: str, names: list[str] | None = None) -> dict[str, list[dict]]:
    """The rows grouped by the attributes ``names`` (default: all that vary besides ``x``), each group named by them.

    >>> rows = [{"widths": [d, d], "ranks": [a], "heads": [1], "tokens": 2, "normalization": "lightning"}
    ...         for d in (2, 3) for a in (1, 2)]
    >>> sorted(series(rows, "width"))
    ['a=1', 'a=2']
    >>> list(series(rows, "rank"))
    ['d=2', 'd=3']
    >>> list(series([{**rows[0], "widths": [d, d]} for d in (10, 4)], "rank"))   # by value, not as text
    ['d=4', 'd=10']
    """
    names = varying(rows, x) if names is None else names
    readers = _readers(x)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[tuple(readers[name][0](r) for name in names)].append(r)

    def label(values):
        parts = [f"{readers[n][1]}={v}" if readers[n][1] else str(v) for n, v in zip(names, values)]
        return ", ".join(parts) or "all"

    def order(key):  # numbers by value (d=4 before d=10), words by name
        return tuple((0, v, "") if isinstance(v, int) else (1, 0, str(v)) for v in key)

    return {label(key): groups[key] for key in sorted(groups, key=order)}


def facet(rows: list[dict], x: str, most: int = 10) -> str | None:
    """The axis to split the dimension plot into panels by, when more than ``most`` series would share one.

    The varying axis with the fewest values (2 to 6) is chosen; None when the series fit one panel.

    >>> rows = [{"widths": [d, d], "ranks": [a] * l, "heads": [1], "tokens": t, "normalization": "lightning"}
    ...         for d in (2, 3) for l in (1, 2) for a in (1, 2, 3) for t in (1, 2, 3)]
    >>> facet(rows, "width"), facet(rows, "width", most=20)
    ('layers', None)
    """
    if len(series(rows, x)) <= most:
        return None
    counts = {name: len({AXES[name][0](r) for r in rows}) for name in varying(rows, x) if name in AXES}
    fits = [name for name, n in counts.items() if 2 <= n <= 6]
    return min(fits, key=lambda name: counts[name]) if fits else None


def _pyplot():
    import sys

    try:
        import matplotlib

        if "ipykernel" not in sys.modules:  # files only, no display needed; in Jupyter keep the inline backend
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidInputError("plots need matplotlib: python3 -m pip install 'attngeo[plot]'") from None
    return plt


def _legend_outside(ax, n: int, title: str | None = None) -> None:
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=8, title=title,
              title_fontsize=8, ncol=1 + (n - 1) // 24, frameon=False)


def _fit_titles(fig):
    """Wrap every title wider than the figure (whose constrained layout leaves room above the titles): no title is
    clipped, though a one-column heatmap or a one-panel plot is narrower than its title. Returns ``fig``."""
    import textwrap

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    for title in [fig._suptitle] + [ax.title for ax in fig.axes]:
        text = title.get_text() if title is not None else ""
        if not text:
            continue
        box = title.get_window_extent(renderer)
        centre = (box.x0 + box.x1) / 2  # a title is centred over its axes, which a legend may push aside
        room = 2 * min(centre - page.x0, page.x1 - centre) * 0.95
        if box.width > room:
            longest = max(map(len, text.splitlines()))
            chars = max(12, int(longest * room / box.width))
            title.set_text("\n".join(textwrap.fill(line, chars) for line in text.splitlines()))
    return fig


def dimension_figure(rows: list[dict], x: str, plt):
    """Certified dimension against the axis ``x``, one series per combination of the rest; bounds as bars.

    Examples
    --------
    >>> import pytest; plt = pytest.importorskip("matplotlib.pyplot", reason="pip install 'attngeo[plot]'")
    >>> rows = [{"widths": [d, d], "ranks": [a], "heads": [1], "tokens": 2, "normalization": "lightning",
    ...          "dimension": d * d, "lower": d * d, "upper": d * d, "certified": True} for d in (2, 3) for a in (1, 2)]
    >>> fig = dimension_figure(rows, "width", plt)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()], fig.axes[0].get_xlabel()
    (['a=1', 'a=2'], 'width d')

    More than ten series are split into panels by the axis with the fewest values:

    >>> many = [{**r, "ranks": [a] * l, "tokens": t} for r in rows[:2] for l in (1, 2) for a in (1, 2, 3) for t in (2, 3)]
    >>> [ax.get_title() for ax in dimension_figure(many, "width", plt).axes]
    ['l=1', 'l=2']
    """
    read, _, label = AXES[x]
    split = facet(rows, x)
    names = varying(rows, x, () if split is None else (split,))
    order = list(series(rows, x, names))  # one style per series, the same in every panel
    panels = series(rows, x, [split]) if split else {"": rows}
    fig, axes = plt.subplots(1, len(panels), figsize=(2.2 + 3.2 * len(panels), 4.2), squeeze=False,
                             layout="constrained")
    for ax, (title, members) in zip(axes[0], panels.items()):
        for name, group in series(members, x, names).items():
            st = style(order.index(name))
            done = sorted((read(r), r["dimension"]) for r in group if r.get("certified"))
            if done:
                ax.plot(*zip(*done), label=name, markersize=5, **st)
            bounds = [r for r in group if not r.get("certified")]
            for n, r in enumerate(bounds):  # bounds only: a bar from lower to upper, never a point
                ax.plot([read(r)] * 2, [r["lower"], r["upper"]], color=st["color"], linewidth=3, alpha=0.6,
                        label=f"{name} (bounds)" if n == 0 and not done else None)
        ax.set_xticks(sorted({read(r) for r in members}))
        ax.set_xlabel(label)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("dim M (certified)")
    fig.suptitle(f"Dimension of the neuromanifold against {label.split()[0]}"
                 + (f", one panel per value of {AXES[split][1]}" if split else ""), fontsize=11)
    handles = {}
    for ax in axes[0]:  # one legend for all panels, outside the data, in series order
        for h, text in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(text, h)
    shown = sorted(handles, key=lambda t: order.index(t.removesuffix(" (bounds)")))
    axes[0][-1].legend([handles[t] for t in shown], shown, loc="upper left", bbox_to_anchor=(1.02, 1),
                       borderaxespad=0, fontsize=8, ncol=1 + (len(shown) - 1) // 24, frameon=False,
                       title=None if len(order) == 1 else ", ".join(_readers(x)[n][1] or n for n in names),
                       title_fontsize=8)
    return _fit_titles(fig)


def defect_figure(rows: list[dict], x: str, y: str, plt):
    """The defect ``naive count - dim M`` over two axes, the number written in each cell.

    Examples
    --------
    >>> import pytest; plt = pytest.importorskip("matplotlib.pyplot", reason="pip install 'attngeo[plot]'")
    >>> rows = [{"widths": [d, d], "ranks": [a], "heads": [1], "tokens": 2, "normalization": "lightning",
    ...          "dimension": 10, "naive": 10 + (a > d), "certified": True} for d in (2, 3) for a in (1, 2, 3)]
    >>> fig = defect_figure(rows, "width", "rank", plt)
    >>> sorted(t.get_text() for t in fig.axes[0].texts)
    ['0', '0', '0', '0', '0', '1']
    """
    rx, ry = AXES[x][0], AXES[y][0]
    cells: dict[tuple, list[int]] = defaultdict(list)
    for r in rows:
        if r.get("certified") and r.get("naive") is not None:
            cells[(rx(r), ry(r))].append(r["naive"] - r["dimension"])
    if not cells:
        raise InvalidInputError("no certified dimension with a naive count in this sweep: no defect to draw")
    xs, ys = sorted({k[0] for k in cells}), sorted({k[1] for k in cells})
    import numpy as np

    grid = np.ma.masked_invalid([[max(cells[(i, j)]) if (i, j) in cells else math.nan for i in xs] for j in ys])
    lo, hi = int(grid.min()), int(grid.max())
    fig, ax = plt.subplots(figsize=(1.2 + 0.55 * len(xs) + 1.5, 1.2 + 0.45 * len(ys)), layout="constrained")
    if lo < 0 < hi:  # a defect of either sign: white is 0
        from matplotlib.colors import TwoSlopeNorm

        image = ax.imshow(grid, origin="lower", aspect="auto", cmap="RdBu_r", norm=TwoSlopeNorm(0, lo, hi))
    else:
        image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", vmin=lo, vmax=max(hi, lo + 1))
    for (i, j), values in cells.items():
        text = str(min(values)) if min(values) == max(values) else f"{min(values)}..{max(values)}"
        r, g, b, _ = image.cmap(image.norm(max(values)))
        ax.text(xs.index(i), ys.index(j), text, ha="center", va="center", fontsize=8,
                color="white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(AXES[x][2])
    ax.set_ylabel(AXES[y][2])
    ax.set_title("defect: naive count - certified dim M\n(lo..hi: the cell's architectures differ elsewhere)",
                 fontsize=9)
    from matplotlib.ticker import MaxNLocator

    fig.colorbar(image, ax=ax, label="largest defect in the cell", ticks=MaxNLocator(integer=True))
    return _fit_titles(fig)


def time_fit(rows: list[dict]) -> dict:
    """The per-task overhead ``t0`` and a power law ``t - t0 ~ c P^k`` fitted (least squares, log-log) above it.

    The overhead is the median time of the fastest tenth of the tasks (forking
    a worker, imports, writing the certificate); the fit uses the tasks at
    least three times slower, so that ``k`` describes the computation rather
    than the overhead (``k`` is None when fewer than three such tasks at two
    sizes remain).

    Examples
    --------
    >>> rows = [{"parameters": p, "seconds": 0.1 + 1e-4 * p ** 2} for p in (5, 10, 100, 200, 400, 800)]
    >>> fit = time_fit(rows)
    >>> round(fit["overhead"], 2), fit["tasks"], round(fit["k"], 1)
    (0.1, 4, 2.0)
    """
    import numpy as np

    times = sorted(r["seconds"] for r in rows)
    overhead = float(np.median(times[: max(1, len(times) // 10)]))
    above = [r for r in rows if r["seconds"] >= 3 * overhead]
    out = {"overhead": overhead, "tasks": len(above), "k": None, "c": None}
    if len(above) >= 3 and len({r["parameters"] for r in above}) >= 2:
        k, logc = np.polyfit(np.log([r["parameters"] for r in above]),
                             np.log([r["seconds"] - overhead for r in above]), 1)
        out.update(k=float(k), c=float(math.exp(logc)), range=(min(r["parameters"] for r in above),
                                                                 max(r["parameters"] for r in above)))
    return out


def time_figure(rows: list[dict], plt):
    """Seconds per task against parameters, log-log: the overhead line and the fitted exponent.

    Examples
    --------
    >>> import pytest; plt = pytest.importorskip("matplotlib.pyplot", reason="pip install 'attngeo[plot]'")
    >>> rows = [{"widths": [2, 2], "ranks": [1] * l, "heads": [1], "tokens": 2, "normalization": "lightning",
    ...          "parameters": p, "seconds": 0.1 + 1e-4 * p ** 2} for l, p in ((1, 5), (1, 10), (2, 100), (2, 400),
    ...                                                                     (3, 800), (3, 1600))]
    >>> fig = time_figure(rows, plt)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()][-1]
    'fit over 4 tasks: t = t0 + c P^2.00'
    """
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    groups = series(rows, "width", [n for n in ("layers",) if n in varying(rows, "width")])  # depth drives the cost
    for k, (name, members) in enumerate(groups.items()):
        st = style(k)
        ax.loglog([r["parameters"] for r in members], [max(r["seconds"], 1e-3) for r in members], linestyle="none",
                  marker=st["marker"], color=st["color"], markersize=4, alpha=0.8, label=name)
    fit = time_fit(rows)
    ax.axhline(fit["overhead"], color="0.5", linestyle="--", linewidth=1,
               label=f"per-task overhead about {fit['overhead']:.2g} s")
    if fit["k"] is not None:
        lo, hi = fit["range"]
        ps = [lo * (hi / lo) ** (i / 40) for i in range(41)]
        ax.loglog(ps, [fit["overhead"] + fit["c"] * p ** fit["k"] for p in ps], color="black", linewidth=1.5,
                  label=f"fit over {fit['tasks']} tasks: t = t0 + c P^{fit['k']:.2f}")
    ax.set_xlabel("parameters P")
    ax.set_ylabel("seconds per task (wall clock)")
    ax.set_title("Certification time" + ("" if fit["k"] is not None else
                                          " (too few tasks above the overhead to fit a power law)"), fontsize=10)
    ax.grid(alpha=0.3, which="both")
    _legend_outside(ax, len(groups) + 2)
    return _fit_titles(fig)


#: The sweep option that varies each axis (what a warning about a constant axis suggests).
SWEEP_OPTION = {"width": "--widths", "layers": "--layers", "rank": "--ranks", "tokens": "--tokens", "heads": "--heads"}


def constant_axes(rows: list[dict], x: str, y: str) -> list[str]:
    """A warning for each plotted axis that takes one value in ``rows`` (its figure would be a single column or
    row: degenerate), saying which axes do vary.

    >>> rows = [{"widths": [d, d], "ranks": [1], "heads": [1], "tokens": 2, "normalization": "lightning"}
    ...         for d in (2, 3)]
    >>> constant_axes(rows, "width", "layers")       # doctest: +ELLIPSIS
    ['--y layers is 1 in every row: the defect heatmap has a single row; ...']
    >>> constant_axes(rows, "heads", "width")        # doctest: +ELLIPSIS
    ['--x heads is 1 in every row: the dimension plot and the defect heatmap have a single column; sweep more ...']
    """
    where = {"x": "the dimension plot and the defect heatmap have a single column",
             "y": "the defect heatmap has a single row"}
    out = []
    for flag, axis in (("x", x), ("y", y)):
        values = {AXES[axis][0](r) for r in rows}
        if len(values) == 1:
            others = [name for name in AXES if name not in (x, y) and len({AXES[name][0](r) for r in rows}) > 1]
            choice = f"or choose --{flag} among {', '.join(others)}, which vary" if others else "(nothing else varies)"
            out.append(f"--{flag} {axis} is {values.pop()} in every row: {where[flag]}; sweep more values of "
                       f"{axis} ({SWEEP_OPTION[axis]}) {choice}")
    return out


def plot(folder, out=None, fmt: str = "png", x: str = "width", y: str = "layers", warn=None) -> list[Path]:
    """Write ``dimension``, ``defect`` and ``time`` figures of a sweep; returns their paths.

    ``x`` is the x axis of the dimension plot and of the heatmap, ``y`` the heatmap's y axis; ``warn`` (a callable)
    receives :func:`constant_axes`' warnings before anything is drawn.

    Examples
    --------
    >>> import tempfile, pytest
    >>> _ = pytest.importorskip("matplotlib", reason="pip install 'attngeo[plot]'")
    >>> from attngeo.ui.sweep import grid, sweep
    >>> folder = tempfile.mkdtemp() + "/s"
    >>> _ = sweep(grid([2, 3], [1, 2], [1], [2]), folder, workers=1, progress=None)
    >>> sorted(p.name for p in plot(folder))
    ['defect.png', 'dimension.png', 'time.png']
    """
    if fmt not in ("png", "pdf"):
        raise InvalidInputError(f"--format must be png or pdf, got {fmt!r}")
    if x not in AXES or y not in AXES or x == y:
        raise InvalidInputError(f"--x and --y must be two different axes among {', '.join(AXES)}, got {x} and {y}")
    rows = [r for r in read_results(folder) if r.get("lower") is not None]
    if not rows:
        raise InvalidInputError(f"{folder} holds no dimension results to plot (plots are for --what dimension)")
    for message in constant_axes(rows, x, y) if warn is not None else ():
        warn(message)
    plt = _pyplot()
    out = Path(out or folder)
    written = []
    for name, make in (("dimension", lambda: dimension_figure(rows, x, plt)),
                       ("defect", lambda: defect_figure(rows, x, y, plt)), ("time", lambda: time_figure(rows, plt))):
        path = out / f"{name}.{fmt}"
        check_writable(path)
        fig = make()
        fig.savefig(path, bbox_inches="tight", dpi=150)
        plt.close(fig)
        written.append(path)
    return written
