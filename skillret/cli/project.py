"""The project's commands, `register`, `unregister` and `normalize-qrels`, and `profiles`, the
listing of the profiles (`measures` and `plots`, lighter, have modules of their own)."""

from __future__ import annotations

import json
import os

from skillret.io.atomic import reserve
from skillret.io.readers import parse_columns
from skillret.pipeline import project_stages, register as registration
from skillret.pipeline.params import EvalParams, load_yaml
from skillret.render.tables import catalogue_text
from skillret.scoring.profiles import catalogue


def register(args) -> int:
    options = {"format": args.run_format, "columns": args.columns, "split": args.split}
    for name, path, added in registration.register(args.params, args.paths, name=args.name,
                                                   options=options):
        state = "registered" if added else "already registered"
        if not added and any(v is not None for v in options.values()):
            state += "; options set"
        print(f"{name}: {path} ({state})")
    return 0


def unregister(args) -> int:
    removed = registration.unregister(args.params, args.name)
    print(f"{args.name}: unregistered; removed {len(removed)} "
          f"file{'' if len(removed) == 1 else 's'} the pipeline made for it")
    for path in removed:
        print(f"  {os.path.relpath(path)}")
    return 0


def normalize_qrels(args) -> int:
    reserve(args.output, args.stats)
    stats = project_stages.normalize_qrels(args.qrels, args.output, args.stats,
                                           fmt=args.qrels_format, split=args.split,
                                           columns=parse_columns(args.columns))
    print(f"{args.qrels}: {stats['queries']} queries, {stats['pairs']} judgments -> "
          f"{args.output}")
    return 0


def profiles(args) -> int:
    define = (EvalParams.from_mapping(load_yaml(args.params).get("eval"), args.params).define
              if args.params else {})
    listed = catalogue(define)
    print(json.dumps({name: p.describe() for name, p in listed.items()}, indent=2)
          if args.json else catalogue_text(listed))
    return 0
