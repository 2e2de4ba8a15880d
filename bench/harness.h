/*
 * harness.h - what every suite of `ffnn bench` shares (harness.c): a run's context
 * (who, when, on what), the option table and its parser, the row table, the
 * statuses of a row, CSV and markdown cells, and saving the results (OUT/SUITE.csv,
 * OUT/SUITE_table.md, the table on stdout). A suite is a table of configurations
 * over this harness and the lab's (lab/harness.h: check, time, median, rates).
 *
 * A suite keeps everything of one run in a context struct whose first member is an
 * ffnn_bench_run; no file-scope mutable state.
 */
#ifndef FFNN_BENCH_HARNESS_H
#define FFNN_BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lab/harness.h"

/* ------------------------------------------------------------ a run */

typedef struct ffnn_bench_run {
    const char *suite;          /* "mnist-mlp": messages, file names            */
    char prog[48];              /* "ffnn bench mnist-mlp": messages, argv[0]     */
    char command_line[1024];    /* the command as given, for the tables          */
    char date_utc[32];          /* the start, "2026-11-23T19:22:00Z"             */
    char cpu_name[200];         /* "MODEL (N CPUs)"                              */
    char gpu_name[160];         /* the GPU's name ("" until ffnn_bench_gpu finds one) */
    const char *gpu_skip;       /* why the GPU parts do not run (NULL: they do)  */
    double t_start;             /* ffnn_bench_now_s() at the start               */
    /* the rows: row_size bytes each, a status string (char[]) at status_offset */
    void *rows;
    size_t n_rows, cap_rows, row_size, status_offset;
} ffnn_bench_run;

/* Start a run of `suite` whose rows are row_size bytes with their status at
 * status_offset: the clock, the date, the CPU's name, an empty row table. */
void ffnn_bench_begin(ffnn_bench_run *run, const char *suite, size_t row_size,
                      size_t status_offset);
/* Free the rows. */
void ffnn_bench_end(ffnn_bench_run *run);

/* A new row at the end of the table: zeroed, status "ok". Pointers to earlier rows
 * may move. Out of host memory: a message and exit(1). */
void *ffnn_bench_add_row(ffnn_bench_run *run);
/* Row i of the table (typed: FFNN_BENCH_ROW(run, row, i)). */
#define FFNN_BENCH_ROW(run, type, i) ((type *)(run)->rows + (i))
/* The status of row i. */
const char *ffnn_bench_row_status(const ffnn_bench_run *run, size_t i);
/* Rows whose status starts with "failed". */
size_t ffnn_bench_failed_rows(const ffnn_bench_run *run);

/* Whether the GPU parts run: want 0 (--no-gpu), a build without CUDA or no GPU set
 * run->gpu_skip to the reason ("--no-gpu", "this build has no CUDA", "no GPU"),
 * else run->gpu_name is the GPU's name. Returns run->gpu_skip. */
const char *ffnn_bench_gpu(ffnn_bench_run *run, int want);

/* ------------------------------------------------------------ statuses */

/* "ok" (NULL: not ok) / "skipped: why" / "failed: why". */
int ffnn_bench_ok(const char *status);
int ffnn_bench_skipped(const char *status);
int ffnn_bench_failed(const char *status);

/* ------------------------------------------------------------ options */

typedef enum ffnn_bench_option_kind {
    FFNN_BENCH_FLAG,     /* *(int *)dst = value                                     */
    FFNN_BENCH_INT,      /* *(int *)dst = an integer in [lo, hi]                    */
    FFNN_BENCH_LIST,     /* (int *)dst[0..*count) = comma-separated integers in
                            [lo, hi], at most max                                  */
    FFNN_BENCH_TEXT,     /* *(const char **)dst = the argument                      */
    FFNN_BENCH_POSITIVE, /* *(double *)dst = a number > 0                           */
    FFNN_BENCH_NAMES     /* (int *)dst[j] = 1 for each of names[j] in a comma-separated
                            list (the others 0)                                    */
} ffnn_bench_option_kind;

typedef struct ffnn_bench_option {
    const char *name;          /* without "--"; NULL ends a table                   */
    ffnn_bench_option_kind kind;
    void *dst;
    long lo, hi;               /* INT, LIST                                          */
    int *count, max;           /* LIST                                               */
    int value;                 /* FLAG                                               */
    const char *const *names;  /* NAMES: NULL-terminated                             */
} ffnn_bench_option;

