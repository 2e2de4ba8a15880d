/* test_parallel.c - data parallelism (src/parallel/): the batch split; the
 * communicator constructors' refusals; under mpirun on the cpu backend (the cases
 * of tests/test_parallel.sh: per-step parity with one process for SGD, momentum
 * and Adam at -np 2 and 3, resume, a killed rank, a NaN); on a GPU, the NCCL path
 * with one GPU (a group of one) against the plain trainer, bit for bit, and with
 * two GPUs (when there are two) within 1e-4. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "parallel/comm.h"

/* The shards of every batch of 0..64 rows over 1..7 ranks tile it in rank order,
 * and differ in size by at most one (the larger ones first). */
TEST("parallel_shard_split_tiles_every_batch", shard_split)
{
    for (int size = 1; size <= 7; size++)
        for (size_t rows = 0; rows <= 64; rows++) {
            size_t next = 0, first, count, prev = rows + 1;
            for (int r = 0; r < size; r++) {
                ffnn_shard_range(rows, r, size, &first, &count);
                CHECK(first == next, "rows %zu, rank %d of %d: first %zu, expected %zu", rows,
                      r, size, first, next);
                CHECK(count <= prev && count + 1 >= (rows + (size_t)size - 1) / (size_t)size,
                      "rows %zu, rank %d of %d: %zu rows", rows, r, size, count);
                prev = count;
                next += count;
            }
            CHECK(next == rows, "rows %zu over %d ranks: shards cover %zu", rows, size, next);
        }
    size_t first, count; /* the example of ffnn.h: 100 rows over 3 ranks: 34, 33, 33 */
    ffnn_shard_range(100, 1, 3, &first, &count);
    CHECK(first == 34 && count == 33, "100 rows, rank 1 of 3: [%zu, +%zu)", first, count);
    return TEST_PASS;
}

/* Without NCCL (or without a GPU) --gpus is refused with what is missing; a
 * group of 0 GPUs is refused; the NULL communicator is world size 1. */
TEST("parallel_comm_refusals", comm_refusals)
{
    ffnn_comm *comms[1] = {NULL};
    CHECK(ffnn_comm_create_gpus(0, comms) == FFNN_ERR_INVALID_ARGUMENT, "gpus 0 accepted");
    CHECK(ffnn_comm_rank(NULL) == 0 && ffnn_comm_size(NULL) == 1 &&
          strcmp(ffnn_comm_kind(NULL), "none") == 0, "the NULL communicator");
    if (!ffnn_has_nccl()) {
        CHECK(ffnn_comm_create_gpus(1, comms) == FFNN_ERR_UNSUPPORTED, "no NCCL: accepted");
        CHECK(strstr(ffnn_last_error(), "NCCL") != NULL, "message: %s", ffnn_last_error());
    } else if (ffnn_cuda_device_count() == 0) {
        CHECK(ffnn_comm_create_gpus(1, comms) != FFNN_OK, "no GPU: accepted");
    }
    if (!ffnn_has_mpi()) {
        ffnn_comm *c = NULL;
        CHECK(ffnn_comm_create_mpi(FFNN_DEVICE_CPU, &c) == FFNN_ERR_UNSUPPORTED, "no MPI");
        CHECK(strstr(ffnn_last_error(), "MPI") != NULL, "message: %s", ffnn_last_error());
    }
    return TEST_PASS;
}

/* ---------------------------------------------------------------- mpirun */

/* Run tests/test_parallel.sh CASE; its stdout lines are printed indented. */
static test_result run_case(char *why, size_t why_size, const char *name)
{
    if (!ffnn_has_mpi())
        SKIP("this build of ffnn has no MPI (install libopenmpi-dev and rebuild; make MPI=1)");
    char cmd[512], line[512], last[512] = "";
    snprintf(cmd, sizeof cmd, "sh tests/test_parallel.sh %s", name);
    fflush(stdout);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run %s", cmd);
    while (fgets(line, sizeof line, p)) {
        snprintf(last, sizeof last, "%s", line);
        last[strcspn(last, "\n")] = '\0';
        printf("     %s", line);
    }
    int status = pclose(p);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rc == 77)
        SKIP("%s", last);
    CHECK(rc == 0, "tests/test_parallel.sh %s exited with %d", name, rc);
    return TEST_PASS;
}

