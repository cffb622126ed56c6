"""A small multi-module workspace on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

CORE = '''"""Core."""
from dataclasses import dataclass


@dataclass
class Engine:
    """Runs jobs.

    More words that are not shown.
    """

    name: str
    speed: int = 3

    def __init__(self, name: str, speed: int = 3) -> None:
        """Make one."""
        self.name = name
        self.speed = speed

    def start(self, when: float) -> bool:
        return True


def scale_value(x: int, *, factor: float = 1.0) -> float:
    """Scale x by factor.

    Body text not shown."""
    total = x * factor
    return total


LIMIT = 10
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def files():
    """Write {relative name: text} under a folder; returns the folder."""
    return write


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write(tmp_path / "proj", {
        "pkg/__init__.py": "from .core import Engine\n",
        "pkg/core.py": CORE,
        "pkg/util/__init__.py": "",
        "pkg/util/text.py": "def shout(s: str) -> str:\n    return s.upper()\n",
    })
