/* cli_run.c - running the ffnn CLI from a test (cli_run.h). */
#define _XOPEN_SOURCE 700 /* realpath, putenv */
#define _POSIX_C_SOURCE 200809L
#include "cli_run.h"
#include "test_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_files.h"

const char *cli_binary(void)
{
    static char path[PATH_MAX];
    const char *p = getenv("FFNN_BIN");
    if (!path[0]) {
        if (!p || !*p)
            p = "build/ffnn";
        if (!realpath(p, path))
            snprintf(path, sizeof path, "%s", p);
    }
    return path;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int cli_run(const char *const *args, const char *out_path, const cli_run_opts *opts)
{
    static const cli_run_opts none = {0};
    const cli_run_opts *o = opts ? opts : &none;
    const char *exe = o->exe ? o->exe : cli_binary();
    int in[2] = {-1, -1};
    size_t n = 0;

    while (args[n])
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        return -1;
    argv[0] = (char *)exe;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    if (o->stdin_text && pipe(in) != 0) {
        free(argv);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        if (o->stdin_text) {
            dup2(in[0], 0);
            close(in[0]);
            close(in[1]);
        } else {
            int null = open("/dev/null", O_RDONLY);
            dup2(null, 0);
            close(null);
        }
        if (o->cwd && chdir(o->cwd) != 0)
            _exit(126);
        if (o->rlimit_as) {
            struct rlimit rl = {o->rlimit_as, o->rlimit_as};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(126);
        }
        for (const char *const *e = o->env; e && *e; e++)
            putenv((char *)*e);
        execv(exe, argv);
        _exit(127);
    }
    free(argv);
    if (pid < 0)
        return -1;
    if (o->stdin_text) {
        close(in[0]);
        size_t len = strlen(o->stdin_text);
        if (len && write(in[1], o->stdin_text, len) < 0)
            perror("write");
        close(in[1]);
    }
    if (o->signal) {
        for (int waited = 0; o->wait_for && waited < 60000 && !file_contains(out_path, o->wait_for);
             waited += 5) {
            if (waitpid(pid, NULL, WNOHANG) == pid) /* ended before the text came */
                return -1;
            sleep_ms(5);
        }
        sleep_ms(o->delay_ms);
        kill(pid, o->signal);
        if (o->second_signal_ms || o->second_signal) {
            sleep_ms(o->second_signal_ms);
            kill(pid, o->second_signal ? o->second_signal : o->signal);
        }
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int file_contains(const char *path, const char *needle)
{
    blob b;
    if (test_read_file(path, &b) != 0)
        return 0;
    char *text = realloc(b.data, b.size + 1);
    if (!text) {
        free(b.data);
        return 0;
    }
    text[b.size] = '\0';
    int found = strstr(text, needle) != NULL;
    free(text);
    return found;
}

int count_temporaries(const char *dir) { return test_count_entries_with(dir, ".tmp-"); }
