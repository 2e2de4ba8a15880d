/* cmd_sweep.c - ffnn sweep: many configurations of ffnn train trained at once in
 * one process (ffnn_sweep_*), then ranked.
 *
 * The command line is ffnn train's, where the options of sweep_options may hold
 * lists ("--lr 0.01,0.1", "--seed 1-8") or, with --random N, ranges
 * ("--lr 1e-4:1e-1:log"). Each configuration is one ffnn train command line,
 * parsed by ffnn train's own parser (ffnn_cli_train_parse), so every option means
 * what it means there; the data is loaded once, with the first configuration's
 * options (the data options cannot vary). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "ffnn.h"
#include "interrupt.h"
#include "model_files.h"
#include "options.h"
#include "train_run.h"

#define CMD "ffnn sweep"
#define SWEEP_MAX_MODELS 100000
#define SWEEP_MAX_VALUES 256
#define SWEEP_MAX_FOLDS 100

const char *const ffnn_cli_sweep_usage =
    "usage: ffnn sweep [ffnn train options] [sweep options]\n"
    "\n"
    "Train many configurations at once in one process and rank them: the cartesian\n"
    "product of the values given as lists, or --random N samples of ranges. Each\n"
    "configuration trains exactly as `ffnn train` with those values (on the cpu bit\n"
    "for bit: every model a one-thread trainer, --threads models at a time).\n"
    "\n"
    "Options that take lists (comma-separated; --seed also A-B) or ranges (LO:HI,\n"
    "LO:HI:log for log-uniform, with --random):\n"
    "  --lr  --weight-decay  --momentum  --beta1  --beta2  --eps  --clip-grad-norm\n"
    "  --clip-grad-value  --ema  --warmup-steps  --early-stopping  --epochs  --batch\n"
    "  --seed  --optimizer  --lr-schedule  --arch\n"
    "  e.g. ffnn sweep --data iris.csv --val-split 0.2 --lr 0.01,0.03,0.1\n"
    "       --weight-decay 0,1e-4 --seed 1-4       (24 configurations)\n"
    "\n"
    "sweep options:\n"
    "  --random N        N configurations drawn from the ranges (and lists: uniform\n"
    "                    over their values) instead of the product\n"
    "  --random-seed S   the draws' seed (default 1)\n"
    "  --rank-by M       val_loss (default with a validation set), val_accuracy or\n"
    "                    train_loss (default without); a model stopped early is\n"
    "                    ranked by its best epoch\n"
    "  --csv FILE        the ranked table as CSV\n"
    "  --save-best FILE  the best model, as ffnn train --save writes it\n"
    "  --threads N       models trained at the same time (on cuda: host threads\n"
    "                    queueing their models' steps at once; default: all cores)\n"
    "  --json            one JSON object per configuration, ranked, on stdout\n"
    "  --cv K            every configuration on K stratified folds (ffnn train --cv):\n"
    "                    K models each, ranked by the mean over the held-out folds\n"
    "  --halving ETA     successive halving (ETA >= 2): at the rungs R, R*ETA,\n"
    "                    R*ETA^2 ... epochs below --epochs, the configurations still\n"
    "                    training are ranked (--rank-by, the epoch's metric; with --cv\n"
    "                    the mean over the folds) and only the best ceil(n/ETA) go on;\n"
    "                    the others stop as they are (column dropped: the rung's epoch)\n"
    "  --min-epochs R    the first rung of --halving (default 1)\n"
    "  -h, --help        this text\n"
    "Not in a sweep: --save, --log, --log-steps, --checkpoint, --resume, --gpus,\n"
    "--max-steps (they belong to one run).\n"
    "SIGINT/SIGTERM: the models stop after the current epoch and are ranked as they\n"
    "are (--csv, --save-best written); exit status 130.\n";

/* The ffnn train options whose values may vary between configurations. */
static const char *const sweep_options[] = {
    "lr", "weight-decay", "momentum", "beta1", "beta2", "eps", "clip-grad-norm",
    "clip-grad-value", "ema", "warmup-steps", "early-stopping", "epochs", "batch", "seed",
    "optimizer", "lr-schedule", "arch", NULL};

typedef struct axis {
    const char *name;              /* the option, without "--"                      */
    char *text;                    /* its value as given (owned)                    */
    char *value[SWEEP_MAX_VALUES]; /* the list's values (into text), or a range's:  */
    int count;                     /*   lo, hi (count 2) with range 1               */
    int range, log;                /* LO:HI[:log]                                   */
    char flag[80];                 /* "--name", as each configuration's argv has it */
} axis;

typedef struct sweep_cli {
    axis axes[32];
    int axis_count;
    char **fixed;                  /* [fixed_count] the other arguments, as given   */
    int fixed_count;
    long long random;              /* --random N (0: the product)                   */
    unsigned long long random_seed;
    const char *rank_by, *csv_path, *save_best;
    int json;
    long long halving, min_epochs; /* --halving ETA (0: off), --min-epochs R        */
    char seeds[SWEEP_MAX_VALUES * 4][24]; /* the integers of --seed A-B ranges */
} sweep_cli;

