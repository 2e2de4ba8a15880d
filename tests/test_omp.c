/*
 * test_omp.c - suite "omp": what the OpenMP backend (src/backend/omp/) promises beyond
 * its ops' values (those: test_ops.c, every op against the reference per kernel set
 * and thread count): the matmuls give the same bits for any thread count; whole
 * training runs against the reference for 200 steps on Fashion-MNIST and against
 * itself (same bits for the same and for any thread count); cfg.threads; and
 * FFNN_OMP_ISA's refusals.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "test_fixtures.h"
#include "test_numeric.h"
#include "ffnn.h"
#include "backend/omp/omp_kernels.h"

/* ------------------------------------------------------------------ helpers */

/* The omp contexts under test: each instruction set this CPU runs x 1, 2, 3 threads. */
enum { MAX_CTX = 9 };
typedef struct contexts {
    void *ctx[MAX_CTX];
    char name[MAX_CTX][32];
    size_t n;
} contexts;

static void contexts_free(contexts *c)
{
    for (size_t i = 0; i < c->n; i++)
        ffnn_omp_backend.destroy(c->ctx[i]);
    c->n = 0;
}

static ffnn_status contexts_make(contexts *c)
{
    static const char *isas[] = {"avx512", "avx2", "baseline"};
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < 3; i++) {
        const ffnn_omp_gemm_isa *isa = ffnn_omp_gemm_named(isas[i]);
        if (!isa)
            continue; /* not on this CPU */
        for (int threads = 1; threads <= 3; threads++) {
            ffnn_status st = ffnn_omp_create_with(threads, isa, &c->ctx[c->n]);
            if (st != FFNN_OK) {
                contexts_free(c);
                return st;
            }
            snprintf(c->name[c->n], sizeof c->name[0], "%s, %d thread%s", isa->name, threads,
                     threads > 1 ? "s" : "");
            c->n++;
        }
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------------ dense */

/* The matmuls give the same bits for any thread count, and on a second call. */
TEST("omp_dense_same_bits_any_thread_count", test_dense_thread_invariant)
{
    contexts c;
    CHECK_OK(contexts_make(&c));
    rng r = {0x2545F4914F6CDD1DULL};
    const dense_shape s = {67, 785, 259};
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    float *x = malloc(nx * 4), *W = malloc(nw * 4), *b = malloc(s.out * 4), *dz = malloc(nz * 4);
    float *z[2] = {poisoned(nz), poisoned(nz)}, *dx[2] = {poisoned(nx), poisoned(nx)};
    float *dW[2] = {poisoned(nw), poisoned(nw)};
    test_result result = TEST_FAIL;
    if (x && W && b && dz && z[0] && z[1] && dx[0] && dx[1] && dW[0] && dW[1]) {
        fill_uniform(&r, x, nx, -1.0f, 1.0f);
        fill_uniform(&r, W, nw, -1.0f, 1.0f);
        fill_uniform(&r, b, s.out, -1.0f, 1.0f);
        fill_uniform(&r, dz, nz, -1.0f, 1.0f);
        result = TEST_PASS;
        for (size_t k = 0; k < c.n && result == TEST_PASS; k++) {
            const int slot = k % 3 == 0 ? 0 : 1; /* 1 thread: the baseline of its set */
            ffnn_omp_backend.dense_forward(c.ctx[k], x, W, b, z[slot], s.batch, s.in, s.out);
            ffnn_omp_backend.dense_backward(c.ctx[k], x, W, dz, dx[slot], dW[slot], NULL,
                                            s.batch, s.in, s.out);
            if (slot == 1 && (!same_bits("z", z[1], z[0], nz * 4) ||
                              !same_bits("dx", dx[1], dx[0], nx * 4) ||
                              !same_bits("dW", dW[1], dW[0], nw * 4))) {
                fprintf(stderr, "    %s differs from 1 thread\n", c.name[k]);
                result = TEST_FAIL;
            }
        }
    }
    free(x), free(W), free(b), free(dz);
    for (int i = 0; i < 2; i++)
        free(z[i]), free(dx[i]), free(dW[i]);
    contexts_free(&c);
    return result;
}

/* ------------------------------------------------------------------ training */

/* The first 12,800 Fashion-MNIST training images (200 batches of 64). */
static ffnn_status load_train_12800(ffnn_dataset **out)
{
    ffnn_dataset *full = NULL;
    ffnn_status st = ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, &full, NULL);
    if (st == FFNN_OK)
        st = ffnn_dataset_slice(full, 0, 12800, out);
    ffnn_dataset_free(full);
    return st;
}

