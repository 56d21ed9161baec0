# Sourced by ./reproduce and ./test: create or refresh .venv from the pinned lock file (idempotent).
# Re-installs only when requirements.lock or pyproject.toml changed since the last install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SCALABLE_BAYES_VENV:-$ROOT/.venv}"

find_python() {
  for py in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$py" ] || continue
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$py"; return 0
    fi
  done
  echo "error: Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)" >&2
  return 1
}

# pip, minus the machine-specific "Location ... is ignored" index warnings; fails when pip fails.
pip_quiet() {
  "$VENV/bin/python" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location '" || true; }
}

stamp_now="$(cat "$ROOT/requirements.lock" "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"
stamp_file="$VENV/.scalable_bayes_stamp"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp_file" 2>/dev/null)" != "$stamp_now" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    PY="$(find_python)"
    echo "[bootstrap] creating virtual environment $VENV with $("$PY" --version)" >&2
    "$PY" -m venv "$VENV"
  fi
  echo "[bootstrap] installing pinned dependencies from requirements.lock" >&2
  pip_quiet install --quiet --disable-pip-version-check -r "$ROOT/requirements.lock"
  pip_quiet install --quiet --disable-pip-version-check --no-deps -e "$ROOT"
  echo "$stamp_now" > "$stamp_file"
fi

# Local data mirror: use ../shared/data beside the project when present and nothing else is set.
if [ -z "${SCALABLE_BAYES_MIRROR:-}" ] && [ -d "$ROOT/../shared/data" ]; then
  export SCALABLE_BAYES_MIRROR="$(cd "$ROOT/../shared/data" && pwd)"
fi
export PATH="$VENV/bin:$PATH"
# Numba's on-disk cache lives beside the sources (__pycache__), shared by every Snakemake job.
