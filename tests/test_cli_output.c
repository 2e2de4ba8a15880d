/*
 * test_cli_output.c - what ffnn train and ffnn plot print for long and offline runs:
 *   - --print-every N prints the first epoch's line, every N-th and the last; --quiet
 *     only the last (the header lines stay);
 *   - the progress bar on a terminal (a pseudo-terminal here) shows an ETA;
 *   - without --data and without a network (a curl that fails), one line says that the
 *     MNIST download failed and that Fashion-MNIST is used (skipped without the
 *     Fashion-MNIST package's files);
 *   - ffnn plot draws the --log of a run with --val-split (val_loss,val_accuracy), and
 *     without matplotlib prints one line naming the package (skipped without python3
 *     or, for the drawing, without matplotlib);
 *   - a library refusal names the config's fields ("precision bf16"), ffnn train's
 *     message the flags ("--precision bf16").
 * Runs build/ffnn (FFNN_BIN overrides); skipped when it is not built.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "ffnn.h"

#define CLI (cli_binary())
#define PYTHON "/usr/bin/python3"

/* The whole file into buf [size] (NUL-terminated); its length, or -1. */
static long read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (long)n;
}

/* Lines of text that start with prefix. */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, len) == 0) n++;
    return n;
}

/* A fresh directory /tmp/ffnn_out_XXXXXX into dir [64], and the path of its out.txt
 * (the CLI's output) into out [96]; 0 on success. */
static int make_dir(char *dir, char *out)
{
    snprintf(dir, 64, "/tmp/ffnn_out_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(out, 96, "%s/out.txt", dir);
    return 0;
}

static void remove_tree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* --print-every 3 over 7 epochs: epochs 1, 3, 6 and 7; --quiet: epoch 7 only, the
 * data and arch lines kept. */
TEST("cli_output_print_every_and_quiet", print_every_and_quiet)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[64], out[96], text[8192];
    CHECK(make_dir(dir, out) == 0, "mkdtemp");
    const char *every[] = {"train", "--data", "synth:points:400", "--arch", "2-8relu-1", "--loss",
                           "bce", "--epochs", "7", "--print-every", "3", NULL};
    CHECK(cli_run(every, out, NULL) == 0, "--print-every 3 failed (%s)", out);
    CHECK(read_text(out, text, sizeof text) > 0, "no output");
    CHECK(count_lines(text, "epoch ") == 4, "%d epoch lines, expected 4:\n%s",
          count_lines(text, "epoch "), text);
    CHECK(strstr(text, "epoch   1/7") && strstr(text, "epoch   3/7") &&
          strstr(text, "epoch   6/7") && strstr(text, "epoch   7/7"),
          "the wrong epochs:\n%s", text);

    const char *quiet[] = {"train", "--data", "synth:points:400", "--arch", "2-8relu-1", "--loss",
                           "bce", "--epochs", "5", "--quiet", NULL};
    CHECK(cli_run(quiet, out, NULL) == 0, "--quiet failed (%s)", out);
    CHECK(read_text(out, text, sizeof text) > 0, "no output");
    CHECK(count_lines(text, "epoch ") == 1 && strstr(text, "epoch   5/5"),
          "--quiet: not the last epoch's line alone:\n%s", text);
    CHECK(count_lines(text, "data: ") == 1 && count_lines(text, "arch ") == 1,
          "--quiet lost the header lines:\n%s", text);

    const char *zero[] = {"train", "--data", "synth:points:400", "--print-every", "0", NULL};
    CHECK(cli_run(zero, out, NULL) == 2, "--print-every 0 is not a usage error");
    remove_tree(dir);
    return TEST_PASS;
}

/* The progress bar (stderr a terminal) shows "ETA M:SS" once a run has gone on for a
 * while: 2 epochs of 50,000 steps on one thread. */