static int is_sweep_option(const char *name)
{
    for (int i = 0; sweep_options[i]; i++)
        if (strcmp(sweep_options[i], name) == 0)
            return 1;
    return 0;
}

/* "1-8" of --seed into its integers, as strings in storage. */
static int expand_seed_range(axis *a, const char *v, char (*storage)[24], int *used)
{
    char *end;
    errno = 0;
    unsigned long long lo = strtoull(v, &end, 10);
    if (end == v || *end != '-')
        return 0;
    const char *h = end + 1;
    unsigned long long hi = strtoull(h, &end, 10);
    if (end == h || *end || errno || hi < lo || hi - lo >= SWEEP_MAX_VALUES)
        return -1;
    for (unsigned long long s = lo; s <= hi; s++) {
        if (a->count >= SWEEP_MAX_VALUES || *used >= SWEEP_MAX_VALUES * 4)
            return -1;
        snprintf(storage[*used], sizeof storage[0], "%llu", s);
        a->value[a->count++] = storage[(*used)++];
    }
    return 1;
}

/* The values of one axis: a comma list (each item maybe a seed range), or LO:HI[:log]. */
static int split_axis(axis *a, char (*seeds)[24], int *seeds_used)
{
    char *colon = strchr(a->text, ':');
    if (colon && strcmp(a->name, "arch") != 0) {
        a->range = 1;
        *colon = '\0';
        char *hi = colon + 1, *third = strchr(hi, ':');
        if (third) {
            *third = '\0';
            if (strcmp(third + 1, "log") != 0) {
                fprintf(stderr, "%s: --%s: a range is LO:HI or LO:HI:log, found ':%s'\n", CMD,
                        a->name, third + 1);
                return 2;
            }
            a->log = 1;
        }
        a->value[0] = a->text;
        a->value[1] = hi;
        a->count = 2;
        return 0;
    }
    for (char *item = strtok(a->text, ","); item; item = strtok(NULL, ",")) {
        int r = strcmp(a->name, "seed") == 0 ? expand_seed_range(a, item, seeds, seeds_used) : 0;
        if (r < 0) {
            fprintf(stderr, "%s: --seed: '%s' is not a range A-B of at most %d seeds\n", CMD,
                    item, SWEEP_MAX_VALUES);
            return 2;
        }
        if (r == 0) {
            if (a->count >= SWEEP_MAX_VALUES) {
                fprintf(stderr, "%s: --%s: more than %d values\n", CMD, a->name,
                        SWEEP_MAX_VALUES);
                return 2;
            }
            a->value[a->count++] = item;
        }
    }
    if (a->count == 0) {
        fprintf(stderr, "%s: --%s: no value\n", CMD, a->name);
        return 2;
    }
    return 0;
}

/* A sweep option of the command line: into s (its own options) or a new axis. */
static int take_option(sweep_cli *s, const char *name, const char *value)
{
    if (strcmp(name, "random") == 0) {
        long long n;
        int rc = ffnn_cli_int(CMD, "--random", value, 1, SWEEP_MAX_MODELS, &n);
        s->random = n;
        return rc;
    }
    if (strcmp(name, "random-seed") == 0) {
        long long n;
        int rc = ffnn_cli_int(CMD, "--random-seed", value, 0, INT64_MAX, &n);
        s->random_seed = (unsigned long long)n;
        return rc;
    }
    if (strcmp(name, "rank-by") == 0) {
        if (strcmp(value, "val_loss") && strcmp(value, "val_accuracy") &&
            strcmp(value, "train_loss")) {
            fprintf(stderr, "%s: --rank-by: val_loss, val_accuracy or train_loss, found '%s'\n",
                    CMD, value);
            return 2;
        }
        s->rank_by = value;
        return 0;
    }
    if (strcmp(name, "halving") == 0)
        return ffnn_cli_int(CMD, "--halving", value, 2, 1000000, &s->halving);
    if (strcmp(name, "min-epochs") == 0)
        return ffnn_cli_int(CMD, "--min-epochs", value, 1, 1000000000, &s->min_epochs);
    if (strcmp(name, "csv") == 0)
        return s->csv_path = value, 0;
    if (strcmp(name, "save-best") == 0)
        return s->save_best = value, 0;
    for (int i = 0; i < s->axis_count; i++)
        if (strcmp(s->axes[i].name, name) == 0) {
            fprintf(stderr, "%s: --%s given twice (give one list)\n", CMD, name);
            return 2;
        }
    if (s->axis_count >= (int)(sizeof s->axes / sizeof s->axes[0]))
        return fprintf(stderr, "%s: too many swept options\n", CMD), 2;
    axis *a = &s->axes[s->axis_count++];
    a->name = name;
    snprintf(a->flag, sizeof a->flag, "--%s", name);
    a->text = strdup(value);
    return a->text ? 0 : (fprintf(stderr, "%s: out of memory\n", CMD), 1);
}

