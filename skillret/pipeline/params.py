"""Reading `params.yaml`: each section checked in one place, each rule once, before any work.

Errors name the file and key (a misspelt key with the closest known one). DVC is not imported.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from typing import Any

import yaml

from skillret.analysis.compare import DEFAULT_METRICS, DEFAULTS, check_settings
from skillret.errors import ConfigError
from skillret.io.readers import parse_columns
from skillret.io.streams import readable
from skillret.scoring.names import check_level, metric_names
from skillret.scoring.profiles import BUILTIN, resolve_profiles, user_profiles

DEFAULT_PROFILES = ("official", "mia5150", "recommended")
DEFAULT_HEADLINE = ("NDCG@10",)
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
RUN_OPTIONS = ("format", "columns", "split")
EVAL_KEYS = ("profiles", "relevance_level", "define", "plot_profile", "breakdown",
             "breakdown_profile", "headline")
COMPARE_KEYS = ("baseline", "metrics", *DEFAULTS)
QRELS_KEYS = ("path", "format", "split", "columns")


def safe_yaml(text: str | bytes):
    """`yaml.safe_load`, through libyaml's parser when PyYAML has it (the same documents)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_yaml(path: str | os.PathLike) -> dict:
    """The params file as a mapping; one line naming the file (and line) when it is not one."""
    name, raw = os.fspath(path), b""
    try:
        with open(readable(path), "rb") as fh:  # a stream is copied once: read twice here
            raw = fh.read()
        data = safe_yaml(raw.decode("utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such params file") from None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{name}:{line}: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{name}{where}: not valid YAML "
                          f"({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: expected a mapping at the top level")
    return data


# --- the rules, each written once ---------------------------------------------------------

def mapping(value: Any, where: str, source: str, known: tuple[str, ...] = ()) -> dict:
    """`value` as a mapping (None: empty); with `known`, unknown keys are errors."""
    value = {} if value is None else value
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: '{where}' must be a mapping")
    unknown = [str(key) for key in value if key not in known] if known else []
    if unknown:
        named = [key + "".join(f" (did you mean {close}?)" for close in
                               difflib.get_close_matches(key, known, n=1, cutoff=0.6))
                 for key in unknown]
        plural = "s" if len(unknown) > 1 else ""
        raise ConfigError(f"{source}: unknown key{plural} under {where}: {', '.join(named)} "
                          f"(known: {', '.join(known)})")
    return value


def names(value: Any, where: str, source: str, what: str, *, empty: bool = False) -> list[str]:
    """A list of strings (a string is a list of one); `empty`: an empty list is fine."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not (empty or value) \
            or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {where} must be a {'' if empty else 'non-empty '}list "
                          f"of {what}")
    return value


def keyed(where: str, check, *args, **kwargs):
    """`check(*args, **kwargs)`; a ConfigError it raises names `where` (the file and key) first."""
    try:
        return check(*args, **kwargs)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def check_name(name: object, what: str = "run") -> str:
    """A run name as a plain file name (it becomes part of output paths)."""
    text = str(name)
    if not isinstance(name, str) or not PLAIN_NAME.match(text) or ".." in text:
        raise ConfigError(f"{what} name {text!r} is not a plain name (letters, digits, '.', '_', "
                          f"'-'; starting with a letter or digit; no '/' and no '..')")
    if text == "qrels":
        raise ConfigError(f"{what} name 'qrels' is taken: the headline's entry of the "
                          f"judgments' counts; choose another")
    return text


# --- the sections ---------------------------------------------------------------------------

@dataclass
class EvalParams:
    """The `eval` section, defaults filled in."""

    profiles: list[str]
    relevance_level: int | None
    define: dict[str, Any]
    plot_profile: str
    breakdown: list[str]
    breakdown_profile: str
    headline: list[str]

    @classmethod
    def from_mapping(cls, section: dict | None, source: str = "params.yaml") -> "EvalParams":
        section = mapping(section, "eval", source, EVAL_KEYS)
        profiles = names(section.get("profiles", list(DEFAULT_PROFILES)), "eval.profiles",
                         source, "names")
        level = section.get("relevance_level")
        if level is not None:
            keyed(f"{source}: eval.relevance_level", check_level, level)
        define = section.get("define") or {}
        if not isinstance(define, dict):
            raise ConfigError(f"{source}: eval.define must map profile names to definitions")
        known = [*BUILTIN, *user_profiles(define, source=source)]
        for name in profiles:
            if name not in known:
                raise ConfigError(f"{source}: eval.profiles: unknown profile {name!r} "
                                  f"(known: {', '.join(known)})")
        breakdown = names(section.get("breakdown") or [], "eval.breakdown", source,
                          "facet names", empty=True)
        headline = names(section.get("headline", list(DEFAULT_HEADLINE)), "eval.headline",
                         source, "metric names (e.g. [NDCG@10, Recall@5])")
        plot = str(section.get("plot_profile", profiles[0]))
        by = str(section.get("breakdown_profile", "recommended"))
        for key, name, needed in (("plot_profile", plot, True),
                                  ("breakdown_profile", by, bool(breakdown))):
            if needed and name not in profiles:
                raise ConfigError(f"{source}: eval.{key}: profile {name!r} is not among "
                                  f"eval.profiles ({', '.join(profiles)})")
        return cls(profiles, level, define, plot, breakdown, by, headline)

    def resolved(self):
        """The profiles scored, their definitions and level applied."""
        return resolve_profiles(self.profiles, define=self.define,
                                relevance_level=self.relevance_level)

    def headline_sources(self, source: str = "params.yaml") -> list[tuple[str, str]]:
        """`[(metric, profile)]`: each headline metric with the first profile computing it."""
        profiles, sources = self.resolved(), []
        for name in keyed(f"{source}: eval.headline", metric_names, self.headline):
            profile = next((p for p in profiles if name in metric_names(p.metrics)), None)
            if profile is None:
                raise ConfigError(f"{source}: eval.headline: {name} is computed by no profile "
                                  f"of eval.profiles ({', '.join(p.name for p in profiles)})")
            sources.append((name, profile.name))
        return sources


def validate_section(params: dict, source: str = "params.yaml") -> bool:
    """`validate.strict`: warnings fail the stage."""
    strict = mapping(params.get("validate"), "validate", source, ("strict",)).get("strict",
                                                                                  False)
    if not isinstance(strict, bool):
        raise ConfigError(f"{source}: validate.strict must be true or false, not {strict!r}")
    return strict


def read_options(section: dict, where: str, source: str) -> dict:
    """`format`, `split` and `columns` (a spec or a mapping) as the readers take them."""
    columns = section.get("columns")
    if columns is not None and not isinstance(columns, (str, dict)):
        raise ConfigError(f"{source}: {where}.columns must be 'query=NAME,...' or a mapping")
    return {"fmt": section.get("format"), "split": section.get("split"),
            "columns": parse_columns(columns) if isinstance(columns, str) else columns}


def qrels_section(params: dict, source: str = "params.yaml") -> tuple[str, dict]:
    """`qrels`: the judgments' path and `read_options`."""
    section = mapping(params.get("qrels"), "qrels", source, QRELS_KEYS)
    if not isinstance(section.get("path"), str):
        raise ConfigError(f"{source}: qrels.path must name the judgments file")
    return section["path"], read_options(section, "qrels", source)


