#!/usr/bin/env bash
# MP4 (H.264) previews side by side with ffmpeg's libx264 (issue 36's goals), on the inputs of
# `make bench-decode` (large.gif 1280×720×300, small.gif 480×270×100), 320 px wide:
#
#   reference frames: flipbook frames IN --width 320 --output REF      (the service's renditions)
#   flipbook:           flipbook preview IN --width 320 --format mp4 --output x.mp4   (its defaults:
#                       crf 24, preset slower, no B-frames, 4 frame threads)
#   ffmpeg, same frames: ffmpeg -i REF/frame_%04d.png -c:v libx264 -crf 23 -pix_fmt yuv420p x.mp4
#                       (x264's defaults: preset medium, 3 B-frames, threads by core count)
#   ffmpeg, same frames, Flipbook's settings: -crf 24 -preset slower -bf 0 -threads 4
#   ffmpeg, from the GIF: ffmpeg -i IN -vf scale=320:-2:flags=lanczos -c:v libx264 -crf 23
#                       -pix_fmt yuv420p x.mp4                           (build time only)
#
# Each MP4 is decoded back to frames by ffmpeg (-fps_mode passthrough: one picture per sample)
# and compared with the reference frames by ffmpeg's ssim filter in planar RGB (mean SSIM over
# R, G, B and every frame), as avif.sh does. Each command runs RUNS times (default 3), the best
# wall time and that run's peak RSS reported. Writes bench-out/derived-mp4/result.md.
#
# Usage: scripts/bench/derived/mp4.sh            FLIPBOOK_BIN (default .build/release/flipbook)
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived-mp4"
rm -rf "$out" && mkdir -p "$out"

# ssim FILE REFDIR: "frames mean-SSIM" of the video's frames (video_ssim, setup.sh).
ssim() { video_ssim "$@"; }

# encode TOOL IN REF RATE OUT: makes OUT with TOOL (compare_encoders, setup.sh).
encode() {
  case $1 in
    flipbook) best "$bin" preview "$2" --width 320 --format mp4 --output "$5" ;;
    ffmpeg-frames) best ffmpeg -y -v error -framerate "$4" -i "$3/frame_%04d.png" -c:v libx264 -crf 23 -pix_fmt yuv420p "$5" ;;
    ffmpeg-frames-same) best ffmpeg -y -v error -framerate "$4" -i "$3/frame_%04d.png" -c:v libx264 -crf 24 -preset slower -bf 0 -threads 4 -pix_fmt yuv420p "$5" ;;
    ffmpeg-gif) best ffmpeg -y -v error -i "$2" -vf scale=320:-2:flags=lanczos -c:v libx264 -crf 23 -pix_fmt yuv420p "$5" ;;
  esac
}

compare_encoders mp4 flipbook ffmpeg-frames ffmpeg-frames-same ffmpeg-gif
