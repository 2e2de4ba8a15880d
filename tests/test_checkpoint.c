/* test_checkpoint.c - training checkpoints (RELIABILITY faults 1, 2, 4, 5).
 *
 *   - resume: a run stopped at step k (mid-epoch, at an epoch boundary, in a
 *     later epoch), checkpointed, thrown away and resumed in a fresh model and
 *     trainer gives every per-step loss, every epoch's mean loss and the final
 *     weights of the run that never stopped, bit for bit (memcmp), with sgd,
 *     momentum (Nesterov) and adam; on cpu, and on cuda when there is a GPU;
 *     saving right after resuming writes the same bytes again;
 *   - faults: a child killed (SIGKILL) while saving leaves the previous
 *     checkpoint (bit-identical, loadable) or the complete new one; a full disk
 *     (RLIMIT_FSIZE in a child) leaves the previous one intact and no temporary
 *     file; a diverging run (lr 1e3) or NaN parameters: the error names the
 *     epoch and step and no checkpoint is written;
 *   - refusals: a checkpoint resumed with another setting, architecture or data
 *     (the message names the field and both values), a model file resumed or a
 *     checkpoint loaded as a model, tampered or truncated files;
 *   - the CLI: --max-steps + --checkpoint, then --resume with no other flag,
 *     reproduces the uninterrupted run's step log and model file;
 *   - early stopping's state in a checkpoint: a run resumed before or after the
 *     best epoch (mid-epoch, at an epoch's end, at the end of the epoch that
 *     stops) stops after the same epoch and restores the same best weights as the
 *     run that never stopped (sgd; momentum + EMA); malformed or inconsistent
 *     early-stopping keys and tensors refused naming the key; checkpoints without
 *     the state (the format before it) still resume, and a different patience or
 *     none is accepted.
 * Set FFNN_TEST_VERBOSE=1 to see each error message. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "test_files.h"
#include "ffnn.h"
#include "train/train_internal.h" /* ffnn_trainer_upload_model */

#define FASHION "/usr/share/datasets/fashion-mnist"
#define VERBOSE (getenv("FFNN_TEST_VERBOSE") != NULL)
/* The CLI under test (cli_binary(): FFNN_BIN overrides, e.g. for another build). */
#define CLI (cli_binary())

/* ---------------------------------------------------------------- files */

/* Remove the temporary files "*.tmp-*" a killed save left in dir; how many. */
static int remove_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp-")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            n += remove(path) == 0;
        }
    closedir(d);
    return n;
}

/* ---------------------------------------------------------------- data */

/* Training samples [first, first + count) of Fashion-MNIST. */
static ffnn_status fashion_slice(size_t first, size_t count, ffnn_dataset **out)
{
    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_status st = ffnn_dataset_load_idx_dir(FASHION, &train, &test);
    if (st == FFNN_OK)
        st = ffnn_dataset_slice(train, first, count, out);
    TEST_FREE(train, test);
    return st;
}

/* ---------------------------------------------------------------- runs */

enum { EPOCHS = 3, SAMPLES = 1000, BATCH = 64, SPE = 16, STEPS = EPOCHS * SPE };
#define ARCH "784-32relu-10"
/* The architecture of the resume runs: ARCH, or with dropout for the features run. */
static const char *run_arch = ARCH;

/* One run's record: every per-step loss, every epoch's mean loss, the weights. */
typedef struct run_record {
    double loss[STEPS];
    double epoch_loss[EPOCHS];
    int have[STEPS];      /* loss[s] recorded */
    float *params;        /* [parameter_count] malloc'd, after the last step */
} run_record;

static ffnn_train_config run_config(ffnn_device device, ffnn_optimizer opt)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = device;
    if (device == FFNN_DEVICE_CPU)
        cfg.strategy = FFNN_STRATEGY_REFERENCE;
    cfg.batch_size = BATCH;
    cfg.seed = 7;
    cfg.epochs = EPOCHS;
    cfg.optimizer = opt;
    cfg.learning_rate = opt == FFNN_OPT_SGD ? 0.1f : opt == FFNN_OPT_MOMENTUM ? 0.02f : 2e-3f;
    cfg.nesterov = opt == FFNN_OPT_MOMENTUM;
    cfg.beta2 = 0.99f; /* not the default, so a lost hyperparameter would show */
    cfg.steps_per_launch = 1; /* stops at any step, whatever strategy auto picks */
    return cfg;
}

/* Copy the last finished epoch's per-step losses into r. */
static test_result record_epoch(ffnn_trainer *t, run_record *r, const ffnn_epoch_stats *stats)
{
    const double *losses;
    size_t count;
    CHECK_OK(ffnn_trainer_step_losses(t, &losses, &count));
    CHECK(count == SPE, "%zu step losses, expected %d", count, SPE);
    CHECK(stats->epoch >= 1 && stats->epoch <= EPOCHS, "epoch %d", stats->epoch);
    for (size_t s = 0; s < count; s++) {
        r->loss[(size_t)(stats->epoch - 1) * SPE + s] = losses[s];
        r->have[(size_t)(stats->epoch - 1) * SPE + s] = 1;
    }
    r->epoch_loss[stats->epoch - 1] = stats->train_loss;
    return TEST_PASS;
}

static test_result record_params(ffnn_trainer *t, ffnn_model *m, run_record *r)
{
    size_t n = ffnn_model_parameter_count(m);
    CHECK_OK(ffnn_trainer_sync_model(t));
    r->params = malloc(n * sizeof *r->params);
    CHECK(r->params != NULL, "out of memory");
    memcpy(r->params, ffnn_model_parameters(m), n * sizeof *r->params);
    return TEST_PASS;
}

/* The run that never stops: EPOCHS epochs of ffnn_trainer_run_epoch. */
static test_result uninterrupted(const ffnn_dataset *data, const ffnn_train_config *cfg,
                                 run_record *r)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_model_create(run_arch, &m));
    CHECK_OK(ffnn_model_init(m, 3));
    CHECK_OK(ffnn_trainer_create(m, data, cfg, &t));
    CHECK(ffnn_trainer_steps_per_epoch(t) == SPE, "steps per epoch %zu",
          ffnn_trainer_steps_per_epoch(t));
    test_result res = TEST_PASS;
    for (int e = 0; e < EPOCHS && res == TEST_PASS; e++) {
        ffnn_epoch_stats stats;
        CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &stats));
        res = record_epoch(t, r, &stats);
    }
    if (res == TEST_PASS)
        res = record_params(t, m, r);
    TEST_FREE(t, m);
    return res;
}