def compare_section(params: dict, source: str = "params.yaml") -> dict:
    """`compare`: the settings of the paired tests, defaults filled in."""
    section = mapping(params.get("compare"), "compare", source, COMPARE_KEYS)
    settings = {**DEFAULTS, **{k: v for k, v in section.items() if k != "metrics"}}
    listed = names(section.get("metrics") or list(DEFAULT_METRICS), "compare.metrics", source,
                   "metric names")
    settings["metrics"] = keyed(f"{source}: compare.metrics", metric_names, listed)
    keyed(f"{source}: compare", check_settings, **{key: settings[key] for key in DEFAULTS})
    return settings


def run_entry(params: dict, name: str, source: str = "params.yaml") -> tuple[str, dict]:
    """The run registered as `name`: `runs.<name>` (its path) and `run_options.<name>`
    (`read_options`), each checked. Two keys, because a DVC stage template can name a file in its
    `deps` only from a plain string."""
    check_name(name)
    runs = params.get("runs") or {}
    if not isinstance(runs, dict) or name not in runs:
        raise ConfigError(f"{source}: no run named {name!r} under runs")
    path = runs[name]
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"{source}: runs.{name} must be a file path (options such as the "
                          f"format go under run_options.{name})")
    every = params.get("run_options") or {}
    if not isinstance(every, dict) or name not in every:
        raise ConfigError(f"{source}: run {name!r} has no run_options.{name} entry ({{}} when "
                          f"its format is detected; `skillret-eval register --name {name} {path}` "
                          f"writes it)")
    where = f"run_options.{name}"
    return path, read_options(mapping(every[name], where, source, RUN_OPTIONS), where, source)


def stage_runs(params: dict, source: str = "params.yaml") -> list[str]:
    """Every registered run, then every fused run, each name checked."""
    runs, fused = params.get("runs") or {}, params.get("fuse") or {}
    for key, section, what in (("runs", runs, "run names to files"),
                               ("fuse", fused, "fused run names to their settings")):
        if not isinstance(section, dict):
            raise ConfigError(f"{source}: '{key}' must map {what}")
    return [*(check_name(name) for name in runs), *(check_name(name, "fused run")
                                                   for name in fused)]


def stage_params(source: str = "params.yaml"):
    """What every stage reads of the params file, each section checked: the params, the runs
    (`stage_runs`), `eval`, the headline's `(metric, profile)` and `validate.strict`."""
    params = load_yaml(source)
    evaluation = EvalParams.from_mapping(params.get("eval"), source)
    return (params, stage_runs(params, source), evaluation, evaluation.headline_sources(source),
            validate_section(params, source))
