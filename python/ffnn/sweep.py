"""sweep.py - ffnn.sweep: many configurations of ``Model.train`` trained at once in one
process by libffnn's sweep (ffnn_sweep_*, include/ffnn.h "Sweeps"; docs/SWEEP.md), then
evaluated and ranked as ``ffnn sweep`` ranks them."""
from __future__ import annotations

import ctypes
import inspect
import itertools
import math
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _lib
from ._lib import lib, check
from .model import Model, _Dataset, _features, _train_config

# Model.train's arguments that are not part of a configuration (data, output, hooks)
_NOT_CONFIG = {"self", "X", "y", "loss", "validation_data", "verbose", "standardize",
               "callback", "step_callback", "sample_weight", "categorical", "ignore",
               "na_values", "missing", "unknown_category"}


def _config_defaults() -> Dict[str, Any]:
    """The configuration arguments of Model.train and their defaults."""
    params = inspect.signature(Model.train).parameters
    return {name: p.default for name, p in params.items() if name not in _NOT_CONFIG}


def _configurations(grid: Mapping[str, Any], allowed) -> Tuple[List[str], List[Tuple]]:
    """The grid's keys and the cartesian product of its values (the last key varies
    fastest, as ``ffnn sweep``'s axes)."""
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError("grid: expected a non-empty dict of option -> list of values, "
                         "e.g. {'learning_rate': [0.01, 0.1], 'seed': [1, 2]}")
    keys, values = [], []
    for key, v in grid.items():
        if key not in allowed:
            raise ValueError("grid: unknown option %r (expected 'arch' or one of Model.train's "
                             "options: %s)" % (key, ", ".join(sorted(allowed - {"arch"}))))
        v = list(v) if isinstance(v, (list, tuple, range, np.ndarray)) else [v]
        if not v:
            raise ValueError("grid: %r has no value" % key)
        keys.append(key)
        values.append(v)
    return keys, list(itertools.product(*values))


def _rank_key(row: Dict[str, Any], by: str) -> float:
    """The metric row is ranked by, lower better; NaN (a diverged model) ranks last."""
    v = row.get(by)
    if by == "val_accuracy" and v is not None:
        v = -v
    return v if v is not None and v == v else math.inf


