#define _POSIX_C_SOURCE 200809L
/* harness.c - what every suite of `ffnn bench` shares (harness.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* ------------------------------------------------------------ a run */

void ffnn_bench_begin(ffnn_bench_run *run, const char *suite, size_t row_size,
                      size_t status_offset)
{
    memset(run, 0, sizeof *run);
    run->suite = suite;
    snprintf(run->prog, sizeof run->prog, "ffnn bench %s", suite);
    run->t_start = ffnn_bench_now_s();
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(run->date_utc, sizeof run->date_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char model[160];
    ffnn_bench_cpu_model(model, sizeof model);
    snprintf(run->cpu_name, sizeof run->cpu_name, "%s (%ld CPUs)", model,
             sysconf(_SC_NPROCESSORS_ONLN));
    run->row_size = row_size;
    run->status_offset = status_offset;
}

void ffnn_bench_end(ffnn_bench_run *run)
{
    free(run->rows);
    run->rows = NULL;
    run->n_rows = run->cap_rows = 0;
}

void *ffnn_bench_add_row(ffnn_bench_run *run)
{
    if (run->n_rows == run->cap_rows) {
        size_t cap = run->cap_rows ? 2 * run->cap_rows : 64;
        void *rows = realloc(run->rows, cap * run->row_size);
        if (rows == NULL) {
            fprintf(stderr, "%s: out of host memory\n", run->prog);
            exit(1);
        }
        run->rows = rows;
        run->cap_rows = cap;
    }
    char *r = (char *)run->rows + run->n_rows++ * run->row_size;
    memset(r, 0, run->row_size);
    memcpy(r + run->status_offset, "ok", 3);
    return r;
}

const char *ffnn_bench_row_status(const ffnn_bench_run *run, size_t i)
{
    return (const char *)run->rows + i * run->row_size + run->status_offset;
}

size_t ffnn_bench_failed_rows(const ffnn_bench_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->n_rows; i++) n += ffnn_bench_failed(ffnn_bench_row_status(run, i));
    return n;
}

const char *ffnn_bench_gpu(ffnn_bench_run *run, int want)
{
    run->gpu_name[0] = '\0';
    run->gpu_skip = NULL;
    if (!want)
        run->gpu_skip = "--no-gpu";
    else if (!ffnn_has_cuda())
        run->gpu_skip = "this build has no CUDA";
    else if (ffnn_cuda_device_count() < 1)
        run->gpu_skip = "no GPU";
    else
        ffnn_cuda_device_name(run->gpu_name, sizeof run->gpu_name);
    return run->gpu_skip;
}

/* ------------------------------------------------------------ statuses */

int ffnn_bench_ok(const char *status) { return status != NULL && strcmp(status, "ok") == 0; }
int ffnn_bench_skipped(const char *status) { return status && !strncmp(status, "skipped", 7); }
int ffnn_bench_failed(const char *status) { return status && !strncmp(status, "failed", 6); }

/* ------------------------------------------------------------ options */

