"""BlocksWorld for the program strategy: rules in words, generated instances, validator.

A state is a tuple of stacks, each a tuple of block names from the bottom up; the
order of the stacks does not matter. The code the model writes sees a state as a list
of lists (`[['C', 'A', 'B'], ['D']]`) and may change it in place: the sandbox hands
every call its own copy (`ProgramDomain.mutable_state`). Given tuples or strings, the
1.5B changed them in place anyway (`.pop()`, `state[i] = ...`) in most answers and no
`move` passed in 19 answers of each of five runs; `pop` and `append` on a list are the
code it writes. No stack is empty. One move takes the top block of a stack and puts
it on top of another stack or on the table (a new stack). Instances come from a seed
(`instance`): seeds below `TRAINING_SEEDS` give the test states, the others the
evaluation problems. `replay` checks a plan move by move.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError
from guardsearch.guards.code_tests import Case, goal_test_case, successors_case
from guardsearch.search.node import Node
from guardsearch.search.program import FunctionSpec, ProgramDomain, domain_version
from guardsearch.search.space import BaseSpace, Root

TRAINING_SEEDS = 1000
State = tuple[tuple[str, ...], ...]

RULES = (
    "BlocksWorld: blocks stand in stacks on a table. One move takes the top block of a "
    "stack and puts it on top of another stack or on the table, where it starts a new "
    "stack. The order of the stacks does not matter. The problem is solved when the "
    "stacks are exactly the goal's stacks."
)
STATE = (
    "a list of stacks; each stack is a list of one-letter block names from the bottom "
    "up, e.g. [['A', 'B'], ['C']] means B is on A, and C is alone on the table. No "
    "stack is empty. Each call gets its own copy of the state: changing it in place is "
    "fine."
)
IS_GOAL = (
    "Return True when state and goal hold the same stacks, in any order of the stacks "
    "(each stack compared from the bottom up). Otherwise return False."
)
MOVE = (
    "Return the state after one move: take the top block of stack number i "
    "(block = state[i].pop()) and put it on top of stack number j "
    "(state[j].append(block)), or on the table as a new stack (state.append([block])) "
    "when j is None; every other stack stays as it is. Then remove stack i if it is "
    "now empty (del state[i]): no stack is empty. Return the state."
)
SUCCESSORS = (
    "Return a list of all states one move away: for every stack number i and every "
    "other stack number j, move(state, i, j); and, if stack i has more than one block, "
    "also move(state, i, None)."
)


def canonical(state: Any) -> State:
    """The state with its stacks sorted (stacks as tuples); ValueError if malformed."""
    if not isinstance(state, list | tuple):
        raise ValueError("a state must be a list of stacks")
    stacks = []
    for stack in state:
        if isinstance(stack, str):  # one letter a block
            stack = tuple(stack)
        if not isinstance(stack, list | tuple) or not stack:
            raise ValueError(f"{stack!r} is not a non-empty stack")
        if not all(isinstance(b, str) for b in stack):
            raise ValueError(f"{stack!r} holds something that is not a block name")
        stacks.append(tuple(stack))
    return tuple(sorted(stacks))


def move_to(state: State, i: int, j: int | None) -> State:
    """The validator's own `move`: the top block of stack i onto stack j (or the table)."""
    block, left = state[i][-1], state[i][:-1]
    stacks: list[tuple[str, ...]] = []
    for k, stack in enumerate(state):
        if k == i:
            stacks += [left] if left else []
        else:
            stacks.append((*stack, block) if k == j else stack)
    return canonical([*stacks, (block,)] if j is None else stacks)


def moves(state: State) -> list[tuple[str, str, State]]:
    """Every legal move: (block, where to: a block name or 'table', the new state)."""
    out: list[tuple[str, str, State]] = []
    for i, stack in enumerate(state):
        for j, other in enumerate(state):
            if j != i:
                out.append((stack[-1], other[-1], move_to(state, i, j)))
        if len(stack) > 1:
            out.append((stack[-1], "table", move_to(state, i, None)))
    return out


