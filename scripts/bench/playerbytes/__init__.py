"""make bench-player-bytes: the bytes `<flipbook-player>` pulls over the wire for one loop of an
animation, with its defaults, 320 CSS px wide at devicePixelRatio 1, in headless Chromium —
against the size of the file itself (issue 21's bytes goal: ≤ 1.0× for large.gif, ≤ 2.0× for
the typical small.gif). Then, without a browser, full-size lossless WebP frames against the PNG
frames over the decode-bench inputs. See run.py.
"""