static int is_own_option(const char *name)
{
    return !strcmp(name, "random") || !strcmp(name, "random-seed") ||
           !strcmp(name, "rank-by") || !strcmp(name, "csv") || !strcmp(name, "save-best") ||
           !strcmp(name, "halving") || !strcmp(name, "min-epochs");
}

/* argv into s: sweep options and axes taken out, the rest kept in s->fixed. */
static int parse_command_line(int argc, char **argv, sweep_cli *s)
{
    s->fixed = calloc((size_t)argc + 1, sizeof *s->fixed);
    if (!s->fixed)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    int seeds_used = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            fputs(ffnn_cli_sweep_usage, stdout);
            return -1;
        }
        if (!strcmp(arg, "--json"))
            s->json = 1;
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (strncmp(arg, "--", 2) != 0 || len - 2 >= sizeof name) {
            s->fixed[s->fixed_count++] = argv[i];
            continue;
        }
        memcpy(name, arg + 2, len - 2);
        name[len - 2] = '\0';
        int own = is_own_option(name), swept = is_sweep_option(name);
        if (!own && !swept) {
            s->fixed[s->fixed_count++] = argv[i];
            continue;
        }
        const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value) {
            fprintf(stderr, "%s: --%s needs a value\n", CMD, name);
            return 2;
        }
        const char *key = name;
        for (int k = 0; swept && sweep_options[k]; k++)
            if (!strcmp(sweep_options[k], name))
                key = sweep_options[k]; /* the axis keeps the table's copy */
        int rc = take_option(s, key, value);
        if (rc)
            return rc;
        if (swept && (rc = split_axis(&s->axes[s->axis_count - 1], s->seeds, &seeds_used)) != 0)
            return rc;
    }
    if (s->min_epochs && !s->halving) {
        fprintf(stderr, "%s: --min-epochs is the first rung of --halving ETA\n", CMD);
        return 2;
    }
    if (s->halving && !s->min_epochs)
        s->min_epochs = 1;
    for (int i = 0; i < s->axis_count; i++)
        if (s->axes[i].range && !s->random) {
            fprintf(stderr, "%s: --%s %s:%s is a range: ranges need --random N\n", CMD,
                    s->axes[i].name, s->axes[i].value[0], s->axes[i].value[1]);
            return 2;
        }
    return 0;
}

/* splitmix64: the --random draws (a documented, portable generator). */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *x)
{
    return (double)(splitmix64(x) >> 11) * 0x1.0p-53;
}

static long long config_count(const sweep_cli *s)
{
    if (s->random)
        return s->random;
    long long n = 1;
    for (int i = 0; i < s->axis_count; i++) {
        n *= s->axes[i].count;
        if (n > SWEEP_MAX_MODELS)
            return n;
    }
    return n;
}

/* Configuration k's value of axis i into out (a list item, or a draw of a range). */
static void axis_value(const sweep_cli *s, int i, long long k, uint64_t *rng, char *out,
                       size_t size)
{
    const axis *a = &s->axes[i];
    if (!a->range) {
        long long stride = 1;
        for (int j = i + 1; j < s->axis_count; j++)
            stride *= s->axes[j].count;
        long long pick = s->random ? (long long)(uniform01(rng) * a->count)
                                   : (k / stride) % a->count;
        snprintf(out, size, "%s", a->value[pick < a->count ? pick : a->count - 1]);
        return;
    }
    double lo = strtod(a->value[0], NULL), hi = strtod(a->value[1], NULL), u = uniform01(rng);
    double v = a->log ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
    int integer = !strcmp(a->name, "seed") || !strcmp(a->name, "epochs") ||
                  !strcmp(a->name, "batch") || !strcmp(a->name, "warmup-steps") ||
                  !strcmp(a->name, "early-stopping");
    if (integer)
        snprintf(out, size, "%lld", (long long)floor(v + 0.5));
    else
        snprintf(out, size, "%.6g", v);
}

typedef struct config {
    ffnn_cli_train_options o;
    char values[32][64];           /* [axis_count] the values of this configuration */
    char *argv[512];
    char arch[FFNN_CLI_ARCH_SIZE];
    ffnn_model *model[SWEEP_MAX_FOLDS]; /* [folds]: one model per fold (1 without --cv) */
    ffnn_sweep_state state;    /* of fold 0's model (epochs; train loss averaged)   */
    ffnn_metrics val, test;    /* means over the folds                              */
    int has_val, has_test;
    double seconds;            /* summed over the folds' models                     */
    int dropped_at;            /* --halving: the epoch of the rung that stopped it (0: none) */
} config;

