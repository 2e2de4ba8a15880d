/*
 * cmd_train.c - ffnn train: its options (those that set a training option come
 * from the library's option table, ffnn_train_option_at, checked against its
 * ranges through options.c and stored with ffnn_train_config_set), the checks
 * between them and the starting model; the data (--data, --classes, --train-limit,
 * the splits) is train_data.c, the run itself train_run.c, the checkpoint parts
 * checkpoints.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoints.h"
#include "commands.h"
#include "default_data.h"
#include "model_files.h"
#include "options.h"
#include "parallel.h"
#include "tabular.h"
#include "train_run.h"
#include "train_tasks.h"

#define CMD "ffnn train"

const char *const ffnn_cli_train_usage =
    "usage: ffnn train [options]\n"
    "\n"
    "Train a multilayer perceptron with mini-batch SGD, SGD with momentum, Adam or\n"
    "AdamW (optionally with weight decay, a learning-rate schedule, gradient clipping,\n"
    "dropout and an EMA of the weights) and\n"
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
    "                    default (docs/CLI.md \"Data sets\" defines them; SEED: 1)\n"
    "  --data FILE.csv   a CSV file (.tsv: tab-separated; .gz: gzip'ed), one sample\n"
    "                    per row: the target column (default the last) holds class\n"
    "                    labels (numbers or text; classes in sorted order, numeric\n"
    "                    when all are integers; the texts are kept in the model), or\n"
    "                    regression targets with --loss mse\n"
    "  --data X.npy --labels y.npy  NumPy arrays: float32/float64 features (rows,\n"
    "                    features); integer labels or float targets\n"
    "  --data FILE.npz   numpy.savez(FILE, x=X, y=y) (compressed or not)\n"
    FFNN_CLI_TABLE_USAGE
    "  --max-one-hot N   categorical columns with more than N levels (default 32)\n"
    "                    get a learned embedding instead of a one-hot block: one\n"
    "                    input each, their level's code, read by an embedding layer\n"
    "                    put first in the network (--arch without one gets it)\n"
    "  --embedding-dim COL:D,...  the embedding dimension of those columns (default\n"
    "                    fastai's min(600, round(1.6 n^0.56)) for n levels); a\n"
    "                    column named here is embedded whatever its level count\n"
    "  --test FILE       a separate test file (same columns as --data)\n"
    "  --test-split F    hold out the fraction F of --data as the test set\n"
    "  --val-split F     hold out the fraction F of the rest as a validation set:\n"
    "                    a validation line per epoch, the test set evaluated once at\n"
    "                    the end. Splits are a fixed permutation of --seed (the test\n"
    "                    split: seed, the validation split: seed + 1), stratified by\n"
    "                    class (docs/CLI.md \"Your own data\" has the rule)\n"
    "  --early-stopping N  stop when the validation loss has not improved for N\n"
    "                    epochs; the best epoch's weights are restored (and saved).\n"
    "                    A checkpoint keeps the best epoch and its weights\n"
    "  --standardize     z-score the features (and regression targets) with the\n"
    "                    training split's mean and standard deviation; the statistics\n"
    "                    are stored in the model, so eval and predict take raw rows\n"
    "  --classes A,B     keep only labels A and B, relabelled 0 and 1 (e.g. 0,1)\n"
    FFNN_CLI_TASKS_USAGE
    "  --arch STR        architecture, e.g. 784-256relu-10 (default: FEATURES-256relu-\n"
    "                    CLASSES of the data; FEATURES-256relu-TARGETS and --loss\n"
    "                    mse for float targets). Syntax: input width, then per layer\n"
    "                    WIDTH[ACTIVATION][:nobias][:dropoutP], ACTIVATION one of\n"
    "                    relu, sigmoid, tanh, identity (default), and as PyTorch's:\n"
    "                      leaky_relu[S]  nn.LeakyReLU(S), slope S >= 0 (0.01)\n"
    "                      elu[A]         nn.ELU(alpha=A), A > 0 (1)\n"
    "                      softplus       nn.Softplus()\n"
    "                      gelu           nn.GELU() (erf form)\n"
    "                      gelu_tanh      nn.GELU(approximate='tanh')\n"
    "                      silu           nn.SiLU()\n"
    "                      mish           nn.Mish()\n"
    "                      hardswish      nn.Hardswish()\n"
    "                    (e.g. 784-256leaky_relu0.2-128elu0.5-10),\n"
    "                    joined by '-' (:dropoutP: inverted dropout of that hidden\n"
    "                    layer's output with probability P while training, as\n"
    "                    torch.nn.Dropout(P) after it; off in evaluation);\n"
    "                    localR[same] instead of WIDTH: a 1-D locally connected layer\n"
    "                    of receptive field R (e.g. 64-local3sigmoid-local5samerelu-2)\n"
    "  --loss NAME       ce (softmax cross-entropy, default) | bce (sigmoid binary\n"
    "                    cross-entropy) | mse (mean squared error)\n"
    "  --epochs N        passes over the training set (default 10)\n"
    "  --batch N         batch_size, samples per optimizer step (default 64)\n"
    "  --lr X            learning_rate (default 0.01)\n"
    "  --optimizer NAME  sgd (default) | momentum (SGD with momentum) | adam | adamw,\n"
    "                    as PyTorch's torch.optim.SGD / Adam / AdamW\n"
    "  --momentum X      momentum of --optimizer momentum, in [0, 1) (default 0.9)\n"
    "  --nesterov        Nesterov momentum (with --optimizer momentum)\n"
    "  --beta1 X         adam: decay of the gradient average, in [0, 1) (default 0.9)\n"
    "  --beta2 X         adam: decay of the squared-gradient average, in [0, 1)\n"
    "                    (default 0.999)\n"
    "  --eps X           adam: added to the denominator, in (0, 1] (default 1e-8)\n"
    "  --weight-decay X  weight decay (torch.optim's weight_decay=X): sgd, momentum,\n"
    "                    adam add X*p to the gradient (L2); adamw multiplies p by\n"
    "                    1 - lr*X (decoupled). Default 0, for adamw 0.01 (AdamW's)\n"
    "  --no-decay-bias   do not decay the biases (PyTorch: a second parameter group\n"
    "                    of the biases with weight_decay=0); default: all decayed\n"
    "  --lr-schedule SPEC  learning-rate schedule, stepped once per epoch as a\n"
    "                    torch.optim.lr_scheduler whose step() runs after each epoch:\n"
    "                    constant (default) | step:STEP_SIZE[:GAMMA] (StepLR, gamma\n"
    "                    0.1) | multistep:M1,M2,...[:GAMMA] (MultiStepLR) |\n"
    "                    exponential:GAMMA (ExponentialLR) | cosine[:T_MAX[:ETA_MIN]]\n"
    "                    (CosineAnnealingLR, T_MAX = --epochs, ETA_MIN 0) |\n"
    "                    linear[:END_FACTOR[:EPOCHS]] (LinearLR(start_factor=1,\n"
    "                    end_factor=END_FACTOR (0), total_iters=EPOCHS (--epochs))) |\n"
    "                    plateau[:PATIENCE[:FACTOR[:MIN_LR[:THRESHOLD]]]]\n"
    "                    (ReduceLROnPlateau(mode='min') on the validation loss\n"
    "                    with --val-split, else on the training loss,\n"
    "                    patience 10, factor 0.1, min_lr 0, threshold 1e-4 rel)\n"
    "  --warmup-steps N  linear warm-up: step k < N of the run (0-based) at (k+1)/N\n"
    "                    of the schedule's rate (torch: LambdaLR stepped per batch)\n"
    "  --clip-grad-norm X  scale the gradient to global L2 norm <= X over all\n"
    "                    parameters before each update (torch.nn.utils.\n"
    "                    clip_grad_norm_(params, X)); --log-steps adds the norm\n"
    "                    before clipping (column grad_norm)\n"
    "  --clip-grad-value X  clamp every gradient element to [-X, X] (torch.nn.utils.\n"
    "                    clip_grad_value_(params, X)); before the norm when both\n"
    "  --ema DECAY       keep an exponential moving average of the weights, ema =\n"
    "                    DECAY ema + (1 - DECAY) w after each step (torch:\n"
    "                    ema.mul_(DECAY).add_(w, alpha=1-DECAY)); evaluation and\n"
    "                    --save use the EMA weights\n"
    "  --seed N          seed for initial weights and shuffling (default 1)\n"
    "  --no-shuffle      visit the training set in file order every epoch\n"
    "  --drop-last       drop the last, short batch of each epoch (default: kept, as\n"
    "                    PyTorch's DataLoader); a --batch above the training set\n"
    "                    trains on the whole set as one batch (a note says so)\n"
    "  --train-limit N   use only the first N training samples\n"
    "  --device NAME     cpu | cuda (default: cuda when a GPU is present, else cpu)\n"
    "  --strategy NAME   cuda training strategy (docs/PERFORMANCE.md): auto (default:\n"
    "                    the fastest for the net and batch) | persistent | graph |\n"
    "                    fused | cublas | cublaslt | tiled | naive; tune: auto by\n"
    "                    measurement (times persistent, graph, fused, cublas,\n"
    "                    cublaslt on a few steps, trains with the fastest; the cpu\n"
    "                    and --gpus: auto); reference: the single-threaded cpu\n"
    "                    reference backend; batched (ffnn sweep only): all the\n"
    "                    models in one kernel launch per op (docs/SWEEP.md)\n"
    "  --precision NAME  cuda matmul arithmetic: fp32 (default) | tf32 | bf16 (tensor\n"
    "                    cores, fp32 accumulation and master weights; with cublas,\n"
    "                    cublaslt, fused or graph: fused/graph on ffnn's own mma.sync\n"
    "                    kernel; cublaslt bf16 keeps bf16 copies of the weights and\n"
    "                    bf16 activations) | tf32x3 (fp32's accuracy on the TF32\n"
    "                    tensor cores: each input split into two TF32 parts, three\n"
    "                    products; cublas or cublaslt; auto: cublaslt)\n"
    "  --steps-per-launch N  steps per launch: graph (default 16), persistent\n"
    "                    (default: an epoch), cublas and cublaslt (default 8; N > 1\n"
    "                    captures them in a CUDA graph); graph, cublas, cublaslt\n"
    "                    keep 128 graphs: their default grows so an epoch needs at\n"
    "                    most 128 launches; progress and stops fall between launches\n"
    "  --threads N       cpu: the OpenMP backend on N threads; 0 = all cores\n"
    "                    (default)\n"
    "  --eval-batch N    samples per forward pass when evaluating (default 1024)\n"
    "  --json            print one JSON object per epoch instead of a text line\n"
    "  --print-every N   print the line (or JSON object) of the first epoch, of every\n"
    "                    N-th and of the last (default 1: every epoch)\n"
    "  --quiet           no progress bar and only the last epoch's line (the header\n"
    "                    lines, the test line, warnings and errors stay)\n"
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
    "                    train-limit, epochs, early-stopping) are used; a flag given\n"
    "                    must agree with the checkpoint, except --epochs (the total\n"
    "                    to reach) and --early-stopping (the patience from now on)\n"
    "  --gpus N|all      data-parallel training on N GPUs of this process (NCCL, one\n"
    "                    thread per GPU): each computes its share of every batch, the\n"
    "                    gradients are summed; same training as one GPU. Under mpirun\n"
    "                    (mpirun -np R ffnn train ...) the ranks split every batch the\n"
    "                    same way (MPI on cpu, NCCL on cuda: one GPU per rank)\n"
    "  --comm-timing     data parallel: time the gradient all-reduce of every step\n"
    "                    and print, after training, its ms/step and the part not\n"
    "                    overlapped with the backward pass (a synchronisation per\n"
    "                    step; steps inside CUDA graphs are not timed)\n"
    "  -h, --help        this help\n"
    "\n"
    "SIGINT (Ctrl-C) or SIGTERM: the current step finishes, the checkpoint and the model\n"
    "(marked interrupted) are written, the command that resumes is printed, exit 130; a\n"
    "second signal exits at once. Output paths are checked before the data is read; a\n"
    "network that needs more memory than there is is refused with the estimate.\n";

/* The options that are not a field of ffnn_train_config (and --lr-schedule, whose
 * SPEC sets several); those of the library's option table (core/train_options.def,
 * ffnn_train_option_at) are OPT_TABLE + their index, and go through the table. */