/* name: tests/test_parallel.sh CASE */
#define MPI_CASE(test, name, CASE) TEST_WITH(test, name, run_case, CASE)
MPI_CASE("parallel_mpi_parity_sgd_np2_np3", mpi_parity_sgd, "parity_sgd");
MPI_CASE("parallel_mpi_parity_adam_momentum_np2_np3", mpi_parity_adam_momentum, "parity_adam");
MPI_CASE("parallel_mpi_features_np2_np3", mpi_features, "features");
MPI_CASE("parallel_mpi_two_buckets_rank_without_rows", mpi_buckets, "buckets");
MPI_CASE("parallel_mpi_resume_bitwise_and_other_ranks", mpi_resume, "resume");
MPI_CASE("parallel_mpi_killed_rank_stops_all", mpi_killed_rank, "kill_rank");
MPI_CASE("parallel_mpi_rank_with_other_data_stops_all", mpi_other_data, "other_data");
MPI_CASE("parallel_mpi_early_stopping_same_epoch_np2_np3", mpi_early_stopping, "early_stopping");
MPI_CASE("parallel_mpi_nan_stops_all_one_message", mpi_nan, "nan");
MPI_CASE("parallel_mpi_sweep_np2_np3_equals_one_process", mpi_sweep, "sweep");
MPI_CASE("parallel_mpi_sweep_error_on_a_rank_ends_all", mpi_sweep_errors, "sweep_errors");

/* mpirun -np 2 ffnn sweep on cuda (each rank on the GPU of its place on the node,
 * both on GPU 0 of a one-GPU machine) against one process: the same table and
 * --save-best bytes (tests/test_parallel.sh sweep_cuda) */
TEST("parallel_mpi_sweep_cuda_np2_equals_one_process", mpi_sweep_cuda)
{
    SKIP_WITHOUT_GPU();
    return run_case(why, why_size, "sweep_cuda");
}

/* ---------------------------------------------------------------- GPUs */

/* Train `steps` steps of 784-... on synth data with ranks trainers (one per GPU,
 * comms NULL: one plain trainer); losses[steps] of rank 0 and its final
 * parameters params[n]. Each rank runs on its own thread only for ranks > 1. */
typedef struct gpu_run {
    ffnn_comm *comm;
    const ffnn_dataset *train;
    ffnn_train_config cfg;
    const char *arch;
    int steps;
    double *losses;  /* [steps]                  */
    float *params;   /* [parameter count]        */
    ffnn_status st;
    char error[512];
} gpu_run;

static void *gpu_run_main(void *arg)
{
    gpu_run *g = arg;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    g->st = ffnn_model_create(g->arch, &m);
    if (g->st == FFNN_OK)
        g->st = ffnn_model_init(m, 7);
    if (g->st == FFNN_OK)
        g->st = ffnn_trainer_create_parallel(m, g->train, &g->cfg, g->comm, &t);
    for (int s = 0; s < g->steps && g->st == FFNN_OK; s++)
        g->st = ffnn_trainer_step(t, &g->losses[s]);
    if (g->st == FFNN_OK && g->params) {
        g->st = ffnn_trainer_sync_model(t);
        if (g->st == FFNN_OK)
            memcpy(g->params, ffnn_model_parameters(m),
                   ffnn_model_parameter_count(m) * sizeof(float));
    }
    if (g->st != FFNN_OK)
        snprintf(g->error, sizeof g->error, "%s", ffnn_last_error());
    TEST_FREE(t, m);
    return NULL;
}

/* A group of `gpus` GPUs against the plain trainer on GPU 0, for a strategy and
 * optimizer: bit for bit (tolerance 0) or within tol relative. reduce_alone: a
 * group of one runs the all-reduce stage anyway (the NCCL path on one GPU). */
