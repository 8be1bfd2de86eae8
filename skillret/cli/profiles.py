"""``skillret-eval profiles``: the profiles and the definitions of the measures."""

from __future__ import annotations

import json


def add_parser(sub) -> None:
    p = sub.add_parser("profiles", help="list the profiles and the definitions of the measures")
    p.add_argument("--params", metavar="FILE", help="also list the profiles defined there")
    p.add_argument("--json", action="store_true", help="print as JSON")


def command(args) -> int:
    from skillret.pipeline.params import eval_params
    from skillret.scoring.profiles import catalogue
    from skillret.render.tables import catalogue_text

    define = eval_params(args.params).define if args.params else {}
    profiles = catalogue(define)
    if args.json:
        print(json.dumps({name: p.describe() for name, p in profiles.items()}, indent=2))
    else:
        print(catalogue_text(profiles))
    return 0
