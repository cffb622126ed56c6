"""bench crossfile's table: each run against in-file only with the same prompt kind."""

from lsp_coder.bench.crossfile_report import Answer, in_file_run, summarize, table


def _summary(exact: int, similarity: float) -> dict[str, float]:
    return summarize([Answer(i, "x", i < exact, similarity, False, 10.0, 100, False)
                      for i in range(4)])


def test_a_run_is_compared_with_in_file_of_the_same_variants():
    runs = dict.fromkeys(("in-file", "in-file+full", "all", "all+full", "definitions+cold64"),
                         {})
    assert in_file_run("all+full", runs) == "in-file+full"
    assert in_file_run("all", runs) == "in-file"
    assert in_file_run("definitions+cold64", runs) == "in-file"  # no in-file+cold64 run
    assert in_file_run("in-file+full", runs) is None
    assert in_file_run("all+full", {"all+full": {}}) is None


def test_the_table_prints_the_ratio_and_the_edit_similarity_gain():
    text = table({"in-file+full": _summary(2, 40.0), "all+full": _summary(3, 52.5)})
    assert "all+full vs in-file+full: exact x1.50, edit similarity +12.5" in text
    assert "vs in-file+full" not in text.splitlines()[1]
