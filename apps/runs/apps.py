"""The runs app: runs, their points and request records, and the tally the board counts from."""

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "apps.runs"
    label = "runs"