int ffnn_bench_parse_int(const char *suite, const char *opt, const char *s, long lo, long hi,
                         int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "ffnn bench %s: %s expects an integer in [%ld, %ld], found '%s'\n",
                suite, opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Calls item(token, spec, state) for each comma-separated token of s (at most 511
 * characters); -1 (after a message) on the first that fails, or when s is too long or
 * holds no token. */
static int for_each_item(const char *suite, const char *opt, const char *s,
                         int (*item)(const char *token, const void *spec, void *state),
                         const void *spec, void *state)
{
    char buf[512];
    if (strlen(s) >= sizeof buf) {
        fprintf(stderr, "ffnn bench %s: %s: list too long\n", suite, opt);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++)
        if (item(t, spec, state) != 0) return -1;
    if (n == 0) {
        fprintf(stderr, "ffnn bench %s: %s: empty list\n", suite, opt);
        return -1;
    }
    return 0;
}

typedef struct list_spec {
    const char *suite, *opt;
    long lo, hi;
    int max;
} list_spec;

typedef struct list_state {
    int *out, *n;
} list_state;

static int list_item(const char *token, const void *vspec, void *vstate)
{
    const list_spec *sp = vspec;
    list_state *st = vstate;
    if (*st->n == sp->max) {
        fprintf(stderr, "ffnn bench %s: %s: at most %d values\n", sp->suite, sp->opt, sp->max);
        return -1;
    }
    if (ffnn_bench_parse_int(sp->suite, sp->opt, token, sp->lo, sp->hi, &st->out[*st->n]) != 0)
        return -1;
    (*st->n)++;
    return 0;
}

int ffnn_bench_parse_list(const char *suite, const char *opt, const char *s, long lo,
                          long hi, int *out, int *n, int max)
{
    const list_spec sp = {suite, opt, lo, hi, max};
    list_state st = {out, n};
    *n = 0;
    return for_each_item(suite, opt, s, list_item, &sp, &st);
}

typedef struct names_spec {
    const char *suite, *opt;
    const char *const *names;
} names_spec;

static int names_item(const char *token, const void *vspec, void *flags)
{
    const names_spec *sp = vspec;
    for (int j = 0; sp->names[j] != NULL; j++)
        if (strcmp(token, sp->names[j]) == 0) {
            ((int *)flags)[j] = 1;
            return 0;
        }
    fprintf(stderr, "ffnn bench %s: %s: unknown '%s' (expected ", sp->suite, sp->opt, token);
    for (int j = 0; sp->names[j] != NULL; j++)
        fprintf(stderr, "%s%s", j ? ", " : "", sp->names[j]);
    fputs(")\n", stderr);
    return -1;
}

/* One option's argument into its destination; 0, or -1 after a message. */
static int parse_value(const ffnn_bench_run *run, const ffnn_bench_option *o, const char *arg)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    switch (o->kind) {
    case FFNN_BENCH_FLAG: *(int *)o->dst = o->value; return 0;
    case FFNN_BENCH_TEXT: *(const char **)o->dst = arg; return 0;
    case FFNN_BENCH_INT: return ffnn_bench_parse_int(run->suite, opt, arg, o->lo, o->hi, o->dst);
    case FFNN_BENCH_LIST:
        return ffnn_bench_parse_list(run->suite, opt, arg, o->lo, o->hi, o->dst, o->count,
                                     o->max);
    case FFNN_BENCH_POSITIVE: {
        char *end = NULL;
        errno = 0;
        const double v = strtod(arg, &end);
        if (errno || end == arg || *end || !(v > 0.0)) {
            fprintf(stderr, "%s: %s expects a positive number, found '%s'\n", run->prog, opt, arg);
            return -1;
        }
        *(double *)o->dst = v;
        return 0;
    }
    case FFNN_BENCH_NAMES: {
        const names_spec sp = {run->suite, opt, o->names};
        for (int j = 0; o->names[j] != NULL; j++) ((int *)o->dst)[j] = 0;
        return for_each_item(run->suite, opt, arg, names_item, &sp, o->dst);
    }
    }
    return -1;
}

#define MAX_OPTIONS 32

int ffnn_bench_parse_options(ffnn_bench_run *run, const char *usage,
                             const ffnn_bench_option *opts, int argc, char **argv)
{
    argv[0] = run->prog; /* getopt's own messages then name the suite */
    snprintf(run->command_line, sizeof run->command_line, "%s", run->prog);
    for (int i = 1; i < argc; i++) {
        size_t used = strlen(run->command_line);
        snprintf(run->command_line + used, sizeof run->command_line - used, " %s", argv[i]);
    }
    struct option table[MAX_OPTIONS + 2];
    int n = 0;
    for (; opts[n].name != NULL && n < MAX_OPTIONS; n++) {
        const int flag = opts[n].kind == FFNN_BENCH_FLAG;
        table[n] = (struct option){opts[n].name, flag ? no_argument : required_argument, NULL,
                                   1000 + n};
    }
    table[n] = (struct option){"help", no_argument, NULL, 'h'};
    table[n + 1] = (struct option){NULL, 0, NULL, 0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", table, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return 1;
        }
        if (c < 1000 || c >= 1000 + n || parse_value(run, &opts[c - 1000], optarg) != 0)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", run->prog, argv[optind]);
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------ output */

void ffnn_bench_csv_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void ffnn_bench_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL)
        fputs(s, f);
    else
        ffnn_bench_csv_quoted(f, s);
}

