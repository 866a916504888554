"""Flipbook's benchmarks and load tests, one folder each; each folder's __main__.py is what its
`make` target runs, as `PYTHONPATH=scripts python3 -m bench.<name>` (see mk/*.mk). What they
share lives in scripts/benchlib, not in each other's folders.

  playback      make bench-playback     players through the frame cache
  serve         make bench-serve        cached frames vs nginx; cold first frames (+ body_paths)
  http          make bench-http         HTTPServer's test server vs nginx
  decode        make bench-decode       decoding vs ImageMagick, libvips, ffmpeg, Pillow
  soak          make soak               a mixed load for N minutes
  kill_test     make kill-test          uploads under SIGKILL
  backpressure  make bench-backpressure clients that never read
  hostile       make bench-hostile      49 MP frames at many decode threads
  cold_replica  make bench-cold-replica cold first frame on another replica, fs vs s3
"""
