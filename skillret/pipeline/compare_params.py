"""The ``compare:`` section of ``params.yaml``: the settings of the paired tests every run gets
against ``compare.baseline`` (checked, defaults filled in; an error names its key)."""

from __future__ import annotations

from skillret.errors import ConfigError

COMPARE_KEYS = ("baseline", "metrics", "permutations", "bootstrap", "seed", "correction", "alpha")


def compare_settings(section, source: str = "params.yaml") -> dict:
    """The ``compare:`` section of params.yaml, checked, with defaults filled in."""
    from skillret.analysis.compare import DEFAULT_METRICS, DEFAULTS, metric_names

    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: 'compare' must be a mapping")
    unknown = set(section) - set(COMPARE_KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) under compare: {', '.join(sorted(unknown))}")
    settings = {**DEFAULTS, **{k: v for k, v in section.items() if k != "metrics"}}
    metrics = section.get("metrics") or list(DEFAULT_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        settings["metrics"] = metric_names(metrics)
    except ConfigError as exc:
        raise ConfigError(f"{source}: compare.metrics: {exc}") from None
    return settings
