"""The research loop (seed 001): plan -> search -> reflect -> iterate -> synthesize,
with citations verified in code."""

from guardsearch.loops.research.answer import ResearchRun
from guardsearch.loops.research.citations import (
    LexicalSupport,
    ModelSupport,
    Verification,
    lexical_support,
    verify_citations,
)
from guardsearch.loops.research.config import TIERS, ResearchConfig, Tier
from guardsearch.loops.research.orchestrator import ResearchLoop
from guardsearch.loops.research.schemas import (
    AgentResponse,
    AgentSource,
    ErrorResponse,
    PlanResponse,
    ReflectionResponse,
    SynthesisResponse,
)
from guardsearch.loops.research.state import ResearchState

__all__ = [
    "TIERS",
    "AgentResponse",
    "AgentSource",
    "ErrorResponse",
    "LexicalSupport",
    "ModelSupport",
    "PlanResponse",
    "ReflectionResponse",
    "ResearchConfig",
    "ResearchLoop",
    "ResearchRun",
    "ResearchState",
    "SynthesisResponse",
    "Tier",
    "Verification",
    "lexical_support",
    "verify_citations",
]
