#!/usr/bin/env bash
# WebM (VP9) previews side by side with ffmpeg's libvpx-vp9 (issue 36's goals), on the inputs of
# `make bench-decode` (large.gif 1280×720×300, small.gif 480×270×100), 320 px wide:
#
#   reference frames: flipbook frames IN --width 320 --output REF      (the service's renditions)
#   flipbook:           flipbook preview IN --width 320 --format webm --output x.webm   (its
#                       defaults: quality 42 = cq-level 37 in libvpx's constant-quality mode,
#                       cpu-used 1, 4 threads)
#   ffmpeg, same frames: ffmpeg -i REF/frame_%04d.png -c:v libvpx-vp9 -crf 35 -pix_fmt yuv420p
#                       x.webm  (issue 36's reference: libvpx's constant-quality mode, cpu-used 1,
#                       threads by core count)
#   ffmpeg, same frames, Flipbook's settings: the same with -threads 4
#   ffmpeg, from the GIF: ffmpeg -i IN -vf scale=320:-2:flags=lanczos -c:v libvpx-vp9 -crf 35
#                       -pix_fmt yuv420p x.webm                          (build time only)
#
# Each WebM is decoded back to frames by ffmpeg (-fps_mode passthrough: one picture per block)
# and compared with the reference frames by ffmpeg's ssim filter in planar RGB (mean SSIM over
# R, G, B and every frame), as avif.sh and mp4.sh do. Each command runs RUNS times (default 3),
# the best wall time and that run's peak RSS reported. Writes bench-out/derived-webm/result.md.
#
# Usage: scripts/bench/derived/webm.sh           FLIPBOOK_BIN (default .build/release/flipbook)
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived-webm"
rm -rf "$out" && mkdir -p "$out"

# ssim FILE REFDIR: "frames mean-SSIM" of the video's frames (video_ssim, setup.sh).
ssim() { video_ssim "$@"; }

# encode TOOL IN REF RATE OUT: makes OUT with TOOL (compare_encoders, setup.sh).
encode() {
  case $1 in
    flipbook) best "$bin" preview "$2" --width 320 --format webm --output "$5" ;;
    ffmpeg-frames) best ffmpeg -y -v error -framerate "$4" -i "$3/frame_%04d.png" -c:v libvpx-vp9 -crf 35 -pix_fmt yuv420p "$5" ;;
    ffmpeg-frames-same) best ffmpeg -y -v error -framerate "$4" -i "$3/frame_%04d.png" -c:v libvpx-vp9 -crf 35 -threads 4 -pix_fmt yuv420p "$5" ;;
    ffmpeg-gif) best ffmpeg -y -v error -i "$2" -vf scale=320:-2:flags=lanczos -c:v libvpx-vp9 -crf 35 -pix_fmt yuv420p "$5" ;;
  esac
}

compare_encoders webm flipbook ffmpeg-frames ffmpeg-frames-same ffmpeg-gif
