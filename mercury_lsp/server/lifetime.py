"""A stdio daemon never outlives its client.

The end of its input ends it; so does the death of the client process that ``initialize``
named (``processId``), which matters when the client dies but its pipe stays open because
another process inherited it. On Linux the process is awaited through a pidfd (no polling);
elsewhere it is looked at every ``CLIENT_POLL_S``. A ``processId`` that is no process here (a
client in another pid namespace, e.g. outside a container) is not watched. Not on Windows
(``os.kill(pid, 0)`` would send it Ctrl+C there).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger("mercury_lsp")

CLIENT_POLL_S = 2.0  # where no process handle can be awaited: how soon a dead client is noticed


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def watch_client(pid: int, gone: Callable[[], None]) -> None:
    """Call ``gone()`` once, on the running loop, when process ``pid`` ends."""
    if sys.platform == "win32" or pid <= 0 or not process_exists(pid):
        log.info("client process %d is not visible here: not watched", pid)
        return
    loop = asyncio.get_running_loop()

    def ended() -> None:
        log.warning("the client process %d has ended: stopping", pid)
        gone()

    try:
        fd = os.pidfd_open(pid)  # type: ignore[attr-defined]  # Linux >= 5.3
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        def readable() -> None:  # a pidfd becomes readable when its process exits
            loop.remove_reader(fd)
            os.close(fd)
            ended()

        loop.add_reader(fd, readable)
        return

    async def poll() -> None:
        while process_exists(pid):
            await asyncio.sleep(CLIENT_POLL_S)
        ended()

    task = asyncio.ensure_future(poll())
    _polls.add(task)
    task.add_done_callback(_polls.discard)


_polls: set[asyncio.Task] = set()  # strong references: a pending task is not collected
