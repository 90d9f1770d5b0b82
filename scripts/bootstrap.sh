# Sourced by scripts/run and scripts/test: finds Python >= 3.12, makes .venv, installs the project.
# Set INFERBOARD_PYTHON to choose the interpreter yourself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

python_ok() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; }

find_python() {
  local candidate
  for candidate in "${INFERBOARD_PYTHON:-}" python3.13 python3.12 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 && python_ok "$(command -v "$candidate")"; then
      command -v "$candidate"; return 0
    fi
  done
  # pyenv installs interpreters without putting them on PATH.
  if command -v pyenv >/dev/null 2>&1; then
    local version
    for version in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.(1[2-9]|[2-9][0-9])(\.|$)' | sort -Vr); do
      candidate="$(pyenv root)/versions/$version/bin/python3"
      if [ -x "$candidate" ] && python_ok "$candidate"; then echo "$candidate"; return 0; fi
    done
  fi
  return 1
}

if ! [ -x .venv/bin/python ] || ! python_ok .venv/bin/python; then
  if ! PYTHON="$(find_python)"; then
    echo "inferboard needs Python 3.12 or newer and found none." >&2
    echo "Install one (e.g. 'apt-get install python3.12', 'pyenv install 3.12', or python.org)," >&2
    echo "or point INFERBOARD_PYTHON at it, then run this command again." >&2
    exit 1
  fi
  echo "Creating .venv with $PYTHON" >&2
  rm -rf .venv
  "$PYTHON" -m venv .venv
fi

# Reinstall only when the dependency list changed.
STAMP=".venv/.inferboard-installed"
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  echo "Installing inferboard and its dependencies into .venv (pip cache makes reruns fast)..." >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[server,dev]"
  echo "$WANT" > "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"
mkdir -p var
