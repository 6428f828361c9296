"""Sweeps: one question over a grid of architectures, on local processes or a Dask cluster, resumable.

Each architecture is one task (its dimension by default; ``fiber``,
``singular`` or ``implicit`` at a random point for single layers). Tasks run
through the ``concurrent.futures`` interface — a local ``ProcessPoolExecutor``,
or a Dask cluster's executor (``Client(address).get_executor()``), the same
code path — each with a time budget (``SIGALRM`` in the worker) and an
address-space budget. Every finished task appends one JSON line to
``OUT/results.jsonl`` (one ``write`` of a whole line, then ``fsync``), writes
its certificate to ``OUT/certificates/<key>.json`` (atomically) and the table
``OUT/results.csv`` is rewritten (atomically) from the lines. A killed sweep
loses at most the tasks that were running: ``--resume`` keeps every row whose
certificate exists and re-checks, drops a torn last line, and runs the rest; a
task that fails is recorded with its error and retried once.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import pickle
import resource
import select
import signal
import sys
import time
import tomllib
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from ..check.lifetime import die_with_parent, limit_cpu
from ..exceptions import AttngeoError, InvalidInputError
from ..geometry.certificate import make_folder, write_text
from ..model.architecture import Architecture
from .arguments import parse_range

WHAT = ("dimension", "fiber", "singular", "implicit")
#: Row fields that hold one integer per layer: lists in results.jsonl, "3,3" in results.csv.
LIST_COLUMNS = ("widths", "ranks", "heads", "value_ranks")
COLUMNS = ["key", "widths", "ranks", "heads", "value_ranks", "residual", "causal", "tokens", "normalization", "what",
           "parameters", "lower", "upper", "certified",
           "dimension", "formula", "naive", "families", "verdict", "seconds", "status", "error", "attempts"]


def grid(widths, layers, ranks, tokens, normalization: str = "lightning", heads=(1,), residual: bool = False,
         causal: bool = False) -> list[Architecture]:
    """Equal widths ``d``, ``l`` layers, equal ranks ``a <= d``, every token count and head count: one architecture each.

    Examples
    --------
    >>> [str(a) for a in grid([2, 3], [1], [1, 3], [2])]
    ['widths 2,2, ranks 1, t=2, lightning', 'widths 3,3, ranks 1, t=2, lightning', 'widths 3,3, ranks 3, t=2, lightning']
    >>> [str(a) for a in grid([2], [2], [1], [2], heads=[1, 2], causal=True)]
    ['widths 2,2,2, ranks 1,1, t=2, causal, lightning', 'widths 2,2,2, ranks 1,1, heads 2,2, t=2, causal, lightning']
    """
    return [Architecture((d,) * (l + 1), (a,) * l, t, normalization, h, None, residual, causal)
            for d, l, a, t, h in itertools.product(widths, layers, ranks, tokens, heads) if a <= d]


def from_toml(path) -> tuple[list[Architecture], dict]:
    r"""A grid from a TOML file: ``widths``, ``layers``, ``ranks``, ``tokens``, ``heads`` (ranges or lists),
    ``softmax``, ``residual``, ``causal``, ``what``, and optionally ``[[architecture]]`` tables with explicit
    ``widths``/``ranks``/``tokens`` (and ``heads``, ``value_ranks``, ``residual``, ``causal``).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "grid.toml")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('widths = "2..3"\ntokens = "2,3"\n[[architecture]]\nwidths = [2, 4, 2]\nranks = [2, 2]\n')
    >>> archs, options = from_toml(path)
    >>> len(archs), str(archs[-1]), options
    (5, 'widths 2,4,2, ranks 2,2, t=2, lightning', {'what': 'dimension'})
    """
    from ..model.weights import regular_file

    regular_file(path, "TOML grid")
    try:
        with open(path, "rb") as fh:
            spec = tomllib.load(fh)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{path} is not TOML ({exc})") from None
    norm = "softmax" if spec.get("softmax") else "lightning"
    archs = []
    if "widths" in spec:
        archs += grid(*(parse_range(spec.get(k, default), f"{path}: {k}")
                        for k, default in (("widths", None), ("layers", "1"), ("ranks", "1"), ("tokens", "2"))), norm,
                      parse_range(spec.get("heads", "1"), f"{path}: heads"), spec.get("residual", False) is True,
                      spec.get("causal", False) is True)
    for item in spec.get("architecture", []):
        if not isinstance(item, dict) or not isinstance(item.get("widths"), list) or not isinstance(item.get("ranks"), list):
            raise InvalidInputError(f"{path}: each [[architecture]] needs widths and ranks lists")
        try:  # heads, value_ranks, residual and causal as Architecture.from_dict reads them
            archs.append(Architecture.from_dict({"normalization": norm, **item}))
        except AttngeoError as exc:
            raise InvalidInputError(f"{path}: [[architecture]] {exc}") from None
    if not archs:
        raise InvalidInputError(f"{path} describes no architecture (give widths/layers/ranks/tokens or [[architecture]])")
    return archs, {"what": spec.get("what", "dimension")}


def task_key(arch: Architecture, what: str, seed: int) -> str:
    """The task's name: a hash of the architecture and the options (its certificate's file name).

    >>> task_key(Architecture((2, 2), (1,)), "dimension", 0) == task_key(Architecture((2, 2), (1,)), "dimension", 0)
    True
    """
    text = json.dumps({"architecture": arch.to_dict(), "what": what, "seed": seed}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _compute(arch: Architecture, what: str, seed: int) -> tuple[dict, dict]:
    """The task itself: its row fields and its certificate."""
    from ..geometry.dimension.dense import certify_dimension
    from ..geometry.fibers.layer import fiber, special_point

    if what == "dimension":
        result = certify_dimension(arch, seed=seed)
        s = result.summary()
        from ..model.formulas import naive_count

        return ({"lower": s["lower"], "upper": s["upper"], "certified": s["certified"], "dimension": s["dimension"],
                 "formula": s["formula"], "naive": naive_count(arch), "families": " ".join(s["families"])},
                result.to_json())
    import random

    if arch.depth != 1 or arch.tokens < 2:
        raise InvalidInputError(f"--what {what} is for single layers with t >= 2; {arch} is not one")
    point = special_point(arch, "random", random.Random(seed))
    if what == "fiber":
        result = fiber(arch, point)
        return {"certified": True, "verdict": result.case}, result.to_json()
    if what == "singular":
        from ..geometry.loci.singular import is_singular

        result = is_singular(arch, point, seed=seed)
        return {"certified": result.certified, "verdict": result.verdict}, result.to_json()
    from ..geometry.loci.implicit import implicit_equations

    result = implicit_equations(arch, seed=seed)
    return {"certified": True, "verdict": f"{len(result.equations)} generators"}, result.to_json()


def _child(write_fd: int, arch_dict: dict, what: str, seed: int, memory_mb: int) -> None:
    """In the forked child: compute, send one pickled answer, exit without running any parent cleanup."""
    if memory_mb:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
        except (ValueError, OSError):
            pass
    try:
        from .estimate import task

        task(Architecture.from_dict(arch_dict), what, memory_mb)  # refused at once, as its command would be
        answer = ("done", *_compute(Architecture.from_dict(arch_dict), what, seed))
    except MemoryError:
        answer = ("failed", f"over the memory budget of {memory_mb} MiB", None)
    except AttngeoError as exc:
        answer = ("failed", str(exc)[:300], None)
    except Exception as exc:  # a bug must cost one task, not the sweep
        answer = ("failed", f"{type(exc).__name__}: {str(exc)[:200]}", None)
    with os.fdopen(write_fd, "wb") as fh:
        pickle.dump(answer, fh)


def run_task(arch_dict: dict, what: str, seed: int, seconds: float, memory_mb: int) -> dict:
    """Run one task in a forked child with a time and memory budget: its row and its certificate (``None`` on failure).

    A child per task (``os.fork``: Dask's daemonic workers may not use multiprocessing) makes the budgets
    hold the same way in a local worker process and in a Dask worker thread. Never raises.

    >>> from attngeo import Architecture
    >>> done = run_task(Architecture((2, 2), (1,)).to_dict(), "dimension", 0, 60, 2048)
    >>> done["row"]["dimension"], done["row"]["status"], done["certificate"]["kind"]
    (6, 'done', 'dimension')
    >>> slow = run_task(Architecture((4, 4, 4, 4), (2, 2, 2)).to_dict(), "dimension", 0, 0.001, 2048)
    >>> slow["row"]["status"], slow["row"]["error"], slow["certificate"]
    ('failed', 'over the time budget of 0.001 s', None)
    """
    start = time.perf_counter()
    row = _bare(Architecture.from_dict(arch_dict), what)
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        try:
            _quiet_child(parent)
            os.setpgid(0, 0)  # its own group: whatever it starts (msolve, Singular) is killed with it
            limit_cpu(seconds + 1)  # its own budget, should the worker waiting for it be stopped or gone
            _child(write_fd, arch_dict, what, seed, memory_mb)
        finally:
            os._exit(0)
    _RUNNING.add(pid)
    try:
        os.setpgid(pid, pid)  # also here, so the group exists whichever of the two runs first
    except OSError:  # the child has already set it, or is gone
        pass
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + seconds
    with os.fdopen(read_fd, "rb") as fh:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fh], [], [], left)[0]:
                break
            chunk = os.read(fh.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _kill_group(pid)
    os.waitpid(pid, 0)
    _RUNNING.discard(pid)
    certificate = None
    try:
        status, fields, certificate = pickle.loads(b"".join(chunks))
    except Exception:  # nothing (or half an answer) came back
        timed_out = time.monotonic() >= deadline
        status, fields = "failed", (f"over the time budget of {seconds:g} s" if timed_out
                                    else "the task's process died (a crash or the memory budget)")
    if status == "done":
        row.update(fields, status="done")
    else:
        row.update(status="failed", error=fields)
    row["seconds"] = round(time.perf_counter() - start, 3)
    return {"row": row, "certificate": certificate}


#: the task processes this process is waiting for (a pool worker has one at a time; Dask threads, several)
_RUNNING: set[int] = set()


def _kill_group(pid: int) -> None:
    """Kill a task's process and every process it started (its group), done or not: a grandchild must not
    survive its task, even one not set to die with its parent."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:  # no group left: the task and its children are gone already (or never formed one)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _quiet_child(parent: int) -> None:
    """A pool worker or task process: it dies with ``parent``, and leaves Ctrl-C and SIGTERM to the command.

    A terminal sends Ctrl-C to every process of the command; each would print
    its own traceback. The command stops its children itself (:func:`sweep`).
    """
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _pool_worker(parent: int) -> None:
    """A local pool worker: as :func:`_quiet_child`, and SIGTERM (from :func:`_abandon`) takes the process groups
    of its running tasks along before it exits."""
    _quiet_child(parent)
    signal.signal(signal.SIGTERM, _stop_tasks)


def _stop_tasks(signum, frame) -> None:
    for pid in list(_RUNNING):
        _kill_group(pid)
    os._exit(128 + signum)


def _abandon(executor) -> None:
    """Stop a local pool at once: queued tasks cancelled, running ones killed (their task processes die with
    them); ``--resume`` reruns them. Waiting for them could take a whole task budget."""
    workers = list((getattr(executor, "_processes", None) or {}).values())  # no public handle before Python 3.14
    executor.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        proc.terminate()  # each kills its task's whole group (_stop_tasks)
    for proc in workers:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


def _append(path: Path, row: dict) -> None:
    """One whole line per write, flushed to disk: a crash leaves at most a torn last line, dropped on resume."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(row, sort_keys=True) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def read_rows(out: Path) -> dict[str, dict]:
    r"""The rows already in ``OUT/results.jsonl``, by key (the last row of a key wins; a torn line is dropped).

    Rows of older sweeps, which stored ``widths``, ``ranks``, ``heads`` and ``value_ranks`` as
    strings ``"3,3"``, are read as the lists rows hold now (:func:`normalized`).

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> _ = (out / "results.jsonl").write_text('{"key": "a", "v": 1}\n{"key": "a", "v": 2}\n{"key": "b", "v"')
    >>> read_rows(out)
    {'a': {'key': 'a', 'v': 2}}
    """
    rows = {}
    path = out / "results.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash
            if isinstance(row, dict) and "key" in row:
                rows[row["key"]] = normalized(row)
    return rows


def normalized(row: dict) -> dict:
    """A row with ``widths``, ``ranks``, ``heads`` as lists of integers and ``value_ranks`` a list or None.

    Older sweeps wrote them as comma-joined strings (``""`` for no value ranks); both forms read the same.

    >>> normalized({"widths": "3,3", "ranks": "2", "heads": "1", "value_ranks": ""})
    {'widths': [3, 3], 'ranks': [2], 'heads': [1], 'value_ranks': None}
    >>> normalized({"widths": [3, 3], "ranks": [2], "heads": [1], "value_ranks": None})["widths"]
    [3, 3]
    """
    out = dict(row)
    for name in LIST_COLUMNS:
        value = out.get(name)
        if isinstance(value, str):
            out[name] = [int(v) for v in value.split(",")] if value.strip() else None
    return out


def write_table(out: Path, rows: list[dict]) -> Path:
    """``OUT/results.csv`` from the rows, sorted by size then key, written atomically.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> path = write_table(out, [{"key": "b", "parameters": 8, "dimension": 6}, {"key": "a", "parameters": 3}])
    >>> [line.split(",")[0] for line in path.read_text().splitlines()]
    ['key', 'a', 'b']
    """
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for row in sorted(rows, key=lambda r: (r["parameters"], r["key"])):
        writer.writerow({k: _cell(row.get(k)) for k in COLUMNS})
    return write_text(out / "results.csv", buf.getvalue())


def _cell(value) -> str:
    """A CSV cell: a list of integers comma-joined (``3,3``), nothing for None."""
    if value is None:
        return ""
    return ",".join(map(str, value)) if isinstance(value, list) else value


class _Bar:
    """Done / running / failed and an ETA, as a tqdm bar (docs/architecture.md, "Progress": tqdm does this as well
    as the text line it replaced, and only a sweep pays its import)."""

    def __init__(self, total: int, stream):
        from tqdm import tqdm

        self.bar = tqdm(total=total, file=stream, unit="task", dynamic_ncols=True)

    def update(self, done: int, running: int, failed: int) -> None:
        self.bar.n = done
        self.bar.set_postfix(running=running, failed=failed, refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def sweep(archs: list[Architecture], out, what: str = "dimension", workers: int = 2, scheduler: str | None = None,
          seed: int = 0, seconds: float = 600.0, memory_mb: int = 4096, resume: bool = False,
          progress=sys.stderr) -> list[dict]:
    """Run every task, streaming rows and certificates into ``out``; returns the final rows.

    Examples
    --------
    >>> import tempfile
    >>> rows = sweep(grid([2, 3], [1], [1, 2], [2]), tempfile.mkdtemp() + "/s", workers=1, progress=None)
    >>> [(r["widths"], r["ranks"], r["dimension"]) for r in rows]
    [([2, 2], [1], 6), ([2, 2], [2], 7), ([3, 3], [1], 13), ([3, 3], [2], 16)]
    """
    from ..check import check_certificate

    if what not in WHAT:
        raise InvalidInputError(f"--what must be one of {', '.join(WHAT)}, got {what!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"--out {out} is a file, not a folder; give a new or existing folder")
    if out.exists() and not resume and any(out.iterdir()):
        raise InvalidInputError(f"{out} already holds a sweep; pass --resume to continue it, or choose a new folder")
    certs = out / "certificates"
    for folder in (out, certs):
        if not folder.exists():
            make_folder(folder)
    tasks = {task_key(a, what, seed): a for a in archs}
    rows = read_rows(out) if resume else {}
    for key in list(rows):  # keep a row only if its certificate exists and re-checks
        row = rows[key]
        if key not in tasks or row.get("status") != "done":
            rows.pop(key)
            continue
        try:
            check_certificate(certs / f"{key}.json")
        except AttngeoError:
            rows.pop(key)
    pending = [k for k in tasks if k not in rows]
    attempts = {k: 0 for k in pending}
    if scheduler:
        try:
            from dask.distributed import Client
        except ImportError:
            raise InvalidInputError("--scheduler needs Dask: python3 -m pip install 'dask[distributed]'") from None
        client = Client(scheduler)
        executor, close = client.get_executor(), client.close
        abandon = close  # the cluster's workers are not ours to kill; each task keeps its own budget there
    else:
        executor = ProcessPoolExecutor(max_workers=max(1, workers), initializer=_pool_worker, initargs=(os.getpid(),))
        close, abandon = executor.shutdown, lambda: _abandon(executor)
    failed = 0
    bar = _Bar(len(tasks), progress) if progress is not None else None
    try:
        running = {}
        queue = list(pending)
        while queue or running:
            while queue and len(running) < max(1, workers) * 2:
                key = queue.pop(0)
                attempts[key] += 1
                running[executor.submit(run_task, tasks[key].to_dict(), what, seed, seconds, memory_mb)] = key
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in finished:
                key = running.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # a lost worker or a crashed process: the task failed, not the sweep
                    result = {"row": {**_bare(tasks[key], what), "status": "failed",
                                      "error": f"worker lost ({type(exc).__name__})"}, "certificate": None}
                row = {**result["row"], "key": key, "attempts": attempts[key]}
                if result["certificate"] is None and attempts[key] < 2:
                    queue.append(key)  # retried once
                    continue
                if result["certificate"] is not None:
                    write_text(certs / f"{key}.json", json.dumps(result["certificate"], separators=(",", ":")) + "\n")
                failed += row["status"] != "done"
                _append(out / "results.jsonl", row)
                rows[key] = row
                write_table(out, list(rows.values()))
            if bar is not None:
                bar.update(len(rows), len(running), failed)
    except BaseException:  # Ctrl-C, SIGTERM: every row written so far stays; the running tasks are stopped
        close = abandon
        raise
    finally:
        close()
        if bar is not None:
            bar.close()
    write_table(out, list(rows.values()))
    return sorted(rows.values(), key=lambda r: (r["parameters"], r["key"]))


def _bare(arch: Architecture, what: str) -> dict:
    """A row's architecture fields, as JSON values: lists of integers per layer, ``value_ranks`` None when V is whole."""
    return {"widths": list(arch.widths), "ranks": list(arch.ranks), "heads": list(arch.heads),
            "value_ranks": None if arch.value_ranks is None else list(arch.value_ranks),
            "residual": arch.residual, "causal": arch.causal,
            "tokens": arch.tokens, "normalization": arch.normalization, "what": what,
            "parameters": arch.parameter_count}