/* Table rows (opts[] = {..., FFNN_BENCH_OPT_END}). */
#define FFNN_BENCH_OPT_FLAG(name, p, value) \
    {name, FFNN_BENCH_FLAG, (p), 0, 0, NULL, 0, (value), NULL}
#define FFNN_BENCH_OPT_INT(name, p, lo, hi) \
    {name, FFNN_BENCH_INT, (p), (lo), (hi), NULL, 0, 0, NULL}
#define FFNN_BENCH_OPT_LIST(name, p, count, max, lo, hi) \
    {name, FFNN_BENCH_LIST, (p), (lo), (hi), (count), (max), 0, NULL}
#define FFNN_BENCH_OPT_TEXT(name, p) {name, FFNN_BENCH_TEXT, (p), 0, 0, NULL, 0, 0, NULL}
#define FFNN_BENCH_OPT_POSITIVE(name, p) {name, FFNN_BENCH_POSITIVE, (p), 0, 0, NULL, 0, 0, NULL}
#define FFNN_BENCH_OPT_NAMES(name, p, names) \
    {name, FFNN_BENCH_NAMES, (p), 0, 0, NULL, 0, 0, (names)}
#define FFNN_BENCH_OPT_END {NULL, FFNN_BENCH_FLAG, NULL, 0, 0, NULL, 0, 0, NULL}
/* The options of the suites that train and time on both CPU and GPU, for an options
 * struct o with the int fields quick, gpu, cpu, seed and the const char *out:
 * --quick, --out DIR, --no-gpu, --no-cpu, --seed N. */
#define FFNN_BENCH_OPT_COMMON(o)                                                       \
    FFNN_BENCH_OPT_FLAG("quick", &(o)->quick, 1), FFNN_BENCH_OPT_TEXT("out", &(o)->out),   \
        FFNN_BENCH_OPT_FLAG("no-gpu", &(o)->gpu, 0), FFNN_BENCH_OPT_FLAG("no-cpu", &(o)->cpu, 0), \
        FFNN_BENCH_OPT_INT("seed", &(o)->seed, 0, 2147483647)

/* Parse argv (argv[0]: the suite's name) by the table opts (and -h, --help), and
 * record the command line in run->command_line. Returns 0 to go on, 1 when the usage
 * was printed to stdout (--help: exit 0), 2 on a usage error (message printed to
 * stderr: exit 2). */
int ffnn_bench_parse_options(ffnn_bench_run *run, const char *usage,
                             const ffnn_bench_option *opts, int argc, char **argv);

/* One integer in [lo, hi] / a list of at most max of them (*n: how many); on error
 * a message "ffnn bench SUITE: OPT ..." on stderr and -1. */
int ffnn_bench_parse_int(const char *suite, const char *opt, const char *s, long lo, long hi,
                         int *out);
int ffnn_bench_parse_list(const char *suite, const char *opt, const char *s, long lo,
                          long hi, int *out, int *n, int max);

/* ------------------------------------------------------------ output */

/* CSV cells: a text field (quoted when it holds ',', '"' or a newline), the same
 * always quoted, and a number followed by ',' (just ',' for NaN). */
void ffnn_bench_csv_field(FILE *f, const char *s);
void ffnn_bench_csv_quoted(FILE *f, const char *s);
void ffnn_bench_csv_num(FILE *f, double v);

/* Markdown cells " v |": ffnn_bench_md_num prints v by fmt (" - |" for NaN);
 * ffnn_bench_md_cell prints a row's value: " - |" when there is no row (status
 * NULL), " skipped |" or " **failed** |" when the row is not ok, else as md_num. */
void ffnn_bench_md_num(FILE *f, double v, const char *fmt);
void ffnn_bench_md_cell(FILE *f, const char *status, double v, const char *fmt);
/* The GPU as a table names it: its name (run->gpu_name), "none" when no GPU was
 * found, or not_asked when the suite ran without one (--no-gpu: asked 0). */
const char *ffnn_bench_gpu_text(const ffnn_bench_run *run, int asked, const char *not_asked);
/* A table file's heading: "## TITLE" (printf-style), a blank line, then "Command:
 * `COMMAND LINE`, DATE UTC." (no newline: the caller ends the paragraph). */
