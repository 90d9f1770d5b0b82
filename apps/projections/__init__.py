"""Projections for hardware nobody here owns: roofline + calibration, with measured error."""
