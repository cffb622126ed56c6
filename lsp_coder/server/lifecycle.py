"""When the server process ends: the editor's process gone, and leaving without delay."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import Any, Callable

log = logging.getLogger(__name__)

PARENT_POLL_S = 0.5


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not terminated (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except (OverflowError, ValueError):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state != b"Z"
    except (OSError, IndexError):
        return True


async def watch_parent(get_pid: Callable[[], int | None], on_gone: Callable[[], None]) -> None:
    """Call ``on_gone`` once the editor's process (``processId`` from initialize) has ended."""
    while True:
        await asyncio.sleep(PARENT_POLL_S)
        pid = get_pid()
        if isinstance(pid, int) and pid > 0 and not process_alive(pid):
            log.warning("the editor's process %d has ended; stopping", pid)
            on_gone()
            return


def run_loop(main: Callable[[], Any]) -> int:
    """Run ``main()`` on a fresh loop; left-over tasks and threads are not waited for."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop.run_until_complete(main())


def on_signals(handler: Callable[[], None]) -> None:
    """Call ``handler`` on SIGTERM and SIGINT (event loop)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, handler)


def exit_now(code: int) -> None:
    """End the process at once with ``code``.

    The engine worker may be inside a llama.cpp call and the stdin reader blocked in a read;
    waiting for either (or running llama.cpp's destructors at interpreter exit) could take
    seconds or crash, and the editor expects the process gone. Output is flushed first, and
    the processes this one started (the workspace index's parser) are ended and reaped.
    """
    from ..completion.related.parse_worker import reap_all

    reap_all()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed pipe: nothing left to say
            pass
    os._exit(code)
