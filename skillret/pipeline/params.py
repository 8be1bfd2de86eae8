"""Reading ``params.yaml``: the evaluation settings that profiles and policies come from.

Only plain YAML is read (no DVC import: each pipeline stage is a new process, and importing DVC
costs about a second).

    eval:
      profiles: [official, mia5150, recommended]   # what `score` computes
      relevance_level: 1                           # grade >= this counts as relevant
      plot_profile: official                       # query set and level of the plot curves
      breakdown: [n_required, skill_category]      # metrics per stratum of these query facets
      breakdown_profile: recommended               # ... of this profile (metrics, query set)
      headline: [NDCG@10]                          # what dvc metrics / dvc exp show display
      define:                                      # user-defined profiles
        deep: {metrics: [NDCG@100, Recall@100], query_set: all-judged, rounding: 4}
    validate:
      strict: false                                # warnings become errors
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from skillret.errors import ConfigError

DEFAULT_PROFILES = ("official", "mia5150", "recommended")
DEFAULT_HEADLINE = ("NDCG@10",)
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
RUN_OPTIONS = ("format", "columns", "split")


def safe_yaml(text: str | bytes):
    """``yaml.safe_load`` through libyaml's parser when PyYAML has it (CSafeLoader: the same
    documents, the same errors with their marks, about 9x faster: every stage reads params.yaml,
    which grows by a line per registered run)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_yaml(path: str | os.PathLike) -> dict:
    import yaml

    raw = b""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        data = safe_yaml(raw.decode("utf-8")) or {}
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
    breakdown: list[str] = field(default_factory=list)
    breakdown_profile: str = "recommended"
    headline: list[str] = field(default_factory=lambda: list(DEFAULT_HEADLINE))

    @classmethod
    def from_mapping(cls, section: dict | None, source: str = "params") -> "EvalParams":
        section = section or {}
        if not isinstance(section, dict):
            raise ConfigError(f"{source}: 'eval' must be a mapping")
        unknown = set(section) - {"profiles", "relevance_level", "define", "plot_profile",
                                  "breakdown", "breakdown_profile", "headline"}
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
            from skillret.scoring.profiles import user_profiles
            user_profiles(define, source=source)
        _known_profiles(source, "eval.profiles", profiles, define)
        breakdown = section.get("breakdown") or []
        if isinstance(breakdown, str):
            breakdown = [breakdown]
        if not isinstance(breakdown, list) or not all(isinstance(f, str) for f in breakdown):
            raise ConfigError(f"{source}: eval.breakdown must be a list of facet names")
        headline = section.get("headline", list(DEFAULT_HEADLINE))
        if isinstance(headline, str):
            headline = [headline]
        if (not isinstance(headline, list) or not headline
                or not all(isinstance(m, str) for m in headline)):
            raise ConfigError(f"{source}: eval.headline must be a non-empty list of metric "
                              f"names (e.g. [NDCG@10, Recall@5])")
        profiles = [str(p) for p in profiles]
        plot = str(section.get("plot_profile", profiles[0]))
        by = str(section.get("breakdown_profile", "recommended"))
        for key, name, needed in (("plot_profile", plot, True), ("breakdown_profile", by,
                                                                 bool(breakdown))):
            if needed and name not in profiles:
                raise ConfigError(f"{source}: eval.{key}: profile {name!r} is not among "
                                  f"eval.profiles ({', '.join(profiles)})")
        return cls(profiles, level, define, plot, breakdown, by, headline)


def _known_profiles(source: str, key: str, names: list, define: dict) -> None:
    """Every name a profile, built in or defined under eval.define; else one line naming the
    key to fix."""
    from skillret.scoring.profiles import BUILTIN

    known = [*BUILTIN, *(str(name) for name in define)]
    for name in names:
        if str(name) not in known:
            raise ConfigError(f"{source}: {key}: unknown profile {str(name)!r} "
                              f"(known: {', '.join(known)})")


def eval_params(path: str | os.PathLike | None) -> EvalParams:
    if path is None:
        return EvalParams()
    return EvalParams.from_mapping(load_yaml(path).get("eval"), os.fspath(path))


