"""estimators.py - MLPClassifier and MLPRegressor: ffnn models behind the interface
of scikit-learn's estimators of the same names (fit, predict, predict_proba, score,
get_params, set_params; the same parameter names where ffnn has the feature).
scikit-learn is not needed; the estimators work with its tools (clone, pipelines,
cross-validation) because they follow its conventions.

Differences from scikit-learn: the solvers are "sgd" (plain SGD, or with momentum),
"adam"; no L2 penalty (alpha), no learning-rate schedules; random_state None means
seed 1 (ffnn runs are reproducible); without early_stopping max_iter epochs are always
run (no tol); early_stopping watches the validation loss (scikit-learn: the
validation score, with tol): it holds out validation_fraction of the data (stratified
for the classifier, shuffled with random_state), stops after n_iter_no_change epochs
without a lower validation loss and keeps the best epoch's weights (the library's
early stopping, as ffnn train --early-stopping); device, strategy and threads choose
where ffnn trains.
"""
import inspect

import numpy as np

from .model import Model

__all__ = ["MLPClassifier", "MLPRegressor"]


class _MLPBase:
    _loss = None

    def __init__(self, hidden_layer_sizes=(100,), activation="relu", solver="adam",
                 batch_size="auto", learning_rate_init=0.001, max_iter=200, shuffle=True,
                 random_state=None, momentum=0.9, nesterovs_momentum=True, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-8, verbose=False, device="auto", strategy="auto",
                 threads=0, early_stopping=False, validation_fraction=0.1,
                 n_iter_no_change=10):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.verbose = verbose
        self.device = device
        self.strategy = strategy
        self.threads = threads
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change

    # scikit-learn's parameter protocol: the constructor's arguments
    @classmethod
    def _param_names(cls):
        sig = inspect.signature(_MLPBase.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep=True):
        """The constructor's parameters and their values."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters; returns self."""
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError("invalid parameter %r for %s" % (name, type(self).__name__))
            setattr(self, name, value)
        return self

    def __repr__(self):
        changed = {k: v for k, v in self.get_params().items()
                   if v != inspect.signature(_MLPBase.__init__).parameters[k].default}
        return "%s(%s)" % (type(self).__name__,
                           ", ".join("%s=%r" % kv for kv in changed.items()))

    def _arch(self, n_features, n_outputs):
        act = {"relu": "relu", "tanh": "tanh", "logistic": "sigmoid",
               "identity": "identity"}.get(self.activation)
        if act is None:
            raise ValueError("activation must be relu, tanh, logistic or identity, found %r"
                             % (self.activation,))
        sizes = self.hidden_layer_sizes
        sizes = (sizes,) if np.isscalar(sizes) else tuple(sizes)
        return "-".join([str(n_features)] + ["%d%s" % (h, act) for h in sizes] +
                        [str(n_outputs)])

    def _split(self, X, y, seed, stratify):
        """(X, y) without, and the validation set of, early stopping: validation_fraction
        of the rows (at least one, and one of each class when stratify), chosen by a
        permutation seeded with seed."""
        if not 0.0 < self.validation_fraction < 1.0:
            raise ValueError("validation_fraction must be in (0, 1), found %r"
                             % (self.validation_fraction,))
        rng = np.random.default_rng(seed)
        groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else \
            [np.arange(X.shape[0])]
        val = []
        for g in groups:
            g = rng.permutation(g)
            val.append(g[:max(1, int(round(self.validation_fraction * len(g))))])
        val = np.sort(np.concatenate(val))
        keep = np.setdiff1d(np.arange(X.shape[0]), val)
        if keep.size == 0:
            raise ValueError("validation_fraction %r leaves no rows to train on"
                             % (self.validation_fraction,))
        return X[keep], y[keep], (X[val], y[val])

    def _fit(self, X, y, n_outputs):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError("X must be 2-D [samples, features], found shape %s" % (X.shape,))
        if self.solver not in ("sgd", "adam"):
            raise ValueError("solver must be 'sgd' or 'adam', found %r" % (self.solver,))
        optimizer = self.solver
        if self.solver == "sgd" and self.momentum > 0:
            optimizer = "momentum"
        batch = min(200, X.shape[0]) if self.batch_size == "auto" else \
            min(int(self.batch_size), X.shape[0])
        seed = 1 if self.random_state is None else int(self.random_state)
        n_features = X.shape[1]
        validation = None
        if self.early_stopping:
            if int(self.n_iter_no_change) < 1:
                raise ValueError("n_iter_no_change must be at least 1, found %r"
                                 % (self.n_iter_no_change,))
            X, y, validation = self._split(X, y, seed, self._loss == "ce")
            batch = min(batch, X.shape[0])
        self.model_ = Model(self._arch(n_features, n_outputs), loss=self._loss, seed=seed)
        self.history_ = self.model_.train(
            X, y, optimizer=optimizer, learning_rate=self.learning_rate_init,
            epochs=self.max_iter, batch_size=batch, device=self.device,
            strategy=self.strategy, threads=self.threads, seed=seed, shuffle=self.shuffle,
            momentum=self.momentum if optimizer == "momentum" else 0.9,
            nesterov=bool(self.nesterovs_momentum) and optimizer == "momentum",
            beta1=self.beta_1, beta2=self.beta_2, epsilon=self.epsilon, verbose=self.verbose,
            validation_data=validation,
            early_stopping=int(self.n_iter_no_change) if self.early_stopping else 0)
        self.n_features_in_ = n_features
        self.n_iter_ = len(self.history_)
        self.loss_ = self.history_[-1]["train_loss"] if self.history_ else float("nan")
        self.loss_curve_ = [h["train_loss"] for h in self.history_]
        if self.early_stopping:  # losses, not scikit-learn's validation scores
            self.validation_loss_curve_ = [h["val_loss"] for h in self.history_]
            best = self.model_.best_epoch
            self.best_validation_loss_ = best["loss"] if best else float("nan")
        return self

    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise RuntimeError("%s is not fitted yet: call fit(X, y) first"
                               % type(self).__name__)


