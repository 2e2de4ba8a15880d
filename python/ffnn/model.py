"""model.py - ffnn.Model (a network and its parameters, owned by libffnn), training on
numpy arrays, prediction, evaluation, model files.

Arrays: features X are float32 [samples, features] (other dtypes, or arrays that are
not C-contiguous, are converted once); class labels y are integers in [0, 2^31)
[samples]; float targets y are float32 [samples] or [samples, outputs]. Outputs are
new numpy arrays that libffnn writes into directly. Model.weights() and .biases()
are views of the model's own memory (no copy): writing them changes the model.
"""
import ctypes

import numpy as np

from . import _lib
from ._lib import lib, check, enum_from_name

__all__ = ["Model", "train", "load"]


def _features(X, inputs=None):
    """X as a C-contiguous float32 [n, features] array (a copy only when needed)."""
    X = np.asarray(X)
    if X.ndim == 1:
        X = X.reshape(1, -1) if inputs is not None and X.size == inputs else X.reshape(-1, 1)
    if X.ndim != 2:
        raise ValueError("X must be 2-D [samples, features], found shape %s" % (X.shape,))
    if X.shape[0] == 0:
        raise ValueError("X has no samples")
    if inputs is not None and X.shape[1] != inputs:
        raise ValueError("X has %d features per sample, the model %d inputs"
                         % (X.shape[1], inputs))
    return np.ascontiguousarray(X, dtype=np.float32)


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


class _Dataset:
    """An ffnn_dataset holding (copies of) X and y: labels when y is an integer or
    bool array, float targets otherwise."""

    def __init__(self, X, y, inputs=None):
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

    def __del__(self):
        if getattr(self, "handle", None):
            lib.ffnn_dataset_free(self.handle)
            self.handle = None


