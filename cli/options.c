/* options.c - the option loop and the value parsers every command shares
 * (options.h); messages name the command and the option. */
#define _POSIX_C_SOURCE 200809L
#include "options.h"

#include "messages.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------ the option loop */

int ffnn_cli_getopt(const char *cmd, int argc, char **argv, const struct option *longopts,
                    const char *usage, ffnn_cli_option_fn on_option, void *ctx,
                    int *operands)
{
    int c;

    optind = 1;
    argv[0] = (char *)cmd; /* getopt's messages name the command */
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        }
        if (c == '?' || c == ':') { /* getopt printed what */
            fprintf(stderr, "%s: see '%s --help'\n", cmd, cmd);
            return 2;
        }
        int rc = on_option(ctx, c, optarg);
        if (rc != 0)
            return rc;
    }
    *operands = optind;
    return 0;
}

/* ------------------------------------------------------------ values */

int ffnn_cli_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
                 long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "%s: %s expects an integer in [%lld, %lld], found '%s'\n", cmd, opt,
                lo, hi, s);
        return 2;
    }
    *out = v;
    return 0;
}

int ffnn_cli_number(const char *cmd, const char *opt, const char *s, double lo, int lo_open,
                    double hi, int hi_open, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || (lo_open ? !(v > lo) : !(v >= lo)) ||
        (hi_open ? !(v < hi) : !(v <= hi))) {
        fprintf(stderr, "%s: %s expects a number in %c%g, %g%c, found '%s'\n", cmd, opt,
                lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']', s);
        return 2;
    }
    *out = v;
    return 0;
}

/* A double bound as a long long, saturated. */
static long long to_ll(double v)
{
    if (v <= -9.2e18)
        return -9223372036854775807LL - 1;
    if (v >= 9.2e18)
        return 9223372036854775807LL;
    return (long long)v;
}

int ffnn_cli_limit_int(const char *cmd, const char *opt, const ffnn_config_limit *limit,
                       const char *s, long long *out)
{
    /* the integers inside the range: an open bound excludes itself */
    double lo = limit->min_open ? floor(limit->min) + 1 : ceil(limit->min);
    double hi = limit->max_open ? ceil(limit->max) - 1 : floor(limit->max);
    return ffnn_cli_int(cmd, opt, s, to_ll(lo), to_ll(hi), out);
}

int ffnn_cli_limit_number(const char *cmd, const char *opt, const ffnn_config_limit *limit,
                          const char *s, double *out)
{
    return ffnn_cli_number(cmd, opt, s, limit->min, limit->min_open, limit->max,
                           limit->max_open, out);
}

/* An unknown name: the library's message (ffnn_last_error), after the option. */
static int name_error(const char *cmd, const char *opt)
{
    if (opt)
        fprintf(stderr, "%s: %s: %s\n", cmd, opt, ffnn_last_error());
    else
        fprintf(stderr, "%s: %s\n", cmd, ffnn_last_error());
    return 2;
}

#define NAME_PARSER(fn, type, from_name)                                                  \
    int fn(const char *cmd, const char *opt, const char *s, type *out)                    \
    {                                                                                     \
        return from_name(s, out) == FFNN_OK ? 0 : name_error(cmd, opt);                   \
    }

NAME_PARSER(ffnn_cli_loss, ffnn_loss, ffnn_loss_from_name)
NAME_PARSER(ffnn_cli_device, ffnn_device, ffnn_device_from_name)
NAME_PARSER(ffnn_cli_strategy, ffnn_strategy, ffnn_strategy_from_name)
NAME_PARSER(ffnn_cli_precision, ffnn_precision, ffnn_precision_from_name)
NAME_PARSER(ffnn_cli_optimizer, ffnn_optimizer, ffnn_optimizer_from_name)

/* Part i (0-based) of a ':'-separated spec into buf; 0 when it has fewer parts. */
static int spec_part(const char *s, int i, char *buf, size_t size)
{
    for (; i > 0; i--) {
        s = strchr(s, ':');
        if (!s)
            return 0;
        s++;
    }
    size_t n = strcspn(s, ":");
    if (n >= size)
        n = size - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 1;
}

/* Part i of spec as a number in the limits of field; 1 when absent (kept), 0 on
 * a bad value (message printed). */
static int spec_number(const char *cmd, const char *opt, const char *spec, int i,
                       const char *field, double *out)
{
    char part[64], what[96];
    if (!spec_part(spec, i, part, sizeof part))
        return 1;
    snprintf(what, sizeof what, "%s %s (%s)", opt, spec, field);
    return ffnn_cli_limit_number(cmd, what, ffnn_train_config_limit(field), part, out) == 0;
}

/* spec_number into a float field of the config (kept when the part is absent). */
static int spec_float(const char *cmd, const char *opt, const char *spec, int i,
                      const char *field, float *value)
{
    double x = *value;
    const int ok = spec_number(cmd, opt, spec, i, field, &x);
    *value = (float)x;
    return ok;
}

/* The same into an int field, which must be a whole number (what names it in the
 * message: "T_MAX must be an integer"). */
static int spec_whole(const char *cmd, const char *opt, const char *spec, int i,
                      const char *field, const char *what, int *value)
{
    double x = *value;
    int ok = spec_number(cmd, opt, spec, i, field, &x);
    if (ok && x != floor(x))
        ok = 0, fprintf(stderr, "%s: %s: %s must be an integer\n", cmd, opt, what);
    *value = (int)x;
    return ok;
}

