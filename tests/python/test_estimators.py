"""MLPClassifier / MLPRegressor as scikit-learn estimators: every check of
sklearn.utils.estimator_checks.check_estimator, model selection with stratified folds,
scikit-learn's validation messages, float64 outputs, feature names."""
import re
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.datasets import load_iris, load_wine  # noqa: E402
from sklearn.ensemble import VotingClassifier  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import (GridSearchCV, StratifiedKFold,  # noqa: E402
                                     cross_val_score)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

import ffnn  # noqa: E402
from ffnn.estimators import expected_failed_checks  # noqa: E402

SKLEARN_16 = tuple(int(p) for p in re.findall(r"\d+", sklearn.__version__)[:2]) >= (1, 6)


@pytest.mark.parametrize("cls", [ffnn.MLPClassifier, ffnn.MLPRegressor])
def test_check_estimator_passes_every_check(cls):
    """Every generated check passes; the only ones skipped are those of
    expected_failed_checks() (through the _xfail_checks tag), each with its reason:
    the zero-weight equivalence (minibatch SGD), or every weight check when the
    libffnn in use has no per-sample weights."""
    expected = expected_failed_checks()
    if SKLEARN_16:
        check_estimator(cls(), expected_failed_checks=expected)
        return
    passed, skipped, failed = [], [], []
    for est, check in check_estimator(cls(), generate_only=True):
        name = getattr(check, "func", check).__name__
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                check(est)
                passed.append(name)
            except Exception as e:  # SkipTest included: "Skipping NAME for ...: why"
                if type(e).__name__ == "SkipTest":
                    skipped.append(re.match(r"Skipping (\w+) for", str(e)).group(1))
                else:
                    failed.append("%s: %s: %s" % (name, type(e).__name__, str(e)[:300]))
    print("%s: %d checks passed, %d skipped: %s" % (cls.__name__, len(passed), len(skipped),
                                                    ", ".join(skipped)))
    assert not failed, "\n".join(failed)
    assert set(skipped) <= set(expected), skipped
    assert len(passed) + len(skipped) >= 45, passed  # scikit-learn 1.2 generates 46-49


def test_estimator_types():
    assert is_classifier(ffnn.MLPClassifier()) and not is_regressor(ffnn.MLPClassifier())
    assert is_regressor(ffnn.MLPRegressor()) and not is_classifier(ffnn.MLPRegressor())


def test_cross_val_score_on_sorted_wine_is_stratified():
    """wine's rows are sorted by class: an integer cv must be StratifiedKFold's."""
    X, y = load_wine(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), ffnn.MLPClassifier(random_state=0, max_iter=300))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(pipe, X, y, cv=3)
        stratified = cross_val_score(pipe, X, y, cv=StratifiedKFold(3))
    assert np.array_equal(scores, stratified), (scores, stratified)
    assert scores.min() > 0.9, scores


def test_grid_search_on_iris_in_file_order():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), ffnn.MLPClassifier(random_state=0, max_iter=500))
    grid = {"mlpclassifier__alpha": [1e-4, 1e-2],
            "mlpclassifier__hidden_layer_sizes": [(10,), (50,)]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
        manual = GridSearchCV(pipe, grid, cv=StratifiedKFold(3)).fit(X, y)
    print("GridSearchCV(cv=3) on iris: best_score_ %.4f %s"
          % (search.best_score_, search.best_params_))
    assert search.best_score_ == manual.best_score_
    assert search.best_score_ >= 0.9


def test_voting_classifier_takes_it(circle):
    X, y = circle
    vote = VotingClassifier([("a", ffnn.MLPClassifier(random_state=1, max_iter=100)),
                             ("b", ffnn.MLPClassifier(random_state=2, max_iter=100))],
                            voting="soft")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert vote.fit(X[:900], y[:900]).score(X[900:], y[900:]) > 0.85


@pytest.mark.parametrize("cls", [ffnn.MLPClassifier, ffnn.MLPRegressor])
def test_not_fitted(cls):
    with pytest.raises(NotFittedError):
        cls().predict(np.zeros((2, 3)))


@pytest.mark.parametrize("bad, message", [
    (np.array([[0.0, np.nan]] * 4), "Input X contains NaN"),
    (np.array([[0.0, np.inf]] * 4), "Input X contains infinity"),
    (np.zeros((0, 2)), "0 sample"),
    (np.zeros((4, 0)), "0 feature"),
    (np.zeros(4), "Expected 2D array"),
    (np.zeros((4, 2), dtype=complex), "Complex data not supported"),
])
def test_validation_messages_are_sklearns(bad, message):
    with pytest.raises(ValueError, match=message):
        ffnn.MLPClassifier(max_iter=2).fit(bad, np.arange(len(bad)) % 2)


def test_sparse_and_predict_validation(circle):
    sparse = pytest.importorskip("scipy.sparse")
    X, y = circle
    with pytest.raises(TypeError, match="(?i)sparse"):
        ffnn.MLPClassifier(max_iter=2).fit(sparse.csr_matrix(X), y)
    clf = ffnn.MLPClassifier(max_iter=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="Expected 2D array"):
        clf.predict(X[0])
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.predict(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="3 features"):
        clf.predict(np.zeros((2, 3)))


def test_outputs_are_float64(circle):
    X, y = circle
    clf = ffnn.MLPClassifier(max_iter=5, random_state=0).fit(X.astype(np.float32), y)
    assert clf.predict_proba(X).dtype == np.float64
    assert np.allclose(clf.predict_proba(X).sum(axis=1), 1)
    reg = ffnn.MLPRegressor(max_iter=5, random_state=0).fit(X, X[:, 0] * 2)
    assert reg.predict(X).dtype == np.float64 and reg.predict(X).shape == (len(X),)
    multi = ffnn.MLPRegressor(max_iter=5, random_state=0).fit(X, X * 2)
    assert multi.predict(X).shape == X.shape


def test_one_class_and_continuous_labels_refused(circle):
    X, _ = circle
    with pytest.raises(ValueError, match="1 class"):
        ffnn.MLPClassifier().fit(X, np.zeros(len(X), dtype=int))
    with pytest.raises(ValueError, match="Unknown label type"):
        ffnn.MLPClassifier().fit(X, X[:, 0])


def test_feature_names_checked_at_predict(circle):
    pd = pytest.importorskip("pandas")
    X, y = circle
    df = pd.DataFrame(X, columns=["u", "v"])
    clf = ffnn.MLPClassifier(max_iter=5, random_state=0).fit(df, y)
    assert list(clf.feature_names_in_) == ["u", "v"]
    with pytest.warns(UserWarning, match="feature names"):  # scikit-learn's warning
        assert np.array_equal(clf.predict(df), clf.predict(X))
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df[["v", "u"]])


def test_string_labels_and_clone(circle):
    X, y = circle
    labels = np.where(y == 1, "in", "out")
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(16, 16), activation="tanh", max_iter=60,
                             batch_size=32, learning_rate_init=0.01, random_state=0)
    assert clf.fit(X[:900], labels[:900]) is clf
    assert list(clf.classes_) == ["in", "out"]
    assert clf.score(X[900:], labels[900:]) > 0.9
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and not hasattr(twin, "model_")
    assert np.array_equal(twin.fit(X[:900], labels[:900]).predict(X), clf.predict(X))
    with pytest.raises(ValueError, match="Invalid parameter"):
        clf.set_params(no_such_option=1)
