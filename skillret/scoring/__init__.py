"""Scoring: the tie rule, judgment lookups, the engine, metric names, profiles, aggregation."""
