/*
 * train_run.c - the run of ffnn train (train_run.h): the epoch loop and what it
 * prints and writes - the header lines, one line or JSON object per epoch, the
 * progress bar, the --log and --log-steps CSV files, checkpoints, --save.
 */
#define _POSIX_C_SOURCE 200809L
#include "train_run.h"
#include "tabular.h"
#include "train_logs.h"
#include "train_tasks.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
            ffnn_model_save_interrupted(model, o->save_path, where) != FFNN_OK) {
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

/* ------------------------------------------------------------ the run */

/* One run's state, shared by its steps (run, at the end). */
typedef struct train_session {
    const ffnn_cli_train_options *o;
    ffnn_model *model;
    ffnn_dataset **sets, **std; /* train, val, test and the copies the trainer sees  */
    ffnn_comm *comm;            /* this rank of a data-parallel run, or NULL         */
    int ranks, lead;            /* the ranks; 1 on rank 0 (it alone prints and logs) */
    ffnn_trainer *trainer;
    FILE *info;                 /* rank 0's messages (stderr under --json), or NULL  */
    progress_state progress;
    epoch_lines lines;
    ffnn_cli_checkpointer checkpoints;
    step_context context;
    ffnn_cli_train_logs logs;
    int first_epoch;            /* the first epoch this process runs (--resume)       */
    int rc;                     /* the exit status so far                             */
    int interrupted;            /* 1: a signal stopped the run; 2: after its end      */
    int stopped_early;          /* --early-stopping's patience ran out                */
} train_session;

/* The run's config: graph/persistent launch many steps at once (steps_per_launch
 * 0: the whole epoch), so make every checkpoint and the --max-steps stop fall on a
 * launch boundary of every epoch. */
static ffnn_train_config launch_config(const ffnn_cli_train_options *o, const ffnn_dataset *train)
{
    ffnn_train_config cfg = o->cfg;
    if (cfg.steps_per_launch == 0 && (o->checkpoint_every > 0 || o->max_steps > 0)) {
        long long g = (long long)((ffnn_dataset_count(train) + cfg.batch_size - 1) /
                                  cfg.batch_size);
        if (o->checkpoint_every > 0) g = gcd_ll(g, o->checkpoint_every);
        if (o->max_steps > 0) g = gcd_ll(g, o->max_steps);
        cfg.steps_per_launch = (int)g;
    }
    return cfg;
}

/* The trainer over the training set (and the validation set). 0, or the exit
 * status with the message printed and nothing left to free. */
static int start_trainer(train_session *s)
{
    ffnn_train_config cfg = launch_config(s->o, s->std[0]);
    /* SIGINT/SIGTERM stop a one-process run cleanly; the ranks of a data-parallel
     * run would see a signal at different steps (a collective checkpoint needs them
     * to agree), so there the default action stays: the last checkpoint is kept */
    if (s->ranks == 1)
        ffnn_cli_interrupt_install();
    if (ffnn_trainer_create_parallel(s->model, s->std[0], &cfg, s->comm, &s->trainer) != FFNN_OK) {
        ffnn_cli_interrupt_restore();
        return run_failed(s->comm, "setting up training", 0);
    }
    if (s->sets[1] && ffnn_trainer_set_validation(s->trainer, s->std[1]) != FFNN_OK) {
        ffnn_trainer_free(s->trainer);
        ffnn_cli_interrupt_restore();
        return run_failed(s->comm, "--val-split", 0);
    }
    ffnn_comm_set_timing(s->comm, s->o->comm_timing);
    return 0;
}

/* The header's device: "cuda (GPU, STRATEGY strategy[, PRECISION])" or "cpu (HOW)",
 * then the data-parallel ranks. */
static void describe_device(const train_session *s, char *device, size_t size)
{
    const ffnn_cli_train_options *o = s->o;
    if (ffnn_trainer_device(s->trainer) == FFNN_DEVICE_CUDA) {
        char gpu[200];
        ffnn_cuda_device_name(gpu, sizeof gpu);
        snprintf(device, size, "cuda (%s, %s strategy%s%s)", gpu,
                 ffnn_strategy_name(ffnn_trainer_strategy(s->trainer)),
                 o->cfg.precision != FFNN_PRECISION_FP32 ? ", " : "",
                 o->cfg.precision != FFNN_PRECISION_FP32
                     ? ffnn_precision_name(o->cfg.precision) : "");
    } else {
        char how[64];
        if (ffnn_trainer_strategy(s->trainer) != FFNN_STRATEGY_REFERENCE)
            snprintf(how, sizeof how, "omp, %d thread%s", ffnn_trainer_threads(s->trainer),
                     ffnn_trainer_threads(s->trainer) == 1 ? "" : "s");
        else
            snprintf(how, sizeof how, "reference");
        snprintf(device, size, "cpu (%s)%s", how,
                 o->cfg.device == FFNN_DEVICE_CPU ? ""
                 : ffnn_has_cuda()                ? ", no CUDA GPU found"
                                                  : ", build without CUDA");
    }
    if (s->comm) {
        size_t used = strlen(device);
        snprintf(device + used, size - used, " | data parallel: %d rank%s (%s)",
                 s->ranks, s->ranks == 1 ? "" : "s", ffnn_comm_kind(s->comm));
    }
}

/* The header's optimizer: its name and settings, clipping, EMA, weight decay. */
static void describe_optimizer(const ffnn_train_config *c, char *optimizer, size_t size)
{
    if (c->optimizer == FFNN_OPT_MOMENTUM)
        snprintf(optimizer, size, "momentum %g%s", (double)c->momentum,
                 c->nesterov ? " nesterov" : "");
    else if (c->optimizer == FFNN_OPT_ADAM || c->optimizer == FFNN_OPT_ADAMW)
        snprintf(optimizer, size, "%s (betas %g, %g, eps %g)", ffnn_optimizer_name(c->optimizer),
                 (double)c->beta1, (double)c->beta2, (double)c->epsilon);
    else
        snprintf(optimizer, size, "sgd");
    if (c->clip_grad_norm > 0.0f || c->clip_grad_value > 0.0f || c->ema_decay > 0.0f) {
        size_t used = strlen(optimizer);
        snprintf(optimizer + used, size - used, "%s%.0g%s%.0g%s%.0g",
                 c->clip_grad_norm > 0.0f ? ", clip norm " : "", (double)c->clip_grad_norm,
                 c->clip_grad_value > 0.0f ? ", clip value " : "", (double)c->clip_grad_value,
                 c->ema_decay > 0.0f ? ", ema " : "", (double)c->ema_decay);
    }
    if (c->weight_decay != 0.0f) {
        size_t used = strlen(optimizer);
        snprintf(optimizer + used, size - used, ", weight decay %g%s", (double)c->weight_decay,
                 c->decay_bias ? "" : " (not biases)");
    }
}

/* The header lines (rank 0): the data and device, the strategy's note, the
 * standardisation, the network and its training settings. */
static void print_header(const train_session *s, const char *data_description)
{
    const ffnn_cli_train_options *o = s->o;
    const ffnn_dataset *train = s->std[0], *val = s->sets[1], *test = s->sets[2];
    FILE *info = s->info;
    char device[256], counts[96], optimizer[128], schedule[96] = "";
    if (!info)
        return;
    describe_device(s, device, sizeof device);
    snprintf(counts, sizeof counts, "%zu train", ffnn_dataset_count(train));
    if (val)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %zu validation",
                 ffnn_dataset_count(val));
    snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %zu test",
             ffnn_dataset_count(test));
    fprintf(info, "data: %s (%s) | device: %s\n", data_description, counts, device);
    if (ffnn_trainer_strategy_note(s->trainer)[0]) /* --strategy tune's measurement */
        fprintf(info, "%s\n", ffnn_trainer_strategy_note(s->trainer));
    if (o->standardize)
        fprintf(info, "standardized: %zu features%s (z-score of the training split, kept in "
                "the model)\n", ffnn_dataset_features(train),
                o->regression ? " and the targets" : "");
    describe_optimizer(&o->cfg, optimizer, sizeof optimizer);
    if (o->cfg.lr_schedule != FFNN_LR_CONSTANT || o->cfg.warmup_steps > 0)
        snprintf(schedule, sizeof schedule, " (%s schedule%s%.0d%s)",
                 ffnn_lr_schedule_name(o->cfg.lr_schedule),
                 o->cfg.warmup_steps > 0 ? ", warm-up " : "", o->cfg.warmup_steps,
                 o->cfg.warmup_steps > 0 ? " steps" : "");
    char *arch = ffnn_cli_arch_string(s->model);
    fprintf(info, "arch %s, %zu parameters, loss %s, optimizer %s, batch %zu, lr %g%s, "
            "seed %" PRIu64 "\n", arch ? arch : "?", ffnn_model_parameter_count(s->model),
            ffnn_loss_name(o->cfg.loss), optimizer, o->cfg.batch_size,
            (double)o->cfg.learning_rate, schedule, o->cfg.seed);
    free(arch);
    if (o->cfg.batch_size > ffnn_dataset_count(train))
        fprintf(info, "note: --batch %zu is larger than the %zu training samples: the "
                "whole set is one batch\n", o->cfg.batch_size, ffnn_dataset_count(train));
    fflush(info);
}

