"""The hand-written reference pages name everything the code reads: every key of params.yaml
(the keys each section's reader accepts), every section of the sample's params.yaml."""

from __future__ import annotations

from pathlib import Path

import yaml

from skillret.pipeline import params, run_stages

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "reference" / "params.md").read_text()


def keys_in(mapping: dict, prefix: str = "") -> set[str]:
    out = set()
    for key, value in mapping.items():
        if prefix in ("runs.", "run_options.", "fuse.", "retrieve.configs.", "eval.define."):
            key = "<name>" if prefix != "retrieve.configs." else "<config>"
        out.add(prefix + str(key))
        if isinstance(value, dict) and prefix + str(key) not in ("eval.define",):
            out |= keys_in(value, f"{prefix}{key}.")
    return out


def test_every_key_the_readers_accept_is_on_the_params_page():
    accepted = ({f"eval.{k}" for k in params.EVAL_KEYS}
                | {f"compare.{k}" for k in params.COMPARE_KEYS}
                | {f"qrels.{k}" for k in params.QRELS_KEYS}
                | {f"run_options.<name>.{k}" for k in params.RUN_OPTIONS}
                | {f"fuse.<name>.{k}" for k in run_stages.FUSE_KEYS}
                | {"validate.strict", "runs.<name>", "run_options.<name>"})
    missing = sorted(k for k in accepted if f"`{k}`" not in PAGE)
    assert not missing, f"docs/reference/params.md does not name {missing}"


def test_every_key_of_the_sample_params_is_on_the_page():
    sample = yaml.safe_load((ROOT / "params.yaml").read_text())
    shown = keys_in(sample)
    leaves = {k for k in shown if not any(o.startswith(k + ".") for o in shown)}
    missing = sorted(k for k in leaves if f"`{k}`" not in PAGE
                     and not k.startswith(("runs.", "fuse.<name>", "run_options.")))
    assert not missing, f"docs/reference/params.md does not name {missing}"


def test_the_ci_page_shows_the_workflow_as_it_is():
    import re

    page = (ROOT / "docs" / "ci.md").read_text()
    shown = re.search(r"```yaml\n(.*?)```", page, re.S).group(1)
    assert shown == (ROOT / ".github" / "workflows" / "skillret-report.yml").read_text()
