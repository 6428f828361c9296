"""Every path a command takes, when the system refuses it, ends in one line and exit code 2 (issue 20 item 5).

A 300-character name (ENAMETOOLONG), a link to one, a link loop (ELOOP), a
file where a folder is expected (ENOTDIR) and the reverse (EISDIR), a file that
cannot be written (EACCES) or is not text: never a traceback, never exit 1
(which ``check`` means as "rejected"), and the line names the path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attngeo.ui.cli import main

LONG = "a" * 300


@pytest.fixture
def hostile(tmp_path, monkeypatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    os.symlink(LONG, "link-to-long")
    os.symlink("loop", "loop")
    os.mkdir("folder")
    Path("file.json").write_text("{}")
    Path("binary").write_bytes(b"\xff\xfe\x00[widths]")
    paths = {"long": LONG, "link to a long name": "link-to-long", "link loop": "loop",
             "under a file": "file.json/x"}
    return paths


def _one_line_exit_2(argv: list[str], capsys) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv[:2], code, out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attngeo: error: "), err
    return lines[0]


COMMANDS = {
    "check": lambda p: ["check", p],
    "dim --certificate": lambda p: ["dim", "--widths", "2,2", "--ranks", "1", "--certificate", p],
    "singular --certificate": lambda p: ["singular", "--widths", "2,2", "--ranks", "1", "--certificate", p],
    "fiber --weights": lambda p: ["fiber", "--widths", "2,2", "--ranks", "1", "--weights", p],
    "sweep --out": lambda p: ["sweep", "--widths", "2", "--out", p],
    "sweep --config": lambda p: ["sweep", "--config", p],
    "plot": lambda p: ["plot", p],
    "certify --out": lambda p: ["certify", "--out", p, "--only", "single-layer-dimension"],
    "certify --proofs": lambda p: ["certify", "--proofs", p],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", ["long", "link to a long name", "link loop", "under a file"])
def test_a_path_the_system_refuses_is_one_line_and_exit_2(hostile, capsys, command, kind):
    line = _one_line_exit_2(COMMANDS[command](hostile[kind]), capsys)
    assert hostile[kind][:40] in line  # the line names the path


@pytest.mark.parametrize("argv", [["sweep", "--widths", "2", "--out", "file.json"],  # a file as the output folder
                                  ["sweep", "--config", "folder"], ["fiber", "--widths", "2,2", "--ranks", "1",
                                                                    "--weights", "folder"],
                                  ["sweep", "--config", "binary"],  # not UTF-8 text
                                  ["dim", "--widths", "2,2", "--ranks", "1", "--certificate", "folder"],
                                  ["certify", "--proofs", "file.json"]])
def test_a_file_for_a_folder_or_a_folder_for_a_file_is_one_line(hostile, capsys, argv):
    _one_line_exit_2(argv, capsys)


@pytest.mark.skipif(not os.path.exists("/sys/kernel/notes"), reason="needs /sys/kernel/notes, a file even root cannot write (Linux only)")
def test_a_file_that_cannot_be_written_is_one_line(hostile, capsys):
    _one_line_exit_2(["dim", "--widths", "2,2", "--ranks", "1", "--certificate", "/sys/kernel/notes"], capsys)
    _one_line_exit_2(["sweep", "--widths", "2", "--out", "/sys/kernel/notes"], capsys)
