"""Hash chains over fixed-size token blocks."""

from __future__ import annotations

import hashlib
import struct
from typing import NewType, Sequence

BlockHash = NewType("BlockHash", bytes)

ROOT_HASH = BlockHash(b"\x00" * 16)
"""The parent of the first block of every sequence."""


def hash_block(parent: BlockHash, tokens: Sequence[int]) -> BlockHash:
    """Key of a full block: it depends on every token before it through ``parent``."""
    digest = hashlib.blake2b(parent, digest_size=16)
    digest.update(struct.pack(f"<{len(tokens)}i", *tokens))
    return BlockHash(digest.digest())


def chain_hashes(tokens: Sequence[int], block_size: int, parent: BlockHash = ROOT_HASH,
                 start: int = 0) -> list[BlockHash]:
    """Keys of the full blocks of ``tokens[start:]`` (``start`` a multiple of block_size)."""
    keys: list[BlockHash] = []
    for begin in range(start, len(tokens) - block_size + 1, block_size):
        parent = hash_block(parent, tokens[begin : begin + block_size])
        keys.append(parent)
    return keys
