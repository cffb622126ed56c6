"""The prefix cache's records (a sequence's state, a registered block, a prepared request) and
the KV-cell operations its decisions are applied with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .hashing import BlockHash


class PromptTooLong(RuntimeError):
    """The request needs more cells than the whole budget."""


@dataclass(slots=True)
class SeqState:
    """What one llama.cpp sequence holds, as the block table sees it."""

    seq_id: int
    """The llama.cpp sequence id."""
    tokens: list[int] = field(default_factory=list)
    """The tokens at positions ``0..len-1``."""
    keys: list[BlockHash] = field(default_factory=list)
    """The hash keys of its full blocks, in order (a chain: each depends on all before it)."""
    last_used: float = 0.0
    """When a request ran in it or shared a prefix from it (the table's clock)."""
    idle_from: int | None = None
    """Tokens from this position on were evaluated by idle work and no request used them yet;
    None: a request's sequence (idle work never takes it)."""
    document: str | None = None
    """The document whose prompt it holds, when the caller said (see ``BlockTable.prepare``)."""
    requested: float = 0.0
    """When a request last ran in it (``last_used`` also counts sharing from it)."""
    grow_pins: int = 0
    """Extends in progress on it: while any is, nothing evicts its blocks or takes it."""
    view_pins: int = 0
    """1 while it holds the last in-view prompt (``BlockTable.prepare_branch``), else 0."""

    @property
    def holds_unused_idle(self) -> bool:
        """Whether it holds tokens idle work evaluated that no request has used yet."""
        return self.idle_from is not None and self.idle_from < len(self.tokens)

    def pinned(self, *, by_idle_work: bool) -> bool:
        """Whether it must be left alone: by everything while it grows, and by other idle
        work (``by_idle_work``) also while it holds the in-view prompt's unused idle tokens (a
        request's sequence is never idle work's to take, and an in-view branch with no unused
        idle tokens holds only what a request read, or a shared prefix)."""
        return self.grow_pins > 0 or (
            by_idle_work and self.view_pins > 0 and self.holds_unused_idle)


@dataclass(slots=True)
class Block:
    """A full block of ``block_size`` tokens, registered once however many sequences hold it."""

    start: int
    """Its first position."""
    holders: set[int]
    """The sequences that hold it (the table drops the block when the last one lets go)."""
    last_used: float
    """When a request last ran in a sequence holding it."""
    idle: bool = False
    """Made by idle work and not used by a request yet: evicted before any other block."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """Where a request runs: ``seq_id`` already holds its first ``reused`` tokens."""

    seq_id: int
    """The sequence to extend."""
    reused: int
    """Prompt tokens it already holds."""
    shifted: int = 0
    """Of those, the ones kept from another position with a RoPE shift."""


class KvCells(Protocol):
    """The KV-cell operations the table's decisions need (``llama.Context`` has them)."""

    def seq_rm(self, seq_id: int, p0: int, p1: int = -1) -> bool:
        """Remove positions [p0, p1) of a sequence (-1: to the end)."""
        ...

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        """Share positions [p0, p1) of ``src`` with ``dst``."""
        ...

    def seq_add(self, seq_id: int, p0: int, p1: int, delta: int) -> None:
        """Shift positions [p0, p1) of a sequence by ``delta``."""
        ...

    def clear(self) -> None:
        """Empty every sequence."""
        ...
