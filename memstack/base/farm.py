"""Work handed to a second process while this one goes on: the machine's second core.

A job is a function of plain values (`module:function`, each call's arguments one item) returning a list,
the same whichever process calls it. Once a caller has offered START bytes of items (`hand`: fewer, and this
process does the work itself), a second process (`python -m memstack.base.farm JOB`, started once) is handed
the next ones BATCH bytes at a time, and `collect` gives their results, all of them, in no set order.

Nothing is lost if the second process cannot start or dies: `collect` does here what it did not answer;
and past `in_flight` bytes handed over and unanswered (IN_FLIGHT unless the caller says), `hand` refuses (the
caller does the work itself) rather than hold more: a caller that waits for every answer at once (a promotion's
vetting) keeps it small, so that neither process is left with much to do when the other is done.
"""

import importlib
import itertools
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import cache
from typing import IO, Any

BATCH = 256 << 10  # bytes of items handed over at once
IN_FLIGHT = 16 << 20  # bytes handed over and not yet answered, at most


@cache
def job(name: str) -> Callable[..., list[Any]]:
    module, _, function = name.partition(":")
    found: Callable[..., list[Any]] = getattr(importlib.import_module(module), function)
    return found


class Farm:
    """A second process doing `job` (a `module:function` name) on the items `hand` gives it past `start` bytes."""

    def __init__(self, name: str, start: int, in_flight: int = IN_FLIGHT) -> None:
        self.name, self.start, self.in_flight_most = name, start, in_flight
        # -P: not the current folder first on the path, where a folder named memstack could stand in for this one
        self.command = [sys.executable, "-P", "-m", __name__, name]
        self.offered = 0  # bytes of items offered to `hand`
        self.proc: subprocess.Popen[bytes] | None = None
        self.dead = False  # the second process could not start, or stopped answering
        self.batch: list[tuple[Any, ...]] = []
        self.batch_bytes = 0
        self.tokens = itertools.count()
        self.unanswered: dict[int, tuple[list[tuple[Any, ...]], int]] = {}  # token -> the items sent, their bytes
        self.results: list[Any] = []
        self.answered = 0  # batches the second process answered
        self.in_flight = 0
        self.changed = threading.Condition()
        self.outbox: queue.SimpleQueue[tuple[int, list[tuple[Any, ...]]] | None] = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []

    def hand(self, item: tuple[Any, ...], size: int) -> bool:
        """Hand `item` (about `size` bytes) over: True, or False when this process is to do it itself (fewer
        than `start` bytes offered yet, too many unanswered, no second process to be had)."""
        self.offered += size
        if self.offered <= self.start or self.dead:
            return False
        with self.changed:
            if self.in_flight + self.batch_bytes + size > self.in_flight_most:
                return False
        if not self._started():
            return False
        self.batch.append(item)
        self.batch_bytes += size
        if self.batch_bytes >= BATCH:
            self._send()
        return True

    def collect(self) -> list[Any]:
        """The results of every item handed over since the last call, once all are answered (what the second
        process leaves unanswered is done here)."""
        if self.proc is None:
            return []
        self._send()
        with self.changed:
            self.changed.wait_for(lambda: not self.unanswered or self.dead)
            left = [item for items, _ in self.unanswered.values() for item in items]
            self.unanswered.clear()
            self.in_flight = 0
            found, self.results = self.results, []
        do = job(self.name)
        return found + [result for item in left for result in do(*item)]

    def close(self) -> None:
        if self.proc is None:
            return
        self.outbox.put(None)  # the writer closes the pipe: the second process ends
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for thread in self.threads:
            if thread.ident is not None:  # started
                thread.join()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def _started(self) -> bool:
        if self.proc is None and not self.dead:
            if not self.command[0] or _address_limited():
                self.dead = True  # no interpreter to start; or each thread's stack would count against the limit
                return False
            try:
                self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL)
                stdin, stdout = self.proc.stdin, self.proc.stdout
                assert stdin is not None and stdout is not None
                self.threads = [threading.Thread(target=self._write, args=(stdin,), daemon=True),
                                threading.Thread(target=self._read, args=(stdout,), daemon=True)]
                for thread in self.threads:
                    thread.start()
            except (OSError, MemoryError, RuntimeError):  # no process or no thread to be had: all done here
                self.dead = True
                if self.proc is not None:
                    self.proc.kill()
                    self.proc.wait()
                    self.proc = None
                    self.threads = []
                return False
        return not self.dead

    def _send(self) -> None:
        if not self.batch:
            return
        token = next(self.tokens)
        with self.changed:
            self.unanswered[token] = (self.batch, self.batch_bytes)
            self.in_flight += self.batch_bytes
        self.outbox.put((token, self.batch))
        self.batch, self.batch_bytes = [], 0

    def _write(self, pipe: IO[bytes]) -> None:
        try:
            while (request := self.outbox.get()) is not None:
                pickle.dump(request, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.flush()
        except Exception:  # the pipe closed (it stopped), or no memory left to write with
            self._stopped()
        finally:
            try:
                pipe.close()
            except OSError:
                pass

    def _read(self, pipe: IO[bytes]) -> None:
        try:
            while True:
                token, found = pickle.load(pipe)
                with self.changed:
                    _, size = self.unanswered.pop(token, ([], 0))
                    self.in_flight -= size
                    self.results += found
                    self.answered += 1
                    self.changed.notify_all()
        except Exception:  # the end of its output: it stopped (killed, or it could not start)
            self._stopped()

    def _stopped(self) -> None:
        with self.changed:
            self.dead = True
            self.changed.notify_all()


def _address_limited() -> bool:
    """Whether this process runs under an address-space limit (`ulimit -v`): a second process and the threads
    that feed it (each thread's stack reserves megabytes of address space) are not for such a process."""
    try:
        import resource  # deferred: POSIX only
    except ImportError:
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY


def _serve(name: str, requests: IO[bytes], answers: IO[bytes]) -> None:
    """The second process: each request's items done, their results sent back, until its input ends."""
    do = job(name)
    while True:
        try:
            token, items = pickle.load(requests)
        except EOFError:
            return
        pickle.dump((token, [result for item in items for result in do(*item)]), answers,
                    protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    _serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer)
