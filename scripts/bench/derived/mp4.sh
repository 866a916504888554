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

# ssim FILE REFDIR: prints "frames mean-SSIM".
ssim() {
  local dec="$out/decoded" && rm -rf "$dec" && mkdir -p "$dec"
  ffmpeg -v error -i "$1" -fps_mode passthrough -start_number 0 "$dec/frame_%04d.png"
  local n && n=$(ls "$dec" | wc -l)
  local all && all=$(ffmpeg -v info -start_number 0 -i "$dec/frame_%04d.png" -start_number 0 -i "$2/frame_%04d.png" \
    -frames:v "$n" -lavfi "[0]format=gbrp[a];[1]format=gbrp[b];[a][b]ssim" -f null - 2>&1 | sed -n 's/.*SSIM R:.* All:\([0-9.]*\).*/\1/p')
  echo "$n $all"
}

{
echo "| input | tool | seconds (best of $runs) | peak RSS MiB | bytes | × input | frames | mean SSIM (RGB) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for name in large.gif small.gif; do
  in="$inputs/$name"
  size=$(stat -c %s "$in")
  ref="$out/${name%.gif}-ref"
  "$bin" frames "$in" --width 320 --output "$ref" >/dev/null
  frames=$(ls "$ref" | wc -l)
  rate=$("$bin" info "$in" --compact | python3 -c 'import json,sys; m=json.load(sys.stdin); print("1000/%d" % m["frames"][0]["delayMs"])')
  for tool in flipbook ffmpeg-frames ffmpeg-frames-same ffmpeg-gif; do
    x="$out/${name%.gif}-$tool.mp4"
    case $tool in
      flipbook) r=$(best "$bin" preview "$in" --width 320 --format mp4 --output "$x") ;;
      ffmpeg-frames) r=$(best ffmpeg -y -v error -framerate "$rate" -i "$ref/frame_%04d.png" -c:v libx264 -crf 23 -pix_fmt yuv420p "$x") ;;
      ffmpeg-frames-same) r=$(best ffmpeg -y -v error -framerate "$rate" -i "$ref/frame_%04d.png" -c:v libx264 -crf 24 -preset slower -bf 0 -threads 4 -pix_fmt yuv420p "$x") ;;
      ffmpeg-gif) r=$(best ffmpeg -y -v error -i "$in" -vf scale=320:-2:flags=lanczos -c:v libx264 -crf 23 -pix_fmt yuv420p "$x") ;;
    esac
    read -r s m <<< "$r"
    b=$(stat -c %s "$x")
    read -r n q <<< "$(ssim "$x" "$ref")"
    echo "| $name | $tool | $s | $((m / 1024)) | $b | $(awk "BEGIN{printf \"%.3f\", $b / $size}") | $n of $frames | $q |"
  done
done
} | tee "$out/result.md"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); flipbook $(git rev-parse --short HEAD) ($bin); $(ffmpeg -version | head -1)" | tee -a "$out/result.md"