/* Step callback: stop once the run has taken *user steps. */
static int stop_at(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
{
    (void)t;
    return (size_t)(epoch - 1) * steps + step >= *(const size_t *)user;
}

/* Run epochs (ffnn_trainer_run_epoch_until) until step `until` of the run,
 * recording finished epochs; or, with use_step, ffnn_trainer_step. */
static test_result train_until(ffnn_trainer *t, size_t until, int use_step, run_record *r)
{
    int epoch;
    size_t step;
    ffnn_trainer_position(t, &epoch, &step);
    size_t done = epoch == 0 ? 0 : (size_t)(epoch - 1) * SPE + step;
    if (use_step) {
        for (; done < until; done++) {
            CHECK_OK(ffnn_trainer_step(t, &r->loss[done]));
            r->have[done] = 1;
        }
        return TEST_PASS;
    }
    while (done < until) {
        ffnn_epoch_stats stats;
        int finished = -1;
        CHECK_OK(ffnn_trainer_run_epoch_until(t, stop_at, &until, &stats, &finished));
        ffnn_trainer_position(t, &epoch, &step);
        done = (size_t)(epoch - 1) * SPE + step;
        CHECK(finished == (step == SPE), "finished %d at epoch %d step %zu", finished, epoch, step);
        if (finished)
            CHECK_PASS(record_epoch(t, r, &stats));
    }
    CHECK(done == until, "stopped at step %zu, expected %zu", done, until);
    return TEST_PASS;
}

/* Stop at step k, save, throw everything away, resume in a fresh model and
 * trainer (initialised from another seed), finish; compare with ref. */
static test_result resume_at(const char *dir, const ffnn_dataset *data,
                             const ffnn_train_config *cfg, size_t k, int use_step,
                             const run_record *ref)
{
    char path[512], again[512];
    run_record got;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    int epoch;
    size_t step;

    memset(&got, 0, sizeof got);
    snprintf(path, sizeof path, "%s/run.ckpt", dir);
    snprintf(again, sizeof again, "%s/again.ckpt", dir);
    CHECK_OK(ffnn_model_create(run_arch, &m));
    CHECK_OK(ffnn_model_init(m, 3));
    CHECK_OK(ffnn_trainer_create(m, data, cfg, &t));
    CHECK_PASS(train_until(t, k, use_step, &got));
    CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
    TEST_FREE(t, m);

    /* a fresh start: other weights, a new trainer */
    CHECK_OK(ffnn_model_create(run_arch, &m));
    CHECK_OK(ffnn_model_init(m, 99));
    CHECK_OK(ffnn_trainer_create(m, data, cfg, &t));
    CHECK_OK(ffnn_trainer_resume(t, path));
    ffnn_trainer_position(t, &epoch, &step);
    CHECK((epoch == 0 ? 0 : (size_t)(epoch - 1) * SPE + step) == k, "resumed at epoch %d step "
          "%zu, expected run step %zu", epoch, step, k);
    CHECK_OK(ffnn_trainer_save_checkpoint(t, again));
    int same = test_same_files(path, again);
    CHECK(same >= 0, "cannot read the checkpoints");
    CHECK(same, "k %zu: saving right after resuming wrote other bytes", k);
    if (train_until(t, STEPS, use_step, &got) != TEST_PASS || record_params(t, m, &got) != TEST_PASS)
        return TEST_FAIL;
    TEST_FREE(t, m);

    for (size_t s = 0; s < STEPS; s++)
        if (got.have[s])
            CHECK(memcmp(&got.loss[s], &ref->loss[s], sizeof(double)) == 0,
                  "resumed at %zu: step %zu: loss %.17g, uninterrupted %.17g", k, s + 1,
                  got.loss[s], ref->loss[s]);
    for (size_t s = k; s < STEPS; s++)
        CHECK(got.have[s], "resumed at %zu: step %zu not recorded", k, s + 1);
    if (!use_step)
        for (size_t e = k / SPE; e < EPOCHS; e++)
            CHECK(memcmp(&got.epoch_loss[e], &ref->epoch_loss[e], sizeof(double)) == 0,
                  "resumed at %zu: epoch %zu mean loss %.17g, uninterrupted %.17g", k, e + 1,
                  got.epoch_loss[e], ref->epoch_loss[e]);
    size_t n = 0;
    {
        ffnn_model *shape = NULL;
        CHECK_OK(ffnn_model_create(run_arch, &shape));
        n = ffnn_model_parameter_count(shape);
        ffnn_model_free(shape);
    }
    same = memcmp(got.params, ref->params, n * sizeof(float)) == 0;
    free(got.params);
    CHECK(same, "resumed at %zu: the final weights differ from the uninterrupted run's", k);
    remove(path);
    remove(again);
    return TEST_PASS;
}

/* The training-feature settings, all at once: weight decay without the biases,
 * reduce-on-plateau (threshold 0.5, patience 0: a reduction after most epochs,
 * so its state matters) after 5 warm-up steps, clipping by norm and value, EMA
 * (the weights compared are the EMA's) and dropout. */
static void add_features(ffnn_train_config *cfg)
{
    cfg->weight_decay = 0.01f;
    cfg->decay_bias = 0;
    cfg->lr_schedule = FFNN_LR_PLATEAU;
    cfg->lr_patience = 0;
    cfg->lr_factor = 0.5f;
    cfg->lr_threshold = 0.5f;
    cfg->warmup_steps = 5;
    cfg->clip_grad_norm = 1.0f;
    cfg->clip_grad_value = 0.05f;
    cfg->ema_decay = 0.9f;
}

/* Resume at: mid epoch 1, its end, mid epoch 2, late in epoch 3, and before the
 * first step; once with ffnn_trainer_step instead of epochs. features: with
 * add_features and a dropout layer. */
static test_result resume_matches_with(const char *dir, ffnn_device device, ffnn_optimizer opt,
                                       int features)
{
    static const size_t cuts[] = {5, SPE, SPE + 7, 2 * SPE + 13, 0};
    ffnn_dataset *data = NULL;
    run_record ref;
    test_result r = TEST_PASS;

    memset(&ref, 0, sizeof ref);
    CHECK_FASHION(fashion_slice(0, SAMPLES, &data));
    ffnn_train_config cfg = run_config(device, opt);
    if (features == 1)
        add_features(&cfg);
    /* 2: the activations whose backward reads the kept z, and parameters */
    run_arch = features == 1   ? "784-32relu:dropout0.2-10"
               : features == 2 ? "784-32gelu-16leaky_relu0.2-16elu0.5-8silu-10"
                               : ARCH;
    r = uninterrupted(data, &cfg, &ref);
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0] && r == TEST_PASS; i++)
        r = resume_at(dir, data, &cfg, cuts[i], 0, &ref);
    if (r == TEST_PASS)
        r = resume_at(dir, data, &cfg, SPE + 3, 1, &ref);
    if (r == TEST_PASS)
        printf("     %s %s%s: resumed at steps 0, 5, 16, 23, 45 (and 19 by single steps) of "
               "%d: losses and weights bit-identical\n", ffnn_device_name(device),
               ffnn_optimizer_name(opt),
               features == 1 ? " + the training features" : features == 2 ? " + gelu, silu, "
                               "leaky_relu0.2, elu0.5" : "", STEPS);
    run_arch = ARCH;
    free(ref.params);
    ffnn_dataset_free(data);
    return r;
}

/* features: 0 plain, 1 the feature set, 2 every activation (resume_matches_with). */
#define RESUME_TEST_WITH(test, name, device, opt, features)                       \
    TEST_DIR_CASE(test, "ck", name)                                               \
    {                                                                             \
        if ((device) == FFNN_DEVICE_CUDA && !ffnn_has_cuda())                      \
            SKIP("build has no CUDA (nvcc not found at build time)");             \
        if ((device) == FFNN_DEVICE_CUDA && ffnn_cuda_device_count() == 0)         \
            SKIP("no CUDA GPU visible");                                          \
        return resume_matches_with(dir, device, opt, features);                   \
    }                                                                             \
    typedef int resume_test_semicolon_##name
#define RESUME_TEST(test, name, device, opt) RESUME_TEST_WITH(test, name, device, opt, 0)
#define RESUME_FEATURES_TEST(test, name, device, opt)                             \
    RESUME_TEST_WITH(test, name, device, opt, 1)
#define RESUME_ACTIVATIONS_TEST(test, name, device, opt)                          \
    RESUME_TEST_WITH(test, name, device, opt, 2)

RESUME_TEST("checkpoint_resume_cpu_sgd", resume_cpu_sgd, FFNN_DEVICE_CPU, FFNN_OPT_SGD);
RESUME_TEST("checkpoint_resume_cpu_momentum", resume_cpu_momentum, FFNN_DEVICE_CPU,
            FFNN_OPT_MOMENTUM);
RESUME_TEST("checkpoint_resume_cpu_adam", resume_cpu_adam, FFNN_DEVICE_CPU, FFNN_OPT_ADAM);
RESUME_TEST("checkpoint_resume_cuda_sgd", resume_cuda_sgd, FFNN_DEVICE_CUDA, FFNN_OPT_SGD);
RESUME_TEST("checkpoint_resume_cuda_momentum", resume_cuda_momentum, FFNN_DEVICE_CUDA,
            FFNN_OPT_MOMENTUM);
RESUME_TEST("checkpoint_resume_cuda_adam", resume_cuda_adam, FFNN_DEVICE_CUDA, FFNN_OPT_ADAM);
RESUME_FEATURES_TEST("checkpoint_resume_cpu_momentum_features", resume_cpu_momentum_features,
                     FFNN_DEVICE_CPU, FFNN_OPT_MOMENTUM);
RESUME_FEATURES_TEST("checkpoint_resume_cpu_adamw_features", resume_cpu_adamw_features,
                     FFNN_DEVICE_CPU, FFNN_OPT_ADAMW);
RESUME_FEATURES_TEST("checkpoint_resume_cuda_adamw_features", resume_cuda_adamw_features,
                     FFNN_DEVICE_CUDA, FFNN_OPT_ADAMW);
RESUME_ACTIVATIONS_TEST("checkpoint_resume_cpu_momentum_activations",
                        resume_cpu_momentum_activations, FFNN_DEVICE_CPU, FFNN_OPT_MOMENTUM);
RESUME_ACTIVATIONS_TEST("checkpoint_resume_cuda_sgd_activations", resume_cuda_sgd_activations,
                        FFNN_DEVICE_CUDA, FFNN_OPT_SGD);

/* ---------------------------------------------------------------- faults */

/* A cpu trainer of arch with adam, `steps` steps taken. */
static ffnn_status trainer_after(const char *arch, const ffnn_dataset *data, int steps,
                                 ffnn_model **m, ffnn_trainer **t)
{
    ffnn_train_config cfg = run_config(FFNN_DEVICE_CPU, FFNN_OPT_ADAM);
    double loss;
    ffnn_status st;
    if ((st = ffnn_model_create(arch, m)) != FFNN_OK || (st = ffnn_model_init(*m, 1)) != FFNN_OK ||
        (st = ffnn_trainer_create(*m, data, &cfg, t)) != FFNN_OK)
        return st;
    for (int s = 0; s < steps && st == FFNN_OK; s++)
        st = ffnn_trainer_step(*t, &loss);
    return st;
}

/* The first count Fashion-MNIST training samples into *data (the test fails, naming
 * the error, without them), and trainer_after(arch, *data, steps). */
static test_result fashion_trainer(size_t count, const char *arch, int steps,
                                   ffnn_dataset **data, ffnn_model **m, ffnn_trainer **t)
{
    CHECK_FASHION(fashion_slice(0, count, data));
    CHECK_OK(trainer_after(arch, *data, steps, m, t));
    return TEST_PASS;
}

/* What the fault tests start from: the checkpoint path dir/run.ckpt and a
 * Fashion-MNIST slice, a model and its trainer (NULL until made; the test frees them). */
