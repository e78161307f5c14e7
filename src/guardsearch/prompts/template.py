"""Prompt templates are files: a `[system]` section and a `[user]` section, in Jinja2.

Every rendered prompt starts with the pinned primary objective, so a long search never
drifts from its goal: the first message always begins "Primary objective: ...",
whatever the template says.

Templates compile in Jinja's immutable sandbox: a template reaches no Python internals
(`{{ x.__class__ }}` and the like fail with a ConfigError) and changes nothing. Variable
values are data: Jinja inserts them as text and never reads template syntax in them.
A plain string (`Step(prompt="Summarise: " + text)`) is literal text, not a template;
templating is explicit: `PromptTemplate.inline("Pick a {{ kind }} colour.")`, or a
`[system]`/`[user]` template via `PromptTemplate.parse` / `from_file`. The `data`
filter fences retrieved text (prompts/untrusted.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError
from guardsearch.core.messages import Message
from guardsearch.prompts.untrusted import DATA_RULE, as_data

_ENV = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
)
_ENV.filters["data"] = as_data
_ENV.globals["data_rule"] = DATA_RULE
_SECTIONS = ("[system]", "[user]")


@dataclass(frozen=True)
class PromptTemplate:
    """A two-part chat prompt. `source` names where it came from (for lock files);
    a `literal` prompt is used as written (no template syntax is read in it)."""

    system: str
    user: str
    source: str = "<inline>"
    literal: bool = False

    @classmethod
    def parse(cls, text: str, source: str = "<inline>") -> PromptTemplate:
        sections: dict[str, list[str]] = {}
        current: str | None = None
        for line in text.splitlines():
            if line.strip() in _SECTIONS:
                current = line.strip()
                sections[current] = []
            elif current is not None:
                sections[current].append(line)
            elif line.strip():
                raise ConfigError(f"{source}: text before the first [system]/[user] section")
        if "[user]" not in sections:
            raise ConfigError(f"{source}: a prompt template needs a [user] section")
        system = "\n".join(sections.get("[system]", [])).strip()
        user = "\n".join(sections["[user]"]).strip()
        for part in (system, user):
            try:
                _ENV.parse(part)
            except jinja2.TemplateSyntaxError as exc:
                raise ConfigError(f"{source}: template error line {exc.lineno}: {exc}") from exc
        return cls(system=system, user=user, source=source)

    @classmethod
    def inline(cls, text: str, source: str = "<inline>") -> PromptTemplate:
        """A user-only template from `text`, whose `{{ variables }}` are rendered: for
        text you wrote. Pass user text as a variable, never as part of `text`."""
        return cls.parse(f"[user]\n{text}", source)

    @classmethod
    def from_file(cls, path: str | Path) -> PromptTemplate:
        p = Path(path)
        try:
            return cls.parse(p.read_text(encoding="utf-8"), str(p))
        except OSError as exc:
            raise ConfigError(f"cannot read prompt template {p}: {exc.strerror}") from exc

    @classmethod
    def packaged(cls, name: str) -> PromptTemplate:
        """A template shipped in `guardsearch/prompts/NAME.j2`."""
        ref = resources.files("guardsearch.prompts").joinpath(f"{name}.j2")
        try:
            text = ref.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise ConfigError(f"no packaged prompt named {name!r}") from exc
        return cls.parse(text, f"guardsearch/prompts/{name}.j2")

    @property
    def digest(self) -> str:
        # A literal prompt renders differently from a template of the same text.
        mark = "\0literal" if self.literal else ""
        return hashlib.sha256(f"{self.system}\0{self.user}{mark}".encode()).hexdigest()

    def render(self, context: Context, **variables: Any) -> tuple[Message, ...]:
        """Messages for `context`: [system: objective-first context + instructions, user]."""
        values: Mapping[str, Any] = {
            "objective": context.objective,
            "context": context,
            **variables,
        }
        if self.literal:
            system, user = self.system, self.user
        else:
            system, user = self._fill(values)
        head = context.render()
        first = f"{head}\n\n{system}" if system else head
        return (Message("system", first), Message("user", user))

    def _fill(self, values: Mapping[str, Any]) -> tuple[str, str]:
        try:
            system = _ENV.from_string(self.system).render(values) if self.system else ""
            user = _ENV.from_string(self.user).render(values)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"{self.source}: {exc.message}") from exc
        except SecurityError as exc:  # e.g. {{ x.__class__ }}: no Python internals
            raise ConfigError(f"{self.source}: the template sandbox refused: {exc}") from exc
        except jinja2.TemplateError as exc:
            raise ConfigError(f"{self.source}: template error: {exc}") from exc
        return system, user


def prompt(value: PromptTemplate | str) -> PromptTemplate:
    """Accept a template, or a plain string: literal text used as the user section.

    A plain string is never read as a template, so `prompt("Summarise: " + text)` sends
    `text` as written, whatever braces it holds. Template explicitly with
    `PromptTemplate.inline` / `parse` / `from_file`."""
    if isinstance(value, PromptTemplate):
        return value
    return PromptTemplate(system="", user=value, literal=True)
