"""Sweeps: local processes and a Dask cluster give the same table; a killed sweep resumes to the same table."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attngeo.ui.sweep import grid, sweep

GRID = dict(widths=[1, 2, 3, 4, 5], layers=[1, 2, 3], ranks=[1, 2, 3], tokens=[1, 2, 3])
ARGS = ["--widths", "1..5", "--layers", "1..3", "--ranks", "1..3", "--tokens", "1..3"]


def _table(folder: Path) -> list[tuple]:
    """The results table without the timings (which differ from run to run)."""
    with open(folder / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)), "a task appears twice"
    return sorted(tuple((k, v) for k, v in r.items() if k not in ("seconds", "attempts")) for r in rows)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweeps") / "local"
    archs = grid(*GRID.values())
    assert len(archs) >= 100
    rows = sweep(archs, folder, workers=2, progress=None)
    assert all(r["status"] == "done" and r["certified"] for r in rows)  # every architecture certified
    return folder


def test_rows_certificates_and_dimensions(local):
    from attngeo.check import check_folder

    table = _table(local)
    assert len(table) >= 100 and len(list((local / "certificates").glob("*.json"))) == len(table)
    assert all(type(r).__name__ == "CheckResult" for _, r in check_folder(local / "certificates"))
    rows = [dict(r) for r in table]
    for r in rows:  # the deep equal-width formula where [HMK] states it, as a cross-check of the table
        l, d, a = r["ranks"].count(",") + 1, int(r["widths"].split(",")[0]), int(r["ranks"].split(",")[0])
        if int(r["tokens"]) >= 2 and a <= d:
            assert int(r["dimension"]) == l * a * (2 * d - a) + d * d - l


def test_a_dask_cluster_gives_the_same_table(local, tmp_path):
    distributed = pytest.importorskip("distributed", reason="Dask is not installed: python3 -m pip install 'attngeo[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        sweep(grid(*GRID.values()), tmp_path / "dask", workers=2, scheduler=cluster.scheduler_address, progress=None)
    assert _table(tmp_path / "dask") == _table(local)


def test_a_killed_sweep_resumes_to_the_same_table(local, tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "attngeo", "sweep", *ARGS, "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        path = out / "results.jsonl"
        if path.exists() and len(path.read_text().splitlines()) >= 20:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, half-way
    proc.wait()
    done = len((out / "results.jsonl").read_text().splitlines())
    assert 20 <= done < len(_table(local))
    with open(out / "results.jsonl", "a") as fh:
        fh.write('{"key": "torn')  # a line a crash cut in half
    assert subprocess.run(cmd + ["--resume"], capture_output=True).returncode == 0
    assert _table(out) == _table(local)


def test_a_failing_task_is_recorded_and_retried_once(tmp_path):
    rows = sweep(grid([4], [3], [2], [3]), tmp_path / "slow", workers=1, seconds=0.001, progress=None)
    (row,) = rows
    assert row["status"] == "failed" and "time budget" in row["error"] and row["attempts"] == 2
    lines = [json.loads(x) for x in (tmp_path / "slow" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 1  # the retry's verdict only


def test_plot_writes_the_three_figures(local, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed: python3 -m pip install 'attngeo[plot]'")
    from attngeo.ui.cli import main

    assert main(["plot", str(local), "--out", str(tmp_path), "--format", "pdf", "--x", "width", "--y", "tokens"]) == 0
    for name in ("dimension", "defect", "time"):
        assert (tmp_path / f"{name}.pdf").stat().st_size > 1000


def test_a_fifo_given_as_the_grid_is_refused_without_blocking(tmp_path, capsys):
    from attngeo.ui.cli import main

    os.mkfifo(tmp_path / "grid.toml")
    assert main(["sweep", "--config", str(tmp_path / "grid.toml"), "--out", str(tmp_path / "s")]) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_heads_masks_and_bottlenecks_sweep_and_their_rows_name_them(tmp_path):
    from attngeo import Architecture
    from attngeo.check import check_certificate
    from attngeo.ui.sweep import from_toml

    path = tmp_path / "grid.toml"
    path.write_text('widths = "2"\nheads = "1..2"\ncausal = true\n'
                    '[[architecture]]\nwidths = [3, 3, 3]\nranks = [1, 1]\nheads = [2, 2]\nvalue_ranks = [1, 1]\n')
    archs, _ = from_toml(path)
    assert archs == [Architecture((2, 2), (1,), 2, heads=1, causal=True),
                     Architecture((2, 2), (1,), 2, heads=2, causal=True),
                     Architecture((3, 3, 3), (1, 1), 2, heads=2, value_ranks=1)]
    rows = sweep(archs, tmp_path / "out", workers=1)
    assert sorted((r["heads"], r["value_ranks"] or [], r["causal"]) for r in rows) == \
        [([1], [], True), ([2], [], True), ([2, 2], [1, 1], False)]  # one row per architecture, named
    for cert in (tmp_path / "out" / "certificates").glob("*.json"):
        check_certificate(json.loads(cert.read_text()))
    assert all(r["lower"] <= r["upper"] for r in rows)


def test_the_progress_bar_shows_done_running_failed(tmp_path):
    import io

    buf = io.StringIO()
    rows = sweep(grid([2], [1], [1, 2], [2]), tmp_path / "out", workers=1, progress=buf)
    text = buf.getvalue()
    assert len(rows) == 2 and "2/2" in text and "failed" in text and "running" in text
