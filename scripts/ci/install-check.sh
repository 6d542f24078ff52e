#!/usr/bin/env bash
# The README's install lines, checked as a user with only the clone would run them (after `npm install` or
# `npm ci`, which build dist/): `npm pack` then a global install of the tarball, `npm install -g .`, and
# `npx near-dup` in the clone. Each global install goes to its own temporary prefix, so nothing outside
# that folder changes. For each: `near-dup --version` prints the package's version (asked from a folder
# with no package.json, as a user would), and `near-dup sign` signs a text. The packed package is also
# installed as a dependency of a new project (where its --version is its own, not the project's), whose TypeScript (the README's library example) type-checks
# and runs. Exits non-zero on the first failure, naming it.
#
# Run from the clone: bash scripts/ci/install-check.sh
set -euo pipefail

clone="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$clone"
version="$(node -p "require('./package.json').version")"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/near-dup-install-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/elsewhere"
quiet=(--no-audit --no-fund --loglevel=error)

fail() { echo "install check FAILED: $*" >&2; exit 1; }

# $1: how it was installed, $2: the near-dup command to run.
check_command() {
  local how="$1" bin="$2" got sig
  got="$(cd "$tmp/elsewhere" && "$bin" --version)" || fail "$how: near-dup --version exited $?"
  [ "$got" = "$version" ] || fail "$how: near-dup --version printed '$got', expected '$version' (package.json)"
  sig="$(cd "$tmp/elsewhere" && echo '<p>The quick brown fox jumps over the lazy dog</p>' | "$bin" sign --condenser ws:norm-html:sha1:16)" || fail "$how: near-dup sign exited $?"
  node -e 'const s = JSON.parse(process.argv[1]); if (s.tokens !== 9 || s.bands.length === 0) process.exit(1)' "$sig" || fail "$how: near-dup sign printed $sig"
  echo "ok: $how: near-dup --version prints $got, near-dup sign signs"
}

echo "== npm pack, then npm install -g of the tarball"
tarball="$(npm pack --pack-destination "$tmp" "${quiet[@]}" | tail -n 1)"
[ -f "$tmp/$tarball" ] || fail "npm pack did not write a tarball (got '$tarball')"
# The listing is read whole (grep -q would close the pipe early, which pipefail counts as a failure).
tar -tzf "$tmp/$tarball" > "$tmp/listing"
grep -qx 'package/dist/cli/main.js' "$tmp/listing" || fail "$tarball holds no dist/cli/main.js: run npm install (it builds dist/) before packing"
npm install -g --prefix "$tmp/packed" "${quiet[@]}" "$tmp/$tarball"
check_command "npm install -g $tarball" "$tmp/packed/bin/near-dup"

echo "== npm install -g . (from the clone)"
npm install -g --prefix "$tmp/linked" "${quiet[@]}" .
check_command "npm install -g ." "$tmp/linked/bin/near-dup"

echo "== npx near-dup (in the clone)"
got="$(npx --no-install near-dup --version)" || fail "npx near-dup --version exited $?"
[ "$got" = "$version" ] || fail "npx near-dup: --version printed '$got', expected '$version'"
sig="$(echo 'The quick brown fox' | npx --no-install near-dup sign --condenser ws:norm-html:sha1:16)" || fail "npx near-dup sign exited $?"
node -e 'if (JSON.parse(process.argv[1]).tokens !== 4) process.exit(1)' "$sig" || fail "npx near-dup sign printed $sig"
echo "ok: npx near-dup: --version prints $got, sign signs"

echo "== the library API of the README, from the tarball in a new project"
app="$tmp/app"
mkdir -p "$app"
cat > "$app/package.json" <<'JSON'
{ "name": "near-dup-install-check", "private": true, "type": "module" }
JSON
cat > "$app/tsconfig.json" <<'JSON'
{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true, "skipLibCheck": true, "types": ["node"], "outDir": "out" }, "include": ["main.ts"] }
JSON
cat > "$app/main.ts" <<'TS'
import { annotateDocument, createSigner } from 'near-dup';

const doc = annotateDocument({ id: 1, body: '<p>The quick brown fox jumps over the lazy dog</p>' }, { fields: ['body'] });
const sign = createSigner({ condenser: 'ws:norm-html:sha1:128' });
const stored = (doc as Record<string, unknown>).near_dup as { simhash?: string } | undefined;
if (!stored?.simhash || stored.simhash !== sign('The quick brown fox jumps over the lazy dog').simhash) {
  throw new Error(`annotateDocument and createSigner disagree: ${JSON.stringify(stored)}`);
}
console.log('library ok', stored.simhash);
TS
typescript="$(node -p "require('./package.json').devDependencies.typescript")"
node_types="$(node -p "require('./package.json').devDependencies['@types/node']")"
(cd "$app" && npm install "${quiet[@]}" "$tmp/$tarball" "typescript@$typescript" "@types/node@$node_types" >/dev/null) || fail "installing the tarball into a new project"
# npm hoists yargs into this project: near-dup's version is still its own (the project has none).
got="$(cd "$app" && npx --no-install near-dup --version)" || fail "npx near-dup in a project exited $?"
[ "$got" = "$version" ] || fail "near-dup installed in a project: --version printed '$got', expected '$version'"
echo "ok: near-dup installed in a project: --version prints $got"
(cd "$app" && npx --no-install tsc -p tsconfig.json) || fail "the README's library example does not type-check against the installed package"
(cd "$app" && node out/main.js) || fail "the README's library example does not run against the installed package"
echo "install check passed ($version)"
