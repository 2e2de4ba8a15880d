"""estimators.py - MLPClassifier and MLPRegressor: ffnn models as scikit-learn
estimators (BaseEstimator with ClassifierMixin / RegressorMixin, scikit-learn's input
validation, tags, NotFittedError), so that clone, Pipeline, GridSearchCV,
cross_val_score (stratified folds for the classifier), VotingClassifier, pickle and
joblib treat them as scikit-learn's own MLPs.

scikit-learn's parameters keep its names and meaning: hidden_layer_sizes, activation,
solver, alpha (L2 on the weights, as sklearn: its gradient alpha W / batch), batch_size,
learning_rate_init, max_iter, shuffle, random_state, tol, verbose, warm_start,
momentum, nesterovs_momentum, early_stopping, validation_fraction, beta_1, beta_2,
epsilon, n_iter_no_change; partial_fit. ffnn's own follow (see the class docstrings).
Needs scikit-learn (>= 1.0; tags for 1.0-1.5's _more_tags and 1.6+'s
__sklearn_tags__).
"""
from __future__ import annotations

import numbers
import warnings
from typing import List

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.class_weight import compute_class_weight
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted, column_or_1d
    from sklearn.utils.validation import check_X_y
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("ffnn.MLPClassifier and ffnn.MLPRegressor need scikit-learn "
                      "(pip install scikit-learn, or apt-get install python3-sklearn); "
                      "ffnn.Model and ffnn.train work without it") from e
try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:
    _validate_data = None

from . import _table
from .model import Model, sample_weights_supported

__all__ = ["MLPClassifier", "MLPRegressor"]

# The checks of sklearn.utils.estimator_checks.check_estimator that cannot pass, and
# why: expected_failed_checks(estimator) (the _xfail_checks tag on scikit-learn < 1.6;
# check_estimator's expected_failed_checks on 1.6+).
_ZERO_WEIGHTS = ("minibatch SGD: samples of weight 0 still take their places in the "
                 "shuffled batches, so the batches (and the result) differ from a fit "
                 "without those samples, as for scikit-learn's SGD estimators")
# the checks that train with non-uniform weights (uniform weights are the unweighted fit)
_WEIGHT_CHECKS = ("check_sample_weights_not_overwritten", "check_sample_weights_invariance",
                  "check_classifiers_one_label_sample_weights",
                  "check_class_weight_classifiers",
                  "check_sample_weight_equivalence_on_dense_data")


def expected_failed_checks(estimator=None):
    """{check name: why} for check_estimator: with a libffnn that trains per-sample
    weights, the zero-weight equivalence (minibatch SGD; the check's name covers its
    "ones" case too, which passes); without, the checks that train with non-uniform
    weights (NotImplementedError)."""
    if sample_weights_supported():
        return {"check_sample_weights_invariance": _ZERO_WEIGHTS,
                "check_sample_weight_equivalence_on_dense_data": _ZERO_WEIGHTS}
    return {name: "the libffnn in use has no per-sample weights "
                  "(ffnn_dataset_set_sample_weights)" for name in _WEIGHT_CHECKS}


_ACTIVATIONS = {"relu": "relu", "tanh": "tanh", "logistic": "sigmoid", "identity": "identity"}


def _weights_or_none(sample_weight, X):
    return None if sample_weight is None else _check_sample_weight(sample_weight, X,
                                                                   dtype=np.float64)


def _validate(est, *args, **kwargs):
    """scikit-learn's validate_data (>= 1.6) or BaseEstimator._validate_data; a numpy
    object array holding text is refused naming the DataFrame path."""
    try:
        if _validate_data is not None:
            return _validate_data(est, *args, **kwargs)
        return est._validate_data(*args, **kwargs)
    except ValueError as e:
        X = args[0] if args else None
        if isinstance(X, np.ndarray) and X.dtype == object and "convert" in str(e):
            raise _table.object_text_error(X, e) from None
        raise


def _check_frame_names(est, X, reset):
    """scikit-learn's feature-name and feature-count checks (or, reset, their setting)
    on the DataFrame X itself, not on its encoding."""
    try:  # scikit-learn >= 1.6
        from sklearn.utils.validation import _check_feature_names, _check_n_features
    except ImportError:
        est._check_feature_names(X, reset=reset)
        est._check_n_features(X, reset=reset)
        return
    _check_feature_names(est, X, reset=reset)
    _check_n_features(est, X, reset=reset)


