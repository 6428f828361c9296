"""Every public function, class and public method of attngeo has a numpydoc docstring with a runnable example."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attngeo"


def _public(path: Path):
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            yield node.name, node
            if isinstance(node, ast.ClassDef) and ">>>" not in (ast.get_docstring(node) or ""):
                # a class whose own Examples exercise its methods (an Ops interface) needs no example per method
                for item in node.body:
                    is_property = any(getattr(d, "id", "") == "property" for d in getattr(item, "decorator_list", []))
                    if isinstance(item, ast.FunctionDef) and not item.name.startswith("_") and not is_property:
                        yield f"{node.name}.{item.name}", item


def _missing():
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for name, node in _public(path):
            if ">>>" not in (ast.get_docstring(node) or ""):
                out.append(f"{path.relative_to(PACKAGE.parent)}: {name}")
    return out


def test_every_public_name_has_a_runnable_example():
    missing = _missing()
    assert not missing, f"{len(missing)} public names without an Examples section:\n" + "\n".join(missing)
