"""_lib.py - libffnn.so through ctypes: finding and loading the library, the C
declarations of the functions the module calls (include/ffnn.h documents them), the
mirrors of the structs it passes, and the one error check (status -> FfnnError with
ffnn_last_error()'s message).

The library is looked for, in this order: $FFNN_LIBRARY (a path); libffnn.so.MAJOR
next to this file; the build tree of a source checkout (python/ffnn/ ->
build/libffnn.so.MAJOR); the system's loader (make install, then ldconfig).
"""
import ctypes
import os

__all__ = ["lib", "path", "FfnnError", "check", "TrainConfig", "EpochStats", "ModelFileInfo",
           "SweepState", "train_options"]

MAJOR = 0  # the soname's number this module speaks to (FFNN_VERSION_MAJOR)
_SONAME = "libffnn.so.%d" % MAJOR


class FfnnError(RuntimeError):
    """An error reported by libffnn: .status is its ffnn_status name (e.g. "parse
    error"), str(e) the library's message."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class FfnnValueError(FfnnError, ValueError):
    """An invalid argument or a malformed string (FFNN_ERR_INVALID_ARGUMENT/PARSE)."""


class FfnnIOError(FfnnError, OSError):
    """A file that cannot be read or written, or whose contents are malformed."""


def _candidates():
    env = os.environ.get("FFNN_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, _SONAME),
            os.path.join(here, "..", "..", "build", _SONAME),
            _SONAME]


def _load():
    errors = []
    for candidate in _candidates():
        if os.sep in candidate and not os.path.exists(candidate):
            errors.append(candidate + ": not found")
            continue
        try:
            return ctypes.CDLL(candidate), candidate
        except OSError as e:
            errors.append(str(e))
    raise ImportError("ffnn: cannot load libffnn (%s). Build it (make), install it "
                      "(make install), or set FFNN_LIBRARY to its path."
                      % "; ".join(errors))


lib, path = _load()

_status_names = {}


def check(status):
    """Raise the library's error for a non-zero ffnn_status."""
    if status == 0:
        return
    message = lib.ffnn_last_error().decode("utf-8", "replace")
    name = lib.ffnn_status_name(status).decode()
    if status in (1, 2):  # FFNN_ERR_INVALID_ARGUMENT, FFNN_ERR_PARSE
        raise FfnnValueError(message, name)
    if status in (3, 4):  # FFNN_ERR_IO, FFNN_ERR_FORMAT
        raise FfnnIOError(message, name)
    raise FfnnError(message, name)


class ConfigLimit(ctypes.Structure):
    """ffnn_config_limit, field for field."""
    _fields_ = [("field", ctypes.c_char_p), ("min", ctypes.c_double), ("max", ctypes.c_double),
                ("min_open", ctypes.c_int), ("max_open", ctypes.c_int)]


class TrainOption(ctypes.Structure):
    """ffnn_train_option (include/ffnn.h): one row of the library's option table."""
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("offset", ctypes.c_size_t),
                ("size", ctypes.c_size_t), ("count_name", ctypes.c_char_p),
                ("count_offset", ctypes.c_size_t), ("hidden", ctypes.c_int),
                ("default_value", ctypes.c_double), ("limit", ConfigLimit),
                ("checkpoint_key", ctypes.c_char_p), ("checkpoint", ctypes.c_int),
                ("resume_match", ctypes.c_int), ("cli", ctypes.c_char_p),
                ("help", ctypes.c_char_p)]


lib.ffnn_struct_size.restype = ctypes.c_size_t
lib.ffnn_struct_size.argtypes = [ctypes.c_char_p]
lib.ffnn_train_option_count.restype = ctypes.c_size_t
lib.ffnn_train_option_count.argtypes = []
lib.ffnn_train_option_at.restype = ctypes.POINTER(TrainOption)
lib.ffnn_train_option_at.argtypes = [ctypes.c_size_t]

# ffnn_option_type -> the ctypes type of one value
_OPTION_CTYPES = {0: ctypes.c_int, 1: ctypes.c_size_t, 2: ctypes.c_uint64, 3: ctypes.c_float,
                  4: ctypes.c_int, 5: ctypes.c_int}


def train_options():
    """The library's option table (ffnn_train_option_at), as TrainOption rows."""
    if lib.ffnn_struct_size(b"ffnn_train_option") != ctypes.sizeof(TrainOption):
        raise ImportError("ffnn: %s's ffnn_train_option has %d bytes, this module's mirror %d"
                          % (path, lib.ffnn_struct_size(b"ffnn_train_option"),
                             ctypes.sizeof(TrainOption)))
    return [lib.ffnn_train_option_at(i).contents for i in range(lib.ffnn_train_option_count())]


