"""One workspace index for the sessions of a server on the same folders and settings."""

from __future__ import annotations

from lsp_coder.completion.related import RelatedContext
from lsp_coder.completion.related.index_pool import IndexPool
from lsp_coder.config import Config, apply
from lsp_coder.server.host import EngineHost
from lsp_coder.server.session import LspCoderServer

CONFIG = Config()


def session(pool: IndexPool, folder, config: Config = CONFIG) -> RelatedContext:
    related = RelatedContext(pool)
    related.set_roots([folder.as_uri()], config)
    return related


def test_sessions_on_one_folder_share_its_index_until_the_last_ends(workspace):
    pool = IndexPool()
    first, second = session(pool, workspace), session(pool, workspace)
    assert first.index is not None and first.index is second.index and len(pool) == 1
    assert first.index.wait_ready(60)
    [(path, _tag, _tags)] = second.index.lookup("shout")
    assert path == workspace / "pkg" / "util" / "text.py"
    shared = second.index
    first.close()
    assert len(pool) == 1 and second.index is shared and shared.lookup("shout")
    second.close()
    assert len(pool) == 0 and second.index is None
    third = session(pool, workspace)
    assert third.index is not shared  # built again for the next editor
    third.close()


def test_other_folders_or_exclusions_get_their_own_index(workspace, tmp_path, files):
    pool = IndexPool()
    other = files(tmp_path / "other", {"lib.py": "def shout(s):\n    return s\n"})
    hidden = apply(CONFIG, {"context": {"exclude": ["pkg/util/"]}}, "test")
    plain, elsewhere, excluding = (session(pool, workspace), session(pool, other),
                                   session(pool, workspace, hidden))
    indexes = {id(r.index) for r in (plain, elsewhere, excluding)}
    assert len(indexes) == 3 and len(pool) == 3
    for related in (plain, elsewhere, excluding):
        assert related.index.wait_ready(60)
    assert [p.name for p, *_ in plain.index.lookup("shout")] == ["text.py"]
    assert [p.name for p, *_ in elsewhere.index.lookup("shout")] == ["lib.py"]
    assert excluding.index.lookup("shout") == []  # its exclusion, not the other sessions'
    for related in (plain, elsewhere, excluding):
        related.close()
    assert len(pool) == 0


def test_new_settings_move_a_session_to_another_index_and_leave_the_others(workspace):
    pool = IndexPool()
    first, second = session(pool, workspace), session(pool, workspace)
    shared = first.index
    text = "from pkg.util.text import shout\n\nshout("
    uri = (workspace / "app.py").as_uri()
    hidden = apply(CONFIG, {"context": {"exclude": ["pkg/util/"]}}, "test")
    second.section(uri, text, len(text), 512, hidden)  # a request with the new settings
    assert second.index is not shared and first.index is shared and len(pool) == 2
    off = apply(CONFIG, {"context": {"workspace": False}}, "test")
    second.section(uri, text, len(text), 512, off)
    assert second.index is None and len(pool) == 1
    first.close()
    second.close()
    assert len(pool) == 0


def test_the_sessions_of_one_server_share_the_index(workspace):
    host = EngineHost(shared=True)
    first, second = LspCoderServer(host, CONFIG), LspCoderServer(host, CONFIG)
    try:
        for editor in (first, second):
            editor.service.workspace_folders([workspace.as_uri()])
        assert first.service.related.index is second.service.related.index
        assert len(host.indexes) == 1
    finally:
        first.service.end()
        second.service.end()
        host.worker.shutdown()
    assert len(host.indexes) == 0
