"""`make bench-resample`: libvips vs pixman scaling RGBA frames (compare.py)."""
