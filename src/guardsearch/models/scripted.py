"""ScriptedModel: the test double. Answers from a list or a function, records requests."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from guardsearch.core.errors import ConfigError, ModelError
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.core.usage import Usage

Answer = str | Completion | Exception
ScriptFn = Callable[[ModelRequest], "Answer | Awaitable[Answer]"]


def count_words(text: str) -> int:
    """The scripted model's token count: whitespace-separated words (at least 1)."""
    return max(1, len(text.split()))


@dataclass
class ScriptedModel:
    """Replies from `script`: a list consumed in order (then `repeat_last`), or a function.

    An `Exception` in the script is raised from `complete()` (to script failures).
    Every request is kept in `requests` so tests can inspect prompts.
    """

    script: Iterable[Answer] | ScriptFn
    name: str = "scripted"
    repeat_last: bool = False
    latency_s: float = 0.0
    # Seconds to wait before each answer: a model that answers slowly, so a live view
    # (tests/browser, demos) can watch a run grow.
    delay_s: float = 0.0
    requests: list[ModelRequest] = field(default_factory=list)
    # Tests set it to act as a backend that decodes under json_schema (the script must
    # then keep to the schema: nothing here enforces it).
    constrained_decoding: bool = False

    def __post_init__(self) -> None:
        if callable(self.script):
            self._fn: ScriptFn | None = self.script
            self._queue: list[Answer] = []
        else:
            self._fn = None
            self._queue = list(self.script)
        self._last: Answer | None = None

    @property
    def calls(self) -> int:
        return len(self.requests)

    def count_tokens(self, request: ModelRequest) -> int:
        return sum(count_words(m.content) for m in request.messages)

    async def complete(self, request: ModelRequest) -> Completion:
        self.requests.append(request)
        if self.delay_s > 0:
            await asyncio.sleep(self.delay_s)
        answer = await self._next(request)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, Completion):
            return answer
        words = answer.split()
        cut = len(words) > request.max_tokens
        if cut:
            # Honour max_tokens like a real backend would, and say so the same way.
            answer = " ".join(words[: request.max_tokens])
        return Completion(
            finish_reason="length" if cut else "stop",
            text=answer,
            usage=Usage(
                calls=1,
                prompt_tokens=self.count_tokens(request),
                completion_tokens=count_words(answer),
            ),
            latency_s=self.latency_s,
            model=self.name,
        )

    async def _next(self, request: ModelRequest) -> Answer:
        if self._fn is not None:
            out = self._fn(request)
            return await out if inspect.isawaitable(out) else out
        if self._queue:
            self._last = self._queue.pop(0)
            return self._last
        if self.repeat_last and self._last is not None:
            return self._last
        raise ModelError(f"scripted model ran out of answers after {len(self.requests) - 1}")


def scripted_from_file(path: str) -> ScriptedModel:
    """A ScriptedModel whose answers are a JSON list of strings in `path`;
    `FILE?delay=S` waits S seconds before each answer."""
    import json
    from pathlib import Path

    delay = 0.0
    if "?" in path:
        path, _, option = path.rpartition("?")
        key, _, value = option.partition("=")
        try:
            delay = float(value) if key == "delay" else -1.0
        except ValueError:
            delay = -1.0
        if not 0 <= delay <= 3600:
            raise ConfigError(f"scripted spec takes ?delay=SECONDS (0 to 3600), got {option!r}")

    try:
        answers = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read scripted answers from {path}: {exc}") from exc
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ConfigError(f"{path} must hold a JSON list of strings")
    return ScriptedModel(answers, name=f"scripted:{path}", repeat_last=True, delay_s=delay)
