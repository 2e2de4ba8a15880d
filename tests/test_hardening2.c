/* test_hardening2.c - the second hardening round (docs/SECURITY.md): one
 * regression test per finding of the audit - strings from files escaped for
 * their sink (JSON, terminal), no writes through planted symbolic links, every
 * stop signal saves, save refuses what load refuses, one writer per log, the
 * memory check's cgroup v1 and rlimit sources, and the smaller items. Each test
 * failed before its fix: the note above it says how. */
#define _DEFAULT_SOURCE /* lchown */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "cli_run.h"
#include "core/error.h"
#include "core/memory.h"
#include "ffnn.h"
#include "io/atomic_file.h"
#include "test_files.h"

/* "dir/name" into buf [size]. */
static void join(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

/* The small model these tests save: 2-2, initialised with seed 1, loss ce. */
static ffnn_status tiny_model(ffnn_model **m)
{
    ffnn_status st = ffnn_model_create("2-2", m);
    if (st == FFNN_OK)
        st = ffnn_model_init(*m, 1);
    if (st == FFNN_OK)
        (void)ffnn_model_set_loss(*m, FFNN_LOSS_SOFTMAX_CE);
    return st;
}

/* tiny_model saved to path (and freed). */
static ffnn_status save_tiny_model(const char *path)
{
    ffnn_model *m = NULL;
    ffnn_status st = tiny_model(&m);
    if (st == FFNN_OK)
        st = ffnn_model_save(m, path);
    ffnn_model_free(m);
    return st;
}

/* The bytes of path as a NUL-terminated string (caller frees), or NULL. */
static char *read_text(const char *path)
{
    blob b;
    if (test_read_file(path, &b) != 0)
        return NULL;
    char *s = realloc(b.data, b.size + 1);
    if (!s) {
        free(b.data);
        return NULL;
    }
    s[b.size] = '\0';
    return s;
}

/* 1 when text holds a raw ESC, DEL, an 8-bit C1 byte outside UTF-8 or a UTF-8
 * C1 control (C2 80..9F). */
static int has_raw_controls(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    for (size_t n = strlen(text); n > 0;) {
        size_t len = ffnn_utf8_length(p, n);
        if (len == 0 || p[0] == 0x1b || p[0] == 0x7f || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0))
            return 1;
        p += len, n -= len;
    }
    return 0;
}

/* Rewrite the model file at path with metadata key set to value (a string). */
static int set_metadata(const char *path, const char *key, const char *value)
{
    blob b;
    if (test_read_file(path, &b) != 0 || b.size < 8)
        return -1;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)b.data[i] << (8 * i);
    char *header = malloc(n + 1);
    memcpy(header, b.data + 8, n);
    header[n] = '\0';
    cJSON *root = cJSON_Parse(header);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, key);
    cJSON_AddStringToObject(meta, key, value);
    char *text = cJSON_PrintUnformatted(root);
    size_t len = strlen(text), padded = (len + 7) / 8 * 8, data = b.size - 8 - n;
    uint8_t *out = malloc(8 + padded + data);
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    memcpy(out + 8, text, len);
    memset(out + 8 + len, ' ', padded - len);
    memcpy(out + 8 + padded, b.data + 8 + n, data);
    int rc = test_write_file(path, out, 8 + padded + data);
    free(out);
    cJSON_free(text);
    cJSON_Delete(root);
    free(header);
    free(b.data);
    return rc;
}

/* ------------------------------------------------------------ N1: strings for their sink */

/* A version string that closes the JSON string and adds fields, and a note with
 * ESC, CSI (U+009B) and DEL: ffnn info --json printed the version raw (a JSON
 * reader saw parameters 999999999 and loss mse for a 42-parameter ce model, and
 * the escapes reached the terminal). Now the JSON parses with the file's values
 * and strings unchanged, and neither output carries a raw control. */
