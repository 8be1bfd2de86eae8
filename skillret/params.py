"""Reading ``params.yaml``: the evaluation settings that profiles and policies come from.

Only plain YAML is read (no DVC import: each pipeline stage is a new process, and importing DVC
costs about a second).

    eval:
      profiles: [official, mia5150, recommended]   # what `score` computes
      relevance_level: 1                           # grade >= this counts as relevant
      plot_profile: official                       # query set and level of the plot curves
      define:                                      # user-defined profiles
        deep: {metrics: [NDCG@100, Recall@100], query_set: all-judged, rounding: 4}
    validate:
      strict: false                                # warnings become errors
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError

DEFAULT_PROFILES = ("official", "mia5150", "recommended")


def load_yaml(path: str | os.PathLike) -> dict:
    import yaml

    raw = b""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        data = yaml.safe_load(raw.decode("utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{os.fspath(path)}: no such params file") from None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{os.fspath(path)}:{line}: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{os.fspath(path)}: cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{os.fspath(path)}{where}: not valid YAML "
                          f"({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{os.fspath(path)}: expected a mapping at the top level")
    return data


@dataclass
class EvalParams:
    profiles: list[str] = field(default_factory=lambda: list(DEFAULT_PROFILES))
    relevance_level: int | None = None
    define: dict[str, Any] = field(default_factory=dict)
    plot_profile: str = "official"

    @classmethod
    def from_mapping(cls, section: dict | None, source: str = "params") -> "EvalParams":
        section = section or {}
        if not isinstance(section, dict):
            raise ConfigError(f"{source}: 'eval' must be a mapping")
        unknown = set(section) - {"profiles", "relevance_level", "define", "plot_profile"}
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) under eval: {', '.join(sorted(unknown))}")
        profiles = section.get("profiles", list(DEFAULT_PROFILES))
        if isinstance(profiles, str):
            profiles = [profiles]
        if not isinstance(profiles, list) or not profiles:
            raise ConfigError(f"{source}: eval.profiles must be a non-empty list of names")
        level = section.get("relevance_level")
        if level is not None and (not isinstance(level, int) or isinstance(level, bool)
                                  or level < 1):
            raise ConfigError(f"{source}: eval.relevance_level must be an integer >= 1")
        define = section.get("define") or {}
        if not isinstance(define, dict):
            raise ConfigError(f"{source}: eval.define must map profile names to definitions")
        if define:  # cutoffs and limits checked before any work
            from .profiles import user_profiles
            user_profiles(define, source=source)
        return cls([str(p) for p in profiles], level, define,
                   str(section.get("plot_profile", profiles[0])))


def eval_params(path: str | os.PathLike | None) -> EvalParams:
    if path is None:
        return EvalParams()
    return EvalParams.from_mapping(load_yaml(path).get("eval"), os.fspath(path))


def validate_params(path: str | os.PathLike | None) -> dict:
    if path is None:
        return {"strict": False}
    section = load_yaml(path).get("validate") or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{os.fspath(path)}: 'validate' must be a mapping")
    return {"strict": bool(section.get("strict", False))}
