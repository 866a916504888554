/*
 * httpload: a small keep-alive HTTP/1.1 load generator for what wrk cannot measure: HEAD
 * requests (wrk's parser waits for the body a HEAD response announces, wg/wrk#198). It keeps
 * CONNS connections busy over THREADS threads for SECONDS, each connection rotating over the
 * paths of PATHS_FILE (one per line, starting at a different one), and prints its results in
 * wrk's words (requests, Requests/sec, the 50% and 99% latency lines) so the same parser reads
 * both.
 *
 *   httpload HOST PORT CONNS THREADS SECONDS METHOD PATHS_FILE [HEADER_FILE]
 *
 * HEADER_FILE, when given, holds one extra header line per path (e.g. If-None-Match), in order.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUCKETS 100000 /* latency histogram: 10 µs buckets up to 1 s */

static char host[64];
static int port, conns, threads, seconds;
static const char *method;
static char **requests;
static int *request_lengths;
static int request_count;

typedef struct {
    int fd, next, sent, head_done;
    long body_left;
    uint64_t started;
    char buffer[16384];
    int have;
} conn_t;

typedef struct {
    int index, first, count;
    uint64_t done, errors, non2xx3xx;
    uint32_t *histogram;
} worker_t;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int open_connection(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, host, &address.sin_addr);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) return -1;
    return fd;
}

static void send_request(conn_t *c) {
    int i = c->next++ % request_count;
    c->started = now_ns();
    c->head_done = 0;
    c->have = 0;
    if (write(c->fd, requests[i], request_lengths[i]) != request_lengths[i]) c->sent = 0; else c->sent = 1;
}

/* Consumes what the buffer holds of the response; returns 1 when it is complete. */
static int consume(conn_t *c, worker_t *w) {
    if (!c->head_done) {
        char *end = memmem(c->buffer, c->have, "\r\n\r\n", 4);
        if (!end) return 0;
        int head = (int)(end - c->buffer) + 4;
        int status = atoi(c->buffer + 9);
        long length = 0;
        char *field = memmem(c->buffer, head, "\nContent-Length:", 16);
        if (!field) field = memmem(c->buffer, head, "\ncontent-length:", 16);
        if (field) length = atol(field + 16);
        int bodiless = strcmp(method, "HEAD") == 0 || status == 304 || status == 204 || status < 200;
        c->body_left = bodiless ? 0 : length;
        if (status < 200 || status > 399) w->non2xx3xx++;
        c->head_done = 1;
        memmove(c->buffer, c->buffer + head, c->have - head);
        c->have -= head;
    }
    long take = c->have < c->body_left ? c->have : c->body_left;
    c->body_left -= take;
    memmove(c->buffer, c->buffer + take, c->have - take);
    c->have -= (int)take;
    return c->body_left == 0;
}

static void *run(void *argument) {
    worker_t *w = argument;
    int epfd = epoll_create1(0);
    conn_t *cs = calloc(w->count, sizeof *cs);
    for (int k = 0; k < w->count; k++) {
        cs[k].fd = open_connection();
        cs[k].next = (w->first + k) * 37;
        struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = &cs[k]};
        epoll_ctl(epfd, EPOLL_CTL_ADD, cs[k].fd, &event);
    }
    uint64_t deadline = now_ns() + (uint64_t)seconds * 1000000000u;
    struct epoll_event events[256];
    while (now_ns() < deadline) {
        int n = epoll_wait(epfd, events, 256, 100);
        for (int e = 0; e < n; e++) {
            conn_t *c = events[e].data.ptr;
            if (!c->sent && (events[e].events & EPOLLOUT)) send_request(c);
            if (!(events[e].events & EPOLLIN)) continue;
            for (;;) {
                ssize_t got = read(c->fd, c->buffer + c->have, sizeof c->buffer - c->have);
                if (got <= 0) {
                    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) { w->errors++; close(c->fd); c->fd = -1; }
                    break;
                }
                c->have += (int)got;
                while (c->have > 0 && consume(c, w)) {
                    uint64_t micros = (now_ns() - c->started) / 1000;
                    uint64_t bucket = micros / 10;
                    w->histogram[bucket < BUCKETS ? bucket : BUCKETS - 1]++;
                    w->done++;
                    if (now_ns() >= deadline) break;
                    send_request(c);
                }
            }
        }
    }
    for (int k = 0; k < w->count; k++) if (cs[k].fd >= 0) close(cs[k].fd);
    free(cs);
    return NULL;
}

static char **read_lines(const char *path, int *count) {
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); exit(2); }
    char **lines = NULL, line[4096];
    *count = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        lines = realloc(lines, sizeof *lines * (*count + 1));
        lines[(*count)++] = strdup(line);
    }
    fclose(f);
    return lines;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: httpload HOST PORT CONNS THREADS SECONDS METHOD PATHS_FILE [HEADER_FILE]\n");
        return 2;
    }
    snprintf(host, sizeof host, "%s", argv[1]);
    port = atoi(argv[2]), conns = atoi(argv[3]), threads = atoi(argv[4]), seconds = atoi(argv[5]);
    method = argv[6];
    int header_count = 0;
    char **paths = read_lines(argv[7], &request_count);
    char **headers = argc > 8 ? read_lines(argv[8], &header_count) : NULL;
    requests = calloc(request_count, sizeof *requests);
    request_lengths = calloc(request_count, sizeof *request_lengths);
    for (int i = 0; i < request_count; i++) {
        char buffer[8192];
        request_lengths[i] = snprintf(buffer, sizeof buffer, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n%s%s\r\n", method,
                                      paths[i], host, port, i < header_count ? headers[i] : "",
                                      i < header_count ? "\r\n" : "");
        requests[i] = strdup(buffer);
    }
    pthread_t *ids = calloc(threads, sizeof *ids);
    worker_t *workers = calloc(threads, sizeof *workers);
    uint64_t started = now_ns();
    for (int t = 0; t < threads; t++) {
        workers[t].index = t;
        workers[t].first = t * conns / threads;
        workers[t].count = (t + 1) * conns / threads - workers[t].first;
        workers[t].histogram = calloc(BUCKETS, sizeof(uint32_t));
        pthread_create(&ids[t], NULL, run, &workers[t]);
    }
    uint64_t done = 0, errors = 0, bad = 0;
    uint64_t *histogram = calloc(BUCKETS, sizeof(uint64_t));
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        done += workers[t].done, errors += workers[t].errors, bad += workers[t].non2xx3xx;
        for (int b = 0; b < BUCKETS; b++) histogram[b] += workers[t].histogram[b];
    }
    double elapsed = (double)(now_ns() - started) / 1e9;
    printf("  %d threads and %d connections (httpload, %s)\n", threads, conns, method);
    printf("  Latency Distribution\n");
    double marks[] = {50, 75, 90, 99};
    for (int m = 0; m < 4; m++) {
        uint64_t target = (uint64_t)(done * marks[m] / 100.0), seen = 0;
        int b = 0;
        for (; b < BUCKETS; b++) { seen += histogram[b]; if (seen >= target && target > 0) break; }
        printf("    %2.0f%%  %.3fms\n", marks[m], (b * 10 + 5) / 1000.0);
    }
    printf("  %llu requests in %.2fs\n", (unsigned long long)done, elapsed);
    if (errors) printf("  Socket errors: read %llu\n", (unsigned long long)errors);
    if (bad) printf("  Non-2xx or 3xx responses: %llu\n", (unsigned long long)bad);
    printf("Requests/sec: %.2f\n", done / elapsed);
    return 0;
}