def successors(state: State) -> set[State]:
    return {s for _, _, s in moves(canonical(state))}


def legal(parent: Any, child: Any) -> str | None:
    try:
        key = canonical(child)
    except ValueError as exc:
        return str(exc)
    return None if key in successors(parent) else "no single move of a top block gives it"


def out_of_place(state: Any, goal: State) -> int:
    """A*'s estimate of the moves left: the blocks not yet on what the goal has under
    them (each must move at least once, so it never overestimates)."""
    placed = {stack[: i + 1] for stack in goal for i in range(len(stack))}
    return sum(
        stack[: i + 1] not in placed for stack in canonical(state) for i in range(len(stack))
    )


def instance(seed: int, blocks: int = 4) -> tuple[State, State]:
    """A start and a goal state of `blocks` blocks, random from `seed` (start != goal)."""
    rng = random.Random(seed)
    names = [chr(ord("A") + i) for i in range(blocks)]

    def random_state() -> State:
        order = names[:]
        rng.shuffle(order)
        stacks: list[list[str]] = []
        for name in order:
            if stacks and rng.random() < 0.6:
                rng.choice(stacks).append(name)
            else:
                stacks.append([name])
        return canonical(stacks)

    start = random_state()
    goal = random_state()
    while goal == start:
        goal = random_state()
    return start, goal


def _shown(state: Sequence[Sequence[str]]) -> str:
    return " ".join("[" + " ".join(s) + "]" for s in state)


def as_code(state: Any) -> list[list[str]]:
    """A state as the generated code sees it: a list of stacks, each a list, bottom up."""
    return [list(stack) for stack in canonical(state)]


def successor_case(state: State) -> Case:
    return successors_case(
        as_code(state), successors(state), legal, canonical, show=lambda s: repr(as_code(s))
    )


def move_case(state: State, i: int, j: int | None) -> Case:
    """`move(state, i, j)` returns the state one move makes (stacks in any order)."""
    want = move_to(state, i, j)

    def check(result: Any) -> str | None:
        try:
            got = canonical(result)
        except ValueError as exc:
            return str(exc)
        if got == want:
            return None
        return (
            "that is not the state this move makes"
            if got in successors(state)
            else ("that is not one move away")
        )

    where = "the table" if j is None else f"stack {j}"
    expected = f"the stacks {as_code(want)!r} (the top of stack {i} moved onto {where})"
    return Case("move", (as_code(state), i, j), check, expected)


def goal_case(state: Any, goal: State) -> Case:
    return goal_test_case((as_code(state), as_code(goal)), canonical(state) == canonical(goal))


def move_cases() -> tuple[Case, ...]:
    """`move` tests from training seeds only: a move onto another stack, one that
    empties a stack, and one onto the table."""
    state = instance(0, blocks=4)[0]
    tall = next(k for k, stack in enumerate(state) if len(stack) > 1)
    other = next(k for k in range(len(state)) if k != tall)
    return (
        move_case(state, tall, other),
        move_case(state, tall, None),
        move_case((("A", "B"), ("C",)), 1, 0),  # stack 1 becomes empty
        move_case((("A", "B", "C"),), 0, None),
    )


def training_cases() -> tuple[tuple[Case, ...], tuple[Case, ...]]:
    """(is_goal tests, successors tests) from training seeds only."""
    goal_tests: list[Case] = []
    succ_tests: list[Case] = []
    for seed in range(3):
        start, goal = instance(seed, blocks=3 + seed % 2)
        shuffled = tuple(reversed(goal))  # the same stacks in another order: still a goal
        goal_tests += [goal_case(goal, goal), goal_case(shuffled, goal), goal_case(start, goal)]
        succ_tests.append(successor_case(start))
    one_stack = (("A", "B", "C"),)
    goal_tests.append(goal_case((("C", "B", "A"),), one_stack))  # same blocks, wrong order
    succ_tests.append(successor_case(one_stack))
    succ_tests.append(successor_case((("A",), ("B",), ("C",))))
    return tuple(goal_tests), tuple(succ_tests)


