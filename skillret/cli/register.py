"""`skillret-eval register`: add run files to params.yaml's `runs:`."""

from __future__ import annotations

from skillret.pipeline.register import register


def command(args) -> int:
    options = {"format": args.run_format, "columns": args.columns, "split": args.split}
    for name, path, added in register(args.params, args.paths, name=args.name, options=options):
        state = "registered" if added else "already registered"
        if not added and any(v is not None for v in options.values()):
            state += "; options set"
        print(f"{name}: {path} ({state})")
    return 0

