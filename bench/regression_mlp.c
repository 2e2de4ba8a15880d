/*
 * regression_mlp.c - `ffnn bench regression-mlp` (alias seed001): reproduces report 001
 * (../shared/seeds/001_*.txt: naive vs tiled kernels of a shallow regression MLP).
 * A shallow regression network 32-Hrelu:nobias-1:nobias (MSE, SGD, batch 256, lr 0.002,
 * 100 epochs, shuffled) is trained on synth:regression:N (N samples, ceil(N/5) test
 * samples) by
 *   - cuda, matmul strategy naive (the seed's "baseline": one thread per output,
 *     operands from global memory),
 *   - cuda, matmul strategy tiled (ffnn's counterpart of the seed's "optimized":
 *     shared-memory tiles),
 *   - the OpenMP backend on all of this machine's CPU threads (cfg.threads = 0).
 * Two sweeps, as the seed's tables I and II: N = 256, 2,560, 25,600 with H = 256, and
 * H = 32 .. 1024 with N = 2,560 (the shared point N = 2,560, H = 256 runs once).
 *
 * A run: dataset generated and trainer created (parameters and data uploaded) outside
 * the clock; the initial test MSE taken; then the clock covers the epochs only (each
 * ffnn_trainer_run_epoch returns after its losses are read back: synchronised); then
 * the final train and test MSE. A run counts only when its final test MSE is finite
 * and below the initial one, and its train MSE finite. Each backend first trains one
 * untimed warm-up run (lazy kernel loading, OpenMP thread pool). Every repeat is a
 * fresh model (same init seed) and trainer; the median time is reported.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ffnn.h"
#include "harness.h"
#include "suites.h"

#define MAX_LIST 16
#define MAX_REPEATS 101
#define TARGET_S 0.05 /* docs: ffnn's target for the 25,600-sample run */

static const char *usage =
    "usage: ffnn bench regression-mlp [options]\n"
    "\n"
    "Report 001: whole training runs of 32-Hrelu:nobias-1:nobias (MSE, SGD, batch 256,\n"
    "lr 0.002, 100 epochs, shuffled) on synth:regression:N with cuda naive, cuda tiled\n"
    "and the OpenMP backend on all CPU threads of this machine: N = 256, 2560, 25600 at\n"
    "H = 256, and H = 32..1024 at N = 2560. Time: the epochs only (synchronised),\n"
    "median over the repeats; each run must end with a finite test MSE below the\n"
    "initial one before its time counts. Prints and writes DIR/regression-mlp.csv and\n"
    "DIR/regression-mlp_table.md, with the seed's published T4 times beside ours.\n"
    "\n"
    "options:\n"
    "  --quick           a smoke run: N = 256, 2560; H = 32, 256; 10 epochs; 1 repeat;\n"
    "                    default --out build/bench-quick\n"
    "  --out DIR         where the CSV and the table go (default build/bench)\n"
    "  --repeats N       timed runs per configuration; the median is reported\n"
    "                    (default 3; --quick 1)\n"
    "  --samples LIST    sample counts of the first sweep (default 256,2560,25600)\n"
    "  --hidden LIST     hidden widths of the second sweep (default 32,64,128,256,512,1024)\n"
    "  --hidden-samples N  samples of the second sweep (default 2560)\n"
    "  --epochs N        epochs per run (default 100; --quick 10)\n"
    "  --threads N       OpenMP threads of the CPU runs (default 0: all)\n"
    "  --no-gpu          skip the cuda runs\n"
    "  --no-cpu          skip the CPU runs\n"
    "  --seed N          data and init seed (default 1)\n"
    "  -h, --help        this help\n";

/* ------------------------------------------------------------ the seed's figures */

/* Seed 001, NVIDIA Tesla T4, CUDA 13.0, 100 epochs. Table I (H = 256): */
static const int seed_samples[3] = {256, 2560, 25600};
static const double seed_naive_s[3] = {0.306, 2.000, 21.002};
static const double seed_opt_s[3] = {0.248, 1.561, 14.823};
/* Table II (N = 2,560; strategy not stated; its 256 entry, 1.551 s, is next to the
 * optimized 1.561 s of table I): */
