/* test_hardening.c - one regression test per defect the hardening review found (memory safety,
 * limits before allocation, interrupts, file handling; docs/SECURITY.md). Each
 * test failed before its fix: the note above it says how. The fault suite
 * (kill -9, SIGINT, full disk, read-only directory) is test_faults.c. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"

/* ------------------------------------------------------------ helpers */

/* Under AddressSanitizer (make asan) RLIMIT_AS cannot be used (ASan reserves
 * terabytes of shadow address space); ASan's own allocation limit stands in. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Limit the memory of a CLI run to gib GiB: RLIMIT_AS, or under ASan its
 * max_allocation_size_mb with allocator_may_return_null (a larger malloc then
 * returns NULL, as it does under the rlimit). */
static void limit_memory(cli_run_opts *o, int gib)
{
    static char asan[160];
    static const char *env[2] = {asan, NULL};
    if (UNDER_ASAN) {
        snprintf(asan, sizeof asan, "ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:"
                 "max_allocation_size_mb=%d", gib * 1024);
        o->env = env;
    } else {
        o->rlimit_as = (size_t)gib << 30;
    }
}

static int tmp_path(char *buf, size_t size, const char *dir, const char *name)
{
    return snprintf(buf, size, "%s/%s", dir, name) < (int)size ? 0 : -1;
}

/* ------------------------------------------------------------ 1. predict */

/* Defect 1: ffnn_model_predict on a one-output (bce) model took the softmax
 * branch's maximum and read o[1], one float past the row. The output buffer here
 * ends at a page boundary followed by an inaccessible page: the old code died with
 * SIGSEGV (ASan: heap-buffer-overflow). */
TEST("hard_predict_one_output_in_bounds", test_predict_one_output_in_bounds)
{
    ffnn_model *m = NULL;
    long page = sysconf(_SC_PAGESIZE);
    CHECK_OK(ffnn_model_create("2-8tanh-1", &m));
    CHECK_OK(ffnn_model_init(m, 7));
    uint8_t *pages = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pages != MAP_FAILED, "mmap: %s", strerror(errno));
    CHECK(mprotect(pages + page, (size_t)page, PROT_NONE) == 0, "mprotect: %s", strerror(errno));
    float *p = (float *)(pages + page) - 1; /* p [1]: the last float of the page */
    const float x[2] = {0.5f, -1.0f};
    float z;
    int cls = -1;
    ffnn_status st = ffnn_model_forward(m, x, 1, &z);
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SIGMOID_BCE);
    ffnn_status st2 = ffnn_model_predict(m, x, 1, p, &cls);
    float got = *p;
    munmap(pages, 2 * (size_t)page);
    ffnn_model_free(m);
    CHECK(st == FFNN_OK && st2 == FFNN_OK, "forward/predict: %s", ffnn_last_error());
    float want = 1.0f / (1.0f + expf(-z));
    CHECK(fabsf(got - want) < 1e-6f, "probability %g, expected sigmoid(%g) = %g", (double)got,
          (double)z, (double)want);
    CHECK(cls == (z > 0.0f), "class %d for logit %g", cls, (double)z);
    return TEST_PASS;
}

/* ------------------------------------------------------------ 2, 3. long arch strings */

/* "2" + count x "-8tanh" + tail, malloc'd. */
static char *long_arch(int count, const char *tail)
{
    char *a = malloc(16 + 6 * (size_t)count + strlen(tail));
    if (!a)
        return NULL;
    size_t n = (size_t)sprintf(a, "2");
    for (int i = 0; i < count; i++)
        n += (size_t)sprintf(a + n, "-8tanh");
    strcpy(a + n, tail);
    return a;
}

static ffnn_status make_trainer(const char *arch, const ffnn_dataset *data, ffnn_model **m,
                                ffnn_trainer **t)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.epochs = 1;
    ffnn_status st = ffnn_model_create(arch, m);
    if (st == FFNN_OK)
        st = ffnn_model_init(*m, 1);
    if (st == FFNN_OK)
        st = ffnn_trainer_create(*m, data, &cfg, t);
    return st;
}