/* run_steps' threads for the reference backend (strategy reference). */
#define REFERENCE_RUN (-1)

/* `steps` steps of 784-256relu-10 (seed 1, batch 64, lr 0.01, shuffled) on data
 * with the omp backend on `threads` threads (REFERENCE_RUN: the reference):
 * per-step losses and the final parameters. */
static ffnn_status run_steps(const ffnn_dataset *data, int threads, size_t steps, double *loss,
                             float **params, size_t *count)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    ffnn_status st = ffnn_model_create("784-256relu-10", &m);
    if (st == FFNN_OK)
        st = ffnn_model_init(m, 1);
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    if (threads == REFERENCE_RUN)
        cfg.strategy = FFNN_STRATEGY_REFERENCE;
    else
        cfg.threads = threads;
    if (st == FFNN_OK)
        st = ffnn_trainer_create(m, data, &cfg, &t);
#ifdef _OPENMP
    if (st == FFNN_OK && threads > 0 && ffnn_trainer_threads(t) != threads)
        st = FFNN_ERR_INVALID_ARGUMENT;
#endif
    for (size_t s = 0; s < steps && st == FFNN_OK; s++)
        st = ffnn_trainer_step(t, &loss[s]);
    if (st == FFNN_OK)
        st = ffnn_trainer_sync_model(t);
    if (st == FFNN_OK) {
        *count = ffnn_model_parameter_count(m);
        *params = malloc(*count * sizeof(float));
        if (!*params)
            st = FFNN_ERR_NO_MEMORY;
        else
            memcpy(*params, ffnn_model_parameters(m), *count * sizeof(float));
    }
    TEST_FREE(t, m);
    return st;
}

/* 200 steps (the first 12,800 images): the omp backend on 2 threads follows the
 * reference, every step's loss within 1e-4 relative. */
TEST("omp_train_200_steps_parity_fashion", test_train_parity)
{
    enum { STEPS = 200 };
    ffnn_dataset *data = NULL;
    CHECK_FASHION(load_train_12800(&data));
    double ref[STEPS], omp[STEPS];
    float *p_ref = NULL, *p_omp = NULL;
    size_t n_ref = 0, n_omp = 0;
    ffnn_status st1 = run_steps(data, REFERENCE_RUN, STEPS, ref, &p_ref, &n_ref);
    ffnn_status st2 = st1 == FFNN_OK ? run_steps(data, 2, STEPS, omp, &p_omp, &n_omp) : st1;
    ffnn_dataset_free(data);
    test_result result = TEST_FAIL;
    if (st1 != FFNN_OK || st2 != FFNN_OK) {
        fprintf(stderr, "    training failed: %s\n", ffnn_last_error());
    } else {
        double worst = 0.0, worst_param = 0.0;
        size_t worst_step = 0;
        for (size_t s = 0; s < STEPS; s++) {
            const double rel = fabs(omp[s] - ref[s]) / fabs(ref[s]);
            if (rel > worst)
                worst = rel, worst_step = s;
        }
        for (size_t i = 0; i < n_ref; i++)
            if (fabs((double)p_omp[i] - (double)p_ref[i]) > worst_param)
                worst_param = fabs((double)p_omp[i] - (double)p_ref[i]);
        printf("     200 steps: loss %.5f -> %.5f (reference %.5f -> %.5f); largest relative "
               "loss difference %.2e (step %zu); largest parameter difference %.2e\n",
               omp[0], omp[STEPS - 1], ref[0], ref[STEPS - 1], worst, worst_step + 1,
               worst_param);
        result = worst <= 1e-4 ? TEST_PASS : TEST_FAIL;
        if (result != TEST_PASS)
            fprintf(stderr, "    step %zu: omp loss %.9g, reference %.9g\n", worst_step + 1,
                    omp[worst_step], ref[worst_step]);
    }
    free(p_ref), free(p_omp);
    return result;
}

/* Two runs on 2 threads give the same bits (per-step losses and final
 * parameters); so do runs on 3 threads and on all cores (threads 0). */
