"""MoveSpace: a step-by-step puzzle from a start state, named moves and a goal test.

    space = MoveSpace(
        objective="Reach 26 from 5 with +3 and *2",
        start=5,
        moves={"+3": lambda n: n + 3, "*2": lambda n: n * 2},
        goal=lambda n: n == 26,
        guard=lambda n: n <= 26 or f"{n} overshoots 26",
    )

No subclassing: every expansion asks the model for the next move(s) from a node's
state. The prompt shows the objective, the state, the moves so far and the move names;
the answer is one move name per line (or a JSON list of names: on the embedded model
the grammar allows only the names). Each named move is a child whose state is
`moves[name](state)`; a name that is not a move, or a move that raises, is an
unparseable child whose feedback lists the valid moves. `guard(state)` judges a new
state as any guard does (True/None pass, False or a text fail). A state reached before
on any path is a duplicate (the dedup key is the state itself), so the search never
pays twice for one state. `score(state)` in 0..1 (optional) ranks the open states for
astar, best_first and beam. The answer is the list of moves from the start.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardsearch.core.artifact import Artifact
from guardsearch.core.budget import StepBudget
from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import Message, ModelRequest
from guardsearch.guards.base import Guard, GuardFn, as_guard
from guardsearch.search.node import Node
from guardsearch.search.space import BaseSpace, Proposal, Root

Move = Callable[[Any], Any]


def _show(state: Any) -> str:
    return state if isinstance(state, str) else json.dumps(state, ensure_ascii=False, default=str)


def move_names(text: str) -> list[str]:
    """The move names in an answer: a JSON list of names, or one name per line or comma."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    parts = text.replace(",", "\n").splitlines()
    return [p.strip().strip("`\"'").strip() for p in parts if p.strip().strip("`\"'").strip()]


@dataclass(kw_only=True)
class MoveSpace(BaseSpace):
    """A puzzle of moves: `start`, `moves` (name -> function of a state), `goal(state)`.

    `guard(state)` prunes a state (optional); `score(state)` in 0..1 ranks states
    (optional; default: every state that passes scores 1); `max_depth` caps the moves
    in a path; `rmax` is the expansions a node gets under every strategy (None: the
    strategy's own default, docs/search.md). States must be JSON data (they are saved
    with the tree and are the dedup key).
    """

    objective: str
    start: Any
    moves: Mapping[str, Move]
    goal: Callable[[Any], bool]
    guard: Guard | GuardFn | None = None
    score: Callable[[Any], float] | None = None
    max_depth: int = 8
    rmax: int | None = None
    max_tokens: int = 64

    def __post_init__(self) -> None:
        if not self.moves:
            raise ConfigError("a MoveSpace needs at least one move")
        if self.max_depth < 1:
            raise ConfigError(f"max_depth must be >= 1, got {self.max_depth}")
        if self.rmax is not None and self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")
        self.depth_limit = self.max_depth
        self._guard = as_guard(self.guard) if self.guard is not None else None

    def root(self) -> Root:
        return Root(
            state={"state": self.start, "moves": []}, context=Context(objective=self.objective)
        )

    def level(self, depth: int) -> str:
        return f"move{depth + 1}"

    def level_rmax(self, depth: int) -> int | None:
        return self.rmax

    def step_budget(self, depth: int) -> StepBudget:
        return StepBudget(rmax=self.rmax) if self.rmax is not None else self.default_budget

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        names = list(self.moves)
        done = " ".join(node.state["moves"]) or "(none yet)"
        prompt = (
            f"{context.render()}\n\nCurrent state: {_show(node.state['state'])}\n"
            f"Moves so far: {done}\nValid moves: {', '.join(names)}\n"
            "Answer with the next move(s) to try, best first, one move name per line."
        )
        schema = {
            "type": "array",
            "items": {"enum": names},
            "minItems": 1,
            "maxItems": len(names),
            "uniqueItems": True,
        }
        return ModelRequest(
            messages=(Message(role="user", content=prompt),),
            temperature=temperature,
            seed=seed,
            max_tokens=self.max_tokens,
            json_schema=schema,
        )

    def parse(self, node: Node, text: str) -> Sequence[Proposal]:
        names = list(dict.fromkeys(move_names(text)))
        valid = ", ".join(self.moves)
        if not names:
            return [
                Proposal(
                    state=None,
                    text=text.strip(),
                    parse_error=f"no move named; valid moves: {valid}",
                )
            ]
        return [self._proposal(node, name, valid) for name in names]

    def _proposal(self, node: Node, name: str, valid: str) -> Proposal:
        before = node.state["state"]
        if name not in self.moves:
            return Proposal(
                state=None, text=name, parse_error=f"{name!r} is not a move; valid moves: {valid}"
            )
        try:
            after = self.moves[name](before)
        except Exception as exc:  # a move that cannot apply here is feedback, not a crash
            return Proposal(
                state=None, text=name, parse_error=f"{name} cannot apply to {_show(before)}: {exc}"
            )
        return Proposal(
            state={"state": after, "moves": [*node.state["moves"], name]},
            text=f"{name} -> {_show(after)}",
            value=after,
            key=stable_digest(["move-state", after]),
        )

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        state = proposal.value
        if self._guard is not None:
            artifact = Artifact(
                id=f"{node.id}:{proposal.text}",
                step=self.level(node.depth),
                text=proposal.text,
                value=state,
            )
            verdict = await self._guard.check(artifact, context)
            if not verdict.passed:
                return verdict
        score = 1.0 if self.score is None else float(self.score(state))
        if not 0.0 <= score <= 1.0:
            raise ConfigError(f"score({_show(state)}) must be in 0..1, got {score}")
        return GuardResult.ok("move", score=score)

    def child_context(self, node: Node, context: Context, proposal: Proposal) -> Context:
        return context.for_next_step()  # the prompt shows the state and the moves so far

    def is_goal(self, node: Node) -> bool:
        return node.state is not None and bool(self.goal(node.state["state"]))

    def answer(self, node: Node) -> Any:
        return list(node.state["moves"])
