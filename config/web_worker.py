"""The web service's gunicorn worker: uvicorn's, which ends its open event
streams before gunicorn's graceful timeout runs out, and lets them clean up.

On SIGTERM uvicorn waits for every connection to close, and an event stream
closes only at its verdict or after minutes, so gunicorn SIGKILLed the
process at `graceful_timeout` and no stream's `finally` ran: each learner's
stream entries stayed counted in Redis for their lifetime (5 minutes), and
after a restart every reconnecting page was refused (429, "live streams open
already") and fell back to polling (stream_bench.py's web restart: 1,000 of
1,000 pages). uvicorn's own timeout (timeout_graceful_shutdown) cancels the
requests, but not the tasks Django streams their responses from, and then
raises SIGTERM again, which ends the process at once: the server below
cancels every task left and waits for them to end.
"""

import asyncio
import sys

from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

# Under deploy/gunicorn.conf.py's graceful_timeout (8 s): time enough for an
# ordinary request in flight to finish; then the streams are cancelled, and
# get CLEANUP_SECONDS to give their slots back.
STREAMS_CUT_AFTER = 3
CLEANUP_SECONDS = 2


class _Server(Server):
    async def shutdown(self, sockets=None) -> None:
        await super().shutdown(sockets=sockets)
        # Django's ASGI handler sends each response from a task of its own,
        # which uvicorn's cancel of the request's task does not reach: cancel
        # every task left, and give them the time to end.
        left = [
            task for task in asyncio.all_tasks() if task is not asyncio.current_task()
        ]
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=CLEANUP_SECONDS)


class StreamingUvicornWorker(UvicornWorker):
    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "timeout_graceful_shutdown": STREAMS_CUT_AFTER,
    }

    async def _serve(self) -> None:  # UvicornWorker's, with the server above
        self.config.app = self.wsgi
        server = _Server(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
