# Sourced by the derived-product benchmarks: the repository (made the working directory), the
# flipbook binary (FLIPBOOK_BIN, default the release build), RUNS (default 3) and the decode-bench
# inputs (made by scripts/make-bench-inputs.sh when missing); `best` times a command.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$repo"
bin="${FLIPBOOK_BIN:-.build/release/flipbook}"
runs="${RUNS:-3}"
inputs="$repo/bench-out/inputs"
[ -f "$inputs/large.gif" ] && [ -f "$inputs/small.gif" ] || scripts/make-bench-inputs.sh "$inputs"

# best COMMAND…: runs it RUNS times and prints "seconds peak_kib" of the fastest run (GNU time;
# the caller sets $out, where the timing and stderr files go).
best() {
  local best_s="" best_m=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || { cat "$out/stderr.txt" >&2; return 1; }
    read -r s m < "$out/time.txt"
    if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; best_m=$m; fi
  done
  echo "$best_s $best_m"
}

# mean_ssim DIR PATTERN START REFDIR: prints "frames mean-SSIM" of the decoded frames
# DIR/PATTERN (numbered from START) against REFDIR/frame_%04d.png (numbered from 0): ffmpeg's ssim
# filter in planar RGB, the mean over R, G, B and every frame.
mean_ssim() {
  local n && n=$(ls "$1" | wc -l)
  local all && all=$(ffmpeg -v info -start_number "$3" -i "$1/$2" -start_number 0 -i "$4/frame_%04d.png" \
    -frames:v "$n" -lavfi "[0]format=gbrp[a];[1]format=gbrp[b];[a][b]ssim" -f null - 2>&1 | sed -n 's/.*SSIM R:.* All:\([0-9.]*\).*/\1/p')
  echo "$n $all"
}

# video_ssim FILE REFDIR: decodes the video FILE's frames with ffmpeg, one picture per sample or
# block (-fps_mode passthrough), into $out/decoded and prints "frames mean-SSIM" (mean_ssim): the
# `ssim` of the video benchmarks (mp4.sh, webm.sh).
video_ssim() {
  local dec="$out/decoded" && rm -rf "$dec" && mkdir -p "$dec"
  ffmpeg -v error -i "$1" -fps_mode passthrough -start_number 0 "$dec/frame_%04d.png"
  mean_ssim "$dec" "frame_%04d.png" 0 "$2"
}

# compare_encoders EXT TOOL…: for large.gif and small.gif, the service's 320-px frames as the
# reference (`flipbook frames --width 320`), then for each TOOL the caller's `encode TOOL IN REF
# RATE OUT` (RATE: the first frame's rate, "1000/DELAY"; prints `best`'s "seconds peak_kib") and
# `ssim OUT REF` ("frames mean-SSIM"): one Markdown row each, into $out/result.md.
compare_encoders() {
  local ext=$1 && shift
  {
  echo "| input | tool | seconds (best of $runs) | peak RSS MiB | bytes | × input | frames | mean SSIM (RGB) |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  local name in size ref frames rate tool x r s m b n q
  for name in large.gif small.gif; do
    in="$inputs/$name"
    size=$(stat -c %s "$in")
    ref="$out/${name%.gif}-ref"
    "$bin" frames "$in" --width 320 --output "$ref" >/dev/null
    frames=$(ls "$ref" | wc -l)
    rate=$("$bin" info "$in" --compact | python3 -c 'import json,sys; m=json.load(sys.stdin); print("1000/%d" % m["frames"][0]["delayMs"])')
    for tool in "$@"; do
      x="$out/${name%.gif}-$tool.$ext"
      r=$(encode "$tool" "$in" "$ref" "$rate" "$x")
      read -r s m <<< "$r"
      b=$(stat -c %s "$x")
      read -r n q <<< "$(ssim "$x" "$ref")"
      echo "| $name | $tool | $s | $((m / 1024)) | $b | $(awk "BEGIN{printf \"%.3f\", $b / $size}") | $n of $frames | $q |"
    done
  done
  } | tee "$out/result.md"
  echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); flipbook $(git rev-parse --short HEAD) ($bin); $(ffmpeg -version | head -1)" | tee -a "$out/result.md"
}