/* Defect 2: a checkpoint formatted its architecture into 160 bytes, so an
 * architecture of 160+ characters was written cut (exit 0) and the checkpoint
 * could not be resumed. Here: 120 layers, a 725-character architecture. */
TEST_DIR_CASE("hard_checkpoint_long_arch_resumes", "hard", checkpoint_long_arch_resumes)
{
    UNUSED_WHY();
    char path[512];
    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_model *m = NULL, *m2 = NULL, *loaded = NULL;
    ffnn_trainer *t = NULL, *t2 = NULL;
    char *arch = long_arch(120, "-2");
    CHECK(arch && strlen(arch) > 700, "arch");
    CHECK(tmp_path(path, sizeof path, dir, "long.ck") == 0, "path");
    CHECK_OK(ffnn_dataset_synthetic("synth:points:200", 1, &train, &test));
    CHECK_OK(make_trainer(arch, train, &m, &t));
    double loss;
    CHECK_OK(ffnn_trainer_step(t, &loss));
    CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
    CHECK_OK(ffnn_checkpoint_load(path, &loaded, NULL));
    size_t n = ffnn_model_arch_string(loaded, NULL, 0);
    char *back = malloc(n + 1);
    CHECK(back, "malloc");
    ffnn_model_arch_string(loaded, back, n + 1);
    int same = strcmp(back, arch) == 0;
    free(back);
    CHECK(same, "the checkpoint's architecture (%zu characters) is not the run's (%zu)", n,
          strlen(arch));
    CHECK_OK(make_trainer(arch, train, &m2, &t2));
    CHECK_OK(ffnn_trainer_resume(t2, path));
    TEST_FREE(t, t2, m, m2, loaded, train, test);
    free(arch);
    return TEST_PASS;
}

/* Defect 3: ffnn_trainer_resume compared architectures in 600-byte buffers, so a
 * checkpoint differing after character 599 passed the check and the parameters
 * were copied past the checkpoint's buffer (heap overflow). Here the two
 * architectures differ only in the last hidden layer's width, at character 720. */
TEST_DIR_CASE("hard_resume_refuses_arch_differing_late", "hard", resume_refuses_arch_differing_late)
{
    UNUSED_WHY();
    char path[512];
    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_model *m = NULL, *m2 = NULL;
    ffnn_trainer *t = NULL, *t2 = NULL;
    char *a = long_arch(120, "-8tanh-2"), *b = long_arch(120, "-9tanh-2");
    CHECK(a && b && strlen(a) > 600, "arch");
    CHECK(tmp_path(path, sizeof path, dir, "a.ck") == 0, "path");
    CHECK_OK(ffnn_dataset_synthetic("synth:points:200", 1, &train, &test));
    CHECK_OK(make_trainer(a, train, &m, &t));
    CHECK_OK(ffnn_trainer_save_checkpoint(t, path));
    CHECK_OK(make_trainer(b, train, &m2, &t2));
    ffnn_status st = ffnn_trainer_resume(t2, path);
    CHECK(st != FFNN_OK && strstr(ffnn_last_error(), "cannot resume: the architecture is"),
          "resumed a checkpoint of another architecture: [%d] %s", (int)st, ffnn_last_error());
    TEST_FREE(t, t2, m, m2, train, test);
    free(a);
    free(b);
    return TEST_PASS;
}

/* ------------------------------------------------------------ 4. limits before allocation */

/* The tensors of a 2-1 model in a safetensors header, over three floats of data. */
#define TENSORS_2_1                                                               \
    TEST_TENSOR_F32("layers.0.weight", "[1,2]", "[0,8]") ","                      \
    TEST_TENSOR_F32("layers.0.bias", "[1]", "[8,12]")