typedef struct fault_run {
    char path[512];
    ffnn_dataset *data;
    ffnn_model *m;
    ffnn_trainer *t;
} fault_run;

/* run->path = dir/run.ckpt; nothing made yet. */
static void fault_run_init(fault_run *run, const char *dir)
{
    memset(run, 0, sizeof *run);
    snprintf(run->path, sizeof run->path, "%s/run.ckpt", dir);
}

/* fault_run_init, then fashion_trainer(count, arch, steps) into run. */
static test_result fault_run_start(fault_run *run, const char *dir, size_t count,
                                   const char *arch, int steps)
{
    fault_run_init(run, dir);
    return fashion_trainer(count, arch, steps, &run->data, &run->m, &run->t);
}

/* path holds exactly old or fresh, and loads. */
static test_result expect_old_or_new(const char *path, const blob *old, const blob *fresh,
                                     int delay_us, int *saw_old)
{
    blob now;
    ffnn_checkpoint_info info;
    CHECK(test_read_file(path, &now) == 0, "%s is gone after a kill at %d us", path, delay_us);
    int is_old = test_same_blob(&now, old), is_new = test_same_blob(&now, fresh);
    free(now.data);
    CHECK(is_old || is_new, "after a kill at %d us %s is neither the previous checkpoint nor "
          "the new one (%zu bytes)", delay_us, path, now.size);
    CHECK_OK(ffnn_checkpoint_load(path, NULL, &info));
    CHECK(info.step == (is_old ? 2u : 3u), "step %zu", info.step);
    *saw_old += is_old;
    return TEST_PASS;
}

/* What a killed writer saves: trainer's checkpoint to path. */
struct save_job {
    ffnn_trainer *trainer;
    const char *path;
};
static void save_checkpoint_job(void *arg)
{
    const struct save_job *j = arg;
    ffnn_trainer_save_checkpoint(j->trainer, j->path);
}

/* RELIABILITY fault 1: a process killed (SIGKILL) while writing a checkpoint
 * leaves the previous checkpoint, bit-identical and loadable, or the complete
 * new one. Each round puts the previous checkpoint (step 2) back, forks a
 * child that saves the step-3 checkpoint (8 MB) over it again and again, and
 * kills the child after a delay. */
TEST_DIR_CASE("checkpoint_killed_while_saving", "ck", killed_while_saving)
{
    static const int delays_us[] = {300, 1000, 2500, 5000, 10000, 20000, 40000, 80000, 150000,
                                    300000};
    char fresh_path[512];
    fault_run run;
    blob old = {NULL, 0}, fresh = {NULL, 0};
    test_result r = TEST_PASS;
    int saw_old = 0, torn = 0;

    UNUSED_WHY();
    snprintf(fresh_path, sizeof fresh_path, "%s/fresh.ckpt", dir);
    CHECK_PASS(fault_run_start(&run, dir, 256, "784-640relu-640relu-10", 2));
    CHECK_OK(ffnn_trainer_save_checkpoint(run.t, run.path));
    double loss;
    CHECK_OK(ffnn_trainer_step(run.t, &loss));
    CHECK_OK(ffnn_trainer_save_checkpoint(run.t, fresh_path));
    CHECK(test_read_file(run.path, &old) == 0 && test_read_file(fresh_path, &fresh) == 0,
          "cannot read back");
    remove(fresh_path);
    CHECK(old.size > 8000000, "checkpoint of %zu bytes: expected a large one", old.size);
    for (size_t i = 0; i < sizeof delays_us / sizeof delays_us[0] && r == TEST_PASS; i++) {
        if (test_write_file(run.path, old.data, old.size) != 0) {
            r = TEST_FAIL, fprintf(stderr, "    cannot restore %s\n", run.path);
            break;
        }
        struct save_job job = {run.t, run.path};
        if (test_kill_writer(save_checkpoint_job, &job, delays_us[i]) != 0) {
            r = TEST_FAIL, fprintf(stderr, "    fork: %s\n", strerror(errno));
            break;
        }
        r = expect_old_or_new(run.path, &old, &fresh, delays_us[i], &saw_old);
        torn += remove_temporaries(dir); /* a kill during a write leaves one */
    }
    if (r == TEST_PASS) {
        /* what is there resumes */
        ffnn_model *m2 = NULL;
        ffnn_trainer *t2 = NULL;
        ffnn_status st = trainer_after("784-640relu-640relu-10", run.data, 0, &m2, &t2);
        if (st == FFNN_OK)
            st = ffnn_trainer_resume(t2, run.path);
        if (st != FFNN_OK)
            r = TEST_FAIL, fprintf(stderr, "    resume after the kills: %s\n", ffnn_last_error());
        TEST_FREE(t2, m2);
        printf("     %zu kills (%d during a write): the previous checkpoint survived %d times, "
               "the new one was complete otherwise\n", sizeof delays_us / sizeof delays_us[0],
               torn, saw_old);
    }
    free(old.data);
    free(fresh.data);
    TEST_FREE(run.t, run.m, run.data);
    return r; /* temporary files left by the kills go with the directory */
}

/* RELIABILITY fault 2: a full disk (a 64 KiB file size limit in a child, so
 * write() fails with EFBIG part way) leaves the previous checkpoint intact. */
TEST_DIR_CASE("checkpoint_disk_full", "ck", disk_full)
{
    fault_run run;
    blob old, now;
    int status = 0;

    UNUSED_WHY();
    CHECK_PASS(fault_run_start(&run, dir, SAMPLES, ARCH, 2));
    CHECK_OK(ffnn_trainer_save_checkpoint(run.t, run.path));
    CHECK(test_read_file(run.path, &old) == 0 && old.size > 64 * 1024, "checkpoint too small");
    double loss;
    CHECK_OK(ffnn_trainer_step(run.t, &loss));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit lim = {64 * 1024, 64 * 1024};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(2);
        ffnn_status st = ffnn_trainer_save_checkpoint(run.t, run.path);
        if (VERBOSE)
            fprintf(stderr, "    [%s] %s\n", ffnn_status_name(st), ffnn_last_error());
        _exit(st == FFNN_ERR_IO && strstr(ffnn_last_error(), strerror(EFBIG)) &&
              strstr(ffnn_last_error(), run.path) ? 0 : 1);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/waitpid: %s", strerror(errno));
    CHECK(test_read_file(run.path, &now) == 0, "the previous checkpoint is gone");
    int same = test_same_blob(&old, &now);
    free(old.data);
    free(now.data);
    TEST_FREE(run.t, run.m, run.data);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child's save did not fail with EFBIG naming the file (status 0x%x)", status);
    CHECK(same, "the previous checkpoint changed");
    CHECK(test_count_entries(dir) == 1, "%d entries in %s: a temporary file was left",
          test_count_entries(dir), dir);
    return TEST_PASS;
}

/* Step callback of the NaN tests: save every step; remember the last good file. */
typedef struct saver {
    const char *path;
    blob last_good;
    ffnn_status failed;   /* status of the failed save (FFNN_OK: none) */
    char message[1024];
    int epoch;            /* where it failed */
    size_t step;
} saver;

