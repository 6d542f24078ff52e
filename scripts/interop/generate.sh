#!/usr/bin/env bash
# Regenerates test/fixtures/interop.json from Python datasketch and simhash-py (see README.md).
#
#   scripts/interop/generate.sh [OUT]          OUT defaults to test/fixtures/interop.json
#
# Environment:
#   INTEROP_PYTHON          CPython >= 3.11 for datasketch (default: python3)
#   INTEROP_SIMHASH_PYTHON  CPython 3.6 to build simhash-py in (default: python3.6 on PATH, else pyenv's 3.6.x)
#   INTEROP_REQUIRE_SIMHASH_PY=1  fail instead of falling back to simhash_ref.py when simhash-py is unavailable
#   INTEROP_FRESH=1         delete and recreate both venvs first
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/test/fixtures/interop.json}"
venv="$root/.venv-interop"
sh_venv="$root/.venv-interop-simhash"
requirements="$here/requirements.txt"
pip_flags=(--quiet --disable-pip-version-check --no-input)

if [[ "${INTEROP_FRESH:-0}" == 1 ]]; then rm -rf "$venv" "$sh_venv"; fi

# 1. datasketch venv
if [[ ! -x "$venv/bin/python" ]]; then
  "${INTEROP_PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "generate.sh: $venv needs CPython >= 3.11 (set INTEROP_PYTHON)" >&2; exit 1; }
"$venv/bin/python" -m pip install "${pip_flags[@]}" -r "$requirements"

# 2. simhash-py venv (CPython 3.6)
is_py36() { "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 6))' >/dev/null 2>&1; }
find_py36() {
  local candidates=() pyenv_root p
  if [[ -n "${INTEROP_SIMHASH_PYTHON:-}" ]]; then candidates+=("$INTEROP_SIMHASH_PYTHON"); fi
  if command -v python3.6 >/dev/null 2>&1; then candidates+=("$(command -v python3.6)"); fi  # may be a pyenv shim
  pyenv_root="$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")"
  candidates+=("$pyenv_root"/versions/3.6*/bin/python3.6)
  for p in "${candidates[@]}"; do
    if [[ -x "$p" ]] && is_py36 "$p"; then echo "$p"; return 0; fi
  done
  return 1
}

simhash_args=(--simhash-reference)
if [[ -x "$sh_venv/bin/python" ]] || py36="$(find_py36)"; then
  if [[ ! -x "$sh_venv/bin/python" ]]; then "$py36" -m venv "$sh_venv"; fi
  # simhash-py builds its bundled C++ (needs g++ and the interpreter's headers)
  if "$sh_venv/bin/python" -m pip install "${pip_flags[@]}" -r "$requirements" \
     && "$sh_venv/bin/python" -c 'import simhash' 2>/dev/null; then
    simhash_args=(--simhash-python "$sh_venv/bin/python")
  else
    echo "generate.sh: simhash-py did not install in $sh_venv" >&2
  fi
else
  echo "generate.sh: no CPython 3.6 found for simhash-py (set INTEROP_SIMHASH_PYTHON)" >&2
fi
if [[ "${simhash_args[0]}" == --simhash-reference ]]; then
  if [[ "${INTEROP_REQUIRE_SIMHASH_PY:-0}" == 1 ]]; then exit 1; fi
  echo "generate.sh: falling back to scripts/interop/simhash_ref.py (recorded in meta.simhash)" >&2
fi

# 3. vectors
PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0 "$venv/bin/python" "$here/generate.py" --out "$out" "${simhash_args[@]}"