/* The tiny tensors of a 2-1 model under an architecture of 2^36 parameters. */
static int forged_model(const char *path)
{
    const char *h = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"65536-1048000\","
                    "\"loss\":\"mse\"}," TENSORS_2_1 "}";
    const float v[3] = {0.5f, -0.5f, 0.25f};
    return test_write_safetensors(path, h, v, sizeof v);
}

/* Run the CLI (args) under a 1 GiB memory limit: exit 1 with `expect` in the
 * message and no "out of memory" (what a reader that allocates what a forged
 * header asks for gets). */
static test_result refused_within_1gib(const char *dir, const char *const *args,
                                       const char *expect)
{
    char out[512];
    cli_run_opts o = {0};
    limit_memory(&o, 1);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    int rc = cli_run(args, out, &o);
    CHECK(rc == 1 && file_contains(out, expect) && !file_contains(out, "out of memory"),
          "exit %d: expected a refusal naming '%s' before any allocation (see %s)", rc,
          expect, out);
    return TEST_PASS;
}

/* Defect 4 (model reader): a small file whose metadata names an architecture of
 * 2^36 parameters made the reader allocate 256 GiB before matching the tensors.
 * Under a 1 GiB limit the old reader failed with "out of memory" (ffnn info);
 * now the tensors are matched first and the shape mismatch is reported. */
TEST_CLI_CASE("hard_model_reader_matches_before_allocating", "hard",
              model_reader_matches_before_allocating)
{
    UNUSED_WHY();
    char path[512];
    CHECK(tmp_path(path, sizeof path, dir, "forged.safetensors") == 0 && forged_model(path) == 0,
          "cannot write the forged file");
    const char *args[] = {"info", path, NULL};
    return refused_within_1gib(dir, args, "shape");
}

/* The same forgery as a checkpoint: the tensors of a 2-1 model, sgd. */
static int forged_checkpoint(const char *path)
{
    const char *h =
        "{\"__metadata__\":{\"format\":\"ffnn-checkpoint\",\"arch\":\"65536-1048000\","
        "\"loss\":\"mse\",\"optimizer\":\"sgd\",\"learning_rate\":\"0.01\",\"batch_size\":\"1\","
        "\"seed\":\"1\",\"shuffle\":\"true\",\"epochs\":\"1\",\"train_count\":\"1\","
        "\"train_crc32\":\"0\",\"epoch\":\"0\",\"step\":\"0\",\"steps_per_epoch\":\"1\","
        "\"optimizer_steps\":\"0\",\"shuffle_rng\":\"1,2,3,4\"},"
        "\"train.step_losses\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[0,0]},"
        TENSORS_2_1 "}";
    const float v[3] = {0.5f, -0.5f, 0.25f};
    return test_write_safetensors(path, h, v, sizeof v);
}

/* Defect 4 (checkpoint reader): as above, through ffnn train --resume. */
TEST_CLI_CASE("hard_checkpoint_reader_matches_before_alloc", "hard",
              checkpoint_reader_matches_before_allocating)
{
    UNUSED_WHY();
    char path[512];
    CHECK(tmp_path(path, sizeof path, dir, "forged.ck") == 0 && forged_checkpoint(path) == 0,
          "cannot write the forged file");
    const char *args[] = {"train", "--data", "synth:points:200", "--resume", path, NULL};
    return refused_within_1gib(dir, args, "shape");
}

/* gzip of bytes [n] into path with zlib's gzip writer; 0 on success. */
static int write_gz(const char *path, const uint8_t *bytes, size_t n);

/* Defect 4 (.gz IDX): a 33-byte gzip file whose IDX header promises 65535 images
 * of 256 x 256 made the loader reserve 4 GiB before reading; under a 1 GiB limit
 * the old loader said "out of memory" (ffnn predict --input). Now the header is
 * refused at once: a file of that size cannot decompress to 4 GiB (deflate
 * expands at most 1032:1). */