/* The data each fold's models see: without --cv one "fold" (train, val, test);
 * with --cv K fold f trains on all folds but f and is measured on f (as val). */
typedef struct folds {
    int count;
    ffnn_dataset *raw[SWEEP_MAX_FOLDS][3];  /* train, val, test in the data's units */
    ffnn_dataset *std[SWEEP_MAX_FOLDS][3];  /* what the trainers see                */
} folds;

/* The ffnn train command line of configuration k, parsed into c->o. */
static int build_config(const sweep_cli *s, long long k, uint64_t *rng, config *c)
{
    int n = 0;
    c->argv[n++] = "train";
    for (int i = 0; i < s->fixed_count && n < 500; i++)
        c->argv[n++] = s->fixed[i];
    for (int i = 0; i < s->axis_count && n < 508; i++) {
        axis_value(s, i, k, rng, c->values[i], sizeof c->values[i]);
        c->argv[n++] = (char *)s->axes[i].flag;
        c->argv[n++] = c->values[i];
    }
    c->argv[n] = NULL;
    int rc = ffnn_cli_train_parse(n, c->argv, &c->o);
    if (rc > 0)
        fprintf(stderr, "%s: in configuration %lld (the options above are ffnn train's)\n",
                CMD, k + 1);
    return rc;
}

/* The options that belong to one run. */
static int refuse_run_options(const ffnn_cli_train_options *o)
{
    const char *bad = o->save_path         ? "--save (use --save-best)"
                      : o->log_path        ? "--log"
                      : o->log_steps       ? "--log-steps"
                      : o->checkpoint_path ? "--checkpoint"
                      : o->resume_path     ? "--resume"
                      : o->gpus            ? "--gpus"
                      : o->max_steps       ? "--max-steps"
                                           : NULL;
    if (bad)
        fprintf(stderr, "%s: %s belongs to one run, not to a sweep (ffnn train)\n", CMD, bad);
    return bad ? 2 : 0;
}

/* Configuration k's model of fold f, prepared as ffnn train prepares its one (class
 * names, table encoding, --standardize's statistics: fitted once per fold, on the
 * first configuration's model of that fold, whose prepare makes the fold's std). */
static int make_model(config *c, long long k, int f, const char *default_arch, folds *d)
{
    ffnn_cli_train_options *o = &c[k].o;
    if (!o->loss_given)
        o->cfg.loss = c[0].o.cfg.loss; /* mse for float targets, as ffnn train */
    snprintf(c[k].arch, sizeof c[k].arch, "%s", o->arch ? o->arch : default_arch);
    if (ffnn_cli_train_model(o->init_path, o->arch, default_arch, o->cfg.seed, o->loss_given,
                             &o->cfg.loss, &c[k].model[f]) != 0)
        return 1;
    o->regression = ffnn_dataset_target_width(d->raw[f][0]) > 0 && o->cfg.loss == FFNN_LOSS_MSE;
    if (k == 0)
        return ffnn_cli_train_prepare(o, c[0].model[f], d->raw[f], d->std[f]);
    ffnn_cli_train_options plain = *o;
    plain.standardize = 0;
    ffnn_dataset *same[3];
    if (ffnn_cli_train_prepare(&plain, c[k].model[f], d->raw[f], same) != 0)
        return 1;
    const float *im, *is, *tm, *ts;
    if (o->standardize &&
        (ffnn_model_standardization(c[0].model[f], &im, &is, &tm, &ts) != FFNN_OK ||
         ffnn_model_set_standardization(c[k].model[f], im, is, tm, ts) != FFNN_OK))
        return ffnn_cli_fail(CMD, "--standardize");
    return 0;
}

static int make_models(config *c, long long n, const char *default_arch, folds *d)
{
    for (int f = 0; f < d->count; f++)
        for (long long k = 0; k < n; k++)
            if (make_model(c, k, f, default_arch, d) != 0)
                return 1;
    return 0;
}

/* The folds of the data (sets: what ffnn_cli_train_data gave). */
static int make_folds(const ffnn_cli_train_options *o, ffnn_dataset *sets[3], folds *d)
{
    if (!o->cv) {
        d->count = 1;
        for (int i = 0; i < 3; i++)
            d->raw[0][i] = sets[i], sets[i] = NULL;
        return 0;
    }
    if (o->cv > SWEEP_MAX_FOLDS) {
        fprintf(stderr, "%s: --cv %d: at most %d folds in a sweep\n", CMD, o->cv,
                SWEEP_MAX_FOLDS);
        return 2;
    }
    d->count = o->cv;
    for (int f = 0; f < d->count; f++)
        if (ffnn_dataset_fold(sets[0], o->cv, f, o->cfg.seed, &d->raw[f][0], &d->raw[f][1]) !=
            FFNN_OK)
            return ffnn_cli_fail(CMD, "--cv");
    return 0;
}

