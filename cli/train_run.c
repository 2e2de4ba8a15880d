/*
 * train_run.c - the run of ffnn train (train_run.h): the epoch loop and what it
 * prints and writes - the header lines, one line or JSON object per epoch, the
 * progress bar, the --log and --log-steps CSV files, checkpoints, --save.
 */
#define _POSIX_C_SOURCE 200809L
#include "train_run.h"
#include "tabular.h"
#include "train_tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"
#include "messages.h"
#include "model_files.h"
#include "options.h"

#define CMD "ffnn train"

/* ------------------------------------------------------------ progress bar */

typedef struct progress_state {
    int enabled;       /* stderr is a terminal, not --json, not --quiet */
    int epoch, epochs;
    double last_draw;
    double start;      /* when the first step of this process was drawn (0: not yet) */
    int start_epoch;   /* its epoch and step: the ETA's rate counts from there      */
    size_t start_step;
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
    if (p->start == 0.0) {
        p->start = now;
        p->start_epoch = p->epoch;
        p->start_step = step;
    }
    /* ETA of the run: the steps left at the rate since the first drawn step (evaluations
     * between epochs included) */
    double done = (double)(p->epoch - p->start_epoch) * (double)steps + (double)step -
                  (double)p->start_step;
    double left = (double)(p->epochs - p->epoch) * (double)steps + (double)(steps - step);
    char eta[32] = "";
    if (done > 0 && now - p->start > 0.5) {
        long s = (long)((now - p->start) / done * left + 0.5);
        if (s >= 3600)
            snprintf(eta, sizeof eta, " ETA %ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
        else
            snprintf(eta, sizeof eta, " ETA %ld:%02ld", s / 60, s % 60);
    }
    int width = 30, filled = (int)((double)width * (double)step / (double)steps);
    fprintf(stderr, "\repoch %d/%d [%.*s%*s] %3d%% step %zu/%zu%s", p->epoch, p->epochs,
            filled, "==============================", width - filled, "",
            (int)(100.0 * (double)step / (double)steps), step, steps, eta);
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

/* What an epoch line reports besides training: the validation set (every
 * epoch when there is one) or else the test set, by loss and accuracy (device,
 * the network's units) and, for regression, the metrics in the targets' units. */
typedef struct epoch_report {
    const char *set;      /* "val", "test" or NULL (nothing held out)       */
    double loss, accuracy;
    const ffnn_metrics *reg; /* regression metrics of the set, or NULL     */
} epoch_report;

static void print_epoch(const ffnn_cli_train_options *o, const ffnn_epoch_stats *s,
                        const epoch_report *r)
{
    char accuracy[32]; /* regression (float targets, mse): no accuracy */
    int old = r->set && !strcmp(r->set, "test"); /* the line without a validation set */
    if (o->json) {
        if (o->regression)
            snprintf(accuracy, sizeof accuracy, "null");
        else
            snprintf(accuracy, sizeof accuracy, "%.6f", r->accuracy);
        printf("{\"epoch\": %d, \"train_loss\": %.6f", s->epoch, s->train_loss);
        if (r->set)
            printf(", \"%s_loss\": %.6f, \"%s_accuracy\": %s", r->set, r->loss, r->set,
                   accuracy);
        if (r->reg)
            printf(", \"%s_mse\": %.6g, \"%s_rmse\": %.6g, \"%s_mae\": %.6g, \"%s_r2\": %.6f",
                   r->set, r->reg->mse, r->set, r->reg->rmse, r->set, r->reg->mae, r->set,
                   r->reg->r2);
        printf(", \"seconds\": %.6f, \"images_per_second\": %.1f, \"learning_rate\": %.9g}\n",
               s->seconds, s->images_per_second, s->learning_rate);
    } else {
        if (o->regression)
            snprintf(accuracy, sizeof accuracy, "%7s", "-");
        else
            snprintf(accuracy, sizeof accuracy, "%6.2f%%", 100.0 * r->accuracy);
        printf("epoch %3d/%d  train_loss %.4f", s->epoch, o->cfg.epochs, s->train_loss);
        if (r->set && (old || !o->regression))
            printf("  %s_loss %.4f  %s_acc %s", r->set, r->loss, r->set, accuracy);
        else if (r->set)
            printf("  %s_loss %.4f", r->set, r->loss);
        if (r->reg)
            printf("  %s_rmse %.4g  %s_mae %.4g  %s_r2 %.4f", r->set, r->reg->rmse, r->set,
                   r->reg->mae, r->set, r->reg->r2);
        printf("  %8.3f s  %10.0f img/s  lr %.4g\n", s->seconds, s->images_per_second,
               s->learning_rate);
    }
    fflush(stdout);
}

/* --print-every N / --quiet: the epoch lines printed (every: 1 each epoch, N > 1 the
 * run's first epoch and every N-th, 0 none) and the last one held back, printed when the
 * run ends (epoch_line_flush) so that the last epoch's line is always there. */
typedef struct epoch_lines {
    int every;
    int pending;
    ffnn_epoch_stats stats;
    epoch_report report;
    ffnn_metrics reg;
} epoch_lines;

static void epoch_line(const ffnn_cli_train_options *o, epoch_lines *l, const ffnn_epoch_stats *s,
                       const epoch_report *r, int first)
{
    if (l->every == 1 || (l->every > 1 && (first || s->epoch % l->every == 0))) {
        print_epoch(o, s, r);
        l->pending = 0;
        return;
    }
    l->stats = *s;
    l->report = *r;
    if (r->reg) {
        l->reg = *r->reg;
        l->report.reg = &l->reg;
    }
    l->pending = 1;
}

static void epoch_line_flush(const ffnn_cli_train_options *o, epoch_lines *l)
{
    if (l->pending)
        print_epoch(o, &l->stats, &l->report);
    l->pending = 0;
}

/* The final line of the test set when a validation set chose the epochs. */
static void print_test(const ffnn_cli_train_options *o, const ffnn_metrics *m, FILE *info)
{
    if (o->json) {
        if (o->regression)
            printf("{\"test_loss\": %.6f, \"test_mse\": %.6g, \"test_rmse\": %.6g, "
                   "\"test_mae\": %.6g, \"test_r2\": %.6f, \"test_count\": %zu}\n", m->loss,
                   m->mse, m->rmse, m->mae, m->r2, m->count);
        else
            printf("{\"test_loss\": %.6f, \"test_accuracy\": %.6f, \"test_count\": %zu}\n",
                   m->loss, m->accuracy, m->count);
    } else if (o->regression) {
        fprintf(info, "test (%zu samples, once, after training): mse %.6g  rmse %.6g  mae %.6g  "
                "r2 %.4f\n", m->count, m->mse, m->rmse, m->mae, m->r2);
    } else {
        fprintf(info, "test (%zu samples, once, after training): test_loss %.4f  test_acc "
                "%.2f%%\n", m->count, m->loss, 100.0 * m->accuracy);
    }
    fflush(stdout);
    fflush(info);
}

/* Append the last epoch's per-step losses as "epoch,step,loss" rows (step counted
 * from 1 over the whole run); 0 on success. */
static int log_step_losses(FILE *f, const ffnn_trainer *trainer, int epoch, size_t *steps_done)
{
    const double *losses;
    const float *norms;
    size_t count, norm_count;
    if (ffnn_trainer_step_losses(trainer, &losses, &count) != FFNN_OK ||
        ffnn_trainer_step_grad_norms(trainer, &norms, &norm_count) != FFNN_OK)
        return -1;
    for (size_t i = 0; i < count; i++) {
        if (fprintf(f, "%d,%zu,%.9g", epoch, ++*steps_done, losses[i]) < 0 ||
            (norm_count == count && fprintf(f, ",%.9g", (double)norms[i]) < 0) ||
            fputc('\n', f) == EOF)
            return -1;
    }
    return fflush(f);
}

/* Append one epoch's row to the --log CSV (accuracy empty for regression) and
 * flush it; 0 on success. */
static int log_epoch(FILE *f, const ffnn_cli_train_options *o, const ffnn_epoch_stats *s,
                     const epoch_report *r)
{
    char accuracy[32] = "", loss[32] = "";
    if (!o->regression && r->set)
        snprintf(accuracy, sizeof accuracy, "%.9g", r->accuracy);
    if (r->set)
        snprintf(loss, sizeof loss, "%.9g", r->loss);
    if (fprintf(f, "%d,%.9g,%s,%s,%.6f,%.1f,%.9g\n", s->epoch, s->train_loss, loss, accuracy,
                s->seconds, s->images_per_second, s->learning_rate) < 0)
        return -1;
    return fflush(f);
}

/* The step callback of ffnn train: the progress bar, then checkpoints; an
 * interrupt (interrupt.h) stops the epoch after this step. */
typedef struct step_context {
    progress_state *progress;
    ffnn_cli_checkpointer *checkpoints;
} step_context;

static int on_step(void *user, ffnn_trainer *trainer, int epoch, size_t step, size_t steps)
{
    step_context *c = user;
    draw_progress(c->progress, step, steps);
    return ffnn_cli_checkpoint_step(c->checkpoints, trainer, epoch, step, steps) ||
           ffnn_cli_interrupted();
}

/* ------------------------------------------------------------ log files */

/* Open one log for writing (created, not truncated): a symbolic link another
 * account could have planted is refused (ffnn_check_path_links); a name that
 * is no link now is opened with O_NOFOLLOW, so a link planted meanwhile is not
 * followed; the file is locked (flock, advisory) so that a second run writing
 * it is refused rather than mixing its rows in. fd, or -1 with the message. */
static int open_log(const char *flag, const char *path)
{
    int is_link = 0, fd;
    if (ffnn_check_path_links(path, &is_link) != FFNN_OK) {
        fprintf(stderr, "ffnn train: %s %s\n", flag, ffnn_last_error());
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (is_link ? 0 : O_NOFOLLOW), 0666);
    if (fd < 0) {
        fprintf(stderr, "ffnn train: %s %s: cannot open for writing: %s\n", flag, path,
                errno == ELOOP ? "a symbolic link appeared there (not followed)"
                               : strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        fprintf(stderr, "ffnn train: %s %s: %s%s\n", flag, path,
                busy ? "another run (or the other log of this one) is writing this file"
                     : "cannot lock: ", busy ? ": give each log its own file" : strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Open the --log and --log-steps files (either may be NULL): both are opened
 * (created, not truncated) and locked first and truncated only when both
 * opened, so a failure leaves every file as it was. 0, or 1 with the message
 * printed. */
static int open_logs(const char *path[2], const char *flag[2], FILE *out[2])
{
    int fd[2] = {-1, -1};
    for (int i = 0; i < 2; i++) {
        if (!path[i])
            continue;
        fd[i] = open_log(flag[i], path[i]);
        if (fd[i] < 0) {
            if (i == 1 && fd[0] >= 0)
                close(fd[0]);
            return 1;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (fd[i] < 0)
            continue;
        if (ftruncate(fd[i], 0) != 0 || !(out[i] = fdopen(fd[i], "w"))) {
            fprintf(stderr, "ffnn train: %s %s: cannot open for writing: %s\n", flag[i],
                    path[i], strerror(errno));
            for (int k = 0; k < 2; k++)
                if (out[k])
                    fclose(out[k]);
                else if (fd[k] >= 0 && k >= i)
                    close(fd[k]);
            out[0] = out[1] = NULL;
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ interrupts */

/* 1 when arg needs quoting for a POSIX shell. */
static int needs_quotes(const char *arg)
{
    if (!*arg)
        return 1;
    for (const char *p = arg; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("-_./:=,+@%", *p)))
            return 1;
    return 0;
}

/* arg for a POSIX shell: as is, or in single quotes. */
static void print_shell_word(FILE *f, const char *arg)
{
    if (!needs_quotes(arg)) {
        fputs(arg, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = arg; *p; p++)
        if (*p == '\'')
            fputs("'\\''", f);
        else if ((unsigned char)*p < 0x20 || *p == 0x7f)
            fprintf(f, "'$'\\x%02x''", (unsigned char)*p);
        else
            fputc(*p, f);
    fputc('\'', f);
}

/* The command that continues this run from checkpoint: this command line
 * without --resume and --init (and their values), then --resume checkpoint. */
static void print_resume_command(FILE *f, const ffnn_cli_train_options *o, const char *checkpoint)
{
    fputs("ffnn train", f);
    for (int i = 1; i < o->argc; i++) {
        const char *a = o->argv[i];
        if (!strcmp(a, "--resume") || !strcmp(a, "--init")) {
            i++;
            continue;
        }
        if (!strncmp(a, "--resume=", 9) || !strncmp(a, "--init=", 7))
            continue;
        fputc(' ', f);
        print_shell_word(f, a);
    }
    fputs(" --resume ", f);
    print_shell_word(f, checkpoint);
    fputc('\n', f);
}

/* After an interrupt: the checkpoint and the model (marked interrupted), where
 * the run stopped and how to resume. Returns the exit status (130, or 1 when a
 * save failed). */
static int stop_interrupted(const ffnn_cli_train_options *o, ffnn_trainer *trainer,
                            ffnn_model *model, ffnn_cli_checkpointer *checkpoints, FILE *info)
{
    int epoch = 0, rc = FFNN_CLI_EXIT_INTERRUPTED;
    size_t step = 0, steps = ffnn_trainer_steps_per_epoch(trainer);
    char where[128];
    const char *sig = ffnn_cli_signal_name(ffnn_cli_interrupted());
    unsigned long long global;

    ffnn_trainer_position(trainer, &epoch, &step);
    global = epoch == 0 ? 0 : (unsigned long long)(epoch - 1) * steps + step;
    snprintf(where, sizeof where, "%s at epoch %d, step %zu of %zu (step %llu of the run)", sig,
             epoch, step, steps, global);
    fprintf(stderr, "ffnn train: interrupted by %s: stopping\n", where);
    if (o->checkpoint_path && ffnn_cli_checkpoint_save(checkpoints, trainer) != 0) {
        fprintf(stderr, "ffnn train: --checkpoint: %s\n", checkpoints->message);
        rc = 1;
    }
    if (o->save_path) {
        if (ffnn_trainer_sync_model(trainer) != FFNN_OK ||
            ffnn_model_save_interrupted(model, o->save_path, o->cfg.loss, where) != FFNN_OK) {
            fprintf(stderr, "ffnn train: --save: %s\n", ffnn_last_error());
            rc = 1;
        } else {
            fprintf(info, "saved the model to %s (marked interrupted: %s)\n", o->save_path,
                    where);
        }
    }
    if (o->checkpoint_path && !checkpoints->failed) {
        fprintf(info, "checkpoint %s holds step %llu of the run; resume with:\n  ",
                o->checkpoint_path, global);
        print_resume_command(info, o, o->checkpoint_path);
    } else if (!o->checkpoint_path) {
        fprintf(info, "no --checkpoint: this run cannot be resumed%s\n",
                o->save_path ? " (the model saved is the state when it stopped)" : "");
    }
    fflush(info);
    return rc;
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
    if (ffnn_comm_size(comm) > 1) {
        char message[1280];
        ffnn_cli_last_error(message, sizeof message); /* with the CLI's flag names */
        return rank_failed(comm, what, message, agreed);
    }
    return ffnn_cli_fail(CMD, what);
}

static int run(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *sets[3],
               ffnn_dataset *std[3], const char *data_description, ffnn_comm *comm);

/* The training set's class names into the model (padded with "#k" when the
 * network has more outputs than the data has classes). 0, or 1 with the message. */
static int keep_class_names(ffnn_model *model, const ffnn_dataset *train)
{
    int classes = ffnn_model_class_count(model), have = ffnn_dataset_classes(train);
    if (!ffnn_dataset_class_name(train, 0) || ffnn_dataset_target_width(train) || have > classes)
        return 0;
    const char **names = calloc((size_t)classes, sizeof *names);
    char (*pad)[16] = calloc((size_t)classes, sizeof *pad);
    int rc = !names || !pad;
    for (int c = 0; !rc && c < classes; c++) {
        snprintf(pad[c], sizeof pad[c], "#%d", c);
        names[c] = c < have ? ffnn_dataset_class_name(train, c) : pad[c];
    }
    if (!rc && ffnn_model_set_class_names(model, names, classes) != FFNN_OK)
        rc = ffnn_cli_fail(CMD, "class names");
    free(names);
    free(pad);
    return rc;
}

/* --standardize: the statistics of train into the model; *_s the copies the
 * trainer sees (the originals when not standardising). 0, or 1 with the message. */
static int standardize(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *sets[3],
                       ffnn_dataset *std[3])
{
    for (int i = 0; i < 3; i++)
        std[i] = sets[i];
    if (!o->standardize)
        return 0;
    if (ffnn_model_fit_standardization(model, sets[0], o->regression) != FFNN_OK)
        return ffnn_cli_fail(CMD, "--standardize");
    for (int i = 0; i < 3; i++) {
        std[i] = NULL;
        if (sets[i] && ffnn_dataset_standardize(sets[i], model, &std[i]) != FFNN_OK) {
            for (int k = 0; k < i; k++)
                ffnn_dataset_free(std[k]);
            return ffnn_cli_fail(CMD, "--standardize");
        }
    }
    return 0;
}

/* --early-stopping: 1 when patience has run out. The trainer tracks the best
 * epoch (lowest validation loss) and its weights, and a checkpoint holds them,
 * so a resumed run decides as the run that never stopped. Every rank of
 * data-parallel training tracks the same val_loss (rank 0's, see
 * ffnn_trainer_set_validation), so all stop at the same epoch. */
static int patience_ran_out(const ffnn_cli_train_options *o, const ffnn_trainer *trainer)
{
    int stop = 0;
    return o->cfg.early_stopping > 0 &&
           ffnn_trainer_early_stopping(trainer, NULL, NULL, &stop) == FFNN_OK && stop;
}

int ffnn_cli_train_prepare(const ffnn_cli_train_options *o, ffnn_model *model,
                           ffnn_dataset *sets[3], ffnn_dataset *std[3])
{
    return keep_class_names(model, sets[0]) || ffnn_cli_keep_table(CMD, model, sets[0]) ||
           standardize(o, model, sets, std);
}

int ffnn_cli_train_run(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *train,
                       ffnn_dataset *val, ffnn_dataset *test, const char *data_description,
                       ffnn_comm *comm)
{
    ffnn_dataset *sets[3] = {train, val, test}, *std[3];
    if (ffnn_cli_train_prepare(o, model, sets, std))
        return 1;
    int rc = run(o, model, sets, std, data_description, comm);
    for (int i = 0; i < 3; i++)
        if (std[i] != sets[i])
            ffnn_dataset_free(std[i]);
    return rc;
}

/* The run over the data sets (train, val, test) and their standardised copies. */
static int run(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *sets[3],
               ffnn_dataset *std[3], const char *data_description, ffnn_comm *comm)
{
    ffnn_trainer *trainer = NULL;
    ffnn_dataset *train = std[0], *val = sets[1], *test = sets[2];
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
    /* SIGINT/SIGTERM stop a one-process run cleanly; the ranks of a data-parallel
     * run would see a signal at different steps (a collective checkpoint needs them
     * to agree), so there the default action stays: the last checkpoint is kept */
    if (ranks == 1)
        ffnn_cli_interrupt_install();
    if (ffnn_trainer_create_parallel(model, train, &cfg, comm, &trainer) != FFNN_OK) {
        ffnn_cli_interrupt_restore();
        return run_failed(comm, "setting up training", 0);
    }
    if (val && ffnn_trainer_set_validation(trainer, std[1]) != FFNN_OK) {
        ffnn_trainer_free(trainer);
        ffnn_cli_interrupt_restore();
        return run_failed(comm, "--val-split", 0);
    }
    ffnn_comm_set_timing(comm, o->comm_timing);
    char device[256], *arch = ffnn_cli_arch_string(model);
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
        if (ffnn_trainer_strategy(trainer) != FFNN_STRATEGY_REFERENCE)
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
    char counts[96];
    snprintf(counts, sizeof counts, "%zu train", ffnn_dataset_count(train));
    if (val)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %zu validation",
                 ffnn_dataset_count(val));
    snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %zu test",
             ffnn_dataset_count(test));
    if (info)
        fprintf(info, "data: %s (%s) | device: %s\n", data_description, counts, device);
    if (info && ffnn_trainer_strategy_note(trainer)[0]) /* --strategy tune's measurement */
        fprintf(info, "%s\n", ffnn_trainer_strategy_note(trainer));
    if (info && o->standardize)
        fprintf(info, "standardized: %zu features%s (z-score of the training split, kept in "
                "the model)\n", ffnn_dataset_features(train),
                o->regression ? " and the targets" : "");
    char optimizer[128];
    if (o->cfg.optimizer == FFNN_OPT_MOMENTUM)
        snprintf(optimizer, sizeof optimizer, "momentum %g%s", (double)o->cfg.momentum,
                 o->cfg.nesterov ? " nesterov" : "");
    else if (o->cfg.optimizer == FFNN_OPT_ADAM || o->cfg.optimizer == FFNN_OPT_ADAMW)
        snprintf(optimizer, sizeof optimizer, "%s (betas %g, %g, eps %g)",
                 ffnn_optimizer_name(o->cfg.optimizer), (double)o->cfg.beta1,
                 (double)o->cfg.beta2, (double)o->cfg.epsilon);
    else
        snprintf(optimizer, sizeof optimizer, "sgd");
    if (o->cfg.clip_grad_norm > 0.0f || o->cfg.clip_grad_value > 0.0f || o->cfg.ema_decay > 0.0f) {
        size_t used = strlen(optimizer);
        snprintf(optimizer + used, sizeof optimizer - used, "%s%.0g%s%.0g%s%.0g",
                 o->cfg.clip_grad_norm > 0.0f ? ", clip norm " : "", (double)o->cfg.clip_grad_norm,
                 o->cfg.clip_grad_value > 0.0f ? ", clip value " : "",
                 (double)o->cfg.clip_grad_value, o->cfg.ema_decay > 0.0f ? ", ema " : "",
                 (double)o->cfg.ema_decay);
    }
    if (o->cfg.weight_decay != 0.0f) {
        size_t used = strlen(optimizer);
        snprintf(optimizer + used, sizeof optimizer - used, ", weight decay %g%s",
                 (double)o->cfg.weight_decay, o->cfg.decay_bias ? "" : " (not biases)");
    }
    char schedule[96] = "";
    if (o->cfg.lr_schedule != FFNN_LR_CONSTANT || o->cfg.warmup_steps > 0)
        snprintf(schedule, sizeof schedule, " (%s schedule%s%.0d%s)",
                 ffnn_lr_schedule_name(o->cfg.lr_schedule),
                 o->cfg.warmup_steps > 0 ? ", warm-up " : "", o->cfg.warmup_steps,
                 o->cfg.warmup_steps > 0 ? " steps" : "");
    if (info) {
        fprintf(info, "arch %s, %zu parameters, loss %s, optimizer %s, batch %zu, lr %g%s, "
                "seed %" PRIu64 "\n", arch ? arch : "?", ffnn_model_parameter_count(model),
                ffnn_loss_name(o->cfg.loss), optimizer, o->cfg.batch_size,
                (double)o->cfg.learning_rate, schedule, o->cfg.seed);
        if (o->cfg.batch_size > ffnn_dataset_count(train))
            fprintf(info, "note: --batch %zu is larger than the %zu training samples: the "
                    "whole set is one batch\n", o->cfg.batch_size, ffnn_dataset_count(train));
        fflush(info);
    }
    free(arch);
    progress_state progress = {lead && isatty(2) && !o->json && !o->quiet, 0, o->cfg.epochs, 0.0,
                               0.0, 0, 0};
    epoch_lines lines = {.every = o->quiet ? 0 : o->print_every > 1 ? o->print_every : 1};
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
        ffnn_cli_interrupt_restore();
        return 1; /* every rank read the same file: the same outcome, printed by each */
    }
    steps_done = (size_t)(first_epoch - 1) * ffnn_trainer_steps_per_epoch(trainer);
    /* --log, --log-steps: opened only now (by rank 0 alone), so a bad invocation keeps
     * the files */
    const char *log_paths[2] = {lead ? o->log_path : NULL, lead ? o->log_steps : NULL};
    const char *log_flags[2] = {"--log", "--log-steps"};
    FILE *logs[2] = {NULL, NULL};
    if (open_logs(log_paths, log_flags, logs) != 0) {
        ffnn_trainer_free(trainer);
        ffnn_cli_interrupt_restore();
        return ranks > 1 ? rank_failed(comm, "logging", "see the message above", 0) : 1;
    }
    FILE *epoch_log = logs[0];
    step_log = logs[1];
    if ((step_log && (fprintf(step_log, "epoch,step,loss%s\n",
                              o->cfg.clip_grad_norm > 0.0f ? ",grad_norm" : "") < 0 ||
                      fflush(step_log) != 0)) ||
        (epoch_log && (fprintf(epoch_log, "epoch,train_loss,%s,seconds,images_per_second,"
                               "learning_rate\n",
                               val ? "val_loss,val_accuracy" : "test_loss,test_accuracy") < 0 ||
                       fflush(epoch_log) != 0))) {
        fprintf(stderr, "ffnn train: writing the log headers: %s\n", strerror(errno));
        rc = 1;
        if (ranks > 1)
            rank_failed(comm, "logging", "see the message above", 0);
    }
    int interrupted = 0;
    /* a checkpoint of the epoch whose end ran out of patience: the run is over */
    int stopped_early = patience_ran_out(o, trainer);
    for (int e = first_epoch; e <= o->cfg.epochs && rc == 0 && !checkpoints.stopped &&
                              !stopped_early; e++) {
        if ((interrupted = ffnn_cli_interrupted() != 0))
            break;
        ffnn_epoch_stats stats;
        epoch_report report = {val ? "val" : test ? "test" : NULL, 0.0, 0.0, NULL};
        ffnn_metrics reg;
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
        if (!finished && ffnn_cli_interrupted() && !checkpoints.stopped) {
            interrupted = 1;
            break;
        }
        if (!finished) /* --max-steps */
            break;
        if (!lead) { /* rank 0 evaluates, prints and logs; every rank checkpoints */
            if (ffnn_cli_checkpoint_save(&checkpoints, trainer) != 0)
                rc = rank_failed(comm, "--checkpoint", checkpoints.message, 1);
            if (rc == 0 && (stopped_early = patience_ran_out(o, trainer)))
                break;
            continue;
        }
        if (val) {
            report.loss = stats.val_loss;
            report.accuracy = stats.val_accuracy;
        } else if (test && ffnn_trainer_evaluate(trainer, std[2], &report.loss,
                                                 &report.accuracy) != FFNN_OK) {
            rc = run_failed(comm, "evaluating", 0);
            break;
        }
        if (o->regression && report.set) { /* in the targets' units, on the host */
            if (ffnn_trainer_evaluate_metrics(trainer, val ? val : test, &reg, NULL) != FFNN_OK) {
                rc = run_failed(comm, "evaluating", 0);
                break;
            }
            report.reg = &reg;
        }
        epoch_line(o, &lines, &stats, &report, e == first_epoch);
        if (epoch_log && log_epoch(epoch_log, o, &stats, &report) != 0) {
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
        /* after the checkpoint, which holds this epoch's early-stopping outcome (the
         * trainer tracked it when the epoch ended) */
        if (rc == 0 && (stopped_early = patience_ran_out(o, trainer)))
            break;
    }
    epoch_line_flush(o, &lines);
    /* the run is over (not stopped by --max-steps or a signal before its end):
     * early stopping's choice holds and the test set is evaluated */
    const int complete = rc == 0 && !interrupted && (stopped_early || !checkpoints.stopped);
    int best_epoch = 0;
    double best_loss = 0.0;
    if (complete && lead && o->cfg.early_stopping > 0 &&
        ffnn_trainer_early_stopping(trainer, &best_epoch, &best_loss, NULL) == FFNN_OK &&
        best_epoch > 0) { /* the best epoch's weights, into the model */
        if (ffnn_trainer_restore_best(trainer) != FFNN_OK)
            rc = run_failed(comm, "--early-stopping: restoring the weights", 0);
        else
            fprintf(info, "early stopping: %s; restored epoch %d (val_loss %.6g)\n",
                    stopped_early ? "the validation loss did not improve for the last "
                                    "--early-stopping epochs"
                                  : "all epochs run", best_epoch, best_loss);
    }
    if (complete && rc == 0 && lead && val && test) {
        /* the test set, once */
        ffnn_metrics m;
        if (ffnn_model_evaluate_metrics(model, o->cfg.loss, test, o->cfg.eval_batch_size, &m,
                                        NULL) != FFNN_OK)
            rc = run_failed(comm, "evaluating the test set", 0);
        else
            print_test(o, &m, info);
    }
    if (complete && rc == 0 && lead && test && ffnn_dataset_sample_weights(test))
        rc = ffnn_cli_print_weighted_test(o->json, model, o->cfg.loss, test,
                                          o->cfg.eval_batch_size, info);
    if (rc == 0 && !interrupted && ffnn_cli_interrupted() && !checkpoints.stopped &&
        o->cfg.epochs > 0) {
        /* the signal came during the last epoch's evaluation or save: the run is
         * complete, so it ends as usual below (and still exits 130) */
        interrupted = 2;
    }
    if (interrupted == 1 && rc == 0)
        rc = stop_interrupted(o, trainer, model, &checkpoints, info);
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
    if (rc == 0 && interrupted == 2) {
        fprintf(stderr, "ffnn train: interrupted by %s after the last epoch: the run is "
                "complete\n", ffnn_cli_signal_name(ffnn_cli_interrupted()));
        rc = FFNN_CLI_EXIT_INTERRUPTED;
    }
    ffnn_trainer_free(trainer);
    ffnn_cli_interrupt_restore();
    return rc;
}

