/*
 * mnist_mlp.c - `ffnn bench mnist-mlp` (alias seed000): reproduces report 000
 * (../shared/seeds/000_*.txt: a CUDA MLP for MNIST) with the library API.
 * Network 784-Hrelu-10 (H = 256 unless swept), softmax cross-entropy, SGD, batch 64,
 * lr 0.01 unless swept, shuffled, on the IDX data set of --data (the seed used MNIST;
 * the device has Fashion-MNIST, so absolute accuracies are not comparable with the
 * seed's, only CPU-vs-GPU gaps and trends):
 *   (a) cpu_gpu  10 epochs: the single-threaded CPU reference (1 epoch timed, the
 *                10-epoch time extrapolated x10), the OpenMP backend on all threads,
 *                cuda tiled, cuda naive: time, speedup, accuracy after epoch 1 (all
 *                four) and after 10 (OpenMP and cuda);
 *   (b) batch    32/64/128/256, cuda tiled;
 *   (c) hidden   128/256/512/1024, cuda tiled;
 *   (d) block1d  threads per block of the 1-D kernels 128/256/512, cuda naive;
 *   (e) block2d  naive matmul block 8x8/16x16/32x32, cuda naive;
 *   (f) lr       0.001/0.01/0.1, cuda tiled;
 *   (g) eval     ffnn_trainer_evaluate over the test set with evaluation batch
 *                64/256/512: us per image (median of repeats; it reads its results
 *                back, so it is synchronised).
 * (b)-(g) run the seed's 5 epochs ("all experiments ran for 5 epochs"). Runs of the
 * same configuration are shared between sweeps (run once). (d) and (e) must give
 * bit-identical parameters to the default launch shapes (FNV-1a hash of the synced
 * parameters compared): the knobs change no arithmetic.
 *
 * A run: model created and initialised, trainer created (data uploaded) outside the
 * clock; the clock covers ffnn_trainer_run_epoch only (synchronised: it reads its
 * losses back); after epoch 1 the test set is evaluated with the clock stopped. A
 * run counts only when its final test loss is finite and its test accuracy above
 * 1.5 / classes (chance 1 / classes). One untimed warm-up run per backend first.
 */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnn.h"
#include "harness.h"
#include "suites.h"

#define MAX_REPEATS 101

static const char *usage =
    "usage: ffnn bench mnist-mlp --data DIR [options]\n"
    "\n"
    "Report 000: 784-256relu-10 (softmax CE, SGD, batch 64, lr 0.01, shuffled) on the IDX\n"
    "data set in DIR: (a) CPU reference / OpenMP / cuda tiled / cuda naive, 10 epochs;\n"
    "(b) batch 32..256; (c) hidden 128..1024; (d) 1-D block 128/256/512; (e) naive\n"
    "matmul block 8/16/32; (f) lr 0.001/0.01/0.1 (5 epochs each, as the seed); (g) us\n"
    "per test image of ffnn_trainer_evaluate at evaluation batch 64/256/512. Each run\n"
    "is checked (finite loss, accuracy above chance) before its time counts. Prints and\n"
    "writes DIR/mnist-mlp.csv and DIR/mnist-mlp_table.md, the seed's T4 numbers beside ours.\n"
    "\n"
    "options:\n"
    "  --data DIR        train-/t10k- IDX files (needed unless --quick)\n"
    "  --quick           a smoke run: 1024 training / 256 test samples (of --data, or\n"
    "                    synthetic 784-feature blobs without it), 2 epochs, 1 repeat;\n"
    "                    default --out build/bench-quick\n"
    "  --out DIR         where the CSV and the table go (default build/bench)\n"
    "  --repeats N       timed runs per GPU configuration, median reported (default 3;\n"
    "                    --quick 1); CPU runs: 1\n"
    "  --epochs N        epochs of (a) (default 10; --quick 2)\n"
    "  --sweep-epochs N  epochs of (b)-(g) (default 5; --quick 1)\n"
    "  --ref-epochs N    timed epochs of the CPU reference (default 1; its 10-epoch\n"
    "                    time is extrapolated)\n"
    "  --eval-repeats N  timed evaluations per evaluation batch (default 21)\n"
    "  --threads N       OpenMP threads (default 0: all)\n"
    "  --no-gpu          skip the cuda runs\n"
    "  --no-cpu          skip the CPU runs\n"
    "  --seed N          init and shuffle seed (default 1)\n"
    "  -h, --help        this help\n";

/* ------------------------------------------------------------ the seed's figures */
/* Seed 000, NVIDIA Tesla T4, MNIST. (a): 10 epochs, batch 64. */
#define SEED_CPU_S 298.62
#define SEED_GPU_S 2.25
#define SEED_CPU_ACC 97.93
#define SEED_GPU_ACC 93.86
static const int seed_batch[4] = {32, 64, 128, 256};
static const double seed_batch_s[4] = {1.59, 1.29, 0.96, 0.89};
static const double seed_batch_acc[4] = {94.02, 92.36, 91.10, 89.11};
static const double seed_batch_cpu_s[4] = {141.20, 150.90, 165.59, 174.23};
static const int seed_hidden[4] = {128, 256, 512, 1024};
static const double seed_hidden_s[4] = {1.01, 1.17, 1.64, 2.67};
static const double seed_hidden_acc[4] = {92.13, 92.31, 92.27, 92.35};
static const int seed_b1[3] = {128, 256, 512};
static const double seed_b1_s[3] = {1.17, 1.22, 1.18};
static const double seed_b1_acc[3] = {92.51, 92.10, 92.42};
static const int seed_b2[3] = {8, 16, 32};
static const double seed_b2_s[3] = {1.27, 1.16, 1.40};
static const double seed_b2_acc[3] = {92.28, 92.40, 92.38};
static const double seed_lr[3] = {0.001, 0.01, 0.1};
static const double seed_lr_s[3] = {1.22, 1.20, 1.19};
static const double seed_lr_acc[3] = {89.38, 92.40, 90.52};
static const int seed_eval[3] = {64, 256, 512};
static const double seed_eval_us[3] = {7.4, 12.4, 11.6};
static const double seed_eval_acc[3] = {92.37, 92.40, 92.50};

