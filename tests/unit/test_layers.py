"""The layers of docs/architecture.md hold in the code, and no public class name is taken twice.

The layer table is read from the doc itself, so the doc and this test cannot drift.
Every `import` in src/guardsearch counts (also lazy ones inside functions and ones
under `if TYPE_CHECKING:`; docs/architecture.md says why).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
DOC = ROOT / "docs" / "architecture.md"

# Import edges that break the layers and are being removed (issue 15). Empty this list;
# never add to it: an entry that no longer occurs fails the test, so it only shrinks.
KNOWN_VIOLATIONS: dict[str, str] = {}

# Public class names defined in more than one module (issue 15 renames them; the lead
# empties this list). A name that is no longer duplicated fails the test until removed.
KNOWN_DUPLICATE_CLASSES: set[str] = set()


# -- the checker ------------------------------------------------------------------------


def layers_from_doc(text: str) -> list[list[str]]:
    """The layer table of `## Layers` (its first fenced block), lowest layer first.

    Each line is `a/ | b.py | c/   description`; `guardsearch/__init__.py` is the
    root package, named `guardsearch`.
    """
    section = text.split("## Layers", 1)[1]
    block = section.split("```", 2)[1].split("\n", 1)[1]
    layers = []
    for line in block.splitlines():
        if not line.strip():
            continue
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        layers.append([_unit_name(n) for n in names.split("|")])
    return layers[::-1]


def _unit_name(entry: str) -> str:
    entry = entry.strip()
    if entry == "guardsearch/__init__.py":
        return "guardsearch"
    return entry.removesuffix("/").removesuffix(".py")


def modules(src: Path) -> dict[str, tuple[Path, bool]]:
    """Every module under `src/guardsearch`: dotted name -> (file, is a package)."""
    found = {}
    for path in sorted((src / "guardsearch").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imports(name: str, path: Path, is_package: bool) -> Iterator[tuple[str, int]]:
    """(dotted name, line) for each name a module imports: `from a.b import c` gives
    `a.b.c`, which is a module or a name in one (see `resolve`)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def resolve(dotted: str, known: dict[str, tuple[Path, bool]]) -> str | None:
    """The guardsearch module a dotted name lives in (its longest known prefix)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


def unit_of(module: str) -> str:
    """The layer a module belongs to: its top-level package or module, or the root."""
    return module.split(".")[1] if "." in module else module


def family_of(module: str, packages: set[str]) -> str | None:
    """`guardsearch.P.S` when the module lives in the subpackage S of a package P."""
    parts = module.split(".")
    family = ".".join(parts[:3])
    return family if len(parts) >= 3 and family in packages else None


def violations(src: Path, doc_text: str) -> list[str]:
    """Every import that breaks the layer table, each as `module -> target: why`."""
    table = layers_from_doc(doc_text)
    level = {unit: i for i, line in enumerate(table) for unit in line}
    found = modules(src)
    units = {name.split(".")[1] for name in found if name != "guardsearch"}
    packages = {name for name, (_, is_package) in found.items() if is_package}
    problems = [f"{u}: not in the layer table of docs/architecture.md" for u in units - set(level)]
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (path, is_package) in found.items():
        here = unit_of(name)
        for dotted, line in imports(name, path, is_package):
            target = resolve(dotted, found)
            if target is None or target == name:
                continue
            there = unit_of(target)
            edge = f"{name} -> {target}"
            if there not in level or here not in level:
                continue
            if there != here:
                graph[here].add(there)
                if level[there] > level[here]:
                    problems.append(f"{edge} (line {line}): upward, {here} is below {there}")
                elif level[there] == level[here]:
                    problems.append(f"{edge} (line {line}): {here} and {there} are neighbours")
            else:
                mine, other = family_of(name, packages), family_of(target, packages)
                if mine and other and mine != other:
                    problems.append(f"{edge} (line {line}): families {mine}, {other} are apart")
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return list(dict.fromkeys(problems))  # `from m import a, b` is one import


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of units (sorted, for messages)."""
    found: list[list[str]] = []
    seen: set[str] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        path = _path_back(graph, start)
        if path:
            seen.update(path)
            found.append(path)
    return found


