#!/usr/bin/env bash
# CI set-up for the container backends: make a container engine answer, bootstrap a Debian base image from
# Debian packages (CI reaches no image registry, only Debian/PyPI/npm), and build the toolchain and sandbox
# images on it (`make images`).
#
# stdout carries only `export NAME=value` lines for .ci/run to eval (engine, base image, build network), printed
# as soon as each is known; every log line goes to stderr.  A failure exits non-zero: .ci/run carries on, and
# the container tests then skip (no engine answers) or fail with the build error (engine up, images missing).
#
# Settings: BENCHSMITH_BASE_SUITE (bookworm), BENCHSMITH_DEBIAN_MIRROR, BENCHSMITH_DEBIAN_SECURITY_MIRROR,
# BENCHSMITH_CONTAINER_ENGINE (docker|podman: try only that one), XDG_CACHE_HOME (debootstrap tarball, logs),
# BENCHSMITH_CA_BUNDLE (this machine's trust store, copied into the base: default /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=${BENCHSMITH_BASE_SUITE:-bookworm}
MIRROR=${BENCHSMITH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${BENCHSMITH_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
CA_BUNDLE=${BENCHSMITH_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$CA_BUNDLE" ] || CA_BUNDLE=
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/benchsmith
LOGS=$CACHE/logs
mkdir -p "$CACHE" "$LOGS"
T0=$SECONDS
log() { printf 'ci_containers [%4ss] %s\n' "$((SECONDS - T0))" "$*" >&2; }
emit() { printf 'export %s=%q\n' "$1" "$2"; }  # for .ci/run's eval

answers() { timeout 30 "$1" info >/dev/null 2>&1; }

APT_UPDATED=
apt_install() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    log "cannot install ${missing[*]}: needs root and apt-get"
    return 1
  fi
  log "apt-get install ${missing[*]}"
  [ -n "$APT_UPDATED" ] || { apt-get update -qq >&2 && APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$LOGS/apt.log" 2>&1 \
    || { tail -n 20 "$LOGS/apt.log" >&2; return 1; }
}

DOCKERD_PID=
start_dockerd() {  # $@: extra dockerd flags.  No bridge and no iptables rules: tool runs use --network none,
  # builds use the host network (BENCHSMITH_BUILD_NETWORK=host), so CI never touches the host's firewall.
  log "starting dockerd $* (log: $LOGS/dockerd.log)"
  # setsid: its own session, so neither this script's exit nor a timeout's group kill takes it down.
  setsid dockerd --bridge=none --iptables=false --ip-masq=false "$@" >"$LOGS/dockerd.log" 2>&1 </dev/null &
  DOCKERD_PID=$!
  local _
  for _ in $(seq 60); do
    answers docker && return 0
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  log "dockerd did not answer; its last lines:"
  tail -n 15 "$LOGS/dockerd.log" >&2
  kill "$DOCKERD_PID" 2>/dev/null || true
  wait "$DOCKERD_PID" 2>/dev/null || true
  return 1
}

ENGINE=
ensure_engine() {
  local want=${BENCHSMITH_CONTAINER_ENGINE:-}
  local e
  for e in ${want:-docker podman}; do
    if command -v "$e" >/dev/null && answers "$e"; then ENGINE=$e; log "$e already answers"; return 0; fi
  done
  if [ "${want:-docker}" = docker ] && apt_install docker.io; then
    if start_dockerd || start_dockerd --storage-driver vfs; then ENGINE=docker; return 0; fi
  fi
  if [ "${want:-podman}" = podman ] && apt_install podman runc catatonit; then
    # Podman (4.3) gives root containers nofile/nproc limits above what runc may set where the host's hard
    # limits are lower (as in this CI's VM: every run fails with "error setting rlimit ... operation not
    # permitted").  Default to the host's own limits instead (nproc at most pid_max).
    if [ ! -e /etc/containers/containers.conf ]; then
      local nproc pid_max
      nproc=$(ulimit -Hu); pid_max=$(cat /proc/sys/kernel/pid_max)
      { [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; } && nproc=$pid_max
      mkdir -p /etc/containers
      printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
        "$(ulimit -Hn)" "$(ulimit -Hn)" "$nproc" "$nproc" >/etc/containers/containers.conf
    fi
    if answers podman; then ENGINE=podman; return 0; fi
    log "podman does not answer with its default storage; trying vfs"
    mkdir -p /etc/containers
    printf '[storage]\ndriver = "vfs"\n' >/etc/containers/storage.conf
    if answers podman; then ENGINE=podman; return 0; fi
  fi
  return 1
}

# The base image recipe.  Its own source text is hashed into the base image's tag, so editing it rebuilds the
# base (and, through BASE_IMAGE, every image on it).
make_rootfs() {  # $1: empty target directory
  local root=$1
  debootstrap --variant=minbase --components=main "$SUITE" "$root" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 \
    || { tail -n 20 "$LOGS/debootstrap.log" >&2; return 1; }
  # As in the official slim images: the suite's updates and security sources, no docs/man pages/locales.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$root/etc/dpkg/dpkg.cfg.d/benchsmith-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
  # This machine's trust store (and its local CAs, which update-ca-certificates would otherwise drop when an
  # image installs ca-certificates): where HTTPS goes through an intercepting proxy, as in this CI, pip inside
  # an image build must trust the same CAs the host does.  apt uses plain http and signed indexes.
  if [ -n "$CA_BUNDLE" ]; then
    install -D -m 644 "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
    if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
      install -d "$root/usr/local/share/ca-certificates"
      install -m 644 /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    fi
  fi
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
    >"$root/etc/apt/apt.conf.d/90benchsmith-no-recommends"
  find "$root/usr/share/doc" -mindepth 2 ! -name copyright -delete 2>/dev/null || true
  rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
    "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/*
}

ensure_base() {
  local hash tarball root
  hash=$( { declare -f make_rootfs; echo "$SUITE $MIRROR $SECURITY_MIRROR"; [ -z "$CA_BUNDLE" ] || cat "$CA_BUNDLE"; } \
    | sha256sum | cut -c1-12)
  BASE="benchsmith-base:$SUITE-$hash"
  if "$ENGINE" image inspect "$BASE" >/dev/null 2>&1; then log "$BASE already present"; return 0; fi
  tarball=$CACHE/base-$SUITE-$hash.tar
  if [ -s "$tarball" ]; then
    log "reusing the cached root filesystem $tarball"
  else
    apt_install debootstrap || return 1
    root=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    log "debootstrap --variant=minbase $SUITE from $MIRROR"
    make_rootfs "$root" || { rm -rf "$root"; return 1; }
    tar --numeric-owner -C "$root" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$root"
  fi
  log "importing the root filesystem as $BASE"
  local changes=(--change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
  # pip reads its own CA bundle unless told; Python's ssl module reads SSL_CERT_FILE
  [ -z "$CA_BUNDLE" ] || changes+=(--change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt'
                                   --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt')
  "$ENGINE" import "${changes[@]}" "$tarball" "$BASE" >&2
}

log "setting up a container engine"
ensure_engine || { log "no container engine could be started; the container tests will skip"; exit 1; }
emit BENCHSMITH_CONTAINER_ENGINE "$ENGINE"
emit BENCHSMITH_BUILD_NETWORK host
log "engine: $ENGINE"
ensure_base || { log "could not bootstrap the base image"; exit 1; }
emit BENCHSMITH_BASE_IMAGE "$BASE"
log "base image: $BASE"
export BENCHSMITH_CONTAINER_ENGINE=$ENGINE BENCHSMITH_BUILD_NETWORK=host BENCHSMITH_BASE_IMAGE=$BASE
make --no-print-directory venv images >&2 || { log "image builds failed"; exit 1; }
log "done: engine, base image and images ready"