/* ------------------------------------------------------------ options, rows */

typedef struct options {
    int quick;
    const char *data, *out;
    int repeats, epochs, sweep_epochs, ref_epochs, eval_repeats, threads;
    int gpu, cpu;
    int seed;
} options;

enum { B_REF, B_OMP, B_TILED, B_NAIVE, N_BACKENDS };
static const char *backend_names[N_BACKENDS] = {"cpu_ref", "cpu_omp", "cuda_tiled",
                                                "cuda_naive"};
static const char *backend_labels[N_BACKENDS] = {"CPU reference (1 thread)", "CPU OpenMP",
                                                 "cuda tiled", "cuda naive"};

typedef struct conf {
    int backend, batch, hidden, epochs, block_1d, block_2d;
    double lr;
} conf;

typedef struct row {
    const char *part; /* cpu_gpu | batch | hidden | block1d | block2d | lr | eval */
    conf c;
    int eval_batch, threads, repeats, timed_epochs;
    double sec, sec_min, sec_max; /* the timed epochs                            */
    double sec_full;              /* c.epochs (extrapolated when timed_epochs < it) */
    double acc1, acc, loss;       /* test accuracy after epoch 1, final; test loss */
    double us_per_image;          /* eval                                          */
    uint64_t hash;                /* FNV-1a of the final parameters                */
    double seed_s, seed_acc;      /* the seed's (NaN: none)                        */
    char status[400];
    char device[224];
} row;

typedef struct data {
    ffnn_dataset *train, *test;
} data;

/* One run of the suite. */
typedef struct mnist_mlp {
    ffnn_bench_run run;
    options o;
    data d;
    char data_desc[300];
} mnist_mlp;

static int is_ok(const row *r) { return r != NULL && ffnn_bench_ok(r->status); }
static int is_gpu(int backend) { return backend == B_TILED || backend == B_NAIVE; }

static row *new_row(mnist_mlp *s, const char *part, conf c)
{
    row *r = ffnn_bench_add_row(&s->run);
    r->part = part;
    r->c = c;
    r->sec = r->sec_min = r->sec_max = r->sec_full = NAN;
    r->acc1 = r->acc = r->loss = r->us_per_image = NAN;
    r->seed_s = r->seed_acc = NAN;
    snprintf(r->device, sizeof r->device, "%s",
             is_gpu(c.backend) ? s->run.gpu_name : s->run.cpu_name);
    return r;
}

static const row *row_at(const mnist_mlp *s, size_t i) { return FFNN_BENCH_ROW(&s->run, row, i); }

static int same_conf(const conf *a, const conf *b)
{
    return a->backend == b->backend && a->batch == b->batch && a->hidden == b->hidden &&
           a->epochs == b->epochs && a->block_1d == b->block_1d &&
           a->block_2d == b->block_2d && a->lr == b->lr;
}

static const row *find_run(const mnist_mlp *s, const conf *c)
{
    for (size_t i = 0; i < s->run.n_rows; i++)
        if (strcmp(row_at(s, i)->part, "eval") != 0 && same_conf(&row_at(s, i)->c, c))
            return row_at(s, i);
    return NULL;
}

static const row *find_row(const mnist_mlp *s, const char *part, int backend, double key)
{
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (strcmp(r->part, part) != 0 || r->c.backend != backend) continue;
        double k = strcmp(part, "batch") == 0     ? r->c.batch
                   : strcmp(part, "hidden") == 0  ? r->c.hidden
                   : strcmp(part, "block1d") == 0 ? (r->c.block_1d ? r->c.block_1d : 256)
                   : strcmp(part, "block2d") == 0 ? (r->c.block_2d ? r->c.block_2d : 16)
                   : strcmp(part, "lr") == 0      ? r->c.lr
                   : strcmp(part, "eval") == 0    ? r->eval_batch
                                                  : 0;
        if (k == key) return r;
    }
    return NULL;
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* ------------------------------------------------------------ one run */

/* The run's configuration into *out; the launch shapes are set by name (they
 * are not public fields). FFNN_OK, or the library's error. */
