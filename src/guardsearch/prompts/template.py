"""Prompt templates are files: a `[system]` section and a `[user]` section, in Jinja2.

Every rendered prompt starts with the pinned primary objective (seed 004 §3.3.3):
the first message always begins "Primary objective: ...", whatever the template says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError
from guardsearch.core.messages import Message

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
)
_SECTIONS = ("[system]", "[user]")


@dataclass(frozen=True)
class PromptTemplate:
    """A two-part chat prompt. `source` names where it came from (for lock files)."""

    system: str
    user: str
    source: str = "<inline>"

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
        return hashlib.sha256(f"{self.system}\0{self.user}".encode()).hexdigest()

    def render(self, context: Context, **variables: Any) -> tuple[Message, ...]:
        """Messages for `context`: [system: objective-first context + instructions, user]."""
        values: Mapping[str, Any] = {
            "objective": context.objective,
            "context": context,
            **variables,
        }
        try:
            system = _ENV.from_string(self.system).render(values) if self.system else ""
            user = _ENV.from_string(self.user).render(values)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"{self.source}: {exc.message}") from exc
        head = context.render()
        first = f"{head}\n\n{system}" if system else head
        return (Message("system", first), Message("user", user))


def prompt(value: PromptTemplate | str) -> PromptTemplate:
    """Accept a template, or a plain string used as the user section."""
    if isinstance(value, PromptTemplate):
        return value
    if "[user]" in value:
        return PromptTemplate.parse(value)
    return PromptTemplate(system="", user=value)