static void free_folds(folds *d)
{
    for (int f = 0; f < d->count; f++)
        for (int i = 0; i < 3; i++) {
            if (d->std[f][i] != d->raw[f][i])
                ffnn_dataset_free(d->std[f][i]);
            ffnn_dataset_free(d->raw[f][i]);
        }
}

/* The metric configuration k is ranked by (lower is better). */
static double rank_value(const sweep_cli *s, const config *c)
{
    const char *by = s->rank_by ? s->rank_by : c->has_val ? "val_loss" : "train_loss";
    double v = !strcmp(by, "val_loss")       ? (c->has_val ? c->val.loss : NAN)
               : !strcmp(by, "val_accuracy") ? (c->has_val ? -c->val.accuracy : NAN)
                                             : c->state.last.train_loss;
    return v == v ? v : INFINITY; /* NaN (a diverged model) ranks last */
}

typedef struct ranked {
    long long stage;               /* --halving: the rung that dropped it (LLONG_MAX: none); higher first */
    double key;                    /* rank_value: lower is better                   */
    long long k;                   /* the configuration                             */
} ranked;

static int by_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage > y->stage ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->k > y->k) - (x->k < y->k);
}

/* order[n]: the configurations, best first (ties in configuration order). */
static int rank_configs(const sweep_cli *s, const config *c, long long n, long long *order)
{
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    for (long long k = 0; k < n; k++)
        r[k].key = rank_value(s, &c[k]), r[k].k = k,
        r[k].stage = c[k].dropped_at ? c[k].dropped_at : LLONG_MAX;
    qsort(r, (size_t)n, sizeof *r, by_rank);
    for (long long k = 0; k < n; k++)
        order[k] = r[k].k;
    free(r);
    return 0;
}

static void settings_text(const sweep_cli *s, const config *c, char *out, size_t size, int json)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0, shown = 0; i < s->axis_count && used < size; i++) {
        if (s->axes[i].count < 2 && !s->axes[i].range)
            continue; /* one value: the same for every configuration */
        const char *v = c->values[i];
        char *end;
        strtod(v, &end);
        int number = *v && !*end;
        used += (size_t)snprintf(out + used, size - used,
                                 json ? (number ? "%s\"%s\": %s" : "%s\"%s\": \"%s\"") : "%s%s=%s",
                                 shown++ ? (json ? ", " : " ") : "", s->axes[i].name, v);
    }
}

static void print_results(const sweep_cli *s, const config *c, const long long *order,
                          long long n, FILE *f, int csv)
{
    char set[1024];
    int width = 8;
    for (long long r = 0; r < n; r++) {
        settings_text(s, &c[order[r]], set, sizeof set, 0);
        width = (int)strlen(set) > width ? (int)strlen(set) : width;
    }
    if (csv)
        fprintf(f, "rank,configuration,settings,epochs,seconds,train_loss,val_loss,"
                   "val_accuracy,test_loss,test_accuracy%s\n", s->halving ? ",dropped_at" : "");
    else if (!s->json)
        printf("%4s %5s  %-*s %6s %10s %10s %8s %10s %8s %8s%s\n", "rank", "conf",
               width, "settings", "epochs", "train_loss", "val_loss", "val_acc", "test_loss", "test_acc",
               "seconds", s->halving ? "  dropped" : "");
    for (long long r = 0; r < n; r++) {
        const config *x = &c[order[r]];
        double vl = x->has_val ? x->val.loss : NAN, va = x->has_val ? x->val.accuracy : NAN;
        double tl = x->has_test ? x->test.loss : NAN, ta = x->has_test ? x->test.accuracy : NAN;
        if (csv) {
            settings_text(s, x, set, sizeof set, 0);
            fprintf(f, "%lld,%lld,\"%s\",%d,%.3f,%.6g,%.6g,%.6g,%.6g,%.6g", r + 1,
                    order[r] + 1, set, x->state.epochs_run, x->seconds,
                    x->state.last.train_loss, vl, va, tl, ta);
            if (s->halving)
                fprintf(f, ",%d", x->dropped_at);
            fputc('\n', f);
        } else if (s->json) {
            settings_text(s, x, set, sizeof set, 1);
            printf("{\"rank\": %lld, \"configuration\": %lld, \"settings\": {%s}, "
                   "\"arch\": \"%s\", \"epochs\": %d, \"best_epoch\": %d, \"seconds\": %.4f, "
                   "\"train_loss\": %.6g",
                   r + 1, order[r] + 1, set, x->arch, x->state.epochs_run,
                   x->state.best_epoch, x->seconds, x->state.last.train_loss);
            const char *keys[4] = {"val_loss", "val_accuracy", "test_loss", "test_accuracy"};
            const double v[4] = {vl, va, tl, ta};
            for (int k = 0; k < 4; k++)
                if (v[k] == v[k])
                    printf(", \"%s\": %.6g", keys[k], v[k]);
            if (s->halving && x->dropped_at)
                printf(", \"dropped_at\": %d", x->dropped_at);
            printf("}\n");
        } else {
            settings_text(s, x, set, sizeof set, 0);
            char cell[4][16]; /* val_loss, val_acc, test_loss, test_acc; "-" without the set */
            const double v[4] = {vl, 100 * va, tl, 100 * ta};
            for (int q = 0; q < 4; q++)
                snprintf(cell[q], sizeof cell[q], v[q] != v[q] ? "-" : q % 2 ? "%.2f%%" : "%.4f",
                         v[q]);
            char dropped[32] = "";
            if (s->halving)
                snprintf(dropped, sizeof dropped, x->dropped_at ? "  epoch %d" : "  -",
                         x->dropped_at);
            printf("%4lld %5lld  %-*s %6d %10.4f %10s %8s %10s %8s %8.2f%s\n", r + 1,
                   order[r] + 1, width, set, x->state.epochs_run, x->state.last.train_loss,
                   cell[0], cell[1], cell[2], cell[3], x->seconds, dropped);
        }
    }
}

