"""_table.py - pandas DataFrames with text categories and missing cells as ffnn tables.

The encoding is libffnn's, the one ``ffnn train`` applies to a CSV file
(include/ffnn.h "table encoding", docs/TABLES.md): a numeric column's missing cells
filled with the training rows' median plus a 0/1 "was missing" input, a categorical
column one-hot encoded with the training rows' levels (sorted) plus the level
"missing", an unseen level an all-zero row. This module only hands a frame's
columns to the library (ffnn_dataset_from_columns: numbers, or the ids and texts of
a column's levels, NaN for a missing cell) and reads the encoded rows back; the
fitted encoding lives in the model (ffnn_model_set_table), so model files and
pickles keep it and the CLI and Python read each other's.

Which column is categorical, as the CSV reader decides: one of object (holding
anything but numbers), string, category or bool dtype, or named in ``categorical``.
A cell is missing when pandas says so (NaN, None, pd.NA, NaT) or, in a text column,
when it is blank or one of ``na_values`` (the CLI's --na-values, default
``NA,N/A,NaN,nan,null,NULL,None``). A category's text is ``str(value)``, an
integral number written as an integer (3.0 -> "3", as a CSV file of integer codes).
"""
from __future__ import annotations

import ctypes
import numbers
import os
import sys
import warnings
from typing import List, Optional, Sequence

import numpy as np

from ._lib import lib, check, FfnnValueError

__all__ = ["TableOptions", "Table", "is_frame", "uses_table", "fit_encode", "encode"]

DEFAULT_NA = ("NA", "N/A", "NaN", "nan", "null", "NULL", "None")
NUMERIC, CATEGORICAL = 0, 1  # ffnn_table_kind

_p, _pp, _size = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t
_PROTOTYPES = {
    "ffnn_dataset_from_columns": (ctypes.c_int, [_size, _size, ctypes.POINTER(ctypes.c_float),
                                                 ctypes.POINTER(ctypes.c_char_p),
                                                 ctypes.POINTER(ctypes.c_int),
                                                 ctypes.POINTER(_size),
                                                 ctypes.POINTER(ctypes.c_char_p), _pp]),
    "ffnn_table_fit": (ctypes.c_int, [_p, _pp]),
    "ffnn_table_fit_embedding": (ctypes.c_int, [_p, _size, ctypes.POINTER(_size), _pp]),
    "ffnn_table_embedding_dim": (_size, [_p, _size]),
    "ffnn_table_embedding_arch": (_size, [_p, ctypes.c_char_p, _size]),
    "ffnn_table_encode": (ctypes.c_int, [_p, _p, ctypes.POINTER(_size), _pp]),
    "ffnn_table_free": (None, [_p]),
    "ffnn_dataset_table": (_p, [_p]),
    "ffnn_dataset_float_features": (ctypes.POINTER(ctypes.c_float), [_p]),
    "ffnn_table_width": (_size, [_p]),
    "ffnn_table_column_count": (_size, [_p]),
    "ffnn_table_column_name": (ctypes.c_char_p, [_p, _size]),
    "ffnn_table_column_kind": (ctypes.c_int, [_p, _size]),
    "ffnn_table_level_count": (_size, [_p, _size]),
    "ffnn_table_level": (ctypes.c_char_p, [_p, _size, _size]),
    "ffnn_table_missing": (_size, [_p, _size]),
    "ffnn_table_median": (ctypes.c_float, [_p, _size]),
    "ffnn_table_indicator": (ctypes.c_int, [_p, _size]),
    "ffnn_model_table": (ctypes.c_int, [_p, _pp]),
    "ffnn_model_set_table": (ctypes.c_int, [_p, _p]),
}
for _name, (_res, _args) in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args