TEST_CLI_CASE("hard2_info_json_crafted_strings", "hard2", info_json_crafted_strings)
{
    UNUSED_WHY();
    static const char version[] = "0.1\", \"parameters\": 999999999, \"loss\": \"mse";
    static const char note[] = "SIGINT \x1b[2J\xc2\x9b" "1m\x7f at epoch 1";
    char path[512], out[512];
    ffnn_model *m = NULL;
    join(path, sizeof path, dir, "m.safetensors");
    join(out, sizeof out, dir, "out.txt");
    CHECK_OK(ffnn_model_create("2-8tanh-2", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save_interrupted(m, path, note));
    ffnn_model_free(m);
    CHECK(set_metadata(path, "ffnn_version", version) == 0, "rewrite");
    const char *json[] = {"info", "--json", path, NULL};
    int rc = cli_run(json, out, NULL);
    char *text = read_text(out);
    CHECK(rc == 0 && text, "ffnn info --json: exit %d (see %s)", rc, out);
    CHECK(!has_raw_controls(text), "raw control bytes in the JSON: %s", text);
    cJSON *o = cJSON_Parse(text);
    free(text);
    CHECK(cJSON_IsObject(o), "the output is not one JSON object (see %s)", out);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "parameters");
    const cJSON *loss = cJSON_GetObjectItemCaseSensitive(o, "loss");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "ffnn_version");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "interrupted");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(o, "file");
    int ok = cJSON_IsNumber(p) && p->valuedouble == 42 && cJSON_IsString(loss) &&
             !strcmp(loss->valuestring, "ce") && cJSON_IsString(v) &&
             !strcmp(v->valuestring, version) && cJSON_IsString(in) &&
             !strcmp(in->valuestring, note) && cJSON_IsString(file) &&
             !strcmp(file->valuestring, path);
    cJSON_Delete(o);
    CHECK(ok, "fields changed by the crafted strings (see %s)", out);
    const char *plain[] = {"info", path, NULL};
    rc = cli_run(plain, out, NULL);
    text = read_text(out);
    CHECK(rc == 0 && text, "ffnn info: exit %d", rc);
    ok = !has_raw_controls(text) && strstr(text, "\\x1b[2J\\x9b1m\\x7f");
    free(text);
    CHECK(ok, "ffnn info printed raw controls or not their escapes (see %s)", out);
    return TEST_PASS;
}

/* Raw 8-bit C1 bytes (0x9B is CSI on a terminal not in UTF-8 mode) passed the
 * escaper, e.g. in predict --input errors. Now every byte outside valid UTF-8
 * is escaped, valid UTF-8 is kept, and truncation never splits a character. */
TEST_CLI_CASE("hard2_escape_c1_raw_bytes", "hard2", escape_c1_raw_bytes)
{
    UNUSED_WHY();
    char out[64];
    ffnn_escape_controls("a\x9b[2Jb \xc3\xa9\xe2\x82\xac \xc2\x9b \xff", out, sizeof out);
    CHECK(!strcmp(out, "a\\x9b[2Jb \xc3\xa9\xe2\x82\xac \\x9b \\xff"), "escaped as '%s'", out);
    ffnn_escape_controls("ab\xe2\x82\xac", out, 5); /* room for "ab" and 2 of 3 bytes */
    CHECK(!strcmp(out, "ab"), "truncated inside a character: '%s'", out);
    char model[512], csv[512], log[512];
    join(model, sizeof model, dir, "m.safetensors");
    join(csv, sizeof csv, dir, "in.csv");
    join(log, sizeof log, dir, "out.txt");
    CHECK_OK(save_tiny_model(model));
    CHECK(test_write_file(csv, "1,\x9b" "2J\n", 6) == 0, "write");
    const char *args[] = {"predict", "--model", model, "--input", csv, NULL};
    int rc = cli_run(args, log, NULL);
    char *text = read_text(log);
    CHECK(rc == 1 && text, "exit %d", rc);
    int ok = !has_raw_controls(text) && strstr(text, "\\x9b2J");
    free(text);
    CHECK(ok, "the raw C1 byte reached the message (see %s)", log);
    return TEST_PASS;
}

/* predict --json (and eval --json) wrote class names by hand, non-ASCII bytes
 * as '?': now as JSON strings by cJSON's printer - a name with a quote, a
 * backslash and a C1 control parses back unchanged, no raw control printed. */
TEST_CLI_CASE("hard2_predict_json_class_names", "hard2", predict_json_class_names)
{
    UNUSED_WHY();
    static const char *const names[2] = {"a\"b\\c\xc2\x9b\xc3\xa9", "d"};
    char model[512], out[512];
    ffnn_model *m = NULL;
    join(model, sizeof model, dir, "m.safetensors");
    join(out, sizeof out, dir, "out.txt");
    CHECK_OK(ffnn_model_create("2-2", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    CHECK_OK(ffnn_model_set_class_names(m, names, 2));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, model));
    ffnn_model_free(m);
    const char *args[] = {"predict", "--model", model, "--input", "-", "--json", NULL};
    cli_run_opts o = {0};
    o.stdin_text = "1,2\n-3,4\n5,-6\n";
    int rc = cli_run(args, out, &o);
    char *text = read_text(out);
    CHECK(rc == 0 && text, "exit %d (see %s)", rc, out);
    int rows = 0, ok = !has_raw_controls(text);
    for (char *line = strtok(text, "\n"); ok && line; line = strtok(NULL, "\n"), rows++) {
        cJSON *row = cJSON_Parse(line);
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(row, "class");
        ok = cJSON_IsString(cls) &&
             (!strcmp(cls->valuestring, names[0]) || !strcmp(cls->valuestring, names[1]));
        cJSON_Delete(row);
    }
    free(text);
    CHECK(ok && rows == 3, "rows %d: a row is not JSON with a class name (see %s)", rows, out);
    return TEST_PASS;
}

