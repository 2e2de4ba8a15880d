/* cmd_sweep.c - ffnn sweep: many configurations of ffnn train trained at once in
 * one process (ffnn_sweep_*), or spread over GPUs (--gpus) or the ranks of an MPI
 * launch (sweep_ranks.c), then ranked.
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
#include "sweep.h"
#include "train_run.h"

#define CMD SWEEP_CMD

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
    "  --save-all DIR    every configuration's model as DIR/conf-<N>.safetensors (N: the\n"
    "                    conf column; DIR made, or one holding only such files)\n"
    "  --ensemble K FILE the best K models as one ensemble model file: its prediction\n"
    "                    is the mean of theirs (probabilities; mse: outputs); ffnn\n"
    "                    predict, eval, info and export take it\n"
    "  --threads N       models trained at the same time (on cuda: host threads\n"
    "                    queueing their models' steps at once; default: all cores)\n"
    "  --gpus N|all      with --device cuda: the models spread over N GPUs of this\n"
    "                    process (model k on GPU (k-1) % N; --strategy batched: one\n"
    "                    engine per GPU), each trained as on one GPU\n"
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
    "Not in a sweep: --save, --log, --log-steps, --checkpoint, --resume, --max-steps\n"
    "(they belong to one run).\n"
    "mpirun -np R ffnn sweep ...: configuration k trains on rank (k-1) % R (all its\n"
    "folds there; on cuda the GPU of the rank's place on its node), no all-reduce;\n"
    "rank 0 prints the one ranked table and writes the files.\n"
    "SIGINT/SIGTERM: the models stop after the current epoch and are ranked as they\n"
    "are (--csv, --save-best, --save-all, --ensemble written); exit status 130.\n";

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

/* --gpus N (-1: all) against the GPUs visible; 0, or 1 with the message. */
static int check_gpus(sweep_cli *s)
{
    int visible = ffnn_cuda_device_count();
    if (s->gpus == 0 || (s->gpus > 0 && s->gpus <= visible && s->gpus <= FFNN_SWEEP_MAX_GPUS) ||
        (s->gpus < 0 && visible > 0)) {
        s->gpus = s->gpus < 0 ? (visible < FFNN_SWEEP_MAX_GPUS ? visible : FFNN_SWEEP_MAX_GPUS)
                              : s->gpus;
        return 0;
    }
    char asked[32];
    snprintf(asked, sizeof asked, s->gpus < 0 ? "all" : "%d", s->gpus);
    if (s->gpus > FFNN_SWEEP_MAX_GPUS && visible >= s->gpus)
        fprintf(stderr, "%s: --gpus %s: at most %d GPUs in a sweep\n", CMD, asked,
                FFNN_SWEEP_MAX_GPUS);
    else
        fprintf(stderr, "%s: --gpus %s: %d CUDA GPU%s found%s\n", CMD, asked, visible,
                visible == 1 ? " was" : "s were",
                ffnn_has_cuda() ? "" : " (this build of ffnn has no CUDA)");
    return 1;
}

/* rc: the status of the options so far (every rank has it alike under mpirun). */
static int sweep_run(sweep_cli *s, config *c, long long n, int rc)
{
    ffnn_dataset *sets[3] = {NULL, NULL, NULL};
    folds d;
    memset(&d, 0, sizeof d);
    char arch[FFNN_CLI_ARCH_SIZE], description[1024];
    if (rc == 0)
        rc = check_gpus(s);
    if (rc == 0)
        rc = ffnn_cli_train_data(&c[0].o, &sets[0], &sets[1], &sets[2], arch, sizeof arch,
                                 description, sizeof description);
    if (rc == 0 && !c[0].o.quiet && s->rank == 0)
        fprintf(stderr, "%s: %s\n", CMD, description);
    if (rc == 0)
        rc = make_folds(&c[0].o, sets, &d);
    if (rc == 0)
        rc = make_models(c, n, arch, &d);
    rc = ffnn_sweep_ranks_agree(s, rc); /* under mpirun: every rank got this far */
    if (rc == 0)
        rc = ffnn_sweep_ranks_place(s, c, n);
    int stopped = 0;
    if (rc == 0)
        rc = ffnn_sweep_train_all(s, c, n, &d, &stopped);
    if (rc == 0)
        rc = ffnn_sweep_ranks_status(s, ffnn_sweep_evaluate_all(s, c, n, &d),
                                     "evaluating its models");
    if (rc == 0)
        rc = ffnn_sweep_ranks_gather(s, c, n);
    long long *order = rc == 0 ? malloc((size_t)n * sizeof *order) : NULL;
    if (rc == 0 && !order)
        rc = (fprintf(stderr, "%s: out of memory\n", CMD), 1);
    if (rc == 0) /* every rank ranks alike: it knows whose models rank 0 writes */
        rc = ffnn_sweep_rank_configs(s, c, n, order);
    if (rc == 0)
        rc = ffnn_sweep_ranks_models(s, c, n, order);
    if (rc == 0 && s->rank == 0) {
        ffnn_sweep_print_results(s, c, order, n, stdout, 0);
        if (s->csv_path)
            rc = ffnn_sweep_write_csv(s, c, order, n);
        if (rc == 0)
            rc = ffnn_sweep_save(s, c, order, n);
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
    int rc = ffnn_sweep_ranks_begin(&s); /* under mpirun: the ranks' communicator */
    if (rc != 0)
        return rc;
    rc = ffnn_sweep_parse_command_line(argc, argv, &s);
    if (rc == 0)
        rc = ffnn_sweep_build_configs(&s, &c, &n);
    if (rc == 0)
        s.gpus = c[0].o.gpus;
    rc = sweep_run(&s, c, n, rc);
    ffnn_sweep_free_configs(c, n);
    ffnn_sweep_ranks_end(&s);
    for (int i = 0; i < s.axis_count; i++)
        free(s.axes[i].text);
    free(s.fixed);
    return rc < 0 ? 0 : rc;
}