static int save_each_step(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
{
    saver *s = user;
    (void)steps;
    ffnn_status st = ffnn_trainer_save_checkpoint(t, s->path);
    if (st != FFNN_OK) {
        s->failed = st;
        s->epoch = epoch;
        s->step = step;
        snprintf(s->message, sizeof s->message, "%s", ffnn_last_error());
        return 1;
    }
    free(s->last_good.data);
    return test_read_file(s->path, &s->last_good) != 0;
}

/* "epoch E, step S" is in message. */
static int names_position(const char *message, int epoch, size_t step)
{
    char where[64];
    snprintf(where, sizeof where, "epoch %d, step %zu:", epoch, step);
    return strstr(message, where) != NULL;
}

/* RELIABILITY fault 4, a diverging run: SGD at lr 1e3 on a linear model with
 * the mean squared error (each step multiplies the error) until the loss is
 * NaN or Inf, saving after every step. The save at the first bad step fails, naming
 * it; the file is the last good checkpoint, which loads (all finite). */
TEST_DIR_CASE("checkpoint_diverging_run_not_saved", "ck", diverging_run_not_saved)
{
    fault_run run;
    saver s;
    blob now;

    UNUSED_WHY();
    fault_run_init(&run, dir);
    memset(&s, 0, sizeof s);
    s.path = run.path;
    CHECK_FASHION(fashion_slice(0, 2000, &run.data));
    ffnn_train_config cfg = run_config(FFNN_DEVICE_CPU, FFNN_OPT_SGD);
    cfg.learning_rate = 1e3f;
    cfg.loss = FFNN_LOSS_MSE;
    CHECK_OK(ffnn_model_create("784-10", &run.m));
    CHECK_OK(ffnn_model_init(run.m, 1));
    CHECK_OK(ffnn_trainer_create(run.m, run.data, &cfg, &run.t));
    ffnn_status st = FFNN_OK;
    for (int e = 0; e < 5 && st == FFNN_OK && s.failed == FFNN_OK; e++) {
        ffnn_epoch_stats stats;
        st = ffnn_trainer_run_epoch_until(run.t, save_each_step, &s, &stats, NULL);
    }
    if (VERBOSE)
        fprintf(stderr, "    [%s] %s\n    save: %s\n", ffnn_status_name(st), ffnn_last_error(),
                s.message);
    CHECK(s.failed == FFNN_ERR_NUMERIC, "the run did not diverge, or the save failed otherwise "
          "(%s): %s", ffnn_status_name(s.failed), s.message);
    CHECK(names_position(s.message, s.epoch, s.step) && strstr(s.message, run.path),
          "the save's message does not name %s and epoch %d, step %zu: %s", run.path, s.epoch,
          s.step, s.message);
    CHECK(st == FFNN_ERR_NUMERIC && names_position(ffnn_last_error(), s.epoch, s.step),
          "the epoch returned %s: %s", ffnn_status_name(st), ffnn_last_error());
    /* a later save is refused too: the run diverged */
    st = ffnn_trainer_save_checkpoint(run.t, run.path);
    CHECK(st == FFNN_ERR_NUMERIC && names_position(ffnn_last_error(), s.epoch, s.step),
          "a later save returned %s: %s", ffnn_status_name(st), ffnn_last_error());
    CHECK(s.last_good.data != NULL, "no good checkpoint before the divergence");
    CHECK(test_read_file(run.path, &now) == 0, "the checkpoint is gone");
    int same = test_same_blob(&now, &s.last_good);
    free(now.data);
    free(s.last_good.data);
    CHECK(same, "the last good checkpoint was replaced");
    CHECK(test_count_entries(dir) == 1, "%d entries in %s", test_count_entries(dir), dir);
    ffnn_checkpoint_info info;
    CHECK_OK(ffnn_checkpoint_load(run.path, NULL, &info));
    CHECK((size_t)(info.epoch - 1) * info.steps_per_epoch + info.step ==
              (size_t)(s.epoch - 1) * info.steps_per_epoch + s.step - 1,
          "the kept checkpoint is at epoch %d step %zu, not the step before the divergence",
          info.epoch, info.step);
    printf("     lr 1e3 diverged at epoch %d, step %zu: not saved; the step before it kept\n",
           s.epoch, s.step);
    TEST_FREE(run.t, run.m, run.data);
    return TEST_PASS;
}

/* RELIABILITY fault 4, NaN in the parameters: after 3 good steps one bias of
 * the last layer becomes NaN; step 4's loss is NaN, and neither the step callback's save nor
 * a save after the epoch writes anything. Also a NaN found only at the end of
 * an epoch (no callback) blocks saving. */
TEST_DIR_CASE("checkpoint_nan_parameters_not_saved", "ck", nan_parameters_not_saved)
{
    fault_run run;
    saver s;
    blob now;
    double loss;
    ffnn_epoch_stats stats;

    UNUSED_WHY();
    memset(&s, 0, sizeof s);
    s.path = run.path;
    CHECK_PASS(fault_run_start(&run, dir, SAMPLES, ARCH, 3));
    CHECK_OK(ffnn_trainer_save_checkpoint(run.t, run.path));
    CHECK(test_read_file(run.path, &s.last_good) == 0, "cannot read the checkpoint");
    CHECK_OK(ffnn_trainer_sync_model(run.t));
    ffnn_model_bias(run.m, 1)[0] = NAN;
    CHECK_OK(ffnn_trainer_upload_model(run.t));
    ffnn_status st = ffnn_trainer_run_epoch_until(run.t, save_each_step, &s, &stats, NULL);
    CHECK(s.failed == FFNN_ERR_NUMERIC && s.epoch == 1 && s.step == 4 &&
              names_position(s.message, 1, 4),
          "save: %s at epoch %d step %zu: %s", ffnn_status_name(s.failed), s.epoch, s.step,
          s.message);
    CHECK(st == FFNN_ERR_NUMERIC && names_position(ffnn_last_error(), 1, 4), "epoch: %s: %s",
          ffnn_status_name(st), ffnn_last_error());
    st = ffnn_trainer_save_checkpoint(run.t, run.path);
    CHECK(st == FFNN_ERR_NUMERIC, "a later save: %s", ffnn_status_name(st));
    CHECK(test_read_file(run.path, &now) == 0, "the checkpoint is gone");
    int same = test_same_blob(&now, &s.last_good);
    free(now.data);
    free(s.last_good.data);
    s.last_good.data = NULL;
    CHECK(same, "the previous checkpoint was replaced");
    TEST_FREE(run.t, run.m);

    /* the NaN seen only by the epoch's single read-back */
    CHECK_OK(trainer_after(ARCH, run.data, 0, &run.m, &run.t));
    CHECK_OK(ffnn_trainer_step(run.t, &loss));
    CHECK_OK(ffnn_trainer_sync_model(run.t));
    ffnn_model_bias(run.m, 1)[2] = INFINITY;
    CHECK_OK(ffnn_trainer_upload_model(run.t));
    st = ffnn_trainer_run_epoch(run.t, NULL, NULL, &stats);
    CHECK(st == FFNN_ERR_NUMERIC && names_position(ffnn_last_error(), 1, 2), "epoch: %s: %s",
          ffnn_status_name(st), ffnn_last_error());
    st = ffnn_trainer_save_checkpoint(run.t, run.path);
    CHECK(st == FFNN_ERR_NUMERIC && names_position(ffnn_last_error(), 1, 2), "save: %s: %s",
          ffnn_status_name(st), ffnn_last_error());
    CHECK(test_read_file(run.path, &now) == 0, "the checkpoint is gone");
    free(now.data);
    CHECK(test_count_entries(dir) == 1, "%d entries in %s", test_count_entries(dir), dir);
    TEST_FREE(run.t, run.m, run.data);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- refusals */

/* Resuming path in a trainer of arch/cfg/data must fail with want and a
 * message holding each needle. */
static test_result expect_refused(const char *path, const char *arch, const ffnn_dataset *data,
                                  const ffnn_train_config *cfg, ffnn_status want,
                                  const char *n1, const char *n2, const char *n3)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    int epoch = -1;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_trainer_create(m, data, cfg, &t));
    ffnn_status st = ffnn_trainer_resume(t, path);
    const char *msg = ffnn_last_error();
    if (VERBOSE)
        fprintf(stderr, "    [%s] %s\n", ffnn_status_name(st), msg);
    ffnn_trainer_position(t, &epoch, NULL);
    TEST_FREE(t, m);
    CHECK(st == want, "status %s, expected %s: %s", ffnn_status_name(st), ffnn_status_name(want),
          msg);
    CHECK((!n1 || strstr(msg, n1)) && (!n2 || strstr(msg, n2)) && (!n3 || strstr(msg, n3)),
          "message lacks '%s' / '%s' / '%s': %s", n1 ? n1 : "", n2 ? n2 : "", n3 ? n3 : "", msg);
    CHECK(epoch == 0, "a refused resume moved the trainer to epoch %d", epoch);
    return TEST_PASS;
}

/* A checkpoint resumed with another setting, architecture or data: refused,
 * naming the setting and both values, with the trainer unchanged. */
TEST_DIR_CASE("checkpoint_resume_mismatch_refused", "ck", resume_mismatch_refused)
{
    char path[512], model_path[512];
    ffnn_dataset *data = NULL, *fewer = NULL, *other = NULL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    double loss;

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/run.ckpt", dir);
    snprintf(model_path, sizeof model_path, "%s/model.safetensors", dir);
    CHECK(fashion_slice(0, SAMPLES, &data) == FFNN_OK && fashion_slice(0, SAMPLES - 1, &fewer) ==
              FFNN_OK && fashion_slice(1, SAMPLES, &other) == FFNN_OK,
          "Fashion-MNIST missing: %s", ffnn_last_error());
    ffnn_train_config cfg = run_config(FFNN_DEVICE_CPU, FFNN_OPT_MOMENTUM);
    CHECK_OK(ffnn_model_create(ARCH, &m));
    CHECK_OK(ffnn_model_init(m, 1));
    CHECK_OK(ffnn_trainer_create(m, data, &cfg, &t));
    CHECK_OK(ffnn_trainer_step(t, &loss));
    CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, model_path));
    TEST_FREE(t, m);

    ffnn_train_config c = cfg;
    c.learning_rate = 0.05f;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "learning_rate",
                              "0.02", "0.05"));
    c = cfg, c.momentum = 0.8f;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "momentum", "0.9",
                              "0.8"));
    c = cfg, c.nesterov = 0;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "nesterov", "on",
                              "off"));
    c = cfg, c.batch_size = 32;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "batch_size", "64",
                              "32"));
    c = cfg, c.seed = 8;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "seed", "7", "8"));
    c = cfg, c.shuffle = 0;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "shuffle", "on",
                              "off"));
    c = cfg, c.optimizer = FFNN_OPT_ADAM, c.nesterov = 0;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "optimizer",
                              "momentum", "adam"));
    c = cfg, c.loss = FFNN_LOSS_MSE;
    CHECK_PASS(expect_refused(path, ARCH, data, &c, FFNN_ERR_INVALID_ARGUMENT, "loss", "ce",
                              "mse"));
    CHECK_PASS(expect_refused(path, "784-32relu-10:nobias", data, &cfg, FFNN_ERR_INVALID_ARGUMENT,
                              "architecture", ARCH, "784-32relu-10:nobias"));
    CHECK_PASS(expect_refused(path, ARCH, fewer, &cfg, FFNN_ERR_INVALID_ARGUMENT, "sample count",
                              "1000", "999"));
    CHECK_PASS(expect_refused(path, ARCH, other, &cfg, FFNN_ERR_INVALID_ARGUMENT, "CRC-32", NULL,
                              NULL));
    CHECK_PASS(expect_refused(model_path, ARCH, data, &cfg, FFNN_ERR_FORMAT, model_path,
                              "\"ffnn-checkpoint\"", "a model file"));
    ffnn_model *as_model = NULL; /* a checkpoint is not a model file: say what it is */
    ffnn_status st = ffnn_model_load(path, &as_model, NULL);
    CHECK(st == FFNN_ERR_FORMAT && as_model == NULL &&
              strstr(ffnn_last_error(), "ffnn_checkpoint_load"),
          "loading a checkpoint as a model: %s: %s", ffnn_status_name(st), ffnn_last_error());
    snprintf(model_path, sizeof model_path, "%s/none.ckpt", dir);
    CHECK_PASS(expect_refused(model_path, ARCH, data, &cfg, FFNN_ERR_IO, model_path,
                              "No such file", NULL));
    TEST_FREE(data, fewer, other);
    return TEST_PASS;
}

