"""A small asyncio client for server-sent event streams, for many at once.

Plain sockets and HTTP/1.1, so thousands of streams cost a coroutine each
(an HTTP library would cost far more per connection). Used by
stream_bench.py and tests/grader/test_streams_asgi.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field


@dataclass
class Stream:
    """One open stream: its status, headers and the events as they came."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""  # a refusal's JSON
    # (monotonic time, event, data, wall-clock time) as each arrived
    events: list[tuple[float, str, dict, float]] = field(default_factory=list)
    ended: bool = False
    closed: bool = False  # by this side
    reconnects: int = 0
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def close(self) -> None:
        self.closed = True
        if self.writer is not None:
            self.writer.close()


async def open_stream(host: str, port: int, path: str, token: str) -> Stream:
    """Connect, send the GET, read the headers; events then arrive in `follow`."""
    stream = Stream()
    reader, writer = await asyncio.open_connection(host, port)
    stream.reader, stream.writer = reader, writer
    writer.write(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Token {token}\r\nAccept: text/event-stream\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    stream.status = int(lines[0].split()[1])
    for line in lines[1:]:
        if ": " in line:
            name, value = line.split(": ", 1)
            stream.headers[name.lower()] = value
    if stream.status != 200:
        stream.body = await reader.read()
        stream.ended = True
        writer.close()
    return stream


def event_of(block: bytes) -> tuple[str, dict] | None:
    """One block of a stream (what lies between blank lines) as (event, data);
    None for a comment (a heartbeat) or the `retry:` line."""
    fields = dict(
        line.split(": ", 1)
        for line in block.decode().splitlines()
        if ": " in line and not line.startswith(":")
    )
    if "event" not in fields:
        return None
    return fields["event"], json.loads(fields["data"])


async def follow(stream: Stream) -> None:
    """Read events until the server ends the stream (or it is closed)."""
    chunked = stream.headers.get("transfer-encoding") == "chunked"
    buffer = b""
    try:
        while True:
            data = await _read_chunk(stream.reader, chunked)
            if not data:
                break
            buffer += data
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                event = event_of(block)
                if event:
                    name, data = event
                    stream.events.append((time.monotonic(), name, data, time.time()))
                    stream.arrived.set()
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        pass
    finally:
        stream.ended = True
        stream.arrived.set()
        if stream.writer is not None:
            stream.writer.close()


async def _read_chunk(reader: asyncio.StreamReader, chunked: bool) -> bytes:
    if not chunked:
        return await reader.read(65536)
    size_line = await reader.readuntil(b"\r\n")
    size = int(size_line.strip().split(b";")[0], 16)
    if size == 0:
        return b""
    data = await reader.readexactly(size + 2)
    return data[:-2]


async def get(host: str, port: int, path: str) -> tuple[int, float]:
    """One plain GET: its status and its seconds."""
    status, _body, seconds = await fetch(host, port, path)
    return status, seconds


async def fetch(
    host: str, port: int, path: str, token: str = ""
) -> tuple[int, bytes, float]:
    """One GET (with a token, if given): its status, body and seconds."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection(host, port)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
    if token:
        request += f"Authorization: Token {token}\r\nAccept: application/json\r\n"
    writer.write((request + "\r\n").encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
    return int(data.split(b" ", 2)[1]), body, time.monotonic() - started