TEST_CLI_CASE("hard_gz_idx_bounded_before_allocating", "hard", gz_idx_bounded_before_allocating)
{
    UNUSED_WHY();
    char path[512], model[512];
    const uint8_t header[16] = {0, 0, 8, 3, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0, 1, 0};
    CHECK(tmp_path(path, sizeof path, dir, "forged-images-idx3-ubyte.gz") == 0 &&
          write_gz(path, header, sizeof header) == 0 &&
          tmp_path(model, sizeof model, dir, "m.safetensors") == 0, "cannot write the forged file");
    CHECK_OK(test_save_new_model(model, "4-2", 1, FFNN_LOSS_SOFTMAX_CE));
    const char *args[] = {"predict", "--model", model, "--input", path, NULL};
    return refused_within_1gib(dir, args, "deflate");
}

/* Defect 4 (memory estimate): --arch 784-4000000-10 (3.2 billion parameters,
 * 12.7 GB) was accepted and ended in the OOM killer after 93 s. Under a 4 GiB
 * address-space limit ffnn train now refuses it before allocating, with the
 * estimate and what is available, in well under the time an allocation of that
 * size and its initialisation would take. */
TEST_CLI_CASE("hard_cli_refuses_network_beyond_memory", "hard", cli_refuses_network_beyond_memory)
{
    UNUSED_WHY();
    char out[512];
    const char *args[] = {"train", "--data", "synth:points:200", "--arch", "2-4000000-10",
                          "--epochs", "1", "--device", "cpu", NULL};
    cli_run_opts o = {0};
    o.rlimit_as = (size_t)4 << 30;
    CHECK(tmp_path(out, sizeof out, dir, "out.txt") == 0, "path");
    if (UNDER_ASAN)
        SKIP("RLIMIT_AS and ASan's shadow memory do not mix; the plain build runs it");
    int rc = cli_run(args, out, &o);
    CHECK(rc == 1, "exit status %d, expected 1", rc);
    CHECK(file_contains(out, "needs an estimated") && file_contains(out, "available"),
          "no memory estimate in the message (see %s)", out);
    CHECK(!file_contains(out, "epoch"), "training started");
    return TEST_PASS;
}

/* Defect 4 (device memory): a network whose parameters, gradients and Adam
 * state (4 x 36 GB) exceed the GPU's memory (an H200 has 139 GiB) is refused by
 * ffnn_trainer_create before any device allocation, with the estimate and the
 * free memory (cudaMemGetInfo). The host copy of the model is allocated but not
 * touched (calloc'd pages stay unmapped). Skipped without a GPU, or when the
 * host cannot hold the 36 GB model (its own check refuses it first). */
TEST("hard_cuda_training_beyond_device_memory", test_cuda_training_beyond_device_memory)
{
    ffnn_model *m = NULL;
    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_trainer *t = NULL;
    SKIP_WITHOUT_GPU();
    if (ffnn_model_create("2-3000000-3000-2", &m) != FFNN_OK)
        SKIP("the host cannot hold the 36 GB model: %s", ffnn_last_error());
    CHECK_OK(ffnn_dataset_synthetic("synth:points:200", 1, &train, &test));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CUDA;
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.strategy = FFNN_STRATEGY_CUBLAS;
    ffnn_status st = ffnn_trainer_create(m, train, &cfg, &t);
    TEST_FREE(t, m, train, test);
    CHECK(st == FFNN_ERR_NO_MEMORY && strstr(ffnn_last_error(), "needs an estimated") &&
          strstr(ffnn_last_error(), "cuda memory"), "[%d] %s", (int)st, ffnn_last_error());
    return TEST_PASS;
}

/* Defect 4 (eval output): ffnn eval of a model with 20,000 outputs built a
 * 3.2 GB confusion matrix and printed 2.4 GB of it. Now per-class counts (O(C)
 * memory) and at most 100 rows are printed. */
