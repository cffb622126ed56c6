"""The idle planner: the queue of prompts to prepare, from events alone (no model, no loop)."""

from __future__ import annotations

from lsp_coder.completion.next_prompts import NextPrompt
from lsp_coder.server import idle_plan


def job(kind: str, uri: str) -> NextPrompt:
    return NextPrompt(kind, uri, uri, "x = 1\n", 0)


def kinds(queue: list[NextPrompt]) -> list[tuple[str, str]]:
    return [(n.kind, n.uri) for n in queue]


def test_a_request_keeps_windows_and_other_files_cursors_only():
    queue = [job("enter", "a"), job("window", "b"), job("cursor", "a"), job("cursor", "b"),
             job("full", "b")]
    assert kinds(idle_plan.on_request(queue, "a")) == [("window", "b"), ("cursor", "b")]


def test_an_answers_branches_go_first_and_a_running_hint_of_another_file_waits():
    queue = [job("window", "b"), job("accept", "a"), job("cursor", "a")]
    running = job("cursor", "c")
    plan = idle_plan.on_answer(queue, [job("enter", "a"), job("accept", "a")], "a", running)
    assert plan.stop == "now"
    assert kinds(plan.queue) == [("enter", "a"), ("accept", "a"), ("window", "b"),
                                 ("cursor", "c")]


def test_an_answer_with_no_branches_lets_the_running_job_go_on():
    plan = idle_plan.on_answer([job("window", "b")], [], "a", job("window", "b"))
    assert plan.stop == "no" and kinds(plan.queue) == [("window", "b")]


def test_an_opened_files_window_replaces_what_was_queued_for_it():
    queue = [job("enter", "a"), job("cursor", "b")]
    assert kinds(idle_plan.on_open(queue, job("window", "a"))) == [("cursor", "b"),
                                                                   ("window", "a")]


def test_a_cursor_goes_after_its_files_branches_and_before_other_files():
    queue = [job("window", "b"), job("enter", "a"), job("window", "a"), job("full", "a")]
    plan = idle_plan.on_cursor(queue, job("cursor", "a"), running=job("window", "b"))
    assert plan.stop == "now"  # another file's work waits, from the chunks it finished
    assert kinds(plan.queue) == [("enter", "a"), ("cursor", "a"), ("window", "b"),
                                 ("window", "b")]


def test_a_cursor_lets_its_files_running_full_prompt_finish_its_chunk():
    plan = idle_plan.on_cursor([], job("cursor", "a"), running=job("full", "a"))
    assert plan.stop == "after_chunk" and kinds(plan.queue) == [("cursor", "a")]


def test_only_the_focus_documents_own_state_is_in_view():
    assert idle_plan.in_view(job("cursor", "a"), "a")
    assert idle_plan.in_view(job("full", "a"), "a")
    assert not idle_plan.in_view(job("enter", "a"), "a")
    assert not idle_plan.in_view(job("window", "b"), "a")


def test_a_short_cursor_prompt_is_followed_by_the_full_one_while_the_user_stays():
    cursor = job("cursor", "a")

    def full_at(nxt):
        return NextPrompt("full", nxt.uri, nxt.path, nxt.base, nxt.offset)

    rest = [job("window", "b")]
    assert kinds(idle_plan.after_job(rest, cursor, True, False, "a", full_at)) == [
        ("full", "a"), ("window", "b")]
    assert idle_plan.after_job(rest, cursor, True, True, "a", full_at) == rest  # stopped
    assert idle_plan.after_job(rest, cursor, True, False, "b", full_at) == rest  # user left
    assert idle_plan.after_job(rest, cursor, False, False, "a", full_at) == rest


def test_a_closed_documents_work_is_dropped():
    queue = [job("enter", "a"), job("window", "b")]
    assert kinds(idle_plan.on_close(queue, "a")) == [("window", "b")]
