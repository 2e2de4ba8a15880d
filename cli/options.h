/* options.h - what every command parses the same way: the getopt loop (--help,
 * unknown options), integers and numbers in a range (a train option's range read
 * from the library's limits table, ffnn_train_config_limit), names through the
 * library's ffnn_*_from_name, lists of integers; and the few messages every
 * command prints alike.
 *
 * Messages go to stderr and start with the command ("ffnn train: ..."). Functions
 * that report a usage error return 2 (the exit status of a usage error); those
 * that report an error return 1; success is 0. */
#ifndef FFNN_CLI_OPTIONS_H
#define FFNN_CLI_OPTIONS_H

#include <getopt.h>

#include "ffnn.h"

/* ------------------------------------------------------------ the option loop */

/* One option of a command: c is its val in the command's struct option table, arg
 * its value (NULL for a flag). Returns 0, or 2 after printing why. */
typedef int (*ffnn_cli_option_fn)(void *ctx, int c, const char *arg);

/* Run getopt_long over argv (argv[0], the command's word, is replaced by cmd, e.g.
 * "ffnn train", so that getopt's own messages name the command). longopts must hold
 * {"help", no_argument, NULL, 'h'} and end with the zero row.
 *   -h / --help: prints usage on stdout and returns -1 (the caller exits 0);
 *   an unknown option or a missing value: getopt's message, then
 *     "CMD: see 'CMD --help'", returns 2;
 *   every other option goes to on_option; a non-zero return stops and is returned.
 * Returns 0 with *operands set to the index of the first operand (getopt moves
 * operands after the options). */
int ffnn_cli_getopt(const char *cmd, int argc, char **argv, const struct option *longopts,
                    const char *usage, ffnn_cli_option_fn on_option, void *ctx,
                    int *operands);

/* ------------------------------------------------------------ values */

/* s, a whole decimal integer in [lo, hi], into *out; else prints
 * "CMD: OPT expects an integer in [LO, HI], found 'S'" and returns 2. */
int ffnn_cli_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
                 long long *out);

/* s, a finite number between lo and hi, into *out; lo_open / hi_open: that bound
 * itself is refused. Else prints "CMD: OPT expects a number in (LO, HI], found 'S'"
 * (brackets as the bounds) and returns 2. */
int ffnn_cli_number(const char *cmd, const char *opt, const char *s, double lo, int lo_open,
                    double hi, int hi_open, double *out);

/* The same with the range of a limit of the library's table (ffnn_train_config_limit):
 * the integers, or the numbers, that the library accepts for that field. */
int ffnn_cli_limit_int(const char *cmd, const char *opt, const ffnn_config_limit *limit,
                       const char *s, long long *out);
int ffnn_cli_limit_number(const char *cmd, const char *opt, const ffnn_config_limit *limit,
                          const char *s, double *out);

/* Names through the library (ffnn_*_from_name). An unknown name prints
 * "CMD: OPT: <the library's message>" and returns 2; with opt NULL, "CMD: <the
 * library's message>" (which names the kind of value: "unknown loss 'x' ..."). */
int ffnn_cli_loss(const char *cmd, const char *opt, const char *s, ffnn_loss *out);
int ffnn_cli_device(const char *cmd, const char *opt, const char *s, ffnn_device *out);
int ffnn_cli_strategy(const char *cmd, const char *opt, const char *s, ffnn_strategy *out);
int ffnn_cli_precision(const char *cmd, const char *opt, const char *s, ffnn_precision *out);
int ffnn_cli_optimizer(const char *cmd, const char *opt, const char *s, ffnn_optimizer *out);

/* --lr-schedule SPEC into cfg's schedule fields (each value checked against the
 * library's limits table):
 *   constant | step:STEP_SIZE[:GAMMA] | multistep:M1,M2,...[:GAMMA] |
 *   exponential:GAMMA | cosine[:T_MAX[:ETA_MIN]] | linear[:END_FACTOR[:EPOCHS]] |
 *   plateau[:PATIENCE[:FACTOR[:MIN_LR[:THRESHOLD]]]]
 * T_MAX and EPOCHS default to cfg->epochs (set them after --epochs is known:
 * epochs_default). 0, or 2 with the message printed. */
int ffnn_cli_lr_schedule(const char *cmd, const char *opt, const char *s, ffnn_train_config *cfg);

/* s, a comma-separated list of 1 to max decimal integers each in [lo, hi], into out
 * [max]. Returns the count, or -1 on anything else. Prints nothing: the caller's
 * message says what the list means (e.g. --classes A,B). */
int ffnn_cli_int_list(const char *s, long long lo, long long hi, long long *out, int max);

/* --classes A,B: two different class numbers >= 0 into *a, *b. 0, or 2 with the
 * message printed. */
int ffnn_cli_classes(const char *cmd, const char *s, int *a, int *b);

/* m's canonical architecture string, malloc'd at its full length (free it);
 * NULL when out of memory. */
char *ffnn_cli_arch_string(const ffnn_model *m);

/* ------------------------------------------------------------ messages */

/* "CMD: WHAT: <the library's last error>"; returns 1. */
int ffnn_cli_fail(const char *cmd, const char *what);

/* An output file option (--save, --checkpoint, --log, --log-steps): 0 when a
 * save to path can create its temporary file (ffnn_check_output_path: created
 * and removed again), else 1 after a message "CMD: OPT: PATH: ..." (CMD e.g.
 * "ffnn train") on stderr. Checked before any data is read or training starts. */
int ffnn_cli_check_output_path(const char *cmd, const char *opt, const char *path);

/* "CMD: unexpected argument 'ARG' (see --help)"; returns 2. */
int ffnn_cli_unexpected(const char *cmd, const char *arg);

/* "CMD: OPTION is required (see 'CMD --help')"; returns 2. */
int ffnn_cli_missing(const char *cmd, const char *option);

#endif
