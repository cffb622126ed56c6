"""A second pass by the names of the first answer (``context.second_pass``), on the real
engine: it answers again only when the first answer's names add code to the section."""

from __future__ import annotations

from lsp_coder.completion.prompt_sources import DocumentSources, settings_budget
from lsp_coder.completion.second_pass import answer_again
from lsp_coder.completion.service import CompletionRequest
from lsp_coder.shared_types import FimQuery
from tests.unit.completion.test_service_context import service_for, workspace

BEFORE_THE_NAME = "from pkg.core import Engine\n\n\ndef main():\n    engine = "
"""The cursor before the imported name it needs: the names around it find nothing."""


def test_a_first_answer_naming_code_the_section_lacks_is_answered_again(tiny_qwen,
                                                                          tmp_path):
    root = workspace(tmp_path)
    service = service_for(tiny_qwen, idle={"enabled": False},
                          context={"workspace": False, "second_pass": True})
    try:
        service.workspace_folders([root.as_uri()])
        req = CompletionRequest(uri=(root / "pkg" / "app.py").as_uri(), text=BEFORE_THE_NAME,
                                offset=len(BEFORE_THE_NAME))
        config, backend = service.config, service.backend
        query = FimQuery(uri=req.uri, budget=settings_budget(config), max_tokens=4,
                         sources=DocumentSources(req, config, service.related,
                                                 edits=service.edits))
        first = backend.complete(query)
        assert query.parts.extra == ()

        def again(first_text: str):
            return answer_again(backend, query, first, first_text, req, config,
                                service.related, service.edits)

        assert again("1 + 2") is None  # names nothing: the first answer stands
        assert again("") is None
        answered = again("Engine(name)")
        assert answered is not None
        second, asked = answered
        assert second.stats.second_pass and asked.hint == "Engine(name)"
        assert second.stats.prompt_tokens > first.stats.prompt_tokens  # the definition
        assert second.stats.evaluated_tokens > first.stats.evaluated_tokens  # both passes
        assert second.stats.generated_tokens >= first.stats.generated_tokens
        # The section that grew is the document's now: the next request shows it too.
        sources = DocumentSources(req, config, service.related, edits=service.edits)
        [(path, body)] = sources.gather(query.budget).extra
        assert path == "pkg/core.py" and "class Engine:" in body
    finally:
        service.close()