def check_name(name: object, what: str = "run") -> str:
    """A run (or fused run) name as a plain file name: letters, digits, ``.``, ``_``, ``-``.

    The name becomes part of output paths (``outputs/runs/<name>.parquet``), so ``/`` and
    ``..`` would write elsewhere in the repository or outside it.
    """
    text = str(name)
    if not isinstance(name, str) or not PLAIN_NAME.match(text) or ".." in text:
        raise ConfigError(f"{what} name {text!r} is not a plain name (letters, digits, '.', '_', "
                          f"'-'; starting with a letter or digit; no '/' and no '..')")
    return text


@dataclass(frozen=True)
class RunEntry:
    """A registered run: ``runs.<name>`` (its path) and ``run_options.<name>`` (how to read it).

    Two keys rather than one entry that is a path or a mapping: a DVC stage template names the
    file in ``deps`` as ``${item}``, which DVC cannot interpolate from a mapping. The settings
    stage copies ``run_options.<name>`` (which must exist) to the run's own file, which its
    stage depends on: changing one run's options reruns that run only.
    """

    name: str
    path: str
    fmt: str | None = None
    columns: dict | None = None
    split: str | None = None


def run_entry(params: dict, name: str, source: str = "params.yaml") -> RunEntry:
    """The run registered as ``name``, its name and options checked before any work."""
    from skillret.io.table_files import parse_columns

    check_name(name)
    runs = params.get("runs") or {}
    if not isinstance(runs, dict) or name not in runs:
        raise ConfigError(f"{source}: no run named {name!r} under runs")
    path = runs[name]
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"{source}: runs.{name} must be a file path (options such as the "
                          f"format go under run_options.{name})")
    all_options = params.get("run_options") or {}
    if not isinstance(all_options, dict) or name not in all_options:
        raise ConfigError(f"{source}: run {name!r} has no run_options.{name} entry ({{}} when "
                          f"its format is detected; `skillret-eval register --name {name} {path}` "
                          f"writes it)")
    options = all_options[name] or {}
    if not isinstance(options, dict) or set(options) - set(RUN_OPTIONS):
        raise ConfigError(f"{source}: run_options.{name} must be a mapping of "
                          f"{', '.join(RUN_OPTIONS)}")
    columns = options.get("columns")
    if isinstance(columns, str):
        columns = parse_columns(columns)
    elif columns is not None and not isinstance(columns, dict):
        raise ConfigError(f"{source}: run_options.{name}.columns must be 'query=NAME,...' "
                          f"or a mapping")
    return RunEntry(name, path, options.get("format"), columns, options.get("split"))


def validate_section(section: object, source: str = "params") -> dict:
    """``validate:`` checked: ``{"strict": bool}``."""
    section = section or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: 'validate' must be a mapping")
    unknown = set(section) - {"strict"}
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) under validate: "
                          f"{', '.join(sorted(map(str, unknown)))} (known: strict)")
    strict = section.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigError(f"{source}: validate.strict must be true or false, not {strict!r}")
    return {"strict": strict}


def validate_params(path: str | os.PathLike | None) -> dict:
    if path is None:
        return {"strict": False}
    return validate_section(load_yaml(path).get("validate"), os.fspath(path))


def qrels_section(section: object, source: str = "params") -> dict:
    """``qrels:`` checked: path, format, split, columns (a spec string or a mapping)."""
    from skillret.io.table_files import parse_columns

    if not isinstance(section, dict) or not isinstance(section.get("path"), str):
        raise ConfigError(f"{source}: qrels.path must name the judgments file")
    unknown = set(section) - {"path", "format", "split", "columns"}
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) under qrels: "
                          f"{', '.join(sorted(map(str, unknown)))} (known: path, format, split, "
                          f"columns)")
    columns = section.get("columns")
    return {"path": section["path"], "format": section.get("format"),
            "split": section.get("split"),
            "columns": parse_columns(columns) if isinstance(columns, str) else columns}


def stage_runs(params: dict) -> list[str]:
    """The runs the pipeline scores: every registered run (``runs:``), then every fused run
    (``fuse:``), each name checked. The one list the aggregate stages (curves, compare,
    breakdown plot) work on."""
    sections = (("runs", "run"), ("fuse", "fused run"))
    return [check_name(name, what) for section, what in sections
            for name in (params.get(section) or {})]
