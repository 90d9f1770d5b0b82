"""Accuracy checks against OpenAI-compatible endpoints: protocols, extraction, statistics, runner.

Nothing here imports Django; GPU hosts install the worker without the server.
"""
