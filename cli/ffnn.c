/*
 * ffnn.c - the command-line program: subcommands, argument parsing, printing.
 * Everything numeric lives in the library; this file only drives it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "checkpoints.h"
#include "default_data.h"
#include "model_commands.h"
#include "plot_command.h"
#include "ffnn.h"

static const char *usage_main =
    "usage: ffnn <command> [options]\n"
    "\n"
    "Feed-forward neural networks trained with hand-written kernels (CPU and CUDA).\n"
    "\n"
    "commands:\n"
    "  train     train a network on an IDX data set and report test accuracy\n"
    "  eval      evaluate a saved model: loss, accuracy, per class, confusion matrix\n"
    "  predict   run a saved model on an IDX image file or CSV rows\n"
    "  info      describe a model file: architecture, tensors, metadata\n"
    "  bench     benchmark suites (ffnn bench --help lists them)\n"
    "  plot      draw the loss and accuracy curves of ffnn train --log CSV files\n"
    "  help CMD  show the options of a command (same as ffnn CMD --help)\n"
    "\n"
    "ffnn --version prints the version. Run 'ffnn CMD --help' for a command's options.\n";

static const char *usage_train =
    "usage: ffnn train [options]\n"
    "\n"
    "Train a multilayer perceptron with mini-batch SGD, SGD with momentum or Adam and\n"
    "print, per epoch: epoch, mean training loss, test loss, test accuracy, seconds\n"
    "and images/s.\n"
    "\n"
    "options:\n"
    "  --data DIR        IDX directory (train-images-idx3-ubyte[.gz], train-labels-\n"
    "                    idx1-ubyte[.gz], t10k-...). Default: data/mnist/, else MNIST\n"
    "                    downloaded there, else Debian's Fashion-MNIST\n"
    "                    (/usr/share/datasets/fashion-mnist)\n"
    "  --data synth:points[:N[:SEED]]      seed 004's 2-D points (quadrants 1 and 3\n"
    "                    vs 2 and 4), N = 2100 by default, test set N/5\n"
    "  --data synth:regression[:N[:SEED]]  seed 001's 32-feature regression, N = 2560\n"
    "                    by default\n"
    "  --data synth:motif[:N[:SEED]]  64-sample 1-D signals classified by a 3-sample\n"
    "                    motif at a random place (for local layers), N = 5000 by\n"
    "                    default (README \"Data sets\" defines them; SEED: 1)\n"
    "  --classes A,B     keep only labels A and B, relabelled 0 and 1 (e.g. 0,1)\n"
    "  --arch STR        architecture, e.g. 784-256relu-10 (default: FEATURES-256relu-\n"
    "                    CLASSES of the data; FEATURES-256relu-TARGETS and --loss\n"
    "                    mse for float targets). Syntax: input width, then per layer\n"
    "                    WIDTH[relu|sigmoid|tanh|identity][:nobias], joined by '-';\n"
    "                    localR[same] instead of WIDTH: a 1-D locally connected layer\n"
    "                    of receptive field R (e.g. 64-local3sigmoid-local5samerelu-2)\n"
    "  --loss NAME       ce (softmax cross-entropy, default) | bce (sigmoid binary\n"
    "                    cross-entropy) | mse (mean squared error)\n"
    "  --epochs N        passes over the training set (default 10)\n"
    "  --batch N         batch_size, samples per optimizer step (default 64)\n"
    "  --lr X            learning_rate (default 0.01)\n"
    "  --optimizer NAME  sgd (default) | momentum (SGD with momentum) | adam, as\n"
    "                    PyTorch's torch.optim.SGD / Adam\n"
    "  --momentum X      momentum of --optimizer momentum, in [0, 1) (default 0.9)\n"
    "  --nesterov        Nesterov momentum (with --optimizer momentum)\n"
    "  --beta1 X         adam: decay of the gradient average, in [0, 1) (default 0.9)\n"
    "  --beta2 X         adam: decay of the squared-gradient average, in [0, 1)\n"
    "                    (default 0.999)\n"
    "  --eps X           adam: added to the denominator, in (0, 1] (default 1e-8)\n"
    "  --seed N          seed for initial weights and shuffling (default 1)\n"
    "  --no-shuffle      visit the training set in file order every epoch\n"
    "  --train-limit N   use only the first N training samples\n"
    "  --device NAME     cpu | cuda (default: cuda when a GPU is present, else cpu)\n"
    "  --kernels NAME    cuda training strategy (docs/PERFORMANCE.md): auto (default:\n"
    "                    the fastest for the net and batch) | persistent | graph |\n"
    "                    fused | cublas | tiled | naive\n"
    "  --precision NAME  cuda matmul arithmetic: fp32 (default) | tf32 | bf16 (tensor\n"
    "                    cores: tf32 with cublas, fused or graph; bf16 with cublas)\n"
    "  --steps-per-launch N  steps per launch: graph (default 16), persistent\n"
    "                    (default: an epoch), cublas (default 8; N > 1 captures them\n"
    "                    in a CUDA graph); progress and stops fall between launches\n"
    "  --threads N       cpu: N OpenMP threads; 0 = all cores (default); 1 = the\n"
    "                    single-threaded reference backend\n"
    "  --eval-batch N    samples per forward pass when evaluating (default 1024)\n"
    "  --json            print one JSON object per epoch instead of a text line\n"
    "  --save FILE       after training, write the model (safetensors, atomically)\n"
    "  --log FILE        write the per-epoch metrics as CSV (header epoch,train_loss,\n"
    "                    test_loss,test_accuracy,seconds,images_per_second; accuracy\n"
    "                    empty for regression), flushed every epoch; ffnn plot FILE\n"
    "                    draws them. With --resume: the epochs of this run only\n"
    "  --log-steps FILE  write every step's batch loss as CSV rows epoch,step,loss\n"
    "  --init FILE       start from the weights of a model file instead of the seeded\n"
    "                    init; the architecture (and, without --loss, the loss) comes\n"
    "                    from the file; --arch, if given, must match it\n"
    "  --checkpoint FILE write a checkpoint (model, optimizer state, position in the\n"
    "                    run; safetensors, atomically) at the end of every epoch\n"
    "  --checkpoint-every N  also after every N-th step (counted over the whole run)\n"
    "  --max-steps N     stop after step N of the whole run (with --checkpoint: saved\n"
    "                    there), e.g. to continue later with --resume\n"
    "  --resume FILE     continue the run of a checkpoint exactly where it stopped:\n"
    "                    its architecture, weights, optimizer state, settings (loss,\n"
    "                    optimizer and hyperparameters, lr, batch, seed, shuffle,\n"
    "                    train-limit, epochs) are used; a flag given must agree with\n"
    "                    the checkpoint, except --epochs (the total to reach)\n"
    "  -h, --help        this help\n";

/* ------------------------------------------------------------ value parsing */

