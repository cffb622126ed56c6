"""``lsp-coder complete FILE:LINE:COL``: one completion, printed, from the same engine."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..completion.service import CompletionRequest, CompletionService
from ..config import Config
from .progress_bar import load_with_bar


def parse_location(location: str) -> tuple[Path, int, int]:
    """``FILE:LINE:COL`` (1-based) split into its parts; raises ValueError with the fix."""
    try:
        file, line, col = location.rsplit(":", 2)
        return Path(file), int(line), int(col)
    except ValueError:
        raise ValueError(f"expected FILE:LINE:COL (1-based), got {location!r}") from None


def offset_of(text: str, line: int, col: int) -> int:
    """The str index of 1-based ``line``/``col`` (col counts characters), clamped to the line."""
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines) + 1:
        raise ValueError(f"line {line} is outside the file (1..{len(lines)})")
    start = sum(len(s) for s in lines[: line - 1])
    body = lines[line - 1].rstrip("\r\n") if line <= len(lines) else ""
    return start + max(0, min(col - 1, len(body)))


def complete_at(config: Config, location: str) -> int:
    try:
        path, line, col = parse_location(location)
        text = path.read_text(encoding="utf-8")
        offset = offset_of(text, line, col)
    except (OSError, ValueError) as exc:
        print(f"lsp-coder: {exc}", file=sys.stderr)
        return 2
    service = CompletionService(config)
    error = load_with_bar(service)
    if error:
        print(error, file=sys.stderr)
        return 1
    start = time.perf_counter()
    suggestion = service.complete(CompletionRequest(uri=path.resolve().as_uri(), text=text,
                                                    offset=offset, path=path.name))
    elapsed = (time.perf_counter() - start) * 1000
    sys.stdout.write(suggestion.text + ("\n" if not suggestion.text.endswith("\n") else ""))
    stats = suggestion.stats
    if stats is not None:
        print(f"[{elapsed:.0f} ms: {stats.prompt_tokens} prompt tokens, {stats.generated_tokens}"
              f" generated, stop: {suggestion.stop_reason}]", file=sys.stderr)
    service.close()
    return 0