class TableOptions:
    """The CLI's table options with Python names (checked here).

    categorical : list of column names (or one name), default None
        Numeric columns read as categories (integer codes): --categorical.
    ignore : list of column names (or one name), default None
        Columns dropped (ids, dates, free text): --ignore.
    na_values : list of str, default None
        The texts of a missing text cell besides a blank one (None: the CLI's
        default list; [] only blank cells): --na-values.
    missing : {"impute", "error"}, default "impute"
        "error" refuses a frame with a missing cell: --missing.
    unknown_category : {"ignore", "error"}, default "ignore"
        At prediction, a level the training rows lacked: an all-zero one-hot and a
        warning, or a ValueError: --unknown-category.
    max_one_hot : int, default 32
        Categorical columns with more levels get a learned embedding: --max-one-hot.
    embedding_dim : dict of column name to int, default None
        Those columns' embedding dimensions (and columns embedded whatever their
        level count): --embedding-dim.
    """

    def __init__(self, categorical=None, ignore=None, na_values=None, missing="impute",
                 unknown_category="ignore", max_one_hot=32, embedding_dim=None):
        self.categorical = _names("categorical", categorical)
        self.ignore = _names("ignore", ignore)
        self.na_values = tuple(DEFAULT_NA if na_values is None else
                               _names("na_values", na_values))
        if missing not in ("impute", "error"):
            raise ValueError("missing must be 'impute' or 'error', found %r" % (missing,))
        if unknown_category not in ("ignore", "error"):
            raise ValueError("unknown_category must be 'ignore' or 'error', found %r"
                             % (unknown_category,))
        self.missing = missing
        self.unknown_category = unknown_category
        if not isinstance(max_one_hot, numbers.Integral) or max_one_hot < 0:
            raise ValueError("max_one_hot must be an integer >= 0, found %r" % (max_one_hot,))
        dims = dict(embedding_dim or {})
        for name, d in dims.items():
            if not isinstance(d, numbers.Integral) or not 1 <= d <= 1 << 24:
                raise ValueError("embedding_dim[%r] must be an integer in [1, 2^24], found %r"
                                 % (name, d))
        self.max_one_hot = int(max_one_hot)
        self.embedding_dim = {str(k): int(v) for k, v in dims.items()}

    def any_columns(self):
        return bool(self.categorical or self.ignore)


def _names(what, value) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (str, numbers.Integral)):
        value = [value]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise ValueError("%s must be a column name or a list of them, found %r"
                         % (what, value)) from None


def is_frame(X) -> bool:
    """X is a pandas DataFrame (pandas is not imported for a numpy array)."""
    return type(X).__module__.split(".")[0] == "pandas" and hasattr(X, "columns") and \
        hasattr(X, "iloc")


def object_text_error(X, error) -> ValueError:
    """The error for numbers that are not numbers: X holding text (a numpy object
    array, or a frame that reached the numeric path) names the way out."""
    if isinstance(X, np.ndarray) and X.dtype == object:
        return ValueError("X is a numpy array of dtype object that holds text (%s): ffnn "
                          "one-hot encodes text columns of a pandas DataFrame - pass "
                          "pandas.DataFrame(X, columns=[...]) - or convert the text to "
                          "numbers" % error)
    return ValueError("X holds values that are not numbers (%s): pass a pandas DataFrame to "
                      "one-hot encode its text columns, or convert them" % error)


def _is_text_column(series) -> bool:
    import pandas as pd
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype) or \
            pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        return True
    if pd.api.types.is_object_dtype(dtype):  # numbers held as objects stay numbers
        kind = pd.api.types.infer_dtype(series, skipna=True)
        return kind not in ("integer", "floating", "mixed-integer-float", "decimal", "empty")
    return not (pd.api.types.is_numeric_dtype(dtype))


def uses_table(X, options: TableOptions) -> bool:
    """X goes through the table encoding: a DataFrame with a text column, a missing
    cell, or options naming columns. A DataFrame of numbers without missing cells
    (and numpy arrays) stay on the numeric path."""
    if not is_frame(X):
        return False
    if options.any_columns():
        return True
    return any(_is_text_column(X.iloc[:, j]) for j in range(X.shape[1])) or \
        bool(X.isna().to_numpy().any())


def _text(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _levels(series, options: TableOptions, name: str):
    """A categorical column as float32 level ids [n] (NaN: missing) and its level
    texts (in order of first appearance)."""
    import pandas as pd
    cells = series.to_numpy(dtype=object)
    missing = np.asarray(pd.isna(cells), dtype=bool)
    present = np.flatnonzero(~missing)
    texts = [v if type(v) is str else _text(v) for v in cells[present]]
    texts = np.array(texts, dtype=object)
    if len(texts):
        stripped = pd.Series(texts, dtype=object).str.strip(" \t")
        na = ((stripped == "") | stripped.isin(list(options.na_values))).to_numpy()
        missing[present[na]] = True
        present, texts = present[~na], texts[~na]
    codes, uniques = pd.factorize(texts) if len(texts) else (np.zeros(0, int), [])
    ids = np.full(len(cells), np.nan, dtype=np.float32)
    ids[present] = codes
    levels = [str(u) for u in uniques]
    for level in levels:
        if "\0" in level:
            raise ValueError("column %r: the category %r holds a NUL character" % (name, level))
    return ids, levels


def _numbers(series, name: str, options: TableOptions):
    """A numeric column as float32 [n] (NaN: missing)."""
    import pandas as pd
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=np.float64, na_value=np.nan).astype(np.float32)
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & ~np.asarray(pd.isna(series), dtype=bool)
    if bad.any():  # texts: missing when blank or one of na_values, else refused
        row = np.flatnonzero(bad)
        texts = series.iloc[row].astype(str).str.strip(" \t")
        wrong = ~((texts == "") | texts.isin(list(options.na_values))).to_numpy()
        if wrong.any():
            r = int(row[np.flatnonzero(wrong)[0]])
            raise ValueError("column %r, row %d: expected a number (the column is numeric in "
                             "the model), found %r" % (name, r, series.iloc[r]))
    return values.astype(np.float32)


