#!/usr/bin/env bash
# Installs the Debian packages Flipbook needs that are missing, and only those.
#   scripts/install-deps.sh build      libraries needed to compile and run (libcurl: the source fetcher;
#                                        libavif with libaom: AVIF previews; libx264: MP4 previews;
#                                        libvpx: WebM previews;
#                                        libsqlite3: the listing index)
#   scripts/install-deps.sh test       + the encoders the tests use to make inputs, python3-venv
#                                        for the S3 test tools (moto, boto3: mk/s3.mk), and ffprobe
#                                        (ffmpeg), which reads MP4 previews' frame times back
#   scripts/install-deps.sh bench      + the peer tools the benchmarks compare against (libvips-dev:
#                                        make bench-resample calls libvips as a peer; Flipbook does not)
#   scripts/install-deps.sh topology   + nginx and python3 for `make topology-test`
#   scripts/install-deps.sh soak       + the playback inputs' encoders and matplotlib for `make soak`
#   scripts/install-deps.sh deploy     + docker-compose (1.29, to validate the compose file),
#                                        nginx and python3-venv for `make deploy-lint`
#   scripts/install-deps.sh container  + podman, buildah, podman-compose and runc (with netavark
#                                        and aardvark-dns, its network stack; catatonit, the pause
#                                        binary `podman kube play` builds its pause image from),
#                                        debootstrap and python3-venv for `make container-image`/
#                                        `container-test`
#   scripts/install-deps.sh browser    + headless Chromium and its WebDriver, and Firefox ESR, for
#                                        `make browser-test`
#   scripts/install-deps.sh conformance + Chromium and every encoder `make conformance-matrix` runs
set -euo pipefail

build=(libgif-dev libwebp-dev libpng-dev zlib1g-dev libdeflate-dev libpixman-1-dev libcurl4-openssl-dev libsqlite3-dev libavif-dev libx264-dev libvpx-dev pkg-config)
test=(gifsicle webp imagemagick apngasm curl python3 python3-venv ffmpeg)
bench=(ffmpeg libvips-tools libvips-dev webp python3-pil python3-numpy hyperfine wrk nginx apngasm procps time)
topology=(nginx curl python3 python3-venv iproute2)
soak=(ffmpeg gifsicle webp apngasm python3 python3-matplotlib)
deploy=(nginx python3 python3-venv docker-compose)
container=(podman buildah podman-compose runc netavark aardvark-dns catatonit iptables uidmap debootstrap python3 python3-venv binutils)
browser=(chromium chromium-driver firefox-esr python3 python3-venv)
conformance=(chromium imagemagick graphicsmagick gifsicle ffmpeg webp apngasm apngopt python3-pil python3-numpy libvips-tools)

want=("${build[@]}")
for group in "$@"; do
  case "$group" in
    build) ;;
    test) want+=("${test[@]}") ;;
    bench) want+=("${test[@]}" "${bench[@]}") ;;
    topology) want+=("${topology[@]}") ;;
    soak) want+=("${soak[@]}") ;;
    deploy) want+=("${deploy[@]}") ;;
    container) want+=("${container[@]}") ;;
    browser) want+=("${browser[@]}") ;;
    conformance) want+=("${conformance[@]}") ;;
    *) echo "install-deps: unknown group '$group' (build, test, bench, topology, soak, deploy, container, browser, conformance)" >&2; exit 2 ;;
  esac
done

missing=()
for pkg in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