void ffnn_bench_csv_num(FILE *f, double v)
{
    if (v == v) fprintf(f, "%.6g", v);
    fputc(',', f);
}

void ffnn_bench_csv_nums(FILE *f, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) ffnn_bench_csv_num(f, v[i]);
}

void ffnn_bench_md_num(FILE *f, double v, const char *fmt)
{
    if (isnan(v)) {
        fputs(" - |", f);
        return;
    }
    fputc(' ', f);
    fprintf(f, fmt, v);
    fputs(" |", f);
}

void ffnn_bench_md_cell(FILE *f, const char *status, double v, const char *fmt)
{
    if (status == NULL)
        fputs(" - |", f);
    else if (!ffnn_bench_ok(status))
        fprintf(f, " %s |", ffnn_bench_skipped(status) ? "skipped" : "**failed**");
    else
        ffnn_bench_md_num(f, v, fmt);
}

const char *ffnn_bench_gpu_text(const ffnn_bench_run *run, int asked, const char *not_asked)
{
    return !asked ? not_asked : run->gpu_name[0] ? run->gpu_name : "none";
}

void ffnn_bench_md_heading(FILE *f, const ffnn_bench_run *run, const char *title_fmt, ...)
{
    va_list ap;
    va_start(ap, title_fmt);
    fputs("## ", f);
    vfprintf(f, title_fmt, ap);
    va_end(ap);
    fprintf(f, "\n\nCommand: `%s`, %s UTC.", run->command_line, run->date_utc);
}

/* Open path for writing; NULL after a message naming it. */
static FILE *open_out(const ffnn_bench_run *run, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "%s: cannot write %s: %s\n", run->prog, path, strerror(errno));
    return f;
}

/* Close f; 0, or 1 after a message naming path. */
static int close_out(const ffnn_bench_run *run, const char *path, FILE *f)
{
    if (fclose(f) == 0) return 0;
    fprintf(stderr, "%s: cannot write %s: %s\n", run->prog, path, strerror(errno));
    return 1;
}

int ffnn_bench_save(const ffnn_bench_run *run, const char *out, const char *csv_header,
                    ffnn_bench_row_fn csv_row, ffnn_bench_write_fn table, const void *ctx,
                    int failed, const char *fail_note)
{
    char path[1200];
    int rc = 0;
    FILE *f = NULL;
    if (ffnn_bench_make_dirs(out) != 0) {
        fprintf(stderr, "%s: cannot create %s: %s\n", run->prog, out, strerror(errno));
        rc = 1;
    } else {
        snprintf(path, sizeof path, "%s/%s.csv", out, run->suite);
        if ((f = open_out(run, path)) == NULL) {
            rc = 1;
        } else {
            fprintf(f, "%s,date\n", csv_header);
            for (size_t i = 0; i < run->n_rows; i++) {
                csv_row(f, (const char *)run->rows + i * run->row_size, ctx);
                fprintf(f, ",%s\n", run->date_utc);
            }
            rc |= close_out(run, path, f);
        }
        snprintf(path, sizeof path, "%s/%s_table.md", out, run->suite);
        if ((f = open_out(run, path)) == NULL) {
            rc = 1;
        } else {
            table(f, ctx);
            rc |= close_out(run, path, f);
        }
    }
    table(stdout, ctx);
    printf("\nwrote %s/%s.csv and %s/%s_table.md (%.1f s)%s%s\n", out, run->suite, out,
           run->suite, ffnn_bench_now_s() - run->t_start, failed || rc ? "; " : "",
           failed || rc ? fail_note : "");
    return rc;
}

