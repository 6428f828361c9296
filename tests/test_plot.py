"""Sweep figures a person reads at a glance, and sweep rows that store lists and integers (old rows still read)."""

import json

import pytest

from attngeo.ui.sweep import grid, read_rows, sweep

plt = pytest.importorskip("matplotlib.pyplot",
                          reason="matplotlib is not installed: python3 -m pip install 'attngeo[plot]'")


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plots") / "s"
    sweep(grid([2, 3], [1, 2], [1, 2], [2], heads=[1, 2]), folder, workers=2, progress=None)
    return folder


def test_rows_store_lists_and_integers_and_old_string_rows_still_read(swept):
    rows = [json.loads(line) for line in (swept / "results.jsonl").read_text().splitlines()]
    assert all(isinstance(r["widths"], list) and all(isinstance(v, int) for v in r["widths"] + r["heads"])
               and r["value_ranks"] is None and isinstance(r["tokens"], int) for r in rows)
    for r in rows:  # the stored lists describe the architecture that was certified
        assert len(r["widths"]) == len(r["ranks"]) + 1 == len(r["heads"]) + 1
    old = dict(rows[0], widths=",".join(map(str, rows[0]["widths"])), ranks=",".join(map(str, rows[0]["ranks"])),
               heads=",".join(map(str, rows[0]["heads"])), value_ranks="")  # a row as sweeps wrote it before
    text = (swept / "results.jsonl").read_text()
    try:
        (swept / "results.jsonl").write_text(text + json.dumps(old) + "\n")
        assert read_rows(swept)[old["key"]] == rows[0]
        again = sweep(grid([2, 3], [1, 2], [1, 2], [2], heads=[1, 2]), swept, workers=1, resume=True, progress=None)
        assert len(again) == len(rows) and all(r["attempts"] == 1 for r in again)  # nothing recomputed
    finally:
        (swept / "results.jsonl").write_text(text)
    assert (swept / "results.csv").read_text().splitlines()[1].split(",")[1].startswith('"')  # "2,2" in the CSV


@pytest.mark.parametrize("x", ["width", "layers", "rank", "tokens", "heads"])
def test_the_dimension_plot_puts_any_axis_on_x(swept, x):
    from attngeo.ui.plot import AXES, dimension_figure, read_results

    rows = read_results(swept)
    fig = dimension_figure(rows, x, plt)
    for ax in fig.axes:
        assert ax.get_xlabel() == AXES[x][2]
        for line in ax.get_lines():  # every point is (x value, certified dimension) of some row
            pairs = {(AXES[x][0](r), r["dimension"]) for r in rows}
            assert set(zip(*line.get_data())) <= pairs
    legend = next(ax.get_legend() for ax in fig.axes if ax.get_legend())
    box, frame = legend.get_window_extent(fig.canvas.get_renderer()), fig.axes[-1].get_window_extent()
    assert box.x0 >= frame.x1  # the legend sits outside the data
    plt.close(fig)


def test_series_stay_distinct_beyond_ten(swept):
    from attngeo.ui.plot import style

    styles = [tuple(sorted(style(k).items())) for k in range(40)]
    assert len(set(styles)) == 40 and len({s[0] for s in styles}) == 10  # colours repeat, the triple never does


def test_the_heatmap_writes_each_cells_defect(swept):
    from attngeo.ui.plot import AXES, defect_figure, read_results

    rows = read_results(swept)
    fig = defect_figure(rows, "width", "heads", plt)
    texts = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in fig.axes[0].texts}
    for (i, d), (j, h) in [((i, d), (j, h)) for i, d in enumerate((2, 3)) for j, h in enumerate((1, 2))]:
        defects = sorted({r["naive"] - r["dimension"] for r in rows if AXES["width"][0](r) == d and r["heads"][0] == h})
        assert texts[(i, j)] == (str(defects[0]) if len(defects) == 1 else f"{defects[0]}..{defects[-1]}")
    plt.close(fig)


def test_the_time_plot_is_log_log_with_the_fitted_exponent():
    from attngeo.ui.plot import time_figure, time_fit

    rows = [{"widths": [2, 2], "ranks": [1], "heads": [1], "tokens": 2, "normalization": "lightning",
             "parameters": p, "seconds": 0.5 + 2e-6 * p ** 1.5} for p in (10, 20, 40, 1e4, 2e4, 4e4, 8e4, 1.6e5)]
    fit = time_fit(rows)
    assert fit["tasks"] == 5 and abs(fit["k"] - 1.5) < 0.05  # the compute's exponent, not the overhead's
    fig = time_figure(rows, plt)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert any("P^1.5" in t.get_text() or "P^1.4" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close(fig)


def test_plot_refuses_equal_axes_and_a_folder_without_a_sweep(tmp_path, capsys):
    from attngeo.ui.cli import main

    assert main(["plot", str(tmp_path), "--x", "width", "--y", "width"]) == 2
    assert "two different axes" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "none")]) == 2
    assert "no such folder" in capsys.readouterr().err


def _titles(fig) -> list:
    return [t for t in [fig._suptitle] + [ax.title for ax in fig.axes] if t is not None and t.get_text()]


@pytest.mark.parametrize("x, y", [("heads", "width"), ("width", "layers"), ("tokens", "rank")])
def test_no_title_is_clipped_even_with_one_panel_or_one_column(swept, x, y):
    from attngeo.ui.plot import defect_figure, dimension_figure, read_results, time_figure

    rows = read_results(swept)
    one = [r for r in rows if len(r["ranks"]) == 1]  # one panel: the narrowest dimension figure
    for fig in (dimension_figure(one, x, plt), dimension_figure(rows, x, plt), defect_figure(rows, x, y, plt),
                defect_figure([r for r in rows if r["heads"][0] == 1], "heads", y, plt), time_figure(one[:3], plt)):
        fig.canvas.draw()
        page = fig.bbox
        for title in _titles(fig):
            box = title.get_window_extent(fig.canvas.get_renderer())
            assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1 and box.y1 <= page.y1 + 1, title.get_text()
        plt.close(fig)


def test_a_constant_plotted_axis_is_warned_about(swept, tmp_path, capsys):
    from attngeo.ui.cli import main

    assert main(["plot", str(swept), "--x", "tokens", "--y", "width", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "--x tokens is 2 in every row" in err and "heads" in err  # and which axes do vary
    assert main(["plot", str(swept), "--x", "heads", "--y", "width", "--out", str(tmp_path)]) == 0
    assert "warning" not in capsys.readouterr().err