def describe(path: Sequence[Any]) -> list[tuple[Any, str]]:
    out: list[tuple[Any, str]] = []
    plan: list[str] = []
    for parent, child in itertools.pairwise(path):
        key = canonical(child)
        block, where, _ = next(m for m in moves(canonical(parent)) if m[2] == key)
        plan.append(f"move {block} onto {where}")
        out.append(({"stacks": [list(s) for s in key], "plan": list(plan)},
                    f"{plan[-1]} (stacks: {_shown(key)})"))  # fmt: skip
    return out


def replay(start: State, goal: State, plan: Sequence[str]) -> str | None:
    """None when `plan` (lines 'move X onto Y|table') turns `start` into `goal`."""
    state = canonical(start)
    for line in plan:
        parts = line.split()
        if len(parts) != 4 or parts[0] != "move" or parts[2] != "onto":
            return f"{line!r} is not 'move X onto Y'"
        found = [m for m in moves(state) if m[0] == parts[1] and m[1] == parts[3]]
        if not found:
            return f"{line!r} is not a legal move in {_shown(state)}"
        state = found[0][2]
    return None if state == canonical(goal) else f"the plan ends in {_shown(state)}"


def blocks_domain(start: State, goal: State) -> ProgramDomain:
    goal_tests, succ_tests = training_cases()
    functions = (
        FunctionSpec(name="is_goal", signature="def is_goal(state, goal):", doc=IS_GOAL,
                     cases=goal_tests),
        FunctionSpec(name="move", signature="def move(state, i, j):", doc=MOVE,
                     cases=move_cases()),
        FunctionSpec(name="successors", signature="def successors(state):", doc=SUCCESSORS,
                     cases=succ_tests, uses=("move",)),
    )  # fmt: skip
    goal_key = canonical(goal)

    def goal_check(state: Any) -> str | None:
        try:
            return None if canonical(state) == goal_key else "the stacks differ from the goal"
        except ValueError as exc:
            return str(exc)

    def cases_for(fn: str, state: Any) -> tuple[Case, ...]:
        try:
            key = canonical(state)
        except ValueError:
            return ()
        return (successor_case(key),) if fn == "successors" else (goal_case(key, goal_key),)

    version = domain_version(RULES, STATE, functions)
    return ProgramDomain(
        name="blocks",
        rules=RULES,
        state=STATE,
        functions=functions,
        root=as_code(start),
        legal=legal,
        goal=goal_check,
        key=canonical,
        describe=describe,
        cases_for=cases_for,
        version=version,
        max_depth=2 * sum(len(s) for s in start),
        goal_args=(as_code(goal_key),),
        heuristic=lambda state: float(out_of_place(state, goal_key)),
        mutable_state=True,
    )


@dataclass(kw_only=True)
class BlocksSpace(BaseSpace):
    """A BlocksWorld problem; only the `program` strategy serves it (no proposer prompt)."""

    start: State
    goal: State

    def root(self) -> Root:
        objective = f"Restack {_shown(self.start)} into {_shown(self.goal)}, one block at a time."
        state = {"stacks": [list(s) for s in self.start], "plan": []}
        return Root(state=state, context=Context(objective=objective))

    def program_domain(self) -> ProgramDomain:
        return blocks_domain(self.start, self.goal)

    def is_goal(self, node: Node) -> bool:
        return node.state is not None and canonical(node.state["stacks"]) == canonical(self.goal)

    def answer(self, node: Node) -> Any:
        return list(node.state["plan"]) if node.state is not None else None


def parse_state(value: Any, what: str) -> State:
    """A state from a problem's JSON (a list of stacks), or a ConfigError."""
    try:
        state = canonical(value)
    except ValueError as exc:
        raise ConfigError(f"blocks: {what}: {exc}") from exc
    if any(len(block) != 1 for stack in state for block in stack):
        raise ConfigError(f"blocks: {what}: block names are single letters, e.g. 'A'")
    return state