/* ------------------------------------------------------------ N2: planted symbolic links */

/* The rule itself (Linux's fs.protected_symlinks), on every combination. */
TEST_DIR_CASE("hard2_symlink_rule", "hard2", symlink_rule)
{
    UNUSED_WHY();
    (void)dir;
    const unsigned sticky = S_IFDIR | 01777, plain = S_IFDIR | 0777, me = 1000, other = 1001;
    CHECK(ffnn_symlink_follow_allowed(other, plain, 0, me), "a link outside a sticky directory");
    CHECK(ffnn_symlink_follow_allowed(me, sticky, 0, me), "my own link in /tmp");
    CHECK(ffnn_symlink_follow_allowed(other, sticky, other, me), "the directory owner's link");
    CHECK(!ffnn_symlink_follow_allowed(other, sticky, 0, me), "another account's link in /tmp");
    CHECK(!ffnn_symlink_follow_allowed(other, sticky, 0, 0), "root following a planted link");
    CHECK(ffnn_symlink_follow_allowed(other, S_IFDIR | 01755, 0, me), "sticky, not world-writable");
    return TEST_PASS;
}

/* In a sticky world-writable directory another account plants links to a file
 * of ours: --save and --checkpoint replaced the link's target, --log and
 * --log-steps truncated it. Now each is refused naming the link, and the file
 * keeps its bytes; a link of our own there is still written through. Needs root
 * (to give the link another owner). */
TEST_CLI_CASE("hard2_planted_symlink_refused", "hard2", planted_symlink_refused)
{
    UNUSED_WHY();
    if (geteuid() != 0)
        SKIP("needs root to plant a link owned by another account (lchown)");
    char sticky[512], secret[512], out[512], link[4][600], own[600];
    static const char *const names[4] = {"m.safetensors", "run.ck", "log.csv", "steps.csv"};
    join(sticky, sizeof sticky, dir, "shared");
    join(secret, sizeof secret, dir, "secret");
    join(out, sizeof out, dir, "out.txt");
    CHECK(mkdir(sticky, 0700) == 0 && chmod(sticky, 01777) == 0, "sticky directory");
    CHECK(test_write_file(secret, "keep", 4) == 0, "write");
    for (int i = 0; i < 4; i++) {
        join(link[i], sizeof link[i], sticky, names[i]);
        CHECK(symlink(secret, link[i]) == 0 && lchown(link[i], 65534, 65534) == 0, "plant");
    }
    const char *flags[4] = {"--save", "--checkpoint", "--log", "--log-steps"};
    for (int i = 0; i < 4; i++) {
        const char *args[] = {"train", "--data", "synth:points:200", "--arch", "2-4tanh-2",
                              "--epochs", "1", "--device", "cpu", flags[i], link[i], NULL};
        int rc = cli_run(args, out, NULL);
        blob b;
        CHECK(test_read_file(secret, &b) == 0, "read");
        int kept = b.size == 4 && !memcmp(b.data, "keep", 4);
        free(b.data);
        CHECK(kept, "%s through a planted link changed its target (exit %d)", flags[i], rc);
        CHECK(rc != 0 && file_contains(out, "refused to write through the symbolic link"),
              "%s: exit %d without the refusal (see %s)", flags[i], rc, out);
    }
    ffnn_model *m = NULL;
    CHECK_OK(tiny_model(&m));
    ffnn_status st = ffnn_model_save(m, link[0]);
    CHECK(st == FFNN_ERR_IO && strstr(ffnn_last_error(), "uid 65534"), "[%d] %s", (int)st,
          ffnn_last_error());
    join(own, sizeof own, sticky, "own.safetensors"); /* ours: followed */
    CHECK(symlink(secret, own) == 0, "symlink");
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, own));
    ffnn_model_free(m);
    struct stat s;
    CHECK(lstat(own, &s) == 0 && S_ISLNK(s.st_mode) && stat(secret, &s) == 0 && s.st_size > 4,
          "our own link was not written through");
    for (int i = 0; i < 4; i++)
        unlink(link[i]);
    unlink(own);
    CHECK(count_temporaries(sticky) == 0, "temporary files left");
    rmdir(sticky);
    return TEST_PASS;
}

