"""Economics for people who run fleets: margin per GPU-hour and per MW-year, fleets from a
power budget, the cheapest measured configuration under a first-token cap, a TCO feed."""
