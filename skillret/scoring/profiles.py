"""Profiles: which metrics, at which cutoffs, averaged over which queries (`QUERY_SETS`; the
arithmetic is `aggregate.profile_mean`'s), rounded how. The built-in profiles reproduce the
evaluators in use on SkillRet; user-defined ones come from `params.yaml` (`eval.define`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from skillret.errors import ConfigError
from skillret.measures import registry
from skillret.scoring.names import DEFAULT_RELEVANCE_LEVEL, Metric, check_level, parse_metric

RUN_JUDGED = "run-judged"
ALL_JUDGED = "all-judged"
QUERY_SETS = {
    RUN_JUDGED: "queries in the run with >= 1 judgment (empty rankings score 0); "
                "run queries without judgments ignored",
    ALL_JUDGED: "every query with >= 1 judgment; absent or empty rankings score 0",
}
#: The most decimals a profile may round to (a double holds 17 significant digits).
MAX_ROUNDING = 17
USER_KEYS = ("metrics", "query_set", "relevance_level", "rounding", "description")


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
            also = " ('official' is a profile; its query set is run-judged)" \
                if self.query_set == "official" else ""
            raise ConfigError(f"profile {self.name!r}: query_set must be one of "
                              f"{', '.join(QUERY_SETS)}, not {self.query_set!r}{also}")
        if not self.metrics:
            raise ConfigError(f"profile {self.name!r} has no metrics")
        if self.rounding is not None and (not isinstance(self.rounding, int)
                                          or isinstance(self.rounding, bool)
                                          or not 0 <= self.rounding <= MAX_ROUNDING):
            raise ConfigError(f"profile {self.name!r}: rounding must be an integer from 0 to "
                              f"{MAX_ROUNDING}, or null")
        try:
            check_level(self.relevance_level)
        except ConfigError as exc:
            raise ConfigError(f"profile {self.name!r}: relevance_level {exc}") from None
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
        """The largest cutoff (1 when no metric has one; those read whole rankings)."""
        return max((m.k for m in self.parsed() if m.k is not None), default=1)

    @property
    def run_queries_only(self) -> bool:
        """The mean is over the run's judged queries only (the official evaluator's)."""
        return self.query_set == RUN_JUDGED

    def describe(self) -> dict[str, Any]:
        """The profile as `eval.define` writes one."""
        return {key: list(self.metrics) if key == "metrics" else getattr(self, key)
                for key in USER_KEYS}


def profile_cutoffs(profiles: Iterable[Profile]) -> list[int]:
    """Every cutoff the profiles' metrics use, ascending (1 when none has one)."""
    cutoffs = {m.k for p in profiles for m in p.parsed() if m.k is not None}
    return sorted(cutoffs) or [1]


_OFFICIAL_FIFTEEN = tuple(f"{m}@{k}" for m in registry.names("official") for k in (5, 10, 15))

BUILTIN: dict[str, Profile] = {
    "official": Profile(
        "official", _OFFICIAL_FIFTEEN, query_set=RUN_JUDGED,
        description="SkillRet's official evaluator (trec_eval via pytrec_eval at 5/10/15)",
        builtin=True),
    "mia5150": Profile(
        "mia5150", _OFFICIAL_FIFTEEN + ("MRR@5", "MRR@10"),
        query_set=ALL_JUDGED,
        description="the MIA5150 fusion evaluator: the official fifteen plus MRR@5/10, "
                    "over every judged query", builtin=True),
    "recommended": Profile(
        "recommended", ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5"),
        query_set=ALL_JUDGED,
        description="a short headline set: what an agent's top 5 / top 10 gives it, over every "
                    "judged query", builtin=True),
}


