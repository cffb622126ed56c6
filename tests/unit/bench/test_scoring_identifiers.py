"""CrossCodeEval's identifier match, as bench crossfile scores it."""

from lsp_coder.bench.scoring import identifier_match, identifiers


def test_identifiers_leave_out_keywords_strings_and_comments():
    assert identifiers("if x > helpers.LIMIT and not 'a b':  # y z", "python") == [
        "x", "helpers", "LIMIT"]
    assert identifiers("const buf = concat(list, `t ${n}`); // a b", "javascript") == [
        "buf", "concat", "list"]
    assert identifiers("return this.#size // 2", "python") == ["this"]
    assert identifiers("total = a // b", "python") == ["total", "a", "b"]


def test_identifier_exact_match_and_f1():
    assert identifier_match("z = scale(y, 3)\nmore", "z = scale(y, 2)", "python") == (
        True, 100.0)
    exact, f1 = identifier_match("z = grow(y)", "z = scale(y, 2)", "python")
    assert not exact and round(f1, 1) == 66.7  # 2 of 3 both ways
    assert identifier_match("", "scale(y)", "python") == (False, 0.0)
    assert identifier_match("1", "2", "python") == (True, 100.0)  # no identifier on either
