"""ExperimentConfig: problem × method × trial × budget, from YAML or Python.

```yaml
name: game24-tot
suite: game24                 # or package.module:attribute
problems: {range: "900:1000", every: 5}
methods:
  - io
  - cot
  - {label: cot-sc, method: cot-sc, options: {k: 5}}
  - {method: astar, problems: {range: "900:1000", every: 2}}   # a subset for this one
model: embedded
budgets: [10, 20, 40, 60]     # call caps; the pass-rate-vs-budget curve
derive_budgets: true          # deterministic methods run once, at the largest budget
trials: 1
out: runs/game24              # trials.jsonl + traces.jsonl.gz (resume from here)
report_dir: reports           # game24-tot.md/.json/_budget.png/_calls.png (default: out)
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from guardsearch.core.errors import ConfigError
from guardsearch.experiments.suite import MethodSpec


class MethodEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str | None = None
    method: str
    options: dict[str, Any] = Field(default_factory=dict)
    # This method only: another problem selection (e.g. a subset for an expensive method).
    problems: Any = None

    def spec(self) -> MethodSpec:
        return MethodSpec(label=self.label or self.method, method=self.method, options=self.options)


# A call cap beyond any experiment (it also keeps plots and means in float range).
MAX_BUDGET = 1_000_000


class ExperimentConfig(BaseModel):
    """Everything an experiment runs; `out` is where its results, scorecard and plots go."""

    model_config = ConfigDict(extra="forbid")

    name: str = "experiment"
    suite: str
    problems: Any = None
    methods: list[MethodEntry]
    model: str = "embedded"
    budgets: list[int] = Field(default_factory=lambda: [40])
    derive_budgets: bool = True
    trials: int = Field(default=1, ge=1, le=10_000)
    out: str = "runs/experiment"
    # Where the scorecard and plots go (default: `out`), as NAME.md, NAME.json, NAME_*.png.
    report_dir: str | None = None
    reference: str | None = None
    # Extra method pairs [a, b] whose paired difference the scorecard reports.
    compare: list[tuple[str, str]] = Field(default_factory=list)

    @field_validator("methods", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise ValueError("methods must be a non-empty list")
        return [{"method": v} if isinstance(v, str) else v for v in value]

    @field_validator("budgets")
    @classmethod
    def _budgets(cls, value: list[int]) -> list[int]:
        if any(not 1 <= b <= MAX_BUDGET for b in value):
            raise ValueError(f"budgets are call caps from 1 to {MAX_BUDGET:,}")
        return sorted(set(value))

    def method_specs(self) -> list[MethodSpec]:
        specs = [m.spec() for m in self.methods]
        labels = [s.label for s in specs]
        if len(set(labels)) != len(labels):
            raise ConfigError(f"method labels must be unique: {labels}")
        return specs

    @property
    def out_dir(self) -> Path:
        return Path(self.out)

    @classmethod
    def from_yaml(cls, path: str | Path) -> ExperimentConfig:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read experiment config {path}: {exc}") from exc
        return cls.parse(data, str(path))

    @classmethod
    def parse(cls, data: Any, source: str = "<config>") -> ExperimentConfig:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{source}: {exc}") from exc
