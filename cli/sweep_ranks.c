/* sweep_ranks.c - ffnn sweep over the ranks of an MPI launch (mpirun -np R ffnn
 * sweep ...): sweep parallelism, no all-reduce of gradients. Every rank parses the
 * same command line, loads the same data and makes every configuration's model
 * (so each has the standardisation, class names and table encoding rank 0 saves);
 * configuration k trains on rank k % R, all its folds there, exactly as a
 * one-process sweep trains it (the same trainers, the same bits); the ranks meet
 * only to agree on statuses, at every epoch (how many still train, the best, a
 * signal or a failure: ffnn_sweep_train_all), at --halving's rungs (the global
 * ranking), and at the end, when every configuration's results and the models
 * rank 0 writes go to rank 0 (ffnn_comm_broadcast from the rank that trained
 * them; include/ffnn.h). Rank 0 alone prints and writes; the other ranks' stdout
 * is muted, and their stderr is captured until the ranks agree that the steps
 * every rank makes alike went well (so an error of the command line is printed
 * once, and one that only a rank met is printed by that rank). MPI is the MPI
 * module's (ffnn_comm_create_mpi with device cpu: host memory, whatever the
 * device the models train on). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnn.h"
#include "messages.h"
#include "options.h"
#include "parallel.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* The rank the launcher's environment names (to print from rank 0 alone before
 * MPI is up); 0 when none does. */
static int launch_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int ffnn_sweep_ranks_begin(sweep_cli *s)
{
    int size = 0;
    s->comm = NULL, s->rank = 0, s->ranks = 1, s->captured = NULL, s->saved_stderr = -1;
    if (!ffnn_cli_mpi_launched(&size))
        return 0;
    if (ffnn_comm_create_mpi(FFNN_DEVICE_CPU, &s->comm) != FFNN_OK) {
        char message[1280];
        ffnn_cli_last_error(message, sizeof message);
        if (launch_rank() == 0) /* every rank gets here alike: one message */
            fprintf(stderr, "%s: an MPI launch of %d rank%s: %s\n", CMD, size,
                    size == 1 ? "" : "s", message);
        return 1;
    }
    s->rank = ffnn_comm_rank(s->comm);
    s->ranks = ffnn_comm_size(s->comm);
    if (s->rank == 0)
        return 0;
    fflush(stdout);
    fflush(stderr);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        close(null);
    }
    s->captured = tmpfile();
    s->saved_stderr = s->captured ? dup(STDERR_FILENO) : -1;
    if (s->saved_stderr >= 0)
        dup2(fileno(s->captured), STDERR_FILENO);
    return 0;
}

/* The first rank with rc != 0 (s->ranks: none) and its rc (collective). */
static int first_failed(const sweep_cli *s, int rc, int *code)
{
    double v[2] = {rc ? (double)s->rank : (double)s->ranks, rc ? -(double)rc : 0.0};
    if (ffnn_comm_reduce(s->comm, v, 2, FFNN_COMM_MIN) != FFNN_OK) {
        ffnn_cli_fail(CMD, "the ranks' statuses");
        ffnn_comm_abort(s->comm, 1); /* the others may wait for this rank */
    }
    *code = (int)-v[1];
    return (int)v[0];
}

int ffnn_sweep_ranks_agree(sweep_cli *s, int rc)
{
    if (!s->comm)
        return rc;
    if (s->saved_stderr >= 0) {
        fflush(stderr);
        dup2(s->saved_stderr, STDERR_FILENO);
        close(s->saved_stderr);
        s->saved_stderr = -1;
    }
    int code = 0, first = first_failed(s, rc < 0 ? 0 : rc, &code);
    if (first < s->ranks && first == s->rank && s->rank > 0 && s->captured) {
        char line[1024];
        rewind(s->captured);
        fprintf(stderr, "%s: rank %d of %d:\n", CMD, s->rank, s->ranks);
        while (fgets(line, sizeof line, s->captured))
            fputs(line, stderr);
    } else if (first < s->ranks && first > 0 && s->rank == 0) {
        fprintf(stderr, "%s: rank %d of %d failed before training (its messages follow "
                "or precede this line)\n", CMD, first, s->ranks);
    }
    if (s->captured)
        fclose(s->captured), s->captured = NULL;
    if (rc < 0 && first == s->ranks)
        return rc; /* --help, on every rank */
    return rc > 0 ? rc : first < s->ranks ? (code > 0 ? code : 1) : 0;
}

int ffnn_sweep_ranks_status(const sweep_cli *s, int rc, const char *step)
{
    if (!s->comm)
        return rc;
    int code = 0, first = first_failed(s, rc, &code);
    if (first < s->ranks && first != s->rank && s->rank == 0 && rc == 0)
        fprintf(stderr, "%s: rank %d of %d failed %s (its message is above)\n", CMD, first,
                s->ranks, step);
    return rc ? rc : first < s->ranks ? 1 : 0;
}

/* This rank's place among the ranks of its node (collective: each rank's host name
 * to every rank). */
