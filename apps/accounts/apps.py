"""The accounts app: organizations, members, API tokens and the audit trail; its signals end
memberships, forget remembered tokens and note the sessions people sign in with."""

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db.models.signals import post_delete, post_save, pre_delete


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from apps.accounts.models import ApiToken, Membership, Organization

        pre_delete.connect(_membership_ends, sender=Membership, dispatch_uid="membership-ends")
        # A removed member's sessions end (members.member_remove): which they are is noted here.
        user_logged_in.connect(_signed_in, dispatch_uid="session-signed-in")
        user_logged_out.connect(_signed_out, dispatch_uid="session-signed-out")
        # Every web process remembers tokens it has read (token_authenticate): any change to
        # a token or its organization, admin edits and cascades included, forgets them all.
        for model in (ApiToken, Organization):
            for signal in (post_save, post_delete):
                uid = f"tokens-changed-{model.__name__}-{id(signal)}"
                signal.connect(_tokens_changed, sender=model, dispatch_uid=uid)


def _membership_ends(sender, instance, **kwargs) -> None:
    # Whatever ends a membership (member_remove, or the person's account deleted), no token
    # they made keeps working: member_remove has already revoked or reassigned them.
    from apps.accounts.services import tokens_of_departed

    tokens_of_departed(membership=instance)


def _tokens_changed(sender, **kwargs) -> None:
    from apps.accounts.services import tokens_version_bump

    tokens_version_bump()


def _signed_in(sender, request, user, **kwargs) -> None:
    from apps.accounts.members import session_signed_in

    session = getattr(request, "session", None)
    session_signed_in(user=user, session_key=getattr(session, "session_key", None))


def _signed_out(sender, request, user, **kwargs) -> None:
    from apps.accounts.members import session_signed_out

    session = getattr(request, "session", None)
    session_signed_out(session_key=getattr(session, "session_key", None))
