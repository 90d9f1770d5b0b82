"""Parameter types shared by the routers."""

from typing import Annotated

from pydantic import AllowInfNan

# A number in a query string that must be finite: "nan", "inf" and "1e999" are a 422 naming
# the parameter (pydantic's float accepts them). Query schemas say the same with
# `model_config = ConfigDict(allow_inf_nan=False)`; tests/faults/test_request_shapes.py checks
# every number parameter in the OpenAPI document.
Finite = Annotated[float, AllowInfNan(False)]
