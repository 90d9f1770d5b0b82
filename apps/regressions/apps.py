"""The regressions app: change points, subscriptions and alerts; a member's leaving takes their
addresses out of the organization's email subscriptions."""

from django.apps import AppConfig
from django.db.models.signals import pre_delete


class RegressionsConfig(AppConfig):
    name = "apps.regressions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.accounts.models import Membership

        # pre_delete, so every way a membership ends counts (removal, leaving, the person's
        # account deleted) and their addresses are still there to be read.
        pre_delete.connect(_member_leaves, sender=Membership, dispatch_uid="alerts-member-leaves")


def _member_leaves(sender, instance, origin=None, **kwargs) -> None:
    from apps.regressions.models import Subscription
    from apps.regressions.services import recipients_forget

    recipients_forget(Subscription.objects.all(), membership=instance, origin=origin)