static int parse_long(const char *opt, const char *s, long long lo, long long hi,
                      long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "ffnn train: %s expects an integer in [%lld, %lld], found '%s'\n",
                opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_float(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || !(v > lo) || v > hi) {
        fprintf(stderr, "ffnn train: %s expects a number in (%g, %g], found '%s'\n", opt, lo,
                hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* A number in [0, 1): momentum, Adam's betas. */
static int parse_fraction(const char *opt, const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(v >= 0.0 && v < 1.0)) {
        fprintf(stderr, "ffnn train: %s expects a number in [0, 1), found '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

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

/* ------------------------------------------------------------ train */

typedef struct train_options {
    const char *data_dir;
    int class_a, class_b;      /* --classes A,B (class_a < 0: all classes)           */
    int regression;            /* float targets with mse: no accuracy is printed     */
    const char *arch;
    ffnn_train_config cfg;
    long long train_limit;
    int json;
    const char *save_path;     /* --save FILE (or NULL)                              */
    const char *init_path;     /* --init FILE (or NULL)                              */
    const char *log_steps;     /* --log-steps FILE (or NULL): per-step losses, CSV   */
    const char *log_path;      /* --log FILE (or NULL): per-epoch metrics, CSV       */
    int loss_given;            /* --loss was given (else --init's file decides)      */
    const char *momentum_flag; /* the last of --momentum, --nesterov given (or NULL) */
    const char *adam_flag;     /* the last of --beta1, --beta2, --eps given (or NULL) */
    const char *checkpoint_path; /* --checkpoint FILE (or NULL)                      */
    long long checkpoint_every;  /* --checkpoint-every N (0: epoch ends only)        */
    long long max_steps;         /* --max-steps N (0: no limit)                      */
    const char *resume_path;     /* --resume FILE (or NULL)                          */
    ffnn_cli_given given;        /* which settings were given (--resume checks them) */
} train_options;

enum { OPT_DATA = 256, OPT_ARCH, OPT_LOSS, OPT_EPOCHS, OPT_BATCH, OPT_LR, OPT_SEED,
       OPT_NO_SHUFFLE, OPT_LIMIT, OPT_DEVICE, OPT_KERNELS, OPT_EVAL_BATCH, OPT_JSON,
       OPT_OPTIMIZER, OPT_MOMENTUM, OPT_NESTEROV, OPT_BETA1, OPT_BETA2, OPT_EPS };

enum { OPT_THREADS = 768 };

enum { OPT_CLASSES = 1024 };

enum { OPT_LOG = 1280 };

enum { OPT_PRECISION = 1536, OPT_STEPS_PER_LAUNCH };

enum { OPT_SAVE = 512, OPT_INIT, OPT_LOG_STEPS, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY,
       OPT_MAX_STEPS, OPT_RESUME };

static long long gcd_ll(long long a, long long b)
{
    while (b != 0) {
        long long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static const struct option train_long_options[] = {
    {"data", required_argument, NULL, OPT_DATA},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"loss", required_argument, NULL, OPT_LOSS},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"lr", required_argument, NULL, OPT_LR},
    {"seed", required_argument, NULL, OPT_SEED},
    {"no-shuffle", no_argument, NULL, OPT_NO_SHUFFLE},
    {"train-limit", required_argument, NULL, OPT_LIMIT},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"kernels", required_argument, NULL, OPT_KERNELS},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"steps-per-launch", required_argument, NULL, OPT_STEPS_PER_LAUNCH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"eval-batch", required_argument, NULL, OPT_EVAL_BATCH},
    {"json", no_argument, NULL, OPT_JSON},
    {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
    {"momentum", required_argument, NULL, OPT_MOMENTUM},
    {"nesterov", no_argument, NULL, OPT_NESTEROV},
    {"beta1", required_argument, NULL, OPT_BETA1},
    {"beta2", required_argument, NULL, OPT_BETA2},
    {"eps", required_argument, NULL, OPT_EPS},
    {"save", required_argument, NULL, OPT_SAVE},
    {"init", required_argument, NULL, OPT_INIT},
    {"log-steps", required_argument, NULL, OPT_LOG_STEPS},
    {"log", required_argument, NULL, OPT_LOG},
    {"classes", required_argument, NULL, OPT_CLASSES},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {"max-steps", required_argument, NULL, OPT_MAX_STEPS},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parse one option; 0 on success, 1 for --help, -1 on error (message printed). */
static int train_option(train_options *o, int c, const char *arg)
{
    long long v;
    double x;
    switch (c) {
    case OPT_DATA: o->data_dir = arg; return 0;
    case OPT_ARCH: o->arch = arg; return 0;
    case OPT_LOSS:
        if (ffnn_loss_from_name(arg, &o->cfg.loss) != FFNN_OK) break;
        o->loss_given = 1;
        return 0;
    case OPT_EPOCHS:
        if (parse_long("--epochs", arg, 1, 1000000, &v)) return -1;
        o->cfg.epochs = (int)v;
        return 0;
    case OPT_BATCH:
        if (parse_long("--batch", arg, 1, 1 << 24, &v)) return -1;
        o->cfg.batch_size = (size_t)v;
        return 0;
    case OPT_LR:
        if (parse_float("--lr", arg, 0.0, 1e6, &x)) return -1;
        o->cfg.learning_rate = (float)x;
        return 0;
    case OPT_SEED:
        if (parse_long("--seed", arg, 0, INT64_MAX, &v)) return -1;
        o->cfg.seed = (uint64_t)v;
        return 0;
    case OPT_NO_SHUFFLE: o->cfg.shuffle = 0; return 0;
    case OPT_LIMIT:
        if (parse_long("--train-limit", arg, 1, INT32_MAX, &v)) return -1;
        o->train_limit = v;
        return 0;
    case OPT_DEVICE:
        if (ffnn_device_from_name(arg, &o->cfg.device) != FFNN_OK) break;
        return 0;
    case OPT_KERNELS:
        if (ffnn_strategy_from_name(arg, &o->cfg.strategy) != FFNN_OK) break;
        return 0;
    case OPT_PRECISION:
        if (ffnn_precision_from_name(arg, &o->cfg.precision) != FFNN_OK) break;
        return 0;
    case OPT_STEPS_PER_LAUNCH:
        if (parse_long("--steps-per-launch", arg, 0, INT32_MAX, &v)) return -1;
        o->cfg.steps_per_launch = (int)v;
        return 0;
    case OPT_THREADS:
        if (parse_long("--threads", arg, 0, 1024, &v)) return -1;
        o->cfg.threads = (int)v;
        return 0;
    case OPT_EVAL_BATCH:
        if (parse_long("--eval-batch", arg, 1, 1 << 20, &v)) return -1;
        o->cfg.eval_batch_size = (size_t)v;
        return 0;
    case OPT_JSON: o->json = 1; return 0;
    case OPT_OPTIMIZER:
        if (ffnn_optimizer_from_name(arg, &o->cfg.optimizer) != FFNN_OK) break;
        return 0;
    case OPT_MOMENTUM:
        if (parse_fraction("--momentum", arg, &x)) return -1;
        o->cfg.momentum = (float)x;
        o->momentum_flag = "--momentum";
        return 0;
    case OPT_NESTEROV:
        o->cfg.nesterov = 1;
        o->momentum_flag = "--nesterov";
        return 0;
    case OPT_BETA1:
    case OPT_BETA2:
        if (parse_fraction(c == OPT_BETA1 ? "--beta1" : "--beta2", arg, &x)) return -1;
        *(c == OPT_BETA1 ? &o->cfg.beta1 : &o->cfg.beta2) = (float)x;
        o->adam_flag = c == OPT_BETA1 ? "--beta1" : "--beta2";
        return 0;
    case OPT_EPS:
        if (parse_float("--eps", arg, 0.0, 1.0, &x)) return -1;
        o->cfg.epsilon = (float)x;
        o->adam_flag = "--eps";
        return 0;
    case OPT_SAVE: o->save_path = arg; return 0;
    case OPT_INIT: o->init_path = arg; return 0;
    case OPT_LOG_STEPS: o->log_steps = arg; return 0;
    case OPT_LOG: o->log_path = arg; return 0;
    case OPT_CLASSES: {
        int a, b, n = 0;
        if (sscanf(arg, "%d,%d%n", &a, &b, &n) != 2 || arg[n] != '\0' || a < 0 || a > 255 ||
            b < 0 || b > 255 || a == b) {
            fprintf(stderr, "ffnn train: --classes expects two different labels in [0, 255] "
                    "as A,B, found '%s'\n", arg);
            return -1;
        }
        o->class_a = a;
        o->class_b = b;
        return 0;
    }
    case OPT_CHECKPOINT: o->checkpoint_path = arg; return 0;
    case OPT_CHECKPOINT_EVERY:
        return parse_long("--checkpoint-every", arg, 1, INT64_MAX, &o->checkpoint_every);
    case OPT_MAX_STEPS: return parse_long("--max-steps", arg, 1, INT64_MAX, &o->max_steps);
    case OPT_RESUME: o->resume_path = arg; return 0;
    case 'h': return 1;
    default:
        fprintf(stderr, "ffnn train: see 'ffnn train --help'\n");
        return -1;
    }
    fprintf(stderr, "ffnn train: %s\n", ffnn_last_error());
    return -1;
}

/* Record that option c was given (--resume checks those against the checkpoint). */
static void note_given(ffnn_cli_given *g, int c)
{
    switch (c) {
    case OPT_ARCH: g->arch = 1; break;
    case OPT_LOSS: g->loss = 1; break;
    case OPT_EPOCHS: g->epochs = 1; break;
    case OPT_BATCH: g->batch = 1; break;
    case OPT_LR: g->lr = 1; break;
    case OPT_SEED: g->seed = 1; break;
    case OPT_NO_SHUFFLE: g->shuffle = 1; break;
    case OPT_LIMIT: g->train_limit = 1; break;
    case OPT_OPTIMIZER: g->optimizer = 1; break;
    case OPT_MOMENTUM: g->momentum = 1; break;
    case OPT_NESTEROV: g->nesterov = 1; break;
    case OPT_BETA1: g->beta1 = 1; break;
    case OPT_BETA2: g->beta2 = 1; break;
    case OPT_EPS: g->eps = 1; break;
    default: break;
    }
}

static int fail(const char *what)
{
    fprintf(stderr, "ffnn train: %s: %s\n", what, ffnn_last_error());
    return 1;
}

/* Load --data DIR or the default data set; description for the first line. */
static int load_data(const train_options *o, ffnn_dataset **train, ffnn_dataset **test,
                     char *description, size_t description_size)
{
    char dir[4096];
    if (o->data_dir && strncmp(o->data_dir, "synth:", 6) == 0) {
        snprintf(description, description_size, "%s", o->data_dir);
        if (ffnn_dataset_synthetic(o->data_dir, 1, train, test) != FFNN_OK)
            return fail("--data");
    } else {
        if (o->data_dir) {
            snprintf(dir, sizeof dir, "%s", o->data_dir);
            snprintf(description, description_size, "%s", o->data_dir);
        } else if (ffnn_cli_find_default_data(dir, sizeof dir, description, description_size,
                                              stderr) != 0) {
            return 1;
        }
        if (ffnn_dataset_load_idx_dir(dir, train, test) != FFNN_OK)
            return fail("loading data");
    }
    if (o->class_a >= 0) { /* --classes A,B */
        ffnn_dataset *sel[2] = {NULL, NULL};
        if (ffnn_dataset_select_classes(*train, o->class_a, o->class_b, &sel[0]) != FFNN_OK ||
            ffnn_dataset_select_classes(*test, o->class_a, o->class_b, &sel[1]) != FFNN_OK) {
            ffnn_dataset_free(sel[0]);
            return fail("--classes");
        }
        ffnn_dataset_free(*train);
        ffnn_dataset_free(*test);
        *train = sel[0];
        *test = sel[1];
        size_t used = strlen(description);
        snprintf(description + used, description_size - used, ", classes %d,%d as 0,1",
                 o->class_a, o->class_b);
    }
    if (o->train_limit > 0 && (size_t)o->train_limit < ffnn_dataset_count(*train)) {
        ffnn_dataset *part = NULL;
        if (ffnn_dataset_slice(*train, 0, (size_t)o->train_limit, &part) != FFNN_OK)
            return fail("--train-limit");
        ffnn_dataset_free(*train);
        *train = part;
    }
    return 0;
}

static void print_epoch(const train_options *o, const ffnn_epoch_stats *s, double test_loss,
                        double test_accuracy)
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
static int log_epoch(FILE *f, const train_options *o, const ffnn_epoch_stats *s,
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

static int run_training(const train_options *o, ffnn_model *model, ffnn_dataset *train,
                        ffnn_dataset *test, const char *data_description)
{
    ffnn_trainer *trainer = NULL;
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
    if (ffnn_trainer_create(model, train, &cfg, &trainer) != FFNN_OK)
        return fail("setting up training");
    char arch[512], device[256];
    ffnn_model_arch_string(model, arch, sizeof arch);
    if (ffnn_trainer_device(trainer) == FFNN_DEVICE_CUDA) {
        char gpu[200];
        ffnn_cuda_device_name(gpu, sizeof gpu);
        snprintf(device, sizeof device, "cuda (%s, %s kernels%s%s)", gpu,
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
    FILE *info = o->json ? stderr : stdout;
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
    fprintf(info, "arch %s, %zu parameters, loss %s, optimizer %s, batch %zu, lr %g, seed %"
            PRIu64 "\n", arch, ffnn_model_parameter_count(model), ffnn_loss_name(o->cfg.loss),
            optimizer, o->cfg.batch_size, (double)o->cfg.learning_rate, o->cfg.seed);
    fflush(info);
    progress_state progress = {isatty(2) && !o->json, 0, o->cfg.epochs, 0.0};
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
        return 1;
    }
    steps_done = (size_t)(first_epoch - 1) * ffnn_trainer_steps_per_epoch(trainer);
    if (o->log_steps) {
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
    if (o->log_path) {
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
        if (checkpoints.failed) {
            fprintf(stderr, "ffnn train: --checkpoint: %s\n", checkpoints.message);
            rc = 1;
            break;
        }
        if (st != FFNN_OK) {
            rc = fail("training");
            break;
        }
        if (!finished) /* --max-steps */
            break;
        if (ffnn_trainer_evaluate(trainer, test, &test_loss, &test_accuracy) != FFNN_OK) {
            rc = fail("evaluating");
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
        if (rc == 0 && ffnn_cli_checkpoint_save(&checkpoints, trainer) != 0) {
            fprintf(stderr, "ffnn train: --checkpoint: %s\n", checkpoints.message);
            rc = 1;
        }
    }
    if (rc == 0 && checkpoints.stopped)
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
    if (rc == 0 && o->save_path)
        rc = ffnn_cli_save_trained(trainer, model, o->save_path, o->cfg.loss, info);
    ffnn_trainer_free(trainer);
    return rc;
}

static int cmd_train(int argc, char **argv)
{
    train_options o;
    memset(&o, 0, sizeof o);
    o.cfg = ffnn_train_config_default();
    o.class_a = o.class_b = -1;
    o.cfg.threads = 0; /* the CLI uses every core (the library's default is 1) */
    optind = 1;
    argv[0] = "ffnn train"; /* getopt's messages name the command */
    int c;
    while ((c = getopt_long(argc, argv, "h", train_long_options, NULL)) != -1) {
        int r = train_option(&o, c, optarg);
        if (r == 1) {
            fputs(usage_train, stdout);
            return 0;
        }
        if (r < 0)
            return 2;
        note_given(&o.given, c);
    }
    if (optind < argc) {
        fprintf(stderr, "ffnn train: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if ((o.resume_path && o.init_path) || (o.checkpoint_every && !o.checkpoint_path)) {
        fprintf(stderr, "ffnn train: %s\n", o.init_path ? "--resume and --init exclude each "
                "other (the checkpoint holds the weights)" : "--checkpoint-every needs "
                "--checkpoint FILE");
        return 2;
    }
    if (o.resume_path && ffnn_cli_resume_settings(o.resume_path, o.arch, &o.given, &o.cfg,
                                                  &o.train_limit) != 0)
        return 1;
    if (o.checkpoint_path && ffnn_cli_check_checkpoint_path(o.checkpoint_path) != 0)
        return 1;
    if ((o.momentum_flag && o.cfg.optimizer != FFNN_OPT_MOMENTUM) ||
        (o.adam_flag && o.cfg.optimizer != FFNN_OPT_ADAM)) {
        fprintf(stderr, "ffnn train: %s applies to --optimizer %s, not %s\n",
                o.momentum_flag && o.cfg.optimizer != FFNN_OPT_MOMENTUM ? o.momentum_flag
                                                                       : o.adam_flag,
                o.momentum_flag && o.cfg.optimizer != FFNN_OPT_MOMENTUM ? "momentum" : "adam",
                ffnn_optimizer_name(o.cfg.optimizer));
        return 2;
    }
    if (o.save_path && ffnn_cli_check_save_path(o.save_path) != 0)
        return 1;
    ffnn_dataset *train = NULL, *test = NULL;
    char description[512];
    if (load_data(&o, &train, &test, description, sizeof description) != 0) {
        ffnn_dataset_free(train);
        ffnn_dataset_free(test);
        return 1;
    }
    char default_arch[64];
    if (ffnn_dataset_target_width(train) > 0) { /* float targets: one output each, mse */
        snprintf(default_arch, sizeof default_arch, "%zu-256relu-%zu",
                 ffnn_dataset_features(train), ffnn_dataset_target_width(train));
        if (!o.loss_given && !o.resume_path)
            o.cfg.loss = FFNN_LOSS_MSE;
    } else {
        snprintf(default_arch, sizeof default_arch, "%zu-256relu-%d",
                 ffnn_dataset_features(train),
                 ffnn_dataset_classes(train) < 2 ? 2 : ffnn_dataset_classes(train));
    }
    ffnn_model *model = NULL;
    int rc;
    if (o.resume_path ? ffnn_cli_resume_model(o.resume_path, &model) != 0
                      : ffnn_cli_train_model(o.init_path, o.arch, default_arch, o.cfg.seed,
                                             o.loss_given, &o.cfg.loss, &model) != 0)
        rc = 1;
    else {
        o.regression = ffnn_dataset_target_width(train) > 0 && o.cfg.loss == FFNN_LOSS_MSE;
        rc = run_training(&o, model, train, test, description);
    }
    ffnn_model_free(model);
    ffnn_dataset_free(train);
    ffnn_dataset_free(test);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ffnn %s (%s)\n", FFNN_VERSION, ffnn_has_cuda() ? "with CUDA" : "CPU only");
        return 0;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc > 2 && strcmp(argv[2], "train") == 0)
            fputs(usage_train, stdout);
        else if (argc > 2 && strcmp(argv[2], "bench") == 0)
            fputs(ffnn_cli_bench_usage, stdout);
        else if (argc > 2 && strcmp(argv[2], "plot") == 0)
            fputs(ffnn_cli_plot_usage, stdout);
        else if (argc > 2 && ffnn_cli_model_command_usage(argv[2]))
            fputs(ffnn_cli_model_command_usage(argv[2]), stdout);
        else
            fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(argv[1], "train") == 0)
        return cmd_train(argc - 1, argv + 1);
    if (ffnn_cli_is_model_command(argv[1]))
        return ffnn_cli_model_command(argc - 1, argv + 1);
    if (strcmp(argv[1], "bench") == 0)
        return ffnn_cli_bench(argc - 1, argv + 1);
    if (strcmp(argv[1], "plot") == 0)
        return ffnn_cli_plot(argc - 1, argv + 1);
    fprintf(stderr, "ffnn: unknown command '%s'\n\n%s", argv[1], usage_main);
    return 2;
}