/* Replace the first `from` in b's header by `to` (same length); 0 if found. */
static int patch_header(blob *b, const char *from, const char *to)
{
    size_t n = strlen(from);
    uint64_t header = 0;
    for (int i = 7; i >= 0; i--)
        header = header << 8 | b->data[i];
    for (size_t i = 8; i + n <= 8 + header && i + n <= b->size; i++)
        if (memcmp(b->data + i, from, n) == 0) {
            memcpy(b->data + i, to, n);
            return 0;
        }
    return -1;
}

/* Replace the first `from` in b's header by `to` of any length ("" removes it):
 * the header is padded again with spaces to a multiple of 8 bytes and its length
 * rewritten (the data offsets count from the data section: unchanged). 0 if found. */
static int edit_header(blob *b, const char *from, const char *to)
{
    uint64_t header = 0;
    for (int i = 7; i >= 0; i--)
        header = header << 8 | b->data[i];
    const char *text = (const char *)b->data + 8;
    size_t n = strlen(from), at = 0, body = (size_t)header;
    while (at + n <= body && memcmp(text + at, from, n) != 0)
        at++;
    if (at + n > body)
        return -1;
    while (body > 0 && text[body - 1] == ' ')
        body--;
    size_t new_body = body - n + strlen(to), new_header = (new_body + 7) / 8 * 8;
    size_t data = b->size - 8 - (size_t)header;
    uint8_t *out = malloc(8 + new_header + data);
    if (!out)
        return -1;
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)new_header >> (8 * i));
    memcpy(out + 8, text, at);
    memcpy(out + 8 + at, to, strlen(to));
    memcpy(out + 8 + at + strlen(to), text + at + n, body - at - n);
    memset(out + 8 + new_body, ' ', new_header - new_body);
    memcpy(out + 8 + new_header, b->data + 8 + header, data);
    free(b->data);
    b->data = out;
    b->size = 8 + new_header + data;
    return 0;
}

/* Write good with a change, then expect ffnn_checkpoint_load to refuse it. */
static test_result expect_tampered(const char *dir, const blob *good, const char *from,
                                   const char *to, size_t truncate_to, long poke_from_end,
                                   const char *n1, const char *n2)
{
    char path[512];
    blob b = {malloc(good->size), good->size};
    ffnn_model *m = (ffnn_model *)&b; /* a sentinel: must stay untouched */
    ffnn_checkpoint_info info;
    CHECK(b.data != NULL, "out of memory");
    memcpy(b.data, good->data, good->size);
    snprintf(path, sizeof path, "%s/tampered.ckpt", dir);
    int ok = !from || (strlen(from) == strlen(to) ? patch_header(&b, from, to)
                                                   : edit_header(&b, from, to)) == 0;
    if (poke_from_end)
        memset(b.data + b.size - (size_t)poke_from_end, 0xFF, 4); /* a NaN */
    if (truncate_to)
        b.size = truncate_to;
    ok = ok && test_write_file(path, b.data, b.size) == 0;
    free(b.data);
    CHECK(ok, "cannot craft %s (is '%s' in the header?)", path, from ? from : "");
    ffnn_status st = ffnn_checkpoint_load(path, &m, &info);
    if (VERBOSE)
        fprintf(stderr, "    [%s] %s\n", ffnn_status_name(st), ffnn_last_error());
    CHECK(st == FFNN_ERR_FORMAT, "status %s: %s", ffnn_status_name(st), ffnn_last_error());
    CHECK(m == (ffnn_model *)&b, "*model was changed on error");
    CHECK(strstr(ffnn_last_error(), path) && (!n1 || strstr(ffnn_last_error(), n1)) &&
              (!n2 || strstr(ffnn_last_error(), n2)),
          "message lacks the file, '%s' or '%s': %s", n1 ? n1 : "", n2 ? n2 : "",
          ffnn_last_error());
    return TEST_PASS;
}

/* Tampered and truncated checkpoints are refused with FFNN_ERR_FORMAT. */
TEST_DIR_CASE("checkpoint_tampered_refused", "ck", tampered_refused)
{
    fault_run run;
    blob good;
    ffnn_checkpoint_info info;

    UNUSED_WHY();
    /* adam, lr 0.002, beta2 0.99 */
    CHECK_PASS(fault_run_start(&run, dir, SAMPLES, ARCH, 5));
    CHECK_OK(ffnn_trainer_save_checkpoint(run.t, run.path));
    TEST_FREE(run.t, run.m, run.data);
    CHECK_OK(ffnn_checkpoint_load(run.path, &run.m, &info));
    CHECK(info.epoch == 1 && info.step == 5 && info.steps_per_epoch == SPE &&
              info.optimizer_steps == 5 && info.train_count == SAMPLES &&
              info.cfg.optimizer == FFNN_OPT_ADAM && info.cfg.learning_rate == 2e-3f &&
              info.cfg.beta2 == 0.99f && info.cfg.batch_size == BATCH && info.cfg.seed == 7 &&
              strcmp(info.ffnn_version, FFNN_VERSION) == 0,
          "info: epoch %d step %zu", info.epoch, info.step);
    ffnn_model_free(run.m);
    CHECK(test_read_file(run.path, &good) == 0, "cannot read %s", run.path);
    test_result r = TEST_PASS;
    struct { const char *from, *to, *n1, *n2; } cases[] = {
        {"\"step\":\"5\"", "\"step\":\"6\"", "optimizer_steps 5", "expected 6"},
        {"\"format\":\"ffnn-checkpoint\"", "\"format\":\"ffnn-checkpoinX\"", "format", NULL},
        {"\"beta2\":\"0.99\"", "\"beta2\":\"nan0\"", "beta2", "finite"},
        {"\"beta2\":\"0.99\"", "\"betaX\":\"0.99\"", "unknown key \"betaX\"", NULL},
        {"\"batch_size\":\"64\"", "\"batch_size\":\"6x\"", "batch_size", "decimal integer"},
        {"\"steps_per_epoch\":\"16\"", "\"steps_per_epoch\":\"17\"", "steps_per_epoch 17", NULL},
        {"\"optimizer\":\"adam\"", "\"optimizer\":\"sgd \"", "optimizer", NULL},
        {"\"shuffle\":\"true\"", "\"shuffle\":\"True\"", "shuffle", "\"true\" or \"false\""},
        {"exp_avg_sq", "exp_avg_sX", "unexpected tensor", "exp_avg_sX"},
        {"\"train.step_losses\"", "\"train.step_lossez\"", "train.step_lossez", NULL},
        {"\"arch\":\"784-32relu-10\"", "\"arch\":\"784-32relu-11\"", "shape", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && r == TEST_PASS; i++)
        r = expect_tampered(dir, &good, cases[i].from, cases[i].to, 0, 0, cases[i].n1,
                            cases[i].n2);
    if (r == TEST_PASS)
        r = expect_tampered(dir, &good, NULL, NULL, good.size - 3, 0, "truncated", NULL);
    if (r == TEST_PASS) /* the last float: exp_avg_sq of layers.1.bias */
        r = expect_tampered(dir, &good, NULL, NULL, 0, 4, "layers.1.bias.exp_avg_sq",
                            "finite");
    free(good.data);
    return r;
}

/* ---------------------------------------------------------------- the CLI */

/* Run the CLI with args, stdout and stderr into dir/name.out; exit status. */
static int run_cli(const char *dir, const char *name, const char *const *args)
{
    char out[512];
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    return cli_run(args, out, NULL);
}

/* needle occurs in b. */
static int contains(const blob *b, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= b->size; i++)
        if (memcmp(b->data + i, needle, n) == 0)
            return 1;
    return 0;
}

