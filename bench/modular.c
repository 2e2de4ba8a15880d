/*
 * modular.c - `ffnn bench modular` (alias seed004): reproduces report 004
 * (../shared/seeds/004_*.txt: a modular CUDA MLP from scratch; its
 * loss kernel went from 200.9 us to 2.49 us when unified memory and atomics gave way
 * to a warp-shuffle reduction) with ffnn. Three parts:
 *
 *  a) accuracy and training time of the seed's three networks, cuda (tiled) and the
 *     OpenMP backend on all CPU threads, through the library API:
 *       points  synth:points:2100, 2-30relu-30relu-1, bce, batch 100, 1000 epochs
 *       binary  Fashion-MNIST classes 0/1 (ffnn_dataset_select_classes), the seed's
 *               MNIST 0/1: 784-128relu-64relu-1, bce, batch 2, 5 epochs
 *       full    Fashion-MNIST, the seed's MNIST: 784-512relu-128relu-10, batch 2,
 *               4 epochs, once with ce and once with mse (one-hot targets)
 *     SGD, lr 0.01 (the seed does not state its rate; 0.01 is its base code's), shuffled.
 *     The device has no MNIST, hence Fashion-MNIST: the accuracies are not the seed's
 *     in absolute terms. ffnn's bce takes logits and applies the sigmoid itself (the
 *     seed's sigmoid output layer); its mse is on the raw outputs (the seed's on
 *     softmax outputs). A run counts when its final test loss is finite and below the
 *     initial one and its test accuracy above a floor (0.6 binary, 0.5 ten-class).
 *     Times: the epochs only (train_seconds) and trainer creation + epochs + test
 *     evaluation (total_seconds). One untimed warm-up run per backend first.
 *  b) one training step of 784-512relu-128relu-10 (ce, sgd) op by op, through the
 *     cuda backend's table (src/backend/backend.h) on buffers from its alloc: gather, dense
 *     forward x3, relu x2, loss, dense backward x3, relu backward x2, sgd update. The
 *     whole step runs once on the cuda and the CPU reference backend on the same
 *     inputs and every op's outputs are compared (max |gpu - cpu| <= 1e-4 max |cpu|)
 *     before timing. Each op is then timed with CUDA events on the backend's stream
 *     (ffnn_lab_time): a spin kernel first keeps the GPU busy while INNER copies of
 *     the op are queued, so the events time the GPU running them back to back;
 *     median over the repeats.
 *  c) the batch-sum of softmax cross-entropy over [B, 10] logits three ways
 *     (lab/reduce.cu): atomicAdd per row, one-block shared-memory tree,
 *     one-block warp shuffle; each checked on fresh random logits against a double
 *     CPU sum (relative error <= 1e-5) before it is timed as in b).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab/reduce.h"
#include "backend/backend.h"
#include "core/error.h"
#include "ffnn.h"
#include "harness.h"
#include "modular.h"
#include "suites.h"


static const char *usage =
    "usage: ffnn bench modular [options]\n"
    "\n"
    "Report 004: (a) accuracy and training time of its three networks (2-D points,\n"
    "Fashion-MNIST 0/1 for its MNIST 0/1, Fashion-MNIST for its MNIST with ce and mse)\n"
    "on cuda tiled and the OpenMP backend; (b) one training step of\n"
    "784-512relu-128relu-10 op by op with CUDA events, checked against the CPU\n"
    "reference first; (c) the cross-entropy batch sum by atomics, a shared-memory tree\n"
    "and warp shuffles, each checked against a double CPU sum first. Prints and writes\n"
    "DIR/modular.csv and DIR/modular_table.md (plot: bench/plot_modular.py).\n"
    "\n"
    "options:\n"
    "  --quick             a smoke run: points 100 epochs, 1000-sample subsets of the\n"
    "                      image sets for 1 epoch, 5 repeats, B = 64,1024;\n"
    "                      default --out build/bench-quick\n"
    "  --out DIR           where the CSV and the table go (default build/bench)\n"
    "  --data DIR          Fashion-MNIST IDX files (default .devdata/fashion-mnist);\n"
    "                      missing: the image tasks are skipped\n"
    "  --repeats N         timed repeats of parts b and c, median reported (default 50)\n"
    "  --step-batch LIST   batch sizes of part b (default 2,256: the seed's 2 first)\n"
    "  --lab-batch LIST    B of part c (default 64,256,1024,60000)\n"
    "  --cpu-full-epochs N epochs of the CPU ten-class runs (default: as cuda, 4)\n"
    "  --threads N         OpenMP threads of the CPU runs (default 0: all)\n"
    "  --no-gpu            skip everything on the GPU\n"
    "  --no-cpu            skip the CPU training runs\n"
    "  --seed N            data and init seed (default 1)\n"
    "  -h, --help          this help\n";

row *mod_new_row(modular *s, const char *part, const char *task, const char *backend)
{
    row *r = ffnn_bench_add_row(&s->run);
    r->part = part;
    snprintf(r->task, sizeof r->task, "%s", task);
    snprintf(r->backend, sizeof r->backend, "%s", backend);
    r->lr = r->train_s = r->total_s = r->loss0 = r->test_loss = r->test_acc = NAN;
    r->us = r->us_min = r->us_max = r->err = r->seed_value = NAN;
    r->seed_unit = "";
    snprintf(r->device, sizeof r->device, "%s",
             strcmp(backend, "cpu_omp") == 0 ? s->run.cpu_name : s->run.gpu_name);
    return r;
}

static const row *row_at(const modular *s, size_t i) { return FFNN_BENCH_ROW(&s->run, row, i); }

static int is_ok(const row *r) { return r != NULL && ffnn_bench_ok(r->status); }

static const row *find_row(const modular *s, const char *part, const char *task,
                           const char *backend, int batch)
{
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (strcmp(r->part, part) == 0 && strcmp(r->task, task) == 0 &&
            (backend == NULL || strcmp(r->backend, backend) == 0) &&
            (batch < 0 || r->batch == batch))
            return r;
    }
    return NULL;
}

/* A row's status: "skipped: why" or "failed: why" for all rows of a part not measured. */
void mod_set_status(row *r, const char *status)
{
    snprintf(r->status, sizeof r->status, "%s", status);
}

