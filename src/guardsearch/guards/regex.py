"""RegexGuard: the artifact's text must (or must not) match a pattern."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult


@dataclass
class RegexGuard:
    """`must_match=True`: the pattern must occur; False: it must not occur."""

    pattern: str
    must_match: bool = True
    feedback: str = ""
    flags: int = 0
    name: str = "regex"
    _compiled: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            self._compiled = re.compile(self.pattern, self.flags)
        except re.error as exc:
            raise ConfigError(f"invalid regex {self.pattern!r}: {exc}") from exc

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        found = self._compiled.search(artifact.text or "") is not None
        if found == self.must_match:
            return GuardResult.ok(self.name)
        default = (
            f"output must match /{self.pattern}/"
            if self.must_match
            else f"output must not match /{self.pattern}/"
        )
        return GuardResult.fail(self.feedback or default, self.name)