/* The data rows of a --log-steps CSV (the header line dropped). */
static int csv_rows(const char *path, blob *rows)
{
    if (test_read_file(path, rows) != 0)
        return -1;
    uint8_t *nl = memchr(rows->data, '\n', rows->size);
    if (!nl)
        return -1;
    size_t skip = (size_t)(nl - rows->data) + 1;
    memmove(rows->data, rows->data + skip, rows->size - skip);
    rows->size -= skip;
    return 0;
}

/* ffnn train --strategy STRATEGY stopped by --max-steps in epoch 2 with
 * --checkpoint, then resumed with only --resume (every setting from the
 * checkpoint; the strategy, which it does not record, given again), logs the same
 * steps and saves the same model file, byte for byte, as the run that never
 * stopped; a flag that contradicts the checkpoint is refused. */
static test_result cli_resume_with(const char *dir, const char *strategy, char *why,
                                   size_t why_size)
{
    char p[6][512];
    const char *names[6] = {"full.csv", "full.safetensors", "a.csv", "b.csv", "run.ckpt",
                            "resumed.safetensors"};
    if (access(CLI, X_OK) != 0)
        SKIP("%s not built (run from the repository root after make, or set FFNN_BIN)", CLI);
    if (access(FASHION "/train-images-idx3-ubyte.gz", R_OK) != 0)
        SKIP("Fashion-MNIST missing: apt-get install dataset-fashion-mnist");
    for (int i = 0; i < 6; i++)
        snprintf(p[i], sizeof p[i], "%s/%s", dir, names[i]);
#define COMMON "train", "--data", FASHION, "--device", "cpu", "--train-limit", "600", "--arch", \
               "784-16relu-10", "--epochs", "2", "--optimizer", "momentum", "--lr", "0.05",   \
               "--seed", "4", "--strategy", strategy
    const char *full[] = {COMMON, "--log-steps", p[0], "--save", p[1], NULL};
    const char *part[] = {COMMON, "--log-steps", p[2], "--max-steps", "13", "--checkpoint", p[4],
                          "--checkpoint-every", "4", NULL};
    const char *rest[] = {"train", "--data", FASHION, "--device", "cpu", "--resume", p[4],
                          "--log-steps", p[3], "--save", p[5], "--strategy", strategy, NULL};
    const char *contra[] = {"train", "--data", FASHION, "--device", "cpu", "--resume", p[4],
                            "--lr", "0.1", NULL};
#undef COMMON
    CHECK(run_cli(dir, "full", full) == 0, "the uninterrupted run failed (see %s/full.out)", dir);
    CHECK(run_cli(dir, "part", part) == 0, "the run with --max-steps failed");
    ffnn_checkpoint_info info;
    CHECK_OK(ffnn_checkpoint_load(p[4], NULL, &info));
    CHECK(info.epoch == 2 && info.step == 3, "the checkpoint is at epoch %d, step %zu; expected "
          "2, 3 (--max-steps 13, 10 steps per epoch)", info.epoch, info.step);
    CHECK(run_cli(dir, "rest", rest) == 0, "the resumed run failed");
    CHECK(run_cli(dir, "contra", contra) == 1, "--lr 0.1 against the checkpoint's 0.05 was "
          "not refused");
    blob contra_out, a, b, whole;
    char out[512];
    snprintf(out, sizeof out, "%s/contra.out", dir);
    CHECK(test_read_file(out, &contra_out) == 0, "no output");
    int named = contains(&contra_out, "--lr 0.1 disagrees with the checkpoint's "
                         "learning_rate 0.05");
    free(contra_out.data);
    CHECK(named, "the refusal does not name --lr, 0.1 and learning_rate 0.05");
    CHECK(csv_rows(p[0], &whole) == 0 && csv_rows(p[2], &a) == 0 && csv_rows(p[3], &b) == 0,
          "cannot read the step logs");
    int same_log = a.size + b.size == whole.size && memcmp(whole.data, a.data, a.size) == 0 &&
                   memcmp(whole.data + a.size, b.data, b.size) == 0;
    free(whole.data), free(a.data), free(b.data);
    CHECK(same_log, "the step logs of the stopped and resumed runs are not the uninterrupted "
          "run's");
    int same_model = test_same_files(p[1], p[5]);
    CHECK(same_model >= 0, "cannot read the models");
    CHECK(same_model, "the resumed run's model file differs from the uninterrupted run's");
    return TEST_PASS;
}

TEST_DIR_CASE("checkpoint_cli_resume", "ck", cli_resume)
{
    return cli_resume_with(dir, "auto", why, why_size);
}

/* The same with --strategy tune: on the cpu it is auto (the OpenMP backend),
 * nothing is measured (no "tune:" line), and the resumed run (which would tune
 * again on cuda) continues bit for bit. */