/* --resume's position, then the logs: opened only now (by rank 0 alone), so a bad
 * invocation keeps the files. 0, or the exit status with the message printed. */
static int resume_and_open_logs(train_session *s)
{
    const ffnn_cli_train_options *o = s->o;
    s->first_epoch = 1;
    if (o->resume_path && (s->first_epoch = ffnn_cli_resume_trainer(
                               o->resume_path, s->trainer, &s->checkpoints, s->info)) < 0)
        return 1; /* every rank read the same file: the same outcome, printed by each */
    if (ffnn_cli_train_logs_open(&s->logs, o, s->lead, s->sets[1] != NULL) != 0)
        return s->ranks > 1 ? rank_failed(s->comm, "logging", "see the message above", 0) : 1;
    s->logs.steps_done = (size_t)(s->first_epoch - 1) * ffnn_trainer_steps_per_epoch(s->trainer);
    return 0;
}

/* Rank 0 after epoch e: evaluate, print its line, log, checkpoint. 1 when the run
 * stops here (an error in s->rc, or early stopping), else 0. */
static int report_epoch(train_session *s, int e, const ffnn_epoch_stats *stats)
{
    const ffnn_cli_train_options *o = s->o;
    ffnn_dataset *val = s->sets[1], *test = s->sets[2];
    epoch_report report = {val ? "val" : test ? "test" : NULL, 0.0, 0.0, NULL};
    ffnn_metrics reg;
    if (val) {
        report.loss = stats->val_loss;
        report.accuracy = stats->val_accuracy;
    } else if (test && ffnn_trainer_evaluate(s->trainer, s->std[2], &report.loss,
                                             &report.accuracy) != FFNN_OK) {
        s->rc = run_failed(s->comm, "evaluating", 0);
        return 1;
    }
    if (o->regression && report.set) { /* in the targets' units, on the host */
        if (ffnn_trainer_evaluate_metrics(s->trainer, val ? val : test, &reg, NULL) != FFNN_OK) {
            s->rc = run_failed(s->comm, "evaluating", 0);
            return 1;
        }
        report.reg = &reg;
    }
    epoch_line(o, &s->lines, stats, &report, e == s->first_epoch);
    if (ffnn_cli_train_logs_epoch(&s->logs, o, s->trainer, e, stats, report.set != NULL,
                                  report.loss, report.accuracy) != 0)
        s->rc = 1;
    if (s->rc != 0 && s->ranks > 1) /* a log rank 0 could not write: the others wait */
        rank_failed(s->comm, "logging", "see the message above", 0);
    if (s->rc == 0 && ffnn_cli_checkpoint_save(&s->checkpoints, s->trainer) != 0) {
        if (s->ranks > 1)
            rank_failed(s->comm, "--checkpoint", s->checkpoints.message, 1);
        else
            fprintf(stderr, "ffnn train: --checkpoint: %s\n", s->checkpoints.message);
        s->rc = 1;
    }
    /* after the checkpoint, which holds this epoch's early-stopping outcome (the
     * trainer tracked it when the epoch ended) */
    return s->rc != 0 || (s->stopped_early = patience_ran_out(o, s->trainer));
}

