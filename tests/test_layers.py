"""The import direction of the package (DESIGN.md §1), read from the source with ``ast``.

Floors, lowest first: errors, settings and the CSV cell rule (``csvcells``); the KST
mathematics (``kst``) and the shared plots (``reports``); ``graph``; ``inference``;
``loaders``; ``evaluators``; the web explorer (``explore``, which shows what the
evaluators compute); ``cli``; and the public API of ``kstp/__init__.py`` on top. A module
imports only from its own floor or below, lazy imports inside functions included; ``kst``
imports nothing of kstp but the errors; nothing imports ``cli``; and no modules import
each other in a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kstp"
FLOORS = {"_version": 0, "csvcells": 0, "errors": 0, "settings": 0, "kst": 1, "reports": 1, "graph": 2, "inference": 3,
          "loaders": 4, "catalogues": 4, "evaluators": 5, "explore": 6, "cli": 7, "": 8}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("kstp", *path.relative_to(PACKAGE).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The kstp modules that ``name`` imports anywhere in its text (a package counts as its ``__init__``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found |= {t for t in targets if t in MODULES and t != name}
    return found


GRAPH = nx.DiGraph([(name, target) for name, path in MODULES.items() for target in _imports(name, path)])


def _floor(module: str) -> int:
    return FLOORS[module.split(".")[1] if "." in module else ""]


def test_layers_every_module_has_a_floor():
    assert all(module.split(".")[1] in FLOORS for module in MODULES if "." in module)


def test_layers_imports_run_downward():
    upward = sorted(f"{a} -> {b}" for a, b in GRAPH.edges if _floor(b) > _floor(a))
    assert not upward, "imports that go up a floor: " + "; ".join(upward)


def test_layers_kst_imports_only_the_errors():
    outside = sorted(f"{a} -> {b}" for a, b in GRAPH.edges
                     if a.startswith("kstp.kst") and not b.startswith("kstp.kst") and b != "kstp.errors")
    assert not outside, "; ".join(outside)


def test_layers_nothing_imports_the_cli():
    assert sorted(a for a, b in GRAPH.edges if b.startswith("kstp.cli") and not a.startswith("kstp.cli")) == []


def test_layers_no_import_circles():
    assert list(nx.simple_cycles(GRAPH)) == []


@pytest.mark.parametrize("source, expected", [
    ("from kstp.graph import store\nfrom kstp.errors import KstpError\n", {"kstp.graph.store", "kstp.errors"}),
    ("def f():\n    from kstp.kst.spaces import KnowledgeSpace\n", {"kstp.kst.spaces"}),
    ("from . import schema\nfrom .store import GraphStore\n", {"kstp.graph.schema", "kstp.graph.store"}),
])
def test_layers_reader_finds_every_import_form(tmp_path, source, expected):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert _imports("kstp.graph.probe", path) == expected
