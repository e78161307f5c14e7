"""Game24Space: the Game of 24 as an incremental search space.

A state is the multiset of numbers left, each with the expression that made it. One
proposer call lists several next steps, `a op b`, each a child state. The scaffold
constrains the chaos: the proposer's output is grammar-constrained, and code does
the arithmetic.

Prevent and diversify (issue 16). The grammar of a node is an enum of the steps its
numbers allow (`arith.steps_over`: numbers that are left, no division by zero), one
step per resulting state, and without every step that leads to a state the search
already holds (the engine passes its closed set: `ProposesNew`). So a re-expansion
can only propose steps not tried at that node, and no proposal repeats a state
judged elsewhere; with nothing new left, the node costs no call. A repeat that still
happens (the same step twice in one answer) is dropped by dedup before any guard.
The grammar carries only the rules of a valid step and what is already known, never
a verdict about the future: which steps lead to 24 stays the guards' question.

Objective guards (cheap, before any model-backed evaluation):
- `available`: a step uses numbers that are left (a number twice only if it is there twice);
- `exact arithmetic`: computed with Fractions; division by zero is rejected; a wrong
  claimed result (free-text mode, `a op b = c (left: ...)`) fails with a JSON Patch
  that corrects it, and the engine applies it instead of discarding the step (a repair);
- `final answer`: with one number left, the expression must use each input number
  exactly once and equal 24;
- `makes 24`: with two numbers left, one step decides: `arith.pair_to_24` checks the six
  results exactly, and a pair that cannot make 24 is a dead end (h = inf) at no call.
With three or more numbers left a soft score gives h (`score.plausibility`: no dead
numbers, numbers that divide 24), optionally blended with an LLM value evaluator
(sure / likely / impossible). The dedup key is the multiset of numbers left, so the
same state reached by two paths is judged once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from guardsearch.apps.game24.arith import (
    Item,
    StepError,
    apply_step,
    calc,
    check_answer,
    pair_results,
    pair_to_24,
    parse_number,
    show,
    sort_items,
    state_of,
    step_line,
    steps_over,
    strip_parens,
)
from guardsearch.apps.game24.score import plausibility
from guardsearch.core.budget import StepBudget
from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import JUDGE, Message, ModelRequest
from guardsearch.guards.constraints import Declared, compile_constraints
from guardsearch.guards.evaluator import resolve_model
from guardsearch.guards.parse import parse_json
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate
from guardsearch.search.node import Node
from guardsearch.search.program import ProgramDomain
from guardsearch.search.space import BaseSpace, Proposal, Root

_NUM = r"-?\d+(?:/\d+)?(?:\.\d+)?"
_STEP = re.compile(
    rf"^\s*(?P<a>{_NUM})\s*(?P<op>[-+*/×÷x])\s*(?P<b>{_NUM})"
    rf"(?:\s*=\s*(?P<c>{_NUM}))?(?:\s*\(\s*left\s*:\s*(?P<left>[^)]*)\))?"
)
_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_OPS = {"×": "*", "x": "*", "÷": "/"}
VALUE_SCORES = {"sure": 1.0, "likely": 0.6, "impossible": 0.1}

# Per-level DFS budgets: a few retries (the grammar leaves out what a level has tried,
# so each retry proposes new steps; with one, a visit ran dry with calls unspent), many
# visits (one visit per state explored).
DEFAULT_BUDGETS = (
    StepBudget(rmax=3, backtrack_budget=3),
    StepBudget(rmax=2, backtrack_budget=9),
    StepBudget(rmax=2, backtrack_budget=24),
)


def _items(state: Any) -> list[Item]:
    return [Item(Fraction(v), e) for v, e in state["left"]]


def step_schema(
    numbers: Sequence[Fraction],
    max_steps: int,
    min_steps: int = 1,
    *,
    steps: Sequence[str] | None = None,
) -> dict[str, Any]:
    """JSON Schema whose strings can only be `a op b` over the numbers still available.

    With `steps`, each string is one of those steps exactly (an enum: what a node has
    not tried yet); the list bounds shrink to fit it. The enum is the `available` and
    `exact arithmetic` guards' rule as a constraint (`guards.constraints`: a step over
    numbers that are left, no division by zero), compiled into the schema, so an output
    decoded under it counts as a failure prevented. Without, a pattern over the numbers
    and the four operators (it does not count how often a number is left)."""
    if steps is not None:
        item: dict[str, Any] = {"type": "string"}
        max_steps, min_steps = min(max_steps, len(steps)), min(min_steps, len(steps))
    else:
        alts = "|".join(sorted({show(n) for n in numbers}, key=lambda s: (-len(s), s)))
        item = {"type": "string", "pattern": f"^({alts}) [-+*/] ({alts})$"}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "items": item,
                "minItems": min(min_steps, max_steps),
                "maxItems": max_steps,
            }
        },
        "required": ["steps"],
    }
    if steps is None:
        return schema
    # Each step at most once: a step named twice in one answer is a repeat the grammar
    # can rule out (llama.cpp: `models.unique_enum`, the enum's order).
    rule = {"properties": {"steps": {"uniqueItems": True, "items": {"enum": list(steps)}}}}
    compiled, _, _ = compile_constraints(schema, [Declared("available", rule)])
    return compiled


def state_key(values: Sequence[str]) -> str:
    """The dedup key of a state: its numbers left (as shown), in any order."""
    return stable_digest(sorted(values))


@dataclass(kw_only=True)
class Game24Space(BaseSpace):
    """Make 24 from `numbers` with + - * /, each number used exactly once."""

    numbers: tuple[Fraction, ...]
    constrained: bool = True
    max_steps: int = 8
    min_steps: int = 4
    max_tokens: int = 96
    value: bool = False
    # The grammar leaves out the steps to states the search holds (issue 16: diversify).
    diversify: bool = True
    value_model: Model | Metered | None = None
    budgets: tuple[StepBudget, ...] = DEFAULT_BUDGETS
    propose_prompt: PromptTemplate = field(
        default_factory=lambda: PromptTemplate.packaged("game24_propose")
    )
    value_prompt: PromptTemplate = field(
        default_factory=lambda: PromptTemplate.packaged("game24_value")
    )
    # Without a grammar the model writes Tree of Thoughts' lines, "a op b = c (left: ...)",
    # whose claimed result and numbers left the objective checks verify (and patch).
    text_prompt: PromptTemplate = field(
        default_factory=lambda: PromptTemplate.packaged("game24_propose_text")
    )

    def __post_init__(self) -> None:
        self.numbers = tuple(Fraction(n) for n in self.numbers)
        self.depth_limit = max(1, len(self.numbers) - 1)
        shown = " ".join(show(n) for n in self.numbers)
        self.objective = (
            f"Use the numbers {shown} and + - * / to make 24, each number exactly once. "
            "Each step combines two of the numbers left into one."
        )

    # -- the space protocol --------------------------------------------------------------

    def root(self) -> Root:
        items = [Item(n, show(n)) for n in self.numbers]
        return Root(state=state_of(items), context=Context(objective=self.objective, window=2))

    def level(self, depth: int) -> str:
        return f"step{depth + 1}"

    def step_budget(self, depth: int) -> StepBudget:
        return self.budgets[min(depth, len(self.budgets) - 1)]

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        return self._request(node, context, seed, temperature, steps=None)

    def request_new(
        self,
        node: Node,
        context: Context,
        *,
        seed: int,
        temperature: float,
        known: Container[str],
    ) -> ModelRequest | None:
        """The request whose grammar lists only the steps to states not in `known`."""
        if not (self.diversify and self.constrained):
            return self.request(node, context, seed=seed, temperature=temperature)
        steps = self.new_steps(node, known)
        if not steps:
            return None
        return self._request(node, context, seed, temperature, steps=steps)

    def new_steps(self, node: Node, known: Container[str]) -> list[str]:
        """The steps at `node` that lead to a state not in `known`, one per state."""
        items = _items(node.state)
        seen: set[str] = set()
        out = []
        for a, op, b in steps_over([it.value for it in items]):
            key = state_key([show(it.value) for it in apply_step(items, a, op, b)])
            if key not in known and key not in seen:
                seen.add(key)
                out.append(f"{show(a)} {op} {show(b)}")
        return out

    def _request(
        self,
        node: Node,
        context: Context,
        seed: int,
        temperature: float,
        *,
        steps: Sequence[str] | None,
    ) -> ModelRequest:
        items = _items(node.state)
        numbers = " ".join(show(it.value) for it in sort_items(items))
        schema = (
            step_schema([it.value for it in items], self.max_steps, self.min_steps, steps=steps)
            if self.constrained
            else None
        )
        if self.constrained:
            prompt, max_tokens = self.propose_prompt, self.max_tokens
        else:  # a line per step with its claimed result: about twice the tokens
            prompt, max_tokens = self.text_prompt, 2 * self.max_tokens
        return ModelRequest(
            messages=self._messages(prompt, context, numbers),
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            json_schema=schema,
        )

    def _messages(
        self, template: PromptTemplate, context: Context, numbers: str
    ) -> tuple[Message, ...]:
        """The objective stays pinned first; what varies (failures, feedback) goes last.

        The system message (objective + rules + examples) is then the same for every
        node of a puzzle, so llama.cpp reuses its KV cache and only the short user
        message is evaluated per call.
        """
        pinned = Context(objective=context.objective)
        system, user = template.render(pinned, numbers=numbers)
        extra = context.render().partition("\n\n")[2]
        if extra:
            user = Message("user", f"{extra}\n\n{user.content}")
        return (system, user)

    def parse(self, node: Node, text: str) -> Sequence[Proposal]:
        lines = _candidate_lines(text)
        if not lines:
            return [
                Proposal(
                    state=None,
                    text=text.strip()[:200],
                    parse_error='not parseable: expected steps like "4 + 6" '
                    '(or {"steps": ["4 + 6", ...]})',
                )
            ]
        return [self._proposal(node, line) for line in lines]

    def _proposal(self, node: Node, line: str) -> Proposal:
        match = _STEP.match(line)
        if match is None:
            return Proposal(
                state=None,
                text=line[:200],
                parse_error=f'not parseable as a step "a op b": {line[:80]!r}',
            )
        op = _OPS.get(match["op"], match["op"])
        value: dict[str, Any] = {"a": match["a"], "op": op, "b": match["b"]}
        if match["c"] is not None:
            value["c"] = match["c"]
        if match["left"] is not None:
            value["left"] = match["left"].split()
        state, text = None, f"{match['a']} {op} {match['b']}"
        try:
            items = apply_step(
                _items(node.state), parse_number(match["a"]), op, parse_number(match["b"])
            )
            state, text = state_of(items), step_line(match["a"], op, match["b"], items)
        except StepError:
            pass  # the objective guards say what is wrong
        return Proposal(state=state, text=text, value=value)

    def key(self, node: Node, proposal: Proposal) -> str:
        if proposal.state is None:
            return stable_digest(["invalid", node.key, proposal.text])
        # Path-independent: the numbers left decide the future, not how we got there.
        return state_key([v for v, _ in proposal.state["left"]])

    async def prefilter(
        self, node: Node, proposal: Proposal, context: Context
    ) -> GuardResult | None:
        return self.objective_checks(node, proposal)

    def objective_checks(self, node: Node, proposal: Proposal) -> GuardResult:
        """The hard checks of one step: available numbers, exact arithmetic, the left list."""
        v = proposal.value
        items = _items(node.state)
        checks: list[Check] = []
        try:
            a, b = parse_number(v["a"]), parse_number(v["b"])
            apply_step(items, a, v["op"], b)
            checks.append(Check(name="available", passed=True, weight=3, hard=True))
            result = calc(a, v["op"], b)
        except StepError as exc:
            name = "exact arithmetic" if "division" in str(exc) else "available"
            checks.append(Check(name=name, passed=False, weight=3, hard=True, detail=str(exc)))
            return _verdict(checks, f"{proposal.text}: {exc}")
        patch: list[dict[str, Any]] = []
        problems = []
        if "c" in v:
            # The claimed result is model output: a malformed one (e.g. "1/0") is
            # feedback (a failed check, repaired by the patch), never an exception.
            try:
                claimed_ok = parse_number(v["c"]) == result
            except StepError:
                claimed_ok = False
            if not claimed_ok:
                problems.append(f"{v['a']} {v['op']} {v['b']} is {show(result)}, not {v['c']}")
                patch.append({"op": "replace", "path": "/c", "value": show(result)})
        checks.append(
            Check(
                name="exact arithmetic",
                passed=not problems,
                weight=3,
                hard=True,
                detail="; ".join(problems),
            )
        )
        if "left" in v:
            left = [it.value for it in apply_step(items, a, v["op"], b)]
            try:
                claimed = [parse_number(x) for x in v["left"]]
            except StepError:
                claimed = []
            if Counter(claimed) != Counter(left):
                want = sorted(left)
                problems.append(f"numbers left are {' '.join(show(x) for x in want)}")
                patch.append({"op": "replace", "path": "/left", "value": [show(x) for x in want]})
                checks.append(
                    Check(name="left", passed=False, weight=3, hard=False, detail=problems[-1])
                )
        if problems:
            return GuardResult(
                passed=False,
                feedback="; ".join(problems),
                score=0.0,
                checks=tuple(checks),
                guard="game24-step",
                patch=tuple(patch),
            )
        return _verdict(checks, "")

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        items = _items(proposal.state)
        if len(items) == 1:
            expr = strip_parens(items[0].expr)
            why = check_answer(self.numbers, expr)
            if why is None:
                return GuardResult(
                    passed=True,
                    score=1.0,
                    guard="game24-final",
                    checks=(Check(name="final answer", passed=True, weight=3, hard=True),),
                )
            return GuardResult(
                passed=False,
                feedback=f"{proposal.text.split(' (')[0]}: reached {show(items[0].value)}, not 24",
                score=0.0,
                guard="game24-final",
                checks=(Check(name="final answer", passed=False, weight=3, detail=why),),
            )
        if len(items) == 2:
            return self._pair_verdict(proposal, items)
        score, signals = plausibility([it.value for it in items])
        checks = list(signals)
        if self.value:
            word = await self._value(node, items, context)
            checks.append(Check(name=f"value: {word}", passed=word != "impossible", weight=1.0))
            score = (score + VALUE_SCORES.get(word, 0.5)) / 2
        return GuardResult(passed=True, score=score, checks=tuple(checks), guard="game24-step")

    def _pair_verdict(self, proposal: Proposal, items: Sequence[Item]) -> GuardResult:
        """Two numbers left: one step decides, so check it exactly instead of guessing."""
        a, b = (it.value for it in sort_items(items))
        if pair_to_24(a, b) is not None:
            check = Check(name="makes 24", passed=True, weight=3, hard=True)
            return GuardResult(passed=True, score=1.0, checks=(check,), guard="game24-pair")
        made = ", ".join(show(x) for x in pair_results(a, b))
        why = f"{show(a)} and {show(b)} cannot make 24 (one step makes {made})"
        check = Check(name="makes 24", passed=False, weight=3, hard=True, detail=why)
        return GuardResult(
            passed=False,
            score=0.0,
            checks=(check,),
            guard="game24-pair",
            feedback=f"{proposal.text.split(' (')[0]}: {why}",
        )

    async def _value(
        self,
        node: Node,
        items: Sequence[Item],
        context: Context,
        *,
        seed: int | None = 0,
        temperature: float = 0.0,
    ) -> str:
        """Ask the value model how likely the numbers left reach 24: sure/likely/impossible."""
        metered = resolve_model(self.value_model, "the Game of 24 value evaluator")
        numbers = " ".join(show(it.value) for it in sort_items(items))
        request = ModelRequest(
            messages=self._messages(self.value_prompt, context, numbers),
            max_tokens=12,
            temperature=temperature,
            seed=seed,
            json_schema={
                "type": "object",
                "properties": {"value": {"enum": list(VALUE_SCORES)}},
                "required": ["value"],
            },
            call=JUDGE,
        )
        completion = await metered.complete(request, step="value", node=node.id)
        try:
            word = parse_json(completion.text).get("value", "likely")
        except (ValueError, AttributeError):
            word = "likely"
        return str(word) if word in VALUE_SCORES else "likely"

    def patched(self, node: Node, proposal: Proposal, value: Any) -> Proposal:
        # The state was computed by code; the repair fixes what the model claimed.
        text = proposal.text
        return Proposal(state=proposal.state, text=text, value=value, key=proposal.key)

    def failure_summary(self, failed_step: str, verdict: GuardResult, path: Sequence[Node]) -> str:
        # The failure summary's content (failed step, feedback, path previews) in one line:
        # a 0.5B model reads a short prompt better, and the prompt stays cacheable.
        tried = " -> ".join(n.preview(200) for n in path)
        return f"{failed_step} failed after {tried}: {verdict.feedback}. Try other steps."

    def child_context(self, node: Node, context: Context, proposal: Proposal) -> Context:
        # The numbers left are the whole state; a child starts from the clean root
        # context (no sibling's feedback or failures), which also keeps the prompt
        # prefix identical across nodes so the KV cache is reused.
        return context.without_failures().for_next_step()

    def is_goal(self, node: Node) -> bool:
        return node.viable and node.state is not None and len(node.state["left"]) == 1

    def is_terminal(self, node: Node) -> bool:
        return node.state is None or len(node.state["left"]) <= 1

    def program_domain(self) -> ProgramDomain:
        """The puzzle for the `program` strategy: the model writes the search's code."""
        from guardsearch.apps.game24.program import game24_domain  # imports this module

        return game24_domain(self.numbers)

    def answer(self, node: Node) -> Any:
        if node.state is None or len(node.state["left"]) != 1:
            return None
        return strip_parens(node.state["left"][0][1])


def _verdict(checks: list[Check], feedback: str) -> GuardResult:
    failed = [c for c in checks if not c.passed]
    return GuardResult(
        passed=not failed,
        feedback=feedback,
        score=0.0 if failed else 1.0,
        checks=tuple(checks),
        guard="game24-step",
    )


def _candidate_lines(text: str) -> list[str]:
    """Step strings from a JSON answer ({"steps": [...]} or a list) or from plain lines."""
    try:
        value = parse_json(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        value = value.get("steps")
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    lines = []
    for raw in text.splitlines():
        line = _MARKER.sub("", raw).strip()
        if _STEP.match(line):
            lines.append(line)
    return lines