/* A log path that is not a link when checked is opened with O_NOFOLLOW; a
 * log given as our own link in an ordinary directory is written through. */
TEST_CLI_CASE("hard2_log_through_own_link", "hard2", log_through_own_link)
{
    UNUSED_WHY();
    char target[512], link[512], out[512];
    join(target, sizeof target, dir, "real.csv");
    join(link, sizeof link, dir, "log.csv");
    join(out, sizeof out, dir, "out.txt");
    CHECK(test_write_file(target, "old\n", 4) == 0 && symlink("real.csv", link) == 0, "link");
    const char *args[] = {"train", "--data", "synth:points:200", "--arch", "2-4tanh-2",
                          "--epochs", "1", "--device", "cpu", "--log", link, NULL};
    int rc = cli_run(args, out, NULL);
    CHECK(rc == 0 && file_contains(target, "epoch,train_loss"), "exit %d (see %s)", rc, out);
    struct stat s;
    CHECK(lstat(link, &s) == 0 && S_ISLNK(s.st_mode), "the link was replaced");
    return TEST_PASS;
}

/* ------------------------------------------------------------ N4: every stop signal saves */

/* The run of the signal tests: many short epochs, a checkpoint and a model. */
#define SIGNAL_RUN(ck, save)                                                          \
    {"train", "--data", "synth:points:20000", "--arch", "2-256relu-2", "--epochs", "50", \
     "--device", "cpu", "--strategy", "reference", "--checkpoint", ck, "--save", save, NULL}

/* The checkpoint at ck loads and the model at save is marked interrupted by sig. */
static test_result saved_after(const char *ck, const char *save, const char *sig)
{
    ffnn_model *m = NULL;
    ffnn_model_file_info info;
    CHECK(ffnn_checkpoint_load(ck, NULL, NULL) == FFNN_OK, "%s: %s", ck, ffnn_last_error());
    CHECK_OK(ffnn_model_load(save, &m, &info));
    ffnn_model_free(m);
    CHECK(strstr(info.interrupted, sig), "the model is not marked interrupted by %s: '%s'", sig,
          info.interrupted);
    return TEST_PASS;
}

/* SIGHUP (the terminal closed) killed the run without a save and could leave a
 * temporary file. Now it stops the run as SIGINT does - exit 130, a checkpoint
 * that loads, the model marked, no temporary file - and SIGTERM still does. */
TEST_CLI_CASE("hard2_sighup_sigterm_save", "hard2", sighup_sigterm_save)
{
    UNUSED_WHY();
    char ck[512], save[512], out[512];
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler == SIG_IGN)
        SKIP("SIGHUP is ignored here (nohup), and the CLI keeps an inherited ignore");
    const int sigs[2] = {SIGHUP, SIGTERM};
    const char *names[2] = {"SIGHUP", "SIGTERM"};
    join(ck, sizeof ck, dir, "run.ck");
    join(save, sizeof save, dir, "m.safetensors");
    join(out, sizeof out, dir, "out.txt");
    for (int i = 0; i < 2; i++) {
        const char *args[] = SIGNAL_RUN(ck, save);
        cli_run_opts o = {0};
        o.signal = sigs[i];
        o.wait_for = "arch "; /* the handlers are in place */
        o.delay_ms = 300;
        int rc = cli_run(args, out, &o);
        CHECK(rc == 130 && file_contains(out, "interrupted by") && file_contains(out, names[i]),
              "%s: exit %d (see %s)", names[i], rc, out);
        CHECK(count_temporaries(dir) == 0, "%s: temporary files left", names[i]);
        CHECK_PASS(saved_after(ck, save, names[i]));
        remove(ck);
        remove(save);
    }
    return TEST_PASS;
}

/* ffnn train ... | head: the first epoch line read, the pipe closed. SIGPIPE
 * killed the run (exit 141, nothing saved). Now it stops as for SIGINT: exit
 * 130, the checkpoint and the model saved, the stop reported on stderr. */
