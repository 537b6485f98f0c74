/* scratch.h — private scratch directories that name their owning process,
 * so that the leftover of a process that died (SIGKILL, power loss) can be
 * told from the directory of a process that is still working.
 *
 * A scratch directory is named
 *
 *     <pid>-<start>-<boot>-<pidns>-<random>
 *
 * pid: the creating process; start: its start time (field 22 of
 * /proc/<pid>/stat, clock ticks since boot), so a reused pid is not
 * mistaken for the owner; boot: the first 8 hex digits of
 * /proc/sys/kernel/random/boot_id (differs per host and per boot); pidns:
 * the inode of the process' pid namespace (/proc/self/ns/pid), so a pid of
 * another container is never looked up here; random: 16 hex digits of
 * getrandom. The owner is in the name, not in a file inside, because a
 * scratch directory may be renamed into place as a whole (a new dataset is
 * built in one) and because mkdir(2) makes the name and the owner appear
 * at the same instant — there is no window in which the directory exists
 * without its owner.
 *
 * Liveness (silt_scratch_owner): same boot and pid namespace as the caller
 * and /proc/<pid>/stat shows that start time and a state other than zombie
 * → ALIVE; same boot and namespace otherwise → GONE (delete at once);
 * anything else (another host or container, a name of an older silt,
 * /proc unavailable) → UNKNOWN: the caller falls back to an age rule.
 */
#ifndef SILT_UTIL_SCRATCH_H
#define SILT_UTIL_SCRATCH_H

#include <stddef.h>

/* Longest name, with its NUL. */
#define SILT_SCRATCH_NAME_MAX 80

/* Creates `parent` (mkdir -p) and a fresh scratch directory in it, mode
 * 0755. *out is its malloc'd path (caller frees; the caller removes the
 * directory when done). SILT_EIO on failure. */
int silt_scratch_mkdir(const char *parent, char **out);

/* Writes a fresh scratch name of the calling process into out
 * (SILT_SCRATCH_NAME_MAX bytes). */
int silt_scratch_name(char *out);

typedef enum silt_owner_state {
    SILT_OWNER_UNKNOWN = 0, /* not a scratch name, or an owner this host cannot check */
    SILT_OWNER_ALIVE = 1,
    SILT_OWNER_GONE = 2
} silt_owner_state;

/* State of the owner of scratch directory `name` (a base name); *pid_out
 * (may be NULL) receives the owner's pid when the name is a scratch name. */
silt_owner_state silt_scratch_owner(const char *name, long *pid_out);

#endif
