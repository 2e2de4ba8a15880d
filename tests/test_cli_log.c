/* test_cli_log.c - ffnn train --log FILE.csv: the header and one row of finite
 * numbers per epoch (epochs 1..N), and a failing invocation (a bad --arch) leaves an
 * existing log file as it was. Runs build/ffnn (FFNN_BIN overrides); skipped when
 * it is not built. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"

/* Run argv (argv[0] the program) with stdout and stderr to /dev/null; the exit
 * status, or -1. */
static int run_quiet(char *const argv[])
{
    const cli_run_opts o = {.exe = argv[0]};
    return cli_run((const char *const *)argv + 1, "/dev/null", &o);
}
/* The whole file into buf (NUL-terminated); its length, or -1. */
static long read_all(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (long)n;
}

static test_result check_log(const char *log)
{
    char text[4096];
    CHECK(read_all(log, text, sizeof text) > 0, "%s not written", log);
    const char *header =
        "epoch,train_loss,test_loss,test_accuracy,seconds,images_per_second,learning_rate\n";
    CHECK(strncmp(text, header, strlen(header)) == 0, "header of %s: %.80s", log, text);
    char *line = text + strlen(header);
    int rows = 0;
    while (*line) {
        char *end = strchr(line, '\n');
        CHECK(end != NULL, "row %d of %s does not end in a newline", rows + 1, log);
        *end = '\0';
        int epoch = 0, n = 0;
        double v[6];
        CHECK(sscanf(line, "%d,%lf,%lf,%lf,%lf,%lf,%lf%n", &epoch, &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5], &n) == 7 && line[n] == '\0',
              "row %d of %s: '%s'", rows + 1, log, line);
        rows++;
        CHECK(epoch == rows, "row %d of %s has epoch %d", rows, log, epoch);
        for (int i = 0; i < 6; i++)
            CHECK(isfinite(v[i]) && v[i] >= 0, "row %d of %s: column %d is %g", rows, log,
                  i + 2, v[i]);
        CHECK(v[2] <= 1.0, "row %d of %s: accuracy %g", rows, log, v[2]);
        line = end + 1;
    }
    CHECK(rows == 3, "%s has %d rows, expected 3", log, rows);
    return TEST_PASS;
}

TEST("cli_log_csv_rows_and_bad_invocation_keeps_file", log_csv)
{
    SKIP_WITHOUT_CLI();
    const char *ffnn = cli_binary();
    char dir[] = "/tmp/ffnn_cli_log_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp failed");
    char log[64];
    snprintf(log, sizeof log, "%s/log.csv", dir);
    char *const train[] = {(char *)ffnn, "train", "--data", "synth:points:400", "--arch",
                           "2-8tanh-1", "--loss", "bce", "--epochs", "3", "--threads", "1",
                           "--device", "cpu", "--log", log, NULL};
    int rc = run_quiet(train);
    test_result r = TEST_FAIL;
    if (rc != 0)
        fprintf(stderr, "    ffnn train --log exited with %d\n", rc);
    else
        r = check_log(log);
    if (r == TEST_PASS) {
        /* A bad invocation must fail before the log is opened: the file stays. */
        char before[4096], after[4096];
        long n = read_all(log, before, sizeof before);
        char *const bad[] = {(char *)ffnn, "train", "--data", "synth:points:400", "--arch",
                             "bad", "--epochs", "3", "--threads", "1", "--log", log, NULL};
        rc = run_quiet(bad);
        if (rc == 0) {
            fprintf(stderr, "    ffnn train --arch bad exited with 0\n");
            r = TEST_FAIL;
        } else if (read_all(log, after, sizeof after) != n || strcmp(before, after) != 0) {
            fprintf(stderr, "    ffnn train --arch bad changed %s\n", log);
            r = TEST_FAIL;
        }
    }
    remove(log);
    rmdir(dir);
    return r;
}
