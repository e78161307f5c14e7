"""The viewer's page: one template for the live UI (`guardsearch serve`, /ui) and the
one-file page of a run (`guardsearch runs view`).

The page is plain HTML with its stylesheet and script inline (static/viewer.css,
static/viewer.js, hand-written, no library): nothing is fetched from elsewhere. The
live page reads the server's JSON and event streams; the one-file page carries its
run as JSON inside it and needs no server and no network.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from guardsearch.viewer.view import run_view


def check_export(doc: Any) -> None:
    """A ValueError unless `doc` has the shape of a `runs export` document (an export
    file may come from anywhere: the page must not fail half-way on a wrong type)."""
    if not isinstance(doc, dict):
        raise ValueError("not a run export: not a JSON object")
    for key in ("run", "state", "events"):
        if key not in doc:
            raise ValueError(f"not a run export: the {key!r} field is missing")
    if not isinstance(doc["run"], dict):
        raise ValueError("not a run export: 'run' is not an object")
    state = doc["state"]
    nodes = state.get("nodes", []) if isinstance(state, dict) else None
    if state is not None and not (
        isinstance(nodes, list)
        and all(isinstance(n, dict) and isinstance(n.get("id"), str) for n in nodes)
    ):
        raise ValueError("not a run export: 'state' must hold a list of nodes with ids")
    if not isinstance(doc["events"], list) or not all(isinstance(e, dict) for e in doc["events"]):
        raise ValueError("not a run export: 'events' must be a list of objects")
    if not isinstance(doc.get("calls") or [], list):
        raise ValueError("not a run export: 'calls' must be a list")


def _asset(name: str) -> str:
    return resources.files("guardsearch.viewer").joinpath(name).read_text("utf-8")


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_asset),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("page.html.j2")


def script_json(data: Any) -> Markup:
    """`data` as JSON safe inside a <script> element: no `<`, `>` or `&` survives, so
    no text from a model can close the element or start markup."""
    text = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _render(title: str, boot: dict[str, Any]) -> str:
    return _template().render(
        title=title,
        boot=script_json(boot),
        css=Markup(_asset("static/viewer.css")),
        js=Markup(_asset("static/viewer.js")),
    )


def render_ui(*, needs_key: bool = False) -> str:
    """The live viewer page (its data comes from /ui/api)."""
    return _render("guardsearch runs", {"mode": "live", "needs_key": needs_key})


def render_run(doc: dict[str, Any]) -> str:
    """The one-file page of an exported run: `{"run", "state", "events", "calls"}`."""
    check_export(doc)
    run = doc["run"]
    title = f"Run {run.get('id', '')}" + (f" — {run['name']}" if run.get("name") else "")
    return _render(title, {"mode": "static", "view": run_view(doc, with_calls=True)})
