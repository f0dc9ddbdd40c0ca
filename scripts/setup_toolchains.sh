#!/usr/bin/env bash
# Install the external toolchains the analyzers call, into a project-local prefix where possible.
# Idempotent: each step checks first.  Never touches a repository's own node_modules.
set -euo pipefail
PREFIX=${1:-.toolchains}
mkdir -p "$PREFIX"

need_apt=()
command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
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

# TypeScript, pinned, into our own prefix (the analyzer calls $PREFIX/node/node_modules/.bin/tsc).
TS_VERSION=5.6.3
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
