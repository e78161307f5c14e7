"""Tree of Thoughts' Table 2 baselines for the Game of 24, on any model.

- `io`: ToT's standard prompt (five worked answers), one greedy call;
- `cot`: ToT's chain-of-thought prompt (five worked step lists), one greedy call;
- `cot_sc`: k chain-of-thought samples (temperature 0.7, seeds seed..seed+k-1) and a
  majority vote over their final answers (ToT used k = 100);
- `tot_bfs`: ToT's BFS: propose next steps for each kept state, value each new state
  three times (sure / likely / impossible, summed 20 / 1 / 0.001), keep the best b = 5;
- `search_method`: any guardsearch strategy over `Game24Space` (code-scored h).

Every method answers with an expression; `check_answer` (exact, not a solver) decides
whether it is right. None of them consults `arith.solvable`: the exhaustive solver is
only the benchmark's scoring oracle.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from typing import Any

from guardsearch.apps.game24.arith import Item, check_answer, parse_numbers
from guardsearch.apps.game24.solve import default_options
from guardsearch.apps.game24.space import Game24Space
from guardsearch.core.context import Context
from guardsearch.core.errors import BudgetExceeded
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate
from guardsearch.search.node import Node
from guardsearch.search.result import SearchResult
from guardsearch.search.run import search
from guardsearch.search.space import Proposal

# ToT's value mapping (`value_map` in tot/tasks/game24.py).
TOT_VALUES = {"sure": 20.0, "likely": 1.0, "impossible": 0.001}
_ANSWER = re.compile(r"answer\s*:\s*(?P<expr>[^=\n]+?)\s*(?:=\s*[-\d./ ]+)?\s*$", re.I | re.M)
_EXPR_LINE = re.compile(r"^\s*(?P<expr>[\d\s()+\-*/×÷.]+?)\s*=\s*24\s*\.?\s*$", re.M)


@dataclass(frozen=True)
class Example:
    """One worked chain of thought: the input, its steps `a op b = c (left: ...)`, the answer."""

    numbers: str
    steps: tuple[str, ...]
    answer: str

    def as_dict(self) -> dict[str, Any]:
        return {"numbers": self.numbers, "steps": list(self.steps), "answer": self.answer}


def tot_examples() -> list[Example]:
    """The five chain-of-thought examples of ToT's `cot_prompt` (MIT; see data/)."""
    text = resources.files("guardsearch.apps.game24").joinpath("data/cot_examples.json")
    rows = json.loads(text.read_text("utf-8"))
    return [Example(r["numbers"], tuple(r["steps"]), r["answer"]) for r in rows]


def objective(numbers: str) -> str:
    return Game24Space(numbers=parse_numbers(numbers)).objective


def extract_answer(text: str) -> str | None:
    """The expression of the last `Answer: ... = 24` line (or a last bare `... = 24`)."""
    found = [m["expr"] for m in _ANSWER.finditer(text)]
    if not found:
        found = [m["expr"] for m in _EXPR_LINE.finditer(text)]
    if not found:
        return None
    expr = found[-1].strip().strip("`").strip()
    return expr or None


def _outcome(numbers: str, answer: str | None, texts: Sequence[str]) -> dict[str, Any]:
    right = answer is not None and check_answer(parse_numbers(numbers), answer) is None
    termination = "success" if right else ("wrong_answer" if answer else "no_answer")
    return {
        "succeeded": right,
        "answer": answer if right else None,
        "proposed": answer,
        "termination": termination,
        "outputs": [t[:400] for t in texts],
        "backtracks": [],
    }


async def _ask(
    template: PromptTemplate,
    numbers: str,
    model: Metered,
    *,
    max_tokens: int,
    seed: int,
    temperature: float,
    step: str,
    **variables: Any,
) -> str:
    messages = template.render(Context(objective=objective(numbers)), numbers=numbers, **variables)
    request = ModelRequest(
        messages=messages,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        stop=("\nInput:",),
    )
    completion = await model.complete(request, step=step)
    return completion.text


