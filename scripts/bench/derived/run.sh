#!/usr/bin/env bash
# Previews and storyboards side by side with libvips and ffmpeg (issue 24's goals), on the inputs
# of `make bench-decode` (scripts/make-bench-inputs.sh: large.gif 1280×720×300, small.gif
# 480×270×100, the issue's "typical.gif"):
#
#   preview, 320 px wide, quality 75:
#     flipbook preview IN --width 320 --quality 75 --output x.webp
#     vips thumbnail 'IN[n=-1]' x.webp[Q=75] 320
#     ffmpeg -i IN -vf scale=320:-1 -c:v libwebp_anim -q:v 75 -loop 0 x.webp
#   storyboard, every frame, 160 px tiles, 10 columns, one PNG sheet:
#     flipbook storyboard IN --tile 160 --columns 10 --format png --output DIR
#     vips thumbnail 'IN[n=-1]' strip.v 160, then vips grid strip.v sheet.png TILE_H 10 ROWS
#     ffmpeg -i IN -vf scale=160:-1,tile=10xROWS -frames:v 1 sheet.png
#
# Each command runs RUNS times (default 3); the best wall time and the peak RSS of that run are
# reported (GNU time), with the output's bytes and its ratio to the input's. Frame counts of
# the previews are read back with webpmux -info. Writes bench-out/derived/result.md.
#
# Usage: scripts/bench/derived/run.sh            FLIPBOOK_BIN (default .build/release/flipbook)
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived"
rm -rf "$out" && mkdir -p "$out"

frames_of() { webpmux -info "$1" 2>/dev/null | awk '/Number of frames/ {print $4}' | grep . || echo 1; }

{
echo "| input | product | tool | seconds (best of $runs) | peak RSS MiB | bytes | × input | frames |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for name in large.gif small.gif; do
  in="$inputs/$name"
  size=$(stat -c %s "$in")
  frames=$("$bin" info "$in" --compact | python3 -c 'import json,sys; print(json.load(sys.stdin)["frameCount"])')
  for tool in flipbook vips ffmpeg; do
    x="$out/${name%.gif}-preview-$tool.webp"
    case $tool in
      flipbook) r=$(best "$bin" preview "$in" --width 320 --quality 75 --output "$x") ;;
      vips) r=$(best vips thumbnail "$in[n=-1]" "$x[Q=75]" 320) ;;
      ffmpeg) r=$(best ffmpeg -y -v error -i "$in" -vf scale=320:-1 -c:v libwebp_anim -q:v 75 -loop 0 "$x") ;;
    esac
    read -r s m <<< "$r"
    b=$(stat -c %s "$x")
    echo "| $name | preview 320 px q75 | $tool | $s | $((m / 1024)) | $b | $(awk "BEGIN{printf \"%.3f\", $b / $size}") | $(frames_of "$x") of $frames |"
  done
  tile_h=$(python3 -c "import subprocess,json; m=json.loads(subprocess.check_output(['$bin','info','$in','--compact'])); print(max(1, int((160*m['height'] + m['width']//2)//m['width'])))")
  rows=$(( (frames + 9) / 10 ))
  for tool in flipbook vips ffmpeg; do
    d="$out/${name%.gif}-storyboard-$tool"
    mkdir -p "$d"
    case $tool in
      flipbook) r=$(best "$bin" storyboard "$in" --tile 160 --columns 10 --format png --max-sheet-pixels 100000000 --output "$d") ;;
      vips) r=$(best bash -c "vips thumbnail '$in[n=-1]' '$d/strip.v' 160 && vips grid '$d/strip.v' '$d/0.png' $tile_h 10 $rows") ;;
      ffmpeg) r=$(best ffmpeg -y -v error -i "$in" -vf "scale=160:-1,tile=10x$rows" -frames:v 1 "$d/0.png") ;;
    esac
    read -r s m <<< "$r"
    b=$(stat -c %s "$d/0.png")
    echo "| $name | storyboard 160 px, 10 columns, PNG | $tool | $s | $((m / 1024)) | $b | $(awk "BEGIN{printf \"%.3f\", $b / $size}") | $frames tiles |"
  done
done
} | tee "$out/result.md"
echo "machine: $(nproc) CPUs; flipbook $(git rev-parse --short HEAD); $(vips --version); $(ffmpeg -version | head -1)" | tee -a "$out/result.md"
