"""docs/PYTHON_GUIDE.md's example (pandas -> Pipeline -> GridSearchCV -> pickle ->
predict) runs as written and prints what the guide shows."""
import contextlib
import io
import os
import re

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("pandas")


def test_guide_example_runs_as_written(root, tmp_path, monkeypatch):
    with open(os.path.join(root, "docs", "PYTHON_GUIDE.md")) as f:
        text = f.read()
    section = text[text.index("## From a DataFrame"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"It prints[^\n]*\n\n```\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        namespace = {}
        exec(compile(code, "docs/PYTHON_GUIDE.md", "exec"), namespace)
    assert out.getvalue() == shown
    assert (tmp_path / "wine.pkl").exists()
    assert namespace["search"].best_score_ >= 0.9


def test_guide_table_example_runs_as_written(root, tmp_path, monkeypatch):
    """The "Tables" section: a frame with an id, text, a category column and missing
    cells through fit, the encoding, an unseen level at predict, pickle, save."""
    with open(os.path.join(root, "docs", "PYTHON_GUIDE.md")) as f:
        text = f.read()
    section = text[text.index("## Tables: text categories and missing cells"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"It prints.*?:\n\n```\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), \
            pytest.warns(UserWarning, match=r"1 cell of a category .*'Paris'"):
        exec(compile(code, "docs/PYTHON_GUIDE.md", "exec"), {})
    assert out.getvalue() == shown
    assert (tmp_path / "churn.safetensors").exists()


def test_guide_sweep_example_runs_as_written(root, tmp_path, monkeypatch):
    """The "Sweeps and ensembles" section's example runs, ranks six configurations and
    writes the ensemble that ffnn.load reads back as 3 members."""
    with open(os.path.join(root, "docs", "PYTHON_GUIDE.md")) as f:
        text = f.read()
    section = text[text.index("## Sweeps and ensembles"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(code, "PYTHON_GUIDE.md", "exec"), scope)
    assert [r["rank"] for r in scope["results"]] == [1, 2, 3, 4, 5, 6]
    import ffnn
    assert ffnn.load(str(tmp_path / "top3.safetensors")).n_members == 3
