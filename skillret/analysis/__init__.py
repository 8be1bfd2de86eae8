"""Tests, comparisons, breakdowns and fusion of scored runs; prints nothing. Internal."""