TEST_CLI_CASE("hard2_sigpipe_saves", "hard2", sigpipe_saves)
{
    UNUSED_WHY();
    char ck[512], save[512], err[512], line[4096];
    join(ck, sizeof ck, dir, "run.ck");
    join(save, sizeof save, dir, "m.safetensors");
    join(err, sizeof err, dir, "err.txt");
    const char *args[] = SIGNAL_RUN(ck, save);
    int pipefd[2];
    CHECK(pipe(pipefd) == 0, "pipe");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[32];
        int n = 0;
        argv[n++] = (char *)cli_binary();
        for (const char *const *a = args; *a; a++)
            argv[n++] = (char *)*a;
        argv[n] = NULL;
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        signal(SIGPIPE, SIG_DFL);
        dup2(pipefd[1], 1);
        dup2(e, 2);
        close(pipefd[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    CHECK(pid > 0, "fork");
    close(pipefd[1]);
    size_t got = 0;
    while (got < sizeof line - 1 && !strstr(line, "epoch ")) { /* head -n: the first epoch */
        ssize_t r = read(pipefd[0], line + got, sizeof line - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        line[got] = '\0';
    }
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    CHECK(rc == 130 && file_contains(err, "interrupted by SIGPIPE"), "exit %d (see %s)", rc,
          err);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    return saved_after(ck, save, "SIGPIPE");
}

/* A run started with SIGINT ignored (a background job of a non-interactive
 * shell; nohup does so for SIGHUP): the handler overrode it, so the signal
 * stopped the run (exit 130). Now it stays ignored:
 * the run finishes (exit 0, not interrupted). The run takes about 1 s (5
 * epochs), the signal comes 100 ms after training starts. */
TEST_CLI_CASE("hard2_inherited_sig_ign_respected", "hard2", inherited_sig_ign_respected)
{
    UNUSED_WHY();
    char out[512];
    join(out, sizeof out, dir, "out.txt");
    const char *args[] = {"train", "--data", "synth:points:20000", "--arch", "2-256relu-2",
                          "--epochs", "5", "--device", "cpu", "--strategy", "reference", NULL};
    cli_run_opts o = {0};
    o.signal = SIGINT;
    o.wait_for = "arch ";
    o.delay_ms = 100;
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old); /* inherited through fork and exec */
    int rc = cli_run(args, out, &o);
    sigaction(SIGINT, &old, NULL);
    CHECK(rc == 0 && !file_contains(out, "interrupted") && file_contains(out, "epoch   5"),
          "exit %d (see %s)", rc, out);
    return TEST_PASS;
}

/* ------------------------------------------------------------ N6, N9: save rules, log lock */

/* ffnn_model_save wrote models ffnn_model_load refuses (bce or ce with a
 * last-layer activation, ce with one output), replacing a good file. Now such a
 * loss is refused with the reader's rule when it is given to the model
 * (ffnn_model_set_loss), a model without a loss is not saved, and the file is
 * left as it was. */
TEST_DIR_CASE("hard2_save_refuses_what_load_refuses", "hard2", save_refuses_what_load_refuses)
{
    UNUSED_WHY();
    char path[512];
    blob before, after;
    ffnn_model *m = NULL;
    join(path, sizeof path, dir, "m.safetensors");
    CHECK_OK(save_tiny_model(path));
    CHECK(test_read_file(path, &before) == 0, "read");
    static const struct { const char *arch; ffnn_loss loss; const char *why; } bad[] = {
        {"2-1sigmoid", FFNN_LOSS_SIGMOID_BCE, "no activation"},
        {"2-3softmax", FFNN_LOSS_SOFTMAX_CE, "no activation"},
        {"2-1", FFNN_LOSS_SOFTMAX_CE, "at least 2 outputs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ffnn_model_create(bad[i].arch, &m) != FFNN_OK) /* e.g. no softmax activation */
            continue;
        CHECK_OK(ffnn_model_init(m, 1));
        ffnn_status st = ffnn_model_set_loss(m, bad[i].loss);
        CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), bad[i].why),
              "%s: [%d] %s", bad[i].arch, (int)st, ffnn_last_error());
        st = ffnn_model_save(m, path);
        ffnn_model_free(m);
        CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "no loss") &&
              strstr(ffnn_last_error(), "not saved"), "%s: [%d] %s", bad[i].arch, (int)st,
              ffnn_last_error());
        CHECK(test_read_file(path, &after) == 0, "read");
        int same = test_same_blob(&before, &after);
        free(after.data);
        CHECK(same, "%s: the good file was replaced", bad[i].arch);
    }
    free(before.data);
    CHECK(count_temporaries(dir) == 0, "temporary files left");
    return TEST_PASS;
}

