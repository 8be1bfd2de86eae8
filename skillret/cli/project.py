"""The project's commands, `register`, `unregister`, `normalize-qrels` and `plots`, and the
listings of the profiles and the measures."""

from __future__ import annotations

import json
import os
import textwrap

from skillret.errors import ConfigError
from skillret.io.atomic import reserve
from skillret.io.readers import parse_columns
from skillret.measures import registry
from skillret.pipeline import project_stages, register as registration
from skillret.pipeline.params import eval_params
from skillret.render.plots import write_html_template, write_images
from skillret.render.tables import catalogue_text
from skillret.scoring.profiles import catalogue


def register(args) -> int:
    """Add run files to params.yaml's `runs:`."""
    options = {"format": args.run_format, "columns": args.columns, "split": args.split}
    for name, path, added in registration.register(args.params, args.paths, name=args.name,
                                                   options=options):
        state = "registered" if added else "already registered"
        if not added and any(v is not None for v in options.values()):
            state += "; options set"
        print(f"{name}: {path} ({state})")
    return 0


def unregister(args) -> int:
    """Take a run out of the project, the counterpart of `register`."""
    removed = registration.unregister(args.params, args.name)
    print(f"{args.name}: unregistered; removed {len(removed)} "
          f"file{'' if len(removed) == 1 else 's'} the pipeline made for it")
    for path in removed:
        print(f"  {os.path.relpath(path)}")
    return 0


def normalize_qrels(args) -> int:
    """Judgments in canonical form, with statistics."""
    reserve(args.output, args.stats)
    stats = project_stages.normalize_qrels(args.qrels, args.output, args.stats,
                                           fmt=args.qrels_format, split=args.split,
                                           columns=parse_columns(args.columns))
    print(f"{args.qrels}: {stats['queries']} queries, {stats['pairs']} judgments -> "
          f"{args.output}")
    return 0


def plots(args) -> int:
    """The pipeline's charts as image files (drawn by vl-convert-python from `dvc plots show`'s
    templates), or the page that lets `dvc plots show` draw them offline."""
    if args.html_template:
        if args.image_format:
            raise ConfigError("give --format or --html-template, not both")
        print(write_html_template(args.html_template))
        return 0
    if not args.image_format:
        raise ConfigError("give --format png or --format svg (or --html-template FILE)")
    for path in write_images(args.repo, args.output_dir, args.image_format, args.scale):
        print(path)
    return 0


def profiles(args) -> int:
    """The profiles and the definitions of the measures."""
    define = eval_params(args.params).define if args.params else {}
    listed = catalogue(define)
    print(json.dumps({name: p.describe() for name, p in listed.items()}, indent=2)
          if args.json else catalogue_text(listed))
    return 0


def measures(args) -> int:
    """Every measure, its definition, its names in other tools, and whether the official
    evaluator computes it."""
    rows = registry.catalogue()
    print(json.dumps(rows, indent=2, ensure_ascii=False) if args.format == "json"
          else measures_text(rows))
    return 0


def measures_text(rows: list[dict]) -> str:
    """The listing: one block per measure (K stands for a cutoff)."""
    out = []
    for row in rows:
        official = "computed by SkillRet's official evaluator" if row["official"] \
            else "not in SkillRet's official evaluator"
        out.append(f"{'  '.join(row['forms'])}    ({official})")
        out.extend(textwrap.wrap(row["summary"], 98, initial_indent="  ",
                                 subsequent_indent="  "))
        for tool in registry.TOOLS:
            if row["tools"][tool]:
                out.append(f"  {tool + ':':<13}{', '.join(row['tools'][tool])}")
        if row["aliases"]:
            out.append(f"  {'also:':<13}{', '.join(row['aliases'])}")
        out.append("")
    out.extend(textwrap.wrap(
        "Names are not case-sensitive; K is a cutoff (ndcg_cut_K, ndcg_cut.K and nDCG@K "
        "alike); a relevance level is written Name(rel=N)@K. `skillret-eval profiles` prints "
        "each measure's full definition.", 100))
    return "\n".join(out)
