"""`skillret-eval unregister`: take a run out of the project, the counterpart of `register`."""

from __future__ import annotations

import os

from skillret.pipeline.register import unregister


def command(args) -> int:
    removed = unregister(args.params, args.name)
    print(f"{args.name}: unregistered; removed {len(removed)} "
          f"file{'' if len(removed) == 1 else 's'} the pipeline made for it")
    for path in removed:
        print(f"  {os.path.relpath(path)}")
    return 0
