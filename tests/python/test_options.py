"""The estimators' options: scikit-learn's (alpha, tol, early_stopping, warm_start,
partial_fit, coefs_) with scikit-learn's meaning, ffnn's (schedules, clipping, dropout,
EMA, standardisation), the callback, Ctrl-C, verbose progress, and ffnn.train's sharp
edges."""
import os
import re
import signal
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.neural_network import MLPClassifier as SklearnMLP  # noqa: E402

import ffnn  # noqa: E402


def small(**kw):
    kw.setdefault("hidden_layer_sizes", (16,))
    kw.setdefault("random_state", 0)
    kw.setdefault("device", "cpu")
    return ffnn.MLPClassifier(**kw)


def test_same_parameter_names_as_sklearn():
    ours = set(ffnn.MLPClassifier().get_params())
    theirs = set(SklearnMLP().get_params())
    # lbfgs's max_fun, sgd's learning_rate/power_t schedules: ffnn's lr_schedule instead
    assert theirs - ours <= {"max_fun", "learning_rate", "power_t"}, theirs - ours


def test_alpha_shrinks_the_weights(circle):
    X, y = circle
    plain = small(alpha=0.0, max_iter=40, tol=0).fit(X, y)
    decayed = small(alpha=5.0, max_iter=40, tol=0).fit(X, y)
    norm = lambda est: sum(float((w ** 2).sum()) for w in est.coefs_)  # noqa: E731
    assert norm(decayed) < 0.8 * norm(plain)
    # the biases are not decayed (as scikit-learn): same init, both move freely
    assert len(decayed.intercepts_) == 2


def test_tol_stops_as_sklearn(circle):
    X, y = circle
    clf = small(max_iter=500, tol=1e-2, n_iter_no_change=3).fit(X, y)
    curve = clf.loss_curve_
    assert clf.n_iter_ < 500 and len(curve) == clf.n_iter_
    best, count = np.inf, 0  # scikit-learn's rule, replayed on the curve
    for i, loss in enumerate(curve):
        count = 0 if loss <= best - 1e-2 else count + 1
        best = min(best, loss)
        if count > 3:
            assert i == len(curve) - 1
            break
    else:
        pytest.fail("the curve never met the stopping rule")


def test_max_iter_without_convergence_warns(circle):
    X, y = circle
    with pytest.warns(Warning, match="Maximum iterations"):
        small(max_iter=3).fit(X, y)


def test_early_stopping_keeps_the_best_validation_score(circle):
    X, y = circle
    clf = small(max_iter=300, early_stopping=True, validation_fraction=0.2,
                n_iter_no_change=5, tol=0, learning_rate_init=0.01).fit(X, y)
    scores = clf.validation_scores_
    assert len(scores) == clf.n_iter_ < 300
    assert clf.best_validation_score_ == max(scores)
    # after the best score, n_iter_no_change + 1 epochs without a better one
    assert clf.n_iter_ - (int(np.argmax(scores)) + 1) >= 5
    from sklearn.model_selection import train_test_split
    _, X_val, _, y_val = train_test_split(X, y, random_state=np.random.RandomState(0),
                                          test_size=0.2, stratify=y)
    assert clf.score(X_val, y_val) == pytest.approx(clf.best_validation_score_)


def test_warm_start_continues(circle):
    X, y = circle
    clf = small(max_iter=5, warm_start=True)
    clf.fit(X, y)
    first = clf.loss_curve_[-1]
    weights = [w.copy() for w in clf.coefs_]
    clf.fit(X, y)
    assert clf.n_iter_ == 10 and len(clf.loss_curve_) == 10
    assert clf.loss_curve_[-1] < first
    assert not np.array_equal(weights[0], clf.coefs_[0])
    cold = small(max_iter=5).fit(X, y)
    assert np.array_equal(cold.coefs_[0], weights[0])  # a cold fit restarts


def test_partial_fit(circle):
    X, y = circle
    clf = small()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    for _ in range(3):
        clf.partial_fit(X, y, classes=[0, 1])
    assert clf.n_iter_ == 3 and len(clf.loss_curve_) == 3
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:, :1], y)
    reg = ffnn.MLPRegressor(random_state=0).partial_fit(X, X[:, 0])
    assert reg.n_iter_ == 1


def test_coefs_are_sklearn_shaped_views(circle):
    X, y = circle
    clf = small(hidden_layer_sizes=(7, 5), max_iter=2).fit(X, y)
    assert [w.shape for w in clf.coefs_] == [(2, 7), (7, 5), (5, 2)]
    assert [b.shape for b in clf.intercepts_] == [(7,), (5,), (2,)]
    assert clf.n_layers_ == 4 and clf.n_outputs_ == 2 and clf.out_activation_ == "softmax"
    clf.coefs_[-1][:] = 0
    clf.intercepts_[-1][:] = [0.0, 1.0]
    assert (clf.predict(X) == 1).all()