enum { OPT_DATA = 256, OPT_ARCH, OPT_LIMIT, OPT_JSON, OPT_SAVE, OPT_INIT, OPT_LOG_STEPS,
       OPT_LOG, OPT_CLASSES, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY, OPT_MAX_STEPS, OPT_RESUME,
       OPT_GPUS, OPT_COMM_TIMING, OPT_TEST, OPT_TEST_SPLIT, OPT_VAL_SPLIT, OPT_STANDARDIZE,
       OPT_LR_SCHEDULE, OPT_PRINT_EVERY, OPT_QUIET, OPT_ALLOW_MANY_CLASSES, OPT_SAMPLE_WEIGHT,
       OPT_CLASS_WEIGHT, OPT_CV, OPT_MAX_ONE_HOT, OPT_EMBEDDING_DIM, OPT_TABLE = 1024 };

static const struct option fixed_longopts[] = {
    {"data", required_argument, NULL, OPT_DATA},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"train-limit", required_argument, NULL, OPT_LIMIT},
    {"json", no_argument, NULL, OPT_JSON},
    {"save", required_argument, NULL, OPT_SAVE},
    {"init", required_argument, NULL, OPT_INIT},
    {"log-steps", required_argument, NULL, OPT_LOG_STEPS},
    {"log", required_argument, NULL, OPT_LOG},
    {"classes", required_argument, NULL, OPT_CLASSES},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {"max-steps", required_argument, NULL, OPT_MAX_STEPS},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"comm-timing", no_argument, NULL, OPT_COMM_TIMING},
    {"test", required_argument, NULL, OPT_TEST},
    {"test-split", required_argument, NULL, OPT_TEST_SPLIT},
    {"val-split", required_argument, NULL, OPT_VAL_SPLIT},
    {"standardize", no_argument, NULL, OPT_STANDARDIZE},
    FFNN_CLI_TABLE_LONGOPTS,
    {"lr-schedule", required_argument, NULL, OPT_LR_SCHEDULE},
    {"print-every", required_argument, NULL, OPT_PRINT_EVERY},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"allow-many-classes", no_argument, NULL, OPT_ALLOW_MANY_CLASSES},
    {"sample-weight", required_argument, NULL, OPT_SAMPLE_WEIGHT},
    {"class-weight", required_argument, NULL, OPT_CLASS_WEIGHT},
    {"cv", required_argument, NULL, OPT_CV},
    {"max-one-hot", required_argument, NULL, OPT_MAX_ONE_HOT},
    {"embedding-dim", required_argument, NULL, OPT_EMBEDDING_DIM},
    {"help", no_argument, NULL, 'h'},
};
enum { FIXED_COUNT = sizeof fixed_longopts / sizeof fixed_longopts[0], TABLE_MAX = 128 };

