from django.apps import AppConfig


class AccuracyConfig(AppConfig):
    name = "apps.accuracy"
    label = "accuracy"
