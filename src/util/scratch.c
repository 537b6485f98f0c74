/* scratch.c — scratch directories named after their owning process (see
 * scratch.h).
 *
 * Invariants: a name is only ever reported ALIVE or GONE when it parses
 * completely and its boot id and pid namespace are those of the calling
 * process and known (non-zero); everything else is UNKNOWN, so a caller
 * never deletes the directory of a process it cannot see. The identity of
 * the calling process is read from /proc once per process.
 */
#include "util/scratch.h"

#include "util/error.h"
#include "util/fsutil.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct identity {
    char boot[9];          /* 8 hex digits, "" if unknown */
    unsigned long long ns; /* pid namespace inode, 0 if unknown */
} identity;

static identity g_id;
static pthread_once_t g_id_once = PTHREAD_ONCE_INIT;

static void read_identity(void)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    char buf[64] = "";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
    }
    size_t n = 0;
    while (n < 8 && ((buf[n] >= '0' && buf[n] <= '9') || (buf[n] >= 'a' && buf[n] <= 'f')))
        n++;
    if (n == 8) {
        memcpy(g_id.boot, buf, 8);
        g_id.boot[8] = '\0';
    }
    char link[64];
    ssize_t l = readlink("/proc/self/ns/pid", link, sizeof link - 1);
    if (l > 0) {
        link[l] = '\0';
        unsigned long long ino = 0;
        if (sscanf(link, "pid:[%llu]", &ino) == 1)
            g_id.ns = ino;
    }
}

static const identity *self_identity(void)
{
    pthread_once(&g_id_once, read_identity);
    return &g_id;
}

/* Start time (field 22) and state (field 3) of process `pid`; false when
 * it does not exist or /proc cannot be read. */
static bool proc_stat(long pid, unsigned long long *start, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ppid …": comm may hold spaces and parentheses */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return false;
    p += 2;
    *state = *p;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return false;
        p++;
    }
    char *end;
    errno = 0;
    *start = strtoull(p, &end, 10);
    return errno == 0 && end != p;
}

int silt_scratch_name(char *out)
{
    const identity *id = self_identity();
    unsigned long long start = 0;
    char state;
    if (!proc_stat((long)getpid(), &start, &state))
        start = 0;
    char rnd[17];
    int rc = silt_random_hex(rnd, 8);
    if (rc)
        return rc;
    snprintf(out, SILT_SCRATCH_NAME_MAX, "%ld-%llu-%s-%llu-%s", (long)getpid(), start,
             id->boot[0] ? id->boot : "00000000", id->ns, rnd);
    return 0;
}

int silt_scratch_mkdir(const char *parent, char **out)
{
    *out = NULL;
    int rc = silt_fs_mkdirs(parent);
    for (int attempt = 0; rc == 0 && attempt < 16; attempt++) {
        char name[SILT_SCRATCH_NAME_MAX];
        if ((rc = silt_scratch_name(name)) != 0)
            break;
        char *p = silt_path_join(parent, name, NULL);
        if (!p)
            return silt_err(SILT_ENOMEM, "out of memory");
        if (mkdir(p, 0755) == 0) {
            *out = p;
            return 0;
        }
        int e = errno;
        free(p);
        if (e != EEXIST)
            return silt_err(SILT_EIO, "%s/%s: mkdir: %s", parent, name, strerror(e));
    }
    return rc ? rc : silt_err(SILT_EIO, "%s: cannot create a temporary directory", parent);
}

/* Parses "<pid>-<start>-<boot8>-<ns>-<hex16>". */
static bool parse_name(const char *name, long *pid, unsigned long long *start, char boot[9],
                       unsigned long long *ns)
{
    const char *p = name;
    char *end;
    unsigned long long v[2];
    for (int i = 0; i < 2; i++) {
        if (*p < '0' || *p > '9')
            return false;
        errno = 0;
        v[i] = strtoull(p, &end, 10);
        if (errno || *end != '-')
            return false;
        p = end + 1;
    }
    for (int i = 0; i < 8; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return false;
    memcpy(boot, p, 8);
    boot[8] = '\0';
    p += 8;
    if (*p++ != '-' || *p < '0' || *p > '9')
        return false;
    errno = 0;
    *ns = strtoull(p, &end, 10);
    if (errno || *end != '-')
        return false;
    p = end + 1;
    for (int i = 0; i < 16; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return false;
    if (p[16] != '\0' || v[0] == 0 || v[0] > 0x7fffffffULL || v[1] == 0) /* start 0: unknown */
        return false;
    *pid = (long)v[0];
    *start = v[1];
    return true;
}

silt_owner_state silt_scratch_owner(const char *name, long *pid_out)
{
    long pid;
    unsigned long long start, ns;
    char boot[9];
    if (!parse_name(name, &pid, &start, boot, &ns))
        return SILT_OWNER_UNKNOWN;
    if (pid_out)
        *pid_out = pid;
    const identity *id = self_identity();
    if (!id->boot[0] || !id->ns || strcmp(boot, id->boot) != 0 || ns != id->ns)
        return SILT_OWNER_UNKNOWN; /* another host, boot or container: cannot tell */
    unsigned long long now_start;
    char state;
    if (!proc_stat(pid, &now_start, &state)) {
        struct stat st;
        /* no such process — unless /proc itself is missing */
        return stat("/proc/self/stat", &st) == 0 ? SILT_OWNER_GONE : SILT_OWNER_UNKNOWN;
    }
    if (now_start != start || state == 'Z' || state == 'X')
        return SILT_OWNER_GONE; /* the pid was reused, or the owner is a zombie */
    return SILT_OWNER_ALIVE;
}
