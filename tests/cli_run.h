/* cli_run.h - running the ffnn CLI from a test (cli_run.c): its exit status,
 * its output in a file, optional stdin text, working directory, memory limit and
 * a signal sent after a delay. Shared by every test that runs the CLI. */
#ifndef FFNN_TEST_CLI_RUN_H
#define FFNN_TEST_CLI_RUN_H

#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"
#include "test_files.h"

/* The ffnn binary: $FFNN_BIN, else build/ffnn (absolute, so a cwd change keeps it). */
const char *cli_binary(void);

typedef struct cli_run_opts {
    const char *exe;          /* the program (NULL: cli_binary())                  */
    const char *stdin_text;   /* written to its stdin (NULL: /dev/null)            */
    const char *cwd;          /* working directory (NULL: ours)                    */
    size_t rlimit_as;         /* RLIMIT_AS in bytes (0: none)                      */
    const char *wait_for;     /* the signal's delay counts from when the output
                                 contains this text (polled; 60 s at most)       */
    int signal;               /* sent after delay_ms (0: none) ...                 */
    int delay_ms;
    int second_signal_ms;     /* ... and again this much later (0: once) ...       */
    int second_signal;        /* ... as this signal (0: the same one)              */
    const char *const *env;   /* "NAME=VALUE" strings put into its environment,
                                 NULL-terminated (or NULL)                       */
} cli_run_opts;

/* Run args (args[0] is the first argument after the program; NULL-terminated)
 * with stdout and stderr into out_path. Returns the exit status, 128 + the signal
 * when killed by one, -1 when it could not run. */
int cli_run(const char *const *args, const char *out_path, const cli_run_opts *opts);

/* 1 when the file at path contains needle. */
int file_contains(const char *path, const char *needle);

/* Entries of dir whose name contains ".tmp-" (temporary files of atomic saves). */
int count_temporaries(const char *dir);

/* SKIP (naming the path) when cli_binary() is not an executable: the CLI is not
 * built, or the tests run from another directory than the repository root. */
#define SKIP_WITHOUT_CLI()                                                        \
    do {                                                                          \
        if (access(cli_binary(), X_OK) != 0)                                      \
            SKIP("%s not built (make; run the tests from the repository root)",   \
                 cli_binary());                                                   \
    } while (0)

/* TEST_DIR_CASE (test_files.h) of a test that runs the CLI: test_NAME skips
 * without it (SKIP_WITHOUT_CLI), else runs body_NAME in a temporary directory. */
#define TEST_CLI_CASE(test, prefix, name)                                         \
    static test_result body_##name(const char *dir, char *why, size_t why_size);  \
    static test_result test_##name(char *why, size_t why_size)                    \
    {                                                                             \
        SKIP_WITHOUT_CLI();                                                       \
        return test_in_tmpdir(prefix, body_##name, why, why_size);                \
    }                                                                             \
    TEST_CASE(test, test_##name);                                                 \
    static test_result body_##name(const char *dir, char *why, size_t why_size)

#endif