/* Hidden spellings of table options: a former name. */
static const struct { const char *spelling, *option; } aliases[] = {
    {"kernels", "strategy"}, /* --strategy's former name */
};
enum { ALIAS_COUNT = sizeof aliases / sizeof aliases[0] };

/* The getopt table: the fixed options, then one row per option of the library's
 * table that the command line spells "--name" (a BOOL's is a flag: it sets the
 * opposite of the default), then the aliases; ends with the zero row. */
static void build_longopts(struct option *out)
{
    size_t n = 0;
    memcpy(out, fixed_longopts, sizeof fixed_longopts);
    n = FIXED_COUNT;
    for (size_t i = 0; i < ffnn_train_option_count() && i < TABLE_MAX; i++) {
        const ffnn_train_option *t = ffnn_train_option_at(i);
        if (strncmp(t->cli, "--", 2) != 0 || strchr(t->cli, ' '))
            continue; /* none, or part of another option's value */
        out[n++] = (struct option){t->cli + 2, t->type == FFNN_OPTION_BOOL ? no_argument
                                   : required_argument, NULL, OPT_TABLE + (int)i};
    }
    for (size_t k = 0; k < ALIAS_COUNT; k++)
        for (size_t i = 0; i < ffnn_train_option_count() && i < TABLE_MAX; i++)
            if (!strcmp(ffnn_train_option_at(i)->name, aliases[k].option))
                out[n++] = (struct option){aliases[k].spelling, required_argument, NULL,
                                           OPT_TABLE + (int)i};
    out[n] = (struct option){NULL, 0, NULL, 0};
}