TEST("omp_train_deterministic", test_train_deterministic)
{
    enum { STEPS = 40 };
    ffnn_dataset *data = NULL;
    CHECK_FASHION(load_train_12800(&data));
    static const int threads[] = {2, 2, 3, 0};
    double loss[4][STEPS];
    float *params[4] = {NULL, NULL, NULL, NULL};
    size_t count[4] = {0, 0, 0, 0};
    test_result result = TEST_PASS;
    for (int r = 0; r < 4 && result == TEST_PASS; r++) {
        if (run_steps(data, threads[r], STEPS, loss[r], &params[r], &count[r]) != FFNN_OK) {
            fprintf(stderr, "    run %d: %s\n", r, ffnn_last_error());
            result = TEST_FAIL;
        } else if (r > 0 && (!same_bits("step losses", loss[r], loss[0], sizeof loss[0]) ||
                             !same_bits("parameters", params[r], params[0], count[0] * 4))) {
            fprintf(stderr, "    run %d (%d threads) differs from run 0 (2 threads)\n", r,
                    threads[r]);
            result = TEST_FAIL;
        }
    }
    for (int r = 0; r < 4; r++)
        free(params[r]);
    ffnn_dataset_free(data);
    return result;
}

/* cfg.threads: the omp backend on N threads (1 included), 0 (the library's default)
 * all cores; out of range is refused. The reference is strategy reference, on one
 * thread, on the cpu only. */
TEST("omp_threads_config", test_threads_config)
{
    ffnn_dataset *full = NULL, *data = NULL;
    CHECK_FASHION(ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, &full, NULL));
    CHECK_OK(ffnn_dataset_slice(full, 0, 256, &data));
    ffnn_dataset_free(full);
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-16relu-10", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    CHECK(cfg.threads == 0, "library default threads %d, expected 0", cfg.threads);
    static const int asked[] = {1, 2, 5, 0};
    for (int i = 0; i < 4; i++) {
        cfg.threads = asked[i];
        ffnn_trainer *t = NULL;
        CHECK_OK(ffnn_trainer_create(m, data, &cfg, &t));
        const int got = ffnn_trainer_threads(t);
        const ffnn_strategy s = ffnn_trainer_strategy(t);
        double loss;
        ffnn_status st = ffnn_trainer_step(t, &loss);
        ffnn_trainer_free(t);
        CHECK_OK(st);
        CHECK(s != FFNN_STRATEGY_REFERENCE, "threads %d ran the reference", asked[i]);
#ifdef _OPENMP
        if (asked[i] > 0)
            CHECK(got == asked[i], "threads %d: trainer reports %d", asked[i], got);
#else
        if (asked[i] > 0) /* a build without OpenMP: the omp backend runs one thread */
            CHECK(got == 1, "threads %d without OpenMP: trainer reports %d", asked[i], got);
#endif
        else
            CHECK(got >= 1, "threads 0: trainer reports %d", got);
    }
    cfg.threads = -1;
    ffnn_trainer *t = NULL;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT,
          "threads -1 accepted");
    CHECK(strstr(ffnn_last_error(), "threads") != NULL, "message: %s", ffnn_last_error());
    cfg.threads = 100000;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT,
          "threads 100000 accepted");
    /* the reference by name: on the cpu (device auto included), one thread */
    static const ffnn_device devices[] = {FFNN_DEVICE_CPU, FFNN_DEVICE_AUTO};
    for (int d = 0; d < 2; d++)
        for (int threads = 0; threads <= 1; threads++) {
            cfg = ffnn_train_config_default();
            cfg.device = devices[d];
            cfg.threads = threads;
            CHECK_OK(ffnn_strategy_from_name("reference", &cfg.strategy));
            CHECK_OK(ffnn_trainer_create(m, data, &cfg, &t));
            const ffnn_device dev = ffnn_trainer_device(t);
            const ffnn_strategy s = ffnn_trainer_strategy(t);
            const int got = ffnn_trainer_threads(t);
            ffnn_trainer_free(t);
            CHECK(dev == FFNN_DEVICE_CPU && s == FFNN_STRATEGY_REFERENCE && got == 1,
                  "reference (device %s, threads %d) ran on %s as %s with %d threads",
                  ffnn_device_name(devices[d]), threads, ffnn_device_name(dev),
                  ffnn_strategy_name(s), got);
        }
    cfg.threads = 2;
    t = NULL;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_INVALID_ARGUMENT && !t,
          "reference on 2 threads accepted");
    CHECK(strstr(ffnn_last_error(), "one thread") != NULL, "message: %s", ffnn_last_error());
    cfg.threads = 0;
    cfg.device = FFNN_DEVICE_CUDA; /* refused: no CUDA, no GPU, or the reference's rule */
    t = NULL;
    CHECK(ffnn_trainer_create(m, data, &cfg, &t) == FFNN_ERR_UNSUPPORTED && !t,
          "reference on cuda accepted");
    if (ffnn_cuda_device_count() > 0)
        CHECK(strstr(ffnn_last_error(), "reference") != NULL, "message: %s", ffnn_last_error());
    TEST_FREE(m, data);
    return TEST_PASS;
}