/* Two runs sharing --log interleaved malformed rows, silently. Now the log is
 * locked (flock): a second writer - another process holding it here, or
 * --log-steps naming the --log file - is refused before training. */
TEST_CLI_CASE("hard2_concurrent_log_writers_refused", "hard2", concurrent_log_writers_refused)
{
    UNUSED_WHY();
    char log[512], out[512];
    join(log, sizeof log, dir, "log.csv");
    join(out, sizeof out, dir, "out.txt");
    int fd = open(log, O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0 && write(fd, "mine\n", 5) == 5 && flock(fd, LOCK_EX) == 0, "lock");
    const char *args[] = {"train", "--data", "synth:points:200", "--arch", "2-4tanh-2",
                          "--epochs", "1", "--device", "cpu", "--log", log, NULL};
    int rc = cli_run(args, out, NULL);
    close(fd);
    CHECK(rc == 1 && file_contains(out, "another run") && !file_contains(out, "epoch   1"),
          "exit %d (see %s)", rc, out);
    CHECK(file_contains(log, "mine"), "the other writer's log was truncated");
    const char *both[] = {"train", "--data", "synth:points:200", "--arch", "2-4tanh-2",
                          "--epochs", "1", "--device", "cpu", "--log", log, "--log-steps", log,
                          NULL};
    rc = cli_run(both, out, NULL);
    CHECK(rc == 1 && file_contains(out, "--log-steps"), "one file for both logs: exit %d "
          "(see %s)", rc, out);
    rc = cli_run(args, out, NULL);
    CHECK(rc == 0 && file_contains(log, "epoch,train_loss"), "unlocked: exit %d", rc);
    return TEST_PASS;
}

/* ------------------------------------------------------------ memory check sources */

/* The memory check read only the cgroup v2 file: a cgroup v1 limit (this
 * machine's kind) was not consulted. A fake tree: the v1 limit of the process's
 * own cgroup (1 GiB, 256 MiB used) bounds the room; v2's "max" means none. */
TEST_DIR_CASE("hard2_cgroup_v1_limit_consulted", "hard2", cgroup_v1_limit_consulted)
{
    UNUSED_WHY();
    char p[800], self[512];
    join(self, sizeof self, dir, "self-cgroup");
    CHECK(test_write_file(self, "4:memory:/job\n0::/\n", 19) == 0, "write");
    snprintf(p, sizeof p, "%s/memory", dir);
    CHECK(mkdir(p, 0755) == 0, "mkdir");
    snprintf(p, sizeof p, "%s/memory/job", dir);
    CHECK(mkdir(p, 0755) == 0, "mkdir");
    snprintf(p, sizeof p, "%s/memory/job/memory.limit_in_bytes", dir);
    CHECK(test_write_file(p, "1073741824\n", 11) == 0, "write");
    snprintf(p, sizeof p, "%s/memory/job/memory.usage_in_bytes", dir);
    CHECK(test_write_file(p, "268435456\n", 10) == 0, "write");
    snprintf(p, sizeof p, "%s/memory.max", dir);
    CHECK(test_write_file(p, "max\n", 4) == 0, "write");
    uint64_t room = ffnn_cgroup_memory_available(dir, self);
    CHECK(room == (uint64_t)768 << 20, "room %llu, expected 768 MiB", (unsigned long long)room);
    /* v1's "unlimited" (about 2^63) is no limit */
    snprintf(p, sizeof p, "%s/memory/job/memory.limit_in_bytes", dir);
    CHECK(test_write_file(p, "9223372036854771712\n", 20) == 0, "write");
    room = ffnn_cgroup_memory_available(dir, self);
    CHECK(room == UINT64_MAX, "room %llu for an unlimited cgroup", (unsigned long long)room);
    remove(p);
    snprintf(p, sizeof p, "%s/memory/job/memory.usage_in_bytes", dir);
    remove(p);
    snprintf(p, sizeof p, "%s/memory/job", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/memory", dir);
    rmdir(p);
    return TEST_PASS;
}

/* RLIMIT_AS was taken whole, as if nothing were mapped: a limit of (mapped now
 * + 256 MiB) read as that sum. Now what is mapped is subtracted (a child
 * process sets the limit, so the runner keeps its own). */
TEST_DIR_CASE("hard2_rlimit_as_less_mapped", "hard2", rlimit_as_less_mapped)
{
    (void)dir;
#if defined(__SANITIZE_ADDRESS__)
    SKIP("RLIMIT_AS and ASan's shadow memory do not mix");
#endif
    (void)why, (void)why_size;
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned long long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%llu", &pages) != 1)
            _exit(2);
        fclose(f);
        uint64_t vm = pages * (uint64_t)sysconf(_SC_PAGESIZE);
        struct rlimit rl = {(rlim_t)(vm + ((uint64_t)256 << 20)),
                            (rlim_t)(vm + ((uint64_t)256 << 20))};
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(3);
        uint64_t avail = ffnn_host_memory_available();
        ssize_t w = write(fds[1], &avail, sizeof avail);
        _exit(w == sizeof avail ? 0 : 4);
    }
    CHECK(pid > 0, "fork");
    close(fds[1]);
    uint64_t avail = 0;
    ssize_t r = read(fds[0], &avail, sizeof avail);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(r == sizeof avail && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d",
          status);
    CHECK(avail <= (uint64_t)256 << 20 && avail >= (uint64_t)200 << 20,
          "available %llu bytes under a limit of mapped + 256 MiB", (unsigned long long)avail);
    return TEST_PASS;
}