def _config_fields():
    """ffnn_train_config's fields, built from the library's option table: each public
    option at its offset (an INT_LIST with its count), padding where the C layout has
    a gap, and the reserved tail (the options reached only by name)."""
    placed = []
    for o in train_options():
        if o.hidden:
            continue
        if o.type == 6:  # FFNN_OPTION_INT_LIST: int [n] and its int count
            placed.append((o.offset, o.name.decode(), ctypes.c_int * (o.size // 4)))
            placed.append((o.count_offset, o.count_name.decode(), ctypes.c_int))
        else:
            placed.append((o.offset, o.name.decode(), _OPTION_CTYPES[o.type]))
    fields, end = [], 0
    for offset, name, ctype in sorted(placed):
        if offset > end:
            fields.append(("_pad_%d" % end, ctypes.c_char * (offset - end)))
        fields.append((name, ctype))
        end = offset + ctypes.sizeof(ctype)
    size = lib.ffnn_struct_size(b"ffnn_train_config")
    if size > end:
        fields.append(("_reserved", ctypes.c_char * (size - end)))
    return placed, fields


_placed, _fields = _config_fields()


class TrainConfig(ctypes.Structure):
    """ffnn_train_config (include/ffnn.h), field for field, built at import from the
    library's option table (ffnn_train_option_at: name, type, offset); the options kept
    in its reserved bytes (the cuda launch knobs) are set by name, set_option."""
    _fields_ = _fields

    def set_option(self, name, value):
        """ffnn_train_config_set: any option by name, value as text (e.g. "128")."""
        check(lib.ffnn_train_config_set(ctypes.byref(self), name.encode(), str(value).encode()))


for _offset, _name, _ctype in _placed:
    if getattr(TrainConfig, _name).offset != _offset:
        raise ImportError("ffnn: TrainConfig.%s at offset %d, the library's at %d"
                          % (_name, getattr(TrainConfig, _name).offset, _offset))


class EpochStats(ctypes.Structure):
    """ffnn_epoch_stats, field for field."""
    _fields_ = [("epoch", ctypes.c_int), ("train_loss", ctypes.c_double),
                ("seconds", ctypes.c_double), ("images_per_second", ctypes.c_double),
                ("val_loss", ctypes.c_double), ("val_accuracy", ctypes.c_double),
                ("learning_rate", ctypes.c_double)]


class SweepState(ctypes.Structure):
    """ffnn_sweep_state, field for field."""
    _fields_ = [("epochs_run", ctypes.c_int), ("training", ctypes.c_int),
                ("best_epoch", ctypes.c_int), ("best_loss", ctypes.c_double),
                ("last", EpochStats)]


class ModelFileInfo(ctypes.Structure):
    """ffnn_model_file_info, field for field."""
    _fields_ = [("loss", ctypes.c_int), ("ffnn_version", ctypes.c_char * 64),
                ("interrupted", ctypes.c_char * 128)]


_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_int = ctypes.c_int
_size = ctypes.c_size_t
_str = ctypes.c_char_p
_pint = ctypes.POINTER(ctypes.c_int)
_pf = ctypes.POINTER(ctypes.c_float)
_pd = ctypes.POINTER(ctypes.c_double)
_pi32 = ctypes.POINTER(ctypes.c_int32)
_pu64 = ctypes.POINTER(ctypes.c_uint64)
# ffnn_step_fn: int (*)(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
STEP_FN = ctypes.CFUNCTYPE(ctypes.c_int, _p, _p, ctypes.c_int, ctypes.c_size_t,
                           ctypes.c_size_t)

# name: (result type, argument types)
_functions = {
    "ffnn_last_error": (_str, []),
    "ffnn_status_name": (_str, [_int]),
    "ffnn_version": (_str, [_pint, _pint, _pint]),
    "ffnn_has_cuda": (_int, []),
    "ffnn_cuda_device_count": (_int, []),
    "ffnn_loss_from_name": (_int, [_str, _pint]),
    "ffnn_device_from_name": (_int, [_str, _pint]),
    "ffnn_strategy_from_name": (_int, [_str, _pint]),
    "ffnn_optimizer_from_name": (_int, [_str, _pint]),
    "ffnn_precision_from_name": (_int, [_str, _pint]),
    "ffnn_loss_name": (_str, [_int]),
    "ffnn_device_name": (_str, [_int]),
    "ffnn_strategy_name": (_str, [_int]),
    "ffnn_dataset_from_arrays": (_int, [_size, _size, _pf, _pi32, _size, _pf, _pp]),
    "ffnn_dataset_free": (None, [_p]),
    "ffnn_model_create": (_int, [_str, _pp]),
    "ffnn_model_free": (None, [_p]),
    "ffnn_model_init": (_int, [_p, ctypes.c_uint64]),
    "ffnn_model_layer_count": (_int, [_p]),
    "ffnn_model_input_size": (_size, [_p]),
    "ffnn_model_output_size": (_size, [_p]),
    "ffnn_model_parameter_count": (_size, [_p]),
    "ffnn_model_class_count": (_int, [_p]),
    "ffnn_model_arch_string": (_size, [_p, ctypes.c_char_p, _size]),
    "ffnn_model_layer": (_int, [_p, _int, ctypes.POINTER(_size), ctypes.POINTER(_size),
                                _pint, _pint]),
    "ffnn_model_layer_kind": (_int, [_p, _int, _pint, ctypes.POINTER(_size), _pint]),
    "ffnn_model_embedding": (_int, [_p, _int, ctypes.POINTER(_size), ctypes.POINTER(_size),
                                    ctypes.POINTER(_size), _size]),
    "ffnn_model_weight": (_pf, [_p, _int]),
    "ffnn_model_bias": (_pf, [_p, _int]),
    "ffnn_model_parameters": (_pf, [_p]),
    "ffnn_model_save": (_int, [_p, _str]),
    "ffnn_model_set_loss": (_int, [_p, _int]),
    "ffnn_model_load": (_int, [_str, _pp, ctypes.POINTER(ModelFileInfo)]),
    "ffnn_model_predict": (_int, [_p, _pf, _size, _pf, _pint]),
    "ffnn_model_evaluate": (_int, [_p, _p, _size, _pd, _pu64]),
    "ffnn_train_config_default": (TrainConfig, []),
    "ffnn_train_config_set": (_int, [ctypes.POINTER(TrainConfig), _str, _str]),
    "ffnn_struct_size": (_size, [_str]),
    "ffnn_trainer_create": (_int, [_p, _p, ctypes.POINTER(TrainConfig), _pp]),
    "ffnn_trainer_free": (None, [_p]),
    "ffnn_trainer_device": (_int, [_p]),
    "ffnn_trainer_strategy": (_int, [_p]),
    "ffnn_trainer_strategy_note": (_str, [_p]),
    "ffnn_trainer_threads": (_int, [_p]),
    "ffnn_trainer_run_epoch": (_int, [_p, _p, _p, ctypes.POINTER(EpochStats)]),
    "ffnn_trainer_evaluate": (_int, [_p, _p, _pd, _pd]),
    "ffnn_trainer_sync_model": (_int, [_p]),
    "ffnn_trainer_set_validation": (_int, [_p, _p]),
    "ffnn_trainer_early_stopping": (_int, [_p, ctypes.POINTER(ctypes.c_int), _pd,
                                           ctypes.POINTER(ctypes.c_int)]),
    "ffnn_trainer_restore_best": (_int, [_p]),
    "ffnn_lr_schedule_from_name": (_int, [_str, _pint]),
    "ffnn_model_set_class_names": (_int, [_p, ctypes.POINTER(_str), _int]),
    "ffnn_model_class_name": (_str, [_p, _int]),
    "ffnn_model_set_standardization": (_int, [_p, _pf, _pf, _pf, _pf]),
    "ffnn_model_standardization": (_int, [_p, ctypes.POINTER(_pf), ctypes.POINTER(_pf),
                                          ctypes.POINTER(_pf), ctypes.POINTER(_pf)]),
    "ffnn_model_fit_standardization": (_int, [_p, _p, _int]),
    "ffnn_dataset_standardize": (_int, [_p, _p, _pp]),
    "ffnn_trainer_run_epoch_until": (_int, [_p, STEP_FN, _p, ctypes.POINTER(EpochStats),
                                            _pint]),
    "ffnn_trainer_position": (None, [_p, _pint, ctypes.POINTER(_size)]),
    "ffnn_trainer_steps_per_epoch": (_size, [_p]),
    "ffnn_sweep_create": (_int, [_pp, ctypes.POINTER(TrainConfig), _size, _pp, _pp, _int,
                                 _pp]),
    "ffnn_sweep_free": (None, [_p]),
    "ffnn_sweep_run_epoch": (_int, [_p, ctypes.POINTER(_size)]),
    "ffnn_sweep_model_state": (_int, [_p, _size, ctypes.POINTER(SweepState)]),
    "ffnn_sweep_lanes": (_int, [_p]),
    "ffnn_model_ensemble": (_int, [_pp, _int, _pp]),
    "ffnn_model_member_count": (_int, [_p]),
}
for _name, (_res, _args) in _functions.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

for _struct, _mirror in (("ffnn_train_config", TrainConfig), ("ffnn_epoch_stats", EpochStats),
                         ("ffnn_model_file_info", ModelFileInfo),
                         ("ffnn_sweep_state", SweepState)):
    if lib.ffnn_struct_size(_struct.encode()) != ctypes.sizeof(_mirror):
        raise ImportError("ffnn: %s's %s has %d bytes, this module's mirror %d: "
                          "python/ffnn/_lib.py and include/ffnn.h disagree"
                          % (path, _struct, lib.ffnn_struct_size(_struct.encode()),
                             ctypes.sizeof(_mirror)))
_major = ctypes.c_int()
lib.ffnn_version(ctypes.byref(_major), None, None)
if _major.value != MAJOR:
    raise ImportError("ffnn: %s is version %s; this module needs %d.x"
                      % (path, lib.ffnn_version(None, None, None).decode(), MAJOR))


def enum_from_name(kind, name):
    """The value of an enum name ("ce", "cuda", "adam" ...); FfnnValueError lists the
    accepted names."""
    value = ctypes.c_int()
    check(getattr(lib, "ffnn_%s_from_name" % kind)(name.encode(), ctypes.byref(value)))
    return value.value
