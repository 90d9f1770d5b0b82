import os
import subprocess
import sys

CODE = """
import sys, workers.cli, workers.agent
ours = [m for m in sys.modules if m == "apps" or m.startswith("apps.")]
# kombu's JSON helper imports django.utils.functional when Django happens to be installed;
# the agent itself needs no settings, database or app of the server.
print(ours, [m for m in ("django.conf", "django.db", "django.apps") if m in sys.modules])
"""


def test_the_agent_imports_none_of_the_servers_django_code():
    # As on an organization's own host: no Django settings in the environment.
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[] []"