class Table:
    """A fitted table encoding (an ffnn_table, owned): the model's columns."""

    def __init__(self, handle):
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.ffnn_table_free(self._handle)
            self._handle = None

    @property
    def width(self) -> int:
        """Inputs of an encoded row."""
        return lib.ffnn_table_width(self._handle)

    @property
    def columns(self) -> List[str]:
        """The feature columns' names, in the model's order."""
        return [lib.ffnn_table_column_name(self._handle, i).decode("utf-8")
                for i in range(lib.ffnn_table_column_count(self._handle))]

    def kind(self, i: int) -> int:
        return lib.ffnn_table_column_kind(self._handle, i)

    def levels(self, i: int) -> List[str]:
        """Column i's one-hot levels (sorted; [] for a numeric column)."""
        return [lib.ffnn_table_level(self._handle, i, k).decode("utf-8")
                for k in range(lib.ffnn_table_level_count(self._handle, i))]

    @property
    def embedding_arch(self) -> str:
        """The embedding layer its codes need ("embed100x21_..."), or ""."""
        n = lib.ffnn_table_embedding_arch(self._handle, None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        lib.ffnn_table_embedding_arch(self._handle, buf, n + 1)
        return buf.value.decode("ascii")

    def describe(self) -> List[dict]:
        """One dict per column: name, kind ("numeric": median, indicator;
        "categorical": levels, and embedding: its dimension when embedded)."""
        out = []
        for i, name in enumerate(self.columns):
            if self.kind(i) == CATEGORICAL:
                out.append({"name": name, "kind": "categorical", "levels": self.levels(i)})
                d = lib.ffnn_table_embedding_dim(self._handle, i)
                if d:
                    out[-1]["embedding"] = d
            else:
                out.append({"name": name, "kind": "numeric",
                            "median": float(lib.ffnn_table_median(self._handle, i)),
                            "indicator": bool(lib.ffnn_table_indicator(self._handle, i))})
        return out


def model_table(model_handle) -> Optional[Table]:
    """A copy of the model's encoding, or None."""
    t = ctypes.c_void_p()
    check(lib.ffnn_model_table(model_handle, ctypes.byref(t)))
    return Table(t) if t.value else None


def set_model_table(model_handle, table: Optional[Table]) -> None:
    check(lib.ffnn_model_set_table(model_handle, table._handle if table is not None else None))


class _Raw:
    """A raw table data set (ffnn_dataset_from_columns), owned."""

    def __init__(self, names: Sequence[str], kinds, columns, levels):
        n, k = len(columns[0]), len(columns)
        self.rows = n
        x = np.empty((n, k), dtype=np.float32)
        for j, c in enumerate(columns):
            x[:, j] = c
        flat = [t.encode("utf-8") for lv in levels for t in lv]
        self.handle = ctypes.c_void_p()
        check(lib.ffnn_dataset_from_columns(
            n, k, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            (ctypes.c_char_p * k)(*[s.encode("utf-8") for s in names]),
            (ctypes.c_int * k)(*kinds), (ctypes.c_size_t * k)(*[len(lv) for lv in levels]),
            (ctypes.c_char_p * max(len(flat), 1))(*flat), ctypes.byref(self.handle)))

    def __del__(self):
        if getattr(self, "handle", None):
            lib.ffnn_dataset_free(self.handle)
            self.handle = None


def _columns(X, names, kinds, options: TableOptions, what: str):
    """The raw table of X's columns names (found by name) of kinds."""
    values, levels = [], []
    where = {str(c): j for j, c in enumerate(X.columns)}
    for name, kind in zip(names, kinds):
        series = X.iloc[:, where[name]]
        if kind == CATEGORICAL:
            ids, lv = _levels(series, options, name)
        else:
            ids, lv = _numbers(series, name, options), []
        if options.missing == "error" and np.isnan(ids).any():
            row = int(np.flatnonzero(np.isnan(ids))[0])
            raise ValueError("%s: column %r, row %d: a missing cell (missing='error' refuses "
                             "them; missing='impute' fills them as ffnn train does)"
                             % (what, name, row))
        values.append(ids)
        levels.append(lv)
    return _Raw(names, kinds, values, levels), levels


def _check_frame(X, what):
    if X.shape[0] == 0:
        raise ValueError("%s has no rows" % what)
    names = [str(c) for c in X.columns]
    if len(set(names)) != len(names):
        raise ValueError("%s: column names repeat (%r): each column needs its own name"
                         % (what, sorted({n for n in names if names.count(n) > 1})))
    return names


def _encoded(table: Table, raw: _Raw):
    """(raw encoded by table: float32 [rows, width], cells of unseen levels)."""
    out = ctypes.c_void_p()
    unseen = ctypes.c_size_t()
    check(lib.ffnn_table_encode(table._handle, raw.handle, ctypes.byref(unseen),
                                ctypes.byref(out)))
    try:
        ptr = lib.ffnn_dataset_float_features(out)
        X = np.ctypeslib.as_array(ptr, (raw.rows, table.width)).copy()
    finally:
        lib.ffnn_dataset_free(out)
    return X, unseen.value


def fit_encode(X, options: TableOptions, what: str = "X"):
    """Fit the encoding on the frame X: (Table, encoded float32 [n, width])."""
    names = _check_frame(X, what)
    for option in ("categorical", "ignore"):
        unknown = [c for c in getattr(options, option) if c not in names]
        if unknown:
            raise ValueError("%s=%r: %s has no column %s (its columns: %s)"
                             % (option, getattr(options, option), what,
                                ", ".join(map(repr, unknown)), ", ".join(names)))
    clash = set(options.categorical) & set(options.ignore)
    if clash:
        raise ValueError("columns both categorical and ignored: %s" % ", ".join(sorted(clash)))
    keep = [n for n in names if n not in options.ignore]
    if not keep:
        raise ValueError("%s: every column is ignored (ignore=%r)" % (what, options.ignore))
    kinds = [CATEGORICAL if n in options.categorical or
             _is_text_column(X.iloc[:, names.index(n)]) else NUMERIC for n in keep]
    raw, _ = _columns(X, keep, kinds, options, what)
    unknown = [c for c in options.embedding_dim if c not in keep]
    if unknown:
        raise ValueError("embedding_dim=%r: %s has no feature column %s"
                         % (options.embedding_dim, what, ", ".join(map(repr, unknown))))
    dims = (ctypes.c_size_t * len(keep))()
    for i, name in enumerate(keep):
        if name in options.embedding_dim:
            if kinds[i] != CATEGORICAL:
                raise ValueError("embedding_dim: column %r is numeric (only categorical "
                                 "columns are embedded: categorical=[...])" % name)
            dims[i] = options.embedding_dim[name]
    t = ctypes.c_void_p()
    try:
        check(lib.ffnn_table_fit_embedding(raw.handle, options.max_one_hot, dims,
                                           ctypes.byref(t)))
    except FfnnValueError as e:  # in the module's terms
        raise FfnnValueError(str(e).replace("--ignore", "ignore=[...]"), e.status) from None
    table = Table(t)
    return table, _encoded(table, raw)[0]


def _caller_level() -> int:
    """warnings.warn's stacklevel of the first caller outside this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    return level


def encode(table: Table, X, options: TableOptions, what: str = "X") -> np.ndarray:
    """The frame X encoded by the fitted table: float32 [n, width]. The model's
    columns are found by name (extra columns are left out, as ffnn predict does); a
    level the training rows lacked is an all-zero one-hot, with a warning (or a
    ValueError with unknown_category='error')."""
    names = _check_frame(X, what)
    want = table.columns
    absent = [c for c in want if c not in names]
    if absent:
        raise ValueError("%s lacks the model's column%s %s (the model's columns: %s)"
                         % (what, "s" if len(absent) > 1 else "", ", ".join(map(repr, absent)),
                            ", ".join(want)))
    kinds = [table.kind(i) for i in range(len(want))]
    raw, raw_levels = _columns(X, want, kinds, options, what)
    out, unseen = _encoded(table, raw)
    if unseen:
        news = []
        for i, lv in enumerate(raw_levels):
            known = set(table.levels(i))
            news += ["%s: %r" % (want[i], v) for v in lv if v not in known]
        detail = " (%s%s)" % (", ".join(news[:5]), ", ..." if len(news) > 5 else "") \
            if news else " (missing cells of a column that had none in training)"
        if options.unknown_category == "error":
            raise ValueError("%s: %d cell%s of a category the model was not trained on%s; "
                             "unknown_category='ignore' encodes them as all zeros"
                             % (what, unseen, "" if unseen == 1 else "s", detail))
        warnings.warn("%s: %d cell%s of a category the model was not trained on%s: encoded "
                      "as all zeros (unknown_category='error' refuses them)"
                      % (what, unseen, "" if unseen == 1 else "s", detail), UserWarning,
                      stacklevel=_caller_level())
    return out
