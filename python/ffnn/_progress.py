"""_progress.py - the step hook of one Model.train call (ffnn_trainer_run_epoch_until's
on_step): Ctrl-C and step_callback stop training after the current step, verbose
draws a progress bar within epochs and prints a line per epoch."""
import ctypes
import signal
import sys
import threading
import time

from . import _lib
from ._lib import lib

__all__ = ["StepHook"]


class StepHook:
    """One train() call's step hook: Ctrl-C (a SIGINT handler while training, in the
    main thread, when Python's default one is in place) and step_callback stop after
    the current step; verbose shows a progress bar (tqdm if installed, else one line
    on stderr redrawn at most 10 times a second) and a line per epoch."""

    def __init__(self, trainer, verbose, step_callback):
        self.trainer = trainer
        self.verbose = verbose
        self.step_callback = step_callback
        self.sigint = False
        self.error = None  # an exception of step_callback, raised after training
        self.bar = None
        self.last_draw = 0.0
        self.on_step = _lib.STEP_FN(self._on_step)  # kept alive while training
        self.previous = None

    def __enter__(self):
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        self._close_bar()
        return False

    def _on_sigint(self, signum, frame):
        self.sigint = True

    def _on_step(self, user, trainer, epoch, step, steps):
        try:
            if self.sigint:
                return 1
            if self.step_callback is not None and self.step_callback(epoch, step, steps):
                return 1
            if self.verbose:
                self._draw(epoch, step, steps)
        except BaseException as e:  # ctypes cannot carry it through C: stop, re-raise
            self.error = e
            return 1
        return 0

    def _draw(self, epoch, step, steps):
        try:
            import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            if self.bar is None:
                self.bar = tqdm.tqdm(total=steps, desc="epoch %d" % epoch, unit="step",
                                     leave=False)
            self.bar.update(step - self.bar.n)
            return
        now = time.monotonic()
        if now - self.last_draw >= 0.1 or step == steps:
            self.last_draw = now
            width = 30
            done = width * step // max(steps, 1)
            sys.stderr.write("\repoch %d [%s%s] %d/%d steps" % (epoch, "=" * done,
                                                               " " * (width - done), step,
                                                               steps))
            sys.stderr.flush()
            self.bar = True

    def _close_bar(self):
        if self.bar is True:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        elif self.bar is not None:
            self.bar.close()
        self.bar = None

    def end_epoch(self, row):
        if not self.verbose:
            return
        self._close_bar()
        parts = ["epoch %d" % row["epoch"], "train_loss %.6g" % row["train_loss"]]
        if "val_loss" in row:
            parts.append("val_loss %.6g" % row["val_loss"])
            if row["val_accuracy"] == row["val_accuracy"]:  # not NaN
                parts.append("val_accuracy %.4f" % row["val_accuracy"])
        parts.append("lr %.6g" % row["learning_rate"])
        parts.append("%.3f s" % row["seconds"])
        parts.append("{:,.0f} samples/s".format(row["images_per_second"]))
        print("  ".join(parts), file=sys.stderr, flush=True)

    def stopped_at(self):
        epoch, step = ctypes.c_int(), ctypes.c_size_t()
        lib.ffnn_trainer_position(self.trainer, ctypes.byref(epoch), ctypes.byref(step))
        return "%s at epoch %d, step %d of %d" % (
            "SIGINT" if self.sigint else "error" if self.error else "step_callback", epoch.value, step.value,
            lib.ffnn_trainer_steps_per_epoch(self.trainer))