async def io(numbers: str, model: Metered, *, seed: int = 0) -> dict[str, Any]:
    """ToT's IO prompt: one greedy call, the `Answer:` line checked exactly."""
    try:
        text = await _ask(
            PromptTemplate.packaged("game24_io"),
            numbers,
            model,
            max_tokens=48,
            seed=seed,
            temperature=0.0,
            step="io",
        )
    except BudgetExceeded:
        return {**_outcome(numbers, None, []), "termination": "budget_exhausted"}
    return _outcome(numbers, extract_answer(text), [text])


async def cot(
    numbers: str,
    model: Metered,
    *,
    examples: Sequence[Example] | None = None,
    seed: int = 0,
    temperature: float = 0.0,
) -> dict[str, Any]:
    """ToT's chain-of-thought prompt (or `examples`, e.g. distilled paths): one call."""
    try:
        text = await _cot_text(numbers, model, examples, seed=seed, temperature=temperature)
    except BudgetExceeded:
        return {**_outcome(numbers, None, []), "termination": "budget_exhausted"}
    return _outcome(numbers, extract_answer(text), [text])


async def _cot_text(
    numbers: str,
    model: Metered,
    examples: Sequence[Example] | None,
    *,
    seed: int,
    temperature: float,
) -> str:
    shots = [e.as_dict() for e in (examples if examples is not None else tot_examples())]
    return await _ask(
        PromptTemplate.packaged("game24_cot"),
        numbers,
        model,
        max_tokens=160,
        seed=seed,
        temperature=temperature,
        step="cot",
        examples=shots,
    )


async def cot_sc(
    numbers: str,
    model: Metered,
    *,
    k: int = 5,
    temperature: float = 0.7,
    seed: int = 0,
) -> dict[str, Any]:
    """k chain-of-thought samples (seeds seed..seed+k-1), majority vote over the answers.

    Answers are compared with spaces removed; ties go to the first to appear. The vote
    never looks at correctness: only the winner is checked.
    """
    texts: list[str] = []
    exhausted = False
    for i in range(k):
        try:
            texts.append(
                await _cot_text(numbers, model, None, seed=seed + i, temperature=temperature)
            )
        except BudgetExceeded:
            exhausted = True
            break
    answers = [a for a in (extract_answer(t) for t in texts) if a]
    winner = majority(answers)
    out = _outcome(numbers, winner, texts)
    out["votes"] = dict(Counter(_norm(a) for a in answers))
    if exhausted and not out["succeeded"]:
        out["termination"] = "budget_exhausted"
    return out


def _norm(expr: str) -> str:
    return re.sub(r"\s+", "", expr)


def majority(answers: Sequence[str]) -> str | None:
    """The most common answer (whitespace ignored); ties -> the first to appear."""
    if not answers:
        return None
    counts = Counter(_norm(a) for a in answers)
    best = max(counts.values())
    return next(a for a in answers if counts[_norm(a)] == best)


@dataclass(kw_only=True)
class ToTValueSpace(Game24Space):
    """Game24Space whose h comes only from ToT's value prompt, sampled `evaluations` times.

    The value of a state is the sum over samples of sure 20 / likely 1 / impossible 0.001
    (ToT's `value_map`), scaled to 0..1; sample i uses seed i at `value_temperature`.
    The final state (one number) is still checked exactly by code.
    """

    evaluations: int = 3
    value_temperature: float = 0.7
    # ToT's proposer: the same grammar, without leaving out what the search holds.
    diversify: bool = False
    value_prompt: PromptTemplate = field(
        default_factory=lambda: PromptTemplate.packaged("game24_value")
    )

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        items = [Item(Fraction(v), e) for v, e in proposal.state["left"]]
        if len(items) == 1:
            return await super().evaluate(node, proposal, context)
        words = [
            await self._value(node, items, context, seed=i, temperature=self.value_temperature)
            for i in range(self.evaluations)
        ]
        total = sum(TOT_VALUES[w] for w in words)
        score = total / (TOT_VALUES["sure"] * self.evaluations)
        checks = tuple(
            Check(name=f"value {i + 1}: {w}", passed=w != "impossible", weight=1.0)
            for i, w in enumerate(words)
        )
        return GuardResult(passed=True, score=score, checks=checks, guard="tot-value")


