#!/usr/bin/env bash
# Issue 36's AVIF single frames: what one 320-px frame costs to encode as AVIF against WebP, and
# what it weighs at what SSIM, on the benchmark inputs (large.gif's first 100 frames, small.gif's
# 100), to decide whether `format=auto` on the frame routes offers AVIF.
#
#   frames:   ffmpeg -i IN -vf scale=320:180:flags=lanczos -frames:v 100 -f rawvideo -pix_fmt rgba
#   encoders: frame_cost.c — libavif + libaom (end-usage=q, cq-level 35 = quality 44, 1 thread)
#             at cpu-used 6 (the previews') and 9 (the fastest); libwebp lossy q55, method 2 (the
#             player's frames); each frame encoded by each in turn, so both see the same load
#   SSIM:     each encoded frame decoded (libavif: avif_frames.c; libwebp: dwebp), mean SSIM in
#             planar RGB against the frames (ffmpeg's ssim filter)
#
# Usage: scripts/bench/derived/frame_cost.sh      (writes bench-out/derived-frame-cost/result.md)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$repo"
inputs="$repo/bench-out/inputs"
[ -f "$inputs/large.gif" ] && [ -f "$inputs/small.gif" ] || scripts/make-bench-inputs.sh "$inputs"
out="$repo/bench-out/derived-frame-cost"
rm -rf "$out" && mkdir -p "$out"
cc -O2 scripts/bench/derived/frame_cost.c -o "$out/frame_cost" -lavif -lwebp
cc -O2 scripts/bench/derived/avif_frames.c -o "$out/avif_frames" -lavif

# ssim DIR EXT RAW: mean SSIM (RGB) of DIR's NNNN.EXT frames, decoded, against RAW's frames.
ssim() {
  local dec="$1/decoded-$2" && rm -rf "$dec" && mkdir -p "$dec"
  local file n
  for file in "$1"/*."$2"; do
    n=$(basename "$file" ".$2")
    if [ "$2" = avif ]; then
      mkdir -p "$dec/$n" && "$out/avif_frames" "$file" "$dec/$n" && mv "$dec/$n/frame_0001.ppm" "$dec/$n.ppm" && rmdir "$dec/$n"
    else
      dwebp -quiet "$file" -ppm -o "$dec/$n.ppm"
    fi
  done
  ffmpeg -v info -start_number 1 -i "$dec/%04d.ppm" -f rawvideo -pix_fmt rgba -s 320x180 -i "$3" \
    -lavfi "[0]format=gbrp[a];[1]format=gbrp[b];[a][b]ssim" -f null - 2>&1 | sed -n 's/.*SSIM R:.* All:\([0-9.]*\).*/\1/p'
}

{
  echo "Load at start: $(uptime | sed 's/.*load average: //')"
  echo
  echo "| input | AVIF cpu-used | AVIF CPU ms/frame (mean, median) | WebP CPU ms/frame | AVIF bytes/frame | WebP bytes/frame | AVIF SSIM | WebP SSIM |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for name in large small; do
    raw="$out/$name.rgba"
    ffmpeg -v error -y -i "$inputs/$name.gif" -vf scale=320:180:flags=lanczos -frames:v 100 -f rawvideo -pix_fmt rgba "$raw"
    for speed in 6 9; do
      dir="$out/$name-$speed" && mkdir -p "$dir"
      report=$("$out/frame_cost" "$raw" 320 180 "$speed" 1 "$dir")
      echo "$report" >&2
      avif=$(echo "$report" | sed -n 's/^avif .*cpu ms\/frame mean \([0-9.]*\) median \([0-9.]*\).*bytes\/frame \([0-9]*\)/\1 \2 \3/p')
      webp=$(echo "$report" | sed -n 's/^webp .*cpu ms\/frame mean \([0-9.]*\) median \([0-9.]*\).*bytes\/frame \([0-9]*\)/\1 \2 \3/p')
      read -r am amed ab <<<"$avif"
      read -r wm wmed wb <<<"$webp"
      echo "| $name.gif | $speed | $am, $amed | $wm, $wmed | $ab | $wb | $(ssim "$dir" avif "$raw") | $(ssim "$dir" webp "$raw") |"
    done
  done
  echo
  echo "Load at end: $(uptime | sed 's/.*load average: //')"
} | tee "$out/result.md"
