from django.apps import AppConfig
from django.db.models.signals import pre_delete


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from apps.accounts.models import Membership

        pre_delete.connect(_membership_ends, sender=Membership, dispatch_uid="membership-ends")


def _membership_ends(sender, instance, **kwargs) -> None:
    # Whatever ends a membership (member_remove, or the person's account deleted), no token
    # they made keeps working: member_remove has already revoked or reassigned them.
    from apps.accounts.services import tokens_of_departed

    tokens_of_departed(membership=instance)
