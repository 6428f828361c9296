"""The package's layers: lower layers never import higher ones, and no module imports itself back."""

import ast
import functools
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attngeo"
#: bottom to top; a module may import its own layer and the layers below (docs/architecture.md)
ORDER = {"base": 0, "check": 0, "exact": 1, "model": 2, "geometry": 3, "theorems": 4, "ui": 5}


def _name(path: Path) -> str:
    return ".".join(("attngeo",) + path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in ORDER:
        return parts[1]
    return "ui" if module == "attngeo.__main__" else "base"


def _imports(path: Path):
    """Absolute names of the attngeo modules ``path`` imports (at any depth, lazy imports included)."""
    package = _name(path) if path.name == "__init__.py" else _name(path).rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                yield candidate if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists() else target
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attngeo"):
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("attngeo"))


@functools.cache
def _graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for path in PACKAGE.rglob("*.py"):
        src = _name(path)
        g.add_node(src)
        for target in _imports(path):
            if target != src and target != "attngeo":
                g.add_edge(src, target)
    return g


@pytest.mark.parametrize("src", sorted(_graph().nodes))
def test_no_module_imports_a_higher_layer(src):
    for target in _graph().successors(src):
        assert ORDER[_layer(target)] <= ORDER[_layer(src)], f"{src} ({_layer(src)}) imports {target} ({_layer(target)})"


def test_the_import_graph_has_no_cycle():
    g = _graph()
    assert nx.is_directed_acyclic_graph(g), nx.find_cycle(g)


def test_the_checker_depends_on_nothing_above_the_base():
    g = _graph()
    for src in (n for n in g if _layer(n) == "check"):
        assert all(t.startswith("attngeo.check") or t == "attngeo.exceptions" for t in g.successors(src)), src