/* ------------------------------------------------------------ part a: training */

typedef struct task {
    const char *name, *label, *arch;
    ffnn_loss loss;
    int batch, epochs, quick_epochs;
    int image;          /* 0 points, 1 binary, 2 ten-class */
    double acc_floor;
    double seed_acc, seed_s; /* the seed's table 1.1 / 1.2, 1.4, 1.6 (NaN: none) */
} task;

static const task tasks[] = {
    {"points", "2-D points", "2-30relu-30relu-1", FFNN_LOSS_SIGMOID_BCE, 100, 1000, 100, 0,
     0.6, 0.91, 0.830},
    {"binary", "Fashion 0/1 (seed: MNIST 0/1)", "784-128relu-64relu-1", FFNN_LOSS_SIGMOID_BCE,
     2, 5, 1, 1, 0.6, 0.987, 0.987},
    {"full_ce", "Fashion 10 classes, ce (seed: MNIST)", "784-512relu-128relu-10",
     FFNN_LOSS_SOFTMAX_CE, 2, 4, 1, 2, 0.5, NAN, NAN},
    {"full_mse", "Fashion 10 classes, mse (seed: MNIST)", "784-512relu-128relu-10",
     FFNN_LOSS_MSE, 2, 4, 1, 2, 0.5, 0.913, 4.321},
};
#define N_TASKS ((int)(sizeof tasks / sizeof tasks[0]))

