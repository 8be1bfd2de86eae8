"""The benchmark harness's process runner (benchmarks/bench.py, also fusion_bench.py's): exit
status, the process group killed on timeout. Its timing is the benchmark's own business; here
only that the wait blocks rather than polls (a polled wait added up to 50 ms to each process)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench  # noqa: E402


def test_exit_status_and_timeout(tmp_path):
    with open(tmp_path / "err", "wb") as err:
        assert bench.run_group([sys.executable, "-c", "raise SystemExit(3)"], err, 60) == 3
        assert bench.run_group([sys.executable, "-c", "import time; time.sleep(30)"], err,
                               0.3) == "timeout"
        # a child of the measured process goes with its group
        child = tmp_path / "child"
        assert bench.run_group(["sh", "-c", f"sleep 30 & echo $! > {child}; sleep 30"], err,
                               0.3) == "timeout"
    pid = int(child.read_text())
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid)


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for its reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_the_wait_blocks(monkeypatch, tmp_path):
    waits = []
    real = bench.subprocess.Popen.wait

    def wait(self, timeout=None):
        waits.append(timeout)
        return real(self, timeout)

    monkeypatch.setattr(bench.subprocess.Popen, "wait", wait)
    with open(tmp_path / "err", "wb") as err:
        assert bench.run_group([sys.executable, "-c", "pass"], err, 60) == 0
    assert waits == [None]
