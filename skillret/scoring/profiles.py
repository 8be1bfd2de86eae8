"""Profiles: which metrics, at which cutoffs, averaged over which queries, rounded how.

A profile is what a number in a paper means. Built-in profiles reproduce the evaluators in use on
SkillRet; user-defined ones come from ``params.yaml`` (``eval.define``) for studies with other
cutoffs. ``skillret-eval profiles`` prints this catalogue.

Query sets (which queries a mean is taken over; the code calls them ``RUN_JUDGED`` and
``ALL_JUDGED``, users write the names below):

``official``
    Every query that appears in the run (an empty ranking included, scoring 0) and has at least
    one judgment of any grade; run queries without judgments are ignored. This is what
    pytrec_eval returns and what SkillRet's ``trec_eval`` averages. The mean is the official
    evaluator's arithmetic, bit for bit: per-query values added one by one in the order the
    queries first appear in the run, divided by their number.
``all-judged``
    Every query with at least one judgment; a query absent from the run, or with an empty ranking,
    scores 0 (trec_eval ``-c``). The mean is the correctly rounded sum (``math.fsum``) over the
    count, so it does not depend on the order of any input.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from skillret.errors import ConfigError
from skillret.measures import registry
from skillret.scoring.names import DEFAULT_RELEVANCE_LEVEL, Metric, parse_metric

#: The query set of the official evaluator: the run's queries that have judgments. Its
#: user-facing name is "official" (kept for compatibility; it is also a profile's name).
RUN_JUDGED = "official"
#: Every judged query; one absent from the run scores 0.
ALL_JUDGED = "all-judged"

QUERY_SETS = {
    RUN_JUDGED: "queries in the run with >= 1 judgment (empty rankings score 0); "
                "run queries without judgments ignored",
    ALL_JUDGED: "every query with >= 1 judgment; absent or empty rankings score 0",
}

#: The most decimals a profile may round to (a double holds 17 significant digits).
MAX_ROUNDING = 17


@dataclass(frozen=True)
class Profile:
    """Metrics (in output order), the query set, the relevance level and the rounding."""

    name: str
    metrics: tuple[str, ...]
    query_set: str = RUN_JUDGED
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL
    rounding: int | None = 5
    description: str = ""
    builtin: bool = field(default=False, compare=False)

    def __post_init__(self):
        if self.query_set not in QUERY_SETS:
            raise ConfigError(f"profile {self.name!r}: query_set must be one of "
                              f"{', '.join(QUERY_SETS)}, not {self.query_set!r}")
        if not self.metrics:
            raise ConfigError(f"profile {self.name!r} has no metrics")
        if self.rounding is not None and (not _is_int(self.rounding)
                                          or not 0 <= self.rounding <= MAX_ROUNDING):
            raise ConfigError(f"profile {self.name!r}: rounding must be an integer from 0 to "
                              f"{MAX_ROUNDING}, or null")
        if not _is_int(self.relevance_level) or self.relevance_level < 1:
            raise ConfigError(f"profile {self.name!r}: relevance_level must be an integer >= 1")
        names = [m.short_name() for m in self.parsed()]
        if len(set(names)) != len(names):
            raise ConfigError(f"profile {self.name!r} lists a metric twice")

    def parsed(self) -> list[Metric]:
        """The metrics as (measure, k, rel), the profile's level applied."""
        out = []
        for name in self.metrics:
            metric = parse_metric(name, rel=self.relevance_level)
            if metric.rel != self.relevance_level:
                raise ConfigError(f"profile {self.name!r}: metric {name!r} sets its own relevance "
                                  f"level; set relevance_level on the profile instead")
            out.append(metric)
        return out

    @property
    def depth(self) -> int:
        return max(m.k for m in self.parsed())

    @property
    def run_queries_only(self) -> bool:
        """True when the mean is over the run's judged queries only (the official evaluator's)."""
        return self.query_set == RUN_JUDGED

    def with_relevance_level(self, level: int) -> "Profile":
        return replace(self, relevance_level=int(level))

    def describe(self) -> dict[str, Any]:
        return {
            "metrics": list(self.metrics),
            "query_set": self.query_set,
            "relevance_level": self.relevance_level,
            "rounding": self.rounding,
            "description": self.description,
        }


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _grid(measures: Iterable[str], cutoffs: Iterable[int]) -> tuple[str, ...]:
    cutoffs = tuple(cutoffs)
    return tuple(f"{m}@{k}" for m in measures for k in cutoffs)


_OFFICIAL_FIVE = registry.official_names()  # NDCG, MAP, Recall, Precision, Completeness

BUILTIN: dict[str, Profile] = {
    "official": Profile(
        "official",
        _grid(_OFFICIAL_FIVE, (5, 10, 15)),
        query_set=RUN_JUDGED,
        rounding=5,
        description="SkillRet's official evaluator (trec_eval via pytrec_eval at 5/10/15)",
        builtin=True,
    ),
    "mia5150": Profile(
        "mia5150",
        _grid(_OFFICIAL_FIVE, (5, 10, 15)) + ("MRR@5", "MRR@10"),
        query_set=ALL_JUDGED,
        rounding=5,
        description="the MIA5150 fusion evaluator: the official fifteen plus MRR@5/10, "
                    "over every judged query",
        builtin=True,
    ),
    "recommended": Profile(
        "recommended",
        ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5"),
        query_set=ALL_JUDGED,
        rounding=5,
        description="a short headline set: what an agent's top 5 / top 10 gives it, over every "
                    "judged query",
        builtin=True,
    ),
}