static int load_data(modular *s)
{
    const options *o = &s->o;
    data_sets *d = &s->d;
    if (ffnn_dataset_synthetic("synth:points:2100", (uint64_t)o->seed, &d->points_train,
                               &d->points_test) != FFNN_OK) {
        fprintf(stderr, "ffnn bench modular: synth:points: %s\n", ffnn_last_error());
        return -1;
    }
    if (ffnn_dataset_load_idx_dir(o->data, &d->full_train, &d->full_test) != FFNN_OK) {
        snprintf(d->image_skip, sizeof d->image_skip, "no Fashion-MNIST in %s (%.200s)",
                 o->data, ffnn_last_error());
        d->full_train = d->full_test = NULL;
        return 0;
    }
    if (ffnn_dataset_select_classes(d->full_train, 0, 1, &d->bin_train) != FFNN_OK ||
        ffnn_dataset_select_classes(d->full_test, 0, 1, &d->bin_test) != FFNN_OK) {
        fprintf(stderr, "ffnn bench modular: select classes: %s\n", ffnn_last_error());
        return -1;
    }
    ffnn_dataset **image_sets[4] = {&d->full_train, &d->full_test, &d->bin_train, &d->bin_test};
    for (int i = 0; o->quick && i < 4; i++) /* a set that cannot be cut stays whole */
        (void)ffnn_bench_first_samples(image_sets[i], 1000);
    return 0;
}

static void task_data(const data_sets *d, const task *tk, const ffnn_dataset **train,
                      const ffnn_dataset **test)
{
    *train = tk->image == 0 ? d->points_train : tk->image == 1 ? d->bin_train : d->full_train;
    *test = tk->image == 0 ? d->points_test : tk->image == 1 ? d->bin_test : d->full_test;
}

/* One training run; fills r (times, losses, accuracy). 0, or -1 with r->status set. */
static int train_once(const options *o, const task *tk, int cuda, int epochs,
                      const ffnn_dataset *train, const ffnn_dataset *test, row *r)
{
    ffnn_train_config cfg = ffnn_bench_sgd_config(epochs, (size_t)tk->batch, LR, (uint64_t)o->seed,
                                                  tk->loss, cuda ? FFNN_DEVICE_CUDA
                                                                 : FFNN_DEVICE_CPU,
                                                  cuda ? 1 : o->threads);
    cfg.strategy = FFNN_STRATEGY_TILED;
    ffnn_bench_training t = {.arch = tk->arch, .seed = (uint64_t)o->seed, .cfg = &cfg,
                             .train = train, .test = test, .epochs = epochs, .eval_first = 1};
    char why[420];
    if (ffnn_bench_train(&t, why, sizeof why) != 0) {
        snprintf(r->status, sizeof r->status, "failed: %.480s", why);
        return -1;
    }
    r->threads = t.threads;
    r->steps = t.steps;
    r->loss0 = t.loss0;
    r->test_loss = t.loss;
    r->test_acc = t.acc;
    r->train_s = t.seconds;
    r->total_s = t.total_seconds; /* create + eval0 + epochs + eval */
    double floor_acc = o->quick && tk->image == 2 ? 0.3 : tk->acc_floor; /* --quick: 500 steps */
    if (!isfinite(r->test_loss) || !(r->test_loss < r->loss0) || !(r->test_acc > floor_acc)) {
        snprintf(r->status, sizeof r->status,
                 "failed: check: test loss %.6g (initial %.6g), test accuracy %.4f "
                 "(expected finite loss below the initial and accuracy > %.2f)",
                 r->test_loss, r->loss0, r->test_acc, floor_acc);
        return -1;
    }
    return 0;
}