SpaceFactory = Callable[[tuple[Fraction, ...]], Game24Space]


async def search_method(
    numbers: str,
    strategy: str,
    model: Metered,
    *,
    space: SpaceFactory | None = None,
    **options: Any,
) -> dict[str, Any]:
    """A guardsearch strategy on the Game of 24; the tree is summarised for tuning."""
    values = parse_numbers(numbers)
    the_space = space(values) if space is not None else Game24Space(numbers=values)
    options = {**default_options(strategy), **options}  # as solve_game24 runs it
    result = await search(the_space, strategy, model=model, **options)
    answer = result.answer if result.succeeded else None
    if answer is not None and check_answer(values, answer) is not None:  # pragma: no cover
        raise AssertionError(f"a goal failed the final check: {answer}")
    return {
        "succeeded": result.succeeded,
        "answer": answer,
        "numbers": numbers,
        "termination": result.termination,
        "expansions": result.expansions,
        "path": [n.text for n in result.path[1:]],
        "nodes": node_records(result),
        "backtracks": backtrack_depths(result),
    }


async def tot_bfs(
    numbers: str, model: Metered, *, width: int = 5, evaluations: int = 3
) -> dict[str, Any]:
    """ToT's BFS: propose, value each new state `evaluations` times, keep the best `width`."""

    def space(values: tuple[Fraction, ...]) -> Game24Space:
        return ToTValueSpace(numbers=values, evaluations=evaluations)

    return await search_method(numbers, "beam", model, space=space, width=width)


def node_records(result: SearchResult) -> list[dict[str, Any]]:
    """Every judged node: id, parent, depth, text, score, status, checks, on the winning path."""
    winning = {n.id for n in result.path} if result.succeeded else set()
    records = []
    for node in result.tree:
        if node.parent is None:
            continue
        verdict = node.verdict
        records.append(
            {
                "id": node.id,
                "parent": node.parent,
                "depth": node.depth,
                "text": node.text,
                "left": [v for v, _ in node.state["left"]] if node.state else None,
                "score": None if verdict is None else verdict.score,
                "h": None if math.isinf(node.h) else round(node.h, 6),
                "status": node.status,
                "expansions": node.expansions,
                "checks": {c.name: c.passed for c in verdict.checks} if verdict else {},
                "winning": node.id in winning,
            }
        )
    return records


def backtrack_depths(result: SearchResult) -> list[int]:
    """How far up the search went each time it left the current branch.

    DFS says so itself (`backtrack` events with a target). For best-first strategies
    (astar, best_first) a backtrack is an expansion of a node that is not a child of
    the node expanded before it; its depth is how many levels above that node the two
    branches meet. Level-by-level strategies (bfs, beam, ToT) never go back up.
    """
    events = result.trace.of_kind("backtrack")
    if result.strategy == "dfs":
        return [int(e.data.get("depth", 1)) for e in events if e.data.get("to")]
    if result.strategy not in ("astar", "best_first"):
        return []
    tree = result.tree
    order = [e.node for e in result.trace.of_kind("expansion") if e.data.get("phase") == "start"]
    depths = []
    for before, after in itertools.pairwise(order):
        if after == before or tree[after].parent == before:
            continue
        ancestors = {n.id for n in tree.path(before)}
        meet = next(n for n in reversed(tree.path(after)) if n.id in ancestors)
        depths.append(tree[before].depth - meet.depth)
    return depths
