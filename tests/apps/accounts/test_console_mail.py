"""Locally, mail goes to the terminal: the confirmation link printed there works as copied."""

import re

import pytest

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://\S+/accounts/confirm-email/\S+")


def test_the_printed_confirmation_link_confirms_the_address_and_says_so(client, settings, capsys):
    settings.EMAIL_BACKEND = "apps.accounts.mail.ConsoleEmailBackend"
    answer = client.post(
        "/accounts/signup/",
        {
            "email": "newcomer@example.com",
            "password1": "a long pass phrase 42",
            "password2": "a long pass phrase 42",
        },
        follow=True,
    )
    assert "printed in the terminal" in answer.content.decode()
    printed = capsys.readouterr().out
    assert "quoted-printable" not in printed and "=\n" not in printed
    [link] = LINK.findall(printed)
    confirmed = client.get(link, follow=True)
    assert confirmed.status_code == 200
    assert "You have confirmed newcomer@example.com" in confirmed.content.decode()
