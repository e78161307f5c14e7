"""From rejection reasons to refinements (the review loop's mapping, for encyclopedia items).

Keyword level, one refinement per rejection reason, most frequent reason first:

| reason | negative keywords | positive |
|---|---|---|
| person, wrong_type | head nouns of the rejected descriptions ("painter") | item type |
| category_not_instance | the kind words that made them kinds ("technique") | item type |
| qualifier_unsupported, judge_rejected | (none) | qualifier words |
| no_description | (none) | item type |

Source level: keep only articles whose description names the item type, search the
works of creators whose own articles support the qualifier, and drop works of the
creators whose works were rejected for the qualifier. Replan: the model writes new
keywords from the reports. Negative keywords never include a word of the request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from guardsearch.apps.find.act import qualifier_terms, rejected_creators
from guardsearch.apps.find.rules import head_noun, kind_word
from guardsearch.apps.find.spec import FindSpec, forms
from guardsearch.core.source import Source
from guardsearch.corpus.query import terms
from guardsearch.loops.review.quality import Level, QualityReport, Refinement, Verdict

MAX_NEGATIVE = 3
_TYPE_REASONS = ("person", "wrong_type")
_QUALIFIER_REASONS = ("qualifier_unsupported", "judge_rejected")


def _protected(spec: FindSpec, request: str) -> set[str]:
    words = set(terms(request)) | set(forms(spec.item_type)) | set(qualifier_terms(spec))
    return words | {w for k in spec.keywords for w in terms(k)}


def keyword_refinement(
    reason: str,
    rejected: Sequence[Source],
    spec: FindSpec,
    request: str,
) -> Refinement | None:
    protected = _protected(spec, request)
    negative: list[str] = []
    positive: list[str] = []
    if reason in _TYPE_REASONS or reason == "category_not_instance":
        pick = head_noun if reason in _TYPE_REASONS else kind_word
        counts = Counter(pick(c.description) for c in rejected)
        negative = [
            w
            for w, _ in counts.most_common()
            if w and w not in protected and w not in spec.negative
        ][:MAX_NEGATIVE]
        positive = [spec.item_type]
    elif reason in _QUALIFIER_REASONS:
        positive = qualifier_terms(spec)
    elif reason == "no_description":
        positive = [spec.item_type]
    positive = [p for p in positive if p not in spec.positive and p not in spec.keywords]
    if not negative and not positive:
        return None
    return Refinement(
        level="keywords",
        reason=f"High rejection rate: {reason} ({len(rejected)} items)",
        target=reason,
        add_negative_keywords=negative,
        add_positive_keywords=positive,
    )


def source_refinement(
    report: QualityReport, rejected: dict[str, list[Source]], spec: FindSpec
) -> Refinement | None:
    filters: dict[str, list[str]] = {}
    if not spec.require_description:
        filters["require_description"] = [spec.item_type]
    if not spec.via_creators and qualifier_terms(spec):
        filters["via_creators"] = [spec.qualifier]
    qualifier_rejects = [c for r in _QUALIFIER_REASONS for c in rejected.get(r, [])]
    excluded = [
        c
        for c in rejected_creators(qualifier_rejects, {c.key for c in qualifier_rejects})
        if c not in spec.exclude_creators
    ]
    if excluded:
        filters["exclude_creators"] = excluded
    if not filters:
        return None
    reasons = report.dominant_reasons
    return Refinement(
        level="sources",
        reason="Keyword filters did not raise quality enough: filter by source",
        target=reasons[0] if reasons else "",
        source_filters=filters,
    )


def suggest(
    level: Level,
    report: QualityReport,
    verdicts: Sequence[Verdict],
    candidates: Sequence[Source],
    spec: FindSpec,
    request: str,
) -> list[Refinement]:
    """Refinements at `level`, most promising first."""
    by_key = {c.key: c for c in candidates}
    rejected: dict[str, list[Source]] = {}
    for verdict in verdicts:
        if not verdict.accepted and verdict.key in by_key:
            rejected.setdefault(verdict.reason, []).append(by_key[verdict.key])
    if level == "keywords":
        found = [
            keyword_refinement(reason, rejected.get(reason, []), spec, request)
            for reason in report.dominant_reasons
        ]
        return [r for r in found if r is not None]
    if level == "sources":
        refinement = source_refinement(report, rejected, spec)
        return [refinement] if refinement else []
    reasons = report.dominant_reasons
    return [
        Refinement(
            level="replan",
            reason="Filters did not raise quality: ask the planner for new keywords",
            target=reasons[0] if reasons else "",
        )
    ]


def apply(spec: FindSpec, refinement: Refinement) -> FindSpec:
    """The spec with a keyword or source refinement applied (k grows with filters)."""
    filters = refinement.source_filters
    return spec.evolve(
        negative=tuple(dict.fromkeys([*spec.negative, *refinement.add_negative_keywords])),
        positive=tuple(dict.fromkeys([*spec.positive, *refinement.add_positive_keywords])),
        require_description=tuple(
            dict.fromkeys([*spec.require_description, *filters.get("require_description", [])])
        ),
        via_creators=spec.via_creators or bool(filters.get("via_creators")),
        exclude_creators=tuple(
            dict.fromkeys([*spec.exclude_creators, *filters.get("exclude_creators", [])])
        ),
        k=spec.k + 5 * (bool(refinement.add_negative_keywords) + bool(filters)),
    )
