/* options.c - the option loop and the value parsers every command shares
 * (options.h); messages name the command and the option. */
#define _POSIX_C_SOURCE 200809L
#include "options.h"

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
    fprintf(stderr, "%s: %s: %s\n", cmd, what, ffnn_last_error());
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
