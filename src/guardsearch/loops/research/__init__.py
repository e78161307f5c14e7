"""The research loop: plan -> search -> reflect -> iterate -> synthesize, with citations
verified in code (docs/research.md).

`guardsearch.run_research` is its entry point; `ResearchLoop` keeps the providers,
resilience settings and clock for many runs. What a run answers is an `AgentResponse`
or an `ErrorResponse`. Anything else is imported from its module.
"""

from guardsearch.loops.research.answer import ResearchRun
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.orchestrator import ResearchLoop
from guardsearch.loops.research.schemas import AgentResponse, AgentSource, ErrorResponse

__all__ = [
    "AgentResponse",
    "AgentSource",
    "ErrorResponse",
    "ResearchConfig",
    "ResearchLoop",
    "ResearchRun",
]