int ffnn_cli_lr_schedule(const char *cmd, const char *opt, const char *s, ffnn_train_config *cfg)
{
    char name[32], extra[8];
    spec_part(s, 0, name, sizeof name);
    ffnn_lr_schedule kind;
    if (ffnn_lr_schedule_from_name(name, &kind) != FFNN_OK)
        return name_error(cmd, opt);
    static const int most[] = {0, 2, 2, 1, 2, 2, 4}; /* parameters of each schedule */
    if (spec_part(s, most[kind] + 1, extra, sizeof extra) ||
        ((kind == FFNN_LR_EXPONENTIAL || kind == FFNN_LR_STEP || kind == FFNN_LR_MULTISTEP) &&
         !spec_part(s, 1, extra, sizeof extra))) {
        fprintf(stderr, "%s: %s expects constant | step:STEP_SIZE[:GAMMA] | multistep:M1,M2,..."
                "[:GAMMA] | exponential:GAMMA | cosine[:T_MAX[:ETA_MIN]] | linear[:END_FACTOR"
                "[:EPOCHS]] | plateau[:PATIENCE[:FACTOR[:MIN_LR[:THRESHOLD]]]], found '%s'\n", cmd, opt, s);
        return 2;
    }
    cfg->lr_schedule = kind;
    int ok = 1;
    switch (kind) {
    case FFNN_LR_STEP:
        ok = spec_whole(cmd, opt, s, 1, "lr_step_size", "step size", &cfg->lr_step_size);
        ok = ok && spec_float(cmd, opt, s, 2, "lr_gamma", &cfg->lr_gamma);
        break;
    case FFNN_LR_MULTISTEP: {
        char list[256];
        long long m[FFNN_LR_MILESTONES_MAX];
        spec_part(s, 1, list, sizeof list);
        const int n = ffnn_cli_int_list(list, 1, 1000000, m, FFNN_LR_MILESTONES_MAX);
        for (int i = 1; i < n && ok; i++)
            ok = m[i] > m[i - 1];
        if (n < 1 || !ok) {
            fprintf(stderr, "%s: %s: milestones must be 1 to %d increasing epochs >= 1 "
                    "(e.g. multistep:30,60:0.1), found '%s'\n", cmd, opt,
                    FFNN_LR_MILESTONES_MAX, list);
            return 2;
        }
        for (int i = 0; i < n; i++)
            cfg->lr_milestones[i] = (int)m[i];
        cfg->lr_milestone_count = n;
        ok = spec_float(cmd, opt, s, 2, "lr_gamma", &cfg->lr_gamma);
        break;
    }
    case FFNN_LR_EXPONENTIAL:
        ok = spec_float(cmd, opt, s, 1, "lr_gamma", &cfg->lr_gamma);
        break;
    case FFNN_LR_COSINE:
        ok = spec_whole(cmd, opt, s, 1, "lr_t_max", "T_MAX", &cfg->lr_t_max);
        ok = ok && spec_float(cmd, opt, s, 2, "lr_min", &cfg->lr_min);
        break;
    case FFNN_LR_LINEAR:
        ok = spec_float(cmd, opt, s, 1, "lr_end_factor", &cfg->lr_end_factor);
        ok = ok && spec_whole(cmd, opt, s, 2, "lr_total_iters", "EPOCHS", &cfg->lr_total_iters);
        break;
    case FFNN_LR_PLATEAU:
        ok = spec_whole(cmd, opt, s, 1, "lr_patience", "PATIENCE", &cfg->lr_patience);
        ok = ok && spec_float(cmd, opt, s, 2, "lr_factor", &cfg->lr_factor);
        ok = ok && spec_float(cmd, opt, s, 3, "lr_min", &cfg->lr_min);
        ok = ok && spec_float(cmd, opt, s, 4, "lr_threshold", &cfg->lr_threshold);
        break;
    case FFNN_LR_CONSTANT: break;
    }
    return ok ? 0 : 2;
}

int ffnn_cli_int_list(const char *s, long long lo, long long hi, long long *out, int max)
{
    int n = 0;
    for (const char *p = s;; n++) {
        char *end = NULL;
        if (n == max)
            return -1;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < lo || v > hi)
            return -1;
        out[n] = v;
        if (*end == '\0')
            return n + 1;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

int ffnn_cli_classes(const char *cmd, const char *s, int *a, int *b)
{
    long long pair[2];
    if (ffnn_cli_int_list(s, 0, INT32_MAX, pair, 2) != 2 || pair[0] == pair[1]) {
        fprintf(stderr, "%s: --classes expects two different class numbers >= 0 as A,B, "
                "found '%s'\n", cmd, s);
        return 2;
    }
    *a = (int)pair[0];
    *b = (int)pair[1];
    return 0;
}

char *ffnn_cli_arch_string(const ffnn_model *m)
{
    size_t n = ffnn_model_arch_string(m, NULL, 0) + 1;
    char *s = malloc(n);
    if (s)
        ffnn_model_arch_string(m, s, n);
    return s;
}

/* ------------------------------------------------------------ messages */

int ffnn_cli_fail(const char *cmd, const char *what)
{
    char message[1280];
    ffnn_cli_last_error(message, sizeof message); /* with the CLI's flag names */
    fprintf(stderr, "%s: %s: %s\n", cmd, what, message);
    return 1;
}

int ffnn_cli_unexpected(const char *cmd, const char *arg)
{
    fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", cmd, arg);
    return 2;
}

int ffnn_cli_missing(const char *cmd, const char *option)
{
    fprintf(stderr, "%s: %s is required (see '%s --help')\n", cmd, option, cmd);
    return 2;
}

int ffnn_cli_check_output_path(const char *cmd, const char *opt, const char *path)
{
    if (ffnn_check_output_path(path) != FFNN_OK) {
        fprintf(stderr, "%s: %s: %s\n", cmd, opt, ffnn_last_error());
        return 1;
    }
    return 0;
}
