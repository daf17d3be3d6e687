"""Logging for the daemon: where logs go, their levels, and the redaction of user code.

pygls logs message bodies (user code) in its records' arguments; ``RedactFilter`` drops them
unless the user turned on ``debugLogUserCode``.
"""

from __future__ import annotations

import logging
import sys

from mercury_lsp.config import Settings

LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
# Third-party loggers kept at warning or above (chatty at info; never user-facing).
NOISY_LOGGERS = ("asyncio", "urllib3", "filelock", "huggingface_hub")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactFilter(logging.Filter):
    """Drops the arguments of pygls' log records (they carry message bodies: user code) unless
    the user turned on ``debugLogUserCode``."""

    def __init__(self) -> None:
        super().__init__()
        self.allow_user_code = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.allow_user_code and record.name.startswith("pygls") and record.args:
            record.msg = f"{record.msg} [arguments hidden: enable debugLogUserCode to see them]"
            record.args = None
        return True


def configure_logging(settings: Settings, log_file: str | None) -> None:
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    set_log_level(settings)


def set_log_level(settings: Settings) -> None:
    level = LEVELS[settings.log_level]
    logging.getLogger("mercury_lsp").setLevel(level)
    logging.getLogger("pygls").setLevel(level if settings.debug_log_user_code else max(level, logging.WARNING))
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    for handler in logging.getLogger().handlers:
        for f in handler.filters:
            if isinstance(f, RedactFilter):
                f.allow_user_code = settings.debug_log_user_code
