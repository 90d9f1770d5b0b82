"""The imports app: peer tools' result files and the InferenceX sync."""

from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "apps.imports"
    label = "imports"
    verbose_name = "Imports of peer tools' result files"