def test_ffnn_options_reach_the_trainer(circle):
    X, y = circle
    clf = small(max_iter=6, tol=0, lr_schedule="step", lr_step_size=2, lr_gamma=0.5,
                solver="sgd", learning_rate_init=0.1, clip_grad_norm=1.0,
                clip_grad_value=0.5, ema_decay=0.9, dropout=0.1, warmup_steps=3).fit(X, y)
    rates = [h["learning_rate"] for h in clf.model_.history]
    assert rates == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025, 0.025])
    assert ":dropout0.1" in clf.model_.arch
    with pytest.raises(ValueError, match="dropout"):
        small(dropout=(0.1, 0.2)).fit(X, y)
    with pytest.raises(ffnn.FfnnValueError, match="constant"):
        small(lr_schedule="bogus").fit(X, y)
    with pytest.raises(ValueError, match="lbfgs"):
        small(solver="lbfgs").fit(X, y)


def test_weights(circle):
    """Uniform weights are the unweighted fit; others need a libffnn with weights (else
    NotImplementedError naming the missing function); class_weight multiplies in."""
    from ffnn.model import sample_weights_supported
    X, y = circle
    plain = small(max_iter=10).fit(X, y)
    ones = small(max_iter=10).fit(X, y, sample_weight=np.full(len(y), 3.0))
    assert np.array_equal(plain.predict_proba(X), ones.predict_proba(X))
    w = np.where(y == 1, 5.0, 1.0)
    if not sample_weights_supported():
        with pytest.raises(NotImplementedError, match="ffnn_dataset_set_sample_weights"):
            small(max_iter=2).fit(X, y, sample_weight=w)
        with pytest.raises(NotImplementedError, match="ffnn_dataset_set_sample_weights"):
            small(max_iter=2, class_weight="balanced").fit(X, y)
        return
    weighted = small(max_iter=10).fit(X, y, sample_weight=w)
    by_class = small(max_iter=10, class_weight={0: 1.0, 1: 5.0}).fit(X, y)
    assert np.allclose(weighted.predict_proba(X), by_class.predict_proba(X), atol=1e-6)
    # heavier class 1: more of the points predicted 1 than without weights
    assert (weighted.predict(X) == 1).sum() > (plain.predict(X) == 1).sum()
    with pytest.raises(ValueError, match="sample_weight"):
        small(max_iter=2).fit(X, y, sample_weight=-w)
    reg = ffnn.MLPRegressor(max_iter=5, random_state=0).fit(X, X[:, 0], sample_weight=w)
    assert reg.predict(X).shape == (len(X),)


def test_callback_stops_training(circle):
    X, y = circle
    seen = []

    def stop_at_three(est, row):
        seen.append(row["epoch"])
        return row["epoch"] == 3

    clf = small(max_iter=50, tol=0, callback=stop_at_three).fit(X, y)
    assert seen == [1, 2, 3] and clf.n_iter_ == 3


def test_ctrl_c_stops_after_the_step_and_keeps_the_model(circle):
    X, y = circle

    def press_ctrl_c(epoch, step, steps):
        if epoch == 2 and step == 3:
            os.kill(os.getpid(), signal.SIGINT)

    model = ffnn.Model("2-16tanh-2", seed=1)
    before = model.parameters().copy()
    with pytest.raises(KeyboardInterrupt, match="keeps the weights"):
        model.train(X, y, epochs=10, batch_size=32, device="cpu", step_callback=press_ctrl_c)
    assert re.fullmatch(r"SIGINT at epoch 2, step [34] of 38", model.interrupted), \
        model.interrupted
    assert len(model.history) == 2 and model.history[-1]["finished"] is False
    assert not np.array_equal(model.parameters(), before)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    clf = small(max_iter=10, batch_size=32)
    clf.callback = lambda est, row: os.kill(os.getpid(), signal.SIGINT) if row["epoch"] == 2 \
        else None
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    assert clf.n_iter_ == 2 and clf.predict(X).shape == (len(X),)  # fitted, usable


def test_step_callback_errors_arrive(circle):
    X, y = circle

    def fail(epoch, step, steps):
        if step == 2:
            raise ZeroDivisionError("from the callback")

    model = ffnn.Model("2-4tanh-2")
    with pytest.raises(ZeroDivisionError, match="from the callback"):
        model.train(X, y, epochs=3, device="cpu", step_callback=fail)
    assert model.interrupted == "error at epoch 1, step 2 of 19"
    stopped = ffnn.Model("2-4tanh-2")
    stopped.train(X, y, epochs=3, device="cpu", step_callback=lambda e, s, n: e == 2 and s == 5)
    assert stopped.interrupted == "step_callback at epoch 2, step 5 of 19"
    assert len(stopped.history) == 2


def test_verbose_progress(circle, capsys):
    X, y = circle
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small(max_iter=2, verbose=True).fit(X, y)
    err = capsys.readouterr().err
    # the progress within an epoch: tqdm's bar ("step/s") when tqdm is installed,
    # else the module's own line ("steps")
    assert "epoch 2" in err and "samples/s" in err and "step" in err
    assert re.search(r"[\d,]+ samples/s", err) and "e+0" not in err


def test_train_refuses_float_labels_and_zero_epochs(circle):
    X, y = circle
    with pytest.raises(ValueError, match="loss='mse'"):
        ffnn.train(X, y.astype(np.float64), epochs=1)
    with pytest.raises(ValueError, match="epochs"):
        ffnn.train(X, y, epochs=0)
    model = ffnn.train(X, y.astype(np.float32), loss="mse", arch="2-4relu-1", epochs=1)
    assert model.loss == "mse"
    with pytest.raises(ValueError, match=r"X\[1, 0\] is nan"):
        model.predict(np.array([[0.0, 0.0], [np.nan, 0.0]]))
