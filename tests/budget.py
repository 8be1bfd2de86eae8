"""How much work the tests do: every test's full count under CI, less while developing.

Two budgets, chosen by the environment (``tests/conftest.py`` loads the hypothesis profile before
any test module is imported, so the counts below are read at decoration time):

- ``CI=true`` (``.ci/run``): profile ``ci``, every property test draws the full count written in
  it (``examples(300)`` is 300), every repeated check runs its full count (``repeats(8)`` is 8);
- otherwise: profile ``dev``, a tenth of each count (at least 10 examples, at least 2 repeats),
  so that ``pytest -m "not pipeline"`` stays a test a developer runs while working;
- ``SKILLRET_HYPOTHESIS=dev|ci|thorough`` overrides either (``thorough``: 16x the full count of
  examples, for a long search before a release).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

CI = os.environ.get("CI", "").strip().lower() == "true"

#: profile -> fraction of each test's full count of examples
SCALE = {"dev": 0.1, "ci": 1.0, "thorough": 16.0}
PROFILE = os.environ.get("SKILLRET_HYPOTHESIS") or ("ci" if CI else "dev")
if PROFILE not in SCALE:
    raise ValueError(f"SKILLRET_HYPOTHESIS={PROFILE!r}: expected one of {', '.join(SCALE)}")


def examples_for(profile: str, full: int) -> int:
    scale = SCALE[profile]
    return round(full * scale) if scale >= 1 else min(full, max(10, round(full * scale)))


def examples(full: int) -> int:
    """The number of examples a property test whose full count is ``full`` draws now."""
    return examples_for(PROFILE, full)


def repeats(full: int) -> int:
    """How many times to repeat a check for a race whose full count is ``full`` (at least 2,
    never more than ``full``)."""
    return full if SCALE[PROFILE] >= 1 else min(full, max(2, round(full * SCALE[PROFILE])))


def load() -> None:
    """Register the three profiles and load the one in force (no deadline: the machine is
    shared and timings are noise; 'too slow' is not a failure either)."""
    for name in SCALE:
        settings.register_profile(name, max_examples=examples_for(name, 100), deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(PROFILE)