static const int seed_hidden[6] = {32, 64, 128, 256, 512, 1024};
static const double seed_hidden_s[6] = {0.810, 0.921, 1.107, 1.551, 2.743, 4.645};

static double seed_table1(int N, int naive)
{
    for (int i = 0; i < 3; i++)
        if (seed_samples[i] == N) return naive ? seed_naive_s[i] : seed_opt_s[i];
    return NAN;
}

static double seed_table2(int H)
{
    for (int i = 0; i < 6; i++)
        if (seed_hidden[i] == H) return seed_hidden_s[i];
    return NAN;
}

/* ------------------------------------------------------------ options, rows */

typedef struct options {
    int quick;
    const char *out;
    int repeats, epochs, threads;
    int samples[MAX_LIST], n_samples;
    int hidden[MAX_LIST], n_hidden;
    int hidden_samples;
    int gpu, cpu;
    int seed;
} options;

enum { B_NAIVE, B_TILED, B_CPU, N_BACKENDS };
static const char *backend_names[N_BACKENDS] = {"cuda_naive", "cuda_tiled", "cpu_omp"};
static const char *backend_labels[N_BACKENDS] = {"cuda naive", "cuda tiled", "CPU OpenMP"};

typedef struct row {
    const char *part; /* samples | hidden */
    int backend;
    int N, H, epochs, threads, repeats;
    long steps;
    double sec, sec_min, sec_max;
    double mse0, train_mse, test_mse; /* initial test MSE, final train / test MSE */
    double seed_t4;                   /* the seed's published time (NaN: none)      */
    char status[512];                 /* ok | skipped: why | failed: why            */
    char device[224];
} row;

/* The data set of the current sample count, made once per count. */
typedef struct data_cache {
    int N;
    ffnn_dataset *train, *test;
} data_cache;

/* One run of the suite. */
typedef struct regression_mlp {
    ffnn_bench_run run;
    options o;
    data_cache dc;
} regression_mlp;

static row *new_row(regression_mlp *s, const char *part, int backend, int N, int H)
{
    const options *o = &s->o;
    row *r = ffnn_bench_add_row(&s->run);
    r->part = part;
    r->backend = backend;
    r->N = N;
    r->H = H;
    r->epochs = o->epochs;
    r->steps = (long)o->epochs * (long)((N + 255) / 256);
    r->sec = r->sec_min = r->sec_max = NAN;
    r->mse0 = r->train_mse = r->test_mse = NAN;
    r->seed_t4 = NAN;
    if (o->epochs != 100)
        ; /* the seed's figures are for 100 epochs */
    else if (backend != B_CPU && strcmp(part, "samples") == 0)
        r->seed_t4 = seed_table1(N, backend == B_NAIVE);
    else if (backend == B_TILED && strcmp(part, "hidden") == 0 && N == 2560)
        r->seed_t4 = seed_table2(H);
    snprintf(r->device, sizeof r->device, "%s",
             backend == B_CPU ? s->run.cpu_name : s->run.gpu_name);
    return r;
}

static const row *row_at(const regression_mlp *s, size_t i)
{
    return FFNN_BENCH_ROW(&s->run, const row, i);
}

static const row *find_row(const regression_mlp *s, const char *part, int backend, int N, int H)
{
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if ((part == NULL || strcmp(r->part, part) == 0) && r->backend == backend &&
            r->N == N && r->H == H)
            return r;
    }
    return NULL;
}

static int is_ok(const row *r) { return r != NULL && ffnn_bench_ok(r->status); }

/* ------------------------------------------------------------ one run */

static int get_data(data_cache *dc, int N, uint64_t seed, char *why, size_t why_size)
{
    if (dc->train && dc->N == N) return 0;
    ffnn_dataset_free(dc->train);
    ffnn_dataset_free(dc->test);
    dc->train = dc->test = NULL;
    char spec[64];
    snprintf(spec, sizeof spec, "synth:regression:%d", N);
    if (ffnn_dataset_synthetic(spec, seed, &dc->train, &dc->test) != FFNN_OK) {
        snprintf(why, why_size, "%s: %s", spec, ffnn_last_error());
        return -1;
    }
    dc->N = N;
    return 0;
}