def sweep(X, y, grid: Mapping[str, Any], *, arch: Optional[str] = None,
          loss: Optional[str] = None, validation_data: Optional[Tuple[Any, Any]] = None,
          rank_by: Optional[str] = None, threads: int = 0, standardize: bool = False,
          keep_models: bool = False, return_best: bool = False,
          **options: Any) -> Union[List[Dict[str, Any]], Tuple[List[Dict[str, Any]], Model]]:
    """Train every configuration of a grid at once in one process and rank them.

    Each configuration trains exactly as ``ffnn.train(X, y, ...)`` with its values
    would (on the cpu bit for bit: every model a one-thread trainer, ``threads``
    models at a time), as ``ffnn sweep`` does from the command line.

    Parameters
    ----------
    X, y : array-like
        Features [n_samples, n_features] and integer labels [n_samples] or float
        targets (then give ``loss``), as ``ffnn.train``'s.
    grid : dict
        Option -> list of values, e.g. ``{"learning_rate": [0.01, 0.1], "seed": [1, 2]}``:
        the cartesian product (the last key varies fastest) is the configurations.
        Keys: ``"arch"`` and the options of ``Model.train`` (learning_rate, seed,
        epochs, batch_size, optimizer, momentum, weight_decay, early_stopping,
        lr_schedule, ...); ``seed`` seeds both the initialisation and the data order.
    arch : str, optional
        The architecture when the grid has none (default ``FEATURES-256relu-CLASSES``).
    loss : {"ce", "bce", "mse"}, optional
        Default "ce" for integer labels; float y needs it named.
    validation_data : (X_val, y_val), optional
        Each model is validated on it after every epoch (early stopping) and ranked
        by it at the end.
    rank_by : {"val_loss", "val_accuracy", "train_loss"}, optional
        Default val_loss with validation data, else train_loss (a model stopped early
        counts with its best epoch's weights).
    threads : int, default 0
        Models trained at the same time (0: all cores).
    standardize : bool, default False
        Fit a z-score standardisation on X (and mse targets), the same for every model.
    keep_models : bool, default False
        Each result gets its trained ``"model"`` (an ``ffnn.Model``).
    return_best : bool, default False
        Return ``(results, best_model)``.
    **options
        Fixed values of Model.train's options for every configuration (e.g.
        ``epochs=20, device="cpu"``; device defaults to "cpu").

    Returns
    -------
    list of dict, best first (and the best ``ffnn.Model`` with ``return_best``)
        Per configuration: ``rank`` (1-based), ``configuration`` (1-based, grid
        order), ``settings`` (its grid values), ``arch``, ``epochs`` (run),
        ``best_epoch`` (early stopping's, else 0), ``seconds``, ``train_loss`` (last
        epoch) and, with validation data, ``val_loss`` and ``val_accuracy`` (None
        for regression) of the final model.

    Raises
    ------
    ValueError
        An unknown grid key or option, an empty list, an unknown rank_by.
    FfnnValueError
        A value the library refuses (the message names the model and the option).
    """
    defaults = _config_defaults()
    allowed = set(defaults) | {"arch"}
    unknown = set(options) - set(defaults)
    if unknown:
        raise ValueError("unknown option(s) %s (Model.train's: %s)"
                         % (", ".join(sorted(unknown)), ", ".join(sorted(defaults))))
    keys, configs = _configurations(grid, allowed)
    clash = set(keys) & (set(options) | ({"arch"} if arch is not None else set()))
    if clash:
        raise ValueError("%s given both in the grid and as a fixed value" % ", ".join(clash))
    X = _features(X)
    y = np.asarray(y)
    labels = y.dtype.kind in "iub"
    if loss is None and not labels:
        raise ValueError("y is %s, not integer labels: pass loss='mse' or loss='bce'" % y.dtype)
    loss = loss or "ce"
    if rank_by is None:
        rank_by = "val_loss" if validation_data is not None else "train_loss"
    if rank_by not in ("val_loss", "val_accuracy", "train_loss"):
        raise ValueError("rank_by: val_loss, val_accuracy or train_loss, found %r" % (rank_by,))
    if rank_by != "train_loss" and validation_data is None:
        raise ValueError("rank_by=%r needs validation_data" % rank_by)
    if arch is None:
        width = (max(int(y.max()) + 1, 2) if labels else (1 if y.ndim == 1 else y.shape[1]))
        arch = "%d-256relu-%d" % (X.shape[1], width)
    base = dict(defaults, device="cpu")
    base.update(options)
    models, settings, cfgs = [], [], []
    for values in configs:
        args = dict(base, **dict(zip(keys, values)))
        m = Model(args.pop("arch", arch), loss=loss, seed=int(args["seed"]))
        models.append(m)
        settings.append(dict(zip(keys, values)))
        cfgs.append(_train_config(loss, **args))
    data = _Dataset(X, y, models[0].n_inputs)
    val = _Dataset(validation_data[0], validation_data[1], models[0].n_inputs) \
        if validation_data is not None else None
    if standardize:  # the same statistics for every model: one standardised copy
        for m in models:
            check(lib.ffnn_model_fit_standardization(
                m._handle, data.handle, 1 if data.target_width and loss == "mse" else 0))
        data = data.standardized(models[0])
        val = val.standardized(models[0]) if val is not None else None
    n = len(models)
    handles = (ctypes.c_void_p * n)(*[m._handle.value for m in models])
    cfg_array = (_lib.TrainConfig * n)(*cfgs)
    trains = (ctypes.c_void_p * n)(*([data.handle.value] * n))
    vals = (ctypes.c_void_p * n)(*([val.handle.value] * n)) if val is not None else None
    for m in models:
        m._sync_loss()
    sw = ctypes.c_void_p()
    check(lib.ffnn_sweep_create(handles, cfg_array, n, trains, vals, threads, ctypes.byref(sw)))
    states = [_lib.SweepState() for _ in range(n)]
    seconds, epochs = [0.0] * n, [0] * n
    try:
        training = ctypes.c_size_t(n)
        while training.value:
            check(lib.ffnn_sweep_run_epoch(sw, ctypes.byref(training)))
            for i, s in enumerate(states):
                check(lib.ffnn_sweep_model_state(sw, i, ctypes.byref(s)))
                if s.epochs_run > epochs[i]:  # it ran this epoch
                    seconds[i] += s.last.seconds
                    epochs[i] = s.epochs_run
    finally:
        lib.ffnn_sweep_free(sw)  # each model keeps its weights (the best epoch's if stopped)
    results = []
    for i, (m, s) in enumerate(zip(models, states)):
        row = {"configuration": i + 1, "settings": settings[i], "arch": m.arch,
               "epochs": s.epochs_run, "best_epoch": s.best_epoch, "seconds": seconds[i],
               "train_loss": s.last.train_loss}
        if validation_data is not None:
            ev = m.evaluate(validation_data[0], validation_data[1])
            row["val_loss"] = ev["loss"]
            row["val_accuracy"] = ev["accuracy"] if labels else None
        if keep_models or return_best:
            row["model"] = m
        results.append(row)
    results.sort(key=lambda r: (_rank_key(r, rank_by), r["configuration"]))
    results = [dict({"rank": rank}, **row) for rank, row in enumerate(results, 1)]
    best = results[0].get("model")
    if not keep_models:
        for row in results:
            row.pop("model", None)
    return (results, best) if return_best else results


__all__ = ["sweep"]