static int node_rank(const sweep_cli *s, int *local, int *on_node)
{
    char mine[256] = "", other[256];
    gethostname(mine, sizeof mine - 1);
    *local = 0, *on_node = 0;
    for (int r = 0; r < s->ranks; r++) {
        memcpy(other, mine, sizeof other);
        if (ffnn_comm_broadcast(s->comm, other, sizeof other, r) != FFNN_OK)
            return ffnn_cli_fail(CMD, "the ranks' host names");
        if (strcmp(other, mine) == 0)
            *local += r < s->rank, (*on_node)++;
    }
    return 0;
}

int ffnn_sweep_ranks_place(const sweep_cli *s, config *c, long long n)
{
    if (!s->comm)
        return 0;
    int local = 0, on_node = 1, rc = node_rank(s, &local, &on_node);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (long long k = 0; rc == 0 && k < n; k++)
        if (c[k].o.cfg.threads == 0 && on_node > 1 && cores > 0)
            c[k].o.cfg.threads = cores / on_node > 1 ? (int)(cores / on_node) : 1;
    if (rc == 0 && c[0].o.cfg.device == FFNN_DEVICE_CUDA) {
        int gpus = ffnn_cuda_device_count();
        if (gpus < 1)
            rc = (fprintf(stderr, "%s: rank %d: no CUDA GPU is visible%s\n", CMD, s->rank,
                          ffnn_has_cuda() ? "" : " (this build of ffnn has no CUDA)"), 1);
        else if (ffnn_cuda_set_device(local % gpus) != FFNN_OK)
            rc = ffnn_cli_fail(CMD, "the rank's GPU");
    }
    return ffnn_sweep_ranks_status(s, rc, "to take its GPU");
}

/* What the rank that trained a configuration sends of it. */
typedef struct result {
    ffnn_sweep_state state;
    ffnn_metrics val, test;
    double seconds;
    int has_val, has_test, dropped_at, pad;
} result;

int ffnn_sweep_ranks_gather(const sweep_cli *s, config *c, long long n)
{
    if (!s->comm)
        return 0;
    long long most = n / s->ranks + 1;
    result *buf = calloc((size_t)most, sizeof *buf);
    int rc = buf ? 0 : (fprintf(stderr, "%s: out of memory\n", CMD), 1);
    rc = ffnn_sweep_ranks_status(s, rc, "to gather the results");
    for (int r = 0; rc == 0 && r < s->ranks; r++) {
        long long q = 0;
        for (long long k = r; k < n; k += s->ranks, q++)
            if (r == s->rank)
                buf[q] = (result){c[k].state, c[k].val, c[k].test, c[k].seconds,
                                  c[k].has_val, c[k].has_test, c[k].dropped_at, 0};
        if (q && ffnn_comm_broadcast(s->comm, buf, (size_t)q * sizeof *buf, r) != FFNN_OK) {
            rc = ffnn_cli_fail(CMD, "gathering the results");
            ffnn_comm_abort(s->comm, 1);
        }
        q = 0;
        for (long long k = r; r != s->rank && k < n; k += s->ranks, q++) {
            c[k].state = buf[q].state, c[k].val = buf[q].val, c[k].test = buf[q].test;
            c[k].seconds = buf[q].seconds, c[k].has_val = buf[q].has_val;
            c[k].has_test = buf[q].has_test, c[k].dropped_at = buf[q].dropped_at;
        }
    }
    free(buf);
    return rc;
}

/* Configuration k's model (fold 0's) from its rank to rank 0. */
static int send_model(const sweep_cli *s, config *c, long long k)
{
    int from = (int)(k % s->ranks);
    ffnn_model *m = c[k].model[0];
    if (from == 0)
        return 0;
    if (ffnn_comm_broadcast(s->comm, ffnn_model_parameters(m),
                            ffnn_model_parameter_count(m) * sizeof(float), from) != FFNN_OK) {
        ffnn_cli_fail(CMD, "gathering the models");
        ffnn_comm_abort(s->comm, 1);
    }
    /* as ffnn_trainer_create sets it on the rank that trained it */
    if (s->rank == 0 && ffnn_model_set_loss(m, c[k].o.cfg.loss) != FFNN_OK)
        return ffnn_cli_fail(CMD, "gathering the models");
    return 0;
}

int ffnn_sweep_ranks_models(const sweep_cli *s, config *c, long long n, const long long *order)
{
    if (!s->comm)
        return 0;
    int rc = 0; /* every rank takes part in every broadcast, failed or not */
    if (s->save_all)
        for (long long k = 0; k < n; k++)
            rc |= send_model(s, c, k);
    else if (s->save_best || s->ensemble_path) {
        long long top = s->ensemble_path && s->ensemble_k > 1 ? s->ensemble_k : 1;
        for (long long r = 0; r < top && r < n; r++)
            rc |= send_model(s, c, order[r]);
    }
    return rc;
}

void ffnn_sweep_ranks_end(sweep_cli *s)
{
    if (s->saved_stderr >= 0) {
        fflush(stderr);
        dup2(s->saved_stderr, STDERR_FILENO);
        close(s->saved_stderr);
        s->saved_stderr = -1;
    }
    if (s->captured)
        fclose(s->captured), s->captured = NULL;
    ffnn_comm_free(s->comm);
    s->comm = NULL;
}
