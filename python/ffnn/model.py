"""model.py - ffnn.Model (a network and its parameters, owned by libffnn), training on
numpy arrays, prediction, evaluation, model files.

Arrays: features X are float32 [samples, features] (other dtypes, or arrays that are
not C-contiguous, are converted once); class labels y are integers in [0, 2^31)
[samples]; float targets y are float32 [samples] or [samples, outputs]. Outputs are
new numpy arrays that libffnn writes into directly. Model.weights() and .biases()
are views of the model's own memory (no copy): writing them changes the model.

A Model pickles (and so joblib-dumps and crosses process pools) as the bytes of its
model file: architecture, parameters, loss, standardisation and class names.
"""
from __future__ import annotations

import ctypes
import os
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib, _table
from ._lib import lib, check, enum_from_name
from ._progress import StepHook

__all__ = ["Model", "train", "load"]


def _features(X, inputs=None, finite=False):
    """X as a C-contiguous float32 [n, features] array (a copy only when needed);
    finite=True refuses NaN and infinite values, naming the first (row, column)."""
    X = np.asarray(X)
    if X.dtype.kind == "c":
        raise ValueError("X is complex (%s): ffnn takes real numbers" % X.dtype)
    if X.ndim == 1:
        X = X.reshape(1, -1) if inputs is not None and X.size == inputs else X.reshape(-1, 1)
    if X.ndim != 2:
        raise ValueError("X must be 2-D [samples, features], found shape %s" % (X.shape,))
    if X.shape[0] == 0:
        raise ValueError("X has no samples")
    if inputs is not None and X.shape[1] != inputs:
        raise ValueError("X has %d features per sample, the model %d inputs"
                         % (X.shape[1], inputs))
    try:
        X = np.ascontiguousarray(X, dtype=np.float32)
    except ValueError as e:
        raise _table.object_text_error(X, e) from None
    if finite and not np.isfinite(X).all():
        row, col = np.argwhere(~np.isfinite(X))[0]
        raise ValueError("X[%d, %d] is %s (or out of float32's range): ffnn needs finite "
                         "features" % (row, col, X[row, col]))
    return X


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def sample_weights_supported() -> bool:
    """True when the libffnn in use trains with per-sample weights
    (ffnn_dataset_set_sample_weights; the cpu backends)."""
    try:
        f = lib.ffnn_dataset_set_sample_weights
    except AttributeError:
        return False
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float)]
    return True


def _weights(sample_weight, n):
    """sample_weight as float32 [n] for the library, or None when every weight is the
    same positive number (the weighted mean is then the plain one, computed as such)."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError("sample_weight must have shape (%d,), found %s" % (n, w.shape))
    if not np.isfinite(w).all() or (w < 0).any():
        bad = int(np.flatnonzero(~np.isfinite(w) | (w < 0))[0])
        raise ValueError("sample_weight[%d] is %r: weights must be finite and >= 0"
                         % (bad, w[bad]))
    if n and (w == w[0]).all() and w[0] > 0:
        return None
    if not sample_weights_supported():
        raise NotImplementedError(
            "sample_weight (and class_weight): the libffnn at %s has no per-sample weights "
            "(ffnn_dataset_set_sample_weights); use a libffnn that has them" % _lib.path)
    return np.ascontiguousarray(w, dtype=np.float32)


class _Dataset:
    """An ffnn_dataset holding (copies of) X and y: labels when y is an integer or
    bool array, float targets otherwise."""

    def __init__(self, X, y, inputs=None, sample_weight=None):
        X = _features(X, inputs)
        y = np.asarray(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError("X has %d samples, y %d" % (X.shape[0], y.shape[0]))
        self.handle = ctypes.c_void_p()
        if y.dtype.kind in "iub":
            if y.ndim != 1:
                raise ValueError("class labels y must be 1-D, found shape %s" % (y.shape,))
            if y.size and (y.min() < 0 or y.max() > np.iinfo(np.int32).max):
                raise ValueError("class labels must be in [0, 2^31), found %d..%d"
                                 % (y.min(), y.max()))
            labels = np.ascontiguousarray(y, dtype=np.int32)
            self.classes = int(labels.max()) + 1
            self.target_width = 0
            check(lib.ffnn_dataset_from_arrays(X.shape[0], X.shape[1], _ptr(X, ctypes.c_float),
                                               _ptr(labels, ctypes.c_int32), 0, None,
                                               ctypes.byref(self.handle)))
        else:
            targets = np.ascontiguousarray(y.reshape(y.shape[0], -1), dtype=np.float32)
            self.classes = 0
            self.target_width = targets.shape[1]
            check(lib.ffnn_dataset_from_arrays(X.shape[0], X.shape[1], _ptr(X, ctypes.c_float),
                                               None, targets.shape[1],
                                               _ptr(targets, ctypes.c_float),
                                               ctypes.byref(self.handle)))
        self.features = X.shape[1]
        self.weighted = False
        weights = _weights(sample_weight, X.shape[0])
        if weights is not None:  # copied by the library
            check(lib.ffnn_dataset_set_sample_weights(self.handle, _ptr(weights, ctypes.c_float)))
            self.weighted = True

    def standardized(self, model):
        """A copy in the network's units (ffnn_dataset_standardize)."""
        out = _Dataset.__new__(_Dataset)
        out.handle = ctypes.c_void_p()
        check(lib.ffnn_dataset_standardize(self.handle, model._handle, ctypes.byref(out.handle)))
        out.classes, out.target_width, out.features = self.classes, self.target_width, \
            self.features
        out.weighted = self.weighted  # the weights go with the samples
        return out

    def __del__(self):
        if getattr(self, "handle", None):
            lib.ffnn_dataset_free(self.handle)
            self.handle = None


