/* test_faults.c - the fault suite (RELIABILITY.md "Faults to survive"):
 * kill -9 during model and checkpoint writes (loops), SIGINT during training and
 * during a save, a second SIGINT, a full disk and a read-only directory (through
 * the LD_PRELOAD library tests/preload/faults.c, FFNN_FAULTS_LIB: no root, tmpfs
 * or mount needed), over-long paths. Each checks: the previous file intact (or
 * the complete new one), no temporary file left (after the next save, for a
 * kill -9: the stale one is recognised and removed), a clear message. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* kill -9 of a process saving a model (8 MB) over and over, at 8 delays: the
 * target is always the previous file or the complete new one; the temporary file
 * a kill leaves is removed by the next save's stale check. */
TEST_DIR_CASE("faults_kill9_during_model_saves", "faults", kill9_during_model_saves)
{
    UNUSED_WHY();
    static const long delays_us[] = {500, 2000, 5000, 10000, 20000, 40000, 80000, 160000};
    char path[512];
    ffnn_model *old_m = NULL, *new_m = NULL;
    blob old = {NULL, 0}, fresh = {NULL, 0}, now;
    int torn = 0, saw_old = 0;
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    CHECK_OK(ffnn_model_create("784-2560relu-10", &old_m));
    CHECK_OK(ffnn_model_create("784-2560relu-10", &new_m));
    CHECK_OK(ffnn_model_init(old_m, 1));
    CHECK_OK(ffnn_model_init(new_m, 2));
    (void)ffnn_model_set_loss(new_m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(new_m, path));
    CHECK(test_read_file(path, &fresh) == 0, "read");
    (void)ffnn_model_set_loss(old_m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(old_m, path));
    CHECK(test_read_file(path, &old) == 0 && old.size > 8000000, "read");
    for (size_t i = 0; i < sizeof delays_us / sizeof delays_us[0]; i++) {
        CHECK(test_write_file(path, old.data, old.size) == 0, "restore");
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        (void)ffnn_model_set_loss(new_m, FFNN_LOSS_SOFTMAX_CE);
        if (pid == 0)
            for (;;)
                ffnn_model_save(new_m, path);
        CHECK(pid > 0, "fork");
        sleep_us(delays_us[i]);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        CHECK(test_read_file(path, &now) == 0, "%s gone after a kill at %ld us", path,
              delays_us[i]);
        int is_old = test_same_blob(&now, &old), is_new = test_same_blob(&now, &fresh);
        free(now.data);
        CHECK(is_old || is_new, "after a kill at %ld us the file is neither the old nor the "
              "new model", delays_us[i]);
        saw_old += is_old;
        torn += count_temporaries(dir);
        CHECK_OK(ffnn_check_output_path(path)); /* what the next save does first */
        CHECK(count_temporaries(dir) == 0, "the stale temporary file was not removed");
    }
    printf("     8 kills: %d left a temporary file (removed by the next save), the old model "
           "survived %d times, the new one was complete otherwise\n", torn, saw_old);
    free(old.data);
    free(fresh.data);
    TEST_FREE(old_m, new_m);
    return TEST_PASS;
}

/* The run of the checkpoint tests below: adam on 2-1024relu-1024relu-2 (1.05 M
 * parameters: 12.6 MB checkpoints), batch 1 (a step is cheap: most of the time
 * goes into the checkpoint written after every step). */
#define BIG_RUN(ck, save)                                                              \
    {"train", "--data", "synth:points:4000", "--arch", "2-1024relu-1024relu-2",       \
     "--optimizer", "adam", "--batch", "1", "--epochs", "50", "--device", "cpu",      \
     "--strategy", "reference",                                                                 \
     "--checkpoint", ck, "--checkpoint-every", "1", "--save", save, NULL}

/* The checkpoint at path loads, or is absent (killed before the first save). */
static test_result checkpoint_ok(const char *path, int may_be_absent)
{
    ffnn_checkpoint_info info;
    if (may_be_absent && access(path, F_OK) != 0)
        return TEST_PASS;
    CHECK(ffnn_checkpoint_load(path, NULL, &info) == FFNN_OK, "%s does not load: %s", path,
          ffnn_last_error());
    return TEST_PASS;
}

