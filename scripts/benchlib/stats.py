"""Summaries the reports print: percentiles (linear interpolation) and sizes in MiB."""


def percentile(values, p):
    """The p-th percentile (0–100) of `values`, interpolated between neighbours; NaN when empty."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def mib(n):
    """Bytes as MiB with one decimal, e.g. '12.5'."""
    return f"{n / 2**20:.1f}"
