"""The app registry: ready solvers by name, for the CLI, durable runs, POST /solve and benches.

An app is registered once, as an `App`: how to build a search space for a problem
and a strategy (with the options the app recommends), its default strategy, an
example problem, its experiment suite, whether POST /solve may serve it, and the
CLI command that solves one problem. Whatever runs apps looks them up here by name,
so nothing below `apps/` imports an app:

    def build(problem: dict, strategy: str) -> AppSetup:
        return AppSetup(space=CountdownSpace(start=problem["start"]))

    register(App(name="countdown", build=build, example={"start": 3}))

A name of the form `package.module:attribute` (an `App`, or a bare build function)
is loaded on demand instead, so a fresh process can rebuild a run's space and a
plugin needs no registration. The built-in apps register when their package is
imported; `guardsearch/__init__.py` names the package that holds them
(`builtin_apps("guardsearch.apps")`), and a lookup imports them on first need.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from guardsearch.core.errors import ConfigError

if TYPE_CHECKING:  # not at run time: `import guardsearch` stays quick (benchmarks/startup.py)
    from guardsearch.search.space import SearchSpace


@dataclass(kw_only=True)
class AppSetup:
    """A ready search space and the options the app recommends for a strategy."""

    space: SearchSpace
    options: dict[str, Any] = field(default_factory=dict)


AppBuilder = Callable[[dict[str, Any], str], AppSetup]


@dataclass(frozen=True, kw_only=True)
class App:
    """A ready solver as the rest of guardsearch sees it.

    `build(problem, strategy)` returns the space for one problem (a JSON object)
    and the search options the app recommends for that strategy; a ConfigError
    says what is wrong with the problem. `suite()` returns the app's experiment
    suite (`guardsearch.experiments.Suite`), imported only when a bench asks for
    it. `served`: POST /solve may build it from a request's problem (so `build`
    must read no files or code a request names). `command`: the CLI command that
    solves one problem, for listings and help.

    What `guardsearch solve NAME PROBLEM` needs from an app, so that a new app takes
    no CLI code: `parse(text)` turns the problem as a person types it ("4 5 6 10")
    into the problem object (None: PROBLEM must be a JSON object); `check(problem,
    answer)` verifies a solved search's answer independently of the search (None or
    "" = right, else why it is wrong; a wrong one fails the run loudly); `show(answer)`
    is how the answer prints (default: as JSON); `flags` are the boolean problem keys
    that the command's flags may set (game24: `value`, for `--value`).
    """

    name: str
    build: AppBuilder
    summary: str = ""
    strategy: str = "astar"
    example: dict[str, Any] = field(default_factory=dict)
    suite: Callable[[], object] | None = None
    served: bool = True
    command: str = ""
    parse: Callable[[str], dict[str, Any]] | None = None
    check: Callable[[dict[str, Any], Any], str | None] | None = None
    show: Callable[[Any], str] | None = None
    flags: tuple[str, ...] = ()

    def setup(self, problem: dict[str, Any], strategy: str) -> AppSetup:
        """The space (and default options) for `problem`, checked to be an AppSetup."""
        try:
            setup = self.build(dict(problem), strategy)
        except TypeError as exc:  # e.g. an import path naming something else: 'os:system'
            raise ConfigError(
                f"app {self.name!r} could not build a space: {exc} "
                "(a build function takes (problem, strategy) and returns an AppSetup)"
            ) from exc
        except (KeyError, ValueError) as exc:  # a problem without a key, a bad number
            raise ConfigError(f"app {self.name!r} cannot read the problem: {exc!r}") from exc
        if not isinstance(setup, AppSetup):
            raise ConfigError(
                f"app {self.name!r} must return an AppSetup, got {type(setup).__name__}"
            )
        return setup


_APPS: dict[str, App] = {}
_BUILTIN_PACKAGES: list[str] = []


def register(app: App) -> App:
    """Make `app` available by its name; a different app under a taken name is an error."""
    taken = _APPS.get(app.name)
    if taken is not None and taken != app:
        raise ConfigError(f"an app named {app.name!r} is already registered")
    _APPS[app.name] = app
    return app


def builtin_apps(package: str) -> None:
    """Name a package whose subpackages are apps that register when imported.

    A lookup of an unknown name imports `package.NAME`; listing imports them all.
    """
    if package not in _BUILTIN_PACKAGES:
        _BUILTIN_PACKAGES.append(package)


def _import_builtins(name: str | None = None) -> None:
    """Import the built-in app package `name` (every one for None), which registers it."""
    for package in _BUILTIN_PACKAGES:
        if name is None:
            found = importlib.import_module(package).__path__
            names = [m.name for m in pkgutil.iter_modules(found) if m.ispkg]
        else:
            names = [name] if name.isidentifier() else []
        for sub in names:
            if importlib.util.find_spec(f"{package}.{sub}") is not None:
                importlib.import_module(f"{package}.{sub}")


def app_names() -> list[str]:
    """Every registered app's name, the built-in ones included."""
    _import_builtins()
    return sorted(_APPS)


def _load(path: str) -> App:
    module_name, _, attr = path.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load app {path!r}: {exc}") from exc
    if isinstance(found, App):
        return found
    if callable(found):
        return App(name=path, build=found)
    raise ConfigError(f"{path!r} is neither an App nor a build function")


def get_app(name: str) -> App:
    """The app registered as `name`, or loaded from the import path `package.module:attr`."""
    if ":" in name:
        return _load(name)
    if name not in _APPS:
        _import_builtins(name)
    app = _APPS.get(name)
    if app is None:
        raise ConfigError(
            f"unknown app {name!r}; choose one of {', '.join(app_names())} "
            "or name a builder as 'package.module:function'"
        )
    return app


def build_app(name: str, problem: dict[str, Any], strategy: str) -> AppSetup:
    """The space (and default options) of app `name` for `problem`."""
    return get_app(name).setup(problem, strategy)
