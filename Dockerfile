# syntax=docker/dockerfile:1
# Flipbook container image: built with the official Swift toolchain image, run on slim Debian.
#   docker build -t flipbook .
#   docker run --rm -p 8080:8080 -v flipbook-data:/data flipbook
# The runtime stage holds the statically linked Swift binary plus, from Debian: giflib, libwebp
# (decoding, and WebP frames through libwebpmux), libpng, zlib (decoding), libdeflate (compressing
# the PNGs Flipbook writes), pixman (enlarging renditions; reductions are Flipbook's own C),
# libcurl (the outbound HTTP client of storage.backend=s3 and of the source fetcher, through its C
# API), SQLite (the listing index of storage.backend=fs), libavif with libaom (AVIF previews) and
# libx264 (MP4 previews; GPL-2.0-or-later, docs/DEPLOYMENT.md "Licences") and libvpx (WebM
# previews' VP9);
# libstdc++6, libgcc-s1 and libc6 are
# already in debian:bookworm-slim (apt needs them). docs/DEPLOYMENT.md says what each package is
# for. The build fails if `ldd` finds any library missing.

ARG SWIFT_IMAGE=swift:6.2-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends \
        libgif-dev libwebp-dev libpng-dev zlib1g-dev libdeflate-dev libcurl4-openssl-dev \
        libpixman-1-dev libsqlite3-dev libavif-dev libx264-dev libvpx-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Dependencies first: this layer is reused until Package.swift changes.
COPY Package.swift ./
RUN swift package resolve

COPY . .
# The Swift runtime and FoundationEssentials (no ICU: the service never imports Foundation) are
# linked in statically, so the runtime image needs no Swift libraries. The installed copy is
# stripped of its symbol tables and debug information (66.3 MB → 26.0 MB).
RUN --mount=type=cache,target=/src/.build,sharing=locked \
    swift build -c release --static-swift-stdlib --product flipbook \
    && install -D -s -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/flipbook" \
        /out/flipbook

# ---------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends \
        libgif7 libwebp7 libwebpdemux2 libwebpmux3 libpng16-16 zlib1g libdeflate0 libcurl4 \
        libpixman-1-0 libsqlite3-0 libavif15 libx264-164 libvpx7 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 flipbook \
    && useradd --system --uid 10001 --gid flipbook --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin flipbook \
    && install -d -o flipbook -g flipbook -m 0750 /data

COPY --from=build /out/flipbook /usr/local/bin/flipbook
# Every shared library the binary needs resolves here, or the build stops.
RUN if ldd /usr/local/bin/flipbook | grep 'not found'; then exit 1; fi \
    && flipbook --help >/dev/null

WORKDIR /app
COPY Config/ /app/Config/
COPY Samples/ /app/Samples/
# The browser pages and the <flipbook-player> component: plain files, read once at start-up
# (ui.dir), so the static binary needs no resource bundle beside it.
COPY web/ /app/web/

# Configuration by environment (FLIPBOOK_<SECTION>_<KEY>, see docs/DEPLOYMENT.md).
ENV FLIPBOOK_SERVER_HOST=0.0.0.0 \
    FLIPBOOK_SERVER_PORT=8080 \
    FLIPBOOK_STORAGE_DATADIR=/data \
    FLIPBOOK_STORAGE_LIBRARYDIRS=/app/Samples \
    FLIPBOOK_UI_DIR=/app/web

VOLUME /data
EXPOSE 8080
USER flipbook:flipbook
STOPSIGNAL SIGTERM
# `flipbook healthcheck` GETs /healthz on $FLIPBOOK_SERVER_PORT; no curl in the image.
HEALTHCHECK --interval=10s --timeout=5s --start-period=15s --retries=3 \
    CMD ["flipbook", "healthcheck", "--timeout", "3"]

ENTRYPOINT ["flipbook"]
CMD ["serve", "--config", "/app/Config/flipbook.json"]