class Model:
    """A feed-forward network: Model("784-256relu-10", loss="ce", seed=1) builds one
    from an architecture string (docs/CLI.md "Architecture strings") initialised as
    PyTorch's nn.Linear from the seed. loss ("ce", "bce" or "mse") is how its outputs
    are read: predict gives softmax probabilities (ce), sigmoid probabilities (bce) or
    the raw outputs (mse)."""

    def __init__(self, arch, loss="ce", seed=1):
        self._handle = ctypes.c_void_p()
        check(lib.ffnn_model_create(arch.encode(), ctypes.byref(self._handle)))
        self.loss = loss
        self.best_epoch = None  # early stopping's best epoch (train)
        enum_from_name("loss", loss)  # refused now rather than at the first predict
        check(lib.ffnn_model_init(self._handle, seed))

    @classmethod
    def _adopt(cls, handle, loss):
        m = cls.__new__(cls)
        m._handle = handle
        m.loss = loss
        m.best_epoch = None
        return m

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.ffnn_model_free(self._handle)
            self._handle = None

    # ------------------------------------------------------------ description
    @property
    def arch(self):
        """The canonical architecture string."""
        buf = ctypes.create_string_buffer(4096)
        lib.ffnn_model_arch_string(self._handle, buf, len(buf))
        return buf.value.decode()

    @property
    def n_inputs(self):
        return lib.ffnn_model_input_size(self._handle)

    @property
    def n_outputs(self):
        return lib.ffnn_model_output_size(self._handle)

    @property
    def n_layers(self):
        return lib.ffnn_model_layer_count(self._handle)

    @property
    def parameter_count(self):
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

    def weights(self):
        """Each layer's weight as a view [out, fan_in] of the model's memory (PyTorch's
        nn.Linear order; [out, R] for a local layer)."""
        out = []
        for i in range(self.n_layers):
            o, fan_in = ctypes.c_size_t(), ctypes.c_size_t()
            check(lib.ffnn_model_layer(self._handle, i, None, ctypes.byref(o), None, None))
            check(lib.ffnn_model_layer_kind(self._handle, i, None, ctypes.byref(fan_in), None))
            out.append(self._view(lib.ffnn_model_weight(self._handle, i),
                                  (o.value, fan_in.value)))
        return out

    def biases(self):
        """Each layer's bias as a view [out] of the model's memory (None without bias)."""
        out = []
        for i in range(self.n_layers):
            o, has_bias = ctypes.c_size_t(), ctypes.c_int()
            check(lib.ffnn_model_layer(self._handle, i, None, ctypes.byref(o), None,
                                       ctypes.byref(has_bias)))
            out.append(self._view(lib.ffnn_model_bias(self._handle, i), (o.value,))
                       if has_bias.value else None)
        return out

    def parameters(self):
        """All parameters as one view [parameter_count]: layer by layer, weight then bias."""
        return self._view(lib.ffnn_model_parameters(self._handle), (self.parameter_count,))

    # ------------------------------------------------------------ training
    def train(self, X, y, loss=None, optimizer="sgd", learning_rate=0.01, epochs=10,
              batch_size=64, device="auto", strategy="auto", threads=0, seed=1, shuffle=True,
              momentum=0.9, nesterov=False, beta1=0.9, beta2=0.999, epsilon=1e-8,
              validation_data=None, early_stopping=0, verbose=False):
        """Train on X [samples, features] and y (class labels [samples], or float
        targets [samples] / [samples, outputs] for loss "mse" or "bce") with libffnn's
        trainer: optimizer "sgd" | "momentum" | "adam" (torch.optim semantics),
        device "auto" | "cpu" | "cuda", threads 0 = all cores (cpu), strategy a cuda
        strategy or "reference" (the single-threaded cpu reference). Returns the
        history: one dict per epoch (epoch, train_loss, seconds, images_per_second and,
        with validation_data=(X_val, y_val), val_loss and val_accuracy).
        early_stopping=P > 0 (libffnn's, as ffnn train --early-stopping P): stop once
        P epochs have passed without a lower validation loss (without validation_data:
        mean training loss) and keep the best epoch's weights; self.best_epoch is then
        {"epoch": its number, "loss": its loss} (None before training or with P = 0)."""
        if loss is not None:
            self.loss = loss
        data = _Dataset(X, y, self.n_inputs)
        val = _Dataset(validation_data[0], validation_data[1], self.n_inputs) \
            if validation_data is not None else None
        cfg = lib.ffnn_train_config_default()
        cfg.epochs = epochs
        cfg.batch_size = batch_size
        cfg.learning_rate = learning_rate
        cfg.seed = seed
        cfg.shuffle = 1 if shuffle else 0
        cfg.loss = enum_from_name("loss", self.loss)
        cfg.device = enum_from_name("device", device)
        cfg.strategy = enum_from_name("strategy", strategy)
        cfg.threads = threads
        cfg.optimizer = enum_from_name("optimizer", optimizer)
        cfg.momentum = momentum
        cfg.nesterov = 1 if nesterov else 0
        cfg.beta1, cfg.beta2, cfg.epsilon = beta1, beta2, epsilon
        cfg.early_stopping = early_stopping
        self.best_epoch = None
        trainer = ctypes.c_void_p()
        check(lib.ffnn_trainer_create(self._handle, data.handle, ctypes.byref(cfg),
                                      ctypes.byref(trainer)))
        history = []
        best, best_loss, stop = ctypes.c_int(), ctypes.c_double(), ctypes.c_int()
        try:
            if val is not None:  # evaluated by the trainer after each epoch
                check(lib.ffnn_trainer_set_validation(trainer, val.handle))
            for _ in range(epochs):
                stats = _lib.EpochStats()
                check(lib.ffnn_trainer_run_epoch(trainer, None, None, ctypes.byref(stats)))
                row = {"epoch": stats.epoch, "train_loss": stats.train_loss,
                       "seconds": stats.seconds, "images_per_second": stats.images_per_second}
                if val is not None:
                    row["val_loss"], row["val_accuracy"] = stats.val_loss, stats.val_accuracy
                history.append(row)
                if verbose:
                    print("  ".join("%s %s" % (k, ("%.4g" % v) if isinstance(v, float) else v)
                                    for k, v in row.items()), flush=True)
                check(lib.ffnn_trainer_early_stopping(trainer, ctypes.byref(best),
                                                      ctypes.byref(best_loss),
                                                      ctypes.byref(stop)))
                if stop.value:
                    break
            check(lib.ffnn_trainer_sync_model(trainer))
            if early_stopping and best.value > 0:  # the best epoch's weights, kept
                check(lib.ffnn_trainer_restore_best(trainer))
                self.best_epoch = {"epoch": best.value, "loss": best_loss.value}
                if verbose:
                    print("early stopping: restored epoch %d (loss %.6g)"
                          % (best.value, best_loss.value), flush=True)
        finally:
            lib.ffnn_trainer_free(trainer)
        return history

    # ------------------------------------------------------------ inference
    def _predict(self, X):
        X = _features(X, self.n_inputs)
        n = X.shape[0]
        p = np.empty((n, self.n_outputs), dtype=np.float32)
        cls = np.empty(n, dtype=np.intc)
        check(lib.ffnn_model_predict(self._handle, enum_from_name("loss", self.loss),
                                     _ptr(X, ctypes.c_float), n, _ptr(p, ctypes.c_float),
                                     _ptr(cls, ctypes.c_int)))
        return p, cls

    def predict(self, X):
        """The outputs for X [samples, inputs] -> [samples, outputs] float32, as the
        loss reads them: softmax probabilities (ce), sigmoid probabilities (bce), raw
        outputs (mse)."""
        return self._predict(X)[0]

    def predict_classes(self, X):
        """The predicted class of each row: the argmax of the outputs, or for one
        output 1 when it is above 0 (ce/bce logits) or 0.5 (mse), else 0."""
        return self._predict(X)[1].astype(np.int64)

    def evaluate(self, X, y, batch_size=1024):
        """{"loss": mean per-sample loss, "accuracy": fraction right, "confusion":
        [classes, classes] counts (rows: true class)} of the model on X, y."""
        data = _Dataset(X, y, self.n_inputs)
        classes = lib.ffnn_model_class_count(self._handle)
        confusion = np.zeros((classes, classes), dtype=np.uint64)
        loss = ctypes.c_double()
        check(lib.ffnn_model_evaluate(self._handle, enum_from_name("loss", self.loss),
                                      data.handle, batch_size, ctypes.byref(loss),
                                      _ptr(confusion, ctypes.c_uint64)))
        total = confusion.sum()
        return {"loss": loss.value,
                "accuracy": float(np.trace(confusion)) / float(total) if total else 0.0,
                "confusion": confusion}

    # ------------------------------------------------------------ files
    def save(self, path):
        """Write the model (safetensors, atomically: an existing file stays as it was
        if anything fails)."""
        check(lib.ffnn_model_save(self._handle, str(path).encode(),
                                  enum_from_name("loss", self.loss)))

    @classmethod
    def load(cls, path):
        """Read a model file written by save() or ffnn train --save."""
        handle = ctypes.c_void_p()
        info = _lib.ModelFileInfo()
        check(lib.ffnn_model_load(str(path).encode(), ctypes.byref(handle), ctypes.byref(info)))
        return cls._adopt(handle, lib.ffnn_loss_name(info.loss).decode())


def load(path):
    """ffnn.load(path): Model.load(path)."""
    return Model.load(path)


def train(X, y, arch=None, loss=None, optimizer="sgd", epochs=10, batch_size=64,
          learning_rate=0.01, device="auto", seed=1, **options):
    """Build and train a model on X, y; returns it (its .history: the per-epoch
    dicts). arch defaults to FEATURES-256relu-CLASSES (FEATURES-256relu-TARGETS for
    float targets); loss to "ce" for class labels, "mse" for float targets. The
    other options are those of Model.train."""
    X = _features(X)
    y_arr = np.asarray(y)
    labels = y_arr.dtype.kind in "iub"
    if loss is None:
        loss = "ce" if labels else "mse"
    if arch is None:
        width = (max(int(y_arr.max()) + 1, 2) if labels
                 else (1 if y_arr.ndim == 1 else y_arr.shape[1]))
        arch = "%d-256relu-%d" % (X.shape[1], width)
    model = Model(arch, loss=loss, seed=seed)
    model.history = model.train(X, y_arr, optimizer=optimizer, epochs=epochs,
                                batch_size=batch_size, learning_rate=learning_rate,
                                device=device, seed=seed, **options)
    return model
