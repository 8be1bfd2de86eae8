"""``skillret-eval register``: add run files to params.yaml's ``runs:``."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("register", help="add run files to params.yaml's runs: (name = file stem)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="run files inside the project")
    p.add_argument("--params", default="params.yaml", metavar="FILE",
                   help="the params file to edit (default: params.yaml)")
    p.add_argument("--name", metavar="NAME", help="the run's name (one file only)")
    p.add_argument("--format", dest="run_format", metavar="FMT",
                   help="written under run_options.<name>.format")
    p.add_argument("--columns", metavar="SPEC", help="written under run_options.<name>.columns")
    p.add_argument("--split", metavar="NAME", help="written under run_options.<name>.split")


def command(args) -> int:
    from skillret.pipeline.register import register

    options = {"format": args.run_format, "columns": args.columns, "split": args.split}
    for name, path, added in register(args.params, args.paths, name=args.name, options=options):
        state = "registered" if added else "already registered"
        if not added and any(v is not None for v in options.values()):
            state += "; options set"
        print(f"{name}: {path} ({state})")
    return 0
