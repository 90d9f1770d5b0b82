"""The cost model: $/Mtok, $/GPU-hr, cost at an SLO, capacity plans and claim checks.

formulas, slo, capacity, claims, procurement and charts are pure (no I/O); selectors
reads the database; api (router for /api/v1/costs/) and views (/costs/) serve them.
"""
