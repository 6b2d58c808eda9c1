"""A stdio start the client does not wait for: the handshake and the lists answered at once, while the SDK loads.

Importing the MCP SDK takes most of a stdio start (its protocol types for every revision are pydantic models built at
import): seconds on a busy machine, when the client shows the server as "connecting" until `initialize` and
`tools/list` are answered. This module is imported before any of it. It stands between the client and the SDK, line
by line (stdio MCP is newline-delimited JSON-RPC):

- every message from the client goes on to the SDK, unchanged and in order, so the SDK's session is exactly what it
  would have been;
- while the SDK loads, the opening requests are answered here: `initialize` (protocols up to 2025-11-25) or
  `server/discover` (2026-07-28), and `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list` —
  with the SDK's own answers to the same request at the same protocol version, recorded at an earlier start of this
  same build and configuration (a cache file); the SDK's later answers to those requests are dropped;
- everything else waits for the SDK (a tool call needs it anyway).

In a handshake-era session the lists are answered here only if `initialize` was. With no cache yet (the first start of
a build), a start only records the SDK's answers for the next. The cache is keyed by this package's version and
source files, the SDK's version, the Python version and the settings that change the answers (writes on or off), so
a changed build never serves stale lists. LINEPACK_MCP_FAST_START=off turns it off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

log = logging.getLogger("linepack_mcp.fast_start")

# Marks the end of the SDK's output: not JSON, so never a message.
_END = b"\x00linepack-mcp: end of the server's output\n"
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
# `initialize` opens a session up to protocol 2025-11-25; from 2026-07-28 a client may ask `server/discover` instead.
RECORDED = ("initialize", "server/discover", *LISTS)
MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "linepack-mcp"


def build_key(writes: bool) -> str:
    """What the recorded answers depend on: this build (version and every source file), the SDK, Python, settings."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".graphql") and "__pycache__" not in path.parts:
            stat = path.stat()
            digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    try:
        sdk = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        sdk = "?"
    from . import __version__

    digest.update(f"{__version__}|{sdk}|{sys.version}|writes={writes}".encode())
    return digest.hexdigest()[:32]


def _id_key(message_id: Any) -> str:
    return json.dumps(message_id)  # 1 and "1" are different ids


