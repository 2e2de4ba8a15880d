/* sweep_parse.c - ffnn sweep's command line: its own options, the axes (the ffnn
 * train options given lists or ranges) and the configurations they expand to
 * (the product, or --random N draws), each parsed by ffnn train's parser. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ffnn.h"
#include "options.h"
#include "sweep.h"
#include "train_run.h"
#define CMD SWEEP_CMD

/* The ffnn train options whose values may vary between configurations. */
static const char *const sweep_options[] = {
    "lr", "weight-decay", "momentum", "beta1", "beta2", "eps", "clip-grad-norm",
    "clip-grad-value", "ema", "warmup-steps", "early-stopping", "epochs", "batch", "seed",
    "optimizer", "lr-schedule", "arch", NULL};

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
    if (strcmp(name, "save-all") == 0)
        return s->save_all = value, 0;
    if (strcmp(name, "ensemble") == 0)
        return ffnn_cli_int(CMD, "--ensemble", value, 1, FFNN_ENSEMBLE_MAX_MEMBERS,
                            &s->ensemble_k);
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
           !strcmp(name, "halving") || !strcmp(name, "min-epochs") ||
           !strcmp(name, "save-all") || !strcmp(name, "ensemble");
}

/* argv into s: sweep options and axes taken out, the rest kept in s->fixed. */
int ffnn_sweep_parse_command_line(int argc, char **argv, sweep_cli *s)
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
        if (!strcmp(name, "ensemble")) { /* --ensemble K FILE */
            if (eq || i + 1 >= argc)
                return fprintf(stderr, "%s: --ensemble K FILE: expected the file after K\n",
                               CMD), 2;
            s->ensemble_path = argv[++i];
        }
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
                      : o->max_steps       ? "--max-steps"
                                           : NULL;
    if (bad)
        fprintf(stderr, "%s: %s belongs to one run, not to a sweep (ffnn train)\n", CMD, bad);
    return bad ? 2 : 0;
}

int ffnn_sweep_build_configs(const sweep_cli *s, config **out, long long *count)
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
        const char *one = s->save_best ? "--save-best" : s->save_all ? "--save-all"
                          : s->ensemble_path ? "--ensemble" : NULL;
        if (k == 0 && c[0].o.cv && one) {
            fprintf(stderr, "%s: %s with --cv: the folds' models are not one model; "
                    "run the best configuration with ffnn train --save\n", CMD, one);
            return 2;
        }
        if (c[k].o.cfg.device != c[0].o.cfg.device) {
            fprintf(stderr, "%s: one device for every configuration\n", CMD);
            return 2;
        }
    }
    if (c[0].o.gpus && c[0].o.cfg.device != FFNN_DEVICE_CUDA) {
        fprintf(stderr, "%s: --gpus spreads the models over GPUs: it needs --device cuda\n",
                CMD);
        return 2;
    }
    if (s->rank != 0) /* rank 0 alone writes the files */
        return 0;
    if (s->save_best && ffnn_cli_check_output_path(CMD, "--save-best", s->save_best) != 0)
        return 1;
    if (s->csv_path && ffnn_cli_check_output_path(CMD, "--csv", s->csv_path) != 0)
        return 1;
    if (s->ensemble_path && s->ensemble_k > n) {
        fprintf(stderr, "%s: --ensemble %lld: the sweep has %lld configuration%s\n", CMD,
                s->ensemble_k, n, n == 1 ? "" : "s");
        return 2;
    }
    if (s->ensemble_path &&
        ffnn_cli_check_output_path(CMD, "--ensemble", s->ensemble_path) != 0)
        return 1;
    if (s->save_all)
        return ffnn_sweep_prepare_save_all(s->save_all, n);
    return 0;
}

void ffnn_sweep_free_configs(config *c, long long n)
{
    for (long long k = 0; c && k < n; k++)
        for (int f = 0; f < SWEEP_MAX_FOLDS; f++)
            ffnn_model_free(c[k].model[f]);
    free(c);
}

