/*
 * train_run.c - the run of ffnn train (train_run.h): the epoch loop and what it
 * prints and writes - the header lines, one line or JSON object per epoch, the
 * progress bar, the --log and --log-steps CSV files, checkpoints, --save.
 */
#define _POSIX_C_SOURCE 200809L
#include "train_run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model_files.h"
#include "options.h"

#define CMD "ffnn train"

/* ------------------------------------------------------------ progress bar */

typedef struct progress_state {
    int enabled;       /* stderr is a terminal and not --json */
    int epoch, epochs;
    double last_draw;
} progress_state;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw_progress(void *user, size_t step, size_t steps)
{
    progress_state *p = user;
    double now = now_seconds();
    if (!p->enabled || (step != steps && now - p->last_draw < 0.1))
        return;
    p->last_draw = now;
    int width = 30, filled = (int)((double)width * (double)step / (double)steps);
    fprintf(stderr, "\repoch %d/%d [%.*s%*s] %3d%% step %zu/%zu", p->epoch, p->epochs,
            filled, "==============================", width - filled, "",
            (int)(100.0 * (double)step / (double)steps), step, steps);
    fflush(stderr);
}

static void clear_progress(const progress_state *p)
{
    if (p->enabled)
        fprintf(stderr, "\r%*s\r", 79, "");
}