TEST_CLI_CASE("hard_eval_output_capped", "hard", eval_output_capped)
{
    UNUSED_WHY();
    char model[512], out[512];
    CHECK(tmp_path(model, sizeof model, dir, "wide.safetensors") == 0 &&
          tmp_path(out, sizeof out, dir, "eval.txt") == 0, "path");
    CHECK_OK(test_save_new_model(model, "2-20000", 3, FFNN_LOSS_SOFTMAX_CE));
    const char *args[] = {"eval", "--model", model, "--data", "synth:points:500", NULL};
    cli_run_opts o = {0};
    limit_memory(&o, 2); /* the old 3.2 GB matrix cannot be allocated */
    int rc = cli_run(args, out, &o);
    struct stat st;
    CHECK(rc == 0, "exit status %d (see %s)", rc, out);
    CHECK(stat(out, &st) == 0 && st.st_size < 20000, "%lld bytes of output",
          (long long)st.st_size);
    CHECK(file_contains(out, "confusion matrix not printed: 20000 classes"),
          "no note on the matrix left out (see %s)", out);
    return TEST_PASS;
}

/* ------------------------------------------------------------ 5. output paths */

/* Defect 5: --save / --checkpoint with a 250-character file name passed the
 * up-front check (the directory was writable) and failed after training, when
 * the temporary name (+ ".tmp-...") exceeded NAME_MAX: the model was lost. Now
 * the temporary file is created up front and the run refused at once. */
TEST_CLI_CASE("hard_long_output_name_refused_up_front", "hard", long_output_name_refused_up_front)
{
    UNUSED_WHY();
    char path[1024], out[512];
    int n = snprintf(path, sizeof path, "%s/", dir);
    memset(path + n, 'm', 250);
    path[n + 250] = '\0';
    CHECK(tmp_path(out, sizeof out, dir, "out.txt") == 0, "path");
    const char *flags[] = {"--save", "--checkpoint"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"train", "--data", "synth:points:200", "--epochs", "1",
                              "--device", "cpu", flags[i], path, NULL};
        int rc = cli_run(args, out, NULL);
        CHECK(rc == 1, "%s: exit status %d, expected 1", flags[i], rc);
        CHECK(file_contains(out, "too long") && !file_contains(out, "epoch   1"),
              "%s: expected a refusal before training (see %s)", flags[i], out);
    }
    CHECK(count_temporaries(dir) == 0, "temporary files left in %s", dir);
    return TEST_PASS;
}

/* Defect 5: --log-steps s.csv --log /nonexistent/r.csv truncated s.csv, then
 * failed. Now every output path is checked before anything is opened. */
TEST_CLI_CASE("hard_bad_log_path_keeps_other_logs", "hard", bad_log_path_keeps_other_logs)
{
    UNUSED_WHY();
    char steps[512], out[512];
    const char keep[] = "keep me\n";
    CHECK(tmp_path(steps, sizeof steps, dir, "s.csv") == 0 &&
          tmp_path(out, sizeof out, dir, "out.txt") == 0, "path");
    CHECK(test_write_file(steps, keep, strlen(keep)) == 0, "write");
    const char *args[] = {"train", "--data", "synth:points:200", "--epochs", "1", "--device",
                          "cpu", "--log-steps", steps, "--log", "/nonexistent/r.csv", NULL};
    int rc = cli_run(args, out, NULL);
    CHECK(rc == 1, "exit status %d", rc);
    CHECK(file_contains(steps, "keep me"), "%s was changed", steps);
    CHECK(file_contains(out, "/nonexistent/r.csv"), "the message does not name the path");
    return TEST_PASS;
}

/* ------------------------------------------------------------ 6. plot */

/* Defect 6: ffnn plot ran bench/plot_log.py from the current directory when the
 * binary had no ../bench/ next to it: anyone's script in an untrusted directory
 * ran. A copy of the binary in DIR/bin and a hostile DIR/work/bench/plot_log.py
 * (it would create DIR/work/pwned): the script must not run. */
