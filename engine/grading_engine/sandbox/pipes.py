"""Read a sandbox's pipes together, each with a size cap, until EOF or deadline.

Pipes, not files: nothing the child creates in its filesystem is ever
opened by the parent, so a symlink or a FIFO planted as a "result file"
has nothing to point at. Every stream is drained to the end (so the child
never blocks on a full pipe) but only `cap` bytes are kept; past a total
`flood_limit` of output the caller is told to kill the job.
"""

from __future__ import annotations

import os
import selectors
import time
from dataclasses import dataclass, field

CHUNK = 65536


@dataclass
class Stream:
    fd: int
    cap: int
    counts_as_output: bool = True
    data: bytearray = field(default_factory=bytearray)
    total: int = 0
    open: bool = True

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def text(self) -> str:
        text = bytes(self.data).decode("utf-8", errors="replace")
        if self.truncated:
            text += f"\n[output truncated: kept {self.cap:,} of {self.total:,} bytes]"
        return text


@dataclass(frozen=True)
class _Watched:
    name: str


class Collector:
    """Drain several read ends at once; `pump` says why it stopped."""

    def __init__(self, streams: dict[str, Stream], *, flood_limit: int):
        self.flood_limit = flood_limit
        self.selector = selectors.DefaultSelector()
        self.streams: dict[str, Stream] = {}
        for name, stream in streams.items():
            self.add(name, stream)

    def add(self, name: str, stream: Stream) -> None:
        self.streams[name] = stream
        os.set_blocking(stream.fd, False)
        self.selector.register(stream.fd, selectors.EVENT_READ, name)

    @property
    def finished(self) -> bool:
        return not any(s.open for s in self.streams.values())

    def output_total(self) -> int:
        return sum(s.total for s in self.streams.values() if s.counts_as_output)

    def flooded(self) -> bool:
        """Too much output in total, or a result stream past its cap."""
        over_cap = any(
            s.truncated for s in self.streams.values() if not s.counts_as_output
        )
        return over_cap or self.output_total() > self.flood_limit

    def watch(self, fileobj, name: str) -> None:
        """Also stop, saying `name`, when `fileobj` (a socket, a cancel) is readable."""
        self.selector.register(fileobj, selectors.EVENT_READ, _Watched(name))

    def pump(self, deadline: float, *, until_closed: str | None = None) -> str:
        """Read until 'eof' (all closed), a watched name, 'timeout' or 'flood'.

        With `until_closed`, also stop ('closed') once that stream is closed.
        """
        while not self.finished:
            if until_closed and not self.streams[until_closed].open:
                return "closed"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            for key, _ in self.selector.select(remaining):
                if isinstance(key.data, _Watched):
                    return key.data.name
                self._read(key.data)
            if self.flooded():
                return "flood"
        return "eof"

    def _read(self, name: str) -> None:
        stream = self.streams[name]
        try:
            chunk = os.read(stream.fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            stream.open = False
            self.selector.unregister(stream.fd)
            return
        room = stream.cap - len(stream.data)
        if room > 0:
            stream.data += chunk[:room]
        stream.total += len(chunk)

    def close(self, *, fds: bool = True) -> None:
        self.selector.close()
        if not fds:
            return
        for stream in self.streams.values():
            try:
                os.close(stream.fd)
            except OSError:
                pass