/* ------------------------------------------------------------ smaller items */

/* gzip of bytes [n] into path (zlib's writer), then extra [m] appended raw. */
static int write_gz_then(const char *path, const uint8_t *bytes, size_t n, const void *extra,
                         size_t m)
{
    gzFile gz = gzopen(path, "wb9");
    if (!gz)
        return -1;
    int ok = gzwrite(gz, bytes, (unsigned)n) == (int)n;
    if (gzclose(gz) != Z_OK || !ok)
        return -1;
    FILE *f = fopen(path, "ab");
    ok = f && fwrite(extra, 1, m, f) == m;
    return f && fclose(f) == 0 && ok ? 0 : -1;
}

/* Bytes after the gzip stream of an IDX file were ignored (zlib's gzread stops
 * quietly at data that is not a gzip member). Now they are refused with the
 * compressed offset; a file of two gzip members still loads. */
TEST_DIR_CASE("hard2_gzip_trailing_garbage_refused", "hard2", gzip_trailing_garbage_refused)
{
    UNUSED_WHY();
    char path[512];
    const uint8_t idx[16 + 8] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2,
                                 1, 2, 3, 4, 5, 6, 7, 8};
    ffnn_dataset *ds = NULL;
    join(path, sizeof path, dir, "x-images-idx3-ubyte.gz");
    CHECK(write_gz_then(path, idx, sizeof idx, "", 0) == 0, "write");
    CHECK_OK(ffnn_dataset_load_idx(path, NULL, &ds));
    ffnn_dataset_free(ds);
    ds = NULL;
    CHECK(write_gz_then(path, idx, sizeof idx, "GARBAGE!", 8) == 0, "write");
    ffnn_status st = ffnn_dataset_load_idx(path, NULL, &ds);
    ffnn_dataset_free(ds);
    ds = NULL;
    CHECK(st == FFNN_ERR_FORMAT && strstr(ffnn_last_error(), "trailing") &&
          strstr(ffnn_last_error(), "compressed byte offset"), "[%d] %s", (int)st,
          ffnn_last_error());
    /* two members: the header in one, the payload in the next */
    gzFile gz = gzopen(path, "wb");
    CHECK(gz && gzwrite(gz, idx, 16) == 16 && gzclose(gz) == Z_OK, "write");
    gz = gzopen(path, "ab");
    CHECK(gz && gzwrite(gz, idx + 16, 8) == 8 && gzclose(gz) == Z_OK, "append");
    CHECK_OK(ffnn_dataset_load_idx(path, NULL, &ds));
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* predict --input - read all of stdin before predicting. Now rows are read a
 * batch at a time: with --batch 2, the predictions of the first rows come out
 * while stdin is still open. */
