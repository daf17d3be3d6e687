"""How a daemon command (``serve``, ``http``) ends: its logs and standard streams flushed, then
the process ends at once with the daemon's exit status.

The interpreter's own teardown is skipped on purpose. When a client dies with requests in
flight, the engine's worker threads can still be inside a torch operation while the main thread
returns; finalising the interpreter then tears down torch's thread pools under them and the
process aborts (SIGABRT, exit -6) instead of exiting with its status. Nothing is lost by
skipping it: every write a daemon makes to the user's files is already atomic and complete
before its request answers, and the daemon holds no other state worth finalising.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn


def exit_daemon(status: int) -> NoReturn:
    logging.shutdown()  # flushes and closes every handler (a --log-file included)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: the client is gone
            pass
    os._exit(status)