/* kill -9 of ffnn train while it writes a checkpoint after every step, at 6
 * delays: the checkpoint loads after each kill, and a stale temporary file is
 * removed by the next save. */
TEST_CLI_CASE("faults_kill9_during_checkpoint_writes", "faults", kill9_during_checkpoint_writes)
{
    UNUSED_WHY();
    static const int delays_ms[] = {20, 60, 120, 200, 300, 450};
    char ck[512], save[512], out[512];
    int torn = 0;
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    snprintf(save, sizeof save, "%s/m.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = BIG_RUN(ck, save);
    for (size_t i = 0; i < sizeof delays_ms / sizeof delays_ms[0]; i++) {
        cli_run_opts o = {0};
        o.signal = SIGKILL;
        o.wait_for = "arch ";
        o.delay_ms = delays_ms[i];
        int rc = cli_run(args, out, &o);
        CHECK(rc == 128 + SIGKILL, "exit %d, expected a kill (see %s)", rc, out);
        CHECK_PASS(checkpoint_ok(ck, 1));
        torn += count_temporaries(dir);
        CHECK_OK(ffnn_check_output_path(ck));
        CHECK(count_temporaries(dir) == 0, "a stale temporary file survived the next save");
    }
    printf("     6 kills of ffnn train: %d left a temporary checkpoint (removed by the next "
           "save); the checkpoint loaded every time\n", torn);
    remove(out);
    return TEST_PASS;
}

/* SIGINT during training: the step finishes, the checkpoint and the model
 * (marked interrupted) are written, the run says where it stopped and how to
 * resume, exits 130, leaves no temporary file; the resume command continues. */
TEST_CLI_CASE("faults_sigint_during_training", "faults", sigint_during_training)
{
    struct sigaction intr;
    if (sigaction(SIGINT, NULL, &intr) == 0 && intr.sa_handler == SIG_IGN)
        SKIP("SIGINT is ignored here (a background job of a shell without job control), "
             "and the CLI keeps an inherited ignore");
    char ck[512], save[512], out[512];
    ffnn_model *m = NULL;
    ffnn_model_file_info info;
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    snprintf(save, sizeof save, "%s/m.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = {"train", "--data", "synth:points:20000", "--arch", "2-256relu-2",
                          "--epochs", "50", "--device", "cpu", "--strategy", "reference",
                          "--checkpoint", ck, "--save", save, NULL};
    cli_run_opts o = {0};
    o.signal = SIGINT;
    o.wait_for = "arch "; /* the handlers are in place */
    o.delay_ms = 300;
    int rc = cli_run(args, out, &o);
    CHECK(rc == 130, "exit %d, expected 130 (see %s)", rc, out);
    CHECK(file_contains(out, "interrupted by SIGINT at epoch") &&
          file_contains(out, "resume with:") && file_contains(out, "--resume"),
          "no stop message (see %s)", out);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    CHECK_PASS(checkpoint_ok(ck, 0));
    CHECK_OK(ffnn_model_load(save, &m, &info));
    ffnn_model_free(m);
    CHECK(strstr(info.interrupted, "SIGINT at epoch"), "the model is not marked interrupted: "
          "'%s'", info.interrupted);
    /* continue: the same command with --resume and a total of 1 epoch */
    ffnn_checkpoint_info ci;
    CHECK_OK(ffnn_checkpoint_load(ck, NULL, &ci));
    char epochs[16];
    snprintf(epochs, sizeof epochs, "%d", ci.epoch);
    const char *resume[] = {"train", "--data", "synth:points:20000", "--device", "cpu",
                            "--strategy", "reference", "--resume", ck, "--epochs", epochs, NULL};
    rc = cli_run(resume, out, NULL);
    CHECK(rc == 0 && file_contains(out, "resumed from"), "resume: exit %d (see %s)", rc, out);
    remove(out);
    return TEST_PASS;
}

/* SIGINT while checkpoints of 12.6 MB are written after every step (most of the
 * run's time is in saves), at 3 delays: each run exits 130 with a checkpoint that
 * loads and no temporary file. */
TEST_CLI_CASE("faults_sigint_during_saves", "faults", sigint_during_saves)
{
    UNUSED_WHY();
    static const int delays_ms[] = {100, 250, 400};
    char ck[512], save[512], out[512];
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    snprintf(save, sizeof save, "%s/m.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = BIG_RUN(ck, save);
    for (size_t i = 0; i < sizeof delays_ms / sizeof delays_ms[0]; i++) {
        remove(ck);
        cli_run_opts o = {0};
        o.signal = SIGINT;
        o.wait_for = "arch "; /* the handlers are in place */
        o.delay_ms = delays_ms[i];
        int rc = cli_run(args, out, &o);
        CHECK(rc == 130 && file_contains(out, "interrupted by SIGINT"),
              "SIGINT at %d ms: exit %d (see %s)", delays_ms[i], rc, out);
        CHECK(count_temporaries(dir) == 0, "SIGINT at %d ms: temporary files left",
              delays_ms[i]);
        CHECK_PASS(checkpoint_ok(ck, 0));
    }
    remove(out);
    return TEST_PASS;
}

/* A second signal exits at once (no saves), removing the temporary file of the
 * save in progress; the checkpoint there is the previous one, intact. SIGINT then
 * SIGTERM 1 ms later (two SIGINTs that close would merge into one pending
 * signal; both signals go to the same handler). */
TEST_CLI_CASE("faults_second_sigint_exits_at_once", "faults", second_sigint_exits_at_once)
{
    UNUSED_WHY();
    char ck[512], save[512], out[512];
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    snprintf(save, sizeof save, "%s/m.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = BIG_RUN(ck, save);
    cli_run_opts o = {0};
    o.signal = SIGINT;
    o.wait_for = "arch "; /* the handlers are in place */
    o.delay_ms = 300;
    o.second_signal_ms = 1;
    o.second_signal = SIGTERM;
    int rc = cli_run(args, out, &o);
    CHECK(rc == 130, "exit %d (see %s)", rc, out);
    CHECK(file_contains(out, "second interrupt"), "no message for the second interrupt "
          "(see %s)", out);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    CHECK_PASS(checkpoint_ok(ck, 1));
    remove(out);
    return TEST_PASS;
}

/* The fault library's environment: FFNN_FAULTS_LIB (set by make test). */
static int faults_env(const char *setting, char *preload, size_t size, const char *env[4])
{
    const char *lib = getenv("FFNN_FAULTS_LIB");
    if (!lib || access(lib, R_OK) != 0)
        return -1;
    snprintf(preload, size, "LD_PRELOAD=%s", lib);
    env[0] = preload;
    env[1] = setting;
    env[2] = "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0";
    env[3] = NULL;
    return 0;
}

/* A full disk (write() fails with ENOSPC after 1000 bytes of a save): --save
 * and --checkpoint fail with the error, the files there before stay as they
 * were, no temporary file is left. */
TEST_CLI_CASE("faults_disk_full", "faults", disk_full)
{
    char ck[512], save[512], out[512], preload[600];
    const char *env[4];
    blob old_ck, old_m, now;
    if (faults_env("FFNN_FAULT_WRITE_BUDGET=1000", preload, sizeof preload, env) != 0)
        SKIP("FFNN_FAULTS_LIB not set or not built (make test sets it)");
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    snprintf(save, sizeof save, "%s/m.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *first[] = {"train", "--data", "synth:points:400", "--arch", "2-64relu-2",
                           "--epochs", "1", "--device", "cpu", "--checkpoint", ck, "--save",
                           save, NULL};
    CHECK(cli_run(first, out, NULL) == 0, "the first run failed (see %s)", out);
    CHECK(test_read_file(ck, &old_ck) == 0 && test_read_file(save, &old_m) == 0, "read");
    const char *second[] = {"train", "--data", "synth:points:400", "--arch", "2-64relu-2",
                            "--epochs", "2", "--seed", "5", "--device", "cpu", "--checkpoint",
                            ck, "--save", save, NULL};
    cli_run_opts o = {0};
    o.env = env;
    int rc = cli_run(second, out, &o);
    CHECK(rc == 1, "exit %d, expected 1 (see %s)", rc, out);
    CHECK(file_contains(out, strerror(ENOSPC)) && file_contains(out, ck),
          "the message names neither the error nor the file (see %s)", out);
    CHECK(test_read_file(ck, &now) == 0 && test_same_blob(&now, &old_ck), "%s changed", ck);
    free(now.data);
    CHECK(test_read_file(save, &now) == 0 && test_same_blob(&now, &old_m), "%s changed", save);
    free(now.data);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    /* --save alone */
    const char *third[] = {"train", "--data", "synth:points:400", "--arch", "2-64relu-2",
                           "--epochs", "1", "--seed", "6", "--device", "cpu", "--save", save,
                           NULL};
    rc = cli_run(third, out, &o);
    CHECK(rc == 1 && file_contains(out, strerror(ENOSPC)) && file_contains(out, save),
          "--save on a full disk: exit %d (see %s)", rc, out);
    CHECK(test_read_file(save, &now) == 0 && test_same_blob(&now, &old_m), "%s changed", save);
    free(now.data);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    free(old_ck.data);
    free(old_m.data);
    remove(out);
    return TEST_PASS;
}

/* A read-only directory (EROFS from the fault library, which root's permissions
 * cannot bypass; chmod 0555 as well): refused before training, naming the path,
 * the file there intact. */
TEST_CLI_CASE("faults_read_only_directory", "faults", read_only_directory)
{
    char ro[512], save[600], out[512], setting[600], preload[600];
    const char *env[4];
    blob old, now;
    snprintf(ro, sizeof ro, "%s/ro", dir);
    snprintf(save, sizeof save, "%s/ro/m.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(setting, sizeof setting, "FFNN_FAULT_EROFS_DIR=%s", ro);
    if (faults_env(setting, preload, sizeof preload, env) != 0)
        SKIP("FFNN_FAULTS_LIB not set or not built (make test sets it)");
    CHECK(mkdir(ro, 0755) == 0 && test_write_file(save, "previous", 8) == 0, "setup");
    CHECK(chmod(ro, 0555) == 0, "chmod");
    const char *args[] = {"train", "--data", "synth:points:400", "--epochs", "1", "--device",
                          "cpu", "--save", save, NULL};
    cli_run_opts o = {0};
    o.env = env;
    int rc = cli_run(args, out, &o);
    chmod(ro, 0755);
    CHECK(rc == 1, "exit %d (see %s)", rc, out);
    CHECK((file_contains(out, strerror(EROFS)) || file_contains(out, strerror(EACCES))) &&
          file_contains(out, save) && !file_contains(out, "epoch   1"),
          "expected a refusal before training naming %s (see %s)", save, out);
    CHECK(test_read_file(save, &now) == 0, "read");
    old.data = (uint8_t *)"previous", old.size = 8;
    CHECK(test_same_blob(&now, &old), "%s changed", save);
    free(now.data);
    CHECK(count_temporaries(ro) == 0, "temporary files left");
    remove(save);
    rmdir(ro);
    remove(out);
    return TEST_PASS;
}

/* Over-long paths: a name of 250 characters (the temporary suffix does not fit
 * NAME_MAX) and a path beyond PATH_MAX: refused before training with the reason. */
TEST_CLI_CASE("faults_overlong_paths", "faults", overlong_paths)
{
    UNUSED_WHY();
    char out[512];
    size_t n = strlen(dir) + 5000;
    char *name = malloc(strlen(dir) + 300), *deep = malloc(n + 16);
    CHECK(name && deep, "malloc");
    int k = sprintf(name, "%s/", dir);
    memset(name + k, 'n', 250);
    name[k + 250] = '\0';
    k = sprintf(deep, "%s", dir);
    while ((size_t)k < n)
        k += sprintf(deep + k, "/dddddddddd");
    strcpy(deep + k, "/m.ck");
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *paths[2] = {name, deep};
    const char *reasons[2] = {"too long", "too long"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"train", "--data", "synth:points:400", "--epochs", "1",
                              "--device", "cpu", "--checkpoint", paths[i], NULL};
        int rc = cli_run(args, out, NULL);
        CHECK(rc == 1 && file_contains(out, reasons[i]) && !file_contains(out, "epoch   1"),
              "path %d: exit %d (see %s)", i, rc, out);
    }
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    free(name);
    free(deep);
    remove(out);
    return TEST_PASS;
}