/* The greatest common divisor of a and b. */
static long long gcd_ll(long long a, long long b)
{
    while (b != 0) {
        long long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static void print_epoch(const ffnn_cli_train_options *o, const ffnn_epoch_stats *s,
                        double test_loss, double test_accuracy)
{
    char accuracy[32]; /* regression (float targets, mse): no accuracy */
    if (o->json) {
        if (o->regression)
            snprintf(accuracy, sizeof accuracy, "null");
        else
            snprintf(accuracy, sizeof accuracy, "%.6f", test_accuracy);
        printf("{\"epoch\": %d, \"train_loss\": %.6f, \"test_loss\": %.6f, "
               "\"test_accuracy\": %s, \"seconds\": %.6f, \"images_per_second\": %.1f}\n",
               s->epoch, s->train_loss, test_loss, accuracy, s->seconds,
               s->images_per_second);
    } else {
        if (o->regression)
            snprintf(accuracy, sizeof accuracy, "%7s", "-");
        else
            snprintf(accuracy, sizeof accuracy, "%6.2f%%", 100.0 * test_accuracy);
        printf("epoch %3d/%d  train_loss %.4f  test_loss %.4f  test_acc %s  %8.3f s  "
               "%10.0f img/s\n",
               s->epoch, o->cfg.epochs, s->train_loss, test_loss, accuracy, s->seconds,
               s->images_per_second);
    }
    fflush(stdout);
}

/* Append the last epoch's per-step losses as "epoch,step,loss" rows (step counted
 * from 1 over the whole run); 0 on success. */
static int log_step_losses(FILE *f, const ffnn_trainer *trainer, int epoch, size_t *steps_done)
{
    const double *losses;
    size_t count;
    if (ffnn_trainer_step_losses(trainer, &losses, &count) != FFNN_OK)
        return -1;
    for (size_t i = 0; i < count; i++)
        if (fprintf(f, "%d,%zu,%.9g\n", epoch, ++*steps_done, losses[i]) < 0)
            return -1;
    return fflush(f);
}

/* Append one epoch's row to the --log CSV (accuracy empty for regression) and
 * flush it; 0 on success. */
static int log_epoch(FILE *f, const ffnn_cli_train_options *o, const ffnn_epoch_stats *s,
                     double test_loss, double test_accuracy)
{
    char accuracy[32] = "";
    if (!o->regression)
        snprintf(accuracy, sizeof accuracy, "%.9g", test_accuracy);
    if (fprintf(f, "%d,%.9g,%.9g,%s,%.6f,%.1f\n", s->epoch, s->train_loss, test_loss, accuracy,
                s->seconds, s->images_per_second) < 0)
        return -1;
    return fflush(f);
}

/* The step callback of ffnn train: the progress bar, then checkpoints. */
typedef struct step_context {
    progress_state *progress;
    ffnn_cli_checkpointer *checkpoints;
} step_context;

static int on_step(void *user, ffnn_trainer *trainer, int epoch, size_t step, size_t steps)
{
    step_context *c = user;
    draw_progress(c->progress, step, steps);
    return ffnn_cli_checkpoint_step(c->checkpoints, trainer, epoch, step, steps);
}

/* An error of a data-parallel rank (comm set, more than one rank). Errors every
 * rank gets alike (agreed: a NaN/Inf loss - the step losses are reduced over the
 * ranks - or a checkpoint rank 0 could not write, whose status it broadcasts)
 * are printed by rank 0 and end every rank normally; an error of this rank alone
 * is printed with its rank, then every rank is stopped (MPI_Abort; an in-process
 * GPU group ends the process), since the others would wait for it. */
static int rank_failed(ffnn_comm *comm, const char *what, const char *message, int agreed)
{
    int rank = ffnn_comm_rank(comm), size = ffnn_comm_size(comm);
    if (!agreed || rank == 0)
        fprintf(stderr, "%s: rank %d of %d: %s: %s\n", CMD, rank, size, what, message);
    if (!agreed) {
        fprintf(stderr, "%s: rank %d of %d: stopping every rank\n", CMD, rank, size);
        fflush(stderr);
        ffnn_comm_abort(comm, 1);
        _exit(1); /* an in-process group: the other threads wait for this one */
    }
    return 1;
}

/* An error while running: the message printed (by rank, see rank_failed). */
static int run_failed(ffnn_comm *comm, const char *what, int agreed)
{
    if (ffnn_comm_size(comm) > 1)
        return rank_failed(comm, what, ffnn_last_error(), agreed);
    return ffnn_cli_fail(CMD, what);
}

int ffnn_cli_train_run(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *train,
                       ffnn_dataset *test, const char *data_description, ffnn_comm *comm)
{
    ffnn_trainer *trainer = NULL;
    const int rank = ffnn_comm_rank(comm), ranks = ffnn_comm_size(comm), lead = rank == 0;
    ffnn_train_config cfg = o->cfg;
    if (cfg.steps_per_launch == 0 && (o->checkpoint_every > 0 || o->max_steps > 0)) {
        /* graph/persistent launch many steps at once: make every checkpoint and
         * the --max-steps stop fall on a launch boundary of every epoch */
        long long g = (long long)((ffnn_dataset_count(train) + cfg.batch_size - 1) /
                                  cfg.batch_size);
        if (o->checkpoint_every > 0) g = gcd_ll(g, o->checkpoint_every);
        if (o->max_steps > 0) g = gcd_ll(g, o->max_steps);
        cfg.steps_per_launch = (int)g;
    }
    if (ffnn_trainer_create_parallel(model, train, &cfg, comm, &trainer) != FFNN_OK)
        return run_failed(comm, "setting up training", 0);
    ffnn_comm_set_timing(comm, o->comm_timing);
    char arch[512], device[256];
    ffnn_model_arch_string(model, arch, sizeof arch);
    if (ffnn_trainer_device(trainer) == FFNN_DEVICE_CUDA) {
        char gpu[200];
        ffnn_cuda_device_name(gpu, sizeof gpu);
        snprintf(device, sizeof device, "cuda (%s, %s strategy%s%s)", gpu,
                 ffnn_strategy_name(ffnn_trainer_strategy(trainer)),
                 o->cfg.precision != FFNN_PRECISION_FP32 ? ", " : "",
                 o->cfg.precision != FFNN_PRECISION_FP32
                     ? ffnn_precision_name(o->cfg.precision) : "");
    } else {
        char how[64];
        if (ffnn_trainer_threads(trainer) > 1 || o->cfg.threads != 1)
            snprintf(how, sizeof how, "omp, %d thread%s", ffnn_trainer_threads(trainer),
                     ffnn_trainer_threads(trainer) == 1 ? "" : "s");
        else
            snprintf(how, sizeof how, "reference");
        snprintf(device, sizeof device, "cpu (%s)%s", how,
                 o->cfg.device == FFNN_DEVICE_CPU ? ""
                 : ffnn_has_cuda()                ? ", no CUDA GPU found"
                                                  : ", build without CUDA");
    }
    if (comm) {
        size_t used = strlen(device);
        snprintf(device + used, sizeof device - used, " | data parallel: %d rank%s (%s)",
                 ranks, ranks == 1 ? "" : "s", ffnn_comm_kind(comm));
    }
    FILE *info = !lead ? NULL : o->json ? stderr : stdout; /* rank 0 alone prints */
    if (info)
        fprintf(info, "data: %s (%zu train, %zu test) | device: %s\n", data_description,
                ffnn_dataset_count(train), ffnn_dataset_count(test), device);
    char optimizer[128];
    if (o->cfg.optimizer == FFNN_OPT_MOMENTUM)
        snprintf(optimizer, sizeof optimizer, "momentum %g%s", (double)o->cfg.momentum,
                 o->cfg.nesterov ? " nesterov" : "");
    else if (o->cfg.optimizer == FFNN_OPT_ADAM)
        snprintf(optimizer, sizeof optimizer, "adam (betas %g, %g, eps %g)",
                 (double)o->cfg.beta1, (double)o->cfg.beta2, (double)o->cfg.epsilon);
    else
        snprintf(optimizer, sizeof optimizer, "sgd");
    if (info) {
        fprintf(info, "arch %s, %zu parameters, loss %s, optimizer %s, batch %zu, lr %g, seed %"
                PRIu64 "\n", arch, ffnn_model_parameter_count(model),
                ffnn_loss_name(o->cfg.loss), optimizer, o->cfg.batch_size,
                (double)o->cfg.learning_rate, o->cfg.seed);
        fflush(info);
    }
    progress_state progress = {lead && isatty(2) && !o->json, 0, o->cfg.epochs, 0.0};
    int rc = 0;
    FILE *step_log = NULL;
    size_t steps_done = 0;
    ffnn_cli_checkpointer checkpoints = {o->checkpoint_path, o->checkpoint_every, o->max_steps,
                                         UINT64_MAX, 0, 0, ""};
    step_context context = {&progress, &checkpoints};
    int first_epoch = 1;
    if (o->resume_path &&
        (first_epoch = ffnn_cli_resume_trainer(o->resume_path, trainer, &checkpoints, info)) < 0) {
        ffnn_trainer_free(trainer);
        return 1; /* every rank read the same file: the same outcome, printed by each */
    }
    steps_done = (size_t)(first_epoch - 1) * ffnn_trainer_steps_per_epoch(trainer);
    if (lead && o->log_steps) {
        step_log = fopen(o->log_steps, "w");
        if (!step_log) {
            fprintf(stderr, "ffnn train: --log-steps %s: cannot open for writing: %s\n",
                    o->log_steps, strerror(errno));
            ffnn_trainer_free(trainer);
            return 1;
        }
        fprintf(step_log, "epoch,step,loss\n");
    }
    FILE *epoch_log = NULL; /* --log: opened only now, so a bad invocation keeps the file */
    if (lead && o->log_path) {
        epoch_log = fopen(o->log_path, "w");
        if (!epoch_log || fprintf(epoch_log, "epoch,train_loss,test_loss,test_accuracy,"
                                  "seconds,images_per_second\n") < 0 || fflush(epoch_log) != 0) {
            fprintf(stderr, "ffnn train: --log %s: cannot open for writing: %s\n",
                    o->log_path, strerror(errno));
            if (epoch_log)
                fclose(epoch_log);
            if (step_log)
                fclose(step_log);
            ffnn_trainer_free(trainer);
            return 1;
        }
    }
    for (int e = first_epoch; e <= o->cfg.epochs && rc == 0 && !checkpoints.stopped; e++) {
        ffnn_epoch_stats stats;
        double test_loss = 0, test_accuracy = 0;
        int finished = 0;
        progress.epoch = e;
        ffnn_status st = ffnn_trainer_run_epoch_until(trainer, on_step, &context, &stats,
                                                      &finished);
        clear_progress(&progress);
        if (checkpoints.failed && ranks > 1) {
            rc = rank_failed(comm, "--checkpoint", checkpoints.message, 1);
            break;
        }
        if (checkpoints.failed) {
            fprintf(stderr, "ffnn train: --checkpoint: %s\n", checkpoints.message);
            rc = 1;
            break;
        }
        if (st != FFNN_OK) {
            rc = run_failed(comm, "training", st == FFNN_ERR_NUMERIC);
            break;
        }
        if (!finished) /* --max-steps */
            break;
        if (!lead) { /* rank 0 evaluates, prints and logs; every rank checkpoints */
            if (ffnn_cli_checkpoint_save(&checkpoints, trainer) != 0)
                rc = rank_failed(comm, "--checkpoint", checkpoints.message, 1);
            continue;
        }
        if (ffnn_trainer_evaluate(trainer, test, &test_loss, &test_accuracy) != FFNN_OK) {
            rc = run_failed(comm, "evaluating", 0);
            break;
        }
        print_epoch(o, &stats, test_loss, test_accuracy);
        if (epoch_log && log_epoch(epoch_log, o, &stats, test_loss, test_accuracy) != 0) {
            fprintf(stderr, "ffnn train: --log %s: write failed: %s\n", o->log_path,
                    strerror(errno));
            rc = 1;
        }
        if (step_log && log_step_losses(step_log, trainer, e, &steps_done) != 0) {
            fprintf(stderr, "ffnn train: --log-steps %s: write failed: %s\n", o->log_steps,
                    strerror(errno));
            rc = 1;
        }
        if (rc != 0 && ranks > 1) /* a log rank 0 could not write: the others wait */
            rank_failed(comm, "logging", "see the message above", 0);
        if (rc == 0 && ffnn_cli_checkpoint_save(&checkpoints, trainer) != 0) {
            if (ranks > 1)
                rc = rank_failed(comm, "--checkpoint", checkpoints.message, 1);
            else
                fprintf(stderr, "ffnn train: --checkpoint: %s\n", checkpoints.message);
            rc = 1;
        }
    }
    if (rc == 0 && info && o->comm_timing) {
        uint64_t timed = 0;
        double span = 0, exposed = 0;
        ffnn_comm_timing(comm, &timed, &span, &exposed);
        if (timed > 0)
            fprintf(info, "all-reduce (rank 0, %" PRIu64 " steps timed): %.4f ms/step from the "
                    "first bucket to the sums, %.4f ms/step not overlapped\n", timed,
                    span / (double)timed, exposed / (double)timed);
        else
            fprintf(info, "all-reduce: no step timed (%s)\n", comm ? "steps inside CUDA graphs "
                    "are not timed: --strategy tiled, fused or cublas --steps-per-launch 1"
                    : "one process: no all-reduce");
    }
    if (rc == 0 && checkpoints.stopped && info)
        fprintf(info, "stopped at step %lld of the run (--max-steps)%s%s\n", o->max_steps,
                o->checkpoint_path ? "; checkpoint " : "",
                o->checkpoint_path ? o->checkpoint_path : "");
    if (step_log && fclose(step_log) != 0 && rc == 0) {
        fprintf(stderr, "ffnn train: --log-steps %s: %s\n", o->log_steps, strerror(errno));
        rc = 1;
    }
    if (epoch_log && fclose(epoch_log) != 0 && rc == 0) {
        fprintf(stderr, "ffnn train: --log %s: %s\n", o->log_path, strerror(errno));
        rc = 1;
    }
    if (rc == 0 && o->save_path && lead)
        rc = ffnn_cli_save_trained(trainer, model, o->save_path, o->cfg.loss, info);
    ffnn_trainer_free(trainer);
    return rc;
}