void ffnn_bench_md_heading(FILE *f, const ffnn_bench_run *run, const char *title_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Numbers, each followed by ',': FFNN_BENCH_CSV_NUMS(f, a, b, c). */
void ffnn_bench_csv_nums(FILE *f, const double *v, size_t n);
#define FFNN_BENCH_CSV_NUMS(f, ...)                                                    \
    ffnn_bench_csv_nums((f), (const double[]){__VA_ARGS__},                            \
                        sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

/* A suite's CSV file: its header line (csv_header, column names without the last,
 * "date"), then for each row csv_row(f, row, ctx) writes the row's cells up to the
 * date, which the harness appends (",DATE\n"). */
typedef void (*ffnn_bench_row_fn)(FILE *f, const void *row, const void *ctx);
typedef void (*ffnn_bench_write_fn)(FILE *f, const void *ctx);

/* Write the results: OUT/SUITE.csv (csv_header, csv_row), OUT/SUITE_table.md by
 * table(f, ctx), the table again on stdout, then one "wrote ..." line with the
 * seconds since the start (and fail_note when failed or a write failed). Returns 1
 * when a file could not be written (the message names it), else 0. */
int ffnn_bench_save(const ffnn_bench_run *run, const char *out, const char *csv_header,
                    ffnn_bench_row_fn csv_row, ffnn_bench_write_fn table, const void *ctx,
                    int failed, const char *fail_note);

/* A suite's end: the results saved as ffnn_bench_save does (failed: rc != 0 or a row
 * failed), then the run ended (ffnn_bench_end). Returns the suite's exit status: 1
 * when rc != 0, a row failed or a file could not be written, else 0. */
int ffnn_bench_finish(ffnn_bench_run *run, int rc, const char *out, const char *csv_header,
                      ffnn_bench_row_fn csv_row, ffnn_bench_write_fn table, const void *ctx,
                      const char *fail_note);

/* ------------------------------------------------------------ training runs */

/* The suites' training settings: ffnn_train_config_default() with SGD, shuffled, and
 * these epochs, batch size, learning rate, seed, loss, device and threads (OpenMP; 0:
 * all); the strategy is the caller's to set. */
ffnn_train_config ffnn_bench_sgd_config(int epochs, size_t batch, float lr, uint64_t seed,
                                        ffnn_loss loss, ffnn_device device, int threads);

/* *ds replaced by its first n samples (a set of at most n is kept as it is); 0, or -1
 * with ffnn_last_error() set and *ds unchanged. */
int ffnn_bench_first_samples(ffnn_dataset **ds, size_t n);

/* One training run of a fresh model through the public API, as the suites time it:
 * model created and initialised, trainer created (data uploaded), optionally the test
 * set evaluated, then `epochs` epochs, each timed (ffnn_trainer_run_epoch returns
 * after reading its losses back: synchronised), optionally the test set evaluated
 * after the first (clock stopped), then the test (and optionally the training) set
 * evaluated. */
typedef struct ffnn_bench_training {
    /* in */
    const char *arch;                  /* architecture string                          */
    uint64_t seed;                     /* ffnn_model_init's seed                       */
    const ffnn_train_config *cfg;      /* the trainer's (epochs run: the field below)  */
    const ffnn_dataset *train, *test;
    int epochs;
    int eval_first;                    /* evaluate the test set before training        */
    int eval_epoch1;                   /* ... and after the first epoch                */
    int eval_train;                    /* ... and the training set at the end          */
    int keep_model;                    /* hand the trained model over (synced)         */
    /* out (NaN: not evaluated) */
    double seconds;                    /* the epochs only                              */
    double total_seconds;              /* model creation to the last evaluation        */
    double loss0, acc0;                /* test set before training                     */
    double loss1, acc1;                /* test set after epoch 1                       */
    double loss, acc;                  /* test set at the end                          */
    double train_loss, train_acc;      /* training set at the end                      */
    int threads;                       /* ffnn_trainer_threads                         */
    long steps;                        /* epochs x steps per epoch                     */
    ffnn_model *model;                 /* keep_model: the caller frees it              */
} ffnn_bench_training;

/* Run t; 0, or -1 with why = "STAGE: error" (model, trainer, initial evaluation,
 * training, evaluation after epoch 1, final evaluation, sync). */
int ffnn_bench_train(ffnn_bench_training *t, char *why, size_t why_size);

/* ------------------------------------------------------------ small things */

/* Monotonic clock in seconds. */
double ffnn_bench_now_s(void);
/* The CPU's model name from /proc/cpuinfo ("unknown CPU" when unreadable). */
void ffnn_bench_cpu_model(char *buf, size_t size);
/* mkdir -p path; 0 on success (errno set on failure). */
int ffnn_bench_make_dirs(const char *path);

#endif