def metric_profiles(metrics: Iterable[str], *, query_set: str = RUN_JUDGED,
                    relevance_level: int | None = None, rounding: int | None = 5,
                    name: str = "metrics") -> list[Profile]:
    """Ad-hoc metrics given by name (any accepted spelling, as `trec_eval -m` and ir_measures
    take them) as profiles: one for the names without a level of their own (at
    `relevance_level`, default 1), and one per other level a name sets (`P(rel=2)@5`), named
    `<name>(rel=N)`. Their outputs carry the canonical names."""
    level = DEFAULT_RELEVANCE_LEVEL if relevance_level is None else relevance_level
    by_level: dict[int, list[str]] = {}
    for metric in dict.fromkeys(parse_metric(m, rel=level) for m in metrics):
        by_level.setdefault(metric.rel, []).append(metric.short_name())
    return [Profile(name if rel == level else f"{name}(rel={rel})", tuple(names),
                    query_set=query_set, relevance_level=rel, rounding=rounding,
                    description="metrics named on the command line")
            for rel, names in sorted(by_level.items(), key=lambda item: item[0] != level)]


def user_profiles(define: Mapping[str, Any] | None, *, source: str | None = None,
                  relevance_level: int | None = None) -> dict[str, Profile]:
    """The profiles of `eval.define` (`{name: {metrics: [NDCG@20, ...], query_set, ...}}`), each
    checked before any work; `relevance_level` applies to those that set none; `source` (the
    params file) prefixes every error."""
    out: dict[str, Profile] = {}
    for name, spec in (define or {}).items():
        name = str(name)
        try:
            if name in BUILTIN:
                raise ConfigError(f"profile {name!r} is built in; give yours another name")
            if not isinstance(spec, Mapping):
                raise ConfigError(f"profile {name!r} must be a mapping with 'metrics'")
            unknown = sorted(map(str, set(spec) - set(USER_KEYS)))
            if unknown:
                raise ConfigError(f"profile {name!r}: unknown key(s) {', '.join(unknown)} "
                                  f"(known: {', '.join(USER_KEYS)})")
            metrics = spec.get("metrics")
            if isinstance(metrics, Mapping):  # {NDCG: [5, 10], MRR: [10], RPrec: null}
                metrics = [m if k is None else f"{m}@{k}" for m, ks in metrics.items()
                           for k in (ks if isinstance(ks, list) else [ks])]
            if not isinstance(metrics, list) or not metrics:
                raise ConfigError(f"profile {name!r}: 'metrics' must be a non-empty list such "
                                  f"as [NDCG@10, Recall@5]")
            level = spec.get("relevance_level", relevance_level or DEFAULT_RELEVANCE_LEVEL)
            profile = Profile(name, tuple(metrics), query_set=spec.get("query_set", ALL_JUDGED),
                              relevance_level=level, rounding=spec.get("rounding", 5),
                              description=str(spec.get("description", "")))
            # names are written without the level (Profile refused a metric's own level)
            out[name] = replace(profile, metrics=tuple(m.short_name() for m in profile.parsed()))
        except ConfigError as error:
            message = str(error)
            if not message.startswith(f"profile {name!r}"):
                message = f"profile {name!r}: {message}"
            if source is not None:
                message = f"{source}: eval.define: {message}"
            raise ConfigError(message) from None
    return out


def catalogue(define: Mapping[str, Any] | None = None, *,
              relevance_level: int | None = None) -> dict[str, Profile]:
    """Every profile: the built-in ones, then the user-defined ones."""
    return {**BUILTIN, **user_profiles(define, relevance_level=relevance_level)}


def resolve_profiles(profiles: Iterable[str | Profile] | str | Profile | None = None, *,
                     define: Mapping[str, Any] | None = None,
                     relevance_level: int | None = None) -> list[Profile]:
    """Profiles from names (built in or defined in `define`), `Profile` objects or a mix, in
    the order given (None: official). `relevance_level` applies to the built-in profiles
    and to user profiles that set none; objects are kept as they are."""
    if profiles is None or isinstance(profiles, (str, Profile)):
        profiles = ["official"] if profiles is None else [profiles]
    known = catalogue(define, relevance_level=relevance_level)
    out = []
    for profile in list(profiles):
        if not isinstance(profile, Profile):
            if profile not in known:
                raise ConfigError(f"unknown profile {profile!r} (known: {', '.join(known)})")
            profile = known[profile]
            if relevance_level is not None and profile.builtin:
                profile = replace(profile, relevance_level=int(relevance_level))
        out.append(profile)
    if len({p.name for p in out}) != len(out):
        raise ConfigError("a profile is listed twice")
    return out
