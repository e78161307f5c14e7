"""`import guardsearch` is the public API: one call shape for every family, each with a
sync twin, every listed name importable, and the loop families loaded only when used."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import guardsearch
from guardsearch import Outcome

FAMILIES = ("search", "app", "research", "review", "probe")
SHAPE = ["model", "budget", "trace", "config"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_has_one_entry_point_with_the_same_call_shape(family: str) -> None:
    entry = getattr(guardsearch, f"run_{family}")
    params = list(inspect.signature(entry).parameters.values())
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD  # the input
    keywords = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keywords[:4] == SHAPE
    assert inspect.iscoroutinefunction(entry)
    returns = inspect.signature(entry, eval_str=True).return_annotation
    assert issubclass(returns, Outcome)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_entry_point_has_a_sync_twin(family: str) -> None:
    twin = getattr(guardsearch, f"run_{family}_sync")
    assert twin.__name__ == f"run_{family}_sync" and not inspect.iscoroutinefunction(twin)
    assert twin.__wrapped__ is getattr(guardsearch, f"run_{family}")


def test_every_listed_name_is_importable_and_listed_once() -> None:
    assert len(set(guardsearch.__all__)) == len(guardsearch.__all__)
    for name in guardsearch.__all__:
        assert getattr(guardsearch, name) is not None, name
    assert set(guardsearch.__all__) <= set(dir(guardsearch))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'run_everything'"):
        _ = guardsearch.run_everything  # type: ignore[attr-defined]


def test_importing_the_package_leaves_the_families_search_and_models_unloaded() -> None:
    code = (
        "import sys, guardsearch; "
        "print(sorted(m for m in sys.modules if m.startswith(('guardsearch.loops', "
        "'guardsearch.apps', 'guardsearch._api', 'guardsearch.search', 'guardsearch.models', "
        "'guardsearch.steps', 'guardsearch.guards'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_lazy_table_and_the_typed_imports_name_the_same_things() -> None:
    """`guardsearch/__init__.py` loads every name on first use (`_LAZY_MODULES`) and
    imports them under TYPE_CHECKING for type checkers: the two lists agree."""
    import ast
    from pathlib import Path

    source = Path(guardsearch.__file__).read_text(encoding="utf-8")
    typed: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                typed.setdefault(imp.module, set()).update(a.name for a in imp.names)
    lazy = {module: set(names) for module, names in guardsearch._LAZY_MODULES.items()}
    assert typed == lazy
    assert set(guardsearch.__all__) - {"__version__"} <= set(guardsearch._LAZY)


def test_the_lazy_table_names_every_entry_point_of_api_once() -> None:
    """`_api` has no `__all__` of its own: the root's lazy table is the one list, and it
    names exactly the public functions `_api` defines (issue 31: they were listed twice)."""
    import guardsearch._api as api

    defined = {
        name
        for name, value in vars(api).items()
        if callable(value)
        and not name.startswith("_")
        and getattr(value, "__module__", "") == api.__name__
    }
    assert defined >= {"run_search", "run_search_sync", "run_app", "run_probe_sync"}
    assert set(guardsearch._LAZY_MODULES["guardsearch._api"]) == defined
    assert not hasattr(api, "__all__")
