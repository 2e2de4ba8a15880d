"""plot_common.py - what the plot scripts of bench/ share (imported by plot_*.py beside it):

- pyplot(): matplotlib's pyplot with the Agg backend, or one line naming the package to
  install when matplotlib is missing (exit status 1);
- paths(): the CSV and PNG of a suite: build/bench/SUITE.csv by default (what
  `ffnn bench SUITE` writes), the PNG beside the CSV; never a tracked file unless named;
- Panel and figure(): a figure of only the panels that have data; one line at the
  bottom says which panels were not drawn and why (the status of their rows, e.g.
  "skipped: --no-gpu"); titles wrapped to the panel's width;
- save(): the PNG kept under 200 KB (the dpi drops until it fits).
"""
import collections
import csv
import math
import os
import sys
import textwrap

MAX_BYTES = 200 * 1024


def pyplot():
    """matplotlib.pyplot on the Agg backend; exits with one line when it is missing."""
    try:
        import matplotlib
    except ImportError:
        sys.exit(f"{os.path.basename(sys.argv[0])}: matplotlib is missing: install "
                 "python3-matplotlib (Debian/Ubuntu) or run 'pip install matplotlib'")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def paths(suite, doc):
    """(CSV, PNG) from the command line: [CSV] [PNG], by default build/bench/SUITE.csv
    and the CSV's name with .png. -h / --help prints doc."""
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args) or len(args) > 2:
        print(doc.strip())
        sys.exit(0 if len(args) <= 2 else 2)
    src = args[0] if args else os.path.join("build", "bench", f"{suite}.csv")
    dst = args[1] if len(args) > 1 else os.path.splitext(src)[0] + ".png"
    return src, dst


def load(src, suite):
    """The rows of a suite's CSV; exits with one line when the file is missing."""
    if not os.path.exists(src):
        sys.exit(f"{os.path.basename(sys.argv[0])}: {src} not found: run "
                 f"'ffnn bench {suite}' first (or name the CSV)")
    with open(src, newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def why_empty(rows, empty="no rows"):
    """Why a panel whose rows are `rows` (every status, not only ok) has nothing to draw:
    the most common status among them, or `empty` when there are none."""
    statuses = collections.Counter(r.get("status", "") or "no status" for r in rows)
    if not statuses:
        return empty
    status, _ = statuses.most_common(1)[0]
    return status if len(status) <= 60 else status[:57] + "..."


class Panel:
    """One panel: its title, the rows it is about (every status) and draw(ax, ok_rows),
    called only when some of them are ok (has_data overrides that test); empty: the
    reason given when there are no rows at all."""

    def __init__(self, title, rows, draw, has_data=None, empty="no rows"):
        self.title = title
        self.empty = empty
        self.rows = rows
        self.ok = [r for r in rows if r.get("status") == "ok"]
        self.draw = draw
        self.has_data = bool(self.ok) if has_data is None else has_data


def _wrap(text, inches, fontsize):
    chars = max(20, int(inches * 72 / (0.55 * fontsize)))
    return "\n".join(textwrap.wrap(text, chars)) if text else text


def skipped_rows(rows, key, label):
    """A note for figure(), ("LABEL rows", STATUS), when no row whose `key` column starts
    with `label` (e.g. key "backend", label "cuda") is ok; else None."""
    mine = [r for r in rows if r.get(key, "").startswith(label)]
    if mine and not any(r.get("status") == "ok" for r in mine):
        return (f"{label} rows", why_empty(mine))
    return None


def figure(plt, panels, title, ncols=3, panel_size=(5.2, 4.3), notes=()):
    """A figure of the panels with data (at most ncols a row), the title wrapped to the
    figure's width and one line naming the panels left out and why (and the notes: (what,
    why) pairs, e.g. skipped_rows()'s), grouped by reason. Exits with one line when no
    panel has data."""
    drawn = [p for p in panels if p.has_data]
    skipped = [(p.title.split(",")[0], why_empty(p.rows, p.empty))
               for p in panels if not p.has_data] + [n for n in notes if n]
    by_reason = collections.OrderedDict()
    for what, why in skipped:
        by_reason.setdefault(why, []).append(what)
    note = "; ".join(f"{', '.join(whats)}: {why}" for why, whats in by_reason.items())
    if not drawn:
        sys.exit(f"{os.path.basename(sys.argv[0])}: nothing to plot ({note})")
    cols = min(ncols, len(drawn))
    nrows = (len(drawn) + cols - 1) // cols
    width, height = panel_size[0] * cols, panel_size[1] * nrows
    fig, axes = plt.subplots(nrows, cols, figsize=(width, height + 0.8), squeeze=False)
    for ax, p in zip([a for row in axes for a in row], drawn):
        p.draw(ax, p.ok)
        ax.set_title(_wrap(p.title, panel_size[0], 9), fontsize=9)
    for ax in [a for row in axes for a in row][len(drawn):]:
        ax.set_visible(False)
    fig.suptitle(_wrap(title, width, 10), fontsize=10)
    bottom = 0.0
    if note:
        text = _wrap(f"not drawn: {note}", width, 8)
        fig.text(0.01, 0.005, text, fontsize=8, va="bottom", color="dimgray")
        bottom = (0.16 * (text.count("\n") + 1) + 0.1) / (height + 0.8)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


def save(fig, dst):
    """Write the PNG at the highest dpi that keeps it under MAX_BYTES; exits 1 when even
    the lowest does not."""
    d = os.path.dirname(dst)
    if d:
        os.makedirs(d, exist_ok=True)
    for dpi in (110, 90, 75, 60, 50, 40):
        fig.savefig(dst, dpi=dpi)
        size = os.path.getsize(dst)
        if size <= MAX_BYTES:
            break
    print(f"wrote {dst} ({size} bytes, dpi {dpi})")
    if size > MAX_BYTES:
        sys.exit(f"{dst} is {size} bytes, over {MAX_BYTES}")