static int write_csv(const sweep_cli *s, const config *c, const long long *order, long long n)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->csv_path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fprintf(stderr, "%s: --csv %s: %s\n", CMD, tmp, strerror(errno)), 1;
    print_results(s, c, order, n, f, 1);
    int bad = ferror(f) | fclose(f);
    if (bad || rename(tmp, s->csv_path) != 0) {
        fprintf(stderr, "%s: --csv %s: %s\n", CMD, s->csv_path, strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}

/* Train every model: one line per epoch on stderr (how many still train, the best
 * so far by the training or validation loss of the epoch). */
/* Every model of every fold in one sweep (model k * folds + f: configuration k, fold
 * f): one line per --print-every epochs on stderr (how many still train, the best
 * configuration of the epoch by fold 0's validation or training loss). */
static int halve(const sweep_cli *s, config *c, long long n, const folds *d, ffnn_sweep *sw,
                 int e, size_t *training);

static int train_all(const sweep_cli *s, config *c, long long n, folds *d, int *stopped)
{
    size_t total = (size_t)n * (size_t)d->count;
    ffnn_model **models = calloc(total, sizeof *models);
    ffnn_train_config *cfg = calloc(total, sizeof *cfg);
    const ffnn_dataset **train = calloc(total, sizeof *train), **val = calloc(total, sizeof *val);
    double *seconds = calloc(total, sizeof *seconds);   /* [total] each model's training time */
    int *epochs = calloc(total, sizeof *epochs);        /* [total] its epochs counted so far */
    int rc = !seconds || !epochs || !models || !cfg || !train || !val ? (fprintf(stderr, "%s: out of memory\n", CMD), 1)
                                               : 0;
    for (size_t j = 0; rc == 0 && j < total; j++) {
        long long k = (long long)(j / (size_t)d->count);
        int f = (int)(j % (size_t)d->count);
        models[j] = c[k].model[f];
        cfg[j] = c[k].o.cfg;
        train[j] = d->std[f][0];
        val[j] = d->std[f][1];
    }
    ffnn_sweep *sw = NULL;
    if (rc == 0 && ffnn_sweep_create(models, cfg, total, train, val, c[0].o.cfg.threads, &sw))
        rc = ffnn_cli_fail(CMD, "creating the models' trainers");
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: %lld configurations x %d fold%s = %zu models, %d at a time\n", CMD,
                n, d->count, d->count > 1 ? "s" : "", total, ffnn_sweep_lanes(sw));
    size_t training = total, model_epochs = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long rung = s->halving ? s->min_epochs : 0; /* the next rung's epoch (0: none) */
    ffnn_cli_interrupt_install(); /* the first signal: stop after this epoch and rank */
    for (int e = 1; rc == 0 && training > 0; e++) {
        model_epochs += training;
        if (ffnn_sweep_run_epoch(sw, &training) != FFNN_OK) {
            rc = ffnn_cli_fail(CMD, "training");
            break;
        }
        double best = INFINITY;
        long long at = 0;
        for (long long k = 0; k < n; k++) {
            c[k].seconds = 0;
            for (int f = d->count - 1; f >= 0; f--) { /* fold 0's state is kept */
                size_t j = (size_t)(k * d->count + f);
                ffnn_sweep_model_state(sw, j, &c[k].state);
                if (c[k].state.epochs_run > epochs[j]) /* it ran this epoch */
                    seconds[j] += c[k].state.last.seconds, epochs[j] = c[k].state.epochs_run;
                c[k].seconds += seconds[j];
            }
            double v = c[k].state.last.val_loss == c[k].state.last.val_loss
                           ? c[k].state.last.val_loss : c[k].state.last.train_loss;
            if (c[k].state.epochs_run == e && v < best)
                best = v, at = k;
        }
        if (rung && e == rung && training > 0) {
            if ((rc = halve(s, c, n, d, sw, e, &training)) != 0)
                break;
            rung = rung > INT_MAX / s->halving ? 0 : rung * s->halving;
        }
        int every = c[0].o.print_every > 0 ? c[0].o.print_every
                    : c[0].o.cfg.epochs >= 10 ? c[0].o.cfg.epochs / 10 : 1;
        if (!c[0].o.quiet && (e % every == 0 || training == 0))
            fprintf(stderr, "epoch %d: %zu of %zu models still training; best this epoch %.4f "
                    "(configuration %lld)\n", e, training, total, best, at + 1);
        int sig = ffnn_cli_interrupted();
        if (sig && training > 0) {
            fprintf(stderr, "%s: %s after epoch %d: ranking the models as they are (%zu of "
                    "%zu still training)\n", CMD, ffnn_cli_signal_name(sig), e, training, total);
            *stopped = 1;
            break;
        }
    }
    ffnn_cli_interrupt_restore();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: %zu model-epochs in %.3f s of training (%.1f model-epochs/s)\n",
                CMD, model_epochs, wall, wall > 0 ? (double)model_epochs / wall : 0.0);
    ffnn_sweep_free(sw); /* each model keeps its weights (the best epoch's if stopped early) */
    free(models);
    free(cfg);
    free(train);
    free(val);
    free(seconds);
    free(epochs);
    return rc;
}

