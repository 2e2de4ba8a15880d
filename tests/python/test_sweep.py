"""ffnn.sweep (python/ffnn/sweep.py) and ffnn.ensemble: every configuration of a grid
equals its lone ffnn.train run bit for bit (cpu), the results are ranked by the
validation loss, return_best gives the rank-1 model, bad grids are refused by name;
an ensemble of the best two predicts the mean of their predictions and survives a
file round trip that ffnn predict's reader takes."""
import numpy as np
import pytest

import ffnn


def split(circle):
    X, y = circle
    return X[:800], y[:800], X[800:], y[800:]


def test_sweep_models_equal_lone_runs_and_rank(circle):
    X, y, Xv, yv = split(circle)
    grid = {"learning_rate": [0.01, 0.1], "seed": [1, 2], "optimizer": ["sgd", "adam"]}
    results, best = ffnn.sweep(X, y, grid, arch="2-16relu-2", epochs=4, batch_size=32,
                               validation_data=(Xv, yv), keep_models=True,
                               return_best=True, threads=2)
    assert [r["rank"] for r in results] == list(range(1, 9))
    assert sorted(r["configuration"] for r in results) == list(range(1, 9))
    losses = [r["val_loss"] for r in results]
    assert losses == sorted(losses)
    assert best is results[0]["model"]
    for r in results:
        s = r["settings"]
        lone = ffnn.train(X, y, arch="2-16relu-2", epochs=4, batch_size=32, device="cpu",
                          learning_rate=s["learning_rate"], seed=s["seed"],
                          optimizer=s["optimizer"])
        assert np.array_equal(lone.parameters(), r["model"].parameters()), s
        assert r["epochs"] == 4 and r["arch"] == "2-16relu-2"
        assert r["val_loss"] == pytest.approx(lone.evaluate(Xv, yv)["loss"], rel=1e-12)
    # configuration order: the last key varies fastest
    by_conf = {r["configuration"]: r["settings"] for r in results}
    assert by_conf[1] == {"learning_rate": 0.01, "seed": 1, "optimizer": "sgd"}
    assert by_conf[2] == {"learning_rate": 0.01, "seed": 1, "optimizer": "adam"}
    assert "model" not in ffnn.sweep(X, y, {"seed": [1]}, arch="2-4relu-2", epochs=1)[0]


def test_sweep_early_stopping_and_arch_axis(circle):
    X, y, Xv, yv = split(circle)
    results = ffnn.sweep(X, y, {"arch": ["2-8relu-2", "2-4tanh-4relu-2"]}, epochs=30,
                         learning_rate=0.5, early_stopping=2, validation_data=(Xv, yv),
                         rank_by="val_accuracy")
    accs = [r["val_accuracy"] for r in results]
    assert accs == sorted(accs, reverse=True)
    assert {r["arch"] for r in results} == {"2-8relu-2", "2-4tanh-4relu-2"}
    assert all(r["epochs"] <= 30 and r["best_epoch"] >= 0 for r in results)


def test_sweep_refuses_bad_grids(circle):
    X, y, _, _ = split(circle)
    with pytest.raises(ValueError, match="unknown option 'lr'"):
        ffnn.sweep(X, y, {"lr": [0.1]})
    with pytest.raises(ValueError, match="has no value"):
        ffnn.sweep(X, y, {"learning_rate": []})
    with pytest.raises(ValueError, match="non-empty dict"):
        ffnn.sweep(X, y, {})
    with pytest.raises(ValueError, match="both in the grid"):
        ffnn.sweep(X, y, {"seed": [1, 2]}, seed=3)
    with pytest.raises(ValueError, match="needs validation_data"):
        ffnn.sweep(X, y, {"seed": [1]}, rank_by="val_loss")
    with pytest.raises(ffnn.FfnnValueError, match="model 1"):
        ffnn.sweep(X, y, {"learning_rate": [0.1, -1.0]}, arch="2-4relu-2", epochs=1)


def test_ensemble_of_the_best_two(circle, tmp_path):
    X, y, Xv, yv = split(circle)
    results = ffnn.sweep(X, y, {"learning_rate": [0.03, 0.1, 0.3]}, arch="2-16relu-2",
                         epochs=5, validation_data=(Xv, yv), keep_models=True,
                         standardize=True)
    a, b = results[0]["model"], results[1]["model"]
    e = ffnn.ensemble([a, b])
    assert e.n_members == 2 and a.n_members == 0 and e.n_layers == 0
    want = (a.predict(Xv) + b.predict(Xv)) / np.float32(2)
    assert np.array_equal(e.predict(Xv), want)
    assert np.array_equal(e.predict_classes(Xv), want.argmax(axis=1))
    ev = e.evaluate(Xv, yv)
    assert ev["accuracy"] == pytest.approx(float((want.argmax(axis=1) == yv).mean()))
    path = tmp_path / "ens.safetensors"
    e.save(path)
    back = ffnn.load(path)
    assert back.n_members == 2 and back.arch.startswith("ensemble of 2: ")
    assert np.array_equal(back.predict(Xv), want)
    with pytest.raises(ffnn.FfnnValueError, match="no single network"):
        back.train(X, y, epochs=1)
    with pytest.raises(ValueError, match="no single parameter array"):
        back.parameters()
    other = ffnn.Model("2-4relu-3")
    with pytest.raises(ffnn.FfnnValueError, match="member 1"):
        ffnn.ensemble([a, other])