/* The usage text, with a line for each table option whose flag it does not
 * mention yet (a new option has help from its row until the text above gets its
 * own lines); malloc'd, NULL when out of memory. */
static char *compose_usage(void)
{
    size_t size = strlen(ffnn_cli_train_usage) + 1, used = 0;
    char *text = NULL, flag[64], value[64] = "";
    const ffnn_train_config d = ffnn_train_config_default();
    for (int pass = 0; pass < 2; pass++) {
        int listed = 0;
        if (pass == 1 && !(text = malloc(size)))
            return NULL;
        used = pass ? (size_t)snprintf(text, size, "%s", ffnn_cli_train_usage) : 0;
        for (size_t i = 0; i < ffnn_train_option_count(); i++) {
            const ffnn_train_option *t = ffnn_train_option_at(i);
            snprintf(flag, sizeof flag, "  %s ", t->cli);
            if (strncmp(t->cli, "--", 2) || strchr(t->cli, ' ') ||
                strstr(ffnn_cli_train_usage, flag))
                continue;
            ffnn_train_config_get(&d, t->name, value, sizeof value);
            int n = snprintf(pass ? text + used : NULL, pass ? size - used : 0,
                             "%s  %s%s  %s (default %s)\n", listed++ ? "" : "\nmore options:\n",
                             t->cli, t->type == FFNN_OPTION_BOOL ? "" : " VALUE", t->help,
                             value);
            if (pass)
                used += (size_t)n;
            else
                size += (size_t)n + 16;
        }
    }
    return text;
}

/* Which ffnn_cli_given flag a table option sets (--resume checks them against the
 * checkpoint); options not listed have none. */
