"""Pickle, joblib and files: a fitted estimator and an ffnn.Model survive pickle with
identical predictions (the state is the model file's bytes); joblib's process pool
(n_jobs=2) trains and returns estimators; an estimator's save/load keeps classes_ and
the standardisation; a model written by the CLI loads with its class names."""
import copy
import os
import pickle
import subprocess

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.model_selection import cross_validate  # noqa: E402

import ffnn  # noqa: E402


def test_model_pickles_as_its_file(circle, tmp_path):
    X, y = circle
    model = ffnn.train(X, y, arch="2-8tanh-2", epochs=3, device="cpu")
    model.class_names = ["out", "in"]
    data = pickle.dumps(model)
    back = pickle.loads(data)
    assert np.array_equal(back.parameters(), model.parameters())
    assert np.array_equal(back.predict(X), model.predict(X))
    assert back.arch == model.arch and back.loss == "ce" and back.class_names == ["out", "in"]
    assert back.history == model.history
    model.save(tmp_path / "m.safetensors")
    assert model.to_bytes() == (tmp_path / "m.safetensors").read_bytes()
    assert (tmp_path / "m.safetensors").read_bytes() in data
    twin = copy.deepcopy(model)
    twin.parameters()[:] = 0
    assert not np.array_equal(twin.parameters(), model.parameters())


@pytest.mark.parametrize("cls", [ffnn.MLPClassifier, ffnn.MLPRegressor])
def test_fitted_estimator_pickles(circle, cls):
    X, y = circle
    est = cls(hidden_layer_sizes=(8,), max_iter=20, random_state=0, standardize=True)
    est.fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict(X), est.predict(X))
    assert back.get_params() == est.get_params()
    assert back.n_features_in_ == 2 and back.loss_curve_ == est.loss_curve_
    if cls is ffnn.MLPClassifier:
        assert np.array_equal(back.predict_proba(X), est.predict_proba(X))


def test_joblib_two_processes(circle):
    joblib = pytest.importorskip("joblib")
    X, y = circle
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(16,), max_iter=30, random_state=0)
    out = cross_validate(clf, X, y, cv=3, n_jobs=2, return_estimator=True)
    serial = cross_validate(clf, X, y, cv=3, n_jobs=1, return_estimator=True)
    assert np.array_equal(out["test_score"], serial["test_score"])
    for a, b in zip(out["estimator"], serial["estimator"]):
        assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    fitted = joblib.Parallel(n_jobs=2)(
        joblib.delayed(clf.fit)(X, y) for _ in range(2))
    assert np.array_equal(fitted[0].predict(X), fitted[1].predict(X))


def test_estimator_save_load_keeps_classes_and_standardisation(circle, tmp_path):
    X, y = circle
    labels = np.where(y == 1, "in", "out")
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(8,), max_iter=20, random_state=0,
                             standardize=True).fit(X * 100 + 5, labels)
    clf.save(tmp_path / "c.safetensors")
    back = ffnn.MLPClassifier.load(tmp_path / "c.safetensors")
    assert list(back.classes_) == ["in", "out"]
    assert back.model_.standardization is not None
    assert np.array_equal(back.predict_proba(X * 100 + 5), clf.predict_proba(X * 100 + 5))
    assert np.array_equal(back.predict(X * 100 + 5), clf.predict(X * 100 + 5))
    ints = ffnn.MLPClassifier(max_iter=5, random_state=0).fit(X, y * 3 + 7)
    ints.save(tmp_path / "i.safetensors")
    back = ffnn.MLPClassifier.load(tmp_path / "i.safetensors")
    assert back.classes_.dtype.kind == "i" and list(back.classes_) == [7, 10]
    reg = ffnn.MLPRegressor(max_iter=20, random_state=0, standardize=True).fit(X, X[:, 0] * 50)
    reg.save(tmp_path / "r.safetensors")
    assert np.array_equal(ffnn.MLPRegressor.load(tmp_path / "r.safetensors").predict(X),
                          reg.predict(X))
    with pytest.raises(ValueError, match="loss 'mse'"):
        ffnn.MLPClassifier.load(tmp_path / "r.safetensors")


def test_cli_model_loads_with_class_names(tmp_path, lib):
    cli = os.path.join(os.path.dirname(lib), "ffnn")
    if not os.access(cli, os.X_OK):
        pytest.skip("no ffnn program next to %s" % lib)
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (300, 2))
    names = np.where((X ** 2).sum(axis=1) < 0.5, "inside", "outside")
    csv = tmp_path / "circle.csv"
    with open(csv, "w") as f:
        f.write("u,v,where\n")
        for (u, v), n in zip(X, names):
            f.write("%.6f,%.6f,%s\n" % (u, v, n))
    path = tmp_path / "cli.safetensors"
    subprocess.run([cli, "train", "--data", str(csv), "--arch", "2-16tanh-2", "--epochs", "60",
                    "--optimizer", "adam", "--lr", "0.02", "--batch", "16", "--device", "cpu",
                    "--save", str(path)], check=True, capture_output=True)
    assert ffnn.load(path).class_names == ["inside", "outside"]
    clf = ffnn.MLPClassifier.load(path)
    assert list(clf.classes_) == ["inside", "outside"]
    out = subprocess.run([cli, "predict", "--model", str(path), "--data", str(csv)],
                         check=True, capture_output=True, text=True).stdout.split()
    assert out[0] == "class,p_inside,p_outside"
    rows = [line.split(",") for line in out[1:]]
    assert list(clf.predict(X)) == [r[0] for r in rows]  # the CLI's labels, from Python
    assert np.allclose(clf.predict_proba(X), [[float(v) for v in r[1:]] for r in rows],
                       rtol=1e-5, atol=1e-6)
    assert clf.score(X, names) > 0.9