static void run_training(modular *s, int cuda, const char *skip)
{
    const options *o = &s->o;
    const data_sets *d = &s->d;
    const char *backend = cuda ? "cuda_tiled" : "cpu_omp";
    if (skip == NULL) {
        row warm; /* untimed warm-up: lazy kernel loading, OpenMP pool */
        memset(&warm, 0, sizeof warm);
        if (train_once(o, &tasks[0], cuda, 2, d->points_train, d->points_test, &warm) != 0 &&
            strncmp(warm.status, "failed: check", 13) != 0) {
            for (int i = 0; i < N_TASKS; i++) {
                row *r = mod_new_row(s, "train", tasks[i].name, backend);
                snprintf(r->status, sizeof r->status, "failed: warm-up: %.480s", warm.status);
            }
            return;
        }
        fprintf(stderr, "%s (%s):\n", backend, cuda ? s->run.gpu_name : s->run.cpu_name);
    }
    for (int i = 0; i < N_TASKS; i++) {
        const task *tk = &tasks[i];
        row *r = mod_new_row(s, "train", tk->name, backend);
        snprintf(r->arch, sizeof r->arch, "%s", tk->arch);
        snprintf(r->loss, sizeof r->loss, "%s", ffnn_loss_name(tk->loss));
        r->batch = tk->batch;
        r->epochs = o->quick ? tk->quick_epochs : tk->epochs;
        if (!cuda && tk->image == 2 && o->cpu_full_epochs > 0) r->epochs = o->cpu_full_epochs;
        r->lr = LR;
        r->repeats = 1;
        r->seed_value = tk->seed_acc;
        r->seed_unit = "accuracy";
        const char *why = skip ? skip : (tk->image && d->image_skip[0]) ? d->image_skip : NULL;
        if (why) {
            snprintf(r->status, sizeof r->status, "skipped: %.480s", why);
            continue;
        }
        const ffnn_dataset *train, *test;
        task_data(d, tk, &train, &test);
        r->samples = (long)ffnn_dataset_count(train);
        r->test_samples = (long)ffnn_dataset_count(test);
        train_once(o, tk, cuda, r->epochs, train, test, r);
        fprintf(stderr, "  %-9s %-24s %s bs %d, %d epochs (%ld steps): %.3f s (total %.3f s), "
                        "test loss %.4g -> %.4g, accuracy %.4f  %s\n",
                tk->name, tk->arch, r->loss, r->batch, r->epochs, r->steps, r->train_s,
                r->total_s, r->loss0, r->test_loss, r->test_acc, r->status);
    }
}

/* ------------------------------------------------------------ output */

/* The CSV file's columns (the harness adds the last, "date"). */
static const char *csv_header =
    "part,task,backend,arch,loss,batch,epochs,lr,samples,test_samples,steps,threads,"
    "repeats,train_seconds,total_seconds,initial_test_loss,test_loss,test_accuracy,"
    "us_median,us_min,us_max,check_error,seed_value,seed_unit,status,device";

static void csv_row(FILE *f, const void *vr, const void *vs)
{
    (void)vs;
    const row *r = vr;
    fprintf(f, "%s,%s,%s,%s,%s,%d,%d,", r->part, r->task, r->backend, r->arch, r->loss,
            r->batch, r->epochs);
    ffnn_bench_csv_num(f, r->lr);
    fprintf(f, "%ld,%ld,%ld,%d,%d,", r->samples, r->test_samples, r->steps, r->threads,
            r->repeats);
    FFNN_BENCH_CSV_NUMS(f, r->train_s, r->total_s, r->loss0, r->test_loss, r->test_acc, r->us,
                        r->us_min, r->us_max, r->err, r->seed_value);
    fprintf(f, "%s,", r->seed_unit);
    ffnn_bench_csv_quoted(f, r->status);
    fputc(',', f);
    ffnn_bench_csv_quoted(f, r->device);
}

/* A row's value by fmt, or "-" / "skipped" / "**failed**". */
static void cell(FILE *f, const row *r, double v, const char *fmt)
{
    ffnn_bench_md_cell(f, r ? r->status : NULL, v, fmt);
}