TEST_CLI_CASE("hard2_predict_stdin_streams", "hard2", predict_stdin_streams)
{
    UNUSED_WHY();
    char model[512], buf[256];
    join(model, sizeof model, dir, "m.safetensors");
    CHECK_OK(save_tiny_model(model));
    int in[2], out[2];
    CHECK(pipe(in) == 0 && pipe(out) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(cli_binary(), cli_binary(), "predict", "--model", model, "--input", "-",
              "--batch", "2", (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0, "fork");
    close(in[0]);
    close(out[1]);
    CHECK(write(in[1], "1,2\n3,4\n", 8) == 8, "write");
    struct pollfd p = {out[0], POLLIN, 0};
    int ready = poll(&p, 1, 20000); /* stdin stays open */
    ssize_t got = ready > 0 ? read(out[0], buf, sizeof buf - 1) : 0;
    close(in[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    close(out[0]);
    CHECK(got > 0, "no prediction within 20 s while stdin was open (all of stdin buffered)");
    buf[got] = '\0';
    CHECK(strchr(buf, ','), "output '%s'", buf);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
    return TEST_PASS;
}

/* --save '' said "found a directory". */
TEST_DIR_CASE("hard2_save_empty_path_message", "hard2", save_empty_path_message)
{
    UNUSED_WHY();
    (void)dir;
    ffnn_model *m = NULL;
    CHECK_OK(tiny_model(&m));
    ffnn_status st = ffnn_model_save(m, "");
    ffnn_model_free(m);
    CHECK(st == FFNN_ERR_IO && strstr(ffnn_last_error(), "empty path") &&
          !strstr(ffnn_last_error(), "directory"), "[%d] %s", (int)st, ffnn_last_error());
    return TEST_PASS;
}

/* info --json omitted "interrupted": present (null for a complete run). */
TEST_CLI_CASE("hard2_info_json_interrupted_field", "hard2", info_json_interrupted_field)
{
    UNUSED_WHY();
    char path[512], out[512];
    ffnn_model *m = NULL;
    join(path, sizeof path, dir, "m.safetensors");
    join(out, sizeof out, dir, "out.txt");
    CHECK_OK(tiny_model(&m));
    CHECK_OK(ffnn_model_save(m, path));
    const char *args[] = {"info", "--json", path, NULL};
    CHECK(cli_run(args, out, NULL) == 0 && file_contains(out, "\"interrupted\":null"),
          "no interrupted: null (see %s)", out);
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save_interrupted(m, path, "SIGTERM at epoch 2"));
    ffnn_model_free(m);
    CHECK(cli_run(args, out, NULL) == 0 &&
          file_contains(out, "\"interrupted\":\"SIGTERM at epoch 2\""), "see %s", out);
    return TEST_PASS;
}

/* The fuzz targets left their input files in /dev/shm. fuzz/fuzz_file.h now
 * removes its file at exit and the files of dead fuzzing processes at start:
 * a child that writes one and exits leaves nothing; a stale file is removed. */
#include "../fuzz/fuzz_file.h"

TEST_DIR_CASE("hard2_fuzz_files_removed", "hard2", fuzz_files_removed)
{
    UNUSED_WHY();
    (void)dir;
    char stale[256];
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead, "fork");
    snprintf(stale, sizeof stale, "%s/ffnn-fuzz-test-%ld.csv", fuzz_dir(), (long)dead);
    CHECK(test_write_file(stale, "x", 1) == 0, "write");
    fflush(stdout);
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        const char *path = fuzz_file_write("test", ".csv", (const uint8_t *)"1,2\n", 4);
        char name[128] = "";
        if (path && strlen(path) < sizeof name)
            memcpy(name, path, strlen(path) + 1);
        ssize_t w = write(fds[1], name, sizeof name);
        exit(w == (ssize_t)sizeof name && path ? 0 : 1); /* exit: the atexit handlers run */
    }
    CHECK(pid > 0, "fork");
    close(fds[1]);
    char name[128] = "";
    ssize_t r = read(fds[0], name, sizeof name);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(r == (ssize_t)sizeof name && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
    CHECK(access(name, F_OK) != 0, "%s left after its process exited", name);
    int left = access(stale, F_OK) == 0;
    unlink(stale);
    CHECK(!left, "the file of a dead fuzzing process was not removed");
    return TEST_PASS;
}

/* The policy was docs/SECURITY.md only: a top-level SECURITY.md (where people
 * and GitHub look) has the policy, how to report and the scope, and points to
 * the details. Run from the repository root (make test); skipped elsewhere. */
TEST_DIR_CASE("hard2_security_policy_at_top_level", "hard2", security_policy_at_top_level)
{
    UNUSED_WHY();
    (void)dir;
    if (access("Makefile", F_OK) != 0 || access("docs/SECURITY.md", F_OK) != 0)
        SKIP("not run from the repository root");
    CHECK(file_contains("SECURITY.md", "docs/SECURITY.md") &&
          file_contains("SECURITY.md", "Reporting") && file_contains("SECURITY.md", "Scope"),
          "SECURITY.md missing, or without reporting, scope and the pointer to docs/SECURITY.md");
    return TEST_PASS;
}