def _set_options(cfg, **o):
    """The optional settings of ffnn_train_config (ranges checked by the library)."""
    cfg.weight_decay = o["weight_decay"]
    cfg.decay_bias = 1 if o["decay_bias"] else 0
    value = ctypes.c_int()
    check(lib.ffnn_lr_schedule_from_name(str(o["lr_schedule"]).encode(), ctypes.byref(value)))
    cfg.lr_schedule = value.value
    cfg.lr_step_size = o["lr_step_size"]
    cfg.lr_gamma = o["lr_gamma"]
    milestones = [int(m) for m in (o["lr_milestones"] or ())]
    if len(milestones) > len(cfg.lr_milestones):
        raise ValueError("lr_milestones: at most %d, found %d"
                         % (len(cfg.lr_milestones), len(milestones)))
    for i, m in enumerate(milestones):
        cfg.lr_milestones[i] = m
    cfg.lr_milestone_count = len(milestones)
    cfg.lr_t_max = o["lr_t_max"]
    cfg.lr_min = o["lr_min"]
    cfg.lr_end_factor = o["lr_end_factor"]
    cfg.lr_total_iters = o["lr_total_iters"]
    cfg.lr_patience = o["lr_patience"]
    cfg.lr_factor = o["lr_factor"]
    cfg.lr_threshold = o["lr_threshold"]
    cfg.warmup_steps = o["warmup_steps"]
    cfg.clip_grad_norm = o["clip_grad_norm"]
    cfg.clip_grad_value = o["clip_grad_value"]
    cfg.ema_decay = o["ema_decay"]
    cfg.precision = enum_from_name("precision", o["precision"])
    cfg.steps_per_launch = o["steps_per_launch"]
    cfg.drop_last = 1 if o["drop_last"] else 0


def _train_config(loss, *, epochs, batch_size, learning_rate, seed, shuffle, device, strategy,
                  threads, optimizer, momentum, nesterov, beta1, beta2, epsilon,
                  early_stopping, **options):
    """An ffnn_train_config of Model.train's arguments (options: those of _set_options)."""
    cfg = lib.ffnn_train_config_default()
    cfg.epochs = epochs
    cfg.batch_size = batch_size
    cfg.learning_rate = learning_rate
    cfg.seed = seed
    cfg.shuffle = 1 if shuffle else 0
    cfg.loss = enum_from_name("loss", loss)
    cfg.device = enum_from_name("device", device)
    cfg.strategy = enum_from_name("strategy", strategy)
    cfg.threads = threads
    cfg.optimizer = enum_from_name("optimizer", optimizer)
    cfg.momentum = momentum
    cfg.nesterov = 1 if nesterov else 0
    cfg.beta1, cfg.beta2, cfg.epsilon = beta1, beta2, epsilon
    cfg.early_stopping = early_stopping
    _set_options(cfg, **options)
    return cfg


