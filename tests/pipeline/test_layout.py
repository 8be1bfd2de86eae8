"""skillret/pipeline/layout.py is where the stages find their files; dvc.yaml declares them. The
two must name the same paths (no DVC needed: dvc.yaml read as YAML)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from skillret.pipeline import layout

ROOT = Path(__file__).resolve().parents[2]


def declared() -> set[str]:
    """Every output, metric and plot path of dvc.yaml's skillret stages, ``${key}`` as ``{}``."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    paths = set()
    for name, stage in stages.items():
        if name == "retrieve":                      # the example retriever: the user's stage
            continue
        body = stage.get("do", stage)
        for kind in ("outs", "metrics", "plots"):
            for entry in body.get(kind) or []:
                path = next(iter(entry)) if isinstance(entry, dict) else entry
                if path in body["cmd"]:             # named on the command line instead
                    continue
                paths.add(re.sub(r"\$\{key\}", "{}", path))
    return paths


def named() -> set[str]:
    """The layout's paths: its string constants and its run-output patterns."""
    paths = {value for key, value in vars(layout).items()
             if key.isupper() and isinstance(value, str) and "/" in value}
    for table in (layout.RUN_OUTPUTS, layout.FUSED_OUTPUTS):
        paths.update(table.values())
    return paths


def test_dvc_yaml_declares_what_the_layout_names():
    assert declared() == named() - {layout.SCORE_SCRIPT}  # an input, not an output