static ffnn_status make_cfg(const options *o, const conf *c, ffnn_train_config *out)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    char block_1d[16], block_2d[16];
    cfg.epochs = c->epochs;
    cfg.batch_size = (size_t)c->batch;
    cfg.learning_rate = (float)c->lr;
    cfg.seed = (uint64_t)o->seed;
    cfg.shuffle = 1;
    cfg.loss = FFNN_LOSS_SOFTMAX_CE;
    cfg.optimizer = FFNN_OPT_SGD;
    cfg.device = is_gpu(c->backend) ? FFNN_DEVICE_CUDA : FFNN_DEVICE_CPU;
    cfg.strategy = c->backend == B_NAIVE ? FFNN_STRATEGY_NAIVE
                   : c->backend == B_REF ? FFNN_STRATEGY_REFERENCE
                                         : FFNN_STRATEGY_TILED;
    cfg.threads = c->backend == B_REF ? 1 : c->backend == B_OMP ? o->threads : 1;
    snprintf(block_1d, sizeof block_1d, "%d", c->block_1d);
    snprintf(block_2d, sizeof block_2d, "%d", c->block_2d);
    ffnn_status st = ffnn_train_config_set(&cfg, "cuda_block_1d", block_1d);
    if (st == FFNN_OK)
        st = ffnn_train_config_set(&cfg, "cuda_block_2d", block_2d);
    *out = cfg;
    return st;
}

typedef struct run_result {
    double sec, acc1, acc, loss;
    uint64_t hash;
    int threads;
} run_result;

static double chance_floor(const ffnn_dataset *test)
{
    int k = ffnn_dataset_classes(test);
    return 1.5 / (double)(k > 1 ? k : 10);
}

/* Train a fresh model for `epochs` (<= c->epochs) epochs; check it. When keep is not
 * NULL the trained (synced) model is handed over. 0, or -1 with why. */
static int train_once(const options *o, const conf *c, int epochs, const ffnn_dataset *train,
                      const ffnn_dataset *test, run_result *res, ffnn_model **keep,
                      char *why, size_t why_size)
{
    char arch[64];
    snprintf(arch, sizeof arch, "%zu-%drelu-10", ffnn_dataset_features(train), c->hidden);
    ffnn_train_config cfg;
    if (make_cfg(o, c, &cfg) != FFNN_OK) {
        snprintf(why, why_size, "%s", ffnn_last_error());
        return -1;
    }
    ffnn_bench_training t = {.arch = arch, .seed = (uint64_t)o->seed, .cfg = &cfg,
                             .train = train, .test = test, .epochs = epochs,
                             .eval_epoch1 = 1, .keep_model = 1};
    if (ffnn_bench_train(&t, why, why_size) != 0) return -1;
    res->threads = t.threads;
    res->sec = t.seconds;
    res->acc1 = t.acc1;
    res->loss = t.loss;
    res->acc = t.acc;
    res->hash = fnv1a(ffnn_model_parameters(t.model),
                      ffnn_model_parameter_count(t.model) * sizeof(float));
    int rc = 0;
    if (!isfinite(res->loss) || !(res->acc > chance_floor(test))) {
        snprintf(why, why_size,
                 "check: test loss %.6g, accuracy %.4f after %d epochs (expected finite, "
                 "above %.3f)", res->loss, res->acc, epochs, chance_floor(test));
        rc = -1;
    }
    if (rc == 0 && keep != NULL)
        *keep = t.model;
    else
        ffnn_model_free(t.model);
    return rc;
}

/* Run configuration c for sweep `part` (or copy the run of the same configuration). */
static row *run_config(mnist_mlp *s, const char *part, conf c, const char *skip)
{
    const options *o = &s->o;
    const data *d = &s->d;
    const row *found = find_run(s, &c);
    row same;
    if (found != NULL) same = *found; /* copied: new_row may move the rows */
    row *r = new_row(s, part, c);
    if (skip != NULL) {
        snprintf(r->status, sizeof r->status, "skipped: %s", skip);
        return r;
    }
    if (found != NULL) {
        *r = same;
        r->part = part;
        return r;
    }
    int repeats = is_gpu(c.backend) ? o->repeats : 1;
    int epochs = c.backend == B_REF && o->ref_epochs < c.epochs ? o->ref_epochs : c.epochs;
    r->repeats = repeats;
    r->timed_epochs = epochs;
    double times[MAX_REPEATS];
    char why[300];
    for (int k = 0; k < repeats; k++) {
        run_result res;
        memset(&res, 0, sizeof res);
        if (train_once(o, &c, epochs, d->train, d->test, &res, NULL, why, sizeof why) != 0) {
            snprintf(r->status, sizeof r->status, "failed: repeat %d: %s", k + 1, why);
            break;
        }
        if (k > 0 && res.hash != r->hash) {
            snprintf(r->status, sizeof r->status,
                     "failed: repeat %d: parameters differ from repeat 1 (not reproducible)",
                     k + 1);
            break;
        }
        times[k] = res.sec;
        r->acc1 = res.acc1;
        r->acc = res.acc;
        r->loss = res.loss;
        r->hash = res.hash;
        r->threads = res.threads;
    }
    if (is_ok(r)) {
        r->sec = ffnn_lab_median(times, (size_t)repeats, &r->sec_min, &r->sec_max);
        r->sec_full = r->sec * (double)c.epochs / (double)epochs;
    }
    fprintf(stderr,
            "  %-8s %-10s batch %-4d H %-5d lr %-6g b1d %-4d b2d %-3d %2d/%2d ep %8.3f s "
            "(10-ep-equiv %8.3f)  acc1 %.4f acc %.4f loss %.4f  %s\n",
            part, backend_names[c.backend], c.batch, c.hidden, c.lr, c.block_1d, c.block_2d,
            epochs, c.epochs, r->sec, r->sec_full, r->acc1, r->acc, r->loss, r->status);
    return r;
}