/* Train one fresh model of width H on train for epochs; check it. 0 with *sec (the
 * epochs' time) and r's MSEs and threads, or -1 with why (r unchanged). */
static int train_once(const options *o, int backend, int H, int epochs,
                      const ffnn_dataset *train, const ffnn_dataset *test, row *r, double *sec,
                      char *why, size_t why_size)
{
    char arch[64];
    snprintf(arch, sizeof arch, "32-%drelu:nobias-1:nobias", H);
    ffnn_train_config cfg = ffnn_bench_sgd_config(
        epochs, 256, 0.002f, (uint64_t)o->seed, FFNN_LOSS_MSE,
        backend == B_CPU ? FFNN_DEVICE_CPU : FFNN_DEVICE_CUDA, backend == B_CPU ? o->threads : 1);
    cfg.strategy = backend == B_NAIVE ? FFNN_STRATEGY_NAIVE : FFNN_STRATEGY_TILED;
    ffnn_bench_training t = {.arch = arch, .seed = (uint64_t)o->seed, .cfg = &cfg,
                             .train = train, .test = test, .epochs = epochs,
                             .eval_first = 1, .eval_train = 1};
    if (ffnn_bench_train(&t, why, why_size) != 0) return -1;
    if (!isfinite(t.train_loss) || !isfinite(t.loss) || !isfinite(t.loss0) ||
        !(t.loss < t.loss0)) {
        snprintf(why, why_size,
                 "check: test MSE %.6g after %d epochs, initial %.6g, train MSE %.6g "
                 "(expected finite and below the initial)",
                 t.loss, epochs, t.loss0, t.train_loss);
        return -1;
    }
    *sec = t.seconds;
    r->mse0 = t.loss0; /* the MSEs: the test set's before and after, the training set's */
    r->test_mse = t.loss;
    r->train_mse = t.train_loss;
    r->threads = t.threads;
    return 0;
}

static void run_config(regression_mlp *s, const char *part, int backend, int N, int H)
{
    const options *o = &s->o;
    data_cache *dc = &s->dc;
    const row *found = find_row(s, NULL, backend, N, H);
    row same;
    if (found != NULL) same = *found; /* copied: new_row may move the rows */
    row *r = new_row(s, part, backend, N, H);
    if (found != NULL) { /* the shared point of the two sweeps: run once */
        double seed_t4 = r->seed_t4;
        *r = same;
        r->part = part;
        r->seed_t4 = seed_t4;
        return;
    }
    r->repeats = o->repeats;
    char why[300];
    if (get_data(dc, N, (uint64_t)o->seed, why, sizeof why) != 0) {
        snprintf(r->status, sizeof r->status, "failed: %s", why);
        return;
    }
    double times[MAX_REPEATS];
    for (int k = 0; k < o->repeats; k++) {
        if (train_once(o, backend, H, o->epochs, dc->train, dc->test, r, &times[k], why,
                       sizeof why) != 0) {
            snprintf(r->status, sizeof r->status, "failed: repeat %d: %s", k + 1, why);
            break;
        }
    }
    if (is_ok(r)) r->sec = ffnn_lab_median(times, (size_t)o->repeats, &r->sec_min, &r->sec_max);
    fprintf(stderr, "  %-10s N=%-6d H=%-5d %8.4f s (min %.4f, max %.4f)  MSE test %.4g -> %.4g, "
                    "train %.4g  %s\n",
            backend_names[backend], N, H, r->sec, r->sec_min, r->sec_max, r->mse0,
            r->test_mse, r->train_mse, r->status);
}

/* Warm-up: one untimed short run of the backend. 0, or -1 with why. */
static int warm_up(regression_mlp *s, int backend, char *why, size_t why_size)
{
    const options *o = &s->o;
    int N = o->n_samples ? o->samples[0] : o->hidden_samples;
    if (get_data(&s->dc, N, (uint64_t)o->seed, why, why_size) != 0) return -1;
    row scratch;
    double sec;
    return train_once(o, backend, 256, 2, s->dc.train, s->dc.test, &scratch, &sec, why,
                      why_size);
}

