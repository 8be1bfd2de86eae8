"""`dvc plots show` and `dvc plots diff` draw their charts with no network: real git and dvc
in a copy of this project, the HTML drawn by headless Chromium with every connection refused,
and the screenshot read back. DVC's own page (its CDN <script> tags) is drawn the same way as a
control: blank, so the network really is off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pixels  # noqa: E402
import sample_pipeline as sample  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HOME: list[Path] = []  # the module's home, set by its project fixture
CDN_PAGE = "<!DOCTYPE html><html><head>{scripts}</head><body>{plot_divs}</body></html>"

pytestmark = pytest.mark.pipeline


def browser() -> str:
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing under CI: .ci/run installs it (apt-get install "
                        "chromium)")
        pytest.skip("needs Chromium (apt-get install chromium) to draw the dvc plots pages")
    return found


def sh(cwd: Path, command: str) -> str:
    return sample.shell(cwd, command, HOME[0] if HOME else None)


def screenshot(page: Path, out: Path, height: int = 2400) -> tuple[int, int]:
    """Chromium draws ``page`` with no network (a dead proxy, every name unresolved);
    (pixels drawn, all pixels) of its screenshot."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-quic", "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                        "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
                        "--hide-scrollbars", "--virtual-time-budget=20000",
                        f"--window-size=1400,{height}", f"--screenshot={out}", page.as_uri()],
                       capture_output=True, timeout=180, check=False)
    assert out.is_file(), f"Chromium wrote no screenshot of {page}"
    return pixels.drawn(out)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """This repository's tracked files committed on main, the page made (dvc repro
    plots_page); the plot files are committed, so nothing else needs to run."""
    browser()
    home = tmp_path_factory.mktemp("home")
    HOME[:] = [home]
    repo = tmp_path_factory.mktemp("plots") / "project"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    sh(repo, "git init -q -b main && git add -A && git commit -qm project")
    sh(repo, "dvc repro -q plots_page")
    sh(repo, "git check-ignore -q plots/offline.html")  # made from the package, not committed
    return repo


def test_plots_show_draws_offline(project, tmp_path):
    sh(project, f"dvc plots show -o {tmp_path / 'show'}")
    page = tmp_path / "show" / "index.html"
    html = page.read_text()
    assert "<script src" not in html and "cdn.jsdelivr" not in html
    assert html.count("vegaEmbed('#") == 5  # three runs' charts, the overlay, the breakdown
    drawn, total = screenshot(page, tmp_path / "show.png")
    assert drawn > 0.03 * total, (drawn, total)
    # the control: DVC's own page, its libraries on a CDN, is blank without a network
    sh(project, f"printf '%s' '{CDN_PAGE}' > cdn.html && "
                f"dvc plots show --html-template cdn.html -o {tmp_path / 'cdn'}")
    assert "cdn.jsdelivr" in (tmp_path / "cdn" / "index.html").read_text()
    assert screenshot(tmp_path / "cdn" / "index.html", tmp_path / "cdn.png")[0] == 0


def test_plots_diff_draws_both_revisions_offline(project, tmp_path):
    curves = project / "plots" / "curves.json"
    before = curves.read_text()
    try:
        curves.write_text(json.dumps([{**r, "NDCG": round(r["NDCG"] * 0.9, 5)}
                                      for r in json.loads(before)]))
        sh(project, f"dvc plots diff main -o {tmp_path / 'diff'}")
    finally:
        curves.write_text(before)
    page = tmp_path / "diff" / "index.html"
    html = page.read_text()
    assert "<script src" not in html and '"rev": "main"' in html
    drawn, total = screenshot(page, tmp_path / "diff.png")
    assert drawn > 0.03 * total, (drawn, total)


def test_images_of_the_pipeline(project, tmp_path):
    written = sh(project, f"skillret-eval plots --format png -o {tmp_path / 'figures'}").split()
    assert sorted(Path(p).name for p in written) == sorted(
        ["runs-bm25-desc.png", "runs-bm25-full.png", "runs-hybrid.png", "breakdown.png",
         "NDCG-K-every-run.png"])
    # the same charts as dvc plots show draws, less the one revision's encodings
    from skillret.render.plots import pipeline_charts, without_revision
    shown = json.loads(sh(project, "dvc plots show --json"))["data"]
    for chart in pipeline_charts(project):
        assert without_revision(shown[chart.id][0]["content"]) == chart.spec, chart.id
    for path in written:
        drawn, total = pixels.drawn(path)
        assert drawn > 0.02 * total, path
