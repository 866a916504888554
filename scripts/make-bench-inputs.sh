#!/usr/bin/env bash
# Makes the inputs of `make bench-decode`, deterministically, with real encoders:
#
#   small.gif            480×270, 100 frames, gifsicle -O3 (partial frames, transparency optimisation)
#   large.gif           1280×720, 300 frames, gifsicle -O3
#   small-lossy.webp     the same animations as animated WebP, lossy (img2webp -lossy -q 75 -m 4)
#   large-lossy.webp
#   small-lossless.webp  the small one as lossless animated WebP too (img2webp -lossless -m 4)
#   small.apng           the same animations as APNG (apngasm, zlib; ffmpeg's apng muxer only if
#   large.apng           apngasm fails — the script says so)
#
# The scene: a still Mandelbrot-set background (ffmpeg's `mandelbrot` source, thousands of colours)
# with a moving window of ffmpeg's `testsrc2` (colour bars, a moving gradient, noise, a clock) one
# third of the canvas wide; only the part of the frame the window leaves or enters changes, as in a
# sticker, a UI recording or a banner. 25 frames/s (40 ms per frame).
#
# GIFs: one global palette over all frames (ffmpeg palettegen), ordered (Bayer) dithering so that
# pixels that do not change keep their index, then `gifsicle -O3`. WebP and APNG are encoded from
# the same true-colour source frames (not from the GIF's 256 colours).
#
# Usage: scripts/make-bench-inputs.sh [DIR]      (default bench-out/inputs)
# Idempotent: an input is rebuilt only when it is missing or this script or the encoders changed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out="${1:-$repo/bench-out/inputs}"
# ImageMagick is not needed to make the inputs, but anything here that calls it must get limits
# high enough for a 1280×720×300 animation (Debian's policy allows 256 MiB and 128 MP).
export MAGICK_CONFIGURE_PATH="$here/bench/imagemagick"

die() { echo "make-bench-inputs: $*" >&2; exit 1; }
for tool in ffmpeg gifsicle img2webp apngasm sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing: run scripts/install-deps.sh bench"
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"

# What the outputs depend on: this script and the encoders' versions.
versions() {
  ffmpeg -version 2>&1 | head -1 || true
  gifsicle --version 2>&1 | head -1 || true
  img2webp -version 2>&1 | head -1 || true
  { apngasm 2>&1 || true; } | grep 'APNG Assembler' || true
}
fingerprint="$( { cat "${BASH_SOURCE[0]}"; versions; } | sha256sum | cut -c1-16)"
stamp="$out/.fingerprint"
want=(small.gif large.gif small-lossy.webp large-lossy.webp small-lossless.webp small.apng large.apng)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
  all=1
  for f in "${want[@]}"; do [ -s "$out/$f" ] || all=0; done
  if [ $all = 1 ]; then echo "make-bench-inputs: inputs in $out are up to date"; exit 0; fi
fi
rm -f "$stamp"

work="$(mktemp -d "${TMPDIR:-/tmp}/flipbook-bench-inputs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }

# make NAME WIDTH HEIGHT FRAMES
make_set() {
  local name=$1 w=$2 h=$3 n=$4
  local sw=$((w / 3 / 2 * 2)) sh=$((h / 3 / 2 * 2)) margin=$((w / 24))
  local src="$work/$name-src"
  mkdir -p "$src"
  echo "make-bench-inputs: $name: ${w}x${h}, $n source frames" >&2
  # Background: the first frame of `mandelbrot`, held. Foreground: testsrc2 moving on a
  # Lissajous path whose period is the animation's length (so the animation loops smoothly).
  ff -f lavfi -i "mandelbrot=size=${w}x${h}:rate=25:start_scale=1.5:end_scale=1.5,trim=end_frame=1,loop=loop=-1:size=1,setpts=N/25/TB[bg];
testsrc2=size=${sw}x${sh}:rate=25[fg];
[bg][fg]overlay=x='${margin}+(W-w-2*${margin})*(1-cos(2*PI*n/${n}))/2':y='${margin}+(H-h-2*${margin})*(1-cos(4*PI*n/${n}))/2':shortest=1,format=rgb24" \
     -frames:v "$n" -bitexact "$src/%04d.png"
  local count
  count=$(find "$src" -name '*.png' | wc -l)
  [ "$count" -eq "$n" ] || die "$name: ffmpeg made $count frames, not $n"

  # GIF: global palette, ordered dithering, then gifsicle's strongest optimisation.
  ff -framerate 25 -i "$src/%04d.png" -vf "palettegen=max_colors=256:stats_mode=full:reserve_transparent=0" \
     -bitexact "$work/$name-palette.png"
  ff -framerate 25 -i "$src/%04d.png" -i "$work/$name-palette.png" \
     -lavfi "paletteuse=dither=bayer:bayer_scale=3:diff_mode=rectangle" -loop 0 -bitexact "$work/$name-raw.gif"
  gifsicle -O3 --no-comments --no-names --no-extensions --loopcount=forever "$work/$name-raw.gif" -o "$work/$name.gif"
  mv "$work/$name.gif" "$out/$name.gif"

  # Animated WebP, lossy; and lossless for the small set.
  local frames=()
  for f in "$src"/*.png; do frames+=(-d 40 "$f"); done
  img2webp -loop 0 -lossy -q 75 -m 4 "${frames[@]}" -o "$work/$name-lossy.webp" >/dev/null 2>&1 \
    || die "$name: img2webp -lossy failed"
  mv "$work/$name-lossy.webp" "$out/$name-lossy.webp"
  if [ "$name" = small ]; then
    img2webp -loop 0 -lossless -m 4 "${frames[@]}" -o "$work/$name-lossless.webp" >/dev/null 2>&1 \
      || die "$name: img2webp -lossless failed"
    mv "$work/$name-lossless.webp" "$out/$name-lossless.webp"
  fi

  # APNG: apngasm (frame delay 1/25 s, loop forever, zlib). ffmpeg's apng muxer if it fails.
  if ! (cd "$src" && apngasm "$work/$name.apng" 0001.png 1 25 -z0 >"$work/$name-apngasm.log" 2>&1) \
     || [ ! -s "$work/$name.apng" ]; then
    echo "make-bench-inputs: $name: apngasm failed (see below); falling back to ffmpeg's apng muxer" >&2
    tail -5 "$work/$name-apngasm.log" >&2 || true
    ff -framerate 25 -i "$src/%04d.png" -plays 0 -f apng -bitexact "$work/$name.apng"
  fi
  mv "$work/$name.apng" "$out/$name.apng"
  rm -rf "$src"
}

make_set small 480 270 100
make_set large 1280 720 300

echo "$fingerprint" >"$stamp"
(cd "$out" && sha256sum "${want[@]}" >SHA256SUMS && ls -l "${want[@]}") >&2
echo "make-bench-inputs: inputs written to $out"
