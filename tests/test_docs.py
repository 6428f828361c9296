"""Citations in shipped files point at documents that ship, and at sections that exist.

The mathematics lives in docs/math.md; an older reference text outside the
repository (cited as a bare ``MATH.md``, or by a ``../shared`` path) does not
ship, so a citation of it is a dead link for every reader of a checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_DIRS = ("attngeo", "proofs", "docs", "notebooks", "benchmarks")
SUFFIXES = {".py", ".md", ".ipynb", ".tex"}

BARE_MATH = re.compile(r"(?<!docs/)MATH\.md")
SHARED = re.compile(r"\.\./shared")
DOC = re.compile(r"(?<![\w/.-])docs/([\w-]+\.md)")
SECTION = re.compile(r"(?<![\w/.-])docs/([\w-]+\.md)\s*§\s*(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)


def shipped_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in SHIPPED_DIRS:
        for path in sorted((ROOT / top).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.suffix in SUFFIXES and path.is_file() and not any(
                p.startswith(".") or p == "__pycache__" for p in parts
            ):
                files.append(path)
    return files


def matches(pattern: re.Pattern) -> list[tuple[str, int, re.Match]]:
    """``(file, line number, match)`` for every match of ``pattern`` in a shipped file."""
    found = []
    for path in shipped_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in pattern.finditer(line):
                found.append((str(path.relative_to(ROOT)), number, m))
    return found


def test_the_scan_sees_the_shipped_tree():
    names = {str(p.relative_to(ROOT)) for p in shipped_files()}
    assert {"README.md", "docs/math.md", "attngeo/geometry/dimension/dense.py"} <= names
    assert not any(n.startswith("tests/") for n in names)


def test_no_citation_of_a_reference_outside_the_repository():
    bad = [f"{f}:{n}: {m.group(0)}" for f, n, m in matches(BARE_MATH) + matches(SHARED)]
    assert not bad, "cite docs/math.md §N instead of:\n" + "\n".join(bad)


def test_every_cited_document_exists():
    shipped_docs = {p.name for p in (ROOT / "docs").iterdir()}  # exact case, on any file system
    bad = [f"{f}:{n}: {m.group(0)}" for f, n, m in matches(DOC) if m.group(1) not in shipped_docs]
    assert not bad, "cited but not in docs/:\n" + "\n".join(bad)


def test_every_cited_section_exists():
    headings: dict[str, set[str]] = {}
    bad = []
    for f, n, m in matches(SECTION):
        name, section = m.group(1), m.group(2)
        path = ROOT / "docs" / name
        if not path.is_file():
            continue  # reported by test_every_cited_document_exists
        if name not in headings:
            headings[name] = set(HEADING.findall(path.read_text(encoding="utf-8")))
        if section not in headings[name]:
            bad.append(f"{f}:{n}: {m.group(0)} (sections: {', '.join(sorted(headings[name]))})")
    assert not bad, "cited section has no numbered heading:\n" + "\n".join(bad)


def test_math_sections_are_the_stable_ones():
    # Citations across the project rely on this numbering (docs/math.md, first paragraphs):
    # titles may be reworded, but section N must keep its subject.
    text = (ROOT / "docs" / "math.md").read_text(encoding="utf-8")
    top = re.findall(r"^## (\d+)\. (.+)$", text, re.MULTILINE)
    assert [int(k) for k, _ in top] == list(range(1, len(top) + 1))
    subjects = ["model", "one lightning layer", "deep", "normalized", "certif", "learned"]
    assert len(top) >= len(subjects)
    for (k, title), subject in zip(top, subjects):
        assert subject in title.lower(), f"docs/math.md §{k} ({title}) should be about {subject!r}"
