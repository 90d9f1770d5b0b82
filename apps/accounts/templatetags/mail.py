"""Template tags for the sign-in pages: whether mail prints to the console (the local default)."""

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def mail_prints_to_console() -> bool:
    """Whether mail goes to the terminal (the local default) rather than to a mailbox."""
    return settings.EMAIL_BACKEND.endswith(("console.EmailBackend", "ConsoleEmailBackend"))
