/* test_files.c - file and temporary-directory helpers shared by the test suites. */
#define _POSIX_C_SOURCE 200809L
#include "test_files.h"

#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int test_read_file(const char *path, blob *b)
{
    FILE *f = fopen(path, "rb");
    long n;

    b->data = NULL;
    b->size = 0;
    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    b->size = (size_t)n;
    b->data = malloc(b->size ? b->size : 1);
    if (!b->data || fread(b->data, 1, b->size, f) != b->size) {
        free(b->data);
        b->data = NULL;
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

int test_write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;

    if (!f)
        return -1;
    ok = fwrite(bytes, 1, n, f) == n && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

int test_same_blob(const blob *a, const blob *b)
{
    return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

int test_write_safetensors(const char *path, const char *header, const void *data, size_t n)
{
    size_t len = strlen(header), padded = (len + 7) / 8 * 8;
    uint8_t *buf = malloc(8 + padded + n);
    if (!buf)
        return -1;
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    memcpy(buf + 8, header, len);
    memset(buf + 8 + len, ' ', padded - len);
    if (n)
        memcpy(buf + 8 + padded, data, n);
    int rc = test_write_file(path, buf, 8 + padded + n);
    free(buf);
    return rc;
}

int test_write_text_in(const char *dir, const char *name, const char *text, char *path,
                       size_t size)
{
    int n = snprintf(path, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size)
        return -1;
    return test_write_file(path, text, strlen(text));
}

int test_same_files(const char *a, const char *b)
{
    blob x = {NULL, 0}, y = {NULL, 0};
    int same = test_read_file(a, &x) == 0 && test_read_file(b, &y) == 0
                   ? test_same_blob(&x, &y)
                   : -1;
    free(x.data);
    free(y.data);
    return same;
}

int test_kill_writer(void (*save)(void *arg), void *arg, long us)
{
    const struct timespec ts = {us / 1000000L, us % 1000000L * 1000L};
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0)
        for (;;)
            save(arg);
    if (pid < 0)
        return -1;
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}

int test_count_entries_with(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += needle ? strstr(e->d_name, needle) != NULL
                    : strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

int test_count_entries(const char *dir) { return test_count_entries_with(dir, NULL); }

void test_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];

    if (d) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (remove(path) != 0)
                fprintf(stderr, "    cannot remove %s: %s\n", path, strerror(errno));
        }
        closedir(d);
    }
    rmdir(dir);
}

test_result test_in_tmpdir(const char *prefix, test_dir_body body, char *why,
                           size_t why_size)
{
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/ffnn-test-%s-XXXXXX", prefix);
    CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    test_result r = body(dir, why, why_size);
    test_remove_dir(dir);
    return r;
}

int test_noisy_row(uint64_t *s, double r[4])
{
    for (int k = 0; k < 4; k++) {
        *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
        r[k] = (double)(*s >> 11) / 9007199254740992.0;
    }
    return r[0] + 0.6 * r[3] > 0.8;
}

int test_run_argv_to(char *const argv[], const char *out_path, const char *err_path)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        const char *paths[2] = {out_path, err_path};
        for (int k = 0; k < 2; k++) {
            if (!paths[k])
                continue;
            int fd = k == 1 && out_path && !strcmp(err_path, out_path)
                         ? 1
                         : open(paths[k], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, k + 1) < 0)
                _exit(126);
            if (fd > 2)
                close(fd);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "    waitpid %s: %s\n", argv[0], strerror(errno));
            return -1;
        }
    if (WIFSIGNALED(status))
        fprintf(stderr, "    %s killed by signal %d\n", argv[0], WTERMSIG(status));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int test_run_argv(char *const argv[]) { return test_run_argv_to(argv, NULL, NULL); }
