/* bare_http.c — the baseline of bench_serve.sh: a bare libmicrohttpd server
 * answering every request with a static JSON body of about the size of a
 * Foundry Dataset object, answered on the second handler call (keep-alive).
 *
 *   bare_http PORT [pool|thread]   pool: epoll + a 2-thread pool (MHD's fastest);
 *                                  thread: one thread per connection (silt serve's model)
 * Prints "listening on http://127.0.0.1:PORT" and runs until SIGTERM.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BODY[] = "{\"rid\":\"ri.silt.main.dataset.5d0c6d7c-5f7a-8e43-9d0b-6c1e0e3f2a11\","
                           "\"name\":\"bench\",\"parentFolderRid\":\"ri.compass.main.folder.00000000-0000-0000-0000-000000000000\"}";

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *size, void **state)
{
    (void)cls, (void)url, (void)method, (void)version, (void)data;
    static int first;
    if (!*state) {
        *state = &first;
        return MHD_YES;
    }
    *size = 0;
    struct MHD_Response *r = MHD_create_response_from_buffer(sizeof BODY - 1, (void *)BODY, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bare_http PORT [pool|thread]\n");
        return 2;
    }
    unsigned port = (unsigned)atoi(argv[1]);
    int thread = argc > 2 && strcmp(argv[2], "thread") == 0;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d =
        thread ? MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer,
                                  NULL, MHD_OPTION_SOCK_ADDR, &a, MHD_OPTION_END)
               : MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, answer, NULL, MHD_OPTION_SOCK_ADDR, &a,
                                  MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "bare_http: cannot listen on port %u\n", port);
        return 1;
    }
    printf("listening on http://127.0.0.1:%u\n", port);
    fflush(stdout);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
