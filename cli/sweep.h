/* sweep.h - what the files of ffnn sweep share (cli/cmd_sweep.c: the command;
 * sweep_parse.c: its options and the configurations they expand to; sweep_train.c:
 * training, successive halving; sweep_rank.c: evaluation, ranking, the table;
 * sweep_save.c: the model files; sweep_ranks.c: the ranks of an MPI launch). */
#ifndef FFNN_CLI_SWEEP_H
#define FFNN_CLI_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"
#include "options.h"
#include "train_run.h"

#define SWEEP_CMD "ffnn sweep"
#define SWEEP_MAX_MODELS 100000
#define SWEEP_MAX_VALUES 256
#define SWEEP_MAX_FOLDS 100

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
    const char *save_all;          /* --save-all DIR                                */
    long long ensemble_k;          /* --ensemble K FILE                             */
    const char *ensemble_path;
    int json;
    long long halving, min_epochs; /* --halving ETA (0: off), --min-epochs R        */
    char seeds[SWEEP_MAX_VALUES * 4][24]; /* the integers of --seed A-B ranges */
    int gpus;                      /* --gpus N of one process (0: one GPU)          */
    /* The ranks of an MPI launch (sweep_ranks.c): configuration k trains on rank
     * k % ranks, all its folds there; comm NULL and ranks 1 in one process. */
    ffnn_comm *comm;
    int rank, ranks;
    FILE *captured;                /* ranks > 0: stderr until the ranks agree       */
    int saved_stderr;              /*   (-1: not captured)                          */
} sweep_cli;

/* 1 when configuration k trains on this rank. */
static inline int ffnn_sweep_owns(const sweep_cli *s, long long k)
{
    return s->ranks <= 1 || k % s->ranks == s->rank;
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

typedef struct ranked {
    long long stage;               /* --halving: the rung that dropped it (LLONG_MAX: none); higher first */
    double key;                    /* rank_value: lower is better                   */
    long long k;                   /* the configuration                             */
} ranked;

/* sweep_parse.c */
/* argv into s: sweep options and axes taken out, the rest kept in s->fixed; -1
 * after --help (printed), else an exit status. */
int ffnn_sweep_parse_command_line(int argc, char **argv, sweep_cli *s);
/* The configurations of s into *out [*count] (each ffnn train's options parsed). */
int ffnn_sweep_build_configs(const sweep_cli *s, config **out, long long *count);
void ffnn_sweep_free_configs(config *c, long long n);

/* sweep_train.c: every model of every fold in one sweep; *stopped 1 after a signal. */
int ffnn_sweep_train_all(const sweep_cli *s, config *c, long long n, folds *d, int *stopped);

/* sweep_rank.c */
int ffnn_sweep_by_rank(const void *a, const void *b); /* qsort of ranked */
/* Each configuration of this rank on its folds' validation sets and the test set. */
int ffnn_sweep_evaluate_all(const sweep_cli *s, config *c, long long n, const folds *d);
/* order[n]: the configurations, best first. */
int ffnn_sweep_rank_configs(const sweep_cli *s, const config *c, long long n, long long *order);
void ffnn_sweep_print_results(const sweep_cli *s, const config *c, const long long *order,
                              long long n, FILE *f, int csv);
int ffnn_sweep_write_csv(const sweep_cli *s, const config *c, const long long *order,
                         long long n);

/* sweep_save.c */
/* --save-all DIR before training: DIR made (or an existing directory that holds
 * nothing but conf-<N>.safetensors files, N <= n, of an earlier --save-all) and
 * writable. 0, or an exit status with the message printed. */
int ffnn_sweep_prepare_save_all(const char *dir, long long n);
/* After ranking: --save-best, --save-all and --ensemble written (order: best first). */
int ffnn_sweep_save(const sweep_cli *s, const config *c, const long long *order, long long n);

/* sweep_ranks.c */
/* Under mpirun: the ranks' communicator (MPI over host memory, whatever the
 * device: the ranks only exchange results), stdout muted on ranks > 0 and their
 * stderr captured until ffnn_sweep_ranks_agree. One process: nothing. 0, or an
 * exit status with the message printed (rank 0 alone). */
int ffnn_sweep_ranks_begin(sweep_cli *s);
/* After the steps every rank makes alike (options, configurations, data, models):
 * the ranks' statuses agreed (collective). The captured stderr of a rank > 0 is
 * printed when it is the first rank that failed and rank 0 did not (else rank 0's
 * messages say it). Returns rc, or 1 when another rank failed. */
int ffnn_sweep_ranks_agree(sweep_cli *s, int rc);
/* The same after a step that may fail on one rank alone (collective); rank 0 names
 * the first rank that failed (its message is above). Returns rc, or 1. */
int ffnn_sweep_ranks_status(const sweep_cli *s, int rc, const char *step);
/* --threads 0 under mpirun: the cores of the node shared by its ranks; on cuda each
 * rank on the GPU of its place among its node's ranks (modulo the GPUs visible). */
int ffnn_sweep_ranks_place(const sweep_cli *s, config *c, long long n);
/* Every configuration's results (state, metrics, seconds, dropped_at) from the rank
 * that trained it to every rank (collective). */
int ffnn_sweep_ranks_gather(const sweep_cli *s, config *c, long long n);
/* The parameters of the models rank 0 writes (--save-best, --save-all, --ensemble:
 * order, best first) from the ranks that trained them (collective). */
int ffnn_sweep_ranks_models(const sweep_cli *s, config *c, long long n, const long long *order);
void ffnn_sweep_ranks_end(sweep_cli *s);

#endif
