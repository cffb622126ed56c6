"""What every benchmark's report shares: a quantile, and matplotlib for its PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def quantile(values: list[Any], q: float, empty: Any = float("nan")) -> Any:
    """The ``q`` quantile of ``values`` (nearest rank, sorted here); ``empty`` when there are
    none.

    Values that cannot be measured sort last as None (a miss: longer than any time measured),
    and a quantile that falls on one is None.
    """
    if not values:
        return empty
    ordered = sorted(values, key=lambda v: (v is None, v or 0))
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or None without matplotlib (the
    ``bench`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def save(plt: Any, fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` as a PNG and free it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