class HandshakeFront:
    """The go-between on fds 0 and 1 (see the module's docstring). `start()` before importing the SDK; `finish()` once
    the SDK's stdio server has returned."""

    def __init__(self, cache_file: Path) -> None:
        self.cache_file = cache_file
        self.cache: dict[str, Any] = self._load()
        self._answered: set[str] = set()  # ids of requests answered here: the SDK's answers to them are dropped
        self._asked: dict[str, str] = {}  # ids of requests left to the SDK, by what their answer is recorded as
        self._session_version: str | None = None  # the version a handshake-era session's initialize agreed on
        self._session_fast = False  # whether that initialize was answered here
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _load(self) -> dict[str, Any]:
        try:
            cache = json.loads(self.cache_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return cache if isinstance(cache, dict) else {}

    # -- plumbing --------------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._client_in = os.dup(0)
        self._client_out = os.dup(1)
        sdk_in, self._to_sdk = os.pipe()
        os.dup2(sdk_in, 0)
        os.close(sdk_in)
        # The write end is kept: the SDK moves fd 1 about (it guards the protocol stream from stray prints), and the
        # end of its output is marked through this one (finish).
        self._from_sdk, self._sdk_out = os.pipe()
        os.dup2(self._sdk_out, 1)
        for target, name in ((self._from_client, "mcp-front-in"), (self._from_server, "mcp-front-out")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def finish(self) -> None:
        """Once the SDK's server has returned: everything it wrote reaches the client before this returns."""
        sys.stdout.flush()
        os.write(self._sdk_out, _END)  # after all the SDK wrote, in the same pipe
        self._threads[1].join(timeout=5)

    def _send(self, line: bytes) -> None:
        with self._write_lock:
            os.write(self._client_out, line)

    # -- the client's side -----------------------------------------------------------------------------------------

    def _from_client(self) -> None:
        with os.fdopen(self._client_in, "rb", buffering=0) as stream, os.fdopen(self._to_sdk, "wb", buffering=0) as sdk:
            for line in iter(stream.readline, b""):
                answer = self._answer(line)
                if answer is not None:
                    self._send(answer)
                try:
                    sdk.write(line)
                except BrokenPipeError:
                    return

    def _slot(self, method: str, params: dict[str, Any]) -> str | None:
        """Under what a request's answer is recorded (method and protocol version), or None when it is not one of
        those answered here. Protocol 2026-07-28 names its version in every request's _meta (it has no handshake);
        earlier ones negotiate it in initialize."""
        if method not in RECORDED or params.get("cursor"):
            return None
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        version = meta.get(MODERN_VERSION_KEY)
        if method == "initialize":
            version = params.get("protocolVersion")
        elif version is None:
            version = self._session_version
        return f"{method}@{version}" if isinstance(version, str) else None

    def _answer(self, line: bytes) -> bytes | None:
        try:
            message = json.loads(line)
        except ValueError:
            return None
        if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
            return None  # a notification or a response: the SDK's
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        key = _id_key(message["id"])
        with self._lock:
            if message["method"] == "initialize":
                self._session_version, self._session_fast = None, False
            slot = self._slot(message["method"], params)
            if slot is None:
                return None
            handshake_list = message["method"] in LISTS and MODERN_VERSION_KEY not in (params.get("_meta") or {})
            # A handshake-era session's lists are answered here only if its initialize was: one source per session.
            result = None if handshake_list and not self._session_fast else self.cache.get(slot)
            if result is None:
                self._asked[key] = slot  # the SDK answers: recorded for the next start
                return None
            if message["method"] == "initialize":
                self._session_version, self._session_fast = params["protocolVersion"], True
            self._answered.add(key)
        log.debug("answered %s from the handshake cache", slot)
        return (json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n").encode()

    # -- the SDK's side --------------------------------------------------------------------------------------------

    def _from_server(self) -> None:
        with os.fdopen(self._from_sdk, "rb", buffering=0) as stream:
            for line in iter(stream.readline, b""):
                if line == _END:
                    return
                if self._forward(line):
                    self._send(line)

    def _forward(self, line: bytes) -> bool:
        with self._lock:
            if not self._answered and not self._asked:
                return True
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return True
        key = _id_key(message["id"])
        with self._lock:
            if key in self._answered:
                self._answered.discard(key)
                return False
            slot = self._asked.pop(key, None)
        result = message.get("result")
        if slot is None or not isinstance(result, dict):
            return True
        if slot.startswith("initialize@"):
            with self._lock:
                self._session_version = result.get("protocolVersion")  # before the client hears it: its lists follow
            # Recorded only when the SDK accepted the version asked for (it may offer another).
            if slot != f"initialize@{result.get('protocolVersion')}":
                return True
        self._save(slot, result)
        return True

    def _save(self, slot: str, result: dict[str, Any]) -> None:
        with self._lock:
            cache = {**self.cache, slot: result}
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.cache_file.parent, delete=False, encoding="utf-8") as tmp:
                json.dump(cache, tmp)
            os.replace(tmp.name, self.cache_file)
        except OSError as exc:
            log.info("could not save the handshake cache in %s (%s): the next start loads the SDK first",
                     self.cache_file.parent, exc)
            return
        with self._lock:
            self.cache = cache
        for stale in self.cache_file.parent.glob("handshake-*.json"):  # earlier builds' answers, after a week
            try:
                if stale != self.cache_file and stale.stat().st_mtime < time.time() - 7 * 86400:
                    stale.unlink()
            except OSError:
                pass


def start_front(writes: bool) -> HandshakeFront | None:
    """The front for a stdio server about to start, or None where it does not apply (switched off, not POSIX)."""
    if os.environ.get("LINEPACK_MCP_FAST_START", "on").strip().lower() == "off" or os.name != "posix":
        return None
    try:
        front = HandshakeFront(cache_dir() / f"handshake-{build_key(writes)}.json")
        front.start()
    except OSError as exc:
        log.info("answering the handshake at once is unavailable here (%s)", exc)
        return None
    return front
