/*
 * train_logs.c - the --log and --log-steps CSV files of ffnn train (train_logs.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "train_logs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Open one log for writing (created, not truncated): a symbolic link another
 * account could have planted is refused (ffnn_check_path_links); a name that
 * is no link now is opened with O_NOFOLLOW, so a link planted meanwhile is not
 * followed; the file is locked (flock, advisory) so that a second run writing
 * it is refused rather than mixing its rows in. fd, or -1 with the message. */
static int open_log(const char *flag, const char *path)
{
    int is_link = 0, fd;
    if (ffnn_check_path_links(path, &is_link) != FFNN_OK) {
        fprintf(stderr, "ffnn train: %s %s\n", flag, ffnn_last_error());
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (is_link ? 0 : O_NOFOLLOW), 0666);
    if (fd < 0) {
        fprintf(stderr, "ffnn train: %s %s: cannot open for writing: %s\n", flag, path,
                errno == ELOOP ? "a symbolic link appeared there (not followed)"
                               : strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        fprintf(stderr, "ffnn train: %s %s: %s%s\n", flag, path,
                busy ? "another run (or the other log of this one) is writing this file"
                     : "cannot lock: ", busy ? ": give each log its own file" : strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Open the --log and --log-steps files (either may be NULL): both are opened
 * (created, not truncated) and locked first and truncated only when both
 * opened, so a failure leaves every file as it was. 0, or 1 with the message
 * printed. */
static int open_logs(const char *path[2], const char *flag[2], FILE *out[2])
{
    int fd[2] = {-1, -1};
    for (int i = 0; i < 2; i++) {
        if (!path[i])
            continue;
        fd[i] = open_log(flag[i], path[i]);
        if (fd[i] < 0) {
            if (i == 1 && fd[0] >= 0)
                close(fd[0]);
            return 1;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (fd[i] < 0)
            continue;
        if (ftruncate(fd[i], 0) != 0 || !(out[i] = fdopen(fd[i], "w"))) {
            fprintf(stderr, "ffnn train: %s %s: cannot open for writing: %s\n", flag[i],
                    path[i], strerror(errno));
            for (int k = 0; k < 2; k++)
                if (out[k])
                    fclose(out[k]);
                else if (fd[k] >= 0 && k >= i)
                    close(fd[k]);
            out[0] = out[1] = NULL;
            return 1;
        }
    }
    return 0;
}

int ffnn_cli_train_logs_open(ffnn_cli_train_logs *l, const ffnn_cli_train_options *o,
                             int lead, int have_val)
{
    const char *paths[2] = {lead ? o->log_path : NULL, lead ? o->log_steps : NULL};
    const char *flags[2] = {"--log", "--log-steps"};
    FILE *files[2] = {NULL, NULL};
    l->epoch = l->step = NULL;
    if (open_logs(paths, flags, files) != 0)
        return 1;
    l->epoch = files[0];
    l->step = files[1];
    if ((l->step && (fprintf(l->step, "epoch,step,loss%s\n",
                             o->cfg.clip_grad_norm > 0.0f ? ",grad_norm" : "") < 0 ||
                     fflush(l->step) != 0)) ||
        (l->epoch && (fprintf(l->epoch, "epoch,train_loss,%s,seconds,images_per_second,"
                              "learning_rate\n",
                              have_val ? "val_loss,val_accuracy" : "test_loss,test_accuracy") < 0 ||
                      fflush(l->epoch) != 0))) {
        fprintf(stderr, "ffnn train: writing the log headers: %s\n", strerror(errno));
        ffnn_cli_train_logs_close(l, o, 1);
        return 1;
    }
    return 0;
}

/* Append the last epoch's per-step losses as "epoch,step,loss" rows (step counted
 * from 1 over the whole run); 0 on success. */
static int log_step_losses(FILE *f, const ffnn_trainer *trainer, int epoch, size_t *steps_done)
{
    const double *losses;
    const float *norms;
    size_t count, norm_count;
    if (ffnn_trainer_step_losses(trainer, &losses, &count) != FFNN_OK ||
        ffnn_trainer_step_grad_norms(trainer, &norms, &norm_count) != FFNN_OK)
        return -1;
    for (size_t i = 0; i < count; i++) {
        if (fprintf(f, "%d,%zu,%.9g", epoch, ++*steps_done, losses[i]) < 0 ||
            (norm_count == count && fprintf(f, ",%.9g", (double)norms[i]) < 0) ||
            fputc('\n', f) == EOF)
            return -1;
    }
    return fflush(f);
}

/* Append one epoch's row to the --log CSV (accuracy empty for regression) and
 * flush it; 0 on success. */
static int log_epoch(FILE *f, const ffnn_cli_train_options *o, const ffnn_epoch_stats *s,
                     int has_set, double set_loss, double set_accuracy)
{
    char accuracy[32] = "", loss[32] = "";
    if (!o->regression && has_set)
        snprintf(accuracy, sizeof accuracy, "%.9g", set_accuracy);
    if (has_set)
        snprintf(loss, sizeof loss, "%.9g", set_loss);
    if (fprintf(f, "%d,%.9g,%s,%s,%.6f,%.1f,%.9g\n", s->epoch, s->train_loss, loss, accuracy,
                s->seconds, s->images_per_second, s->learning_rate) < 0)
        return -1;
    return fflush(f);
}

int ffnn_cli_train_logs_epoch(ffnn_cli_train_logs *l, const ffnn_cli_train_options *o,
                              const ffnn_trainer *trainer, int epoch,
                              const ffnn_epoch_stats *s, int has_set, double loss,
                              double accuracy)
{
    int rc = 0;
    if (l->epoch && log_epoch(l->epoch, o, s, has_set, loss, accuracy) != 0) {
        fprintf(stderr, "ffnn train: --log %s: write failed: %s\n", o->log_path,
                strerror(errno));
        rc = 1;
    }
    if (l->step && log_step_losses(l->step, trainer, epoch, &l->steps_done) != 0) {
        fprintf(stderr, "ffnn train: --log-steps %s: write failed: %s\n", o->log_steps,
                strerror(errno));
        rc = 1;
    }
    return rc;
}

int ffnn_cli_train_logs_close(ffnn_cli_train_logs *l, const ffnn_cli_train_options *o, int rc)
{
    if (l->step && fclose(l->step) != 0 && rc == 0) {
        fprintf(stderr, "ffnn train: --log-steps %s: %s\n", o->log_steps, strerror(errno));
        rc = 1;
    }
    if (l->epoch && fclose(l->epoch) != 0 && rc == 0) {
        fprintf(stderr, "ffnn train: --log %s: %s\n", o->log_path, strerror(errno));
        rc = 1;
    }
    l->step = l->epoch = NULL;
    return rc;
}
