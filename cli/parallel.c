/* parallel.c - ffnn train over several ranks (parallel.h): the launch is
 * recognised, the communicator made (ffnn_comm_create_mpi / _gpus), and every
 * rank runs ffnn_cli_train_run with it; rank 0 alone prints, logs and saves. */
#define _POSIX_C_SOURCE 200809L
#include "parallel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "messages.h"
#include "options.h"

#define CMD "ffnn train"

int ffnn_cli_mpi_launched(int *size)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    *size = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            if (i < 2)
                *size = atoi(v);
            return 1;
        }
    }
    return 0;
}

/* One rank of an in-process GPU group: its own model (a copy, but rank 0's),
 * trained by its own thread. */
typedef struct gpu_rank {
    const ffnn_cli_train_options *o;
    ffnn_model *model;
    ffnn_dataset *train, *val, *test;
    const char *description;
    ffnn_comm *comm;
    int rc;
} gpu_rank;

static void *run_gpu_rank(void *arg)
{
    gpu_rank *g = arg;
    g->rc = ffnn_cli_train_run(g->o, g->model, g->train, g->val, g->test, g->description,
                               g->comm);
    return NULL;
}

/* A copy of m (architecture and parameters), or NULL with the message printed. */
static ffnn_model *copy_model(const ffnn_model *m)
{
    char arch[4096];
    ffnn_model *c = NULL;
    ffnn_model_arch_string(m, arch, sizeof arch);
    if (ffnn_model_create(arch, &c) != FFNN_OK) {
        ffnn_cli_fail(CMD, "--gpus: copying the model");
        return NULL;
    }
    memcpy(ffnn_model_parameters(c), ffnn_model_parameters((ffnn_model *)m),
           ffnn_model_parameter_count(m) * sizeof(float));
    return c;
}

static int train_gpus(const ffnn_cli_train_options *o, int gpus, ffnn_model *model,
                      ffnn_dataset *train, ffnn_dataset *val, ffnn_dataset *test,
                      const char *description)
{
    int visible = ffnn_cuda_device_count();
    if (gpus < 0 ? visible < 1 : gpus > visible) {
        char asked[32];
        snprintf(asked, sizeof asked, gpus < 0 ? "all" : "%d", gpus);
        fprintf(stderr, "%s: --gpus %s: %d CUDA GPU%s visible%s\n", CMD, asked, visible,
                visible == 1 ? " is" : "s are",
                ffnn_has_cuda() ? "" : " (this build of ffnn has no CUDA)");
        return 1;
    }
    if (gpus < 0)
        gpus = visible;
    ffnn_comm **comms = calloc((size_t)gpus, sizeof *comms);
    gpu_rank *ranks = calloc((size_t)gpus, sizeof *ranks);
    pthread_t *threads = calloc((size_t)gpus, sizeof *threads);
    int rc = 0, started = 0;
    if (!comms || !ranks || !threads) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        rc = 1;
    } else if (ffnn_comm_create_gpus(gpus, comms) != FFNN_OK) {
        rc = ffnn_cli_fail(CMD, "--gpus");
    }
    for (int i = 0; rc == 0 && i < gpus; i++) {
        ranks[i] = (gpu_rank){o, i == 0 ? model : copy_model(model), train, val, test,
                              description, comms[i], 0};
        if (!ranks[i].model)
            rc = 1;
    }
    for (; rc == 0 && started < gpus; started++)
        if (pthread_create(&threads[started], NULL, run_gpu_rank, &ranks[started]) != 0) {
            fprintf(stderr, "%s: --gpus: cannot start the thread of GPU %d\n", CMD, started);
            ffnn_comm_abort(comms[0], 1); /* the started ranks would wait for it */
            exit(1);
        }
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        if (ranks[i].rc != 0 && rc == 0)
            rc = ranks[i].rc;
    }
    for (int i = 0; ranks && i < gpus; i++)
        if (ranks[i].model && ranks[i].model != model)
            ffnn_model_free(ranks[i].model);
    for (int i = 0; comms && i < gpus; i++)
        ffnn_comm_free(comms[i]);
    free(comms);
    free(ranks);
    free(threads);
    return rc;
}

int ffnn_cli_train_launch(const ffnn_cli_train_options *o, int gpus, ffnn_model *model,
                          ffnn_dataset *train, ffnn_dataset *val, ffnn_dataset *test,
                          const char *description)
{
    int size = 0;
    if (gpus != 0)
        return train_gpus(o, gpus, model, train, val, test, description);
    if (!ffnn_cli_mpi_launched(&size))
        return ffnn_cli_train_run(o, model, train, val, test, description, NULL);
    /* --threads 0 (all cores) on the cpu: the cores shared by the ranks of this node
     * (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE or MPICH's MPI_LOCALNRANKS; 1 thread:
     * the reference backend) */
    ffnn_cli_train_options local = *o;
    const char *node_ranks = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!node_ranks)
        node_ranks = getenv("MPI_LOCALNRANKS");
    long cores = sysconf(_SC_NPROCESSORS_ONLN), per_node = node_ranks ? atol(node_ranks) : 1;
    if (local.cfg.threads == 0 && local.cfg.device != FFNN_DEVICE_CUDA && per_node > 1 &&
        cores > 0)
        local.cfg.threads = cores / per_node > 1 ? (int)(cores / per_node) : 1;
    o = &local;
    ffnn_comm *comm = NULL;
    if (ffnn_comm_create_mpi(o->cfg.device, &comm) != FFNN_OK) {
        /* every rank gets here alike (no MPI, no NCCL), or MPI itself failed */
        char message[1280];
        ffnn_cli_last_error(message, sizeof message); /* with the CLI's flag names */
        fprintf(stderr, "%s: an MPI launch of %d rank%s: %s\n", CMD, size, size == 1 ? "" : "s",
                message);
        return 1;
    }
    int rc = ffnn_cli_train_run(o, model, train, val, test, description, comm);
    ffnn_comm_free(comm);
    return rc;
}