class _MLPBase(BaseEstimator):
    """What MLPClassifier and MLPRegressor share (parameters: the subclasses' docs)."""

    _loss = "mse"

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", *, solver="adam",
                 alpha=0.0001, batch_size="auto", learning_rate_init=0.001, max_iter=200,
                 shuffle=True, random_state=None, tol=1e-4, verbose=False, warm_start=False,
                 momentum=0.9, nesterovs_momentum=True, early_stopping=False,
                 validation_fraction=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
                 n_iter_no_change=10, dropout=0.0, lr_schedule="constant", lr_step_size=1,
                 lr_gamma=0.1, lr_milestones=(), lr_t_max=0, lr_min=0.0, lr_end_factor=0.0,
                 lr_total_iters=0, lr_patience=10, lr_factor=0.1, lr_threshold=1e-4,
                 warmup_steps=0, clip_grad_norm=0.0, clip_grad_value=0.0, ema_decay=0.0,
                 standardize=False, device="auto", strategy="auto", precision="fp32",
                 threads=0, callback=None, categorical=None, ignore=None, na_values=None,
                 missing="impute", unknown_category="ignore", max_one_hot=32,
                 embedding_dim=None):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.dropout = dropout
        self.lr_schedule = lr_schedule
        self.lr_step_size = lr_step_size
        self.lr_gamma = lr_gamma
        self.lr_milestones = lr_milestones
        self.lr_t_max = lr_t_max
        self.lr_min = lr_min
        self.lr_end_factor = lr_end_factor
        self.lr_total_iters = lr_total_iters
        self.lr_patience = lr_patience
        self.lr_factor = lr_factor
        self.lr_threshold = lr_threshold
        self.warmup_steps = warmup_steps
        self.clip_grad_norm = clip_grad_norm
        self.clip_grad_value = clip_grad_value
        self.ema_decay = ema_decay
        self.standardize = standardize
        self.device = device
        self.strategy = strategy
        self.precision = precision
        self.threads = threads
        self.callback = callback
        self.categorical = categorical
        self.ignore = ignore
        self.na_values = na_values
        self.missing = missing
        self.unknown_category = unknown_category
        self.max_one_hot = max_one_hot
        self.embedding_dim = embedding_dim

    # ------------------------------------------------------------ tables
    def _encode_frame(self, X, reset):
        """(inputs, table fitted now or None, framed): a DataFrame that needs the
        table encoding (reset: text, category or bool columns, missing cells, or
        categorical/ignore given) or meets a fitted model that has one, encoded
        (float32 [n, width]) with n_features_in_/feature_names_in_ of the frame set
        (reset) or checked; any other X as it is (framed False)."""
        options = _table.TableOptions(self.categorical, self.ignore, self.na_values,
                                      self.missing, self.unknown_category, self.max_one_hot,
                                      self.embedding_dim)
        if reset:
            if not _table.uses_table(X, options):
                return X, None, False
            _check_frame_names(self, X, reset=True)
            table, encoded = _table.fit_encode(X, options)
            return encoded, table, True
        table = _table.model_table(self.model_._handle) if hasattr(self, "model_") else None
        if table is None:
            return X, None, False
        if not _table.is_frame(X):
            raise ValueError("this %s was fitted on a pandas DataFrame's columns (%s) and "
                             "encodes them; X must be a DataFrame with those columns, found "
                             "%s" % (type(self).__name__, ", ".join(table.columns),
                                     type(X).__name__))
        _check_frame_names(self, X, reset=False)
        return _table.encode(table, X, options), None, True

    @staticmethod
    def _load_model(path, loss, kind):
        """Model.load(path), refused (ValueError) unless its loss is loss (kind: what
        the estimator is, for the message)."""
        model = Model.load(path)
        if model.loss != loss:
            raise ValueError("%s: loss %r, not a %s's %r" % (path, model.loss, kind, loss))
        return model

    def _adopt(self, model):
        """Take a loaded model: its sizes and its history (empty after Model.load)."""
        self.model_ = model
        self.n_features_in_ = model.n_inputs
        self.n_layers_ = model.n_layers + 1
        self.n_outputs_ = model.n_outputs
        self.n_iter_ = len(model.history)
        self.loss_curve_ = [h["train_loss"] for h in model.history]
        self._adopt_table()

    def _adopt_table(self):
        """A loaded model's table: n_features_in_ and feature_names_in_ its columns."""
        table = _table.model_table(self.model_._handle)
        if table is not None:
            self.n_features_in_ = len(table.columns)
            self.feature_names_in_ = np.array(table.columns, dtype=object)

    # ------------------------------------------------------------ tags
    def _more_tags(self):  # scikit-learn < 1.6
        return {"multioutput": self._loss == "mse", "requires_y": True,
                "_xfail_checks": expected_failed_checks(self)}

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = self._loss == "mse"
        return tags

    # ------------------------------------------------------------ the network
    def _arch(self, n_features, n_outputs, table=None):
        act = _ACTIVATIONS.get(self.activation)
        if act is None:
            raise ValueError("activation must be one of %s, found %r"
                             % (", ".join(sorted(_ACTIVATIONS)), self.activation))
        sizes = self.hidden_layer_sizes
        sizes = [sizes] if isinstance(sizes, numbers.Integral) else list(sizes)
        if any(not isinstance(h, numbers.Integral) or h < 1 for h in sizes):
            raise ValueError("hidden_layer_sizes must be positive integers, found %r"
                             % (self.hidden_layer_sizes,))
        drops = self.dropout
        drops = [drops] * len(sizes) if isinstance(drops, numbers.Real) else list(drops)
        if len(drops) != len(sizes):
            raise ValueError("dropout: one rate, or one per hidden layer (%d), found %r"
                             % (len(sizes), self.dropout))
        layers = ["%d%s%s" % (h, act, ":dropout%r" % float(p) if p else "")
                  for h, p in zip(sizes, drops)]
        embedding = [table.embedding_arch] if table is not None and table.embedding_arch else []
        return "-".join([str(n_features)] + embedding + layers + [str(n_outputs)])

    def _seed_and_rng(self):
        """ffnn's seed and the generator of the validation split: an int random_state
        is the seed itself (as ffnn train --seed); None or a RandomState draws one."""
        rng = check_random_state(self.random_state)
        if isinstance(self.random_state, numbers.Integral):
            return int(self.random_state), rng
        return int(rng.randint(0, 2 ** 31 - 1)), rng

    def _batch(self, n):
        if isinstance(self.batch_size, str):
            if self.batch_size != "auto":
                raise ValueError("batch_size must be 'auto' or a positive integer, found %r"
                                 % (self.batch_size,))
            return min(200, n)
        if not isinstance(self.batch_size, numbers.Integral) or self.batch_size < 1:
            raise ValueError("batch_size must be 'auto' or a positive integer, found %r"
                             % (self.batch_size,))
        if self.batch_size > n:
            warnings.warn("Got `batch_size` less than 1 or larger than sample size. It is "
                          "going to be clipped", UserWarning)
        return min(int(self.batch_size), n)

    def _check_params(self):
        if self.solver not in ("sgd", "adam", "adamw"):
            raise ValueError("solver must be 'sgd', 'adam' or 'adamw', found %r (ffnn has no "
                             "lbfgs)" % (self.solver,))
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError("max_iter must be a positive integer, found %r" % (self.max_iter,))
        if not self.alpha >= 0:
            raise ValueError("alpha must be >= 0, found %r" % (self.alpha,))
        if not self.tol >= 0:
            raise ValueError("tol must be >= 0, found %r" % (self.tol,))
        if not isinstance(self.n_iter_no_change, numbers.Integral) or self.n_iter_no_change < 1:
            raise ValueError("n_iter_no_change must be a positive integer, found %r"
                             % (self.n_iter_no_change,))
        if self.early_stopping and not 0.0 < self.validation_fraction < 1.0:
            raise ValueError("validation_fraction must be in (0, 1), found %r"
                             % (self.validation_fraction,))
        if self.callback is not None and not callable(self.callback):
            raise ValueError("callback must be callable, found %r" % (self.callback,))

    # ------------------------------------------------------------ training
    def _train(self, X, y, n_outputs, epochs, first, stratify, sample_weight=None,
               table=None):
        """Train self.model_ (new when first) for up to epochs epochs on the network's
        targets y (weighted by sample_weight [n] when given), with sklearn's stopping
        rules: tol over n_iter_no_change epochs on the training loss, or with
        early_stopping on the validation score of a held-out validation_fraction (and
        the best epoch's weights kept). table: the encoding X came from (kept in a
        new model)."""
        self._check_params()
        seed, rng = self._seed_and_rng()
        validation = None
        if self.early_stopping:
            parts = train_test_split(
                X, y, *([] if sample_weight is None else [sample_weight]), random_state=rng,
                test_size=self.validation_fraction, stratify=y if stratify else None)
            X, X_val, y, y_val = parts[:4]
            sample_weight = parts[4] if sample_weight is not None else None
            validation = (X_val, y_val)
        if first:
            self.model_ = Model(self._arch(X.shape[1], n_outputs, table), loss=self._loss,
                                seed=seed)
            if table is not None:
                _table.set_model_table(self.model_._handle, table)
            self.loss_curve_ = []
            self.n_iter_ = 0
            self.t_ = 0
            self.best_loss_ = np.inf
            self._no_improvement = 0
            if self.early_stopping:
                self.validation_scores_ = []
                self.best_validation_score_ = -np.inf
        elif self.early_stopping and not hasattr(self, "validation_scores_"):
            self.validation_scores_, self.best_validation_score_ = [], -np.inf
        batch = self._batch(X.shape[0])
        optimizer = self.solver
        if optimizer == "sgd" and self.momentum > 0:
            optimizer = "momentum"
        best_params = [None]
        stopped = [False]
        user_stopped = [False]

        def on_epoch(row):
            self.n_iter_ += 1
            self.t_ += X.shape[0]
            self.loss_curve_.append(row["train_loss"])
            user_stop = self.callback is not None and bool(self.callback(self, row))
            user_stopped[0] = user_stop
            if self.early_stopping:  # sklearn: the validation score, with tol
                score = self._score_network(*validation)
                self.validation_scores_.append(score)
                row["val_score"] = score
                if score > self.best_validation_score_:
                    best_params[0] = self.model_.parameters().copy()
                improved = score >= self.best_validation_score_ + self.tol
                self.best_validation_score_ = max(self.best_validation_score_, score)
                self.best_loss_ = min(self.best_loss_, row["train_loss"])
            else:
                improved = row["train_loss"] <= self.best_loss_ - self.tol
                self.best_loss_ = min(self.best_loss_, row["train_loss"])
            self._no_improvement = 0 if improved else self._no_improvement + 1
            if self._no_improvement > self.n_iter_no_change:
                stopped[0] = True
                if self.verbose:
                    print("%s did not improve more than tol=%f for %d consecutive epochs. "
                          "Stopping." % ("Validation score" if self.early_stopping else
                                         "Training loss", self.tol, self.n_iter_no_change))
            return stopped[0] or user_stop

        try:
            self.model_.train(
                X, y, optimizer=optimizer, learning_rate=self.learning_rate_init,
                epochs=epochs, batch_size=batch, device=self.device, strategy=self.strategy,
                threads=self.threads, seed=seed + self.n_iter_, shuffle=self.shuffle,
                momentum=self.momentum if optimizer == "momentum" else 0.9,
                nesterov=bool(self.nesterovs_momentum) and optimizer == "momentum",
                beta1=self.beta_1, beta2=self.beta_2, epsilon=self.epsilon,
                verbose=bool(self.verbose),
                weight_decay=float(self.alpha) / batch, decay_bias=False,
                lr_schedule=self.lr_schedule, lr_step_size=self.lr_step_size,
                lr_gamma=self.lr_gamma, lr_milestones=self.lr_milestones,
                lr_t_max=self.lr_t_max, lr_min=self.lr_min, lr_end_factor=self.lr_end_factor,
                lr_total_iters=self.lr_total_iters, lr_patience=self.lr_patience,
                lr_factor=self.lr_factor, lr_threshold=self.lr_threshold,
                warmup_steps=self.warmup_steps, clip_grad_norm=self.clip_grad_norm,
                clip_grad_value=self.clip_grad_value, ema_decay=self.ema_decay,
                precision=self.precision, standardize=bool(self.standardize) and first,
                callback=on_epoch, sample_weight=sample_weight)
        finally:  # also after Ctrl-C: the estimator is fitted with the weights so far
            self.loss_ = self.loss_curve_[-1] if self.loss_curve_ else float("nan")
            self.n_layers_ = self.model_.n_layers + 1
            self.n_outputs_ = n_outputs
        if self.early_stopping and best_params[0] is not None:
            self.model_.parameters()[:] = best_params[0]
        if epochs > 1 and not stopped[0] and not user_stopped[0]:
            warnings.warn("Stochastic Optimizer: Maximum iterations (%d) reached and the "
                          "optimization hasn't converged yet." % self.max_iter,
                          ConvergenceWarning)
        return self

    # ------------------------------------------------------------ the fitted network
    @property
    def coefs_(self) -> List[np.ndarray]:
        """The weight of each layer, [n_in, n_out] as scikit-learn's (a transposed
        view of ffnn's [out, in] memory: writing it changes the model)."""
        check_is_fitted(self, "model_")
        return [w.T for w in self.model_.weights()]

    @property
    def intercepts_(self) -> List[np.ndarray]:
        """The bias of each layer, [n_out] (views of the model's memory)."""
        check_is_fitted(self, "model_")
        return list(self.model_.biases())

    @property
    def out_activation_(self) -> str:
        """The output's function, as scikit-learn names it."""
        return {"ce": "softmax", "bce": "logistic", "mse": "identity"}[self._loss]

    def _network_outputs(self, X):
        """X validated against the fit (features, names), outputs float64."""
        check_is_fitted(self, "model_")
        X, _, framed = self._encode_frame(X, reset=False)
        if not framed:
            X = _validate(self, X, reset=False, dtype=(np.float64, np.float32))
        return self.model_.predict(X).astype(np.float64)

    def save(self, path) -> None:
        """Write the model file (``ffnn predict --model`` reads it): architecture,
        parameters, standardisation, a DataFrame's table encoding (its columns'
        names, levels and fills), and for the classifier classes_ as the file's
        class names (as text). Feature names of a numeric fit and ignored columns
        are not kept there: pickle or joblib the estimator to keep everything.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before fit.
        """
        check_is_fitted(self, "model_")
        self.model_.save(path)