TEST("cli_output_progress_eta", progress_eta)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
        SKIP("no pseudo-terminal: %s", strerror(errno));
    const char *slave = ptsname(master);
    CHECK(slave != NULL, "ptsname");
    char slave_name[128];
    snprintf(slave_name, sizeof slave_name, "%s", slave);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        setsid();
        int fd = open(slave_name, O_RDWR);
        int null_fd = open("/dev/null", O_RDWR);
        if (fd < 0 || null_fd < 0) _exit(126);
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(fd, 2);
        close(master);
        execl(CLI, CLI, "train", "--data", "synth:points:2000000", "--arch", "2-16relu-1",
              "--loss", "bce", "--epochs", "2", "--batch", "4", "--threads", "1", "--device",
              "cpu", (char *)NULL);
        _exit(127);
    }
    static char text[1 << 16];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(master, text + n, sizeof text - 1 - n);
        if (r <= 0) break; /* EIO once the child's end closed */
        n += (size_t)r;
        if (n + 1 >= sizeof text) n = 0; /* keep the latest output */
    }
    text[n] = '\0';
    close(master);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "ffnn train on a terminal failed: %.300s", text);
    const char *eta = strstr(text, " ETA ");
    CHECK(eta != NULL, "no ETA in the progress bar: %.300s", text);
    int m = -1, s = -1;
    CHECK(sscanf(eta, " ETA %d:%d", &m, &s) == 2 && m >= 0 && s >= 0 && s < 60,
          "ETA not M:SS: %.40s", eta);
    return TEST_PASS;
}

/* No --data, no MNIST in ./data/mnist and a curl that fails: exactly one line before
 * the data line, naming the failed download and Fashion-MNIST. */
TEST("cli_output_default_data_offline", default_data_offline)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    if (access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) != 0 &&
        access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte", R_OK) != 0)
        SKIP("no Fashion-MNIST in /usr/share/datasets/fashion-mnist (apt-get install "
             "dataset-fashion-mnist)");
    char dir[64], bin[96], curl[128], out[96], text[8192], path[128];
    CHECK(make_dir(dir, out) == 0, "mkdtemp");
    snprintf(bin, sizeof bin, "%s/bin", dir);
    CHECK(mkdir(bin, 0755) == 0, "mkdir %s", bin);
    snprintf(curl, sizeof curl, "%s/curl", bin);
    FILE *f = fopen(curl, "w");
    CHECK(f != NULL, "cannot write %s", curl);
    fputs("#!/bin/sh\necho 'curl: (6) Could not resolve host' >&2\nexit 6\n", f);
    fclose(f);
    CHECK(chmod(curl, 0755) == 0, "chmod");
    snprintf(path, sizeof path, "PATH=%s", bin);
    const char *env[] = {path, NULL};
    const cli_run_opts opts = {.cwd = dir, .env = env};
    const char *args[] = {"train", "--epochs", "1", "--train-limit", "1000", "--batch", "1000",
                          NULL};
    int rc = cli_run(args, out, &opts);
    CHECK(rc == 0, "ffnn train without --data exited with %d (%s)", rc, out);
    CHECK(read_text(out, text, sizeof text) > 0, "no output");
    const char *data = strstr(text, "data: Fashion-MNIST");
    CHECK(data != NULL, "not trained on Fashion-MNIST:\n%s", text);
    int before = 0;
    for (const char *p = text; p < data; p++)
        before += *p == '\n';
    CHECK(before == 1, "%d lines before the data line, expected 1:\n%s", before, text);
    CHECK(strncmp(text, "no MNIST in data/mnist/ (its download failed", 44) == 0 &&
          strstr(text, "using Fashion-MNIST") < data, "the line does not say why:\n%s", text);
    char made[96];
    snprintf(made, sizeof made, "%s/data", dir);
    CHECK(access(made, F_OK) != 0, "the failed download left %s", made);
    remove_tree(dir);
    return TEST_PASS;
}

/* ffnn plot: the log of a --val-split run is drawn; a python without matplotlib gives
 * one line naming the package. */
