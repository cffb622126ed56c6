"""What the inference worker thread and the event loop both read and write, behind one lock."""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

Job = TypeVar("Job")


class WorkerState(Generic[Job]):
    """The request job running on the worker, how many jobs are queued or running, and the
    engine's ubatch clock when a request last stopped idle work.

    Every read and write goes through the lock: the worker sets the running job and takes the
    preemption mark; the event loop reads the running job, counts jobs in and marks
    preemptions.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: Job | None = None
        """The request job on the worker now (None between jobs and during idle work)."""
        self._jobs = 0
        """Request jobs queued or running on the worker."""
        self._preempted_at: int | None = None
        """The ubatch clock when a request stopped the running idle job (None: it was not)."""

    @property
    def running(self) -> Job | None:
        with self._lock:
            return self._running

    def set_running(self, job: Job | None) -> None:
        with self._lock:
            self._running = job

    def job_queued(self) -> None:
        with self._lock:
            self._jobs += 1

    def job_done(self) -> None:
        with self._lock:
            self._jobs -= 1

    @property
    def busy(self) -> bool:
        """Whether request work is queued or running."""
        with self._lock:
            return self._jobs > 0

    def mark_preempted(self, clock: int | None) -> None:
        """A request stopped idle work at ``clock`` (None: forget an earlier mark)."""
        with self._lock:
            self._preempted_at = clock

    def take_preempted(self) -> int | None:
        """The mark, which is then cleared (the request that pays for the stop takes it)."""
        with self._lock:
            clock, self._preempted_at = self._preempted_at, None
            return clock


PASSED_OVER_MAX = 2
"""A waiting request job runs next once this many newer ones have gone before it."""


class RequestQueue(Generic[Job]):
    """Request jobs waiting for the worker, from every editor session of the server.

    The newest goes first (the key the user typed last wins over a window they left), but no
    job is passed over more than ``PASSED_OVER_MAX`` times, so an editor that keeps sending
    cannot starve another. Pushed on the event loop, popped on the worker.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: list[list] = []
        """[job, times passed over], oldest first."""

    def push(self, job: Job) -> None:
        with self._lock:
            self._jobs.append([job, 0])

    def pop(self) -> Job | None:
        """The job to run now (None when none waits)."""
        with self._lock:
            if not self._jobs:
                return None
            index = 0 if self._jobs[0][1] >= PASSED_OVER_MAX else -1
            job = self._jobs.pop(index)[0]
            if index == -1:
                for entry in self._jobs:
                    entry[1] += 1
            return job

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)