/* One configuration of the table below: run, or a row with status `note` when set. */
static void config(regression_mlp *s, const char *part, int backend, int N, int H, const char *note)
{
    if (note == NULL) {
        run_config(s, part, backend, N, H);
        return;
    }
    row *r = new_row(s, part, backend, N, H);
    snprintf(r->status, sizeof r->status, "%s", note);
}

/* Every configuration of the two sweeps on one backend (skip: why not). */
static void run_backend(regression_mlp *s, int backend, const char *skip)
{
    const options *o = &s->o;
    char why[300] = "", note[340] = "";
    if (skip != NULL)
        snprintf(note, sizeof note, "skipped: %s", skip);
    else if (warm_up(s, backend, why, sizeof why) != 0) {
        snprintf(note, sizeof note, "failed: warm-up failed: %s", why);
        fprintf(stderr, "%s: %s\n", backend_names[backend], note + 8);
    } else
        fprintf(stderr, "%s (%s):\n", backend_names[backend],
                backend == B_CPU ? s->run.cpu_name : s->run.gpu_name);
    const char *n = note[0] ? note : NULL;
    for (int i = 0; i < o->n_samples; i++) config(s, "samples", backend, o->samples[i], 256, n);
    for (int i = 0; i < o->n_hidden; i++)
        config(s, "hidden", backend, o->hidden_samples, o->hidden[i], n);
}

/* ------------------------------------------------------------ output */

/* The CSV file's columns (the harness adds the last, "date"). */
static const char *csv_header =
    "part,backend,samples,hidden,epochs,steps,threads,repeats,seconds,seconds_min,"
    "seconds_max,initial_test_mse,final_train_mse,final_test_mse,seed_t4_seconds,"
    "status,device";

static void csv_row(FILE *f, const void *vr, const void *vs)
{
    (void)vs;
    const row *r = vr;
    fprintf(f, "%s,%s,%d,%d,%d,%ld,%d,%d,", r->part, backend_names[r->backend], r->N, r->H,
            r->epochs, r->steps, r->threads, r->repeats);
    FFNN_BENCH_CSV_NUMS(f, r->sec, r->sec_min, r->sec_max, r->mse0, r->train_mse, r->test_mse,
                        r->seed_t4);
    ffnn_bench_csv_field(f, r->status);
    fputc(',', f);
    ffnn_bench_csv_field(f, r->device);
}

/* A cell: the median time, or "-" / "**failed**" / "skipped". */
static void cell_time(FILE *f, const row *r)
{
    ffnn_bench_md_cell(f, r ? r->status : NULL, r ? r->sec : NAN, "%.3f");
}

static void cell_ratio(FILE *f, const row *a, const row *b)
{
    ffnn_bench_md_num(f, is_ok(a) && is_ok(b) && b->sec > 0.0 ? a->sec / b->sec : NAN, "%.2f");
}

