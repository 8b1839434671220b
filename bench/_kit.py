"""Timing and reporting shared by the benchmarks.

A benchmark is a set of cases measured in the same run: one or more bare baselines and our
figures. Each case is a *block runner*: given a count, it performs that many operations and
returns one duration (seconds) per operation. `compare()` warms every case up, then runs them in
interleaved rounds (baseline, ours, baseline, ours, ...) so drift in the load of a shared machine
hits every case alike, and prints one table: p50, p95, mean, ops/s and the ratio of each case's
p50 to the baseline's.

Counts are bounded twice: by the count asked for (times RIVERBEAM_BENCH_SCALE) and by a time
budget per case, estimated from the warm-up, so a slow machine shortens the run instead of
stretching it. Never assert on a timing: these are reports, not tests of speed.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = [
    "BlockRunner",
    "Case",
    "Result",
    "Stats",
    "compare",
    "console",
    "emit_table",
    "fmt_duration",
    "machine_note",
    "per_call",
    "per_call_sync",
    "print_table",
    "scaled",
]

BlockRunner = Callable[[int], Awaitable[list[float]]]
"""run(n) -> n durations in seconds, one per operation."""

_SCALE_ENV = "RIVERBEAM_BENCH_SCALE"
_MARKDOWN_ENV = "RIVERBEAM_BENCH_MARKDOWN"


def console() -> Console:
    """A console wide enough for the tables even when stdout is not a terminal."""
    return Console(width=None if sys.stdout.isatty() else 160, highlight=False)


def scaled(n: int, *, minimum: int = 10) -> int:
    """n times RIVERBEAM_BENCH_SCALE (default 1): 0.2 gives a quick smoke run."""
    try:
        scale = float(os.environ.get(_SCALE_ENV, "1"))
    except ValueError:
        scale = 1.0
    return max(minimum, int(n * scale))


def machine_note() -> str:
    """One line about where the figures come from."""
    try:
        one, five, fifteen = os.getloadavg()
        load = f"load {one:.2f} {five:.2f} {fifteen:.2f}"
    except OSError:
        load = "load n/a"
    return f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {load}"


# ---- statistics ---------------------------------------------------------------------------------


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile of sorted data (q in [0, 100])."""
    if not ordered:
        return math.nan
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class Stats:
    """Summary of per-operation durations, in seconds."""

    n: int
    p50: float
    p95: float
    mean: float

    @property
    def ops_per_s(self) -> float:
        return 1.0 / self.mean if self.mean > 0 else math.inf

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        ordered = sorted(samples)
        return cls(
            n=len(ordered),
            p50=_percentile(ordered, 50),
            p95=_percentile(ordered, 95),
            mean=statistics.fmean(ordered) if ordered else math.nan,
        )


def fmt_duration(seconds: float) -> str:
    """A duration with a unit that keeps three significant figures readable."""
    if math.isnan(seconds):
        return "-"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _fmt_rate(ops: float) -> str:
    if math.isinf(ops) or math.isnan(ops):
        return "-"
    if ops >= 10_000:
        return f"{ops:,.0f}"
    return f"{ops:,.1f}"


# ---- cases --------------------------------------------------------------------------------------


def per_call(
    op: Callable[[], Awaitable[object]],
    *,
    batch: int = 1,
    prepare: Callable[[], Awaitable[object]] | None = None,
) -> BlockRunner:
    """A block runner timing each call of an async operation (or `batch` calls, averaged);
    `prepare`, untimed, runs before each sample (a session's first turn before its second)."""

    async def run(n: int) -> list[float]:
        out: list[float] = []
        clock = time.perf_counter
        for _ in range(n):
            if prepare is not None:
                await prepare()
            start = clock()
            for _ in range(batch):
                await op()
            out.append((clock() - start) / batch)
        return out

    return run


