"""The web service's gunicorn worker: uvicorn's, with a shutdown that answers
every request it has taken, and ends its open event streams in time.

On SIGTERM (a deploy, a restart) uvicorn's own shutdown lost requests three
ways, each a 502 from nginx for a learner's POST that nginx may not send
again (the deadline drill saw one, `502 POST submit`, while a web process
restarted):

- connections the kernel had queued but the process had not yet accepted
  were reset when it closed its listening socket;
- a connection accepted but whose request was not yet read was closed;
- every request still running at `timeout_graceful_shutdown` was cancelled,
  and that timeout had to be short because an event stream closes only at
  its verdict or after minutes.

This shutdown takes every queued connection before it stops listening (a
connection refused after that is one nginx sends to the other process),
gives an accepted connection time to send its request, cuts the event
streams after STREAMS_CUT_AFTER (closing them, as a client that leaves
does, so their `finally` gives their slots back and their pages reconnect
elsewhere) and lets ordinary requests run until REQUESTS_CUT_AFTER. What is
still running then is cancelled, Django's response tasks with it (uvicorn's
cancel reaches only the request's task), and given CLEANUP_SECONDS; the sum
stays under deploy/gunicorn.conf.py's graceful_timeout (8 s), after which
gunicorn kills the process.
"""

import asyncio
import logging
import socket
import sys
import time

from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

IDLE_GRACE = 2.0  # for an accepted connection's request to arrive
STREAMS_CUT_AFTER = 3.0
REQUESTS_CUT_AFTER = 5.5
CLEANUP_SECONDS = 2.0

logger = logging.getLogger("uvicorn.error")


def accept_queued(sock: socket.socket) -> list[socket.socket]:
    """Every connection the kernel has completed on a listening socket and
    the process has not accepted yet, without waiting for more."""
    taken = []
    while True:
        try:
            sock.setblocking(False)
            conn, _ = sock.accept()
        except (BlockingIOError, InterruptedError):
            return taken
        except OSError:  # closed already: nothing queued is left to take
            return taken
        conn.setblocking(False)
        taken.append(conn)


def is_stream(connection) -> bool:
    # Imported here: gunicorn loads this module before Django is set up; by
    # a shutdown the app (and so Django) is loaded.
    from grader.stream_admission import EVENTS

    scope = getattr(connection, "scope", None)
    return bool(scope) and bool(EVENTS.match(scope.get("path", "")))


class _Server(Server):
    def _protocol(self):
        return self.config.http_protocol_class(
            config=self.config,
            server_state=self.server_state,
            app_state=self.lifespan.state,
        )

    async def shutdown(self, sockets=None) -> None:
        logger.info("Shutting down")
        began = time.monotonic()
        state = self.server_state
        # Stop listening with nothing left in the queue: no await between the
        # last accept and the close, so no connection is reset in between.
        queued = [conn for sock in sockets or [] for conn in accept_queued(sock)]
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        loop = asyncio.get_running_loop()
        for conn in queued:
            await loop.connect_accepted_socket(self._protocol, conn)

        # A connection just accepted has its request on the way (a protocol
        # without a request cycle has nothing to wait for).
        while any(getattr(c, "cycle", 0) is None for c in state.connections):
            if time.monotonic() - began >= IDLE_GRACE:
                break
            await asyncio.sleep(0.02)
        for connection in list(state.connections):
            connection.shutdown()  # closed when idle, else after its response

        cut = False
        while (state.connections or state.tasks) and not self.force_exit:
            waited = time.monotonic() - began
            if waited >= REQUESTS_CUT_AFTER:
                break
            if not cut and waited >= STREAMS_CUT_AFTER:
                cut = True
                for connection in list(state.connections):
                    if is_stream(connection):
                        connection.transport.close()  # as a client leaving
            await asyncio.sleep(0.05)

        left = [
            task for task in asyncio.all_tasks() if task is not asyncio.current_task()
        ]
        if state.connections or state.tasks:
            logger.error("Cancelling %s task(s) still running at shutdown", len(left))
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=CLEANUP_SECONDS)

        if not self.force_exit:
            await self.lifespan.shutdown()


class StreamingUvicornWorker(UvicornWorker):
    # No WebSocket route exists and Django refuses a websocket scope, which
    # uvicorn turned into a 500 for any request that asked to upgrade; with
    # no WebSocket protocol it answers the request as the HTTP it also is.
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "ws": "none"}

    async def _serve(self) -> None:  # UvicornWorker's, with the server above
        self.config.app = self.wsgi
        server = _Server(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