def _path_back(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path start -> ... -> start, breadth first, or None."""
    paths = [[start]]
    visited = {start}
    while paths:
        path = paths.pop(0)
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == start:
                return [*path, start]
            if nxt not in visited:
                visited.add(nxt)
                paths.append([*path, nxt])
    return None


def public_classes(src: Path) -> dict[str, list[str]]:
    """Public class name -> the modules that define one."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for name, (path, _) in modules(src).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                by_name[node.name].append(name)
    return by_name


# -- the tests --------------------------------------------------------------------------


def _known(problem: str) -> bool:
    return problem.split(" (line")[0] in KNOWN_VIOLATIONS


def test_imports_follow_the_layers_of_architecture_md() -> None:
    found = [p for p in violations(SRC, DOC.read_text(encoding="utf-8")) if not _known(p)]
    assert found == [], "\n".join(found)


def test_every_known_violation_still_occurs_so_the_list_only_shrinks() -> None:
    edges = {p.split(" (line")[0] for p in violations(SRC, DOC.read_text(encoding="utf-8"))}
    stale = set(KNOWN_VIOLATIONS) - edges
    assert not stale, f"fixed, remove from KNOWN_VIOLATIONS: {sorted(stale)}"


def test_the_layer_table_lists_every_package_once() -> None:
    table = layers_from_doc(DOC.read_text(encoding="utf-8"))
    listed = [unit for line in table for unit in line]
    units = {name.split(".")[1] for name in modules(SRC) if name != "guardsearch"}
    assert table[0] == ["core"]
    assert sorted(listed) == sorted(units | {"guardsearch"})


PLANTED_DOC = """
## Layers

```text
guardsearch/__init__.py   the API
apps/                     apps
loops/ | search/          neighbours
core/                     types
```
"""


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "guardsearch" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_checker_catches_upward_imports_cycles_neighbours_and_families(
    tmp_path: Path,
) -> None:
    src = _plant(
        tmp_path,
        {
            "__init__.py": "from guardsearch.apps import x\n",
            "core/__init__.py": "def f():\n    from guardsearch.search import run\n",
            "search/__init__.py": "from ..core import types\nfrom guardsearch.loops import a\n",
            "loops/__init__.py": "",
            "apps/__init__.py": "from guardsearch import core\n",
            "apps/a/__init__.py": "from guardsearch.apps.b import thing\n",
            "apps/b/__init__.py": "from guardsearch.apps import common\n",
            "apps/common.py": "",
            "extra/__init__.py": "",
        },
    )
    found = violations(src, PLANTED_DOC)
    assert "extra: not in the layer table of docs/architecture.md" in found
    upward = "guardsearch.core -> guardsearch.search (line 2): upward, core is below search"
    assert upward in found
    assert any("search and loops are neighbours" in p for p in found)
    assert any("families guardsearch.apps.a, guardsearch.apps.b are apart" in p for p in found)
    assert "import cycle: core -> search -> core" in found
    # Downward imports, a family using its package's own module, relative imports: fine.
    assert not any(p.startswith(("guardsearch.apps ->", "guardsearch.apps.b ->")) for p in found)
    assert not any(p.startswith("guardsearch -> ") for p in found)
    assert len(found) == 5, found


def test_no_public_class_name_is_defined_twice() -> None:
    twice = {name: where for name, where in public_classes(SRC).items() if len(where) > 1}
    unknown = {name: where for name, where in twice.items() if name not in KNOWN_DUPLICATE_CLASSES}
    assert not unknown, f"one class per name: {unknown}"
    stale = KNOWN_DUPLICATE_CLASSES - set(twice)
    assert not stale, f"no longer defined twice, remove from KNOWN_DUPLICATE_CLASSES: {stale}"


def test_the_class_check_sees_a_planted_duplicate(tmp_path: Path) -> None:
    src = _plant(
        tmp_path,
        {"a.py": "class Result:\n    pass\n", "b.py": "class Result:\n    class _Inner: ...\n"},
    )
    assert public_classes(src) == {"Result": ["guardsearch.a", "guardsearch.b"]}


def module_cycles(src: Path) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a loop (lazy
    imports included), as sorted lists: strongly connected parts of the import graph."""
    found = modules(src)
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (path, is_package) in found.items():
        for dotted, _ in imports(name, path, is_package):
            target = resolve(dotted, found)
            if target is not None and target != name:
                graph[name].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in sorted(found):
        if name not in index:
            visit(name)
    return groups


def test_no_two_files_import_each_other() -> None:
    """0 cycles between files across all of src/, not only between packages (issue 31:
    game24's program, space and solve; cli's apps, runs and durable_solve; the otel
    package and its span view)."""
    assert module_cycles(SRC) == []


def test_the_file_cycle_check_sees_a_planted_loop(tmp_path: Path) -> None:
    """A package and its submodule importing each other (the otel case) is a cycle, a
    lazy import inside a function counts, and a one-way import is not one."""
    src = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "pkg/__init__.py": "def enable():\n    from guardsearch.pkg.setup import start\n",
            "pkg/setup.py": "from guardsearch.pkg.view import View\n",
            "pkg/view.py": "from guardsearch.pkg import KEY\nfrom guardsearch.pkg.keys import K\n",
            "pkg/keys.py": "",
            "other.py": "from guardsearch.pkg.keys import K\n",
        },
    )
    assert module_cycles(src) == [
        ["guardsearch.pkg", "guardsearch.pkg.setup", "guardsearch.pkg.view"]
    ]
