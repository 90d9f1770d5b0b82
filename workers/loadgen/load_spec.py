"""What a load run asks for beyond its scenario's shape: levels, arrivals, prompts' grouping,
stopping and client processes; a job's spec carries it and the CLI's flags state it.

Pydantic only, so the server checks a job against it without importing the load generator;
`workers/loadgen/setup.py` turns it, with a scenario, into the run's `LoadSetup`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Positive = Annotated[int, Field(ge=1)]
PositiveNumber = Annotated[float, Field(gt=0)]


class LoadSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Closed loop: requests in flight per level; open loop (`rates` given): arrivals per
    # second per level, and `concurrency` is not used.
    concurrency: list[Positive] = Field(default_factory=lambda: [1])
    rates: list[PositiveNumber] | None = None
    requests: int | None = Field(None, ge=1, description="measured requests per level")
    duration_s: float | None = Field(None, gt=0, description="seconds of new requests per level")
    warmup: int = Field(0, ge=0, description="warm-up requests per level (not measured)")
    seed: int = 0
    # Open loop: the arrival process (gamma with shape `burstiness`; 1 is Poisson, below 1
    # burstier) and a cap on requests in flight.
    arrival: Literal["poisson", "gamma"] = "poisson"
    burstiness: float = Field(1.0, gt=0)
    max_concurrency: int | None = Field(None, ge=1)
    # Distinct shared prefixes the scenario's prefix-cache hit rate is spread over.
    prefix_groups: int = Field(1, ge=1)
    # Stop the sweep at the first saturated level (SLO broken or throughput flat).
    early_stop: bool = True
    # Client processes sharing each level (a request-bound run only), and when a level is
    # client-bound (None: the load generator's own defaults, workers/loadgen/client_load.py).
    processes: int = Field(1, ge=1)
    # 0 counts any use as the limit (every level client-bound), as the CLI allows.
    client_cpu_limit: float | None = Field(None, ge=0)
    client_lag_limit_ms: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _processes_split_requests(self) -> LoadSpec:
        if self.processes > 1 and self.requests is None:
            raise ValueError("several client processes need a request count, not a duration")
        return self
