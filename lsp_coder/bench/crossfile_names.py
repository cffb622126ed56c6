"""What ``bench crossfile`` compares and where its cases come from by default: names the
benchmark's arguments and its runners share (light: the arguments import nothing heavier)."""

from __future__ import annotations

CROSSFILE_SOURCES = ("definitions", "open_files", "workspace")
"""The ``[context]`` sources ``bench crossfile`` compares, one run each."""

HELD_OUT_PACKAGES = ("asyncio", "importlib", "xml.dom", "unittest", "concurrent.futures",
                     "urllib")
"""The packages ``bench crossfile`` reports on by default (not used while tuning: tune on
others, such as ``email``, ``json``, ``multiprocessing``)."""

EDITS = ("rename", "parameter", "parameter-local")
"""The edits ``bench crossfile --recent-edits --edit`` chooses among
(``recent_edit_cases``)."""