/* Epoch e: train it, then (rank 0) report it or (other ranks) checkpoint it. 1 when
 * the run stops here (an error in s->rc, an interrupt, --max-steps, early
 * stopping), else 0. */
static int run_epoch(train_session *s, int e)
{
    ffnn_epoch_stats stats;
    int finished = 0;
    s->progress.epoch = e;
    ffnn_status st = ffnn_trainer_run_epoch_until(s->trainer, on_step, &s->context, &stats,
                                                  &finished);
    clear_progress(&s->progress);
    if (s->checkpoints.failed && s->ranks > 1) {
        s->rc = rank_failed(s->comm, "--checkpoint", s->checkpoints.message, 1);
        return 1;
    }
    if (s->checkpoints.failed) {
        fprintf(stderr, "ffnn train: --checkpoint: %s\n", s->checkpoints.message);
        s->rc = 1;
        return 1;
    }
    if (st != FFNN_OK) {
        s->rc = run_failed(s->comm, "training", st == FFNN_ERR_NUMERIC);
        return 1;
    }
    if (!finished && ffnn_cli_interrupted() && !s->checkpoints.stopped) {
        s->interrupted = 1;
        return 1;
    }
    if (!finished) /* --max-steps */
        return 1;
    if (!s->lead) { /* rank 0 evaluates, prints and logs; every rank checkpoints */
        if (ffnn_cli_checkpoint_save(&s->checkpoints, s->trainer) != 0)
            s->rc = rank_failed(s->comm, "--checkpoint", s->checkpoints.message, 1);
        return s->rc != 0 || (s->stopped_early = patience_ran_out(s->o, s->trainer));
    }
    return report_epoch(s, e, &stats);
}

