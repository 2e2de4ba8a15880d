/* atomic_file.h - replace a file atomically: nothing the user had is lost when
 * writing fails (private to the library; reused for model files and checkpoints).
 *
 *   0. the target: <path>, or when <path> is a symbolic link the file it names
 *      (the link is kept: written through, not replaced); a link on the way that
 *      another account could have planted is refused (ffnn_check_path_links);
 *      a name that is not a link is replaced by the rename itself, so a link
 *      planted there later is replaced, never followed; temporary files of that
 *      target left by killed processes ("<target>.tmp-<pid>-XXXXXX" whose pid no
 *      longer runs) are removed;
 *   1. create a temporary file "<target>.tmp-<pid>-XXXXXX" in the target's
 *      directory (O_CREAT|O_EXCL, the mode of the file it replaces, else 0666 &
 *      ~umask like fopen; mkstemp would force 0600); listed for
 *      ffnn_remove_temporary_files until it is renamed or removed;
 *   2. the caller's fill function writes the contents through
 *      ffnn_atomic_file_write();
 *   3. fsync the temporary file, close it, rename() it over <path>;
 *   4. open and fsync the directory, so the rename itself is durable.
 * On any failure before the rename, the temporary file is unlinked and <path>
 * is untouched. Errors (FFNN_ERR_IO) carry the path, the step and strerror(errno).
 * ffnn_check_output_path (ffnn.h) runs steps 0 and 1 and removes the file. */
#ifndef FFNN_ATOMIC_FILE_H
#define FFNN_ATOMIC_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

/* The file being written (fields private to atomic_file.c). */
typedef struct ffnn_atomic_file ffnn_atomic_file;

/* Writes the whole contents with ffnn_atomic_file_write(); returns FFNN_OK or
 * the status of the first failure (its message already recorded). */
typedef ffnn_status (*ffnn_atomic_fill_fn)(ffnn_atomic_file *af, void *user);

/* Append bytes [size] to the temporary file. Errors: FFNN_ERR_IO naming the
 * target, the temporary file, the byte offset and strerror(errno) (e.g. EFBIG,
 * ENOSPC). */
ffnn_status ffnn_atomic_file_write(ffnn_atomic_file *af, const void *bytes, size_t size);

/* Bytes written so far. */
uint64_t ffnn_atomic_file_offset(const ffnn_atomic_file *af);

/* Replace path with what fill writes (steps above). */
ffnn_status ffnn_atomic_write(const char *path, ffnn_atomic_fill_fn fill, void *user);

/* Replace path with bytes [size]. */
ffnn_status ffnn_atomic_write_buffer(const char *path, const void *bytes, size_t size);

/* The rule of Linux's fs.protected_symlinks: a symbolic link (owner link_uid)
 * in a directory (mode dir_mode, owner dir_uid) may be followed by a process of
 * effective uid euid unless the directory is sticky and world-writable (/tmp,
 * /dev/shm) and the link belongs neither to euid nor to the directory's owner.
 * 1 when allowed. */
int ffnn_symlink_follow_allowed(unsigned link_uid, unsigned dir_mode, unsigned dir_uid,
                                unsigned euid);

/* ffnn_check_path_links (include/ffnn.h) applies ffnn_symlink_follow_allowed to every
 * link on a path. */

#endif