static void write_table(FILE *f, const void *vs)
{
    const regression_mlp *s = vs;
    const options *o = &s->o;
    ffnn_bench_md_heading(f, &s->run,
                          "Report 001: shallow regression network, cuda naive vs tiled vs OpenMP");
    fputs("\n\n", f);
    fprintf(f, "- GPU: %s.\n", ffnn_bench_gpu_text(&s->run, o->gpu, "not run (--no-gpu)"));
    if (o->cpu)
        fprintf(f, "- CPU (the OpenMP runs ran on the CPU of the machine that ran this "
                   "command, the device's CPU on a device run): %s.\n",
                s->run.cpu_name);
    else
        fprintf(f, "- CPU runs not done (--no-cpu).\n");
    fprintf(f,
            "- Network `32-Hrelu:nobias-1:nobias`, MSE, SGD, batch 256, lr 0.002, %d epochs, "
            "shuffled; data `synth:regression:N` (test set ceil(N/5)), data and init seed "
            "%llu. Time: the %d epochs only (trainer created and data uploaded before the "
            "clock; every epoch ends with its losses read back, so the time is "
            "synchronised), median of %d run(s), each a fresh model; one untimed warm-up "
            "run per backend first.\n",
            o->epochs, (unsigned long long)o->seed, o->epochs, o->repeats);
    fprintf(f, "- Check before a time counts: final test MSE finite and below the initial "
               "test MSE, final train MSE finite.\n");
    fprintf(f, "- **Seed T4** columns: the seed's published figures, measured on an NVIDIA "
               "Tesla T4 (CUDA 13.0) - a different, older GPU than ours: compare the "
               "ratios, not the seconds. \"cuda tiled\" is ffnn's counterpart of the seed's "
               "\"optimized\" strategy (shared-memory tiles); \"cuda naive\" of its "
               "\"baseline\".\n\n");

    if (o->n_samples) {
        fprintf(f, "### Time vs samples (H = 256)\n\n");
        fprintf(f, "| samples | steps | cuda naive (s) | cuda tiled (s) | naive / tiled | CPU "
                   "OpenMP (s) | seed T4 baseline (s) | seed T4 optimized (s) | seed "
                   "baseline / optimized |\n");
        fprintf(f, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < o->n_samples; i++) {
            int N = o->samples[i];
            const row *a = find_row(s, "samples", B_NAIVE, N, 256);
            const row *b = find_row(s, "samples", B_TILED, N, 256);
            const row *c = find_row(s, "samples", B_CPU, N, 256);
            long steps = (long)o->epochs * (long)((N + 255) / 256);
            fprintf(f, "| %d | %ld |", N, steps);
            cell_time(f, a);
            cell_time(f, b);
            cell_ratio(f, a, b);
            cell_time(f, c);
            double sn = seed_table1(N, 1), so = seed_table1(N, 0);
            ffnn_bench_md_num(f, o->epochs == 100 ? sn : NAN, "%.3f");
            ffnn_bench_md_num(f, o->epochs == 100 ? so : NAN, "%.3f");
            if (o->epochs == 100 && !isnan(sn))
                fprintf(f, " %.2f |\n", sn / so);
            else
                fputs(" - |\n", f);
        }
        fputc('\n', f);
        const row *big = find_row(s, "samples", B_TILED, 25600, 256);
        if (is_ok(big) && o->epochs == 100)
            fprintf(f, "25,600 samples (10,000 steps), cuda tiled: %.3f s, %.1f us/step. "
                       "References (docs, /work/shared/BENCHMARKS.md): PyTorch eager 2.83 s, "
                       "PyTorch whole run in CUDA graphs 0.34 s; ffnn's target <= %.2f s: "
                       "**%s**.\n\n",
                    big->sec, 1e6 * big->sec / (double)big->steps, TARGET_S,
                    big->sec <= TARGET_S ? "met" : "not met");
    }
    if (o->n_hidden) {
        fprintf(f, "### Time vs hidden width (N = %d)\n\n", o->hidden_samples);
        fprintf(f, "| hidden | parameters | cuda naive (s) | cuda tiled (s) | naive / tiled | "
                   "CPU OpenMP (s) | seed T4 (s) |\n");
        fprintf(f, "|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < o->n_hidden; i++) {
            int H = o->hidden[i];
            const row *a = find_row(s, "hidden", B_NAIVE, o->hidden_samples, H);
            const row *b = find_row(s, "hidden", B_TILED, o->hidden_samples, H);
            const row *c = find_row(s, "hidden", B_CPU, o->hidden_samples, H);
            fprintf(f, "| %d | %d |", H, 33 * H);
            cell_time(f, a);
            cell_time(f, b);
            cell_ratio(f, a, b);
            cell_time(f, c);
            const int seed_h = o->epochs == 100 && o->hidden_samples == 2560;
            ffnn_bench_md_num(f, seed_h ? seed_table2(H) : NAN, "%.3f");
            fputc('\n', f);
        }
        fprintf(f, "\nSeed T4 here: its table II (strategy not stated; its H = 256 entry, "
                   "1.551 s, is next to the optimized 1.561 s of its table I).\n\n");
    }

    fprintf(f, "### Final MSE (test set ceil(N/5) samples; initial = before training)\n\n");
    fprintf(f, "| sweep | backend | samples | hidden | initial test MSE | final train MSE | "
               "final test MSE | status |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (strcmp(r->part, "hidden") == 0 && r->H == 256 &&
            find_row(s, "samples", r->backend, r->N, r->H) != NULL)
            continue; /* the shared point, listed once */
        fprintf(f, "| %s | %s | %d | %d |", r->part, backend_labels[r->backend], r->N, r->H);
        if (isnan(r->mse0))
            fputs(" - | - | - |", f);
        else
            fprintf(f, " %.5f | %.5f | %.5f |", r->mse0, r->train_mse, r->test_mse);
        fprintf(f, " %s |\n", r->status);
    }
    int threads = 0;
    for (size_t i = 0; i < s->run.n_rows; i++) {
        const row *r = row_at(s, i);
        if (r->backend == B_CPU && is_ok(r)) threads = r->threads;
    }
    if (threads) fprintf(f, "\nCPU OpenMP runs: %d threads.\n", threads);
}

