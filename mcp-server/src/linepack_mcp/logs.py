"""Logging to stderr only (stdout carries the MCP protocol), with secrets redacted."""

from __future__ import annotations

import logging
import re
import sys

_BEARER = re.compile(r"(?i)(bearer\s+)[^\s'\",]+")
_LPK = re.compile(r"\blpk_[A-Za-z0-9_\-]+")

_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Make every later log line replace `value` with `***`."""
    if value and len(value) >= 4:
        _secrets.add(value)


def redact(text: str) -> str:
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, "***")
    text = _BEARER.sub(r"\1***", text)
    return _LPK.sub("lpk_***", text)


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup_logging(level: str = "INFO") -> None:
    """Send every log record to stderr, redacted; quiet the HTTP libraries below DEBUG."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    noisy_level = logging.DEBUG if level == "DEBUG" else logging.WARNING
    for name in ("httpx", "httpx2", "httpcore", "mcp", "mcp_types"):
        logging.getLogger(name).setLevel(max(noisy_level, logging.getLogger().level))