static const struct { const char *option; size_t flag; } given_flags[] = {
    {"epochs", offsetof(ffnn_cli_given, epochs)},
    {"batch_size", offsetof(ffnn_cli_given, batch)},
    {"learning_rate", offsetof(ffnn_cli_given, lr)},
    {"seed", offsetof(ffnn_cli_given, seed)},
    {"shuffle", offsetof(ffnn_cli_given, shuffle)},
    {"drop_last", offsetof(ffnn_cli_given, drop_last)},
    {"loss", offsetof(ffnn_cli_given, loss)},
    {"optimizer", offsetof(ffnn_cli_given, optimizer)},
    {"momentum", offsetof(ffnn_cli_given, momentum)},
    {"nesterov", offsetof(ffnn_cli_given, nesterov)},
    {"beta1", offsetof(ffnn_cli_given, beta1)},
    {"beta2", offsetof(ffnn_cli_given, beta2)},
    {"epsilon", offsetof(ffnn_cli_given, eps)},
    {"weight_decay", offsetof(ffnn_cli_given, decay)},
    {"decay_bias", offsetof(ffnn_cli_given, decay)},
    {"warmup_steps", offsetof(ffnn_cli_given, schedule)},
    {"clip_grad_norm", offsetof(ffnn_cli_given, clip)},
    {"clip_grad_value", offsetof(ffnn_cli_given, clip)},
    {"ema_decay", offsetof(ffnn_cli_given, ema)},
    {"early_stopping", offsetof(ffnn_cli_given, early_stopping)},
};

/* The command line's own lower bounds, stricter than the library's: a run of
 * ffnn train trains at least one epoch (the library takes 0: a trainer only set
 * up and evaluated), and --early-stopping 0 would be the library's "off". */
static const struct { const char *option; double min; } cli_min[] = {
    {"epochs", 1},
    {"early_stopping", 1},
};

/* Table option t (index i) with value arg (NULL for a flag) into o: checked
 * against the option's range (the messages of options.c), then stored through
 * ffnn_train_config_set; the optimizer's own flags are noted. 0, or 2. */
static int table_option(ffnn_cli_train_options *o, size_t i, const char *arg)
{
    const ffnn_train_option *t = ffnn_train_option_at(i);
    const char *opt = t->cli;
    ffnn_config_limit lim = t->limit;
    long long v = 0;
    double x = 0;
    int rc = 0;
    for (size_t k = 0; k < sizeof cli_min / sizeof cli_min[0]; k++)
        if (!strcmp(cli_min[k].option, t->name))
            lim.min = cli_min[k].min;
    if (t->type == FFNN_OPTION_BOOL)
        arg = t->default_value != 0 ? "false" : "true"; /* the flag: not the default */
    else if (t->type == FFNN_OPTION_FLOAT)
        rc = ffnn_cli_limit_number(CMD, opt, &lim, arg, &x);
    else if (t->type != FFNN_OPTION_ENUM)
        rc = ffnn_cli_limit_int(CMD, opt, &lim, arg, &v);
    if (rc == 0 && t->type == FFNN_OPTION_FLOAT && x != 0.0 && (float)x == 0.0f) {
        fprintf(stderr, "%s: %s %s: expected a value a 32-bit float can hold, found one below "
                "its smallest (about 1.4e-45): it would become 0\n", CMD, opt, arg);
        return 2;
    }
    if (rc != 0)
        return rc;
    if (ffnn_train_config_set(&o->cfg, t->name, arg) != FFNN_OK) {
        fprintf(stderr, "%s: %s\n", CMD, ffnn_last_error()); /* an enum: names the accepted */
        return 2;
    }
    if (t->checkpoint == FFNN_CK_MOMENTUM)
        o->momentum_flag = opt;
    if (t->checkpoint == FFNN_CK_ADAM)
        o->adam_flag = opt;
    if (!strcmp(t->name, "weight_decay"))
        o->weight_decay_given = 1;
    if (!strcmp(t->name, "loss"))
        o->loss_given = 1;
    for (size_t k = 0; k < sizeof given_flags / sizeof given_flags[0]; k++)
        if (!strcmp(given_flags[k].option, t->name))
            *(int *)(void *)((char *)&o->given + given_flags[k].flag) = 1;
    return 0;
}

/* What the option loop fills: the options, and which table options were given. */
typedef struct parse_ctx {
    ffnn_cli_train_options *o;
    unsigned char given[TABLE_MAX]; /* [ffnn_train_option_count()] */
} parse_ctx;

/* The options ffnn_cli_resume_settings (checkpoints.c) takes from a checkpoint
 * itself, with its own messages; every other option a checkpoint records is taken
 * from it by resume_other_options unless given, so that a new option needs no
 * edit there. */
