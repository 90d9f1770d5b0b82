"""The claims app: published cost claims, re-priced as price sets change and checked against
the stored runs, with subscriptions told when one flips; a member's leaving takes their
addresses out of its email subscriptions."""

from django.apps import AppConfig
from django.db.models.signals import pre_delete


class ClaimsConfig(AppConfig):
    name = "apps.claims"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.accounts.models import Membership

        # As regression alerts' (apps/regressions/apps.py): no alert outlives membership.
        pre_delete.connect(_member_leaves, sender=Membership, dispatch_uid="claims-member-leaves")


def _member_leaves(sender, instance, origin=None, **kwargs) -> None:
    from apps.claims.models import ClaimSubscription
    from apps.regressions.services import recipients_forget

    recipients_forget(ClaimSubscription.objects.all(), membership=instance, origin=origin)
