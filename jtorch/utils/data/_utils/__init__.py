"""Helpers of ``jtorch.utils.data``: collation, fetching and the worker loop.

``python_exit_status`` turns true at interpreter exit, so iterators being finalised then do
not try to talk to worker processes whose queues may already be gone.
"""

import atexit

MP_STATUS_CHECK_INTERVAL = 5.0
"""Seconds between liveness checks while waiting on a queue (workers watch their parent,
the main process watches its workers)."""

python_exit_status = False


def _set_python_exit_flag() -> None:
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)


from . import collate, fetch, worker  # noqa: E402,F401