/* FFNN_OMP_ISA forces the kernel set: each set this CPU runs is taken, one it cannot
 * run is refused (FFNN_ERR_UNSUPPORTED, never run), an unknown name is refused by
 * name; the trainer passes the refusal on. */
TEST("omp_isa_forced_by_environment", test_isa_forced)
{
    static const char *sets[] = {"avx512", "avx2", "baseline"};
    const char *prev = getenv("FFNN_OMP_ISA");
    char saved[64];
    snprintf(saved, sizeof saved, "%s", prev ? prev : "");
    test_result r = TEST_PASS;
    for (size_t i = 0; i < 3 && r == TEST_PASS; i++) {
        setenv("FFNN_OMP_ISA", sets[i], 1);
        void *ctx = NULL;
        ffnn_status st = ffnn_omp_create_with(2, NULL, &ctx);
        if (ffnn_omp_gemm_named(sets[i])) {
            if (st != FFNN_OK || strcmp(ffnn_omp_isa(ctx)->name, sets[i]) != 0) {
                fprintf(stderr, "    FFNN_OMP_ISA=%s: status %d, set %s\n", sets[i], (int)st,
                        st == FFNN_OK ? ffnn_omp_isa(ctx)->name : ffnn_last_error());
                r = TEST_FAIL;
            }
            printf("      FFNN_OMP_ISA=%s: taken\n", sets[i]);
        } else if (st != FFNN_ERR_UNSUPPORTED || !strstr(ffnn_last_error(), "cannot run")) {
            fprintf(stderr, "    FFNN_OMP_ISA=%s on a CPU without it: status %d (%s)\n",
                    sets[i], (int)st, ffnn_last_error());
            r = TEST_FAIL;
        } else {
            printf("      FFNN_OMP_ISA=%s: refused here (%s)\n", sets[i], ffnn_last_error());
        }
        if (st == FFNN_OK)
            ffnn_omp_backend.destroy(ctx);
    }
    if (r == TEST_PASS) {
        setenv("FFNN_OMP_ISA", "sse9", 1);
        void *ctx = NULL;
        ffnn_status st = ffnn_omp_create_with(1, NULL, &ctx);
        if (st != FFNN_ERR_INVALID_ARGUMENT || !strstr(ffnn_last_error(), "sse9") ||
            !strstr(ffnn_last_error(), "baseline")) {
            fprintf(stderr, "    FFNN_OMP_ISA=sse9: status %d (%s)\n", (int)st,
                    ffnn_last_error());
            r = TEST_FAIL;
            if (st == FFNN_OK)
                ffnn_omp_backend.destroy(ctx);
        }
    }
    if (r == TEST_PASS) { /* through the public API */
        ffnn_model *m = NULL;
        ffnn_dataset *tr = NULL, *te = NULL;
        CHECK_OK(ffnn_model_create("2-4relu-2", &m));
        CHECK_OK(ffnn_dataset_synthetic("synth:points:64", 1, &tr, &te));
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.device = FFNN_DEVICE_CPU;
        cfg.threads = 2;
        ffnn_trainer *t = NULL;
        ffnn_status st = ffnn_trainer_create(m, tr, &cfg, &t);
        if (st != FFNN_ERR_INVALID_ARGUMENT || !strstr(ffnn_last_error(), "FFNN_OMP_ISA")) {
            fprintf(stderr, "    trainer with FFNN_OMP_ISA=sse9: status %d (%s)\n", (int)st,
                    ffnn_last_error());
            r = TEST_FAIL;
        }
        TEST_FREE(t, m, tr, te);
    }
    if (prev)
        setenv("FFNN_OMP_ISA", saved, 1);
    else
        unsetenv("FFNN_OMP_ISA");
    return r;
}
