#!/usr/bin/env bash
# Makes the small sample animations in Samples/ (one per format) with real encoders:
#   Samples/orbit.gif    ImageMagick + gifsicle -O3 (partial frames, transparency)
#   Samples/orbit.webp   img2webp, lossless, animated
#   Samples/orbit.png    apngasm (APNG)
# The service registers them at start-up (storage.libraryDirs), so `make run` then
# `curl localhost:8080/images` shows something at once.
#   usage: scripts/make-samples.sh [OUTDIR]   (needs: imagemagick gifsicle webp apngasm)
set -euo pipefail
out="${1:-$(cd "$(dirname "$0")/.." && pwd)/Samples}"
convert_bin=$(command -v magick || command -v convert)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# 12 frames of a dot orbiting a ring on a transparent 96×96 canvas.
for i in $(seq 0 11); do
  angle=$(awk -v i="$i" 'BEGIN { printf "%.4f", i * 3.14159265 / 6 }')
  x=$(awk -v a="$angle" 'BEGIN { printf "%d", 48 + 30 * cos(a) }')
  y=$(awk -v a="$angle" 'BEGIN { printf "%d", 48 + 30 * sin(a) }')
  hue=$(( i * 30 ))
  "$convert_bin" -size 96x96 xc:none \
    -fill none -stroke '#8899aa' -strokewidth 3 -draw "circle 48,48 48,18" \
    -stroke none -fill "hsl($hue,80%,50%)" -draw "circle $x,$y $((x + 9)),$y" \
    "PNG32:$work/frame_$(printf %02d "$i").png"
done

"$convert_bin" -delay 8 -loop 0 -dispose background "$work"/frame_*.png "$work/orbit-im.gif"
gifsicle -O3 "$work/orbit-im.gif" -o "$out/orbit.gif"
img2webp -loop 0 -lossless -d 80 "$work"/frame_*.png -o "$out/orbit.webp" >/dev/null 2>&1
apngasm "$out/orbit.png" "$work"/frame_*.png 8 100 >/dev/null
ls -l "$out"