def per_call_sync(op: Callable[[], object], *, batch: int = 1) -> BlockRunner:
    """As `per_call`, for a synchronous operation (CPU-only work such as serialization).

    Each sample times `batch` calls and keeps the average, so the clock's own cost stays small
    beside operations of a microsecond.
    """

    async def run(n: int) -> list[float]:
        out: list[float] = []
        clock = time.perf_counter
        for _ in range(n):
            start = clock()
            for _ in range(batch):
                op()
            out.append((clock() - start) / batch)
        return out

    return run


@dataclass(slots=True)
class Case:
    """One line of a table.

    Attributes:
        name: What is measured.
        run: The block runner.
        baseline: True for the bare figure the others are divided by (the first one counts).
        note: Anything that explains the figure (hops, statements per operation...).
    """

    name: str
    run: BlockRunner
    baseline: bool = False
    note: str = ""


@dataclass(slots=True)
class Result:
    name: str
    stats: Stats
    baseline: bool
    note: str
    samples: list[float] = field(repr=False, default_factory=list)


async def compare(
    title: str,
    cases: Sequence[Case],
    *,
    n: int,
    warmup: int = 20,
    rounds: int = 5,
    budget_s: float = 8.0,
    caption: str = "",
    show: bool = True,
) -> list[Result]:
    """Warm up, time every case in interleaved rounds, print the table, return the results.

    Args:
        n: Operations per case (scaled by RIVERBEAM_BENCH_SCALE), cut down when the warm-up
            says the case would take longer than `budget_s`.
        warmup: Operations per case before timing (not scaled).
        rounds: How many interleaved blocks the n operations are split into.
    """
    wanted = scaled(n)
    counts: list[int] = []
    for case in cases:
        warm = await case.run(warmup)
        per_op = statistics.fmean(warm) if warm else 0.0
        cap = int(budget_s / per_op) if per_op > 0 else wanted
        counts.append(max(rounds * 2, min(wanted, cap)))
    samples: list[list[float]] = [[] for _ in cases]
    for r in range(rounds):
        for i, case in enumerate(cases):
            share = counts[i] // rounds + (1 if r < counts[i] % rounds else 0)
            gc.collect()
            samples[i].extend(await case.run(share))
    results = [
        Result(c.name, Stats.of(s), c.baseline, c.note, s)
        for c, s in zip(cases, samples, strict=True)
    ]
    if show:
        print_table(title, results, caption=caption)
    return results


# ---- output -------------------------------------------------------------------------------------


def _ratio(value: float, base: float | None) -> str:
    if base is None or base <= 0 or math.isnan(value):
        return "-"
    return f"{value / base:.2f}x"


def print_table(title: str, results: Sequence[Result], *, caption: str = "") -> None:
    """Print the comparison (and append it as markdown to $RIVERBEAM_BENCH_MARKDOWN if set)."""
    base = next((r.stats.p50 for r in results if r.baseline), None)
    headers = ["case", "n", "p50", "p95", "mean", "ops/s", "p50 / baseline", "note"]
    rows = [
        [
            ("[baseline] " if r.baseline else "") + r.name,
            str(r.stats.n),
            fmt_duration(r.stats.p50),
            fmt_duration(r.stats.p95),
            fmt_duration(r.stats.mean),
            _fmt_rate(r.stats.ops_per_s),
            _ratio(r.stats.p50, base),
            r.note,
        ]
        for r in results
    ]
    emit_table(title, headers, rows, caption=caption)


def emit_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str = ""
) -> None:
    """Print a table with rich; also append it to the markdown report when one is asked for."""
    full_caption = " | ".join(p for p in (caption, machine_note()) if p)
    table = Table(title=title, caption=full_caption, title_justify="left")
    for i, header in enumerate(headers):
        numeric = 0 < i < len(headers) - 1
        table.add_column(
            header,
            justify="right" if numeric else "left",
            no_wrap=i < len(headers) - 1,
            overflow="fold",
        )
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    out = console()
    out.print()
    out.print(table)
    path = os.environ.get(_MARKDOWN_ENV)
    if path:
        lines = [f"#### {title}", "", "| " + " | ".join(headers) + " |"]
        lines.append("|" + "|".join("---" for _ in headers) + "|")
        lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in rows]
        lines += ["", f"_{full_caption}_", "", ""]
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
