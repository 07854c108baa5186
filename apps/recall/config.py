"""A recall configuration: the knobs of hybrid recall a namespace (or an evaluation's variant)
sets. Pure: no Django. Stored as JSON holding only the knobs that differ from the defaults,
so a namespace that never changed anything follows the defaults as they improve.

    weights        the fusion weights (ranking.Weights: keyword, vector, context, boosts,
                   recency, importance)
    vector_candidates, keyword_candidates
                   how many nearest vectors and best keyword matches are scored
    k              results when a request does not say
    mmr            diversity (maximal marginal relevance, 0..1), None = off
    half_life_days recency half-life, None = the namespace's setting
    neighbour_context
                   whether a turn's neighbours (their tokens and their embedding) count
    min_relevance  abstention: results with a calibrated relevance below it are left out,
                   None = off
    rerank, rerank_candidates
                   the operator's cross-encoder (MEMORYHUB_RERANK_URL) reorders the best
                   candidates; off by default, and without a configured endpoint
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from apps.recall.ranking import Weights

MAX_K = 100
CANDIDATE_LIMITS = {
    "vector_candidates": (1, 200),
    "keyword_candidates": (1, 500),
    "rerank_candidates": (1, 100),
}
WEIGHT_RANGE = (0.0, 10.0)


class ConfigError(ValueError):
    """A configuration that cannot be used; `errors` maps each field to what is wrong."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{name}: {', '.join(why)}" for name, why in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class RecallConfig:
    weights: Weights = field(default_factory=Weights)
    vector_candidates: int = 40
    keyword_candidates: int = 100
    k: int = 10
    mmr: float | None = None
    half_life_days: float | None = None
    neighbour_context: bool = True
    min_relevance: float | None = None
    rerank: bool = False
    rerank_candidates: int = 20

    def as_dict(self) -> dict[str, Any]:
        """Only what differs from the defaults (the stored form)."""
        default = RecallConfig()
        out: dict[str, Any] = {}
        changed_weights = {
            name: value
            for name, value in asdict(self.weights).items()
            if value != getattr(default.weights, name)
        }
        if changed_weights:
            out["weights"] = changed_weights
        for item in fields(self):
            if item.name != "weights" and getattr(self, item.name) != getattr(default, item.name):
                out[item.name] = getattr(self, item.name)
        return out

    def full(self) -> dict[str, Any]:
        """Every knob with its value (for pages and run records)."""
        data = asdict(self)
        data["weights"] = asdict(self.weights)
        return data

    def merged(self, changes: dict[str, Any]) -> RecallConfig:
        """This configuration with `changes` (in the stored form) applied on top."""
        base = self.as_dict()
        weights = {**base.get("weights", {}), **(changes.get("weights") or {})}
        return parse(
            {**base, **{k: v for k, v in changes.items() if k != "weights"}, "weights": weights}
        )


_WEIGHT_NAMES = {item.name for item in fields(Weights)}
_TOP_NAMES = {item.name for item in fields(RecallConfig)}


def _number(value: Any, low: float, high: float, errors: list[str]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        errors.append("a number")
        return None
    if not low <= float(value) <= high:
        errors.append(f"between {low:g} and {high:g}")
        return None
    return float(value)


def parse(data: dict[str, Any] | None) -> RecallConfig:
    """A configuration from its stored form; ConfigError naming every bad field."""
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError({"config": ["an object"]})
    errors: dict[str, list[str]] = {}
    for name in sorted(set(data) - _TOP_NAMES):
        errors[name] = ["not a setting"]
    raw_weights = data.get("weights") or {}
    weights: dict[str, float] = {}
    if not isinstance(raw_weights, dict):
        errors["weights"] = ["an object"]
        raw_weights = {}
    for name, value in raw_weights.items():
        problems: list[str] = []
        if name not in _WEIGHT_NAMES:
            problems.append("not a weight")
        else:
            number = _number(value, *WEIGHT_RANGE, problems)
            if number is not None:
                weights[name] = number
        if problems:
            errors[f"weights.{name}"] = problems
    values: dict[str, Any] = {}
    for name, (low, high) in {**CANDIDATE_LIMITS, "k": (1, MAX_K)}.items():
        if name in data:
            problems = []
            if isinstance(data[name], bool) or not isinstance(data[name], int):
                problems.append("a whole number")
            elif not low <= data[name] <= high:
                problems.append(f"between {low} and {high}")
            else:
                values[name] = data[name]
            if problems:
                errors[name] = problems
    ranges: dict[str, tuple[float, float]] = {
        "mmr": (0.0, 1.0),
        "half_life_days": (0.0, 36500.0),
        "min_relevance": (0.0, 1.0),
    }
    for name, (bottom, top) in ranges.items():
        if data.get(name) is not None:
            problems = []
            number = _number(data[name], bottom, top, problems)
            if problems:
                errors[name] = problems
            else:
                values[name] = number
    for name in ("neighbour_context", "rerank"):
        if name in data:
            if isinstance(data[name], bool):
                values[name] = data[name]
            else:
                errors[name] = ["true or false"]
    if errors:
        raise ConfigError(errors)
    return replace(RecallConfig(**values), weights=replace(Weights(), **weights))


def config_of(stored: dict[str, Any] | None) -> RecallConfig:
    """A namespace's stored configuration. It was validated when saved; should it still not
    parse (a setting removed since), the defaults serve rather than failing every recall."""
    try:
        return parse(stored)
    except ConfigError:
        return RecallConfig()