/* The epochs from s->first_epoch until the last, an error, an interrupt,
 * --max-steps or early stopping; then the held-back epoch line. */
static void run_epochs(train_session *s)
{
    /* a checkpoint of the epoch whose end ran out of patience: the run is over */
    s->stopped_early = patience_ran_out(s->o, s->trainer);
    for (int e = s->first_epoch; e <= s->o->cfg.epochs && s->rc == 0 && !s->checkpoints.stopped &&
                                 !s->stopped_early; e++) {
        if ((s->interrupted = ffnn_cli_interrupted() != 0))
            break;
        if (run_epoch(s, e))
            break;
    }
    epoch_line_flush(s->o, &s->lines);
}

/* The run is over (not stopped by --max-steps or a signal before its end): early
 * stopping's choice holds and the test set is evaluated (rank 0). */
static void finish_complete_run(train_session *s)
{
    const ffnn_cli_train_options *o = s->o;
    ffnn_dataset *val = s->sets[1], *test = s->sets[2];
    int best_epoch = 0;
    double best_loss = 0.0;
    if (o->cfg.early_stopping > 0 &&
        ffnn_trainer_early_stopping(s->trainer, &best_epoch, &best_loss, NULL) == FFNN_OK &&
        best_epoch > 0) { /* the best epoch's weights, into the model */
        if (ffnn_trainer_restore_best(s->trainer) != FFNN_OK)
            s->rc = run_failed(s->comm, "--early-stopping: restoring the weights", 0);
        else
            fprintf(s->info, "early stopping: %s; restored epoch %d (val_loss %.6g)\n",
                    s->stopped_early ? "the validation loss did not improve for the last "
                                       "--early-stopping epochs"
                                     : "all epochs run", best_epoch, best_loss);
    }
    if (s->rc == 0 && val && test) {
        /* the test set, once */
        ffnn_metrics m;
        if (ffnn_model_evaluate_metrics(s->model, test, o->cfg.eval_batch_size, &m,
                                        NULL) != FFNN_OK)
            s->rc = run_failed(s->comm, "evaluating the test set", 0);
        else
            print_test(o, &m, s->info);
    }
    if (s->rc == 0 && test && ffnn_dataset_sample_weights(test))
        s->rc = ffnn_cli_print_weighted_test(o->json, s->model, test,
                                             o->cfg.eval_batch_size, s->info);
}

