"""The benchmarks' common output, FlashInfer style: a `[PERF] name :: metric value unit; ...` line
per measurement as it finishes, a progress line with an ETA before each one (stderr), a summary
table at the end, and on request CSV, JSON and a PNG bar chart (matplotlib, an optional extra:
pip install -e '.[plot]').

    rep = PerfReport("golden_bench", total=len(shapes), weights=[gflop, ...])
    for ...:
        rep.start(name)
        rep.add(name, {"time_s": 1.2, "ratio_vs_torch": 0.8}, units={"time_s": "s"})
    rep.finish(csv_path=..., json_path=..., plot_path=..., plot_metrics=["time_s", "torch_time_s"])
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from fakit.report import table  # the CLI's table: one look everywhere


def description(doc: str) -> str:
    """The first paragraph of a module docstring as one line, for argparse (whole, not cut)."""
    return " ".join(doc.strip().split("\n\n")[0].split())


def duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class PerfReport:
    """Collects one row per measurement and prints as it goes (see the module doc)."""

    def __init__(self, title: str, total: int, weights: Optional[Sequence[float]] = None, stream=None):
        self.title = title
        self.total = total
        # Expected relative cost of each measurement (e.g. its FLOPs): the ETA scales by it,
        # so a sweep from small to large shapes does not promise a finish it cannot keep.
        self.weights = list(weights) if weights is not None else [1.0] * total
        self.rows: List[Dict] = []
        self.steps = 0  # measurements started (a step may add several rows)
        self.units: Dict[str, str] = {}
        self.started = time.perf_counter()
        self.stream = stream if stream is not None else sys.stderr

    def eta(self) -> Optional[float]:
        """Seconds left, from the time so far per unit of weight done (every step started so far
        has ended when the next starts); None before the first step ended."""
        done = self.steps
        if done == 0:
            return None
        spent = sum(self.weights[:done]) or 1e-12
        left = sum(self.weights[done : self.total])
        return (time.perf_counter() - self.started) * left / spent

    def start(self, name: str) -> None:
        eta = self.eta()
        elapsed = time.perf_counter() - self.started
        tail = f", eta {duration(eta)}" if eta is not None else ""
        self.steps += 1
        print(f"[{self.steps}/{self.total}] {name} (elapsed {duration(elapsed)}{tail})", file=self.stream, flush=True)

    def add(self, name: str, metrics: Dict[str, object], units: Optional[Dict[str, str]] = None) -> None:
        """Record a measurement and print its [PERF] line."""
        self.units.update(units or {})
        self.rows.append({"name": name, **metrics})
        parts = "; ".join(
            f"{k} {_fmt(v)}{(' ' + self.units[k]) if k in self.units else ''}" for k, v in metrics.items()
        )
        print(f"[PERF] {name} :: {parts}", flush=True)

    def summary(self, columns: Optional[Sequence[str]] = None) -> str:
        columns = list(columns or dict.fromkeys(k for r in self.rows for k in r if k != "name"))
        heads = [c + (f" [{self.units[c]}]" if c in self.units else "") for c in columns]
        return table(heads + ["name"], ([_fmt(r.get(c)) for c in columns] + [r["name"]] for r in self.rows))

    def finish(
        self,
        columns: Optional[Sequence[str]] = None,
        csv_path=None,
        json_path=None,
        plot_path=None,
        plot_metrics: Sequence[str] = (),
        plot_title: str = "",
        log_scale: bool = False,
    ) -> None:
        print(f"\n{self.title}: {len(self.rows)} measurements in {duration(time.perf_counter() - self.started)}")
        if self.rows:
            print(self.summary(columns))
        if csv_path and self.rows:
            fields = list(dict.fromkeys(k for r in self.rows for k in r))
            with open(csv_path, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=fields)
                w.writeheader()
                w.writerows(self.rows)
        if json_path:
            Path(json_path).write_text(
                json.dumps({"benchmark": self.title, "units": self.units, "rows": self.rows}, indent=1) + "\n"
            )
        if plot_path and self.rows:
            plot_bars(
                plot_path,
                [r["name"] for r in self.rows],
                {m: [float(r[m]) for r in self.rows] for m in plot_metrics},
                ylabel=", ".join(m + (f" [{self.units[m]}]" if m in self.units else "") for m in plot_metrics),
                title=plot_title or self.title,
                log_scale=log_scale,
            )
            print(f"plot: {plot_path}")


def plot_bars(
    path, labels: Sequence[str], series: Dict[str, Sequence[float]], ylabel: str, title: str, log_scale: bool = False
) -> None:
    """Grouped horizontal bars, one group per label, one bar per series, saved as PNG."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install -e '.[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(series))
    height = 0.8 / n
    fig, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * len(labels) * max(1, n / 1.5)))
    for i, (name, values) in enumerate(series.items()):
        ax.barh([y + i * height for y in range(len(labels))], values, height=height, label=name)
    ax.set_yticks([y + height * (n - 1) / 2 for y in range(len(labels))])
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(ylabel)
    ax.set_title(title)
    if log_scale:
        ax.set_xscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)