/* (g): train one model (cuda tiled, sweep epochs), then per evaluation batch a
 * trainer on it: one untimed evaluation, then eval_repeats timed ones. */
static void run_eval(mnist_mlp *s, const char *skip)
{
    const options *o = &s->o;
    const data *d = &s->d;
    conf c = {B_TILED, 64, 256, o->sweep_epochs, 0, 0, 0.01};
    ffnn_model *m = NULL;
    char why[300] = "";
    int failed = 0;
    run_result res;
    memset(&res, 0, sizeof res);
    if (skip == NULL &&
        train_once(o, &c, c.epochs, d->train, d->test, &res, &m, why, sizeof why) != 0)
        failed = 1;
    size_t n = ffnn_dataset_count(d->test);
    for (int i = 0; i < 3; i++) {
        row *r = new_row(s, "eval", c);
        r->eval_batch = seed_eval[i];
        r->seed_s = seed_eval_us[i];
        r->seed_acc = seed_eval_acc[i];
        if (skip != NULL) {
            snprintf(r->status, sizeof r->status, "skipped: %s", skip);
            continue;
        }
        if (failed) {
            snprintf(r->status, sizeof r->status, "failed: training: %s", why);
            continue;
        }
        ffnn_train_config cfg;
        if (make_cfg(o, &c, &cfg) != FFNN_OK) {
            snprintf(r->status, sizeof r->status, "failed: %s", ffnn_last_error());
            continue;
        }
        cfg.eval_batch_size = (size_t)seed_eval[i];
        ffnn_trainer *t = NULL;
        double times[MAX_REPEATS], loss = 0.0, acc = 0.0;
        if (ffnn_trainer_create(m, d->train, &cfg, &t) != FFNN_OK ||
            ffnn_trainer_evaluate(t, d->test, &loss, &acc) != FFNN_OK) {
            snprintf(r->status, sizeof r->status, "failed: %s", ffnn_last_error());
            ffnn_trainer_free(t);
            continue;
        }
        for (int k = 0; k < o->eval_repeats; k++) {
            double t0 = ffnn_bench_now_s();
            if (ffnn_trainer_evaluate(t, d->test, &loss, &acc) != FFNN_OK) {
                snprintf(r->status, sizeof r->status, "failed: repeat %d: %s", k + 1,
                         ffnn_last_error());
                break;
            }
            times[k] = ffnn_bench_now_s() - t0;
        }
        ffnn_trainer_free(t);
        r->acc = acc;
        r->loss = loss;
        r->acc1 = res.acc1;
        r->repeats = o->eval_repeats;
        r->timed_epochs = c.epochs;
        if (is_ok(r) && (!isfinite(loss) || !(acc > chance_floor(d->test))))
            snprintf(r->status, sizeof r->status,
                     "failed: check: test loss %.6g, accuracy %.4f", loss, acc);
        if (is_ok(r)) {
            r->sec = ffnn_lab_median(times, (size_t)o->eval_repeats, &r->sec_min, &r->sec_max);
            r->us_per_image = 1e6 * r->sec / (double)n;
        }
        fprintf(stderr, "  eval     batch %-4d %8.3f ms per test pass, %.3f us/image, acc %.4f  %s\n",
                seed_eval[i], 1e3 * r->sec, r->us_per_image, r->acc, r->status);
    }
    ffnn_model_free(m);
}


/* Warm-up: one untimed 1-epoch run of the backend on a slice. 0 or -1 with why. */
static int warm_up(const options *o, const data *d, int backend, char *why, size_t why_size)
{
    conf c = {backend, 64, 256, 1, 0, 0, 0.01};
    size_t n = ffnn_dataset_count(d->train);
    ffnn_dataset *small = NULL;
    if (ffnn_dataset_slice(d->train, 0, n < 2048 ? n : 2048, &small) != FFNN_OK) {
        snprintf(why, why_size, "slice: %s", ffnn_last_error());
        return -1;
    }
    run_result res;
    int rc = train_once(o, &c, 1, small, d->test, &res, NULL, why, why_size);
    ffnn_dataset_free(small);
    if (rc != 0 && strncmp(why, "check:", 6) == 0) rc = 0; /* too short to learn much */
    return rc;
}

/* ------------------------------------------------------------ output */

/* The CSV file's columns (the harness adds the last, "date"). */
static const char *csv_header =
    "part,backend,batch,hidden,lr,epochs,timed_epochs,block_1d,block_2d,eval_batch,"
    "threads,repeats,seconds,seconds_min,seconds_max,seconds_all_epochs,test_acc_epoch1,"
    "test_acc,test_loss,us_per_image,param_hash,seed_t4_seconds_or_us,seed_t4_acc,"
    "status,device,data";

static void csv_row(FILE *f, const void *vr, const void *vs)
{
    const mnist_mlp *s = vs;
    const row *r = vr;
    fprintf(f, "%s,%s,%d,%d,%g,%d,%d,%d,%d,%d,%d,%d,", r->part,
            backend_names[r->c.backend], r->c.batch, r->c.hidden, r->c.lr, r->c.epochs,
            r->timed_epochs, r->c.block_1d ? r->c.block_1d : 256,
            r->c.block_2d ? r->c.block_2d : 16, r->eval_batch, r->threads, r->repeats);
    FFNN_BENCH_CSV_NUMS(f, r->sec, r->sec_min, r->sec_max, r->sec_full, r->acc1, r->acc,
                        r->loss, r->us_per_image);
    if (is_ok(r))
        fprintf(f, "%016llx,", (unsigned long long)r->hash);
    else
        fputc(',', f);
    FFNN_BENCH_CSV_NUMS(f, r->seed_s, r->seed_acc);
    ffnn_bench_csv_field(f, r->status);
    fputc(',', f);
    ffnn_bench_csv_field(f, r->device);
    fputc(',', f);
    ffnn_bench_csv_field(f, s->data_desc);
}