/* --halving at the rung of epoch e: the configurations still training ranked by
 * the mean over their folds' models of the --rank-by metric of their last epoch
 * (val_loss: the best epoch's with early stopping), the best ceil(n/ETA) kept, the
 * others' models stopped (ffnn_sweep_stop_model); *training gets the models left. */
static int halve(const sweep_cli *s, config *c, long long n, const folds *d, ffnn_sweep *sw,
                 int e, size_t *training)
{
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    const char *by = s->rank_by ? s->rank_by : d->std[0][1] ? "val_loss" : "train_loss";
    long long alive = 0;
    for (long long k = 0; k < n; k++) {
        double sum = 0;
        int on = 0;
        for (int f = 0; f < d->count; f++) {
            ffnn_sweep_state st;
            ffnn_sweep_model_state(sw, (size_t)(k * d->count + f), &st);
            on |= st.training;
            sum += !strcmp(by, "val_loss")       ? st.best_loss
                   : !strcmp(by, "val_accuracy") ? -st.last.val_accuracy
                                                 : st.last.train_loss;
        }
        if (!on)
            continue; /* done before the rung (its epochs, or early stopping) */
        double v = sum / d->count;
        r[alive].key = v == v ? v : INFINITY, r[alive].k = k, r[alive].stage = 0;
        alive++;
    }
    qsort(r, (size_t)alive, sizeof *r, by_rank);
    long long keep = (alive + s->halving - 1) / s->halving;
    int rc = 0;
    for (long long q = keep; q < alive && rc == 0; q++) {
        long long k = r[q].k;
        c[k].dropped_at = e;
        for (int f = 0; f < d->count && rc == 0; f++)
            if (ffnn_sweep_stop_model(sw, (size_t)(k * d->count + f)) != FFNN_OK)
                rc = ffnn_cli_fail(CMD, "--halving");
    }
    *training = 0;
    for (size_t j = 0; j < ffnn_sweep_count(sw); j++) {
        ffnn_sweep_state st;
        ffnn_sweep_model_state(sw, j, &st);
        *training += (size_t)st.training;
    }
    for (long long k = 0; k < n; k++) /* fold 0's state, as train_all keeps it */
        ffnn_sweep_model_state(sw, (size_t)(k * d->count), &c[k].state);
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: rung at epoch %d: %lld configurations ranked by %s, the best "
                "%lld go on\n", CMD, e, alive, by, keep);
    free(r);
    return rc;
}

/* The means over the folds of metrics m[folds]. */
static ffnn_metrics mean_metrics(const ffnn_metrics *m, int folds)
{
    ffnn_metrics r = m[0];
    for (int f = 1; f < folds; f++) {
        r.loss += m[f].loss, r.accuracy += m[f].accuracy, r.mse += m[f].mse;
        r.rmse += m[f].rmse, r.mae += m[f].mae, r.r2 += m[f].r2, r.count += m[f].count;
    }
    r.loss /= folds, r.accuracy /= folds, r.mse /= folds, r.rmse /= folds, r.mae /= folds;
    r.r2 /= folds;
    return r;
}

/* Each configuration on its folds' validation sets (their means) and the test set,
 * in the data's own units (the models standardise raw rows themselves). */
