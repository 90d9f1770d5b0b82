"""The accuracy app: accuracy results and their per-item outcomes."""

from django.apps import AppConfig


class AccuracyConfig(AppConfig):
    name = "apps.accuracy"
    label = "accuracy"

    def ready(self) -> None:
        from apps.accuracy.services import accuracy_store_for_run
        from apps.runs.signals import run_stored

        run_stored.connect(accuracy_store_for_run, dispatch_uid="accuracy-store")
