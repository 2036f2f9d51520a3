"""Summary statistics for repeated runs: mean and 95% confidence half-width.

The interval is Student's t: mean +- t(0.975, n-1) * s / sqrt(n), the usual choice
for a handful of independent seeds.  Quantiles for up to 30 degrees of freedom come
from the standard table; above that the Cornish-Fisher expansion around the normal
quantile is accurate to better than 1e-3.
"""

from __future__ import annotations

import math
from typing import Iterable, Optional

# t(0.975, df) for df = 1..30 (any statistics table).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)
_Z975 = 1.959964


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("need at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_ci95(values: Iterable[float]) -> tuple[Optional[float], Optional[float], int]:
    """(mean, 95% half-width, n) of the finite values; half-width is None for n < 2."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return None, None, 0
    mean = sum(xs) / n
    if n < 2:
        return mean, None, n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, t975(n - 1) * math.sqrt(var / n), n
