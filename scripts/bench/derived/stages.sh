#!/usr/bin/env bash
# Where the time of a 320 px, quality 75 preview of large.gif goes, against ffmpeg making the
# same preview (issue 24's build-time goal: ≥ 2× faster than the fastest peer):
#
#   whole     flipbook preview IN --width 320 --quality 75 --output x.webp
#   frames    flipbook frames IN --width 320 --output DIR   (decode, composite, scale, PNG level 1)
#   encode    img2webp -lossy -q 75 -m M [-min_size] DIR/*.png   (libwebp's WebPAnimEncoder alone,
#             on the preview's own frames; M 5 with -min_size is what previews use, 4 what vips
#             and ffmpeg use, 2 the frame routes' setting)
#   ffmpeg    ffmpeg -i IN -vf scale=320:-1 -c:v libwebp_anim -q:v 75 -loop 0 x.webp
#
# Each command runs RUNS times (default 3); the run with the best wall time is reported with its
# user and system CPU seconds (GNU time). WebPAnimEncoder adds frames one after another, so its
# part cannot be spread over cores; the table says what that leaves for the goal.
#
# Usage: FLIPBOOK_BIN=… scripts/bench/derived/stages.sh   (hold /tmp/flipbook-bench.lock)
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived-stages"
in="$inputs/large.gif"
rm -rf "$out" && mkdir -p "$out"

# best CMD…: prints "wall user sys" of the run with the best wall time.
best() {
  local best=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S" -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || { cat "$out/stderr.txt" >&2; return 1; }
    read -r e u s < "$out/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($e < ${best%% *})}"; then best="$e $u $s"; fi
  done
  echo "$best"
}

row() {  # row LABEL COMMAND…
  local label=$1; shift
  read -r e u s <<< "$(best "$@")"
  echo "| $label | $e | $(awk "BEGIN{printf \"%.2f\", $u + $s}") |"
}

frames="$out/frames"
mkdir -p "$frames"
"$bin" frames "$in" --width 320 --output "$frames" >/dev/null
mapfile -t pngs < <(ls "$frames"/*.png | sort)
echo "large.gif: ${#pngs[@]} frames at 320 px; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo
echo "| stage | wall s (best of $runs) | CPU s (user + sys) |"
echo "|---|---:|---:|"
row "flipbook preview (whole)" "$bin" preview "$in" --width 320 --quality 75 --output "$out/flipbook.webp"
row "flipbook frames --width 320 (decode, composite, scale, PNG)" \
  bash -c "rm -rf '$out/f2' && mkdir '$out/f2' && '$bin' frames '$in' --width 320 --output '$out/f2'"
row "img2webp -lossy -q 75 -m 5 -min_size (previews' encoding)" img2webp -min_size -lossy -q 75 -m 5 "${pngs[@]}" -o "$out/m5.webp"
row "img2webp -lossy -q 75 -m 4" img2webp -lossy -q 75 -m 4 "${pngs[@]}" -o "$out/m4.webp"
row "img2webp -lossy -q 75 -m 2" img2webp -lossy -q 75 -m 2 "${pngs[@]}" -o "$out/m2.webp"
row "ffmpeg (whole)" ffmpeg -y -v error -i "$in" -vf scale=320:-1 -c:v libwebp_anim -q:v 75 -loop 0 "$out/ffmpeg.webp"
echo
ls -l "$out"/*.webp | awk '{print "  " $9 ": " $5 " bytes"}'