static void write_table(FILE *f, const void *vs)
{
    const modular *s = vs;
    const options *o = &s->o;
    ffnn_bench_md_heading(f, &s->run,
                          "Report 004: an MLP from scratch - accuracy, per-op times, loss reduction");
    fputs("\n\n", f);
    fprintf(f, "- GPU: %s. CPU: %s.\n", ffnn_bench_gpu_text(&s->run, o->gpu, "not used"),
            s->run.cpu_name);
    fprintf(f, "- The seed's figures were measured on its own (older) GPU: compare ratios, not "
               "microseconds.\n\n");

    fprintf(f, "### a) Accuracy and training time\n\n");
    fprintf(f, "Data: `synth:points:2100` (test 420); the device has no MNIST, so the seed's "
               "MNIST 0/1 is **Fashion-MNIST classes 0/1** (T-shirt/top vs trouser, via "
               "ffnn_dataset_select_classes) and its full MNIST is **Fashion-MNIST**: the "
               "accuracies are not comparable with the seed's in absolute terms%s. SGD, lr "
               "%.2g (the seed states no rate; 0.01 is its base code's), shuffled, the epochs "
               "and batch sizes of the seed's table 1.1 (its loop runs one more pass than the "
               "table says; we run the table's count). ffnn's bce takes logits and applies "
               "the sigmoid itself (the seed: a sigmoid output layer + BCE); ffnn's mse is on "
               "the raw outputs against one-hot targets (the seed: softmax + MSE). The seed's "
               "text gives 784-512-128-10 for MNIST in one place and 512-512 in another; we "
               "use 512-128. Train s: the epochs only; total s: trainer creation (upload), "
               "test evaluations and epochs. Check before a time counts: test loss finite and "
               "below the initial, accuracy above 0.6 (binary) / 0.5 (10 classes).\n\n",
            o->quick ? " (--quick: 1000-sample subsets, fewer epochs)" : "", (double)LR);
    fprintf(f, "| task | arch | loss | batch | epochs | steps | cuda train s | cuda total s | "
               "cuda test acc | CPU train s | CPU test acc | seed acc (MNIST) | seed s |\n");
    fprintf(f, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < N_TASKS; i++) {
        const task *tk = &tasks[i];
        const row *g = find_row(s, "train", tk->name, "cuda_tiled", -1);
        const row *c = find_row(s, "train", tk->name, "cpu_omp", -1);
        const row *any = g && is_ok(g) ? g : c;
        fprintf(f, "| %s | `%s` | %s | %d | %d | %ld |", tk->label, tk->arch,
                ffnn_loss_name(tk->loss), tk->batch, any ? any->epochs : tk->epochs,
                any ? any->steps : 0L);
        cell(f, g, g ? g->train_s : NAN, "%.3f");
        cell(f, g, g ? g->total_s : NAN, "%.3f");
        cell(f, g, g ? 100.0 * g->test_acc : NAN, "%.2f%%");
        cell(f, c, c ? c->train_s : NAN, "%.3f");
        cell(f, c, c ? 100.0 * c->test_acc : NAN, "%.2f%%");
        ffnn_bench_md_num(f, 100.0 * tk->seed_acc, "%.1f%%");
        ffnn_bench_md_num(f, tk->seed_s, "%.3f");
        fputc('\n', f);
    }
    int threads = 0;
    for (size_t i = 0; i < s->run.n_rows; i++)
        if (strcmp(row_at(s, i)->backend, "cpu_omp") == 0 && is_ok(row_at(s, i)))
            threads = row_at(s, i)->threads;
    fprintf(f, "\nSeed s: its whole-program times (v2 for points and 0/1, v6 for MNIST, which "
               "its timings say ran MSE; it reports 91.3%% as its best MNIST accuracy, MSE "
               "slightly ahead of CE).%s",
            threads ? "" : "\n");
    if (threads) fprintf(f, " CPU runs: the OpenMP backend, %d threads.\n", threads);
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (strcmp(r->part, "train") == 0 && !is_ok(r))
            fprintf(f, "- %s %s: %s\n", r->task, r->backend, r->status);
    }
    fputc('\n', f);

    fprintf(f, "### b) One training step of 784-512relu-128relu-10 (ce, sgd), op by op\n\n");
    fprintf(f, "The cuda backend's ops (src/backend/backend.h) on buffers from its alloc, random "
               "uint8 images; the whole step first ran on cuda and on the CPU reference with "
               "the same inputs and every op's outputs agreed (check error: max |gpu - cpu| / "
               "max |cpu|, limit %.0e). Times: CUDA events on the backend's stream, %d copies "
               "of the op queued behind a %.0f us spin kernel (GPU time, back to back), median "
               "of %d repeats. step_queued: the 13 ops the same way; step_as_launched: one "
               "step as the host launches it (no spin: launch-bound). Seed us: its table 1.7 "
               "(full MNIST, v6; forward = linearLayerForward, backward = linearLayerBackprop "
               "+ UpdateWeights + UpdateBias, averaged over its layers, batch 2).\n\n",
            STEP_TOL, INNER, SPIN_US, o->repeats);
    fprintf(f, "| op |");
    for (int i = 0; i < o->n_step_batch; i++) fprintf(f, " B = %d (us) |", o->step_batch[i]);
    fprintf(f, " check error (B = %d) | seed us |\n|---|", o->step_batch[0]);
    for (int i = 0; i < o->n_step_batch + 2; i++) fputs("---:|", f);
    fputc('\n', f);
    for (int k = 0; k <= N_OPS + 1; k++) {
        const char *name = k < N_OPS ? mod_op_names[k] : k == N_OPS ? "step_queued" : "step_as_launched";
        fprintf(f, "| %s |", name);
        for (int i = 0; i < o->n_step_batch; i++) {
            const row *r = find_row(s, "step", name, NULL, o->step_batch[i]);
            cell(f, r, r ? r->us : NAN, "%.2f");
        }
        const row *r0 = find_row(s, "step", name, NULL, o->step_batch[0]);
        cell(f, r0, r0 ? r0->err : NAN, "%.1e");
        ffnn_bench_md_num(f, k < N_OPS ? mod_op_seed_us[k] : NAN, "%.2f");
        fputc('\n', f);
    }
    for (size_t i = 0; i < s->run.n_rows; i++)
        if (strcmp(row_at(s, i)->part, "step") == 0 && ffnn_bench_failed(row_at(s, i)->status)) {
            fprintf(f, "\n- B = %d: %s\n", row_at(s, i)->batch, row_at(s, i)->status);
            break;
        }
    fputc('\n', f);

    fprintf(f, "### c) The cross-entropy batch sum three ways, [B, %d] logits\n\n", LAB_C);
    fprintf(f, "lab/reduce.cu: atomic = one thread per row, atomicAdd into one float "
               "(after a cudaMemsetAsync, timed with it); shared_tree = one block of 1024 "
               "threads, shared-memory tree; warp_shuffle = one block of 1024 threads, "
               "__shfl_xor_sync within warps then across the 32 warp sums. Each variant was "
               "checked on fresh random logits (uniform in [-4, 4]) against a double CPU sum "
               "(relative error <= %.0e) before timing; timed as in b). Seed us: its "
               "binaryCrossEntropyCost on the 2-D points (batch 100, one output, its GPU, "
               "table 1.3): v0 200.94 us (atomics **and unified memory**: most of it was "
               "page migration of the managed cost value, not the reduction), v1 shared "
               "tree 3.50 us, v2 shuffles 2.49 us. The seed's column is not the same "
               "problem size nor loss.\n\n",
            LAB_TOL);
    fprintf(f, "| B |");
    for (int v = 0; v < FFNN_REDUCE_VARIANTS; v++) fprintf(f, " %s (us) |", ffnn_reduce_lab_name(v));
    fprintf(f, " max rel. error | seed v0 / v1 / v2 (us) |\n|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < o->n_lab_batch; i++) {
        int B = o->lab_batch[i];
        double err = 0.0;
        fprintf(f, "| %d |", B);
        for (int v = 0; v < FFNN_REDUCE_VARIANTS; v++) {
            const row *r = find_row(s, "lab", ffnn_reduce_lab_name(v), NULL, B);
            cell(f, r, r ? r->us : NAN, "%.2f");
            if (r && !isnan(r->err) && r->err > err) err = r->err;
        }
        fprintf(f, " %.1e | %s |\n", err, i == 0 ? "200.94 / 3.50 / 2.49" : "");
    }
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (strcmp(r->part, "lab") == 0 && ffnn_bench_failed(r->status))
            fprintf(f, "- B = %d %s: %s\n", r->batch, r->task, r->status);
    }
}

