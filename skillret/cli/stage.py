"""A pipeline stage's command line (`python -m stages.<name>`), here so that the `skillret`
dependency of every stage and the code hash `reports/settings.json` records cover it."""

from __future__ import annotations

import argparse

from skillret.cli.guard import finish, guarded


def main(doc: str, step, prog: str, *arguments: tuple[str, dict]) -> None:
    """Parse the stage's `arguments` (argparse's name, options), run `step(args)` guarded as `prog`
    (`{name}`: the NAME argument), and exit with its status."""
    parser = argparse.ArgumentParser(description=doc.partition("\n\n")[0])
    for flag, options in arguments:
        parser.add_argument(flag, **options)
    args = parser.parse_args()
    finish(guarded(lambda: step(args), prog=prog.format(**vars(args))))
