"""`skillret-eval plots`: the pipeline's charts as image files (drawn by vl-convert-python from
`dvc plots show`'s templates), or the page that lets `dvc plots show` draw them offline."""

from __future__ import annotations

from skillret.errors import ConfigError
from skillret.render.plots import write_html_template, write_images


def plots(args) -> int:
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