class MLPClassifier(_MLPBase):
    """A multilayer perceptron classifier trained with softmax cross-entropy; classes_
    may be any labels (numbers or strings)."""
    _loss = "ce"

    def fit(self, X, y):
        """Train on X [samples, features] and labels y [samples]; returns self."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError("y must be 1-D [samples], found shape %s" % (y.shape,))
        if y.dtype.kind == "f":  # the labels' floats: no silent wrong task (docs/TRAINING.md)
            if np.isnan(y).any():
                raise ValueError("y holds NaN in %d rows: a missing label, which would be a "
                                 "class of its own; drop those rows or fill in their labels"
                                 % int(np.isnan(y).sum()))
            if np.any(y != np.floor(y)):
                raise ValueError("y is continuous (non-integer numbers, e.g. %r), which would "
                                 "train as %d classes: use MLPRegressor for regression, or "
                                 "integer or text labels" % (float(y[y != np.floor(y)][0]),
                                                             len(np.unique(y))))
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("y has one class only (%r): nothing to learn" % (self.classes_[0],))
        return self._fit(X, index.astype(np.int32), len(self.classes_))

    def predict_proba(self, X):
        """The class probabilities [samples, classes] (softmax of the outputs)."""
        self._check_fitted()
        return self.model_.predict(X)

    def predict(self, X):
        """The most probable class of each sample (from classes_)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def score(self, X, y):
        """Mean accuracy on X, y."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


class MLPRegressor(_MLPBase):
    """A multilayer perceptron regressor trained with mean squared error; the last
    layer is linear."""
    _loss = "mse"

    def fit(self, X, y):
        """Train on X [samples, features] and targets y [samples] or [samples,
        outputs]; returns self."""
        y = np.asarray(y, dtype=np.float32)
        self._y_1d = y.ndim == 1
        y2 = y.reshape(y.shape[0], -1)
        return self._fit(X, y2, y2.shape[1])

    def predict(self, X):
        """The predictions [samples] (or [samples, outputs] when fit on 2-D targets)."""
        self._check_fitted()
        p = self.model_.predict(X)
        return p[:, 0] if self._y_1d else p

    def score(self, X, y):
        """The coefficient of determination R^2 of the predictions (1 is perfect)."""
        y = np.asarray(y, dtype=np.float64)
        p = self.predict(X).astype(np.float64).reshape(y.shape)
        ss_res = ((y - p) ** 2).sum()
        ss_tot = ((y - y.mean(axis=0)) ** 2).sum()
        return float(1 - ss_res / ss_tot) if ss_tot > 0 else 0.0