static const char *const resumed_by_hand[] = {
    "epochs", "batch_size", "learning_rate", "seed", "shuffle", "drop_last", "loss",
    "optimizer", "momentum", "nesterov", "beta1", "beta2", "epsilon", "weight_decay",
    "decay_bias", "lr_schedule", "lr_step_size", "lr_gamma", "lr_milestones", "lr_t_max",
    "lr_min", "lr_end_factor", "lr_total_iters", "lr_patience", "lr_factor", "lr_threshold",
    "clip_grad_norm", "clip_grad_value", "ema_decay", "warmup_steps", "early_stopping",
};

/* --resume: the recorded options not given and not in resumed_by_hand, from the
 * checkpoint at path into *cfg (read only when there is one). 0, or 1. */
static int resume_other_options(const char *path, const unsigned char *given,
                                ffnn_train_config *cfg)
{
    ffnn_checkpoint_info info;
    int loaded = 0;
    for (size_t i = 0; i < ffnn_train_option_count() && i < TABLE_MAX; i++) {
        const ffnn_train_option *t = ffnn_train_option_at(i);
        size_t k = 0, n = sizeof resumed_by_hand / sizeof resumed_by_hand[0];
        while (k < n && strcmp(resumed_by_hand[k], t->name) != 0)
            k++;
        if (t->checkpoint == FFNN_CK_NONE || given[i] || k < n)
            continue;
        if (!loaded && ffnn_checkpoint_load(path, NULL, &info) != FFNN_OK) {
            fprintf(stderr, "%s: --resume: %s\n", CMD, ffnn_last_error());
            return 1;
        }
        loaded = 1;
        memcpy((char *)cfg + t->offset, (const char *)&info.cfg + t->offset, t->size);
        if (t->type == FFNN_OPTION_INT_LIST)
            memcpy((char *)cfg + t->count_offset, (const char *)&info.cfg + t->count_offset,
                   sizeof(int));
    }
    return 0;
}

/* One option (an ffnn_cli_option_fn); 0, or 2 with the message printed. */
static int train_option(void *ctx, int c, const char *arg)
{
    parse_ctx *p = ctx;
    ffnn_cli_train_options *o = p->o;
    long long v = 0;
    int rc = 0;

    if (ffnn_cli_table_option(CMD, &o->table, c, arg, &rc))
        return rc;
    if (c >= OPT_TABLE && (size_t)(c - OPT_TABLE) < ffnn_train_option_count()) {
        p->given[c - OPT_TABLE] = 1;
        return table_option(o, (size_t)(c - OPT_TABLE), arg);
    }
    switch (c) {
    case OPT_DATA: o->data = arg; break;
    case OPT_ARCH: o->arch = arg, o->given.arch = 1; break;
    case OPT_LIMIT:
        rc = ffnn_cli_int(CMD, "--train-limit", arg, 1, INT32_MAX, &o->train_limit);
        o->given.train_limit = rc == 0;
        break;
    case OPT_JSON: o->json = 1; break;
    case OPT_QUIET: o->quiet = 1; break;
    case OPT_SAVE: o->save_path = arg; break;
    case OPT_INIT: o->init_path = arg; break;
    case OPT_LOG_STEPS: o->log_steps = arg; break;
    case OPT_LOG: o->log_path = arg; break;
    case OPT_CLASSES: /* two class numbers */
        rc = ffnn_cli_classes(CMD, arg, &o->class_a, &o->class_b);
        break;
    case OPT_CHECKPOINT: o->checkpoint_path = arg; break;
    case OPT_CHECKPOINT_EVERY:
        rc = ffnn_cli_int(CMD, "--checkpoint-every", arg, 1, INT64_MAX, &o->checkpoint_every);
        break;
    case OPT_MAX_STEPS:
        rc = ffnn_cli_int(CMD, "--max-steps", arg, 1, INT64_MAX, &o->max_steps);
        break;
    case OPT_PRINT_EVERY:
        if ((rc = ffnn_cli_int(CMD, "--print-every", arg, 1, INT32_MAX, &v)) == 0)
            o->print_every = (int)v;
        break;
    case OPT_RESUME: o->resume_path = arg; break;
    case OPT_GPUS: /* data parallelism over N GPUs of this process (cli/parallel.c) */
        if (strcmp(arg, "all") == 0)
            o->gpus = -1;
        else if ((rc = ffnn_cli_int(CMD, "--gpus", arg, 1, 1024, &v)) == 0)
            o->gpus = (int)v;
        break;
    case OPT_COMM_TIMING: o->comm_timing = 1; break;
    case OPT_TEST: o->test_path = arg; break;
    case OPT_TEST_SPLIT:
        rc = ffnn_cli_number(CMD, "--test-split", arg, 0.0, 1, 1.0, 1, &o->test_split);
        break;
    case OPT_VAL_SPLIT:
        rc = ffnn_cli_number(CMD, "--val-split", arg, 0.0, 1, 1.0, 1, &o->val_split);
        break;
    case OPT_STANDARDIZE: o->standardize = 1; break;
    case OPT_ALLOW_MANY_CLASSES: o->allow_many_classes = 1; break;
    case OPT_SAMPLE_WEIGHT: o->sample_weight = arg; break;
    case OPT_CLASS_WEIGHT: o->class_weight = arg; break;
    case OPT_CV:
        if ((rc = ffnn_cli_int(CMD, "--cv", arg, 2, 1000, &v)) == 0)
            o->cv = (int)v;
        break;
    case OPT_MAX_ONE_HOT:
        if ((rc = ffnn_cli_int(CMD, "--max-one-hot", arg, 0, 1 << 24, &v)) == 0)
            o->embedding.max_one_hot = v;
        break;
    case OPT_EMBEDDING_DIM: o->embedding.dims = arg; break;
    case OPT_LR_SCHEDULE:
        rc = ffnn_cli_lr_schedule(CMD, "--lr-schedule", arg, &o->cfg);
        o->given.schedule = o->given.schedule || rc == 0;
        break;
    default: return 2; /* not in the getopt table */
    }
    return rc;
}

