"""An app for the browser tests whose guard asks a person (importable by the server,
which resumes the run when the page answers: `viewer_apps:asking_app`)."""

from __future__ import annotations

from typing import Any

from guardsearch import Artifact, Context, GuardResult, Step
from guardsearch.registry import AppSetup
from guardsearch.search import StepSpace

QUESTION = "Deploy release 2.1 to production now?"


class DeployGuard:
    """Asks before a production deploy; approves once a person said yes."""

    name = "hitl"

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        answers = [a for q, a in context.inputs if q == QUESTION]
        if not answers:
            return GuardResult(passed=False, fatal=True, ask=QUESTION, guard=self.name)
        if answers[-1].lower().startswith("y"):
            return GuardResult.ok(self.name)
        return GuardResult.fail("the person said no", self.name, fatal=True)


def asking_app(problem: dict[str, Any], strategy: str) -> AppSetup:
    steps = [
        Step(name="analysis", prompt="Analyse release 2.1."),
        Step(name="deploy", prompt="Deploy release 2.1.", guard=DeployGuard()),
        Step(name="report", prompt="Report on release 2.1."),
    ]
    return AppSetup(space=StepSpace(objective="Ship release 2.1", steps=steps))
