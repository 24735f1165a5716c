"""Small statistics for simulations: confidence intervals, tests, streaming summaries.

Pure functions and tiny accumulators with no dependencies: Wilson intervals for rates,
a two-proportion z-test, Welch's t-test (with the Student t distribution computed from the
regularized incomplete beta function), and `Distribution`, which summarises a stream of
numbers (count, mean, variance by Welford's method, exact quantiles from value counts) in
memory bounded by the number of distinct values, whatever the number of games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def wilson(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (Wilson 1927)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): the one-sided p-value of k successes."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))


def normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def two_proportion_p(x1: float, n1: int, x2: float, n2: int) -> float:
    """Two-sided p-value that two proportions differ (pooled z-test)."""
    if n1 == 0 or n2 == 0:
        return 1.0
    p = (x1 + x2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0 if x1 / n1 == x2 / n2 else 0.0
    z = (x1 / n1 - x2 / n2) / se
    return 2 * (1 - normal_cdf(abs(z)))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Numerical Recipes 6.4)."""
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + aa / c if abs(1 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + aa / c if abs(1 + aa / c) > 1e-300 else 1e-300
        delta = d * c
        h *= delta
        if abs(delta - 1) < 3e-12:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    front = math.exp(ln)
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def student_t_two_sided_p(t: float, df: float) -> float:
    if df <= 0 or math.isnan(t):
        return 1.0
    return incomplete_beta(df / 2, 0.5, df / (df + t * t))


def welch_p(m1: float, v1: float, n1: int, m2: float, v2: float, n2: int) -> float:
    """Two-sided p-value of Welch's t-test for two means (variances v = sample variances)."""
    if n1 < 2 or n2 < 2:
        return 1.0
    se2 = v1 / n1 + v2 / n2
    if se2 == 0:
        return 1.0 if m1 == m2 else 0.0
    t = (m1 - m2) / math.sqrt(se2)
    df = se2 * se2 / ((v1 / n1) ** 2 / (n1 - 1) + (v2 / n2) ** 2 / (n2 - 1))
    return student_t_two_sided_p(t, df)


@dataclass
class Distribution:
    """A stream of numbers: count, mean, variance, min/max and quantiles, in bounded memory.

    Values are rounded (to `precision` digits) into a table of counts, so quantiles are
    exact for integers (decisions, turns, scores) and close for times.
    """
    precision: int = 0
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0
    counts: dict = field(default_factory=dict)

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)
        key = round(x, self.precision) if self.precision else round(x)
        self.counts[key] = self.counts.get(key, 0) + 1

    @property
    def variance(self) -> float:
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0

    def quantile(self, q: float) -> float | None:
        if self.n == 0:
            return None
        target = q * (self.n - 1)
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen > target:
                return value
        return max(self.counts)

    def summary(self) -> dict:
        if self.n == 0:
            return {"n": 0}
        return {"n": self.n, "mean": round(self.mean, 4), "sd": round(math.sqrt(self.variance), 4),
                "min": min(self.counts), "p10": self.quantile(0.1), "median": self.quantile(0.5),
                "p90": self.quantile(0.9), "max": max(self.counts)}

    def histogram(self) -> list[tuple[float, int]]:
        return sorted(self.counts.items())