/* The option pairs that exclude or need each other; 0, or 2 with the message. */
static int check_combinations(const ffnn_cli_train_options *o)
{
    int mpi_ranks = 0;
    if (o->gpus != 0 && (o->cfg.device == FFNN_DEVICE_CPU || ffnn_cli_mpi_launched(&mpi_ranks))) {
        fprintf(stderr, "%s: --gpus %s\n", CMD, o->cfg.device == FFNN_DEVICE_CPU
                ? "trains on GPUs: it excludes --device cpu"
                : "drives the GPUs of one process; under mpirun each rank takes one GPU of its "
                  "node (leave --gpus out)");
        return 2;
    }
    if ((o->resume_path && o->init_path) || (o->checkpoint_every && !o->checkpoint_path)) {
        fprintf(stderr, "%s: %s\n", CMD, o->init_path ? "--resume and --init exclude each "
                "other (the checkpoint holds the weights)" : "--checkpoint-every needs "
                "--checkpoint FILE");
        return 2;
    }
    return 0;
}

/* The optimizer's own flags only with that optimizer; 0, or 2 with the message. */
static int check_optimizer_flags(const ffnn_cli_train_options *o)
{
    const ffnn_train_config *cfg = &o->cfg;
    if ((o->momentum_flag && cfg->optimizer != FFNN_OPT_MOMENTUM) ||
        (o->adam_flag && cfg->optimizer != FFNN_OPT_ADAM && cfg->optimizer != FFNN_OPT_ADAMW)) {
        int momentum = o->momentum_flag && cfg->optimizer != FFNN_OPT_MOMENTUM;
        fprintf(stderr, "%s: %s applies to --optimizer %s, not %s\n", CMD,
                momentum ? o->momentum_flag : o->adam_flag, momentum ? "momentum" : "adam",
                ffnn_optimizer_name(cfg->optimizer));
        return 2;
    }
    return 0;
}

/* The test set's labels must be classes of the model, checked before training
 * (evaluation after the first epoch would otherwise be the first to notice).
 * 0, or 1 with the message naming the file. */
static int check_test_labels(const ffnn_cli_train_options *o, const ffnn_dataset *test,
                             const ffnn_model *model)
{
    const int32_t *labels = ffnn_dataset_labels(test);
    int idx = o->data && strncmp(o->data, "synth:", 6) && !ffnn_cli_is_table(o->data) &&
              !o->test_path;
    int classes = ffnn_model_class_count(model);
    if (!labels || o->cfg.loss == FFNN_LOSS_MSE)
        return 0;
    for (size_t i = 0; i < ffnn_dataset_count(test); i++)
        if (labels[i] >= classes) {
            fprintf(stderr, "%s: the test set%s%s%s: sample %zu has label %d, but the network "
                    "has %d classes (0 to %d): fix --arch or the data\n", CMD,
                    idx ? " (" : "", idx ? o->data : "",
                    idx ? "/t10k-labels-idx1-ubyte[.gz])" : "",
                    i, labels[i], classes, classes - 1);
            return 1;
        }
    return 0;
}