class Model:
    """A feed-forward network and its parameters, owned by libffnn.

    Parameters
    ----------
    arch : str
        The architecture string (docs/CLI.md "Architecture strings"), e.g.
        ``"784-256relu-10"``; a ``:dropout P`` suffix on a hidden layer drops its
        outputs while training.
    loss : {"ce", "bce", "mse"}, default "ce"
        How the outputs are read: ``predict`` gives softmax probabilities (ce),
        sigmoid probabilities (bce) or the raw outputs (mse).
    seed : int, default 1
        Seed of the initialisation (PyTorch's ``nn.Linear`` rule, ffnn's generator):
        the same seed gives the same parameters.

    Attributes
    ----------
    history : list of dict
        One dict per epoch of the last ``train`` (epoch, train_loss, seconds,
        samples_per_second, learning_rate, and val_loss/val_accuracy with
        validation data).
    best_epoch : dict or None
        Early stopping's best epoch, ``{"epoch": n, "loss": value}``.
    interrupted : str or None
        Where the last ``train`` was stopped by Ctrl-C, e.g.
        ``"SIGINT at epoch 3, step 120 of 938"`` (None: it ran to its end).

    Raises
    ------
    FfnnValueError
        A malformed architecture (the message gives the column) or an unknown loss.
    """

    def __init__(self, arch: str, loss: str = "ce", seed: int = 1) -> None:
        self._handle = ctypes.c_void_p()
        check(lib.ffnn_model_create(arch.encode(), ctypes.byref(self._handle)))
        self.loss = loss
        self.best_epoch = None  # early stopping's best epoch (train)
        self.history = []
        self.interrupted = None
        enum_from_name("loss", loss)  # refused now rather than at the first predict
        check(lib.ffnn_model_init(self._handle, seed))

    @classmethod
    def _adopt(cls, handle, loss):
        m = cls.__new__(cls)
        m._handle = handle
        m.loss = loss
        m.best_epoch = None
        m.history = []
        m.interrupted = None
        return m

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.ffnn_model_free(self._handle)
            self._handle = None

    # ------------------------------------------------------------ pickling
    def to_bytes(self) -> bytes:
        """The model file's bytes (safetensors, docs/FORMATS.md), as ``save`` writes
        them: what ``pickle`` stores."""
        with tempfile.TemporaryDirectory(prefix="ffnn-") as d:
            path = os.path.join(d, "model.safetensors")
            self.save(path)
            with open(path, "rb") as f:
                return f.read()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Model":
        """A model from the bytes of a model file (``to_bytes``, or a file's contents).

        Raises
        ------
        FfnnIOError
            Malformed bytes (the message gives the offset or the key).
        """
        with tempfile.TemporaryDirectory(prefix="ffnn-") as d:
            path = os.path.join(d, "model.safetensors")
            with open(path, "wb") as f:
                f.write(data)
            return cls.load(path)

    def _sync_loss(self) -> None:
        """The library's model remembers its loss (how its outputs are read); make it
        this object's ``loss`` before a call that reads it (a loss that does not fit
        the network raises FfnnValueError)."""
        check(lib.ffnn_model_set_loss(self._handle, enum_from_name("loss", self.loss)))

    def __getstate__(self):
        return {"safetensors": self.to_bytes(), "loss": self.loss,
                "best_epoch": self.best_epoch, "history": self.history,
                "interrupted": self.interrupted}

    def __setstate__(self, state):
        other = Model.from_bytes(state["safetensors"])
        self._handle, other._handle = other._handle, None
        self.loss = state["loss"]
        self.best_epoch = state.get("best_epoch")
        self.history = state.get("history", [])
        self.interrupted = state.get("interrupted")

    def __copy__(self):
        return self.__deepcopy__({})

    def __deepcopy__(self, memo):
        m = Model.__new__(Model)
        m.__setstate__(self.__getstate__())
        return m

    # ------------------------------------------------------------ metadata
    @property
    def class_names(self) -> Optional[List[str]]:
        """The original labels of the classes (stored in model files; written by
        ``ffnn train`` for CSV labels), or None. Set a list of
        ``ffnn_model_class_count`` distinct strings, or None to remove them."""
        count = lib.ffnn_model_class_count(self._handle)
        names = [lib.ffnn_model_class_name(self._handle, c) for c in range(count)]
        if not names or names[0] is None:
            return None
        return [n.decode("utf-8") for n in names]

    @class_names.setter
    def class_names(self, names: Optional[Sequence[str]]) -> None:
        if names is None:
            check(lib.ffnn_model_set_class_names(self._handle, None, 0))
            return
        names = [str(n) for n in names]
        if len(set(names)) != len(names):
            raise ValueError("class names must be distinct, found %r" % (names,))
        arr = (ctypes.c_char_p * len(names))(*[n.encode("utf-8") for n in names])
        check(lib.ffnn_model_set_class_names(self._handle, arr, len(names)))

    @property
    def standardization(self) -> Optional[Dict[str, np.ndarray]]:
        """The z-score standardisation the model applies (stored in model files):
        ``{"input_mean", "input_scale"}`` [inputs] and, for regression,
        ``{"target_mean", "target_scale"}`` [outputs] (float32 copies), or None."""
        ptrs = [ctypes.POINTER(ctypes.c_float)() for _ in range(4)]
        check(lib.ffnn_model_standardization(self._handle, *[ctypes.byref(p) for p in ptrs]))
        out = {}
        for name, p, n in zip(("input_mean", "input_scale", "target_mean", "target_scale"),
                              ptrs, (self.n_inputs,) * 2 + (self.n_outputs,) * 2):
            if p:
                out[name] = np.ctypeslib.as_array(p, (n,)).copy()
        return out or None

    # ------------------------------------------------------------ description
    @property
    def arch(self) -> str:
        """The canonical architecture string (activation parameters only when not the
        default)."""
        buf = ctypes.create_string_buffer(4096)
        lib.ffnn_model_arch_string(self._handle, buf, len(buf))
        return buf.value.decode()

    @property
    def n_inputs(self) -> int:
        """Features per sample the network takes."""
        return lib.ffnn_model_input_size(self._handle)

    @property
    def n_outputs(self) -> int:
        """Outputs of the last layer (classes for ce; 1 for binary bce)."""
        return lib.ffnn_model_output_size(self._handle)

    @property
    def n_layers(self) -> int:
        """Layers with parameters (hidden layers and the output layer)."""
        return lib.ffnn_model_layer_count(self._handle)

    @property
    def parameter_count(self) -> int:
        """Weights and biases in all."""
        return lib.ffnn_model_parameter_count(self._handle)

    def __repr__(self):
        return "ffnn.Model(%r, loss=%r)  # %d parameters" % (self.arch, self.loss,
                                                            self.parameter_count)

    def _view(self, ptr, shape):
        """A numpy view of shape over the model's floats at ptr; it keeps the model
        alive (its buffer's _owner)."""
        count = int(np.prod(shape))
        buf = (ctypes.c_float * count).from_address(ctypes.addressof(ptr.contents))
        buf._owner = self
        return np.frombuffer(buf, dtype=np.float32).reshape(shape)

    def weights(self) -> List[np.ndarray]:
        """Each layer's weight, a float32 view [out, fan_in] of the model's memory
        (PyTorch's nn.Linear order; [out, R] for a local layer; an embedding layer's
        tables [sum n_j d_j], one after another): writing it changes the model; the
        view keeps the model alive."""
        out = []
        for i in range(self.n_layers):
            o, fan_in, kind = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_int()
            check(lib.ffnn_model_layer(self._handle, i, None, ctypes.byref(o), None, None))
            check(lib.ffnn_model_layer_kind(self._handle, i, ctypes.byref(kind),
                                            ctypes.byref(fan_in), None))
            shape = (o.value, fan_in.value)
            if kind.value == 2:  # an embedding layer: its tables one after another, flat
                k = ctypes.c_size_t()
                check(lib.ffnn_model_embedding(self._handle, i, ctypes.byref(k), None, None, 0))
                n, d = (ctypes.c_size_t * k.value)(), (ctypes.c_size_t * k.value)()
                check(lib.ffnn_model_embedding(self._handle, i, None, n, d, k.value))
                shape = (sum(a * b for a, b in zip(n, d)),)
            out.append(self._view(lib.ffnn_model_weight(self._handle, i), shape))
        return out

    def biases(self) -> List[Optional[np.ndarray]]:
        """Each layer's bias, a float32 view [out] of the model's memory (None for a
        ':nobias' layer)."""
        out = []
        for i in range(self.n_layers):
            o, has_bias = ctypes.c_size_t(), ctypes.c_int()
            check(lib.ffnn_model_layer(self._handle, i, None, ctypes.byref(o), None,
                                       ctypes.byref(has_bias)))
            out.append(self._view(lib.ffnn_model_bias(self._handle, i), (o.value,))
                       if has_bias.value else None)
        return out

    @property
    def n_members(self) -> int:
        """The members of an ensemble model (``ffnn.ensemble``, ``ffnn sweep
        --ensemble``), 0 for a plain model."""
        return lib.ffnn_model_member_count(self._handle)

    def parameters(self) -> np.ndarray:
        """All parameters as one float32 view [parameter_count]: layer by layer, weight
        (row-major) then bias."""
        if self.n_members:
            raise ValueError("an ensemble model has no single parameter array (its "
                             "members keep theirs)")
        return self._view(lib.ffnn_model_parameters(self._handle), (self.parameter_count,))

    # ------------------------------------------------------------ training
    def train(self, X, y, loss: Optional[str] = None, optimizer: str = "sgd",
              learning_rate: float = 0.01, epochs: int = 10, batch_size: int = 64,
              device: str = "auto", strategy: str = "auto", threads: int = 0, seed: int = 1,
              shuffle: bool = True, momentum: float = 0.9, nesterov: bool = False,
              beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
              validation_data: Optional[Tuple[Any, Any]] = None, early_stopping: int = 0,
              verbose: bool = False, weight_decay: float = 0.0, decay_bias: bool = True,
              lr_schedule: str = "constant", lr_step_size: int = 1, lr_gamma: float = 0.1,
              lr_milestones: Sequence[int] = (), lr_t_max: int = 0, lr_min: float = 0.0,
              lr_end_factor: float = 0.0, lr_total_iters: int = 0, lr_patience: int = 10,
              lr_factor: float = 0.1, lr_threshold: float = 1e-4, warmup_steps: int = 0,
              clip_grad_norm: float = 0.0, clip_grad_value: float = 0.0,
              ema_decay: float = 0.0, precision: str = "fp32", steps_per_launch: int = 0,
              drop_last: bool = False, standardize: bool = False,
              callback: Optional[Callable[[Dict[str, Any]], Any]] = None,
              step_callback: Optional[Callable[[int, int, int], Any]] = None,
              sample_weight: Optional[Any] = None, categorical: Optional[Any] = None,
              ignore: Optional[Any] = None, na_values: Optional[Sequence[str]] = None,
              missing: str = "impute",
              unknown_category: str = "ignore") -> List[Dict[str, Any]]:
        """Train the model with libffnn's trainer (the options of ``ffnn train``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs)
            Features (converted to float32 once; NaN/inf refused, naming the sample).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Integer class labels in [0, 2^31) (loss ce or bce), or float targets (mse,
            or 0/1 targets for bce).
        loss : {"ce", "bce", "mse"}, optional
            Replaces the model's loss.
        optimizer : {"sgd", "momentum", "adam", "adamw"}, default "sgd"
            torch.optim semantics; momentum, nesterov, beta1, beta2, epsilon are their
            hyperparameters.
        learning_rate : float, default 0.01
        epochs : int, default 10
            Passes over the training set, >= 1.
        batch_size : int, default 64
        device : {"auto", "cpu", "cuda"}, default "auto"
        strategy : str, default "auto"
            A cuda training strategy ("tiled", "fused", "graph", "cublas", ...) or
            "reference" (the single-threaded cpu reference).
        threads : int, default 0
            cpu threads (0: all cores).
        seed : int, default 1
            Seed of the shuffling (and dropout).
        shuffle, drop_last : bool
            A fresh permutation each epoch; drop the last short batch.
        validation_data : (X_val, y_val), optional
            Evaluated after each epoch (val_loss, val_accuracy in the history).
        early_stopping : int, default 0
            Patience P: stop once P epochs pass without a lower validation loss
            (training loss without validation data) and keep the best epoch's weights
            (``best_epoch``).
        verbose : bool, default False
            A progress bar within each epoch (tqdm when installed, else one line on
            stderr) and one line per epoch.
        weight_decay, decay_bias : float, bool
            L2 penalty added to the gradient (adamw: decoupled); decay_bias False
            exempts the biases.
        lr_schedule : {"constant", "step", "multistep", "exponential", "cosine", "linear", "plateau"}
            torch.optim.lr_scheduler's, stepped per epoch, with lr_step_size,
            lr_gamma, lr_milestones, lr_t_max, lr_min, lr_end_factor, lr_total_iters,
            lr_patience, lr_factor, lr_threshold (include/ffnn.h documents each);
            warmup_steps: a linear warm-up over the first optimizer steps.
        clip_grad_norm, clip_grad_value : float
            Gradient clipping (0: off), as torch.nn.utils.clip_grad_norm_/_value_.
        ema_decay : float
            An exponential moving average of the parameters (0: off); the model keeps
            the averaged weights.
        precision : {"fp32", "tf32", "bf16", "tf32x3"}
            cuda matmul arithmetic.
        steps_per_launch : int
            cuda: steps per launch of the graph, persistent and cublas strategies.
        standardize : bool, default False
            Fit a z-score standardisation of the features (and of mse targets) on X, y
            and keep it in the model: predict and evaluate then take data in its own
            units. A model that already has one trains on data standardised by it.
        callback : callable, optional
            ``callback(row)`` after each epoch with its history dict; a true return
            value stops training there.
        step_callback : callable, optional
            ``step_callback(epoch, step, steps_per_epoch)`` after each step (each
            launch on cuda); a true return value stops after that step.
        sample_weight : array-like of shape (n_samples,), optional
            Per-sample weights, finite and >= 0: a batch's loss is the weighted mean
            sum w_i l_i / sum w_i (docs/TRAINING.md "Weights"). They train on the cpu
            backends: device "auto" then means cpu, "cuda" is refused. Needs a
            libffnn with weights (``ffnn.model.sample_weights_supported()``), else
            NotImplementedError.
        categorical, ignore, na_values, missing, unknown_category
            A pandas DataFrame X with text, category or bool columns or missing cells
            (NaN, None, pd.NA) goes through the table encoding of ``ffnn train``
            (docs/PYTHON.md "Tables"): fitted on X here when the model has none (it
            must have as many inputs as the encoding: ``ffnn.train`` sizes the
            network so), then kept in the model. categorical: numeric columns read
            as categories; ignore: columns dropped; na_values: texts of a missing
            cell (None: the CLI's list); missing "error" refuses missing cells;
            unknown_category "error" refuses levels training lacked (else an
            all-zero one-hot and a warning).

        Returns
        -------
        list of dict
            The history (also ``self.history``).

        Raises
        ------
        KeyboardInterrupt
            Ctrl-C stops training after the current step; the model keeps the
            weights trained so far and ``self.interrupted`` says where it stopped.
        FfnnValueError
            An option out of range (the message names it and its limits).
        """
        if int(epochs) < 1:
            raise ValueError("epochs must be at least 1, found %r" % (epochs,))
        if strategy == "reference" and threads not in (0, 1):
            raise ValueError("strategy='reference' runs on one thread: threads=%r asks for "
                             "more (leave threads=0, or use strategy='auto', the OpenMP "
                             "backend)" % (threads,))
        if loss is not None:
            enum_from_name("loss", loss)
            self.loss = loss
        kind = ctypes.c_int()
        if self.n_layers > 0:  # (an ensemble has none: refused below)
            check(lib.ffnn_model_layer_kind(self._handle, 0, ctypes.byref(kind), None, None))
        # the network is built: a frame is one-hot encoded, unless the first layer is
        # an embedding layer (then ffnn train's rule, --max-one-hot 32)
        opts = _table.TableOptions(categorical, ignore, na_values, missing, unknown_category,
                                   max_one_hot=32 if kind.value == 2 else 1 << 24)
        X = self._table_inputs(X, opts, fit=True)
        if validation_data is not None:
            validation_data = (self._table_inputs(validation_data[0], opts),
                               validation_data[1])
        data = _Dataset(X, y, self.n_inputs, sample_weight)
        val = _Dataset(validation_data[0], validation_data[1], self.n_inputs) \
            if validation_data is not None else None
        if data.weighted and device == "auto":  # weights train on the cpu backends
            device = "cpu"
        cfg = _train_config(self.loss, epochs=epochs, batch_size=batch_size,
                            learning_rate=learning_rate, seed=seed, shuffle=shuffle,
                            device=device, strategy=strategy, threads=threads,
                            optimizer=optimizer, momentum=momentum, nesterov=nesterov,
                            beta1=beta1, beta2=beta2, epsilon=epsilon,
                            early_stopping=early_stopping, weight_decay=weight_decay,
                            decay_bias=decay_bias, lr_schedule=lr_schedule,
                            lr_step_size=lr_step_size, lr_gamma=lr_gamma,
                            lr_milestones=lr_milestones, lr_t_max=lr_t_max, lr_min=lr_min,
                            lr_end_factor=lr_end_factor, lr_total_iters=lr_total_iters,
                            lr_patience=lr_patience, lr_factor=lr_factor,
                            lr_threshold=lr_threshold, warmup_steps=warmup_steps,
                            clip_grad_norm=clip_grad_norm, clip_grad_value=clip_grad_value,
                            ema_decay=ema_decay, precision=precision,
                            steps_per_launch=steps_per_launch, drop_last=drop_last)
        if standardize:
            check(lib.ffnn_model_fit_standardization(
                self._handle, data.handle, 1 if data.target_width and self.loss == "mse" else 0))
        if self.standardization is not None:  # train in the network's units
            data = data.standardized(self)
            val = val.standardized(self) if val is not None else None
        self.best_epoch = None
        self.interrupted = None
        trainer = ctypes.c_void_p()
        check(lib.ffnn_trainer_create(self._handle, data.handle, ctypes.byref(cfg),
                                      ctypes.byref(trainer)))
        history = self.history = []
        best, best_loss, stop = ctypes.c_int(), ctypes.c_double(), ctypes.c_int()
        run = StepHook(trainer, verbose, step_callback)
        try:
            with run:
                if val is not None:  # evaluated by the trainer after each epoch
                    check(lib.ffnn_trainer_set_validation(trainer, val.handle))
                for _ in range(epochs):
                    stats = _lib.EpochStats()
                    finished = ctypes.c_int()
                    check(lib.ffnn_trainer_run_epoch_until(trainer, run.on_step, None,
                                                           ctypes.byref(stats),
                                                           ctypes.byref(finished)))
                    row = {"epoch": stats.epoch, "train_loss": stats.train_loss,
                           "seconds": stats.seconds,
                           "images_per_second": stats.images_per_second,
                           "learning_rate": stats.learning_rate}
                    if val is not None and finished.value:
                        row["val_loss"] = stats.val_loss
                        row["val_accuracy"] = stats.val_accuracy
                    history.append(row)
                    if not finished.value:  # Ctrl-C or step_callback
                        row["finished"] = False
                        self.interrupted = run.stopped_at()
                        break
                    run.end_epoch(row)
                    check(lib.ffnn_trainer_early_stopping(trainer, ctypes.byref(best),
                                                          ctypes.byref(best_loss),
                                                          ctypes.byref(stop)))
                    if stop.value or (callback is not None and callback(row)):
                        break
                if run.sigint and self.interrupted is None:  # Ctrl-C at the last step
                    self.interrupted = run.stopped_at()
            check(lib.ffnn_trainer_sync_model(trainer))
            if early_stopping and best.value > 0 and not self.interrupted:
                check(lib.ffnn_trainer_restore_best(trainer))  # the best epoch's weights
                self.best_epoch = {"epoch": best.value, "loss": best_loss.value}
                if verbose:
                    print("early stopping: restored epoch %d (loss %.6g)"
                          % (best.value, best_loss.value), file=sys.stderr, flush=True)
        finally:
            lib.ffnn_trainer_free(trainer)
        if run.error is not None:
            raise run.error
        if run.sigint:
            raise KeyboardInterrupt("training stopped by Ctrl-C (%s); the model keeps the "
                                    "weights trained so far" % self.interrupted)
        return history

    # ------------------------------------------------------------ inference
    @property
    def table(self) -> Optional[List[Dict[str, Any]]]:
        """The table encoding the model applies to a DataFrame (fitted by ``train`` on
        a frame with text or missing cells, or by ``ffnn train`` on such a CSV file;
        kept in model files): one dict per column, ``{"name", "kind": "numeric",
        "median", "indicator"}`` or ``{"name", "kind": "categorical", "levels"}``;
        None when the model's inputs are plain numbers."""
        t = _table.model_table(self._handle)
        return t.describe() if t is not None else None

    def _table_inputs(self, X, options, fit=False):
        """A DataFrame X as the network's inputs: encoded by the model's table, or
        (fit) by one fitted on X and kept; other X as it is."""
        if not _table.is_frame(X):
            return X
        table = _table.model_table(self._handle)
        if table is not None:
            return _table.encode(table, X, options)
        if not fit or not _table.uses_table(X, options):
            return X
        table, encoded = _table.fit_encode(X, options)
        if table.width != self.n_inputs:
            raise ValueError("X's table encodes to %d inputs, the model has %d: build the "
                             "model from the frame with ffnn.train(X, y, ...), which sizes "
                             "it, or with arch '%d-...'"
                             % (table.width, self.n_inputs, table.width))
        _table.set_model_table(self._handle, table)
        return encoded

    def _predict(self, X, na_values=None, unknown_category="ignore"):
        X = self._table_inputs(X, _table.TableOptions(na_values=na_values,
                                                      unknown_category=unknown_category))
        X = _features(X, self.n_inputs, finite=True)
        n = X.shape[0]
        p = np.empty((n, self.n_outputs), dtype=np.float32)
        cls = np.empty(n, dtype=np.intc)
        self._sync_loss()
        check(lib.ffnn_model_predict(self._handle, _ptr(X, ctypes.c_float), n,
                                     _ptr(p, ctypes.c_float), _ptr(cls, ctypes.c_int)))
        return p, cls

    def predict(self, X, *, na_values: Optional[Sequence[str]] = None,
                unknown_category: str = "ignore") -> np.ndarray:
        """The outputs of the network, as the loss reads them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_inputs), or a pandas DataFrame
            Features in the data's units (the model's standardisation is applied);
            NaN/inf refused, naming the sample. A model with a table encoding
            (``table``) takes a DataFrame of raw rows: its columns found by name
            (others left out, as ``ffnn predict --data``), text, categories and
            missing cells encoded as in training; a numpy array is the network's
            inputs (already encoded, ``n_inputs`` per row).
        na_values, unknown_category
            As ``train``'s, for a DataFrame.

        Returns
        -------
        ndarray of shape (n_samples, n_outputs), float32
            Softmax probabilities (ce), sigmoid probabilities (bce), raw outputs (mse).
        """
        return self._predict(X, na_values, unknown_category)[0]

    def predict_classes(self, X, *, na_values: Optional[Sequence[str]] = None,
                        unknown_category: str = "ignore") -> np.ndarray:
        """The predicted class of each row, int64 [n_samples]: the argmax of the
        outputs, or for one output 1 when it is above 0 (ce/bce logits) or 0.5 (mse),
        else 0."""
        return self._predict(X, na_values, unknown_category)[1].astype(np.int64)

    def evaluate(self, X, y, batch_size: int = 1024, *,
                 na_values: Optional[Sequence[str]] = None,
                 unknown_category: str = "ignore") -> Dict[str, Any]:
        """The model's loss and accuracy on X, y.

        Returns
        -------
        dict
            ``"loss"``: the mean per-sample loss; ``"accuracy"``: the fraction
            predicted right; ``"confusion"``: uint64 [classes, classes] counts (rows:
            the true class).
        """
        X = self._table_inputs(X, _table.TableOptions(na_values=na_values,
                                                      unknown_category=unknown_category))
        data = _Dataset(X, y, self.n_inputs)
        classes = lib.ffnn_model_class_count(self._handle)
        confusion = np.zeros((classes, classes), dtype=np.uint64)
        loss = ctypes.c_double()
        self._sync_loss()
        check(lib.ffnn_model_evaluate(self._handle, data.handle, batch_size, ctypes.byref(loss),
                                      _ptr(confusion, ctypes.c_uint64)))
        total = confusion.sum()
        return {"loss": loss.value,
                "accuracy": float(np.trace(confusion)) / float(total) if total else 0.0,
                "confusion": confusion}

    # ------------------------------------------------------------ files
    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the model file (safetensors, docs/FORMATS.md) atomically: an existing
        file stays as it was if anything fails. Class names and standardisation are
        kept; ``ffnn predict --model`` reads it.

        Raises
        ------
        FfnnIOError
            The path cannot be written (the message says why).
        """
        self._sync_loss()
        check(lib.ffnn_model_save(self._handle, str(path).encode()))

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "Model":
        """Read a model file written by ``save`` or ``ffnn train --save``.

        Raises
        ------
        FfnnIOError
            A missing or malformed file (the message gives the offset or the key).
        """
        handle = ctypes.c_void_p()
        info = _lib.ModelFileInfo()
        check(lib.ffnn_model_load(str(path).encode(), ctypes.byref(handle), ctypes.byref(info)))
        return cls._adopt(handle, lib.ffnn_loss_name(info.loss).decode())


def ensemble(models: Sequence[Model]) -> Model:
    """One model whose prediction is the mean of the models' (ffnn_model_ensemble):
    softmax / sigmoid probabilities for ce / bce, outputs in the targets' units for
    mse, each member with its own standardisation. The models are copied (they stay
    yours); they must share the input size, output width, loss, class names and
    table. The ensemble predicts, evaluates and saves (one file, ``ffnn predict``
    reads it) but does not train.
    """
    models = list(models)
    if not models:
        raise ValueError("ensemble: no models")
    for m in models:
        if not isinstance(m, Model):
            raise TypeError("ensemble: expected ffnn.Model objects, found %s"
                            % type(m).__name__)
        m._sync_loss()
    handles = (ctypes.c_void_p * len(models))(*[m._handle.value for m in models])
    out = ctypes.c_void_p()
    check(lib.ffnn_model_ensemble(handles, len(models), ctypes.byref(out)))
    return Model._adopt(out, models[0].loss)


def load(path: "os.PathLike[str] | str") -> Model:
    """Read a model file: ``Model.load(path)``."""
    return Model.load(path)


def train(X, y, arch: Optional[str] = None, loss: Optional[str] = None,
          optimizer: str = "sgd", epochs: int = 10, batch_size: int = 64,
          learning_rate: float = 0.01, device: str = "auto", seed: int = 1,
          **options: Any) -> Model:
    """Build and train a model on X, y.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or a pandas DataFrame
        A DataFrame with text, category or bool columns or missing cells is
        encoded as ``ffnn train`` encodes such a CSV file (one-hot levels, median
        fills with missing indicators; the options categorical, ignore,
        na_values, missing of ``Model.train``, and max_one_hot=32, embedding_dim:
        columns with more levels get a learned embedding, its layer put first in
        arch), the network sized to the encoding, the encoding kept in the model
        (``Model.table``).
    y : array-like
        Integer class labels [n_samples], or float targets [n_samples] /
        [n_samples, n_outputs] (then pass ``loss="mse"`` or ``"bce"``).
    arch : str, optional
        Default ``FEATURES-256relu-CLASSES`` (``-TARGETS`` for float targets).
    loss : {"ce", "bce", "mse"}, optional
        Default "ce" for integer labels. Float y needs it named: float labels are
        refused rather than silently trained as a regression.
    **options
        Those of ``Model.train``.

    Returns
    -------
    Model
        Trained; its ``history`` has one dict per epoch.
    """
    keys = ("categorical", "ignore", "na_values", "missing", "unknown_category", "max_one_hot",
            "embedding_dim")
    opts = _table.TableOptions(**{k: options.pop(k) for k in keys if k in options})
    table = None
    if _table.uses_table(X, opts):
        table, X = _table.fit_encode(X, opts)
    X = _features(X)
    y_arr = np.asarray(y)
    labels = y_arr.dtype.kind in "iub"
    if loss is None and not labels:
        raise ValueError("y is %s, not integer labels: pass loss='mse' (regression) or "
                         "loss='bce' (0/1 targets), or integer class labels "
                         "(y.astype(int)) for classification" % y_arr.dtype)
    if loss is None:
        loss = "ce"
    emb = table.embedding_arch if table is not None else ""
    if arch is None:
        width = (max(int(y_arr.max()) + 1, 2) if labels
                 else (1 if y_arr.ndim == 1 else y_arr.shape[1]))
        arch = "%d-256relu-%d" % (X.shape[1], width)
    head, _, rest = arch.partition("-")
    if emb and not rest.startswith("embed"):  # the embedding layer first, as ffnn train
        arch = "%s-%s-%s" % (head, emb, rest)
    model = Model(arch, loss=loss, seed=seed)
    if table is not None:
        if table.width != model.n_inputs:
            raise ValueError("arch %r takes %d inputs, X's table encodes to %d (leave arch "
                             "out, or begin it with %d)" % (arch, model.n_inputs, table.width,
                                                             table.width))
        _table.set_model_table(model._handle, table)
    model.train(X, y_arr, optimizer=optimizer, epochs=epochs,
                                batch_size=batch_size, learning_rate=learning_rate,
                                device=device, seed=seed, **options)
    return model
