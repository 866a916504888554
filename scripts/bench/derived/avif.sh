#!/usr/bin/env bash
# AVIF previews side by side with ffmpeg's libaom encoder (issue 36's goals), on the inputs of
# `make bench-decode` (large.gif 1280×720×300, small.gif 480×270×100), 320 px wide:
#
#   reference frames: flipbook frames IN --width 320 --output REF      (the service's renditions)
#   flipbook:         flipbook preview IN --width 320 --format avif --output x.avif   (its defaults)
#   ffmpeg, same frames: ffmpeg -i REF/frame_%04d.png -c:v libaom-av1 -crf 35 -cpu-used 6 x.avif
#   ffmpeg, from the GIF: ffmpeg -i IN -vf scale=320:-1:flags=lanczos -c:v libaom-av1 -crf 35
#                         -cpu-used 6 x.avif                           (build time only)
#
# Each preview is decoded back to frames by libavif, as a browser shows it (avif_frames.c), and
# compared with the reference frames by ffmpeg's ssim filter in planar RGB (mean SSIM over R, G,
# B and every frame). ffmpeg's own conversion to RGB is not used: by default it scored the
# full-range file made here about 0.013 lower than an explicit full-range BT.601 conversion
# (small.gif, 2026-11-29), and it is not what a browser does. Each
# command runs RUNS times (default 3), the best wall time and that run's peak RSS reported.
# Writes bench-out/derived-avif/result.md.
#
# Usage: scripts/bench/derived/avif.sh            FLIPBOOK_BIN (default .build/release/flipbook)
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived-avif"
rm -rf "$out" && mkdir -p "$out"

# ssim FILE REFDIR: decodes FILE's frames with libavif (avif_frames.c: the file's CICP honoured,
# as browsers built on libavif decode it) and prints "frames mean-SSIM" (mean_ssim, setup.sh).
cc -O2 scripts/bench/derived/avif_frames.c -o "$out/avif_frames" -lavif
ssim() {
  local dec="$out/decoded" && rm -rf "$dec" && mkdir -p "$dec"
  "$out/avif_frames" "$1" "$dec"
  mean_ssim "$dec" "frame_%04d.ppm" 1 "$2"
}

# encode TOOL IN REF RATE OUT: makes OUT with TOOL (compare_encoders, setup.sh).
encode() {
  case $1 in
    flipbook) best "$bin" preview "$2" --width 320 --format avif --output "$5" ;;
    ffmpeg-frames) best ffmpeg -y -v error -framerate "$4" -i "$3/frame_%04d.png" -c:v libaom-av1 -crf 35 -cpu-used 6 -pix_fmt yuv420p "$5" ;;
    ffmpeg-gif) best ffmpeg -y -v error -i "$2" -vf scale=320:-1:flags=lanczos -c:v libaom-av1 -crf 35 -cpu-used 6 -pix_fmt yuv420p "$5" ;;
  esac
}

compare_encoders avif flipbook ffmpeg-frames ffmpeg-gif
