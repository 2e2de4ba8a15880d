/* sweep_save.c - what ffnn sweep writes of its models after ranking: --save-best
 * (the best one), --save-all DIR (each configuration's as DIR/conf-<N>.safetensors)
 * and --ensemble K FILE (the best K as one ensemble model file). Every file is
 * written by ffnn_model_save: atomically (a temporary file renamed over the name). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffnn.h"
#include "options.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* N of "conf-<N>.safetensors" (N decimal, no leading zero), or of a temporary file
 * of one a killed save left ("conf-<N>.safetensors.tmp-..."); 0 for any other name. */
static long long conf_number(const char *name)
{
    if (strncmp(name, "conf-", 5) != 0 || name[5] < '1' || name[5] > '9')
        return 0;
    char *end;
    errno = 0;
    long long k = strtoll(name + 5, &end, 10);
    if (errno || strncmp(end, ".safetensors", 12) != 0)
        return 0;
    return end[12] == '\0' || strncmp(end + 12, ".tmp-", 5) == 0 ? k : 0;
}

int ffnn_sweep_prepare_save_all(const char *dir, long long n)
{
    struct stat sb;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return fprintf(stderr, "%s: --save-all %s: cannot make the directory: %s\n", CMD, dir,
                       strerror(errno)), 1;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return fprintf(stderr, "%s: --save-all %s: not a directory\n", CMD, dir), 2;
    DIR *d = opendir(dir);
    if (!d)
        return fprintf(stderr, "%s: --save-all %s: %s\n", CMD, dir, strerror(errno)), 1;
    int rc = 0;
    long long previous = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        long long k = conf_number(e->d_name);
        char shown[300];
        ffnn_escape_controls(e->d_name, shown, sizeof shown);
        if (k == 0) {
            fprintf(stderr, "%s: --save-all %s: the directory holds '%s', not written by "
                    "--save-all; give a new or empty directory\n", CMD, dir, shown);
            rc = 2;
        } else if (k > n) {
            fprintf(stderr, "%s: --save-all %s: the directory holds '%s' of an earlier sweep "
                    "and this one has %lld configurations (it would stay beside them); give "
                    "a new or empty directory\n", CMD, dir, shown, n);
            rc = 2;
        } else {
            previous++;
        }
    }
    closedir(d);
    if (rc == 0 && previous)
        fprintf(stderr, "%s: --save-all %s: the conf-<N>.safetensors files of an earlier "
                "sweep there will be replaced\n", CMD, dir);
    char path[4096];
    if (rc == 0 && snprintf(path, sizeof path, "%s/conf-%lld.safetensors", dir, n) >=
                       (int)sizeof path)
        return fprintf(stderr, "%s: --save-all %s: name too long\n", CMD, dir), 2;
    if (rc == 0 && ffnn_cli_check_output_path(CMD, "--save-all", path) != 0)
        rc = 1;
    return rc;
}

static int save_all(const char *dir, const config *c, long long n, int json)
{
    char path[4096];
    for (long long k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/conf-%lld.safetensors", dir, k + 1);
        if (ffnn_model_save(c[k].model[0], path) != FFNN_OK)
            return ffnn_cli_fail(CMD, "--save-all");
    }
    if (!json)
        printf("saved %lld models to %s/conf-<N>.safetensors (N: the configuration)\n", n,
               dir);
    return 0;
}

/* The best K models (order[0 .. K-1]) as one ensemble model file. */
static int save_ensemble(const sweep_cli *s, const config *c, const long long *order, int json)
{
    int k = (int)s->ensemble_k;
    const ffnn_model **members = malloc((size_t)k * sizeof *members);
    if (!members)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    for (int i = 0; i < k; i++)
        members[i] = c[order[i]].model[0];
    ffnn_model *e = NULL;
    int rc = 0;
    if (ffnn_model_ensemble(members, k, &e) != FFNN_OK)
        rc = ffnn_cli_fail(CMD, "--ensemble");
    else if (ffnn_model_save(e, s->ensemble_path) != FFNN_OK)
        rc = ffnn_cli_fail(CMD, "--ensemble");
    else if (!json) {
        printf("saved an ensemble of the best %d model%s (configuration%s", k,
               k == 1 ? "" : "s", k == 1 ? "" : "s");
        for (int i = 0; i < k; i++)
            printf("%s%lld", i ? ", " : " ", order[i] + 1);
        printf(") to %s\n", s->ensemble_path);
    }
    ffnn_model_free(e);
    free(members);
    return rc;
}

int ffnn_sweep_save(const sweep_cli *s, const config *c, const long long *order, long long n)
{
    if (s->save_best && ffnn_model_save(c[order[0]].model[0], s->save_best) != FFNN_OK)
        return ffnn_cli_fail(CMD, "--save-best");
    if (s->save_best && !s->json)
        printf("saved the best model (configuration %lld) to %s\n", order[0] + 1,
               s->save_best);
    int rc = s->save_all ? save_all(s->save_all, c, n, s->json) : 0;
    if (rc == 0 && s->ensemble_path)
        rc = save_ensemble(s, c, order, s->json);
    return rc;
}