static test_result gpu_group(int gpus, ffnn_strategy strategy, ffnn_optimizer opt, double tol,
                             int reduce_alone, char *why, size_t why_size)
{
    if (!ffnn_has_cuda() || ffnn_cuda_device_count() < gpus)
        SKIP("needs %d CUDA GPU%s", gpus, gpus == 1 ? "" : "s");
    if (!ffnn_has_nccl())
        SKIP("this build of ffnn has no NCCL");
    enum { STEPS = 60 };
    const char *arch = "784-256relu-10";
    ffnn_dataset *train = NULL;
    /* 4000 random 784-feature rows in [0, 1), 10 classes (from the first feature) */
    size_t n = 4000, f = 784;
    float *x = malloc(n * f * sizeof *x);
    int32_t *y = malloc(n * sizeof *y);
    CHECK(x && y, "out of memory");
    uint64_t r = 12345;
    for (size_t i = 0; i < n * f; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)(r >> 40) / (float)(1u << 24);
    }
    for (size_t i = 0; i < n; i++)
        y[i] = (int32_t)((size_t)(x[i * f] * 10.0f) % 10);
    CHECK_OK(ffnn_dataset_from_arrays(n, f, x, y, 0, NULL, &train));
    free(x);
    free(y);
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CUDA, strategy);
    cfg.optimizer = opt;
    cfg.learning_rate = opt == FFNN_OPT_ADAM ? 1e-3f : 0.05f;
    cfg.batch_size = 256;
    size_t count = 784 * 256 + 256 + 256 * 10 + 10;
    double plain_loss[STEPS], group_loss[8][STEPS];
    float *plain_params = malloc(count * sizeof(float));
    float *group_params = malloc(count * sizeof(float));
    CHECK(plain_params && group_params, "out of memory");
    gpu_run plain = {NULL, train, cfg, arch, STEPS, plain_loss, plain_params, FFNN_OK, ""};
    gpu_run_main(&plain);
    CHECK(plain.st == FFNN_OK, "plain trainer: %s", plain.error);
    ffnn_comm *comms[8] = {NULL};
    CHECK(gpus <= 8, "at most 8 GPUs");
    CHECK_OK(ffnn_comm_create_gpus(gpus, comms));
    for (int i = 0; i < gpus; i++)
        comms[i]->reduce_alone = reduce_alone;
    gpu_run runs[8];
    pthread_t threads[8];
    for (int i = 0; i < gpus; i++) {
        runs[i] = (gpu_run){comms[i], train, cfg, arch, STEPS, group_loss[i],
                            i == 0 ? group_params : NULL, FFNN_OK, ""};
        CHECK(pthread_create(&threads[i], NULL, gpu_run_main, &runs[i]) == 0, "thread");
    }
    for (int i = 0; i < gpus; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < gpus; i++) {
        ffnn_comm_free(comms[i]);
        CHECK(runs[i].st == FFNN_OK, "rank %d: %s", i, runs[i].error);
    }
    double worst = 0;
    for (int s = 0; s < STEPS; s++) {
        double d = fabs(plain_loss[s] - group_loss[0][s]) / fmax(fabs(plain_loss[s]), 1e-12);
        worst = fmax(worst, d);
        for (int i = 1; i < gpus; i++)
            CHECK(group_loss[i][s] == group_loss[0][s], "step %d: rank %d's loss %.9g, rank "
                  "0's %.9g", s + 1, i, group_loss[i][s], group_loss[0][s]);
        CHECK(d <= tol, "%s %s, %d GPU%s, step %d: loss %.9g, plain %.9g (%.3g relative)",
              ffnn_strategy_name(strategy), ffnn_optimizer_name(opt), gpus,
              gpus == 1 ? "" : "s", s + 1, group_loss[0][s], plain_loss[s], d);
    }
    if (tol == 0)
        CHECK(memcmp(plain_params, group_params, count * sizeof(float)) == 0,
              "the parameters differ after %d steps", STEPS);
    printf("     %s %s, %d GPU%s%s: %d steps, largest loss difference %.3g relative%s\n",
           ffnn_strategy_name(strategy), ffnn_optimizer_name(opt), gpus, gpus == 1 ? "" : "s",
           gpus == 1 ? (reduce_alone ? " (all-reduce stage run)" : " (the plain run)") : "",
           STEPS, worst, tol == 0 ? ", parameters bit for bit" : "");
    free(plain_params);
    free(group_params);
    ffnn_dataset_free(train);
    return TEST_PASS;
}

/* One GPU: with the all-reduce stage forced (the NCCL path, an identity sum)
 * every strategy but persistent; as made (--gpus 1: the plain run, persistent
 * included) each strategy. Both bit for bit with the plain trainer. */
TEST("parallel_gpu_nccl_one_gpu_bitwise", gpu_nccl_one_gpu_bitwise)
{
    const ffnn_strategy strategies[] = {FFNN_STRATEGY_TILED, FFNN_STRATEGY_CUBLAS,
                                        FFNN_STRATEGY_CUBLASLT, FFNN_STRATEGY_FUSED,
                                        FFNN_STRATEGY_GRAPH, FFNN_STRATEGY_PERSISTENT};
    for (int alone = 1; alone >= 0; alone--)
        for (size_t i = 0; i < sizeof strategies / sizeof strategies[0]; i++)
            for (int o = 0; o < 2; o++) {
                if (strategies[i] == FFNN_STRATEGY_PERSISTENT && (alone || o))
                    continue; /* persistent: sgd, and no place for the stage */
                test_result r = gpu_group(1, strategies[i], o ? FFNN_OPT_ADAM : FFNN_OPT_SGD,
                                          0.0, alone, why, why_size);
                if (r != TEST_PASS)
                    return r;
            }
    return TEST_PASS;
}

TEST("parallel_gpu_nccl_two_gpus_1e-4", gpu_nccl_two_gpus)
{
    const ffnn_strategy strategies[] = {FFNN_STRATEGY_TILED, FFNN_STRATEGY_GRAPH};
    for (size_t i = 0; i < 2; i++)
        for (int o = 0; o < 2; o++) {
            test_result r = gpu_group(2, strategies[i], o ? FFNN_OPT_ADAM : FFNN_OPT_SGD, 1e-4,
                                      0, why, why_size);
            if (r != TEST_PASS)
                return r;
        }
    return TEST_PASS;
}
