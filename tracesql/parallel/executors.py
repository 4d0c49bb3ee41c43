"""Where the tasks of a parallel run go: local processes, or a Dask cluster. A parallel ingest's task is a group of
files ingested one after the other (tracesql.ingest.run_task), a parallel report's the report of one trace
(tracesql.api.archive_report); each hands back its result. A task that is run twice (a
Dask worker killed mid-task and the task retried) is harmless: a trace already published is found by its content
hash, and the work area of a dead process is removed by the next ingest on its host.

- ``processes``: a pool of ``jobs`` processes on this machine (spawned with Ctrl-C blocked, so that a Ctrl-C to
  the process group reaches the parent only; the parent stops them with SIGTERM, which a busy process turns into an
  interrupt that removes its work areas and an idle one into a quiet exit). Each process exits as soon as its
  parent is gone (a parent killed with SIGKILL leaves no process behind).
- ``dask``: the scheduler named by ``scheduler`` / ``scheduler_file`` (or ``DASK_SCHEDULER_ADDRESS``), else a
  ``LocalCluster`` of ``jobs`` single-threaded worker processes on the loopback interface. Workers write into the
  dataset directly, so it must be on a filesystem every worker sees at the same path. Needs
  ``pip install 'tracesql[dask]'``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

from tracesql.errors import DatasetError

EXECUTORS = ("processes", "dask")

# Fault injection for tests of retried tasks: when this variable names a file that does not exist yet, the first
# task to stage a trace creates the file and ends its process at once (as a killed worker would).
EXIT_ONCE_ENV = "TRACESQL_TEST_EXIT_ONCE"
# The same, for the first process to publish a trace, right after its publish.
EXIT_AFTER_PUBLISH_ENV = "TRACESQL_TEST_EXIT_AFTER_PUBLISH"


_busy = False  # a pool process is running a task


STOP_GRACE_S = 10.0  # how long stopped pool processes have to remove their work areas


def task_init(parent: int | None = None) -> None:
    """A pool process: Ctrl-C is the parent's to handle (it stops the tasks with SIGTERM, raised here as an
    interrupt so that a task's work areas are removed on the way out; an idle process exits quietly). The process
    exits when its parent ``parent`` is gone."""

    def stop(*_):
        if _busy:
            raise KeyboardInterrupt
        os._exit(0)  # idle: nothing to clean up, and no traceback

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    if parent is not None:
        import threading

        def watch() -> None:
            import time

            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)  # the parent died (kill -9): nothing is left to report to

        threading.Thread(target=watch, name="tracesql-parent-watch", daemon=True).start()


def _run_task(fn: Callable, *args) -> Any:
    """Run a task in a pool process, marked busy while it runs (see task_init)."""
    global _busy
    _busy = True
    try:
        return fn(*args)
    finally:
        _busy = False


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def exit_once_if_asked(env: str = EXIT_ONCE_ENV) -> None:
    """The fault injection of EXIT_ONCE_ENV or EXIT_AFTER_PUBLISH_ENV (a no-op unless the variable is set)."""
    marker = os.environ.get(env)
    if marker:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        os._exit(3)


def _as_completed(futures: list) -> Iterator:
    """concurrent.futures.as_completed, waking every half second: a signal that the kernel hands to another thread
    (a library's) than the one waiting is acted on within that time, rather than when the next task ends."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        yield from done


class Pool:
    """Tasks submitted to an executor, their results as they complete."""

    def __init__(self, executor: str, jobs: int, scheduler: str | None = None, scheduler_file: str | None = None):
        self.executor = executor
        self._cluster: Any = None
        if executor == "processes":
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool: Any = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=task_init, initargs=(os.getpid(),))
        elif executor == "dask":
            try:
                from distributed import Client, LocalCluster
            except ImportError:
                raise DatasetError("--executor dask needs Dask: pip install 'tracesql[dask]'") from None
            address = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
            if scheduler_file:
                self._pool = Client(scheduler_file=scheduler_file)
            elif address:
                self._pool = Client(address)
            else:
                # silence_logs: the cluster's own log lines (its nannies run here, the workers below it) are
                # left out, tracebacks included, as a worker restarted after dying or a restarting worker stopped
                # at the close log them; what a task raises reaches this process and is reported in one line
                self._cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None,
                                             silence_logs=logging.CRITICAL)
                self._pool = Client(self._cluster)
        else:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}")

    @property
    def workers(self) -> int:
        """How many tasks run at once."""
        if self.executor == "dask":
            return max(1, sum(self._pool.nthreads().values()))
        return int(self._pool._max_workers)

    def submit(self, fn: Callable, *args) -> Any:
        if self.executor == "dask":
            return self._pool.submit(fn, *args, pure=False)
        return self._pool.submit(_run_task, fn, *args)

    def submit_all(self, fn: Callable, args: list[tuple]) -> list:
        """Submit one task per tuple of arguments. The local processes start here: with Ctrl-C blocked, which
        they inherit until they ignore it (task_init); a Ctrl-C meanwhile reaches this process once they are
        started."""
        if self.executor == "dask":
            return [self.submit(fn, *a) for a in args]
        block = {signal.SIGINT, signal.SIGTERM}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, block)
        try:
            return [self.submit(fn, *a) for a in args]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def as_completed(self, futures: list) -> Iterator:
        if self.executor == "dask":
            from distributed import as_completed

            return iter(as_completed(futures))
        return _as_completed(futures)

    def stop(self, futures: list) -> None:
        """Stop everything after an interrupt or an error."""
        if self.executor == "dask":
            with contextlib.suppress(Exception):
                self._pool.cancel(futures)
            return
        procs = list(getattr(self._pool, "_processes", {}).values())
        for proc in procs:
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGTERM)
        self._pool.shutdown(wait=False, cancel_futures=True)
        # a process stopped while idle may have held the queue's lock, leaving another idle one waiting on it for
        # ever (and the pool's shutdown with it): what has not ended after STOP_GRACE_S is killed
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in procs:
            proc.join(timeout=max(deadline - time.monotonic(), 0))
        for proc in procs:
            if proc.is_alive():
                with contextlib.suppress(OSError):
                    proc.kill()
                proc.join(timeout=5)

    def close(self) -> None:
        if self.executor == "dask":
            with contextlib.suppress(Exception):
                self._pool.close()
            if self._cluster is not None:
                with contextlib.suppress(Exception):
                    self._cluster.close()
            return
        self._pool.shutdown(wait=True)


# How many times a task whose process died is run in all (Dask's own default for a task whose worker dies,
# distributed.scheduler.allowed-failures, lets it run 4 times).
TASK_RUNS = 3


def process_died(e: BaseException) -> bool:
    """The task's local pool process ended (killed, out of memory, os._exit) rather than raising: running the task
    again in a new pool may succeed. (A Dask cluster runs such a task again by itself.)"""
    from concurrent.futures.process import BrokenProcessPool

    return isinstance(e, BrokenProcessPool)