def profile_from_mapping(name: str, spec: Mapping[str, Any]) -> Profile:
    """A user profile from ``params.yaml``: ``{metrics: [NDCG@20, ...], query_set, ...}``."""
    if not isinstance(spec, Mapping):
        raise ConfigError(f"profile {name!r} must be a mapping with 'metrics'")
    unknown = set(spec) - {"metrics", "query_set", "relevance_level", "rounding", "description"}
    if unknown:
        raise ConfigError(f"profile {name!r}: unknown key(s) {', '.join(sorted(unknown))}")
    metrics = spec.get("metrics")
    if isinstance(metrics, Mapping):  # {NDCG: [5, 10], MRR: [10]}
        metrics = [f"{m}@{k}" for m, ks in metrics.items() for k in (ks if isinstance(ks, list)
                                                                      else [ks])]
    if not isinstance(metrics, list) or not metrics:
        raise ConfigError(f"profile {name!r}: 'metrics' must be a non-empty list such as "
                          f"[NDCG@10, Recall@5]")
    level = spec.get("relevance_level", DEFAULT_RELEVANCE_LEVEL)
    if not _is_int(level) or level < 1:
        raise ConfigError(f"profile {name!r}: relevance_level must be an integer >= 1")
    # Names are written without the level; a level in a name must match the profile's.
    names = tuple(parse_metric(m, rel=level).short_name() for m in metrics)
    return Profile(
        name,
        names,
        query_set=spec.get("query_set", ALL_JUDGED),
        relevance_level=level,
        rounding=spec.get("rounding", 5),
        description=str(spec.get("description", "")),
    )


def user_profiles(define: Mapping[str, Any] | None, *, source: str | None = None,
                  relevance_level: int | None = None) -> dict[str, Profile]:
    """The profiles of ``eval.define``, each checked (names, cutoffs, limits) before any work.

    ``relevance_level`` applies to those that do not set their own. ``source`` (the params
    file) prefixes every error: ``params.yaml: eval.define: profile 'deep': ...``.
    """
    out: dict[str, Profile] = {}
    for name, spec in (define or {}).items():
        name = str(name)
        try:
            if name in BUILTIN:
                raise ConfigError(f"profile {name!r} is built in; give yours another name")
            user = profile_from_mapping(name, spec)
            if relevance_level is not None and "relevance_level" not in spec:
                user = user.with_relevance_level(relevance_level)
        except ConfigError as error:
            message = str(error)
            if not message.startswith(f"profile {name!r}"):
                message = f"profile {name!r}: {message}"
            if source is not None:
                message = f"{source}: eval.define: {message}"
            raise ConfigError(message) from None
        out[name] = user
    return out


def resolve_profiles(names: Iterable[str] | None = None, *,
                     define: Mapping[str, Any] | None = None,
                     relevance_level: int | None = None) -> list[Profile]:
    """Look profiles up by name among the built-in and the user-defined ones.

    ``relevance_level`` (``eval.relevance_level``) applies to the built-in profiles and to user
    profiles that do not set their own.
    """
    known = catalogue(define, relevance_level=relevance_level)
    wanted = list(names) if names else ["official"]
    out = []
    for name in wanted:
        if name not in known:
            raise ConfigError(f"unknown profile {name!r} (known: {', '.join(known)})")
        profile = known[name]
        if relevance_level is not None and profile.builtin:
            profile = profile.with_relevance_level(relevance_level)
        out.append(profile)
    if len({p.name for p in out}) != len(out):
        raise ConfigError("a profile is listed twice")
    return out


def as_profiles(profiles: Iterable[str | Profile] | str | Profile, *,
                define: Mapping[str, Any] | None = None,
                relevance_level: int | None = None) -> list[Profile]:
    """Profiles from names, :class:`Profile` objects or a mix, in the order given: names are
    looked up with :func:`resolve_profiles` (``define`` and ``relevance_level`` apply to them),
    objects are kept as they are. The one resolver behind ``Evaluator`` and the pipeline."""
    if isinstance(profiles, (str, Profile)):
        profiles = [profiles]
    profiles = list(profiles)
    names = [p for p in profiles if isinstance(p, str)]
    resolved = iter(resolve_profiles(names, define=define, relevance_level=relevance_level)
                    if names else [])
    return [p if isinstance(p, Profile) else next(resolved) for p in profiles]


def catalogue(define: Mapping[str, Any] | None = None, *,
              relevance_level: int | None = None) -> dict[str, Profile]:
    """Every profile: the built-in ones, then the user-defined ones."""
    return {**BUILTIN, **user_profiles(define, relevance_level=relevance_level)}


__all__ = ["Profile", "as_profiles", "BUILTIN", "QUERY_SETS", "RUN_JUDGED", "ALL_JUDGED",
           "MAX_ROUNDING", "resolve_profiles", "catalogue", "user_profiles",
           "profile_from_mapping"]
