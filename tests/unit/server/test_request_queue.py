"""The order request jobs of several editors take on the one worker."""

from __future__ import annotations

from lsp_coder.server.worker_state import PASSED_OVER_MAX, RequestQueue


def test_the_newest_goes_first():
    queue: RequestQueue[str] = RequestQueue()
    for job in ("a", "b"):
        queue.push(job)
    assert queue.pop() == "b"
    assert queue.pop() == "a"
    assert queue.pop() is None


def test_no_job_is_passed_over_more_than_the_limit():
    queue: RequestQueue[str] = RequestQueue()
    queue.push("waiting")
    order = []
    for n in range(PASSED_OVER_MAX + 2):
        queue.push(f"new{n}")
        order.append(queue.pop())
    assert order[:PASSED_OVER_MAX] == [f"new{n}" for n in range(PASSED_OVER_MAX)]
    assert order[PASSED_OVER_MAX] == "waiting"
