"""Summaries the reports print: percentiles (linear interpolation), sizes in MiB, and how far a
ratio of two medians can be trusted (a bootstrap interval)."""
import random
import statistics


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


def median_ratio_interval(numerators, denominators, level=0.9, draws=2000, seed=1):
    """A bootstrap interval of median(numerators) ÷ median(denominators): each side resampled with
    replacement `draws` times, the ratio of the resamples' medians taken, and the central `level`
    of those ratios returned as (low, high). With the 4 runs a side of a bench-serve row, it says
    how far the run-to-run spread alone could move the row's ratio. A fixed seed: the same runs
    give the same interval."""
    rng = random.Random(seed)
    ratios = [
        statistics.median(rng.choices(numerators, k=len(numerators)))
        / statistics.median(rng.choices(denominators, k=len(denominators)))
        for _ in range(draws)]
    tail = 100 * (1 - level) / 2
    return percentile(ratios, tail), percentile(ratios, 100 - tail)
