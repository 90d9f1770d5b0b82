"""Fresh installs of the built wheel, as a GPU host and a server would make them.

The wheel is built from a copy of the work tree (so no stale build/ folder leaks into it)
and installed into new virtual environments under a temp dir; pip's cache keeps reruns
fast. Nothing from the repository is importable there: commands run outside the checkout
with a clean environment, so a missing runtime dependency fails here, not on a GPU host.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from workers.testing.processes import REPO_ROOT

# What never goes into a build: local environments, caches and outputs.
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "var", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
    ".pytest_cache", ".ruff_cache", ".hypothesis", "node_modules",
)  # fmt: skip


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        """The caller's environment minus anything that would point back into the repo."""
        drop = {"PYTHONPATH", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "PYTHONHOME"}
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env.update(extra)
        return env

    def distributions(self) -> set[str]:
        """Normalised names of every distribution installed in this venv."""
        script = (
            "import importlib.metadata as m, re\n"
            "for d in m.distributions():\n"
            "    print(re.sub(r'[-_.]+', '-', d.metadata['Name']).lower())\n"
        )
        out = subprocess.run(
            [str(self.bin / "python"), "-c", script],
            check=True,
            capture_output=True,
            text=True,
            env=self.env(),
            cwd=self.root,
        ).stdout
        return set(out.split())


def make_venv(root: Path, requirement: str) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    subprocess.run(
        [str(root / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", requirement],
        check=True,
        cwd=root,
    )  # fmt: skip
    return Venv(root)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "inferboard"
    shutil.copytree(REPO_ROOT, source, ignore=IGNORED)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--wheel-dir", str(out), str(source)],
        check=True,
    )  # fmt: skip
    (built,) = out.glob("inferboard-*.whl")
    return built


@pytest.fixture(scope="session")
def worker_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """What deploy/README.md tells a GPU host to install: the base package alone."""
    return make_venv(tmp_path_factory.mktemp("worker") / "venv", str(wheel))


@pytest.fixture(scope="session")
def server_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """What deploy/README.md tells a server to install: the package with its server extra."""
    return make_venv(
        tmp_path_factory.mktemp("server") / "venv", f"inferboard[server] @ {wheel.as_uri()}"
    )


ENV_EXAMPLE = REPO_ROOT / "deploy" / "env.example"


def env_file(path: Path = ENV_EXAMPLE) -> dict[str, str]:
    """KEY=VALUE lines as docker compose and systemd's EnvironmentFile read them."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def production_env() -> dict[str, str]:
    """deploy/env.example with every `change-me` replaced the way its comments say."""
    from cryptography.fernet import Fernet

    values = env_file()
    password = secrets.token_urlsafe(24)
    generated = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ENDPOINT_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "POSTGRES_PASSWORD": password,
        "DATABASE_URL": values["DATABASE_URL"].replace("change-me", password),
    }
    values.update(generated)
    left = [key for key, value in values.items() if "change-me" in value]
    assert not left, f"env.example has placeholders the docs do not say how to fill: {left}"
    return values
