"""The accuracy app: accuracy results and their per-item outcomes."""

from django.apps import AppConfig


class AccuracyConfig(AppConfig):
    name = "apps.accuracy"
    label = "accuracy"
