"""`skillret-eval profiles`: the profiles and the definitions of the measures."""

from __future__ import annotations

import json

from skillret.pipeline.params import eval_params
from skillret.render.tables import catalogue_text
from skillret.scoring.profiles import catalogue


def command(args) -> int:
    define = eval_params(args.params).define if args.params else {}
    profiles = catalogue(define)
    print(json.dumps({name: p.describe() for name, p in profiles.items()}, indent=2)
          if args.json else catalogue_text(profiles))
    return 0