TEST_CLI_CASE("hard_plot_ignores_current_directory", "hard", plot_ignores_current_directory)
{
    UNUSED_WHY();
    char bin[512], exe[512], work[512], bench[512], script[512], pwned[512], out[512],
        csv[512];
    blob b;
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(exe, sizeof exe, "%s/bin/ffnn", dir);
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(bench, sizeof bench, "%s/work/bench", dir);
    snprintf(script, sizeof script, "%s/work/bench/plot_log.py", dir);
    snprintf(pwned, sizeof pwned, "%s/work/pwned", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(csv, sizeof csv, "%s/work/run.csv", dir);
    CHECK(mkdir(bin, 0755) == 0 && mkdir(work, 0755) == 0 && mkdir(bench, 0755) == 0, "mkdir");
    CHECK(test_read_file(cli_binary(), &b) == 0 && test_write_file(exe, b.data, b.size) == 0 &&
          chmod(exe, 0755) == 0, "cannot copy the binary");
    free(b.data);
    const char *hostile = "open('pwned', 'w').write('ran')\n";
    const char *log = "epoch,train_loss,test_loss,test_accuracy,seconds,images_per_second\n"
                      "1,0.5,0.5,0.9,1,1\n";
    CHECK(test_write_file(script, hostile, strlen(hostile)) == 0 &&
          test_write_file(csv, log, strlen(log)) == 0, "write");
    const char *args[] = {"plot", "run.csv", NULL};
    cli_run_opts o = {0};
    o.exe = exe;
    o.cwd = work;
    int rc = cli_run(args, out, &o);
    int ran = access(pwned, F_OK) == 0;
    remove(pwned);
    remove(script);
    remove(csv);
    rmdir(bench);
    remove(exe);
    rmdir(bin);
    rmdir(work);
    CHECK(!ran, "ffnn plot ran the script of the current directory");
    CHECK(rc == 1 && file_contains(out, "not found"), "exit status %d (see %s)", rc, out);
    remove(out);
    return TEST_PASS;
}

/* ------------------------------------------------------------ 7. the smaller items */

/* An atomic save turned a 0600 file into 0644 and replaced a symbolic link by a
 * file: now the mode is kept and the link is written through. */
TEST_DIR_CASE("hard_save_keeps_mode_and_symlink", "hard", save_keeps_mode_and_symlink)
{
    UNUSED_WHY();
    char target[512], link[512];
    struct stat st;
    ffnn_model *m = NULL, *back = NULL;
    CHECK(tmp_path(target, sizeof target, dir, "target.safetensors") == 0 &&
          tmp_path(link, sizeof link, dir, "link.safetensors") == 0, "path");
    CHECK(test_write_file(target, "old", 3) == 0 && chmod(target, 0600) == 0, "setup");
    CHECK(symlink("target.safetensors", link) == 0, "symlink: %s", strerror(errno));
    CHECK_OK(ffnn_model_create("3-2", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, link));
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the symbolic link was replaced");
    CHECK(stat(target, &st) == 0 && (st.st_mode & 07777) == 0600, "mode %04o, expected 0600",
          (unsigned)(st.st_mode & 07777));
    CHECK_OK(ffnn_model_load(target, &back, NULL));
    TEST_FREE(back, m);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    return TEST_PASS;
}

/* A temporary file of a killed process (its pid no longer runs) is removed at the
 * next save of the same target; one of a running process is left alone. */
TEST_DIR_CASE("hard_stale_temporary_removed", "hard", stale_temporary_removed)
{
    UNUSED_WHY();
    char target[512], stale[600], live[600];
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead, "fork");
    CHECK(tmp_path(target, sizeof target, dir, "m.safetensors") == 0, "path");
    snprintf(stale, sizeof stale, "%s.tmp-%ld-abcdef", target, (long)dead);
    snprintf(live, sizeof live, "%s.tmp-%ld-ghijkl", target, (long)getppid());
    CHECK(test_write_file(stale, "x", 1) == 0 && test_write_file(live, "y", 1) == 0, "setup");
    CHECK_OK(test_save_new_model(target, "3-2", 1, FFNN_LOSS_SOFTMAX_CE));
    CHECK(access(stale, F_OK) != 0, "the stale temporary file %s is still there", stale);
    CHECK(access(live, F_OK) == 0, "the temporary file of a running process was removed");
    return TEST_PASS;
}

