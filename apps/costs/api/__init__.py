"""The cost model through the API, mounted at /api/v1/costs/: one router per topic.

Every answer says which price it used. Inputs the model cannot use get 422 with
{"detail": [{"path": <field>, "message": ...}]}, the same shape as the rest of the API.
"""

from ninja import Router

from apps.costs.api import capacity, claims, prices, runs, slo

router = Router(tags=["costs"])
for topic in (prices, slo, capacity, claims, runs):
    router.add_router("", topic.router)