class MLPClassifier(ClassifierMixin, _MLPBase):
    """A multilayer perceptron classifier trained by libffnn with softmax
    cross-entropy, as ``sklearn.neural_network.MLPClassifier``.

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of int, default (100,)
        The width of each hidden layer.
    activation : {"relu", "tanh", "logistic", "identity"}, default "relu"
        The hidden layers' function.
    solver : {"adam", "sgd", "adamw"}, default "adam"
        "sgd" is plain SGD, or SGD with (Nesterov) momentum when momentum > 0.
    alpha : float, default 0.0001
        L2 penalty on the weights (not the biases), as scikit-learn's: its gradient
        alpha * W / batch_size is added to the mean gradient (the library's
        weight_decay = alpha / batch_size).
    batch_size : int or "auto", default "auto"
        Samples per step; "auto" is min(200, n_samples).
    learning_rate_init : float, default 0.001
    max_iter : int, default 200
        Epochs at most (fit); partial_fit runs one.
    shuffle : bool, default True
        A fresh permutation each epoch.
    random_state : int, RandomState or None, default None
        An int is ffnn's seed (initialisation, shuffling, dropout; the validation
        split of early_stopping); None draws one from numpy's global generator.
    tol : float, default 1e-4
        Training stops when the training loss (with early_stopping: the validation
        accuracy) has not improved by tol for more than n_iter_no_change epochs, as
        scikit-learn's rule; tol 0 with a large n_iter_no_change runs max_iter epochs.
    verbose : bool, default False
        A progress bar within epochs (tqdm if installed) and a line per epoch.
    warm_start : bool, default False
        fit continues from the fitted model's weights (the optimizer's state starts
        afresh with each call, unlike scikit-learn's).
    momentum, nesterovs_momentum : float, bool
        solver "sgd".
    early_stopping : bool, default False
        Hold out validation_fraction of the training data (stratified), score it
        after each epoch, stop by tol/n_iter_no_change on that score and keep the
        best epoch's weights (scikit-learn's rule; validation_scores_).
    validation_fraction : float, default 0.1
    beta_1, beta_2, epsilon : float
        Adam's.
    n_iter_no_change : int, default 10
    class_weight : dict, "balanced" or None, default None
        Weights of the classes' samples (see Notes).
    dropout : float or tuple of float, default 0.0
        Inverted dropout of each hidden layer's output while training (one rate for
        all, or one per layer).
    lr_schedule : str, default "constant"
        "step", "multistep", "exponential", "cosine", "linear" or "plateau"
        (torch.optim.lr_scheduler's, per epoch), with lr_step_size, lr_gamma,
        lr_milestones, lr_t_max, lr_min, lr_end_factor, lr_total_iters, lr_patience,
        lr_factor, lr_threshold (``ffnn.Model.train`` documents them).
    warmup_steps : int, default 0
        Linear warm-up over the first optimizer steps.
    clip_grad_norm, clip_grad_value : float, default 0.0
        Gradient clipping (0: off).
    ema_decay : float, default 0.0
        Keep an exponential moving average of the weights (0: off).
    standardize : bool, default False
        Fit a z-score standardisation of the features, kept in the model (and its
        file).
    device : {"auto", "cpu", "cuda"}, default "auto"
    strategy : str, default "auto"
        The cuda training strategy, or "reference" (the cpu reference).
    precision : {"fp32", "tf32", "bf16", "tf32x3"}, default "fp32"
    threads : int, default 0
        cpu threads (0: all cores).
    callback : callable, optional
        ``callback(estimator, row)`` after each epoch (row: the epoch's dict of
        ``ffnn.Model.train``'s history); a true return value stops training.
    categorical : str or list of str, optional
        Numeric columns of a DataFrame read as categories (integer codes), as
        ``ffnn train --categorical``.
    ignore : str or list of str, optional
        DataFrame columns left out of the model (ids, dates, free text), as
        ``--ignore``; they stay in feature_names_in_ (predict takes the same frame).
    na_values : list of str, optional
        The texts of a missing text cell besides a blank one; None: ``NA, N/A, NaN,
        nan, null, NULL, None`` (the CLI's --na-values).
    missing : {"impute", "error"}, default "impute"
        A DataFrame's missing cells: filled as ``ffnn train`` fills them, or
        refused naming column and row.
    unknown_category : {"ignore", "error"}, default "ignore"
        At predict, a category the training rows lacked: an all-zero one-hot row
        and a UserWarning with the count (as ``ffnn predict``'s note), or a
        ValueError.
    max_one_hot : int, default 32
        A DataFrame's categorical columns with more levels get a learned embedding
        (an embedding layer first in the network) instead of a one-hot block, as
        ``ffnn train --max-one-hot``.
    embedding_dim : dict, optional
        Column name to embedding dimension (default fastai's min(600, round(1.6
        n^0.56)) for n levels); a column named is embedded whatever its level
        count (``--embedding-dim``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        When X had string column names (a DataFrame); checked at predict.
    model_ : ffnn.Model
        The network (pickles as its model file's bytes).
    loss_, best_loss_ : float
    loss_curve_ : list of float
        The mean training loss of each epoch (without the L2 term).
    validation_scores_, best_validation_score_ : list of float, float
        With early_stopping.
    n_iter_, t_, n_layers_, n_outputs_, out_activation_ : int, int, int, int, str
    coefs_, intercepts_ : list of ndarray
        [n_in, n_out] weights and [n_out] biases (views of the model's memory).

    Notes
    -----
    A pandas DataFrame with text (object, string), category or bool columns or
    missing cells (NaN, None, pd.NA), or any DataFrame when categorical or ignore
    is given, goes through ``ffnn train``'s table encoding (libffnn's, fitted on
    the rows of fit, or of the first partial_fit): a numeric column's missing
    cells get the training median plus a 0/1 "was missing" input, a categorical
    column is one-hot encoded with its training levels (sorted) and the level
    "missing" - scikit-learn's SimpleImputer(add_indicator=True) and
    OneHotEncoder(handle_unknown="ignore"). The encoding is kept in the model
    (``model_.table``), so predict, predict_proba and score take raw frames,
    and pickles and model files keep it (docs/PYTHON_GUIDE.md "Tables").
    A DataFrame of numbers without missing cells, and numpy arrays, are
    numbers as before (NaN refused); a numpy object array holding text is
    refused, naming pandas.DataFrame.

    ``sample_weight`` (fit, partial_fit) and ``class_weight`` (None, a dict
    {class: weight} or "balanced", scikit-learn's compute_class_weight) weight each
    sample's loss; a batch's loss is the weighted mean (docs/TRAINING.md "Weights").
    They train on the cpu backends (device "auto" then means cpu) and need a libffnn
    with per-sample weights (``ffnn.model.sample_weights_supported()``); with one
    that lacks them, non-uniform weights raise NotImplementedError.
    """

    _loss = "ce"

    def _more_tags(self):  # scikit-learn < 1.6 (1.6+: check_estimator's expected_failed_checks)
        return super()._more_tags()

    def __sklearn_tags__(self):  # scikit-learn >= 1.6 wants it next to _more_tags
        return super().__sklearn_tags__()

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", *, solver="adam",
                 alpha=0.0001, batch_size="auto", learning_rate_init=0.001, max_iter=200,
                 shuffle=True, random_state=None, tol=1e-4, verbose=False, warm_start=False,
                 momentum=0.9, nesterovs_momentum=True, early_stopping=False,
                 validation_fraction=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
                 n_iter_no_change=10, class_weight=None, dropout=0.0,
                 lr_schedule="constant", lr_step_size=1, lr_gamma=0.1, lr_milestones=(),
                 lr_t_max=0, lr_min=0.0, lr_end_factor=0.0, lr_total_iters=0,
                 lr_patience=10, lr_factor=0.1, lr_threshold=1e-4, warmup_steps=0,
                 clip_grad_norm=0.0, clip_grad_value=0.0, ema_decay=0.0, standardize=False,
                 device="auto", strategy="auto", precision="fp32", threads=0, callback=None,
                 categorical=None, ignore=None, na_values=None, missing="impute",
                 unknown_category="ignore", max_one_hot=32, embedding_dim=None):
        super().__init__(
            hidden_layer_sizes=hidden_layer_sizes, activation=activation, solver=solver,
            alpha=alpha, batch_size=batch_size, learning_rate_init=learning_rate_init,
            max_iter=max_iter, shuffle=shuffle, random_state=random_state, tol=tol,
            verbose=verbose, warm_start=warm_start, momentum=momentum,
            nesterovs_momentum=nesterovs_momentum, early_stopping=early_stopping,
            validation_fraction=validation_fraction, beta_1=beta_1, beta_2=beta_2,
            epsilon=epsilon, n_iter_no_change=n_iter_no_change, dropout=dropout,
            lr_schedule=lr_schedule, lr_step_size=lr_step_size, lr_gamma=lr_gamma,
            lr_milestones=lr_milestones, lr_t_max=lr_t_max, lr_min=lr_min,
            lr_end_factor=lr_end_factor, lr_total_iters=lr_total_iters,
            lr_patience=lr_patience, lr_factor=lr_factor, lr_threshold=lr_threshold,
            warmup_steps=warmup_steps, clip_grad_norm=clip_grad_norm,
            clip_grad_value=clip_grad_value, ema_decay=ema_decay, standardize=standardize,
            device=device, strategy=strategy, precision=precision, threads=threads,
            callback=callback, categorical=categorical, ignore=ignore, na_values=na_values,
            missing=missing, unknown_category=unknown_category, max_one_hot=max_one_hot,
            embedding_dim=embedding_dim)
        self.class_weight = class_weight

    def _targets(self, X, y, reset):
        """(X validated or encoded, y, the table fitted now or None)."""
        X, table, framed = self._encode_frame(X, reset)
        if framed:
            X, y = check_X_y(X, y, dtype=(np.float64, np.float32))
        else:
            X, y = _validate(self, X, y, reset=reset, dtype=(np.float64, np.float32))
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        return X, y, table

    def fit(self, X, y, sample_weight=None) -> "MLPClassifier":
        """Train on X and y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numbers (NaN, inf, complex and sparse input refused with
            scikit-learn's messages).
            Or a pandas DataFrame: text, category and bool columns and missing
            cells are encoded (see Notes).
        y : array-like of shape (n_samples,)
            Class labels: any hashable values of one kind (numbers or strings).
        sample_weight : array-like of shape (n_samples,), optional
            Weights (finite, >= 0) of the samples' losses: each batch's loss is the
            weighted mean; multiplied by class_weight's. Trained on the cpu.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Invalid input, or fewer than 2 classes.
        KeyboardInterrupt
            Ctrl-C: training stops after the current step; the estimator is fitted
            with the weights trained so far.
        """
        warm = self.warm_start and hasattr(self, "model_")
        X, y, table = self._targets(X, y, reset=not warm)
        if warm:
            index = self._class_index(y)
        else:
            self.classes_, index = np.unique(y, return_inverse=True)
            if len(self.classes_) < 2:
                raise ValueError("y has 1 class only (%r): a classifier needs at least 2 "
                                 "classes" % (self.classes_[0],))
        return self._train(X, index.astype(np.int32), len(self.classes_), self.max_iter,
                           first=not warm, stratify=True,
                           sample_weight=self._sample_weights(X, index, sample_weight),
                           table=table)

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> "MLPClassifier":
        """One epoch on X, y (scikit-learn's partial_fit).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
            Every class of the whole data: required on the first call.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        first = not hasattr(self, "model_")
        X, y, table = self._targets(X, y, reset=first)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            self.classes_ = np.unique(np.asarray(classes))
            if len(self.classes_) < 2:
                raise ValueError("classes has 1 class only: a classifier needs at least 2")
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError("`classes=%r` is not the same as on last call to partial_fit, "
                             "was: %r" % (classes, self.classes_))
        index = self._class_index(y)
        saved = self.early_stopping
        self.early_stopping = False  # as scikit-learn: no validation in partial_fit
        try:
            return self._train(X, index.astype(np.int32), len(self.classes_), 1,
                               first=first, stratify=False,
                               sample_weight=self._sample_weights(X, index, sample_weight),
                               table=table)
        finally:
            self.early_stopping = saved

    def _sample_weights(self, X, index, sample_weight):
        """sample_weight times class_weight's weight of each sample's class (None when
        both are None), as scikit-learn combines them."""
        if sample_weight is None and self.class_weight is None:
            return None
        w = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if self.class_weight is not None:
            per_class = compute_class_weight(self.class_weight, classes=self.classes_,
                                             y=self.classes_[index])
            w = w * per_class[index]
        return w

    def _class_index(self, y):
        index = np.searchsorted(self.classes_, y)
        index = np.clip(index, 0, len(self.classes_) - 1)
        unknown = self.classes_[index] != y
        if unknown.any():
            raise ValueError("y has labels not in classes_ %r: %r"
                             % (self.classes_, np.unique(y[unknown])[:5]))
        return index

    def _score_network(self, X, y_index):
        p = self.model_.predict(X)
        return float(np.mean(np.argmax(p, axis=1) == y_index))

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, float64 [n_samples, n_classes] (the softmax of the
        outputs; columns in the order of classes_).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before fit.
        ValueError
            Another number of features, other feature names, NaN/inf.
        """
        return self._network_outputs(X)

    def predict_log_proba(self, X) -> np.ndarray:
        """The logarithm of predict_proba, float64 [n_samples, n_classes]."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class of each sample, [n_samples] (from classes_)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def save(self, path) -> None:  # noqa: D102 - the base class documents it
        check_is_fitted(self, "model_")
        self.model_.class_names = [str(c) for c in self.classes_]
        self.model_.save(path)

    save.__doc__ = _MLPBase.save.__doc__

    @classmethod
    def load(cls, path) -> "MLPClassifier":
        """A fitted classifier from a model file (``save``, or ``ffnn train --save`` of
        a classifier): classes_ are the file's class names (int64 when every name is
        an integer written canonically, e.g. "3"; else str), or 0 .. classes-1. A
        model with a table encoding (trained on a DataFrame, or by ``ffnn train`` on
        a CSV file with text or missing cells) takes DataFrames of its columns:
        feature_names_in_ are the encoding's columns, in its order.

        Raises
        ------
        FfnnIOError
            A missing or malformed file.
        ValueError
            The file's loss is not "ce".
        """
        model = cls._load_model(path, "ce", "classifier")
        est = cls()
        names = model.class_names
        if names is None:
            est.classes_ = np.arange(max(model.n_outputs, 2))
        elif all(n.lstrip("-").isdigit() and str(int(n)) == n for n in names):
            est.classes_ = np.array([int(n) for n in names], dtype=np.int64)
        else:
            est.classes_ = np.array(names)
        order = np.argsort(est.classes_, kind="stable")
        if (order != np.arange(len(order))).any():
            raise ValueError("%s: class names %r are not sorted; scikit-learn's classes_ "
                             "must be" % (path, names))
        est._adopt(model)
        return est


class MLPRegressor(RegressorMixin, _MLPBase):
    """A multilayer perceptron regressor trained by libffnn with mean squared error
    (a linear last layer), as ``sklearn.neural_network.MLPRegressor``.

    Parameters
    ----------
    The same as MLPClassifier's (without class_weight); with early_stopping the
    validation score is R^2. standardize also standardises the targets (predictions
    are in the targets' units).

    Attributes
    ----------
    As MLPClassifier's, without classes_. predict returns float64 [n_samples] for one
    target, [n_samples, n_outputs] for several.
    """

    _loss = "mse"

    def _targets(self, X, y, reset):
        """(X validated or encoded, y, the table fitted now or None)."""
        X, table, framed = self._encode_frame(X, reset)
        if framed:
            X, y = check_X_y(X, y, dtype=(np.float64, np.float32), multi_output=True,
                             y_numeric=True)
        else:
            X, y = _validate(self, X, y, reset=reset, dtype=(np.float64, np.float32),
                             multi_output=True, y_numeric=True)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        return X, y, table

    def fit(self, X, y, sample_weight=None) -> "MLPRegressor":
        """Train on X and targets y [n_samples] or [n_samples, n_outputs], optionally
        weighted by sample_weight [n_samples] (finite, >= 0; trained on the cpu).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Invalid input (scikit-learn's messages).
        KeyboardInterrupt
            Ctrl-C: training stops after the current step; the estimator is fitted
            with the weights trained so far.
        """
        warm = self.warm_start and hasattr(self, "model_")
        X, y, table = self._targets(X, y, reset=not warm)
        y2 = y.reshape(y.shape[0], -1).astype(np.float32)
        if warm and y2.shape[1] != self.n_outputs_:
            raise ValueError("y has %d targets, the fitted model %d"
                             % (y2.shape[1], self.n_outputs_))
        return self._train(X, y2, y2.shape[1], self.max_iter, first=not warm, stratify=False,
                           sample_weight=_weights_or_none(sample_weight, X), table=table)

    def partial_fit(self, X, y, sample_weight=None) -> "MLPRegressor":
        """One epoch on X, y (scikit-learn's partial_fit); returns self."""
        first = not hasattr(self, "model_")
        X, y, table = self._targets(X, y, reset=first)
        y2 = y.reshape(y.shape[0], -1).astype(np.float32)
        if not first and y2.shape[1] != self.n_outputs_:
            raise ValueError("y has %d targets, the fitted model %d"
                             % (y2.shape[1], self.n_outputs_))
        saved = self.early_stopping
        self.early_stopping = False
        try:
            return self._train(X, y2, y2.shape[1], 1, first=first, stratify=False,
                               sample_weight=_weights_or_none(sample_weight, X), table=table)
        finally:
            self.early_stopping = saved

    def _score_network(self, X, y):
        from sklearn.metrics import r2_score
        return float(r2_score(y, self.model_.predict(X).astype(np.float64)))

    def predict(self, X) -> np.ndarray:
        """Predictions, float64 [n_samples] (one target) or [n_samples, n_outputs].

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before fit.
        ValueError
            Another number of features, other feature names, NaN/inf.
        """
        p = self._network_outputs(X)
        return p[:, 0] if p.shape[1] == 1 else p

    @classmethod
    def load(cls, path) -> "MLPRegressor":
        """A fitted regressor from a model file (``save``, or ``ffnn train --save`` of
        a regression, loss "mse"); its standardisation is kept.

        Raises
        ------
        FfnnIOError
            A missing or malformed file.
        ValueError
            The file's loss is not "mse".
        """
        model = cls._load_model(path, "mse", "regressor")
        est = cls()
        est._adopt(model)
        return est