TEST_DIR_CASE("checkpoint_cli_resume_tune", "ck", cli_resume_tune)
{
    test_result r = cli_resume_with(dir, "tune", why, why_size);
    if (r != TEST_PASS)
        return r;
    char out[512];
    blob full;
    snprintf(out, sizeof out, "%s/full.out", dir);
    CHECK(test_read_file(out, &full) == 0, "no output");
    int omp = contains(&full, "device: cpu (omp"), note = contains(&full, "tune:");
    free(full.data);
    CHECK(omp, "--strategy tune --device cpu did not run the OpenMP backend (see %s)", out);
    CHECK(!note, "--strategy tune printed a measurement on the cpu (see %s)", out);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- early stopping */

/* 200 noisy samples of 3 features in [-1, 1) and two classes (1 when u0 + 0.6 u3 >
 * 0.8, u3 a hidden draw: the noisy CSV of test_tabular.c's early-stopping tests), the
 * first 150 to train on (*train) and the last 50 to validate (*val). */
static ffnn_status noisy_sets(ffnn_dataset **train, ffnn_dataset **val)
{
    float x[200 * 3];
    int32_t y[200];
    uint64_t s = 12345;
    for (int i = 0; i < 200; i++) {
        double r[4];
        y[i] = test_noisy_row(&s, r);
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = (float)(2.0 * r[k] - 1.0);
    }
    ffnn_dataset *all = NULL;
    ffnn_status st = ffnn_dataset_from_arrays(200, 3, x, y, 0, NULL, &all);
    if (st == FFNN_OK && (st = ffnn_dataset_slice(all, 0, 150, train)) == FFNN_OK &&
        (st = ffnn_dataset_slice(all, 150, 50, val)) != FFNN_OK)
        ffnn_dataset_free(*train);
    ffnn_dataset_free(all);
    return st;
}

enum { ES_EPOCHS = 100, ES_PATIENCE = 3 };
#define ES_ARCH "3-32relu-2"

/* Early stopping with patience ES_PATIENCE on the cpu reference: sgd, or (ema)
 * momentum with EMA weights, whose copy the best epoch keeps. */
static ffnn_train_config es_config(int ema)
{
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.batch_size = 8;
    cfg.seed = 5;
    cfg.epochs = ES_EPOCHS;
    cfg.learning_rate = 0.1f;
    cfg.steps_per_launch = 1;
    cfg.early_stopping = ES_PATIENCE;
    if (ema) {
        cfg.optimizer = FFNN_OPT_MOMENTUM;
        cfg.learning_rate = 0.1f;
        cfg.ema_decay = 0.8f;
    }
    return cfg;
}

/* A fresh model (initialised from seed) and its trainer with validation set val. */
static test_result es_trainer(const ffnn_dataset *train, const ffnn_dataset *val,
                              const ffnn_train_config *cfg, uint64_t seed, ffnn_model **m,
                              ffnn_trainer **t)
{
    CHECK_OK(ffnn_model_create(ES_ARCH, m));
    CHECK_OK(ffnn_model_init(*m, seed));
    CHECK_OK(ffnn_trainer_create(*m, train, cfg, t));
    CHECK_OK(ffnn_trainer_set_validation(*t, val));
    return TEST_PASS;
}

/* The run step of the trainer's position. */
static size_t es_done(const ffnn_trainer *t)
{
    int epoch;
    size_t step;
    ffnn_trainer_position(t, &epoch, &step);
    return epoch == 0 ? 0 : (size_t)(epoch - 1) * ffnn_trainer_steps_per_epoch(t) + step;
}

/* Train as ffnn train does: epochs until patience runs out (*stopped = 1), the
 * last epoch, or run step `until` (0: no such stop). */
static test_result es_run(ffnn_trainer *t, size_t until, int *stopped)
{
    const size_t spe = ffnn_trainer_steps_per_epoch(t);
    *stopped = 0;
    for (;;) {
        CHECK_OK(ffnn_trainer_early_stopping(t, NULL, NULL, stopped));
        if (*stopped || (until && es_done(t) >= until) || es_done(t) >= ES_EPOCHS * spe)
            return TEST_PASS;
        ffnn_epoch_stats stats;
        int finished = -1;
        CHECK_OK(ffnn_trainer_run_epoch_until(t, until ? stop_at : NULL, &until, &stats,
                                              &finished));
        CHECK(!finished || !isnan(stats.val_loss), "epoch %d: no validation loss", stats.epoch);
    }
}

/* What a run ended with: the epoch it stopped after, the best epoch, its
 * validation loss and the weights restored. */
typedef struct es_outcome {
    int stop_epoch, best_epoch;
    double best_loss;
    float *best; /* [parameter_count] malloc'd */
} es_outcome;

static test_result es_finish(ffnn_trainer *t, ffnn_model *m, es_outcome *o)
{
    int stopped;
    size_t n = ffnn_model_parameter_count(m);
    CHECK_PASS(es_run(t, 0, &stopped));
    CHECK(stopped, "patience never ran out in %d epochs", ES_EPOCHS);
    ffnn_trainer_position(t, &o->stop_epoch, NULL);
    CHECK_OK(ffnn_trainer_early_stopping(t, &o->best_epoch, &o->best_loss, NULL));
    CHECK_OK(ffnn_trainer_restore_best(t));
    const float *p = ffnn_model_parameters(m);
    CHECK(p && (o->best = malloc(n * sizeof *o->best)) != NULL, "parameters");
    memcpy(o->best, p, n * sizeof *o->best);
    return TEST_PASS;
}

/* Stop at run step k, save, throw the trainer away, resume a fresh one and run to
 * the stop: the stop epoch, best epoch, its loss and the restored weights are the
 * uninterrupted run's (ref), bit for bit; saving right after resuming writes the
 * same bytes. */
static test_result es_resume_at(const char *dir, const ffnn_dataset *train,
                                const ffnn_dataset *val, const ffnn_train_config *cfg, size_t k,
                                const es_outcome *ref)
{
    char path[512], again[512];
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    es_outcome got = {0, 0, 0.0, NULL};
    int stopped;
    snprintf(path, sizeof path, "%s/es.ckpt", dir);
    snprintf(again, sizeof again, "%s/es-again.ckpt", dir);
    if (es_trainer(train, val, cfg, 3, &m, &t) != TEST_PASS || es_run(t, k, &stopped) != TEST_PASS)
        return TEST_FAIL;
    CHECK(es_done(t) == k, "stopped at run step %zu, expected %zu", es_done(t), k);
    CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
    TEST_FREE(t, m);
    CHECK_PASS(es_trainer(train, val, cfg, 99, &m, &t));
    CHECK_OK(ffnn_trainer_resume(t, path));
    CHECK(es_done(t) == k, "resumed at run step %zu, expected %zu", es_done(t), k);
    CHECK_OK(ffnn_trainer_save_checkpoint(t, again));
    int same = test_same_files(path, again);
    CHECK(same >= 0, "read checkpoints");
    CHECK(same, "k %zu: saving right after resuming wrote other bytes", k);
    test_result r = es_finish(t, m, &got);
    size_t n = ffnn_model_parameter_count(m);
    TEST_FREE(t, m);
    if (r == TEST_PASS) {
        same = memcmp(got.best, ref->best, n * sizeof *got.best) == 0;
        free(got.best);
        got.best = NULL;
        CHECK(got.stop_epoch == ref->stop_epoch && got.best_epoch == ref->best_epoch,
              "resumed at run step %zu: stopped after epoch %d, best %d; uninterrupted: %d, "
              "%d", k, got.stop_epoch, got.best_epoch, ref->stop_epoch, ref->best_epoch);
        CHECK(memcmp(&got.best_loss, &ref->best_loss, sizeof got.best_loss) == 0,
              "resumed at run step %zu: best loss %.17g, uninterrupted %.17g", k, got.best_loss,
              ref->best_loss);
        CHECK(same, "resumed at run step %zu: the restored weights differ", k);
    }
    free(got.best);
    return r;
}

/* Early stopping survives an interruption (RELIABILITY: resume gives the run
 * that never stopped): a run stopped at step k, checkpointed and resumed in a
 * fresh model and trainer stops after the same epoch with the same best epoch,
 * validation loss and restored weights (memcmp) as the run that never stopped -
 * cut before the best epoch, after it (mid-epoch and at an epoch's end, patience
 * not run out) and at the end of the epoch that stops; sgd, and momentum with
 * EMA (the best epoch keeps the EMA weights). */
TEST_DIR_CASE("checkpoint_early_stopping_resume_exact", "ck", early_stopping_resume_exact)
{
    ffnn_dataset *train = NULL, *val = NULL;
    UNUSED_WHY();
    CHECK_OK(noisy_sets(&train, &val));
    test_result r = TEST_PASS;
    for (int ema = 0; ema <= 1 && r == TEST_PASS; ema++) {
        ffnn_train_config cfg = es_config(ema);
        ffnn_model *m = NULL;
        ffnn_trainer *t = NULL;
        es_outcome ref = {0, 0, 0.0, NULL};
        size_t spe = 0;
        if ((r = es_trainer(train, val, &cfg, 3, &m, &t)) == TEST_PASS) {
            spe = ffnn_trainer_steps_per_epoch(t);
            r = es_finish(t, m, &ref);
        }
        TEST_FREE(t, m);
        if (r == TEST_PASS && !(ref.best_epoch >= 2 && ref.stop_epoch == ref.best_epoch +
                                ES_PATIENCE)) {
            fprintf(stderr, "    the uninterrupted run: best epoch %d, stopped after %d: "
                    "expected a best epoch >= 2 and %d epochs of patience\n", ref.best_epoch,
                    ref.stop_epoch, ES_PATIENCE);
            r = TEST_FAIL;
        }
        const size_t b = (size_t)ref.best_epoch;
        const size_t cuts[] = {(b - 1) * spe + 2, b * spe + spe / 2, (b + 1) * spe,
                               (size_t)ref.stop_epoch * spe};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0] && r == TEST_PASS; i++)
            r = es_resume_at(dir, train, val, &cfg, cuts[i], &ref);
        if (r == TEST_PASS)
            printf("     %s: best epoch %d (val_loss %.6g), stopped after epoch %d; resumed "
                   "at run steps %zu, %zu, %zu, %zu: the same stop, best epoch and weights\n",
                   ema ? "momentum + ema" : "sgd", ref.best_epoch, ref.best_loss,
                   ref.stop_epoch, cuts[0], cuts[1], cuts[2], cuts[3]);
        free(ref.best);
    }
    TEST_FREE(train, val);
    return r;
}

/* A checkpoint of the sgd early-stopping run (es_config) at run step k into path;
 * *best_epoch and *seen: its best epoch and the last epoch early stopping saw. */
static test_result es_checkpoint(const char *path, const ffnn_dataset *train,
                                 const ffnn_dataset *val, const ffnn_train_config *cfg, size_t k,
                                 int *best_epoch, int *seen)
{
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    int stopped;
    size_t step;
    if (es_trainer(train, val, cfg, 3, &m, &t) != TEST_PASS || es_run(t, k, &stopped) != TEST_PASS)
        return TEST_FAIL;
    CHECK(!stopped && es_done(t) == k, "run step %zu, stopped %d", es_done(t), stopped);
    CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
    CHECK_OK(ffnn_trainer_early_stopping(t, best_epoch, NULL, NULL));
    ffnn_trainer_position(t, seen, &step);
    if (step < ffnn_trainer_steps_per_epoch(t))
        --*seen; /* the epoch in progress is not seen yet */
    TEST_FREE(t, m);
    return TEST_PASS;
}

/* Early stopping's keys and tensors, malformed or inconsistent, are refused
 * (FFNN_ERR_FORMAT naming the file and the key or tensor) before anything is
 * allocated or changed: a best epoch after the last epoch seen, a last epoch seen
 * after the position, a NaN or infinite best loss, "inf" with a best epoch, a
 * finite one without, patience 0, the state without the patience or the other
 * way round, a missing key, best weights without "early_stopping" or without a
 * best epoch, a wrong shape, an unknown layer, a NaN weight. */
