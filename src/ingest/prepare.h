/* prepare.h — prepare steps of polling sources (ODF PrepStep): Decompress
 * (Gzip, Zip via libarchive; `subPath` glob selects the entry of a
 * multi-file archive) and Pipe (an external command, argv without a shell,
 * data on stdin, result from stdout, bounded in time).
 *
 * Every step reads one file and writes a new one; the input is never
 * modified. Temporary outputs live in a directory the caller provides and
 * removes.
 */
#ifndef SILT_INGEST_PREPARE_H
#define SILT_INGEST_PREPARE_H

#include <stddef.h>

#include "odf/odf_types.h"
#include "silt.h"

/* Default bound of a Pipe command in seconds (env SILT_PIPE_TIMEOUT overrides). */
#define SILT_PIPE_TIMEOUT_DEFAULT 300

/* Extracts `in` (format ODF_CompressionFormat_Gzip or _Zip) into `out`.
 * Gzip: the decompressed stream (a .tar.gz is read as a tar archive when
 * `sub_path` is given). Zip (or tar): the one regular-file entry whose path
 * matches the glob `sub_path` (fnmatch, '*' also crosses '/'); without
 * sub_path the archive must hold exactly one file. Errors (SILT_EINVAL):
 * "archive 'IN' has no entry matching 'P' (entries: a, b)", "archive 'IN'
 * has several entries matching 'P': a, b", and corrupt archives with
 * libarchive's message. `display` names the input in messages (NULL = in). */
int silt_prepare_decompress(const char *in, const char *display, int format, const char *sub_path,
                            const char *out);

/* Runs argv[0] (looked up in PATH, no shell) with `in` on stdin and stdout
 * to `out`, in its own process group. timeout_s <= 0 means the default
 * (SILT_PIPE_TIMEOUT or 300 s); when exceeded the whole group is killed
 * (SIGKILL) and SILT_EIO "pipe 'CMD' timed out after N s" is returned.
 * A non-zero exit or death by signal is SILT_EIO naming the command, the
 * status and the first line of its stderr. Output on stderr with exit 0 is
 * passed to `warn` (may be NULL), one call per line. */
int silt_prepare_pipe(const char *in, char *const *argv, size_t argc, const char *out, int timeout_s,
                      silt_report_fn warn, void *warn_ctx);

/* Applies `steps` (ODF PrepStep union items) in order to `in`. Each step
 * writes `<tmpdir>/prep-<i>`; *out_path (malloc'd, caller frees) is the
 * final file: `in` itself (copied string) when there are no steps. */
int silt_prepare_run(char **out_path, const odf_uvec *steps, const char *in, const char *display,
                     const char *tmpdir, silt_report_fn warn, void *warn_ctx);

#endif