TEST("cli_output_plot_validation_and_missing_matplotlib", plot_validation_and_missing_matplotlib)
{
    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    if (access(PYTHON, X_OK) != 0) SKIP("no %s", PYTHON);
    char dir[64], log[96], out[96], png[96], text[4096], fake[128];
    CHECK(make_dir(dir, out) == 0, "mkdtemp");
    snprintf(log, sizeof log, "%s/run.csv", dir);
    snprintf(png, sizeof png, "%s/run.png", dir);
    const char *train[] = {"train", "--data", "synth:points:400", "--arch", "2-8relu-1", "--loss",
                           "bce", "--epochs", "3", "--val-split", "0.2", "--log", log, NULL};
    CHECK(cli_run(train, out, NULL) == 0, "ffnn train --val-split failed (%s)", out);
    CHECK(read_text(log, text, sizeof text) > 0 && strstr(text, "val_loss,val_accuracy"),
          "%s: no validation columns", log);

    /* a matplotlib that cannot be imported, first on the module path */
    snprintf(fake, sizeof fake, "%s/fake/matplotlib", dir);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", fake);
    CHECK(system(cmd) == 0, "%s", cmd);
    char init[160];
    snprintf(init, sizeof init, "%s/__init__.py", fake);
    FILE *f = fopen(init, "w");
    CHECK(f != NULL, "cannot write %s", init);
    fputs("raise ImportError('No module named matplotlib')\n", f);
    fclose(f);
    char pythonpath[160];
    snprintf(pythonpath, sizeof pythonpath, "PYTHONPATH=%s/fake", dir);
    const char *env[] = {pythonpath, "FFNN_PYTHON=" PYTHON, NULL};
    const cli_run_opts no_mpl = {.env = env};
    const char *plot[] = {"plot", log, "--out", png, NULL};
    int rc = cli_run(plot, out, &no_mpl);
    CHECK(read_text(out, text, sizeof text) >= 0, "no output");
    CHECK(rc == 1, "ffnn plot without matplotlib exited with %d:\n%s", rc, text);
    CHECK(count_lines(text, "") == 1 && strstr(text, "python3-matplotlib"),
          "not one line naming the package:\n%s", text);

    snprintf(cmd, sizeof cmd, PYTHON " -c 'import matplotlib' >/dev/null 2>&1");
    if (system(cmd) != 0) {
        remove_tree(dir);
        SKIP("the validation plot: no matplotlib for " PYTHON);
    }
    const char *env2[] = {"FFNN_PYTHON=" PYTHON, NULL};
    const cli_run_opts with_mpl = {.env = env2};
    rc = cli_run(plot, out, &with_mpl);
    CHECK(read_text(out, text, sizeof text) >= 0, "no output");
    CHECK(rc == 0 && strstr(text, "wrote "), "ffnn plot of a --val-split log: %d\n%s", rc, text);
    struct stat st;
    CHECK(stat(png, &st) == 0 && st.st_size > 1000, "no %s", png);
    remove_tree(dir);
    return TEST_PASS;
}

/* The library words its refusals in its API's terms (the config's field names, no
 * flag), and ffnn train prints the same refusal with its flags. */
TEST("cli_output_error_terms", error_terms)
{
    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:200", 1, &train, &test));
    CHECK_OK(ffnn_model_create("2-8relu-1", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.loss = FFNN_LOSS_SIGMOID_BCE;
    cfg.device = FFNN_DEVICE_CPU;
    cfg.precision = FFNN_PRECISION_BF16;
    ffnn_status st = ffnn_trainer_create(m, train, &cfg, &t);
    char message[1024];
    snprintf(message, sizeof message, "%s", ffnn_last_error());
    TEST_FREE(t, m, train, test);
    CHECK(st == FFNN_ERR_UNSUPPORTED, "bf16 on the cpu: %s", ffnn_status_name(st));
    CHECK(strstr(message, "precision bf16") && strstr(message, "device cuda") &&
          !strstr(message, "--"), "not in the API's terms: %s", message);

    if (access(CLI, X_OK) != 0) SKIP("%s not built", CLI);
    char dir[64], out[96], text[4096];
    CHECK(make_dir(dir, out) == 0, "mkdtemp");
    const char *args[] = {"train", "--data", "synth:points:200", "--arch", "2-8relu-1", "--loss",
                          "bce", "--device", "cpu", "--precision", "bf16", NULL};
    CHECK(cli_run(args, out, NULL) == 1, "ffnn train --precision bf16 --device cpu did not fail");
    CHECK(read_text(out, text, sizeof text) > 0, "no output");
    CHECK(strstr(text, "--precision bf16") && strstr(text, "--device cuda"),
          "the CLI's message lacks its flags: %s", text);
    remove_tree(dir);
    return TEST_PASS;
}
