#!/usr/bin/env bash
# Makes the two base images the Dockerfile's build arguments name, from Debian packages and the
# installed Swift toolchain, for machines that reach no image registry (Docker Hub users pass
# nothing: the Dockerfile's defaults are the official images these stand in for).
#
#   localhost/flipbook-debian:bookworm-slim   RUNTIME_IMAGE: `debootstrap --variant=minbase
#                                             bookworm` trimmed as debian:bookworm-slim is
#                                             (no docs, man pages or locales; no apt lists)
#   localhost/flipbook-swift:bookworm         SWIFT_IMAGE: the above + the toolchain's usr/ from
#                                             $SWIFT_ROOT (without the debugger, the IDE servers
#                                             and docc) + what `swift build` needs from Debian +
#                                             the Swift package mirror with git's rewrite rules
#                                             (when $SWIFT_PACKAGES exists), so that
#                                             `swift package resolve` of github.com URLs works
#                                             with no network
#
# An image that exists and carries this script's recipe label is reused; pass --force to make
# both again. Prints the two image names. Needs root, debootstrap, podman and Debian's mirror.
#   scripts/container/base-images.sh [--force]
# Environment: PODMAN (the podman command with its flags), DEBIAN_MIRROR, SWIFT_ROOT (default
# /opt/swift), SWIFT_PACKAGES (default /opt/swift-packages), WORK (scratch directory).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PODMAN="${PODMAN:-podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SWIFT_ROOT="${SWIFT_ROOT:-/opt/swift}"
SWIFT_PACKAGES="${SWIFT_PACKAGES:-/opt/swift-packages}"
WORK="${WORK:-$(pwd)/.build-container}"
RUNTIME_BASE=localhost/flipbook-debian:bookworm-slim
SWIFT_BASE=localhost/flipbook-swift:bookworm
force=0
[ "${1:-}" = "--force" ] && force=1

# The recipe: this script and the Swift base's Containerfile. A change to either remakes both.
recipe="$(cat "$0" "$here/swift-base.Containerfile" | sha256sum | cut -c1-16)"
swift_version="$("$SWIFT_ROOT/usr/bin/swift" --version 2>/dev/null | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -1)"

log() { echo "base-images: $*" >&2; }

current() {  # $1 image, $2 wanted label value → exit 0 when it exists with that label
  [ "$force" -eq 0 ] || return 1
  local have
  have="$($PODMAN image inspect --format '{{index .Labels "flipbook.recipe"}}' "$1" 2>/dev/null)" || return 1
  [ "$have" = "$2" ]
}

make_runtime_base() {
  local root="$WORK/rootfs"
  rm -rf "$root"
  mkdir -p "$root"
  log "debootstrap --variant=minbase bookworm ($DEBIAN_MIRROR)"
  debootstrap --variant=minbase bookworm "$root" "$DEBIAN_MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
  # What debian:bookworm-slim carries: the updates and security suites, no documentation or
  # translations installed now or later (dpkg path-excludes, as debuerreotype's slimify sets),
  # apt's lists and caches removed after each install.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $DEBIAN_MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${DEBIAN_MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  cat >"$root/etc/dpkg/dpkg.cfg.d/flipbook-slim" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
DPKG
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
  printf 'Acquire::Languages "none";\n' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
    >"$root/etc/apt/apt.conf.d/docker-no-recommends"
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{man,groff,info,lintian,linda,locale}/*
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/log/*.log "$root"/var/log/apt/* "$root"/tmp/* "$root"/root/.cache
  : >"$root/etc/resolv.conf"
  : >"$root/etc/hostname"
  log "importing $RUNTIME_BASE"
  tar --numeric-owner -C "$root" -c . | $PODMAN import \
    --change 'CMD ["bash"]' --change "LABEL flipbook.recipe=$recipe" \
    --message "debootstrap --variant=minbase bookworm, slimmed (scripts/container/base-images.sh)" \
    - "$RUNTIME_BASE" >/dev/null
  rm -rf "$root"
}

make_swift_base() {
  log "building $SWIFT_BASE (Swift $swift_version from $SWIFT_ROOT)"
  local context="$WORK/swift-context" mirror_args=()
  rm -rf "$context"
  mkdir -p "$context"
  cp "$here/swift-base.Containerfile" "$context/Containerfile"
  [ -d "$SWIFT_PACKAGES" ] && mirror_args=(--volume "$SWIFT_PACKAGES:/mirror:ro")
  $PODMAN build --layers=false --network host \
    --volume "$SWIFT_ROOT/usr:/toolchain:ro" "${mirror_args[@]}" \
    --build-arg "BASE=$RUNTIME_BASE" --build-arg "RECIPE=$recipe" --build-arg "SWIFT_VERSION=$swift_version" \
    --tag "$SWIFT_BASE" "$context" >"$WORK/swift-base.log" 2>&1 \
    || { tail -30 "$WORK/swift-base.log" >&2; exit 1; }
  rm -rf "$context"
}

mkdir -p "$WORK"
if current "$RUNTIME_BASE" "$recipe"; then
  log "reusing $RUNTIME_BASE"
else
  make_runtime_base
fi
if current "$SWIFT_BASE" "$recipe"; then
  log "reusing $SWIFT_BASE"
else
  make_swift_base
fi
echo "$RUNTIME_BASE"
echo "$SWIFT_BASE"