/* The closing lines (rank 0): --comm-timing's all-reduce times, the --max-steps stop. */
static void print_run_end(const train_session *s)
{
    const ffnn_cli_train_options *o = s->o;
    if (s->rc != 0 || !s->info)
        return;
    if (o->comm_timing) {
        uint64_t timed = 0;
        double span = 0, exposed = 0;
        ffnn_comm_timing(s->comm, &timed, &span, &exposed);
        if (timed > 0)
            fprintf(s->info, "all-reduce (rank 0, %" PRIu64 " steps timed): %.4f ms/step from "
                    "the first bucket to the sums, %.4f ms/step not overlapped\n", timed,
                    span / (double)timed, exposed / (double)timed);
        else
            fprintf(s->info, "all-reduce: no step timed (%s)\n", s->comm ? "steps inside CUDA "
                    "graphs are not timed: --strategy tiled, fused or cublas --steps-per-launch 1"
                    : "one process: no all-reduce");
    }
    if (s->checkpoints.stopped)
        fprintf(s->info, "stopped at step %lld of the run (--max-steps)%s%s\n", o->max_steps,
                o->checkpoint_path ? "; checkpoint " : "",
                o->checkpoint_path ? o->checkpoint_path : "");
}

/* The run over the data sets (train, val, test) and their standardised copies:
 * the trainer, the header, --resume and the logs, the epochs, the end of the run
 * (test set, interrupt, closing lines, --save). */
static int run(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *sets[3],
               ffnn_dataset *std[3], const char *data_description, ffnn_comm *comm)
{
    train_session s = {.o = o, .model = model, .sets = sets, .std = std, .comm = comm,
                       .ranks = ffnn_comm_size(comm), .lead = ffnn_comm_rank(comm) == 0};
    s.rc = start_trainer(&s);
    if (s.rc != 0)
        return s.rc;
    s.info = !s.lead ? NULL : o->json ? stderr : stdout; /* rank 0 alone prints */
    print_header(&s, data_description);
    s.progress = (progress_state){s.lead && isatty(2) && !o->json && !o->quiet, 0, o->cfg.epochs,
                                  0.0, 0.0, 0, 0};
    s.lines = (epoch_lines){.every = o->quiet ? 0 : o->print_every > 1 ? o->print_every : 1};
    s.checkpoints = (ffnn_cli_checkpointer){o->checkpoint_path, o->checkpoint_every,
                                            o->max_steps, UINT64_MAX, 0, 0, ""};
    s.context = (step_context){&s.progress, &s.checkpoints};
    if ((s.rc = resume_and_open_logs(&s)) != 0) {
        ffnn_trainer_free(s.trainer);
        ffnn_cli_interrupt_restore();
        return s.rc;
    }
    run_epochs(&s);
    if (s.rc == 0 && !s.interrupted && (s.stopped_early || !s.checkpoints.stopped) && s.lead)
        finish_complete_run(&s);
    if (s.rc == 0 && !s.interrupted && ffnn_cli_interrupted() && !s.checkpoints.stopped &&
        o->cfg.epochs > 0) {
        /* the signal came during the last epoch's evaluation or save: the run is
         * complete, so it ends as usual below (and still exits 130) */
        s.interrupted = 2;
    }
    if (s.interrupted == 1 && s.rc == 0)
        s.rc = stop_interrupted(o, s.trainer, model, &s.checkpoints, s.info);
    print_run_end(&s);
    s.rc = ffnn_cli_train_logs_close(&s.logs, o, s.rc);
    if (s.rc == 0 && o->save_path && s.lead)
        s.rc = ffnn_cli_save_trained(s.trainer, model, o->save_path, o->cfg.loss, s.info);
    if (s.rc == 0 && s.interrupted == 2) {
        fprintf(stderr, "ffnn train: interrupted by %s after the last epoch: the run is "
                "complete\n", ffnn_cli_signal_name(ffnn_cli_interrupted()));
        s.rc = FFNN_CLI_EXIT_INTERRUPTED;
    }
    ffnn_trainer_free(s.trainer);
    ffnn_cli_interrupt_restore();
    return s.rc;
}
