"""Quality thresholds per domain (pricing 0.3, docs 0.5, art 0.4, ...), overridable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from guardsearch.core.errors import ConfigError

DEFAULT_THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {
        "general": 0.3,
        "pricing": 0.3,
        "docs": 0.5,
        "art": 0.4,
        "people": 0.5,
        "places": 0.5,
        "science": 0.4,
    }
)


@dataclass(frozen=True)
class DomainThresholds:
    """The minimum quality score per domain; unknown domains get `default`."""

    values: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    default: float = 0.3

    def __post_init__(self) -> None:
        for name, value in {**self.values, "default": self.default}.items():
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"threshold for {name!r} must be in [0, 1], got {value}")

    def for_domain(self, domain: str) -> float:
        return self.values.get(domain, self.default)

    def with_override(self, domain: str, value: float) -> DomainThresholds:
        return DomainThresholds({**self.values, domain: value}, self.default)
