/* server.h — `silt serve`: the entry point the CLI calls (cli/cmd_serve.c).
 * The server answers over HTTP with the same library calls the CLI makes
 * (include/silt.h only): see docs/server.md.
 */
#ifndef SILT_SERVER_H
#define SILT_SERVER_H

#include <stddef.h>
#include <stdint.h>

typedef struct silt_server_opts {
    const char *listen;            /* "HOST:PORT" ("[v6]:PORT"); NULL = 127.0.0.1:8080; port 0 = any free port */
    const char *workspace;         /* directory holding .silt (NULL: discovered as the CLI does) */
    uint64_t max_upload;           /* largest request body accepted (bytes); 0 = default 16 GiB */
    const char *const *origins;    /* --allow-origin values ("*" = any) */
    size_t norigins;
    unsigned connection_timeout;   /* seconds a connection may stay idle; 0 = default 60 */
} silt_server_opts;

/* Runs the server until SIGTERM or SIGINT: prints "listening on
 * http://HOST:PORT" on stdout once it accepts connections, logs one line
 * per request on stderr, and stops gracefully. Returns a process exit code
 * (0 after a clean stop, 1 when it could not start; the reason is printed on
 * stderr). */
int silt_server_run(const silt_server_opts *o);

#endif