TEST_DIR_CASE("checkpoint_early_stopping_malformed_refused", "ck", early_stopping_malformed_refused)
{
    char path[512], key[4][96], bad[3][96], comma[3][104]; /* comma: a key and its ',' */
    ffnn_dataset *train = NULL, *val = NULL;
    blob good;
    int best = 0, seen = 0;
    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/es.ckpt", dir);
    CHECK_OK(noisy_sets(&train, &val));
    ffnn_train_config cfg = es_config(0);
    /* mid-epoch, two epochs after the best (best 8 < seen 9 < epoch 10) */
    const size_t spe = (150 + cfg.batch_size - 1) / cfg.batch_size;
    CHECK_PASS(es_checkpoint(path, train, val, &cfg, 9 * spe + 4, &best, &seen));
    CHECK(best > 0 && seen > best, "best epoch %d, last seen %d", best, seen);
    CHECK(test_read_file(path, &good) == 0, "cannot read %s", path);
    /* the keys as written, and other values */
    snprintf(key[0], sizeof key[0], "\"early_stopping_best_epoch\":\"%d\"", best);
    snprintf(bad[0], sizeof bad[0], "\"early_stopping_best_epoch\":\"%d\"", seen + 1);
    snprintf(key[1], sizeof key[1], "\"early_stopping_epoch\":\"%d\"", seen);
    snprintf(bad[1], sizeof bad[1], "\"early_stopping_epoch\":\"%d\"", seen + 1);
    snprintf(key[2], sizeof key[2], "\"early_stopping\":\"%d\",", ES_PATIENCE);
    snprintf(bad[2], sizeof bad[2], "\"early_stopping_best_epoch\":\"0\"");
    const char *loss = strstr((const char *)good.data + 8, "\"early_stopping_best_loss\":\"");
    CHECK(loss, "no early_stopping_best_loss in the header");
    size_t loss_len = strcspn(loss + 28, "\"") + 29;
    CHECK(loss_len < sizeof key[3], "a long best loss");
    memcpy(key[3], loss, loss_len);
    key[3][loss_len] = '\0';
    snprintf(comma[0], sizeof comma[0], "%s,", key[3]);
    /* from -> to (NULL: the header as written), poke: a NaN as the last float */
    struct { const char *from, *to; long poke; const char *n1, *n2; } cases[] = {
        {key[0], bad[0], 0, "\"early_stopping_best_epoch\"", "at most"},
        {key[1], bad[1], 0, "\"early_stopping_epoch\"", "at most"},
        {key[3], "\"early_stopping_best_loss\":\"nan\"", 0, "\"early_stopping_best_loss\"",
         "finite"},
        {key[3], "\"early_stopping_best_loss\":\"-inf\"", 0, "\"early_stopping_best_loss\"",
         "finite"},
        {key[3], "\"early_stopping_best_loss\":\"inf\"", 0, "\"early_stopping_best_loss\"",
         "finite"},
        {key[0], bad[2], 0, "\"early_stopping_best_loss\"", "expected \"inf\""},
        {key[2], "\"early_stopping\":\"0\",", 0, "\"early_stopping\"", "patience"},
        {key[2], "", 0, "\"early_stopping_epoch\"", "without \"early_stopping\""},
        {comma[0], "", 0, "missing \"early_stopping_best_loss\"", NULL},
        {"\"early_stopping.best.layers.1.bias\":{\"dtype\":\"F32\",\"shape\":[2]",
         "\"early_stopping.best.layers.1.bias\":{\"dtype\":\"F32\",\"shape\":[1,2]", 0,
         "\"early_stopping.best.layers.1.bias\"", "shape [1, 2]"},
        {"\"early_stopping.best.layers.1.bias\"", "\"early_stopping.best.layers.7.bias\"", 0,
         "\"early_stopping.best.layers.7.bias\"", "unexpected tensor"},
        {NULL, NULL, 4, "\"early_stopping.best.layers.1.bias\"", "finite"},
    };
    test_result r = TEST_PASS;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && r == TEST_PASS; i++)
        r = expect_tampered(dir, &good, cases[i].from, cases[i].to, 0, cases[i].poke,
                            cases[i].n1, cases[i].n2);
    /* the best weights without their keys, or with no best epoch */
    blob b = {malloc(good.size), good.size};
    CHECK(b.data, "out of memory");
    memcpy(b.data, good.data, good.size);
    snprintf(comma[1], sizeof comma[1], "%s,", key[0]);
    snprintf(comma[2], sizeof comma[2], "%s,", key[1]);
    CHECK(edit_header(&b, key[2], "") == 0 && edit_header(&b, comma[0], "") == 0 &&
              edit_header(&b, comma[1], "") == 0 && edit_header(&b, comma[2], "") == 0,
          "edit");
    if (r == TEST_PASS)
        r = expect_tampered(dir, &b, NULL, NULL, 0, 0, "unexpected tensor \"early_stopping.best.",
                            "without \"early_stopping\"");
    free(b.data);
    b.data = malloc(good.size), b.size = good.size;
    CHECK(b.data, "out of memory");
    memcpy(b.data, good.data, good.size);
    if (r == TEST_PASS && (edit_header(&b, key[0], bad[2]) != 0 ||
                           edit_header(&b, key[3], "\"early_stopping_best_loss\":\"inf\"") != 0))
        r = TEST_FAIL;
    if (r == TEST_PASS)
        r = expect_tampered(dir, &b, NULL, NULL, 0, 0, "unexpected tensor \"early_stopping.best.",
                            "\"early_stopping_best_epoch\" 0");
    /* resuming the malformed file: refused with the trainer unchanged */
    char tampered[512];
    snprintf(tampered, sizeof tampered, "%s/tampered.ckpt", dir);
    if (r == TEST_PASS)
        r = expect_refused(tampered, ES_ARCH, train, &cfg, FFNN_ERR_FORMAT, tampered,
                           "early_stopping_best_epoch", NULL);
    free(b.data);
    free(good.data);
    TEST_FREE(train, val);
    return r;
}

/* Checkpoints without early stopping's state - those of a run without it, the
 * format from before it (no key or tensor of it) - still resume, into a trainer
 * with early stopping too: its tracking starts with the resumed run's first
 * finished epoch. A checkpoint with the state resumes into a trainer without
 * early stopping (the state is not used) or with another patience (the best
 * epoch carries over; only the stop moves). */
TEST_DIR_CASE("checkpoint_early_stopping_old_checkpoints_resume", "ck",
              early_stopping_old_checkpoints_resume)
{
    char old_path[512], es_path[512];
    ffnn_dataset *train = NULL, *val = NULL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    ffnn_checkpoint_info info;
    blob old;
    int best = -1, seen = 0, stop = -1, epoch = 0;
    double best_loss = 0.0;
    UNUSED_WHY();
    snprintf(old_path, sizeof old_path, "%s/old.ckpt", dir);
    snprintf(es_path, sizeof es_path, "%s/es.ckpt", dir);
    CHECK_OK(noisy_sets(&train, &val));
    ffnn_train_config cfg = es_config(0), off = cfg;
    off.early_stopping = 0;
    const size_t spe = (150 + cfg.batch_size - 1) / cfg.batch_size;
    CHECK_PASS(es_checkpoint(old_path, train, val, &off, 2 * spe + 5, &best, &seen));
    CHECK(test_read_file(old_path, &old) == 0, "cannot read %s", old_path);
    stop = contains(&old, "early_stopping");
    free(old.data);
    CHECK(!stop, "a run without early stopping wrote some of its keys");
    CHECK_OK(ffnn_checkpoint_load(old_path, NULL, &info));
    CHECK(info.cfg.early_stopping == 0, "info: early_stopping %d", info.cfg.early_stopping);
    /* into a trainer with early stopping: none yet, then the first finished epoch */
    CHECK_PASS(es_trainer(train, val, &cfg, 9, &m, &t));
    CHECK_OK(ffnn_trainer_resume(t, old_path));
    CHECK_OK(ffnn_trainer_early_stopping(t, &best, &best_loss, &stop));
    CHECK(best == 0 && isnan(best_loss) && stop == 0, "after resuming: best epoch %d, loss %g, "
          "stop %d", best, best_loss, stop);
    CHECK(ffnn_trainer_restore_best(t) == FFNN_ERR_INVALID_ARGUMENT, "restored no best epoch");
    ffnn_epoch_stats stats;
    CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &stats));
    CHECK_OK(ffnn_trainer_early_stopping(t, &best, &best_loss, &stop));
    CHECK(best == 3 && best_loss == stats.val_loss && !stop, "after epoch 3: best epoch %d "
          "(loss %g, epoch's %g)", best, best_loss, stats.val_loss);
    es_outcome o = {0, 0, 0.0, NULL};
    CHECK_PASS(es_finish(t, m, &o));
    free(o.best);
    CHECK(o.best_epoch >= 3 && o.stop_epoch == o.best_epoch + ES_PATIENCE,
          "stopped after epoch %d, best %d", o.stop_epoch, o.best_epoch);
    TEST_FREE(t, m);
    /* a checkpoint with the state (best 8, seen 9) into a trainer without early
     * stopping, and into one with patience + 2 */
    CHECK_PASS(es_checkpoint(es_path, train, val, &cfg, 9 * spe + 4, &best, &seen));
    CHECK_OK(ffnn_checkpoint_load(es_path, NULL, &info));
    CHECK(info.cfg.early_stopping == ES_PATIENCE, "info: early_stopping %d",
          info.cfg.early_stopping);
    const int saved_best = best;
    CHECK_PASS(es_trainer(train, val, &off, 9, &m, &t));
    CHECK_OK(ffnn_trainer_resume(t, es_path));
    CHECK_OK(ffnn_trainer_early_stopping(t, &best, NULL, &stop));
    CHECK(best == 0 && stop == 0, "early stopping off: best epoch %d, stop %d", best, stop);
    TEST_FREE(t, m);
    ffnn_train_config longer = cfg;
    longer.early_stopping = ES_PATIENCE + 2;
    CHECK_PASS(es_trainer(train, val, &longer, 9, &m, &t));
    CHECK_OK(ffnn_trainer_resume(t, es_path));
    CHECK_OK(ffnn_trainer_early_stopping(t, &best, NULL, &stop));
    CHECK(best == saved_best && stop == 0, "patience %d: best epoch %d (saved %d)",
          longer.early_stopping, best, saved_best);
    CHECK_PASS(es_finish(t, m, &o));
    free(o.best);
    ffnn_trainer_position(t, &epoch, NULL);
    CHECK(o.stop_epoch == o.best_epoch + ES_PATIENCE + 2 && o.best_epoch >= saved_best,
          "patience %d: stopped after epoch %d, best %d", longer.early_stopping, o.stop_epoch,
          o.best_epoch);
    TEST_FREE(t, m, train, val);
    return TEST_PASS;
}