/* A row's value by fmt, or "-" / "skipped" / "**failed**". */
static void cell_time(FILE *f, const row *r, double v, const char *fmt)
{
    ffnn_bench_md_cell(f, r ? r->status : NULL, v, fmt);
}

static void cell_pct(FILE *f, const row *r, double v)
{
    cell_time(f, r, 100.0 * v, "%.2f");
}

static void sweep_table(FILE *f, const mnist_mlp *s, const char *part, const char *title,
                        const char *col, int backend, const double *keys,
                        const double *seed_s, const double *seed_acc, int n, int identity)
{
    const options *o = &s->o;
    fprintf(f, "### %s (%s, %d epochs)\n\n", title, backend_labels[backend], o->sweep_epochs);
    fprintf(f, "| %s | time (s) | min..max (s) | test acc (%%) | seed T4 time (s) | seed T4 "
               "acc (%%, MNIST) |%s\n",
            col, identity ? " parameters vs default |" : "");
    fprintf(f, "|---:|---:|---:|---:|---:|---:|%s\n", identity ? "---|" : "");
    const row *def = NULL;
    if (identity)
        def = find_row(s, part, backend, strcmp(part, "block1d") == 0 ? 256 : 16);
    for (int i = 0; i < n; i++) {
        const row *r = find_row(s, part, backend, keys[i]);
        fprintf(f, "| %g |", keys[i]);
        cell_time(f, r, r ? r->sec : NAN, "%.3f");
        if (is_ok(r))
            fprintf(f, " %.3f..%.3f |", r->sec_min, r->sec_max);
        else
            fputs(" - |", f);
        cell_pct(f, r, r ? r->acc : NAN);
        ffnn_bench_md_num(f, o->sweep_epochs == 5 ? seed_s[i] : NAN, "%.2f");
        ffnn_bench_md_num(f, o->sweep_epochs == 5 ? seed_acc[i] : NAN, "%.2f");
        if (identity) {
            if (is_ok(r) && is_ok(def))
                fprintf(f, " %s |", r->hash == def->hash ? "bit-identical" : "**DIFFERENT**");
            else
                fputs(" - |", f);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void write_table(FILE *f, const void *vs)
{
    const mnist_mlp *s = vs;
    const options *o = &s->o;
    const char *gpu_name = s->run.gpu_name;
    ffnn_bench_md_heading(f, &s->run,
                          "Report 000: MLP 784-256relu-10, CPU vs GPU and the seed's sweeps");
    fputs("\n\n", f);
    fprintf(f, "- Data: %s.", s->data_desc);
    if (strstr(s->data_desc, "ashion") != NULL)
        fprintf(f, " **The seed used MNIST; we use Fashion-MNIST** (same shapes, a harder "
                   "task), so accuracies are not comparable in absolute terms, only the "
                   "CPU-vs-GPU gaps and the trends.");
    fputc('\n', f);
    fprintf(f, "- GPU: %s. CPU: %s.\n",
            o->gpu ? (gpu_name[0] ? gpu_name : "none") : "not run (--no-gpu)", s->run.cpu_name);
    fprintf(f, "- Softmax CE, SGD, batch 64, lr 0.01, hidden 256 unless swept; shuffled; "
               "init and shuffle seed %llu. Time: ffnn_trainer_run_epoch only (trainer "
               "created and data uploaded before the clock; each epoch reads its losses "
               "back: synchronised); GPU: median of %d fresh runs, CPU: 1 run; one untimed "
               "warm-up run per backend. Check before a time counts: test loss finite, test "
               "accuracy above 1.5x chance. Seed columns: its published figures (NVIDIA "
               "Tesla T4, MNIST).\n\n",
            (unsigned long long)o->seed, o->repeats);

    /* (a) */
    fprintf(f, "### (a) CPU vs GPU, %d epochs\n\n", o->epochs);
    const row *ra[N_BACKENDS];
    for (int b = 0; b < N_BACKENDS; b++) ra[b] = find_row(s, "cpu_gpu", b, 0);
    fprintf(f, "| backend | %d-epoch time (s) | speedup vs CPU reference | test acc after "
               "epoch 1 (%%) | test acc after %d epochs (%%) | seed T4 time (s) | seed T4 "
               "acc (%%, MNIST) |\n",
            o->epochs, o->epochs);
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|\n");
    for (int b = 0; b < N_BACKENDS; b++) {
        const row *r = ra[b];
        fprintf(f, "| %s%s |", backend_labels[b],
                b == B_REF && r && r->timed_epochs < r->c.epochs ? " *" : "");
        cell_time(f, r, r ? r->sec_full : NAN, "%.3f");
        if (is_ok(r) && is_ok(ra[B_REF]))
            fprintf(f, " %.1fx |", ra[B_REF]->sec_full / r->sec_full);
        else
            fputs(" - |", f);
        cell_pct(f, r, r ? r->acc1 : NAN);
        if (r && r->timed_epochs < r->c.epochs)
            fputs(" (not run) |", f);
        else
            cell_pct(f, r, r ? r->acc : NAN);
        int ten = o->epochs == 10;
        ffnn_bench_md_num(
            f, ten && b == B_REF ? SEED_CPU_S : ten && b == B_TILED ? SEED_GPU_S : NAN, "%.2f");
        ffnn_bench_md_num(
            f, ten && b == B_REF ? SEED_CPU_ACC : ten && b == B_TILED ? SEED_GPU_ACC : NAN,
            "%.2f");
        fputc('\n', f);
    }
    if (ra[B_REF] && ra[B_REF]->timed_epochs < ra[B_REF]->c.epochs)
        fprintf(f, "\n\\* The single-threaded reference was timed for %d epoch(s) and its "
                   "%d-epoch time extrapolated (x%g); its accuracy after %d epochs is that of "
                   "the OpenMP backend, which computes the same function (matmul sums in "
                   "another order, ~1e-6 relative).\n",
                ra[B_REF]->timed_epochs, o->epochs,
                (double)o->epochs / ra[B_REF]->timed_epochs, o->epochs);
    if (o->epochs == 10)
        fprintf(f, "\nSeed: speedup %.1fx; its CPU and GPU disagree by %.2f points "
                   "(%.2f%% vs %.2f%%). ",
                SEED_CPU_S / SEED_GPU_S, SEED_CPU_ACC - SEED_GPU_ACC, SEED_CPU_ACC,
                SEED_GPU_ACC);
    if (is_ok(ra[B_OMP]) && is_ok(ra[B_TILED]))
        fprintf(f, "Ours: CPU OpenMP vs cuda tiled after %d epochs: %+.2f points; after "
                   "epoch 1, CPU reference vs cuda tiled: %s. The seed's CPU/GPU accuracy "
                   "gap does not exist here: both compute the same function in float32.\n",
                o->epochs, 100.0 * (ra[B_OMP]->acc - ra[B_TILED]->acc),
                is_ok(ra[B_REF]) ? "see the table" : "not run");
    fputc('\n', f);

    /* (b)-(f) */
    double kb[4], kh[4], k1[3], k2[3];
    for (int i = 0; i < 4; i++) kb[i] = seed_batch[i], kh[i] = seed_hidden[i];
    for (int i = 0; i < 3; i++) k1[i] = seed_b1[i], k2[i] = seed_b2[i];
    sweep_table(f, s, "batch", "(b) Batch size", "batch", B_TILED, kb, seed_batch_s,
                seed_batch_acc, 4, 0);
    fprintf(f, "Seed CPU at these batches: %.1f / %.1f / %.1f / %.1f s (and 10.28%% accuracy "
               "at batch 256).\n\n",
            seed_batch_cpu_s[0], seed_batch_cpu_s[1], seed_batch_cpu_s[2], seed_batch_cpu_s[3]);
    sweep_table(f, s, "hidden", "(c) Hidden width", "hidden", B_TILED, kh, seed_hidden_s,
                seed_hidden_acc, 4, 0);
    sweep_table(f, s, "block1d", "(d) Threads per block of the 1-D kernels (gather, "
                "activations, optimizer)", "block 1-D", B_NAIVE, k1, seed_b1_s, seed_b1_acc,
                3, 1);
    sweep_table(f, s, "block2d", "(e) Naive matmul thread block (edge x edge)", "edge",
                B_NAIVE, k2, seed_b2_s, seed_b2_acc, 3, 1);
    fprintf(f, "(d), (e): the launch shape changes no arithmetic (each output is one "
               "thread's fixed-order chain; the loss and bias-gradient reductions keep their "
               "shapes), so the trained parameters must be bit-identical - checked by a hash "
               "of the parameters; the seed's accuracy moved by up to 0.4 points.\n\n");
    sweep_table(f, s, "lr", "(f) Learning rate", "lr", B_TILED, seed_lr, seed_lr_s,
                seed_lr_acc, 3, 0);
    fprintf(f, "Seed CPU at lr 0.1: 9.82%% (diverged).\n\n");

    /* (g) */
    fprintf(f, "### (g) Evaluation batch: ffnn_trainer_evaluate over the test set (cuda "
               "tiled, model trained %d epochs)\n\n", o->sweep_epochs);
    fprintf(f, "| eval batch | us per image | ms per pass | test acc (%%) | seed T4 us per "
               "image | seed T4 acc (%%, MNIST) |\n");
    fprintf(f, "|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < 3; i++) {
        const row *r = find_row(s, "eval", B_TILED, seed_eval[i]);
        fprintf(f, "| %d |", seed_eval[i]);
        cell_time(f, r, r ? r->us_per_image : NAN, "%.3f");
        cell_time(f, r, r ? 1e3 * r->sec : NAN, "%.3f");
        cell_pct(f, r, r ? r->acc : NAN);
        ffnn_bench_md_num(f, seed_eval_us[i], "%.1f");
        ffnn_bench_md_num(f, o->sweep_epochs == 5 ? seed_eval_acc[i] : NAN, "%.2f");
        fputc('\n', f);
    }
    fprintf(f, "\nMedian of %d timed passes after one untimed pass; each pass returns its "
               "loss and accuracy to the host (synchronised).\n",
            o->eval_repeats);
    int threads = 0;
    for (size_t i = 0; i < s->run.n_rows; i++)
        if (row_at(s, i)->c.backend == B_OMP && is_ok(row_at(s, i)))
            threads = row_at(s, i)->threads;
    if (threads) fprintf(f, "\nCPU OpenMP runs: %d threads.\n", threads);
    int bad = 0;
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (is_ok(r) || ffnn_bench_skipped(r->status)) continue;
        if (bad++ == 0) fprintf(f, "\n**Failed runs:**\n\n");
        fprintf(f, "- %s %s: %s\n", r->part, backend_names[r->c.backend], r->status);
    }
}

/* ------------------------------------------------------------ data */

/* Synthetic stand-in for --quick without --data: 10 Gaussian blobs in [0, 1]^784. */
static int synth_blobs(size_t n, uint64_t seed, ffnn_dataset **out)
{
    const size_t F = 784;
    float *x = malloc(n * F * sizeof *x);
    int32_t *y = malloc(n * sizeof *y);
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return -1;
    }
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (size_t i = 0; i < n; i++) {
        y[i] = (int32_t)(i % 10);
        for (size_t f = 0; f < F; f++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(s >> 11) / 9007199254740992.0;
            double center = (f % 10 == (size_t)y[i]) ? 0.7 : 0.2;
            x[i * F + f] = (float)(center + 0.3 * (u - 0.5));
        }
    }
    int rc = ffnn_dataset_from_arrays(n, F, x, y, 0, NULL, out) == FFNN_OK ? 0 : -1;
    free(x);
    free(y);
    return rc;
}

static int load_data(mnist_mlp *s)
{
    const options *o = &s->o;
    data *d = &s->d;
    if (o->data == NULL) {
        if (synth_blobs(1024, (uint64_t)o->seed, &d->train) != 0 ||
            synth_blobs(256, (uint64_t)o->seed + 1, &d->test) != 0) {
            fprintf(stderr, "ffnn bench mnist-mlp: synthetic data: %s\n", ffnn_last_error());
            return -1;
        }
        snprintf(s->data_desc, sizeof s->data_desc,
                 "synthetic 784-feature blobs (1024 train / 256 test; --quick without --data)");
        return 0;
    }
    ffnn_dataset *train = NULL, *test = NULL;
    if (ffnn_dataset_load_idx_dir(o->data, &train, &test) != FFNN_OK) {
        fprintf(stderr, "ffnn bench mnist-mlp: --data %s: %s\n", o->data, ffnn_last_error());
        return -1;
    }
    if (o->quick) {
        ffnn_dataset *a = NULL, *b = NULL;
        size_t nt = ffnn_dataset_count(train), ne = ffnn_dataset_count(test);
        if (ffnn_dataset_slice(train, 0, nt < 1024 ? nt : 1024, &a) != FFNN_OK ||
            ffnn_dataset_slice(test, 0, ne < 256 ? ne : 256, &b) != FFNN_OK) {
            fprintf(stderr, "ffnn bench mnist-mlp: slice: %s\n", ffnn_last_error());
            ffnn_dataset_free(a);
            ffnn_dataset_free(train);
            ffnn_dataset_free(test);
            return -1;
        }
        ffnn_dataset_free(train);
        ffnn_dataset_free(test);
        train = a;
        test = b;
    }
    d->train = train;
    d->test = test;
    char lower[256];
    size_t i = 0;
    for (; o->data[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)o->data[i]);
    lower[i] = '\0';
    snprintf(s->data_desc, sizeof s->data_desc, "%s (%s; %zu train / %zu test samples)",
             strstr(lower, "fashion") ? "Fashion-MNIST" : "IDX data", o->data,
             ffnn_dataset_count(train), ffnn_dataset_count(test));
    return 0;
}

/* ------------------------------------------------------------ the suite */

int ffnn_bench_mnist_mlp(int argc, char **argv)
{
    mnist_mlp s;
    memset(&s, 0, sizeof s);
    ffnn_bench_begin(&s.run, "mnist-mlp", sizeof(row), offsetof(row, status));
    options *o = &s.o;
    o->repeats = o->epochs = o->sweep_epochs = o->ref_epochs = o->eval_repeats = -1;
    o->gpu = o->cpu = 1;
    o->seed = 1;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_COMMON(o),
        FFNN_BENCH_OPT_TEXT("data", &o->data),
        FFNN_BENCH_OPT_INT("repeats", &o->repeats, 1, MAX_REPEATS),
        FFNN_BENCH_OPT_INT("epochs", &o->epochs, 1, 1000),
        FFNN_BENCH_OPT_INT("sweep-epochs", &o->sweep_epochs, 1, 1000),
        FFNN_BENCH_OPT_INT("ref-epochs", &o->ref_epochs, 1, 1000),
        FFNN_BENCH_OPT_INT("eval-repeats", &o->eval_repeats, 1, MAX_REPEATS),
        FFNN_BENCH_OPT_INT("threads", &o->threads, 0, 1024),
        FFNN_BENCH_OPT_END,
    };
    const int parsed = ffnn_bench_parse_options(&s.run, usage, opts, argc, argv);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
    if (o->data == NULL && !o->quick) {
        fprintf(stderr, "ffnn bench mnist-mlp: --data DIR is needed (IDX files of MNIST or "
                        "Fashion-MNIST); see --help\n");
        return 2;
    }
    if (o->repeats < 0) o->repeats = o->quick ? 1 : 3;
    if (o->epochs < 0) o->epochs = o->quick ? 2 : 10;
    if (o->sweep_epochs < 0) o->sweep_epochs = o->quick ? 1 : 5;
    if (o->ref_epochs < 0) o->ref_epochs = 1;
    if (o->eval_repeats < 0) o->eval_repeats = o->quick ? 3 : 21;
    if (o->out == NULL) o->out = o->quick ? "build/bench-quick" : "build/bench";

    if (load_data(&s) != 0) return 1;
    const char *gpu_skip = ffnn_bench_gpu(&s.run, o->gpu);
    const char *cpu_skip = o->cpu ? NULL : "--no-cpu";
    if (gpu_skip) fprintf(stderr, "cuda runs skipped: %s\n", gpu_skip);
    char why[300];
    const char *skip_b[N_BACKENDS] = {cpu_skip, cpu_skip, gpu_skip, gpu_skip};
    char warm_msg[N_BACKENDS][340];
    for (int b = 0; b < N_BACKENDS; b++) {
        if (skip_b[b] != NULL) continue;
        if (warm_up(o, &s.d, b, why, sizeof why) != 0) {
            snprintf(warm_msg[b], sizeof warm_msg[b], "warm-up failed: %.300s", why);
            fprintf(stderr, "%s: %s\n", backend_names[b], warm_msg[b]);
            skip_b[b] = warm_msg[b];
        }
    }

    /* (a) */
    int E = o->epochs, S = o->sweep_epochs;
    for (int b = B_TILED; b <= B_NAIVE; b++) {
        row *r = run_config(&s, "cpu_gpu", (conf){b, 64, 256, E, 0, 0, 0.01}, skip_b[b]);
        if (b == B_TILED && o->epochs == 10) r->seed_s = SEED_GPU_S, r->seed_acc = SEED_GPU_ACC;
    }
    /* (b)-(f), GPU */
    for (int i = 0; i < 4; i++) {
        row *r = run_config(&s, "batch", (conf){B_TILED, seed_batch[i], 256, S, 0, 0, 0.01},
                            skip_b[B_TILED]);
        r->seed_s = seed_batch_s[i], r->seed_acc = seed_batch_acc[i];
    }
    for (int i = 0; i < 4; i++) {
        row *r = run_config(&s, "hidden", (conf){B_TILED, 64, seed_hidden[i], S, 0, 0, 0.01},
                            skip_b[B_TILED]);
        r->seed_s = seed_hidden_s[i], r->seed_acc = seed_hidden_acc[i];
    }
    for (int i = 0; i < 3; i++) {
        /* the default shape runs as 0 (the default), so it is shared with (e) */
        row *r = run_config(&s, "block1d",
                            (conf){B_NAIVE, 64, 256, S, seed_b1[i] == 256 ? 0 : seed_b1[i], 0, 0.01},
                            skip_b[B_NAIVE]);
        r->seed_s = seed_b1_s[i], r->seed_acc = seed_b1_acc[i];
    }
    for (int i = 0; i < 3; i++) {
        row *r = run_config(&s, "block2d",
                            (conf){B_NAIVE, 64, 256, S, 0, seed_b2[i] == 16 ? 0 : seed_b2[i], 0.01},
                            skip_b[B_NAIVE]);
        r->seed_s = seed_b2_s[i], r->seed_acc = seed_b2_acc[i];
    }
    for (int i = 0; i < 3; i++) {
        row *r = run_config(&s, "lr", (conf){B_TILED, 64, 256, S, 0, 0, seed_lr[i]},
                            skip_b[B_TILED]);
        r->seed_s = seed_lr_s[i], r->seed_acc = seed_lr_acc[i];
    }
    run_eval(&s, skip_b[B_TILED]);
    /* (a), CPU: last, so that the GPU numbers come first */
    for (int b = B_REF; b <= B_OMP; b++) {
        row *r = run_config(&s, "cpu_gpu", (conf){b, 64, 256, E, 0, 0, 0.01}, skip_b[b]);
        if (b == B_REF && o->epochs == 10) r->seed_s = SEED_CPU_S, r->seed_acc = SEED_CPU_ACC;
    }
    /* (d), (e): bit-identical to the default shape */
    for (size_t i = 0; i < s.run.n_rows; i++) {
        row *r = FFNN_BENCH_ROW(&s.run, row, i);
        int b1 = strcmp(r->part, "block1d") == 0, b2 = strcmp(r->part, "block2d") == 0;
        if (!(b1 || b2) || !is_ok(r)) continue;
        const row *def = find_row(&s, r->part, B_NAIVE, b1 ? 256 : 16);
        if (is_ok(def) && def->hash != r->hash)
            snprintf(r->status, sizeof r->status,
                     "failed: parameters differ from the default launch shape's (%016llx vs "
                     "%016llx)", (unsigned long long)r->hash, (unsigned long long)def->hash);
    }
    ffnn_dataset_free(s.d.train);
    ffnn_dataset_free(s.d.test);

    int rc = ffnn_bench_failed_rows(&s.run) > 0;
    if (ffnn_bench_save(&s.run, o->out, csv_header, csv_row, write_table, &s, rc,
                        "SOME RUNS FAILED") != 0)
        rc = 1;
    ffnn_bench_end(&s.run);
    return rc;
}
