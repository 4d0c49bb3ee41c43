"""The dataset's locks and its one multi-file change (a rules change), made safe for concurrent commands.

- ``dataset_lock``: an exclusive ``flock`` of ``DATASET/.lock``, held while a command writes what two commands must
  not write at once: ``init.sql``, the catalog, a trace's publication, a rules change, the removal of work areas of
  dead processes. Re-entrant within a process (a process holding it may take it again).
- ``active``: a shared ``flock`` of ``DATASET/.active``, held for its whole duration by every command that writes
  into the dataset (ingest, catalog, ``categories --rules``). A run that created the dataset and published nothing
  removes it again only when it gets this lock exclusively (no other command is at work in it), so that a run never
  removes what another is writing. A command that finds, once it holds the lock, that ``.active`` is no longer the
  file it locked (the dataset was removed meanwhile) starts again: the dataset is created anew.
- The rules journal (``DATASET/.rules-change.json``): a rules change stages the new rule file and the tables it
  rebuilds in a work area, then commits by writing the journal (one atomic rename), then moves the staged files
  into place and removes the journal. A journal that is found later (its process was killed between the commit and
  the last move) is rolled forward by ``recover`` under the lock: the dataset is either as before the change or
  as after it, never a mix.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson

from tracesql.errors import DatasetError

LOCK_FILE = ".lock"
ACTIVE_FILE = ".active"
JOURNAL = ".rules-change.json"
# Fault injection for tests: a process that commits a change ends at once after writing the journal.
EXIT_AFTER_COMMIT_ENV = "TRACESQL_TEST_EXIT_AFTER_COMMIT"

_held: dict[str, list] = {}  # realpath of the dataset -> [open lock file, depth]
_held_mutex = threading.RLock()


def pid_alive(pid: int) -> bool:
    """Whether a process of this id exists (on this host)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


@contextlib.contextmanager
def dataset_lock(dataset: Path) -> Iterator[None]:
    """Hold the dataset's lock (an exclusive ``flock`` of ``DATASET/.lock``), waiting for another command's. A
    process that holds it already takes it again at once."""
    key = os.path.realpath(dataset)
    with _held_mutex:
        held = _held.get(key)
        if held is not None:
            held[1] += 1
    if held is not None:
        try:
            yield
        finally:
            with _held_mutex:
                held[1] -= 1
        return
    f = open(Path(dataset) / LOCK_FILE, "a+b")  # noqa: SIM115 - closed below
    try:
        fcntl.flock(f, fcntl.LOCK_EX)
        with _held_mutex:
            _held[key] = [f, 1]
        try:
            yield
        finally:
            with _held_mutex:
                _held.pop(key, None)
            fcntl.flock(f, fcntl.LOCK_UN)
    finally:
        f.close()


class Active:
    """The shared lock ``DATASET/.active`` of a command at work in the dataset (see the module's docstring)."""

    def __init__(self, dataset: Path, fd: int):
        self.dataset = dataset
        self.fd = fd

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def try_exclusive(self) -> bool:
        """Whether no other command is at work in the dataset: the lock converted to exclusive (True; it stays
        exclusive until released), else it is taken shared again (False)."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            fcntl.flock(self.fd, fcntl.LOCK_SH)
            return False


def enter(dataset: Path) -> Active | None:
    """Take the shared lock ``DATASET/.active``; None when the dataset directory is not there (any longer). The
    lock taken is that of the file now at that path (a lock on a removed dataset's file is dropped)."""
    path = Path(dataset) / ACTIVE_FILE
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except FileNotFoundError:
            return None
        except PermissionError as e:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                if not Path(dataset).is_dir():
                    return None
                raise e from None  # a dataset that cannot be written
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return Active(Path(dataset), fd)
        os.close(fd)
    return None


@contextlib.contextmanager
def active(dataset: Path) -> Iterator[Active | None]:
    """``enter`` for the duration of a block (None: no dataset there, or none that can be written)."""
    a = enter(dataset)
    try:
        yield a
    finally:
        if a is not None:
            a.release()


# -- the rules journal ---------------------------------------------------------------------------------------------

def fsync_dir(d: Path) -> None:
    """Make a directory's entries (files created, renamed or removed in it) durable; best effort."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def commit(dataset: Path, staging: Path, moves: list[tuple[Path, Path]], removes: list[Path]) -> None:
    """Commit a change (the caller holds the lock): write the journal (``moves``: staged file -> its place in the
    dataset; ``removes``: files of the dataset to delete), then apply it. Once the journal is written, the change
    is made whole, by this call or, if this process dies first, by the next ``recover``."""
    dataset = Path(dataset)
    rel = lambda p: os.path.relpath(p, dataset)  # noqa: E731 - the journal names paths within the dataset
    body = {"pid": os.getpid(), "staging": rel(staging), "moves": [[rel(a), rel(b)] for a, b in moves],
            "removes": [rel(p) for p in removes]}
    tmp = dataset / f".{JOURNAL}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(body))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, dataset / JOURNAL)
    fsync_dir(dataset)
    if os.environ.get(EXIT_AFTER_COMMIT_ENV):  # fault injection (tests): die between the commit and the moves
        os._exit(3)
    _apply(dataset, body)


def _apply(dataset: Path, body: dict) -> None:
    for a, b in body["moves"]:
        src, dst = dataset / a, dataset / b
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
    for p in body["removes"]:
        (dataset / p).unlink(missing_ok=True)
    for d in {(dataset / b).parent for _, b in body["moves"]}:
        fsync_dir(d)
    (dataset / JOURNAL).unlink(missing_ok=True)
    fsync_dir(dataset)
    shutil.rmtree(dataset / body["staging"], ignore_errors=True)


def pending(dataset: Path) -> bool:
    """Whether a committed change waits to be rolled forward."""
    return (Path(dataset) / JOURNAL).exists()


def recover(dataset: Path) -> None:
    """Roll forward a committed change whose process died before finishing it (nothing to do without a journal).
    Raises DatasetError when one is pending and the dataset cannot be written."""
    dataset = Path(dataset)
    if not pending(dataset):
        return
    try:
        with dataset_lock(dataset):
            try:
                body = orjson.loads((dataset / JOURNAL).read_bytes())
            except FileNotFoundError:
                return  # finished meanwhile by its own process
            _apply(dataset, body)
    except OSError as e:
        raise DatasetError(f"{dataset}: a change of the category rules was interrupted after it was committed and "
                           f"cannot be finished here ({e.strerror or type(e).__name__}); run any tracesql command "
                           "on the dataset with write access to finish it") from None
