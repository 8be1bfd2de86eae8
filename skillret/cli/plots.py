"""``skillret-eval plots``: the pipeline's charts as image files, or the page that lets
``dvc plots show`` draw them offline.

    skillret-eval plots --format png -o figures     # every chart of dvc.yaml, PNG (or svg)
    skillret-eval plots --html-template plots/offline.html

Images are drawn by vl-convert-python, without a browser, from the same templates and plot
files as ``dvc plots show`` (:mod:`skillret.render.plots`). Every file is written, or none.
"""

from __future__ import annotations

import argparse

from skillret.errors import ConfigError


def add_parser(sub) -> None:
    p = sub.add_parser("plots", help="the pipeline's charts as PNG or SVG files (no browser), "
                                     "or the offline page of dvc plots show")
    p.add_argument("--format", dest="image_format", choices=("png", "svg"),
                   help="write every chart of dvc.yaml as an image of this format")
    p.add_argument("--output-dir", "-o", default="figures", metavar="DIR",
                   help="where the images go (default: figures)")
    p.add_argument("--repo", default=".", metavar="DIR",
                   help="the project: its dvc.yaml, params.yaml and plot files (default: .)")
    p.add_argument("--scale", type=_scale, default=2.0, metavar="N",
                   help="PNG pixels per chart pixel (default 2)")
    p.add_argument("--html-template", metavar="FILE",
                   help="write instead the page for plots.html_template in .dvc/config: "
                        "Vega, Vega-Lite and vega-embed inlined, no network needed")


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 10:
        raise argparse.ArgumentTypeError(f"{text} is not a scale between 0 and 10")
    return value


def command(args) -> int:
    from skillret.render import plots

    if args.html_template:
        if args.image_format:
            raise ConfigError("give --format or --html-template, not both")
        print(plots.write_html_template(args.html_template))
        return 0
    if not args.image_format:
        raise ConfigError("give --format png or --format svg (or --html-template FILE)")
    for path in plots.write_images(args.repo, args.output_dir, args.image_format, args.scale):
        print(path)
    return 0
