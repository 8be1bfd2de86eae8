"""The reference pages written from the code at build time (mkdocs ``hooks:``).

A page holds ``<!-- generated: NAME -->`` where ``GENERATORS[NAME]()`` goes: the measures and
profiles from the measure registry and the built-in profiles, the command line from the argparse
parsers, the Python API from the package's exports, the benchmarks from
``docs/benchmark-results.json``. So a new measure, option or export shows up without editing a
page. ``python docs/hooks.py NAME`` prints one.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
MARK = re.compile(r"^<!-- generated: ([\w-]+) -->$", re.M)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return MARK.sub(lambda m: GENERATORS[m.group(1)]().rstrip() + "\n", markdown)


def fence(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text.rstrip()}\n```\n"


# --- measures and profiles ------------------------------------------------------------------

def measures() -> str:
    from skillret.measures import registry

    out = ["| measure | also written | official | cutoffs |", "| --- | --- | --- | --- |"]
    for m in registry.all_measures():
        also = ", ".join(f"`{a}`" for a in m.aliases) or "-"
        out.append(f"| [{m.name}](#{m.name.lower()}) | {also} | "
                   f"{'yes' if m.official else '-'} | `{m.name}@K` |")
    out.append("")
    for m in registry.all_measures():
        first, _, rest = m.definition.partition("\n")
        # the docstring is Markdown as written: its indented formulas are code blocks
        out += [f"### {m.name}", "", first.strip(), "", _dedent(rest), ""]
    return "\n".join(out)


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n")


def profiles() -> str:
    from skillret.scoring.profiles import BUILTIN, QUERY_SETS

    out = ["| profile | metrics | query set | relevant | rounding |",
           "| --- | --- | --- | --- | --- |"]
    for p in BUILTIN.values():
        rounding = "none" if p.rounding is None else f"{p.rounding} decimals"
        out.append(f"| `{p.name}` | {', '.join(p.metrics)} | `{p.query_set}` | "
                   f"grade >= {p.relevance_level} | {rounding} |")
    out += ["", "Query sets:", ""]
    out += [f"- `{name}`: {what}" for name, what in QUERY_SETS.items()]
    out += ["", "What each built-in profile reproduces:", ""]
    out += [f"- `{p.name}`: {p.description}" for p in BUILTIN.values() if p.description]
    return "\n".join(out)


# --- the command line -----------------------------------------------------------------------

def cli() -> str:
    from skillret.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    out = ["| command | what it does |", "| --- | --- |"]
    out += [f"| [`{name}`](#{name}) | {helps.get(name, '')} |" for name in sub.choices]
    out.append("")
    for name, command in sub.choices.items():
        out += [f"## {name}", "", (helps.get(name) or "").capitalize() + ".", ""]
        command.formatter_class = _Wide
        out += [fence(command.format_help()), ""]
    return "\n".join(out)


class _Wide(argparse.HelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, width=100, max_help_position=32)


# --- the Python API -------------------------------------------------------------------------

def api() -> str:
    import skillret

    out = []
    for name in sorted(skillret._MODULE_OF, key=lambda n: (n[0].isupper(), n.lower())):
        module = skillret._MODULE_OF[name]
        attr = "BUILTIN" if name == "BUILTIN_PROFILES" else name
        out += [f"::: skillret.{module}.{attr}", "    options:",
                f"      heading: skillret.{name}", "", ]
    return "\n".join(out)


# --- benchmarks -----------------------------------------------------------------------------

RESULTS = ROOT / "docs" / "benchmark-results.json"


def benchmarks() -> str:
    data = json.loads(RESULTS.read_text())
    machine = data["machine"]
    out = ["| scale | rows | target | measured | |", "| --- | ---: | --- | ---: | --- |"]
    for target in data["targets"]:
        scale = data["scales"][target["scale"]]
        contender = target["contender"]
        limit = target["limit"]
        value = target["value"]
        if "ratio" in target["quantity"]:
            what = f"{target['quantity'].split()[0]} <= {limit}x the official path's"
            shown = f"{value}x"
        else:
            what = f"peak RSS <= {limit:,} MiB"
            shown = f"{value:,} MiB"
        out.append(f"| {target['scale']} ({contender}) | {scale['rows']:,} | {what} | "
                   f"{shown} | {'met' if target['status'] == 'PASS' else 'missed'} |")
    out += ["", "| scale | contender | wall (s) | peak RSS (MiB) | equal numbers |",
            "| --- | --- | ---: | ---: | --- |"]
    for name, scale in data["scales"].items():
        checks = all(c.get("equal") for c in scale.get("checks", {}).values())
        for contender, row in scale["contenders"].items():
            out.append(f"| {name} | {contender} | {row['wall_median_s']} | "
                       f"{row['rss_median_mib']:,} | {'yes' if checks else 'no'} |")
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
    out += ["", f"Measured at commit `{machine['commit']}` on {machine['cpu']} "
                f"({machine['cores']} cores, {machine['ram_gib']} GiB RAM), {machine['os']}, "
                f"Python {machine['python']}; {versions}. Medians of {data['repeat']} timed "
                f"runs after a warm-up; data seed {data['seed']}.", ""]
    return "\n".join(out)


GENERATORS = {"measures": measures, "profiles": profiles, "cli": cli, "api": api,
              "benchmarks": benchmarks}


if __name__ == "__main__":
    print(GENERATORS[sys.argv[1]]())
