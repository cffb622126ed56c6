"""The known members of one request: those found up front, and import keys looked up as the
rule asks for them."""

from __future__ import annotations

from lsp_coder.completion.related.known_keys import LOOKUPS_MAX, KnownKeys


def test_a_key_not_found_up_front_is_looked_up_once():
    asked: list[str] = []

    def look_up(key: str) -> frozenset[str] | None:
        asked.append(key)
        return frozenset({"core"}) if key == "pkg" else None

    keys = KnownKeys({"errors": frozenset({"Defect"})}, look_up)
    assert list(keys) == ["errors"] and len(keys) == 1  # only what was found is listed
    assert "errors" in keys and keys["errors"] == {"Defect"}
    assert "pkg" in keys and keys["pkg"] == {"core"}
    assert "other" not in keys and "other" not in keys
    assert asked == ["pkg", "other"]  # each once, none for a key found up front


def test_a_request_looks_up_a_bounded_number_of_keys():
    keys = KnownKeys({}, lambda key: frozenset({key}))
    assert keys  # worth a rule though nothing was found up front
    for n in range(LOOKUPS_MAX):
        assert f"m{n}" in keys
    assert "one_more" not in keys
    assert "m0" in keys  # those looked up stay