/* Writes header h and the floats {1, 2, 3} as dir/name, then loads it: refused with
 * FFNN_ERR_FORMAT, the message containing needle. */
static test_result header_file_refused(const char *dir, const char *name, const char *h,
                                       const char *needle)
{
    char path[512];
    ffnn_model *m = NULL;
    const float v[3] = {1, 2, 3};
    CHECK(tmp_path(path, sizeof path, dir, name) == 0 &&
          test_write_safetensors(path, h, v, sizeof v) == 0, "write %s", name);
    ffnn_status st = ffnn_model_load(path, &m, NULL);
    ffnn_model_free(m);
    CHECK(st == FFNN_ERR_FORMAT && strstr(ffnn_last_error(), needle), "[%d] %s", (int)st,
          ffnn_last_error());
    return TEST_PASS;
}

/* A tensor key with an embedded NUL ("layers.0.bias\u0000x") passed as
 * "layers.0.bias". */
TEST_DIR_CASE("hard_key_with_nul_refused", "hard", key_with_nul_refused)
{
    UNUSED_WHY();
    const char *h = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"2-1\",\"loss\":\"mse\"},"
                    TEST_TENSOR_F32("layers.0.weight", "[1,2]", "[0,8]") ","
                    "\"layers.0.bias\\u0000x\":{\"dtype\":\"F32\",\"shape\":[1],"
                    "\"data_offsets\":[8,12]}}";
    return header_file_refused(dir, "nul.safetensors", h, "u0000");
}

/* Bytes from a file were echoed raw to the terminal: a metadata key holding an
 * escape sequence now appears as \x1b in the message. */
TEST_DIR_CASE("hard_control_characters_escaped", "hard", control_characters_escaped)
{
    UNUSED_WHY();
    const char *h = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"2-1\",\"loss\":\"mse\","
                    "\"\\u001b[2Jevil\":\"x\"},"
                    TENSORS_2_1 "}";
    CHECK_PASS(header_file_refused(dir, "esc.safetensors", h, "\\x1b[2Jevil"));
    CHECK(!strchr(ffnn_last_error(), 0x1b), "message: %s", ffnn_last_error());
    return TEST_PASS;
}

/* A model file of loss bce whose last layer has an activation was accepted (ffnn
 * info, eval): ffnn_trainer_create and predict refuse that pairing. */
TEST_DIR_CASE("hard_model_loss_must_fit_last_layer", "hard", model_loss_must_fit_last_layer)
{
    UNUSED_WHY();
    const char *h = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"2-1sigmoid\","
                    "\"loss\":\"bce\"},"
                    TENSORS_2_1 "}";
    return header_file_refused(dir, "bce.safetensors", h, "no activation");
}

/* A corrupt gzip stream was reported at "offset 0" only: the message now gives
 * the compressed bytes read. */
TEST_DIR_CASE("hard_corrupt_gzip_names_compressed_offset", "hard",
              corrupt_gzip_names_compressed_offset)
{
    UNUSED_WHY();
    char path[512];
    ffnn_dataset *ds = NULL;
    uint8_t bytes[64];
    memset(bytes, 0xA5, sizeof bytes);
    bytes[0] = 0x1f, bytes[1] = 0x8b, bytes[2] = 8, bytes[3] = 0; /* header, then junk */
    memset(bytes + 4, 0, 6);
    CHECK(tmp_path(path, sizeof path, dir, "bad-images-idx3-ubyte.gz") == 0 &&
          test_write_file(path, bytes, sizeof bytes) == 0, "write");
    ffnn_status st = ffnn_dataset_load_idx(path, NULL, &ds);
    ffnn_dataset_free(ds);
    CHECK(st == FFNN_ERR_FORMAT && strstr(ffnn_last_error(), "compressed bytes"),
          "[%d] %s", (int)st, ffnn_last_error());
    return TEST_PASS;
}