/* ------------------------------------------------------------ the suite */

int ffnn_bench_regression_mlp(int argc, char **argv)
{
    regression_mlp s;
    memset(&s, 0, sizeof s);
    ffnn_bench_begin(&s.run, "regression-mlp", sizeof(row), offsetof(row, status));
    options *o = &s.o;
    o->repeats = o->epochs = o->hidden_samples = -1;
    o->gpu = o->cpu = 1;
    o->seed = 1;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_COMMON(o),
        FFNN_BENCH_OPT_INT("repeats", &o->repeats, 1, MAX_REPEATS),
        FFNN_BENCH_OPT_LIST("samples", o->samples, &o->n_samples, MAX_LIST, 1, 10000000),
        FFNN_BENCH_OPT_LIST("hidden", o->hidden, &o->n_hidden, MAX_LIST, 1, 65536),
        FFNN_BENCH_OPT_INT("hidden-samples", &o->hidden_samples, 1, 10000000),
        FFNN_BENCH_OPT_INT("epochs", &o->epochs, 1, 100000),
        FFNN_BENCH_OPT_INT("threads", &o->threads, 0, 1024),
        FFNN_BENCH_OPT_END,
    };
    const int parsed = ffnn_bench_parse_options(&s.run, usage, opts, argc, argv);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
    if (o->n_samples == 0) {
        static const int full[] = {256, 2560, 25600}, quick[] = {256, 2560};
        o->n_samples = o->quick ? 2 : 3;
        memcpy(o->samples, o->quick ? quick : full, (size_t)o->n_samples * sizeof(int));
    }
    if (o->n_hidden == 0) {
        static const int full[] = {32, 64, 128, 256, 512, 1024}, quick[] = {32, 256};
        o->n_hidden = o->quick ? 2 : 6;
        memcpy(o->hidden, o->quick ? quick : full, (size_t)o->n_hidden * sizeof(int));
    }
    if (o->hidden_samples < 0) o->hidden_samples = 2560;
    if (o->repeats < 0) o->repeats = o->quick ? 1 : 3;
    if (o->epochs < 0) o->epochs = o->quick ? 10 : 100;
    if (o->out == NULL) o->out = o->quick ? "build/bench-quick" : "build/bench";

    const char *gpu_skip = ffnn_bench_gpu(&s.run, o->gpu);
    if (gpu_skip) fprintf(stderr, "cuda runs skipped: %s\n", gpu_skip);
    run_backend(&s, B_NAIVE, gpu_skip);
    run_backend(&s, B_TILED, gpu_skip);
    if (!o->cpu) fprintf(stderr, "CPU runs skipped: --no-cpu\n");
    run_backend(&s, B_CPU, o->cpu ? NULL : "--no-cpu");
    ffnn_dataset_free(s.dc.train);
    ffnn_dataset_free(s.dc.test);

    return ffnn_bench_finish(&s.run, 0, o->out, csv_header, csv_row, write_table, &s,
                             "SOME RUNS FAILED");
}
