"""The trust app: reviews for the official board, evidence bundles and public dumps."""

from django.apps import AppConfig


class TrustConfig(AppConfig):
    name = "apps.trust"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.runs.signals import run_settled, runs_settled
        from apps.trust.services import run_rules_on_settle, runs_rules_on_settle

        run_settled.connect(run_rules_on_settle, dispatch_uid="trust-rules")
        runs_settled.connect(runs_rules_on_settle, dispatch_uid="trust-rules-batch")