/* ------------------------------------------------------------ the suite */

int ffnn_bench_modular(int argc, char **argv)
{
    modular s;
    memset(&s, 0, sizeof s);
    ffnn_bench_begin(&s.run, "modular", sizeof(row), offsetof(row, status));
    options *o = &s.o;
    o->repeats = -1;
    o->gpu = o->cpu = 1;
    o->data = ".devdata/fashion-mnist";
    o->seed = 1;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_COMMON(o),
        FFNN_BENCH_OPT_TEXT("data", &o->data),
        FFNN_BENCH_OPT_INT("repeats", &o->repeats, 1, MAX_REPEATS),
        FFNN_BENCH_OPT_LIST("step-batch", o->step_batch, &o->n_step_batch, MAX_LIST, 1, 65536),
        FFNN_BENCH_OPT_LIST("lab-batch", o->lab_batch, &o->n_lab_batch, MAX_LIST, 1, 10000000),
        FFNN_BENCH_OPT_INT("cpu-full-epochs", &o->cpu_full_epochs, 1, 1000),
        FFNN_BENCH_OPT_INT("threads", &o->threads, 0, 1024),
        FFNN_BENCH_OPT_END,
    };
    const int parsed = ffnn_bench_parse_options(&s.run, usage, opts, argc, argv);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
    if (o->n_step_batch == 0) {
        o->step_batch[0] = 2;
        o->step_batch[1] = 256;
        o->n_step_batch = 2;
    }
    if (o->n_lab_batch == 0) {
        static const int full[] = {64, 256, 1024, 60000}, quick[] = {64, 1024};
        o->n_lab_batch = o->quick ? 2 : 4;
        memcpy(o->lab_batch, o->quick ? quick : full, (size_t)o->n_lab_batch * sizeof(int));
    }
    if (o->repeats < 0) o->repeats = o->quick ? 5 : 50;
    if (o->out == NULL) o->out = o->quick ? "build/bench-quick" : "build/bench";

    const char *gpu_skip = ffnn_bench_gpu(&s.run, o->gpu);
    if (gpu_skip) fprintf(stderr, "GPU parts skipped: %s\n", gpu_skip);
    data_sets *d = &s.d;
    int rc = 0;
    if (load_data(&s) != 0) rc = 1;
    if (d->image_skip[0]) fprintf(stderr, "image tasks skipped: %s\n", d->image_skip);
    if (rc == 0) {
        fprintf(stderr, "a) training\n");
        run_training(&s, 1, gpu_skip);
        run_training(&s, 0, o->cpu ? NULL : "--no-cpu");
        fprintf(stderr, "b) one step, op by op\n");
        for (int i = 0; i < o->n_step_batch; i++)
            mod_run_step_part(&s, (size_t)o->step_batch[i], gpu_skip);
        fprintf(stderr, "c) reduction lab\n");
        mod_run_lab(&s, gpu_skip);
    }
    ffnn_dataset *const sets[] = {d->points_train, d->points_test, d->full_train,
                                  d->full_test,    d->bin_train,   d->bin_test};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) ffnn_dataset_free(sets[i]);

    return ffnn_bench_finish(&s.run, rc, o->out, csv_header, csv_row, write_table, &s,
                             "SOME RUNS FAILED");
}

