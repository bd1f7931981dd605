"""I5 on the records of a large check, made by a second process while this one goes on.

A check validates each line a change adds to a fact file or a ledger shard, or closes in a fact file (parse,
schema, the file it belongs in: rules/records.py), about 5 µs a line: a promotion of 200,000 records adds
300,000 such lines, a third of its commit's check. Once a check has validated START bytes of them itself,
the next ones go to a second process (`python -m memstack.integrity.farm`, started once a check), BATCH
bytes at a time, and their violations come back to be reported with the rest at the end of the step
(`collect`): the machine's second core validates while this process reads blobs, compares files, and screens
for credentials. The answer is the same either way (`rules.records` is a function of a file's lines; the
lines of an intake file, whose check asks more of the repository, are always validated here).

Nothing is left unchecked if the second process cannot start or dies: what it has not answered is
validated here; and this process validates the next lines itself rather than hold more than IN_FLIGHT
bytes unanswered.
"""

import itertools
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from typing import IO, Any

from memstack.base import layout
from memstack.base.layout import Place
from memstack.integrity import rules
from memstack.integrity.violations import Violation

START = 4 << 20  # bytes of lines a check validates itself before a second process is started
BATCH = 256 << 10  # bytes of lines handed over at once
IN_FLIGHT = 16 << 20  # bytes handed over and not yet answered, at most
KINDS = (layout.FACTS, layout.PROMOTIONS)  # the lines handed over: those of fact files and ledger shards

Lines = list[tuple[int, bytes]]
Item = tuple[str, Place, Lines]


class Farm:
    """The records of one check validated here or by a second process (`records`, `collect`)."""

    def __init__(self, command: list[str] | None = None) -> None:
        # -P: not the current folder first on the path, where a folder named memstack could stand in for this one
        self.command = command or [sys.executable, "-P", "-m", __name__]
        self.seen = 0  # bytes of lines asked of `records`
        self.proc: subprocess.Popen[bytes] | None = None
        self.dead = False  # the second process could not start, or stopped answering
        self.batch: list[Item] = []
        self.batch_bytes = 0
        self.tokens = itertools.count()
        self.unanswered: dict[int, tuple[list[Item], int]] = {}  # token -> the items sent and their bytes
        self.answers: list[Violation] = []
        self.answered = 0  # batches the second process answered
        self.threads: list[threading.Thread] = []
        self.in_flight = 0
        self.changed = threading.Condition()
        self.outbox: queue.SimpleQueue[tuple[int, list[Item]] | None] = queue.SimpleQueue()

    def records(self, path: str, place: Place, numbered: Iterable[tuple[int, bytes]], old: bytes | None = None, *,
                ratified: Callable[[], bool] | None = None) -> list[Violation]:
        """`rules.records` of these lines: its violations, or [] when they are handed over (`collect` gives
        theirs)."""
        if place.kind not in KINDS or self.dead:
            return rules.records(path, place, numbered, old or b"", ratified=ratified)
        lines = list(numbered)
        size = sum(len(raw) for _, raw in lines)
        self.seen += size
        with self.changed:
            busy = self.in_flight + self.batch_bytes + size > IN_FLIGHT
        if self.seen <= START or busy or not self._started():
            return rules.records(path, place, lines)
        self.batch.append((path, place, lines))
        self.batch_bytes += size
        if self.batch_bytes >= BATCH:
            self._send()
        return []

    def collect(self) -> list[Violation]:
        """The violations of every line handed over since the last call, once all are answered (what the
        second process leaves unanswered is validated here)."""
        if self.proc is None:
            return []
        self._send()
        with self.changed:
            self.changed.wait_for(lambda: not self.unanswered or self.dead)
            left = [item for items, _ in self.unanswered.values() for item in items]
            self.unanswered.clear()
            self.in_flight = 0
            found, self.answers = self.answers, []
        return found + [v for path, place, lines in left for v in rules.records(path, place, lines)]

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
            thread.join()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def _started(self) -> bool:
        if self.proc is None and not self.dead:
            try:
                if not self.command[0]:
                    raise OSError("no interpreter to start")
                self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL)
            except OSError:
                self.dead = True
                return False
            stdin, stdout = self.proc.stdin, self.proc.stdout
            assert stdin is not None and stdout is not None
            self.threads = [threading.Thread(target=self._write, args=(stdin,), daemon=True),
                            threading.Thread(target=self._read, args=(stdout,), daemon=True)]
            for thread in self.threads:
                thread.start()
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
        except (OSError, ValueError):
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
                    self.answers += found
                    self.answered += 1
                    self.changed.notify_all()
        except Exception:  # the end of its output: it stopped (killed, or it could not start)
            self._stopped()

    def _stopped(self) -> None:
        with self.changed:
            self.dead = True
            self.changed.notify_all()


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The second process: each request's lines validated, its violations sent back, until its input ends."""
    while True:
        try:
            token, items = pickle.load(requests)
        except EOFError:
            return
        found: Any = [v for path, place, lines in items for v in rules.records(path, place, lines)]
        pickle.dump((token, found), answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
