/* Files nhens writes are whole or absent, and the files of one run are committed as one set.
 *
 * One file: written to DIR/.NAME.tmp.PID, flushed, fsync'ed, checked for write errors, renamed onto
 * DIR/NAME. A failure (full disk, I/O error) removes the temporary and leaves any older NAME as it was.
 *
 * A set (the files of one run: timeseries.csv, summary.json, smoothed.csv, paths.csv, quantiles.csv, config.hash): the files are
 * written into a staging folder DIR/.nhens-stage.PID; the commit writes the folder's MANIFEST (the
 * commit point, itself atomic), moves the staged files into DIR, removes the set's files that the new
 * set does not have (an older smoothed.csv), and removes the staging folder. A process killed before
 * the MANIFEST leaves no trace in DIR; one killed after it leaves a staging folder that the next
 * nh_output_set_begin or nh_output_recover on DIR completes. Either way DIR never holds one run's
 * timeseries beside another run's summary once nhens has looked at it. */
#ifndef NHENS_FILES_H
#define NHENS_FILES_H

#include <stdio.h>

#include "nhens/core.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* mkdir -p of a path of fewer than NH_DIR_MAX characters, then proves the folder writable with a probe file
 * (so a run fails before its work). */
int nh_make_directory(const char *path, nh_error *err);

/* The longest folder nhens writes into (an --out of up to 2047 characters, or a report's run folder below
 * one) and the longest path it builds (such a folder and a name below it), and the one way it builds one: printf-style into buf, NH_ERR_INPUT naming the start of the path when it does
 * not fit (a path cut short names another file, so it is never used). */
enum { NH_DIR_MAX = 3072, NH_PATH_MAX = 4096 };
int nh_path_format(char *buf, size_t len, nh_error *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* One process at a time in an output folder: a POSIX record lock on DIR/.nhens-lock (the file stays; the
 * lock goes with the process, however it ends, so a killed run leaves none behind). Taken while another
 * process holds it: NH_ERR_IO, "'DIR' is in use by another nhens process (pid N)". */
typedef struct nh_folder_lock {
    int fd;
} nh_folder_lock;
#define NH_FOLDER_LOCK_NAME ".nhens-lock"
int nh_folder_lock_take(const char *dir, nh_folder_lock *lock, nh_error *err);
void nh_folder_lock_release(nh_folder_lock *lock);
/* What every command that writes into DIR does first: refused (NH_ERR_IO, "'DIR' is inside 'A', which is in
 * use by another nhens process (pid N)") when another process holds the lock of a folder A above DIR (real
 * paths, up to /), then nh_make_directory, nh_folder_lock_take and nh_output_clean (what killed processes
 * left is completed or removed). */
int nh_output_folder_open(const char *dir, nh_folder_lock *lock, nh_error *err);

/* A new file at path, open for writing, that is this process's own: whatever stands at that name (an earlier
 * process's leftover, a planted symbolic link) is removed, never followed, and the file is created
 * exclusively (O_EXCL | O_NOFOLLOW). NULL with errno set when it cannot be. Every temporary nhens writes is
 * made by it. */
FILE *nh_create_own_file(const char *path);

/* Writes the body into a temporary beside `path` and renames it onto `path`; body returns non-zero on
 * failure. NH_ERR_IO names the file and the reason; a path longer than NH_WRITE_PATH_MAX bytes is
 * refused (NH_ERR_INPUT) before anything is written. */
#define NH_WRITE_PATH_MAX 4136
typedef int (*nh_write_body)(FILE *f, const void *data);
int nh_write_file(const char *path, nh_write_body body, const void *data, nh_error *err);

/* A whole regular file of at most max_bytes into a NUL-terminated buffer (caller frees); *size excludes the
 * NUL. FIFOs, devices and folders are refused without blocking; so is a larger file (NH_ERR_INPUT). */
char *nh_read_file(const char *path, size_t max_bytes, size_t *size, nh_error *err);

/* A regular file opened for reading ("r"), never blocking: a FIFO, device or folder is refused
 * (NH_ERR_INPUT) and so is a missing or unreadable file (NH_ERR_IO); NULL then, with err set. */
FILE *nh_open_regular(const char *path, nh_error *err);

/* The file names a set may hold; anything else in DIR is never touched by a commit. */
extern const char *const nh_output_set_names[];

typedef struct nh_output_set {
    char dir[NH_DIR_MAX];     /* the destination */
    char stage[NH_PATH_MAX];  /* where the set is written before the commit */
} nh_output_set;

/* Completes or discards what an interrupted commit left in dir, then creates the staging folder. */
int nh_output_set_begin(nh_output_set *set, const char *dir, nh_error *err);
/* Commit point, moves, clean-up (see above). On failure before the commit point nothing in dir changed. */
int nh_output_set_commit(nh_output_set *set, nh_error *err);
/* Removes the staging folder and what is in it; dir is unchanged. */
void nh_output_set_abort(nh_output_set *set);
/* Completes committed sets (MANIFEST present) and removes the staging folders and temporaries
 * (.NAME.tmp.PID, .nhens-probe.PID) of processes that are gone. */
int nh_output_recover(const char *dir, nh_error *err);
/* nh_output_recover for the holder of DIR's lock: every staging folder and temporary of another process
 * is removed, whether or not a process of its pid runs (no other nhens writes there). */
int nh_output_clean(const char *dir, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