int ffnn_cli_train_parse(int argc, char **argv, ffnn_cli_train_options *op)
{
    ffnn_cli_train_options o;
    memset(&o, 0, sizeof o);
    o.cfg = ffnn_train_config_default();
    o.class_a = o.class_b = -1;
    o.embedding.max_one_hot = -1; /* the default */
    o.argc = argc;
    o.argv = argv;
    int operands;
    struct option longopts[FIXED_COUNT + TABLE_MAX + ALIAS_COUNT + 1];
    build_longopts(longopts);
    char *usage = compose_usage();
    if (!usage)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    parse_ctx parse = {&o, {0}};
    int rc = ffnn_cli_getopt(CMD, argc, argv, longopts, usage, train_option, &parse, &operands);
    free(usage);
    if (rc != 0)
        return rc < 0 ? -1 : rc;
    if (operands < argc)
        return ffnn_cli_unexpected(CMD, argv[operands]);
    if (check_combinations(&o) != 0 || ffnn_cli_cv_check(CMD, &o) != 0)
        return 2;
    if (o.resume_path &&
        ffnn_cli_resume_settings(o.resume_path, o.arch, &o.given,
                                 o.test_split > 0 || o.val_split > 0, &o.cfg,
                                 &o.train_limit) != 0)
        return 1;
    if (o.resume_path && resume_other_options(o.resume_path, parse.given, &o.cfg) != 0)
        return 1;
    if (o.checkpoint_path &&
        ffnn_cli_check_output_path(CMD, "--checkpoint", o.checkpoint_path) != 0)
        return 1;
    if (check_optimizer_flags(&o) != 0)
        return 2;
    if (o.cfg.optimizer == FFNN_OPT_ADAMW && !o.weight_decay_given && !o.resume_path)
        o.cfg.weight_decay = 0.01f; /* torch.optim.AdamW's default */
    /* the schedules' lengths in epochs, fixed now (a checkpoint records them; a
     * resumed run may change --epochs) */
    if (o.cfg.lr_schedule == FFNN_LR_COSINE && o.cfg.lr_t_max == 0)
        o.cfg.lr_t_max = o.cfg.epochs;
    if (o.cfg.lr_schedule == FFNN_LR_LINEAR && o.cfg.lr_total_iters == 0)
        o.cfg.lr_total_iters = o.cfg.epochs;
    if ((o.save_path && ffnn_cli_check_output_path(CMD, "--save", o.save_path) != 0) ||
        (o.log_path && ffnn_cli_check_output_path(CMD, "--log", o.log_path) != 0) ||
        (o.log_steps && ffnn_cli_check_output_path(CMD, "--log-steps", o.log_steps) != 0))
        return 1;
    if (o.cfg.early_stopping && o.val_split <= 0) {
        fprintf(stderr, "%s: --early-stopping%s needs a validation set (--val-split F)\n", CMD,
                o.given.early_stopping ? "" : " (the checkpoint's)");
        return 2;
    }
    if (o.test_path && o.test_split > 0) {
        fprintf(stderr, "%s: --test and --test-split exclude each other\n", CMD);
        return 2;
    }
    *op = o;
    return 0;
}

int ffnn_cli_train(int argc, char **argv)
{
    ffnn_cli_train_options o;
    int rc = ffnn_cli_train_parse(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    ffnn_dataset *train = NULL, *val = NULL, *test = NULL;
    ffnn_model *model = NULL;
    char description[1024], arch[FFNN_CLI_ARCH_SIZE];
    if (ffnn_cli_train_data(&o, &train, &val, &test, arch, sizeof arch, description,
                            sizeof description) != 0) {
        rc = 1;
    } else if (!o.resume_path && !o.init_path &&
               ffnn_train_check_memory(o.arch ? o.arch : arch, train, &o.cfg) != FFNN_OK) {
        fprintf(stderr, "%s: --arch: %s\n", CMD, ffnn_last_error());
        rc = 1;
    } else if (o.cv && (rc = ffnn_cli_train_cv(CMD, &o, train, arch, description)) != 0) {
        /* the message is printed */
    } else if (o.cv && !o.save_path) {
        /* the folds are the result; with --save, a model refit on all rows below */
    } else if (o.resume_path ? ffnn_cli_resume_model(o.resume_path, &model) != 0
                             : ffnn_cli_train_model(o.init_path, o.arch, arch, o.cfg.seed,
                                                    o.loss_given, &o.cfg.loss, &model) != 0) {
        rc = 1;
    } else {
        o.regression = ffnn_dataset_target_width(train) > 0 && o.cfg.loss == FFNN_LOSS_MSE;
        rc = check_test_labels(&o, test, model);
        if (rc == 0)
            rc = ffnn_cli_train_launch(&o, o.gpus, model, train, val, test, description);
    }
    ffnn_model_free(model);
    ffnn_dataset_free(train);
    ffnn_dataset_free(val);
    ffnn_dataset_free(test);
    return rc;
}
