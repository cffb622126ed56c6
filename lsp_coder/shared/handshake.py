"""The first message each way on a connection to a shared server, before LSP flows.

The forwarder says who it is (``hello``): the build it runs, the model key it wants, the
editor's base settings, the folder the editor started it in, and over TCP the token. The
server answers ``welcome`` (then LSP messages flow both ways, unchanged) or ``refused`` with a
reason. A ``hello`` may instead ask a question (``query``: ``status`` or ``stop``), answered
with one message before the server closes the connection.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..server.framing import FrameReader, Message

HELLO_TIMEOUT_S = 10.0
"""A peer that says nothing for this long is not a forwarder."""


def frame(value: Any) -> bytes:
    """``value`` as one LSP frame."""
    body = json.dumps(value).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_first(reader: asyncio.StreamReader,
                     timeout_s: float = HELLO_TIMEOUT_S) -> dict | None:
    """The first message on the connection (None: closed, late, or not a JSON object).

    The peer sends nothing more until it is answered, so nothing after it is lost.
    """
    frames = FrameReader()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        try:
            data = await asyncio.wait_for(reader.read(65536), deadline - loop.time())
        except (TimeoutError, OSError, ValueError):
            return None
        if not data:
            return None
        items = frames.feed(data)
        if items:
            first = items[0]
            if isinstance(first, Message) and isinstance(first.value, dict):
                return first.value
            return None
