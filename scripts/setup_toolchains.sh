#!/usr/bin/env bash
# Install the external toolchains the analyzers call, into a project-local prefix where possible.
# Idempotent: each step checks first.  Never touches a repository's own node_modules.
set -euo pipefail
PREFIX=${1:-.toolchains}
mkdir -p "$PREFIX"
# The versions come from the lock (pip pins are installed by `make venv`; the npm and system ones here).
LOCK="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/benchsmith/data/toolchains.lock"
pin() { awk -v k="$1" -v n="$2" '$1 == k && $2 == n {print $3}' "$LOCK"; }
JAVA_SERIES=$(pin system javac)

need_apt=()
command -v javac >/dev/null 2>&1 || need_apt+=("openjdk-$JAVA_SERIES-jdk-headless")
command -v mcs >/dev/null 2>&1 || need_apt+=(mono-mcs)
# the .NET Standard assemblies the C# analyzer references when mono has them (System.Numerics, dynamic)
[ -f /usr/lib/mono/4.5/System.Numerics.dll ] || need_apt+=(libmono-system-numerics4.0-cil)
[ -f /usr/lib/mono/4.5/Microsoft.CSharp.dll ] || need_apt+=(libmono-microsoft-csharp4.0-cil)
command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
# Real Go code for tests/integration/test_go_real.py (module sources under /usr/share/gocode).
[ -d /usr/share/gocode/src/github.com/hashicorp/hcl ] || need_apt+=(golang-github-hashicorp-hcl-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "setup: missing ${need_apt[*]}; install them (as root: apt-get install ${need_apt[*]})" >&2
  fi
fi

# A system toolchain of another series than the lock's still works, but its builds may find other examples than
# the same build elsewhere: say so loudly (the card names the difference too).
check_series() {  # name, version found, series pinned
  if [ -n "$2" ] && [ "$2" != "$3" ] && [[ "$2" != "$3".* ]]; then
    echo "setup: WARNING: $1 $2 is on PATH but toolchains.lock pins the $3 series; builds may differ from" \
         "builds made with the pinned one" >&2
  fi
}
if command -v go >/dev/null 2>&1; then
  check_series go "$(GOTOOLCHAIN=local GOENV=off go env GOVERSION 2>/dev/null || true)" "$(pin system go)"
fi
if command -v javac >/dev/null 2>&1; then
  check_series javac "$(javac -version 2>&1 | awk '/^javac / {print $2}')" "$JAVA_SERIES"
fi
if command -v mcs >/dev/null 2>&1; then
  check_series mcs "$(mcs --version 2>/dev/null | awk '{print $NF}')" "$(pin system mcs)"
fi

# TypeScript, pinned, into our own prefix (the analyzer calls $PREFIX/node/node_modules/.bin/tsc).
TS_VERSION=$(pin npm typescript)
if [ ! -x "$PREFIX/node/node_modules/.bin/tsc" ] || ! grep -q "\"version\": \"$TS_VERSION\"" "$PREFIX/node/node_modules/typescript/package.json" 2>/dev/null; then
  if command -v npm >/dev/null 2>&1; then
    mkdir -p "$PREFIX/node"
    echo "setup: npm install typescript@$TS_VERSION into $PREFIX/node"
    (cd "$PREFIX/node" && [ -f package.json ] || echo '{"private": true}' > package.json)
    npm install --prefix "$PREFIX/node" --no-audit --no-fund --silent "typescript@$TS_VERSION"
  else
    echo "setup: npm not found; TypeScript analysis unavailable" >&2
  fi
fi