/* Small CLI items: empty CSV input to predict exited 0 silently; --lr 1e-50 said
 * "found 0"; test labels out of range were noticed only after the first epoch. */
TEST_CLI_CASE("hard_cli_small_items", "hard", cli_small_items)
{
    UNUSED_WHY();
    char model[512], out[512], data[512], p[600];
    CHECK(tmp_path(model, sizeof model, dir, "m.safetensors") == 0 &&
          tmp_path(out, sizeof out, dir, "out.txt") == 0 &&
          tmp_path(data, sizeof data, dir, "data") == 0, "path");
    CHECK_OK(test_save_new_model(model, "2-8tanh-1", 1, FFNN_LOSS_SIGMOID_BCE));
    const char *predict[] = {"predict", "--model", model, "--input", "-", NULL};
    cli_run_opts o = {0};
    o.stdin_text = "";
    int rc = cli_run(predict, out, &o);
    CHECK(rc == 1 && file_contains(out, "empty input"), "empty CSV: exit %d", rc);
    o.stdin_text = "1,1\n"; /* defect 1 through the CLI */
    rc = cli_run(predict, out, &o);
    CHECK(rc == 0, "predict of one row: exit %d", rc);
    const char *lr[] = {"train", "--data", "synth:points:200", "--lr", "1e-50", NULL};
    rc = cli_run(lr, out, NULL);
    CHECK(rc == 2 && file_contains(out, "1e-50") && file_contains(out, "32-bit float"),
          "--lr 1e-50: exit %d", rc);
    /* an IDX set whose test labels go up to 6 with a 2-class network */
    CHECK(mkdir(data, 0755) == 0, "mkdir");
    uint8_t img[16 + 8 * 4], lbl[8 + 8];
    memcpy(img, (const uint8_t[]){0, 0, 8, 3, 0, 0, 0, 8, 0, 0, 0, 2, 0, 0, 0, 2}, 16);
    memcpy(lbl, (const uint8_t[]){0, 0, 8, 1, 0, 0, 0, 8}, 8);
    for (int i = 0; i < 32; i++)
        img[16 + i] = (uint8_t)(i * 37);
    for (int i = 0; i < 8; i++)
        lbl[8 + i] = (uint8_t)(i % 2);
    const char *names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                            "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s/%s", data, names[k]);
        if (k == 3)
            lbl[8 + 5] = 6;
        CHECK(test_write_file(p, k % 2 ? lbl : img, k % 2 ? sizeof lbl : sizeof img) == 0, "w");
    }
    const char *labels[] = {"train", "--data", data, "--arch", "4-2", "--epochs", "1",
                            "--device", "cpu", NULL};
    rc = cli_run(labels, out, NULL);
    CHECK(rc == 1 && file_contains(out, "t10k-labels") && file_contains(out, "label 6") &&
          !file_contains(out, "epoch   1"), "test label 6: exit %d (see %s)", rc, out);
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s/%s", data, names[k]);
        remove(p);
    }
    rmdir(data);
    return TEST_PASS;
}

/* ------------------------------------------------------------ gzip helper */

#include <zlib.h>

static int write_gz(const char *path, const uint8_t *bytes, size_t n)
{
    gzFile gz = gzopen(path, "wb9");
    if (!gz)
        return -1;
    int ok = gzwrite(gz, bytes, (unsigned)n) == (int)n;
    return gzclose(gz) == Z_OK && ok ? 0 : -1;
}