static int evaluate_all(config *c, long long n, const folds *d)
{
    ffnn_metrics m[SWEEP_MAX_FOLDS];
    for (long long k = 0; k < n; k++) {
        const ffnn_cli_train_options *o = &c[k].o;
        size_t batch = o->cfg.eval_batch_size;
        for (int set = 1; set <= 2; set++) {
            if (!d->raw[0][set])
                continue;
            for (int f = 0; f < d->count; f++)
                if (ffnn_model_evaluate_metrics(c[k].model[f], d->raw[f][set], batch,
                                                &m[f], NULL) != FFNN_OK)
                    return ffnn_cli_fail(CMD, set == 1 ? "the validation set" : "the test set");
            if (set == 1)
                c[k].val = mean_metrics(m, d->count), c[k].has_val = 1;
            else
                c[k].test = mean_metrics(m, d->count), c[k].has_test = 1;
        }
    }
    return 0;
}

static int build_configs(const sweep_cli *s, config **out, long long *count)
{
    long long n = config_count(s);
    if (n > SWEEP_MAX_MODELS) {
        fprintf(stderr, "%s: %lld configurations; at most %d (use --random N)\n", CMD, n,
                SWEEP_MAX_MODELS);
        return 2;
    }
    config *c = calloc((size_t)n, sizeof *c);
    if (!c)
        return fprintf(stderr, "%s: %lld configurations: out of memory\n", CMD, n), 1;
    *out = c;
    *count = n;
    uint64_t rng = s->random_seed;
    for (long long k = 0; k < n; k++) {
        int rc = build_config(s, k, &rng, &c[k]);
        if (rc)
            return rc;
        if (k == 0 && (rc = refuse_run_options(&c[0].o)) != 0)
            return rc;
        if (k == 0 && c[0].o.cv && s->save_best) {
            fprintf(stderr, "%s: --save-best with --cv: the folds' models are not one model; "
                    "run the best configuration with ffnn train --save\n", CMD);
            return 2;
        }
        if (c[k].o.cfg.device != c[0].o.cfg.device) {
            fprintf(stderr, "%s: one device for every configuration\n", CMD);
            return 2;
        }
    }
    if (s->save_best && ffnn_cli_check_output_path(CMD, "--save-best", s->save_best) != 0)
        return 1;
    if (s->csv_path && ffnn_cli_check_output_path(CMD, "--csv", s->csv_path) != 0)
        return 1;
    return 0;
}

static void free_configs(config *c, long long n)
{
    for (long long k = 0; c && k < n; k++)
        for (int f = 0; f < SWEEP_MAX_FOLDS; f++)
            ffnn_model_free(c[k].model[f]);
    free(c);
}

static int sweep_run(const sweep_cli *s, config *c, long long n)
{
    ffnn_dataset *sets[3] = {NULL, NULL, NULL};
    folds d;
    memset(&d, 0, sizeof d);
    char arch[FFNN_CLI_ARCH_SIZE], description[1024];
    int rc = ffnn_cli_train_data(&c[0].o, &sets[0], &sets[1], &sets[2], arch, sizeof arch,
                                 description, sizeof description);
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: %s\n", CMD, description);
    if (rc == 0)
        rc = make_folds(&c[0].o, sets, &d);
    if (rc == 0)
        rc = make_models(c, n, arch, &d);
    int stopped = 0;
    if (rc == 0)
        rc = train_all(s, c, n, &d, &stopped);
    if (rc == 0)
        rc = evaluate_all(c, n, &d);
    long long *order = rc == 0 ? malloc((size_t)n * sizeof *order) : NULL;
    if (rc == 0 && !order)
        rc = (fprintf(stderr, "%s: out of memory\n", CMD), 1);
    if (rc == 0)
        rc = rank_configs(s, c, n, order);
    if (rc == 0) {
        print_results(s, c, order, n, stdout, 0);
        if (s->csv_path)
            rc = write_csv(s, c, order, n);
        if (rc == 0 && s->save_best &&
            ffnn_model_save(c[order[0]].model[0], s->save_best) !=
                FFNN_OK)
            rc = ffnn_cli_fail(CMD, "--save-best");
        else if (rc == 0 && s->save_best && !s->json)
            printf("saved the best model (configuration %lld) to %s\n", order[0] + 1,
                   s->save_best);
    }
    free(order);
    free_folds(&d);
    if (rc == 0 && stopped)
        rc = FFNN_CLI_EXIT_INTERRUPTED;
    for (int i = 0; i < 3; i++)
        ffnn_dataset_free(sets[i]);
    return rc;
}

int ffnn_cli_sweep(int argc, char **argv)
{
    sweep_cli s;
    memset(&s, 0, sizeof s);
    s.random_seed = 1;
    config *c = NULL;
    long long n = 0;
    int rc = parse_command_line(argc, argv, &s);
    if (rc == 0)
        rc = build_configs(&s, &c, &n);
    if (rc == 0)
        rc = sweep_run(&s, c, n);
    free_configs(c, n);
    for (int i = 0; i < s.axis_count; i++)
        free(s.axes[i].text);
    free(s.fixed);
    return rc < 0 ? 0 : rc;
}
