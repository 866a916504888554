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
# as browsers built on libavif decode it) and prints "frames mean-SSIM" (ffmpeg's ssim filter in
# planar RGB, over R, G, B and every frame).
cc -O2 scripts/bench/derived/avif_frames.c -o "$out/avif_frames" -lavif
ssim() {
  local dec="$out/decoded" && rm -rf "$dec" && mkdir -p "$dec"
  "$out/avif_frames" "$1" "$dec"
  local n && n=$(ls "$dec" | wc -l)
  local all && all=$(ffmpeg -v info -start_number 1 -i "$dec/frame_%04d.ppm" -start_number 0 -i "$2/frame_%04d.png" \
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
  for tool in flipbook ffmpeg-frames ffmpeg-gif; do
    x="$out/${name%.gif}-$tool.avif"
    case $tool in
      flipbook) r=$(best "$bin" preview "$in" --width 320 --format avif --output "$x") ;;
      ffmpeg-frames) r=$(best ffmpeg -y -v error -framerate "$rate" -i "$ref/frame_%04d.png" -c:v libaom-av1 -crf 35 -cpu-used 6 -pix_fmt yuv420p "$x") ;;
      ffmpeg-gif) r=$(best ffmpeg -y -v error -i "$in" -vf scale=320:-1:flags=lanczos -c:v libaom-av1 -crf 35 -cpu-used 6 -pix_fmt yuv420p "$x") ;;
    esac
    read -r s m <<< "$r"
    b=$(stat -c %s "$x")
    read -r n q <<< "$(ssim "$x" "$ref")"
    echo "| $name | $tool | $s | $((m / 1024)) | $b | $(awk "BEGIN{printf \"%.3f\", $b / $size}") | $n of $frames | $q |"
  done
done
} | tee "$out/result.md"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); flipbook $(git rev-parse --short HEAD) ($bin); $(ffmpeg -version | head -1)" | tee -a "$out/result.md"
