"""TOTP and OIDC single sign-on are allauth's own modules, switched on by settings. The
suite's process runs without them, so a child process starts Django with them on."""

import os
import subprocess
import sys

from workers.testing.processes import REPO_ROOT

CHILD = r"""
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from django.test import Client
login = Client().get("/accounts/login/").content.decode()
assert "Acme SSO" in login, login[-2000:]
from allauth.account.models import EmailAddress
user = get_user_model().objects.create_user("a@example.com", "a@example.com", "pw")
EmailAddress.objects.create(user=user, email="a@example.com", verified=True, primary=True)
client = Client()
signed_in = client.post("/accounts/login/", {"login": "a@example.com", "password": "pw"})
assert signed_in.status_code == 302, signed_in.status_code
totp = client.get("/accounts/2fa/totp/activate/")
if totp.status_code == 302 and "/reauthenticate/" in totp["Location"]:
    # allauth asks for the password again before a security change.
    client.post(totp["Location"], {"password": "pw"})
    totp = client.get("/accounts/2fa/totp/activate/")
assert totp.status_code == 200, (totp.status_code, totp.get("Location"))
assert "otpauth" in totp.content.decode() or "secret" in totp.content.decode().lower()
print("ok")
"""


def test_totp_and_oidc_sign_in_switch_on_from_the_environment(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="apps.settings",
        INFERBOARD_VAR_DIR=str(tmp_path),
        ACCOUNT_MFA="1",
        OIDC_SERVER_URL="http://127.0.0.1:9/realms/acme",
        OIDC_NAME="Acme SSO",
        OIDC_CLIENT_ID="inferboard",
        OIDC_CLIENT_SECRET="s",
        ALLOWED_HOSTS="testserver",
    )
    child = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert child.returncode == 0 and child.stdout.strip() == "ok", child.stderr[-3000:]
