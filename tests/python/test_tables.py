"""pandas DataFrames with text, category and bool columns and missing cells: the table
encoding of ``ffnn train`` (libffnn's, through ffnn_dataset_from_columns) in the
estimators, ffnn.train and ffnn.Model; kept through pickle and model files; CLI-trained
models predicting raw frames in Python and Python-trained ones in ``ffnn predict``."""
import os
import pickle
import subprocess
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("sklearn")

import ffnn  # noqa: E402
from ffnn import _table  # noqa: E402

FEATURES = ["age", "income", "city", "plan", "member", "visits"]


def messy(n=400, seed=0):
    """A customer table: an id, text (object) with None, a category column with NaN,
    bool with pd.NA, numbers with NaN; y depends on city, plan and visits."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "id": ["C%05d" % i for i in range(n)],
        "age": rng.integers(18, 80, n).astype(float),
        "income": np.round(rng.lognormal(10, 0.4, n), 2),
        "city": rng.choice(["Oslo", "Lima", "Pune", "San Jose, CA"], n).astype(object),
        "plan": pd.Categorical(rng.choice(["basic", "plus", "pro"], n)),
        "member": pd.array(rng.random(n) < 0.5, dtype="boolean"),
        "visits": rng.integers(0, 9, n),
    })
    df.loc[::7, "age"] = np.nan
    df.loc[3::11, "income"] = np.nan
    df.loc[::9, "city"] = None
    df.loc[5::13, "city"] = np.nan
    df.loc[2::17, "plan"] = np.nan
    df.loc[1::19, "member"] = pd.NA
    score = (df.city == "Oslo") * 2 + (df.plan == "pro") + (df.visits > 5) * 1.5
    y = np.where(score + rng.normal(0, 0.5, n) > 1.2, "yes", "no")
    return df, y


def expected_encoding(df, cols, categorical):
    """The encoding by scikit-learn's own pieces (the method include/ffnn.h names):
    SimpleImputer(median) + MissingIndicator on numeric columns, SimpleImputer(
    "missing") + OneHotEncoder(handle_unknown="ignore") on categorical ones; the
    columns in order, then the indicators."""
    from sklearn.impute import MissingIndicator, SimpleImputer
    from sklearn.preprocessing import OneHotEncoder
    blocks, indicators = [], []
    for c in cols:
        if c in categorical:
            s = df[c].astype(object).where(df[c].notna(), np.nan)
            s = s.map(lambda v: v if isinstance(v, float) and np.isnan(v) else str(v)).to_numpy(
                dtype=object)
            # missing as np.nan: what every scikit-learn version's imputer accepts in an
            # object column (newer ones refuse None with NaN checks on)
            s = SimpleImputer(strategy="constant", fill_value="missing",
                              missing_values=np.nan).fit_transform(s.reshape(-1, 1))
            blocks.append(OneHotEncoder(handle_unknown="ignore").fit_transform(s).toarray())
        else:
            v = df[[c]].to_numpy(dtype=np.float32).astype(np.float64)
            blocks.append(SimpleImputer(strategy="median").fit_transform(v))
            if np.isnan(v).any():
                indicators.append(MissingIndicator().fit_transform(v).astype(float))
    return np.hstack(blocks + indicators)


def sklearn_pipeline_score(df, y):
    """Held-out accuracy of the scikit-learn pipeline a user would write (imputers,
    one-hot, scaler, sklearn's MLP of the same size, seed and epochs)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    def texts(X):
        return X.astype(object).where(X.notna(), None).apply(
            lambda col: col.map(lambda v: v if v is None else str(v)))
    pre = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median", add_indicator=True),
                              StandardScaler()), ["age", "income", "visits"]),
        ("cat", make_pipeline(FunctionTransformer(texts),
                              SimpleImputer(strategy="constant", fill_value="missing",
                                            missing_values=None),
                              OneHotEncoder(handle_unknown="ignore")),
         ["city", "plan", "member"])])
    model = make_pipeline(pre, MLPClassifier(hidden_layer_sizes=(32,), max_iter=60,
                                             random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(df[:300], y[:300])
    return model.score(df[300:], y[300:])


def test_frame_encoding_is_sklearns_imputer_and_one_hot():
    df, _ = messy()
    table, X = _table.fit_encode(df, _table.TableOptions(ignore=["id"]))
    assert table.columns == FEATURES
    want = expected_encoding(df, FEATURES, {"city", "plan", "member"})
    assert X.shape == want.shape == (len(df), table.width)
    np.testing.assert_allclose(X, want, rtol=1e-6)  # medians in float32
    info = {c["name"]: c for c in table.describe()}
    assert info["city"]["levels"] == ["Lima", "Oslo", "Pune", "San Jose, CA", "missing"]
    assert info["member"]["levels"] == ["False", "True", "missing"]
    assert info["visits"] == {"name": "visits", "kind": "numeric", "median": 4.0,
                              "indicator": False}
    assert info["age"]["indicator"] and info["age"]["median"] == float(np.nanmedian(df.age))


def test_messy_frame_fit_predict_pickle_save_load(tmp_path):
    df, y = messy()
    train, test, y_train, y_test = df[:300], df[300:], y[:300], y[300:]
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(32,), max_iter=60, random_state=0,
                             standardize=True, ignore=["id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ConvergenceWarning
        clf.fit(train, y_train)
    assert list(clf.feature_names_in_) == ["id"] + FEATURES and clf.n_features_in_ == 7
    assert [c["name"] for c in clf.model_.table] == FEATURES
    proba = clf.predict_proba(test)
    assert proba.dtype == np.float64 and proba.shape == (100, 2)
    # learnt from the text and category columns: as scikit-learn's own pipeline
    score, sklearn_score = clf.score(test, y_test), sklearn_pipeline_score(df, y)
    assert score > 0.7 and score >= sklearn_score - 0.05, (score, sklearn_score)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(test), proba)
    assert list(again.feature_names_in_) == list(clf.feature_names_in_)
    path = tmp_path / "churn.safetensors"
    clf.save(path)
    loaded = ffnn.MLPClassifier.load(path)  # the file keeps the table, not ignored columns
    assert list(loaded.feature_names_in_) == FEATURES and list(loaded.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(loaded.predict_proba(test[FEATURES]), proba)
    model = ffnn.load(path)  # columns by name, extra ones left out (as ffnn predict)
    np.testing.assert_array_equal(model.predict(test).astype(np.float64), proba)
    np.testing.assert_array_equal(model.predict(test[FEATURES[::-1]]).astype(np.float64), proba)


def test_regressor_and_train_take_frames():
    df, _ = messy()
    target = (df.city == "Oslo") * 3.0 + (df.plan == "pro") * 2.0 + df.member.fillna(False) * 1.0
    frame = df.drop(columns=["id", "visits"])
    reg = ffnn.MLPRegressor(hidden_layer_sizes=(16,), max_iter=200, random_state=0,
                            standardize=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        reg.fit(frame, target)
    assert reg.predict(frame).shape == (len(df),)
    assert reg.score(frame, target) > 0.9  # a function of the category columns alone
    model = ffnn.train(df, (y_ := (df.city == "Oslo").to_numpy()).astype(np.int64),
                       ignore="id", epochs=20, optimizer="adam", learning_rate=0.01,
                       standardize=True)
    assert model.n_inputs == 17  # 1+1+1 + 5 + 4 + 3 + 1 + age, income indicators
    assert model.evaluate(df, y_.astype(np.int64))["accuracy"] > 0.95
    with pytest.raises(ValueError, match="begin it with 17"):
        ffnn.train(df, y_.astype(np.int64), arch="5-2", ignore="id")


def test_numeric_frames_and_arrays_keep_the_numeric_path():
    df, y = messy()
    numeric = df[["visits"]].assign(v2=df.visits * 0.5)
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(4,), max_iter=2).fit(numeric, y)
    assert clf.model_.table is None and list(clf.feature_names_in_) == ["visits", "v2"]
    with pytest.raises(ValueError, match="pandas.DataFrame"):
        ffnn.MLPClassifier(max_iter=2).fit(df.to_numpy(), y)  # object array with text
    with pytest.raises(ValueError, match="pandas DataFrame"):
        ffnn.Model("2-2").predict(np.array([["a", 1.0]], dtype=object))
    with pytest.raises(ValueError, match="NaN"):  # arrays: sklearn's refusal as before
        ffnn.MLPClassifier(max_iter=2).fit(np.array([[np.nan], [1.0]]), [0, 1])


def test_unseen_levels_warn_or_refuse():
    df, y = messy()
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=0,
                             ignore=["id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(df, y)
    new = df[:3].copy()
    new["city"] = ["Paris", "Oslo", "Paris"]
    new["plan"] = new["plan"].cat.add_categories(["gold"])
    new.loc[1, "plan"] = "gold"
    with pytest.warns(UserWarning, match=r"3 cells of a category the model was not trained "
                      r"on \(city: 'Paris', plan: 'gold'\): encoded as all zeros"):
        p = clf.predict_proba(new)
    assert p.shape == (3, 2) and np.allclose(p.sum(axis=1), 1)
    with pytest.warns(UserWarning, match="new: 3 cells"):
        encoded = _table.encode(_table.model_table(clf.model_._handle), new,
                                _table.TableOptions(), what="new")
    city = slice(2, 7)  # age, income, then city's 5 levels
    assert (encoded[[0, 2], city] == 0).all() and encoded[1, city].tolist() == [0, 1, 0, 0, 0]
    clf.set_params(unknown_category="error")
    with pytest.raises(ValueError, match="3 cells of a category.*unknown_category='ignore'"):
        clf.predict(new)
    with pytest.raises(ValueError, match="unknown_category must be"):
        clf.set_params(unknown_category="skip").predict(new)


def test_columns_checked_against_feature_names_in():
    df, y = messy()
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(8,), max_iter=3, random_state=0,
                             ignore=["id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(df, y)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df[["id"] + FEATURES[::-1]])  # another order
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df.rename(columns={"city": "town"}))
    with pytest.raises(ValueError, match="DataFrame with those columns"):
        clf.predict(np.zeros((2, 7)))
    with pytest.raises(ValueError, match="lacks the model's column 'city'"):
        clf.model_.predict(df.drop(columns="city"))


def test_options_categorical_na_values_missing():
    df = pd.DataFrame({"zip": [10, 20, 10, 30, 20, 10], "note": ["a", "?", "b", "a", "b", "-"],
                       "x": [1.0, 2, 3, 4, 5, 6]})
    y = np.array([0, 1, 0, 1, 1, 0])
    options = _table.TableOptions(categorical="zip", na_values=["?", "-"])
    table, X = _table.fit_encode(df, options)
    info = table.describe()
    assert info[0]["levels"] == ["10", "20", "30"] and info[1]["levels"] == ["a", "b", "missing"]
    assert X[1, 3:6].tolist() == [0, 0, 1]  # '?' is a missing cell
    with pytest.raises(ValueError, match="column 'age', row 0: a missing cell"):
        ffnn.MLPClassifier(missing="error", ignore="id").fit(*messy())
    with pytest.raises(ValueError, match="ignore=\\['nope'\\]: X has no column 'nope'"):
        ffnn.MLPClassifier(ignore=["nope"]).fit(df, y)
    all_missing = df.assign(x=np.nan)
    with pytest.raises(ValueError, match="every cell of the training split is missing.*ignore="):
        ffnn.MLPClassifier(max_iter=1).fit(all_missing, y)


def _cli(lib):
    cli = os.path.join(os.path.dirname(lib), "ffnn")
    if not os.access(cli, os.X_OK):
        pytest.skip("no ffnn program next to %s" % lib)
    return cli


def _cli_predict(cli, model, csv):
    r = subprocess.run([cli, "predict", "--model", str(model), "--data", str(csv)],
                       check=True, capture_output=True, text=True)
    rows = [line.split(",") for line in r.stdout.split("\n")[1:] if line]
    return [row[0] for row in rows], np.array([[float(v) for v in row[1:]] for row in rows]), \
        r.stderr


def test_cli_trained_model_predicts_raw_frames_in_python(tmp_path, lib):
    cli = _cli(lib)
    df, y = messy()
    df.assign(churn=y)[:300].to_csv(tmp_path / "train.csv", index=False)
    new = df[300:].copy()
    new.loc[new.index[:4], "city"] = "Paris"  # unseen in training
    new.to_csv(tmp_path / "new.csv", index=False)
    model = tmp_path / "cli.safetensors"
    subprocess.run([cli, "train", "--data", str(tmp_path / "train.csv"), "--ignore", "id",
                    "--arch", "17-16relu-2", "--epochs", "5", "--optimizer", "adam",
                    "--standardize", "--device", "cpu", "--seed", "3", "--save", str(model)],
                   check=True, capture_output=True)
    labels, proba, note = _cli_predict(cli, model, tmp_path / "new.csv")
    assert "4 cells of a category the model was not trained on" in note
    frame = pd.read_csv(tmp_path / "new.csv", float_precision="round_trip")
    m = ffnn.load(model)
    with pytest.warns(UserWarning, match="4 cells of a category"):
        p = m.predict(frame)
    np.testing.assert_allclose(p, proba, rtol=1e-5, atol=1e-6)
    clf = ffnn.MLPClassifier.load(model)
    with pytest.warns(UserWarning, match="4 cells"):
        assert list(clf.predict(frame[FEATURES])) == labels
    with pytest.raises(ValueError, match="4 cells"):
        m.predict(frame, unknown_category="error")


def test_python_trained_model_predicts_csv_in_the_cli(tmp_path, lib):
    cli = _cli(lib)
    df, y = messy()
    df[300:].to_csv(tmp_path / "new.csv", index=False)
    frame = pd.read_csv(tmp_path / "new.csv", float_precision="round_trip")
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(16,), max_iter=20, random_state=1,
                             standardize=True, ignore=["id"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(df[:300], y[:300])
    clf.save(tmp_path / "py.safetensors")
    labels, proba, _ = _cli_predict(cli, tmp_path / "py.safetensors", tmp_path / "new.csv")
    np.testing.assert_allclose(clf.predict_proba(frame), proba, rtol=1e-5, atol=1e-6)
    assert list(clf.predict(frame)) == labels


def test_frames_in_model_selection_and_partial_fit():
    from sklearn.model_selection import cross_val_score
    df, y = messy()
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(16,), max_iter=40, random_state=0,
                             standardize=True, ignore="id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(clf, df, y, cv=3)  # an encoding fitted per fold
    assert scores.shape == (3,) and scores.min() > 0.65, scores
    part = ffnn.MLPClassifier(hidden_layer_sizes=(8,), random_state=0, ignore="id")
    part.partial_fit(df[:200], y[:200], classes=["no", "yes"])  # fits the encoding
    width = part.model_.n_inputs
    later = df[200:].copy()
    later["city"] = later["city"].replace("Oslo", "Bergen")
    with pytest.warns(UserWarning, match="category the model was not trained on "
                      r"\(city: 'Bergen'\)"):
        part.partial_fit(later, y[200:])  # encoded with the first call's levels
    assert part.model_.n_inputs == width and part.n_iter_ == 2


def test_many_levels_get_an_embedding():
    """A text column of more than max_one_hot levels: an embedding layer first in the
    network, the column's code as one input; predict on an unseen level (a zero
    vector, warned); max_one_hot above the count, or embedding_dim, decide."""
    rng = np.random.default_rng(3)
    n = 600
    cities = np.array(["c%02d" % i for i in range(50)], dtype=object)
    effect = rng.normal(0, 1.5, 50)
    idx = rng.integers(0, 50, n)
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n), "city": cities[idx],
                      "color": rng.choice(["r", "g"], n).astype(object)})
    y = (effect[idx] + X["x"].to_numpy() > 0).astype(int)
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(16,), max_iter=30, random_state=0,
                             device="cpu").fit(X, y)
    arch = clf.model_.arch  # x, color's 2, city's code; round(1.6 * 50 ** 0.56) = 14
    assert arch.startswith("4-embed50x14-16relu-"), arch
    info = _table.model_table(clf.model_._handle).describe()
    assert info[1]["embedding"] == 14 and "embedding" not in info[2]
    assert clf.score(X, y) > 0.8
    assert clf.model_.weights()[0].shape == (50 * 14,)
    new = X.iloc[:3].copy()
    new.loc[1, "city"] = "atlantis"
    with pytest.warns(UserWarning, match="1 cell of a category"):
        clf.predict(new)
    onehot = ffnn.MLPClassifier(hidden_layer_sizes=(16,), max_iter=2, random_state=0,
                                device="cpu", max_one_hot=50).fit(X, y)
    assert onehot.model_.arch.startswith("53-16relu"), onehot.model_.arch
    forced = ffnn.MLPClassifier(hidden_layer_sizes=(16,), max_iter=2, random_state=0,
                                device="cpu", embedding_dim={"color": 3, "city": 4}).fit(X, y)
    assert forced.model_.arch.startswith("3-embed50x4_2x3-16relu"), forced.model_.arch
    with pytest.raises(ValueError, match="numeric"):
        ffnn.MLPClassifier(max_iter=1, embedding_dim={"x": 2}).fit(X, y)


def test_train_function_embeds_and_model_train_keeps_one_hot():
    """ffnn.train sizes the net with the embedding layer first (also into a given
    arch); Model.train on a net it did not size keeps the one-hot encoding."""
    rng = np.random.default_rng(4)
    n = 300
    X = pd.DataFrame({"x": rng.uniform(-1, 1, n),
                      "city": np.array(["c%02d" % i for i in range(40)], dtype=object)[
                          rng.integers(0, 40, n)]})
    y = (X["x"].to_numpy() > 0).astype(int)
    m = ffnn.train(X, y, epochs=1, device="cpu")
    assert m.arch.startswith("2-embed40x13-256relu"), m.arch
    m = ffnn.train(X, y, arch="2-8relu-2", epochs=1, device="cpu", embedding_dim={"city": 3})
    assert m.arch == "2-embed40x3-8relu-2", m.arch
    plain = ffnn.Model("41-8relu-2", loss="ce")
    plain.train(X, y, epochs=1, device="cpu")
    assert plain.n_inputs == 41