int ffnn_bench_finish(ffnn_bench_run *run, int rc, const char *out, const char *csv_header,
                      ffnn_bench_row_fn csv_row, ffnn_bench_write_fn table, const void *ctx,
                      const char *fail_note)
{
    if (ffnn_bench_failed_rows(run) > 0) rc = 1;
    if (ffnn_bench_save(run, out, csv_header, csv_row, table, ctx, rc, fail_note) != 0) rc = 1;
    ffnn_bench_end(run);
    return rc != 0;
}

/* ------------------------------------------------------------ training runs */

ffnn_train_config ffnn_bench_sgd_config(int epochs, size_t batch, float lr, uint64_t seed,
                                        ffnn_loss loss, ffnn_device device, int threads)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.epochs = epochs;
    cfg.batch_size = batch;
    cfg.learning_rate = lr;
    cfg.seed = seed;
    cfg.shuffle = 1;
    cfg.loss = loss;
    cfg.optimizer = FFNN_OPT_SGD;
    cfg.device = device;
    cfg.threads = threads;
    return cfg;
}

int ffnn_bench_first_samples(ffnn_dataset **ds, size_t n)
{
    ffnn_dataset *first = NULL;
    if (*ds == NULL || ffnn_dataset_count(*ds) <= n) return 0;
    if (ffnn_dataset_slice(*ds, 0, n, &first) != FFNN_OK) return -1;
    ffnn_dataset_free(*ds);
    *ds = first;
    return 0;
}

int ffnn_bench_train(ffnn_bench_training *t, char *why, size_t why_size)
{
    ffnn_model *m = NULL;
    ffnn_trainer *tr = NULL;
    const char *stage = "model";
    const double t0 = ffnn_bench_now_s();
    t->seconds = t->total_seconds = NAN;
    t->loss0 = t->acc0 = t->loss1 = t->acc1 = t->loss = t->acc = NAN;
    t->train_loss = t->train_acc = NAN;
    t->model = NULL;
    if (ffnn_model_create(t->arch, &m) != FFNN_OK || ffnn_model_init(m, t->seed) != FFNN_OK)
        goto fail;
    stage = "trainer";
    if (ffnn_trainer_create(m, t->train, t->cfg, &tr) != FFNN_OK) goto fail;
    t->threads = ffnn_trainer_threads(tr);
    t->steps = (long)t->epochs * (long)ffnn_trainer_steps_per_epoch(tr);
    stage = "initial evaluation";
    if (t->eval_first && ffnn_trainer_evaluate(tr, t->test, &t->loss0, &t->acc0) != FFNN_OK)
        goto fail;
    t->seconds = 0.0;
    for (int e = 0; e < t->epochs; e++) {
        ffnn_epoch_stats st;
        stage = "training";
        const double e0 = ffnn_bench_now_s();
        if (ffnn_trainer_run_epoch(tr, NULL, NULL, &st) != FFNN_OK) goto fail;
        t->seconds += ffnn_bench_now_s() - e0;
        stage = "evaluation after epoch 1";
        if (e == 0 && t->eval_epoch1 &&
            ffnn_trainer_evaluate(tr, t->test, &t->loss1, &t->acc1) != FFNN_OK)
            goto fail;
    }
    stage = "final evaluation";
    if (ffnn_trainer_evaluate(tr, t->test, &t->loss, &t->acc) != FFNN_OK ||
        (t->eval_train &&
         ffnn_trainer_evaluate(tr, t->train, &t->train_loss, &t->train_acc) != FFNN_OK))
        goto fail;
    t->total_seconds = ffnn_bench_now_s() - t0;
    stage = "sync";
    if (t->keep_model && ffnn_trainer_sync_model(tr) != FFNN_OK) goto fail;
    ffnn_trainer_free(tr);
    if (t->keep_model)
        t->model = m;
    else
        ffnn_model_free(m);
    return 0;
fail:
    snprintf(why, why_size, "%s: %s", stage, ffnn_last_error());
    ffnn_trainer_free(tr);
    ffnn_model_free(m);
    return -1;
}

/* ------------------------------------------------------------ small things */

double ffnn_bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ffnn_bench_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, size, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

int ffnn_bench_make_dirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}
