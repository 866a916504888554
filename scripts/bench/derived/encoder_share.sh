#!/usr/bin/env bash
# Where the CPU of a video/AVIF preview goes, in Flipbook and in ffmpeg making the same file with
# the same encoder and settings from the GIF (issue 36's build-time clause: ≥ 2× ffmpeg). For
# each of MP4 (libx264), WebM (libvpx) and AVIF (libaom), on large.gif and small.gif at 320 px:
#
#   flipbook  flipbook preview IN --width 320 --format F --output x.F       (the service's defaults)
#   ffmpeg    mp4:  ffmpeg -i IN -vf scale=320:-2:flags=lanczos -c:v libx264 -crf 24 -preset slower
#                   -bf 0 -threads 4 -pix_fmt yuv420p x.mp4                 (Flipbook's x264 settings)
#             webm: ffmpeg -i IN -vf scale=320:-2:flags=lanczos -c:v libvpx-vp9 -crf 37 -b:v 0
#                   -cpu-used 1 -threads 4 -pix_fmt yuv420p x.webm          (Flipbook's libvpx settings)
#             avif: ffmpeg -i IN -vf scale=320:-2:flags=lanczos -c:v libaom-av1 -crf 35 -cpu-used 6
#                   -threads 2 -pix_fmt yuv420p x.avif                      (Flipbook's libaom settings,
#                   its threads the cores Flipbook gives libaom here)
#
# Each runs once under `perf record -F 999` (CPU samples of every thread): the samples in the
# encoder's library (libx264 / libvpx / libaom) against all of the program's, with the CPU
# seconds they stand for (samples / 999) and the wall time of that run; the other libraries
# (decoding, compositing, scaling, colour conversion, muxing) listed with their shares. The
# share outside the encoder is all that the same encoder at the same settings leaves to be
# saved: Flipbook's build can be at most (ffmpeg's CPU) / (Flipbook's encoder CPU) times ffmpeg's
# in CPU (Amdahl). Then both commands side by side in one hyperfine run per format and input
# (HYPERFINE_RUNS, default 5, after a warm-up run): mean wall, user + system CPU, and the ratio.
# Writes bench-out/derived-encoder-share/result.md.
#
# Usage: scripts/bench/derived/encoder_share.sh   FLIPBOOK_BIN (default .build/release/flipbook)
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$repo/bench-out/derived-encoder-share"
rm -rf "$out" && mkdir -p "$out"
hz=999

# command FORMAT TOOL IN OUT: prints the command that makes OUT.
command_for() {
  local scale="scale=320:-2:flags=lanczos"
  case $1-$2 in
    *-flipbook) echo "$bin preview $3 --width 320 --format $1 --output $4" ;;
    mp4-ffmpeg) echo "ffmpeg -y -v error -i $3 -vf $scale -c:v libx264 -crf 24 -preset slower -bf 0 -threads 4 -pix_fmt yuv420p $4" ;;
    webm-ffmpeg) echo "ffmpeg -y -v error -i $3 -vf $scale -c:v libvpx-vp9 -crf 37 -b:v 0 -cpu-used 1 -threads 4 -pix_fmt yuv420p $4" ;;
    avif-ffmpeg) echo "ffmpeg -y -v error -i $3 -vf $scale -c:v libaom-av1 -crf 35 -cpu-used 6 -threads 2 -pix_fmt yuv420p $4" ;;
  esac
}

encoder_library() {
  case $1 in mp4) echo libx264 ;; webm) echo libvpx ;; avif) echo libaom ;; esac
}

{
  echo "| format | input | program | wall s | CPU s | in $(printf '%s' 'the encoder') | encoder CPU s | other CPU s | the rest, by library |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---|"
  for format in mp4 webm avif; do
    library=$(encoder_library "$format")
    for name in large.gif small.gif; do
      for tool in flipbook ffmpeg; do
        data="$out/$format-${name%.gif}-$tool.perf"
        read -ra cmd <<< "$(command_for "$format" "$tool" "$inputs/$name" "$out/x.$format")"
        start=$(date +%s.%N)
        perf record -q -F "$hz" -o "$data" -- "${cmd[@]}" >/dev/null 2>"$out/stderr.txt" || { cat "$out/stderr.txt" >&2; exit 1; }
        wall=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $start}")
        perf report -i "$data" --sort dso --stdio -n 2>/dev/null | awk -v lib="$library" -v hz="$hz" -v wall="$wall" \
          -v row="| $format | $name | $tool |" '
          /^#/ || NF < 3 { next }
          { order[++n] = $3; samples[$3] = $2; total += $2; if (index($3, lib) == 1) encoder += $2 }
          END {
            rest = ""
            shown = 0
            for (i = 1; i <= n; i++) {  # perf lists the libraries by their share, largest first
              dso = order[i]
              if (index(dso, lib) == 1 || samples[dso] / total < 0.01) continue
              rest = rest (shown++ ? ", " : "") sprintf("%s %.1f%%", dso, 100 * samples[dso] / total)
            }
            printf "%s %s | %.2f | %.1f%% | %.2f | %.2f | %s |\n", row, wall, total / hz, 100 * encoder / total,
              encoder / hz, (total - encoder) / hz, rest
          }'
      done
    done
  done
} | tee "$out/result.md"
{
  echo
  echo "| format | input | Flipbook wall s (mean ± σ) | ffmpeg wall s | ffmpeg ÷ Flipbook, wall | Flipbook CPU s | ffmpeg CPU s | ffmpeg ÷ Flipbook, CPU |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  for format in mp4 webm avif; do
    for name in large.gif small.gif; do
      json="$out/$format-${name%.gif}-hyperfine.json"
      hyperfine -N -w 1 -r "${HYPERFINE_RUNS:-5}" --export-json "$json" \
        "$(command_for "$format" flipbook "$inputs/$name" "$out/f.$format")" \
        "$(command_for "$format" ffmpeg "$inputs/$name" "$out/g.$format")" >/dev/null
      python3 - "$json" "| $format | $name |" <<'PY'
import json, sys
f, g = json.load(open(sys.argv[1]))["results"]
cpu = lambda r: r["user"] + r["system"]  # hyperfine's means
print(f"{sys.argv[2]} {f['mean']:.3f} ± {f['stddev']:.3f} | {g['mean']:.3f} ± {g['stddev']:.3f} | "
      f"{g['mean'] / f['mean']:.2f}× | {cpu(f):.2f} | {cpu(g):.2f} | {cpu(g) / cpu(f):.2f}× |")
PY
    done
  done
} | tee -a "$out/result.md"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); flipbook $(git rev-parse --short HEAD) ($bin); $(ffmpeg -version | head -1); perf record -F $hz" | tee -a "$out/result.md"
