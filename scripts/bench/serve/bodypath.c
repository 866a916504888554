/*
 * bodypath: the three ways to send a cached frame's body that `make bench-body-paths` compares,
 * in a minimal epoll HTTP/1.1 server (2 threads, keep-alive, GET only) serving every file under
 * DIR from memory at its path:
 *
 *   writev    head and body from user memory in one vectored sendmsg (the kernel copies the body
 *             into the socket);
 *   sendfile  the body copied once into a memfd, sent with sendfile(2) after the head (sent with
 *             MSG_MORE): the socket gets references to the memfd's pages, no copy;
 *   zerocopy  one sendmsg with MSG_ZEROCOPY (SO_ZEROCOPY on): pages pinned instead of copied,
 *             completions read from the socket's error queue;
 *   vmsplice  the head as for sendfile, the body's pages from the memfd's mapping put in a pipe
 *             of the connection's by vmsplice(2) (looked up in the page tables, not the file)
 *             and moved to the socket by splice(2), 64 KiB at a time.
 *
 *   bodypath DIR PORT MODE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

enum { WRITEV, SENDFILE, ZEROCOPY, VMSPLICE };
typedef struct { char path[512]; unsigned char *memory; size_t length; off_t offset; char head[256]; int headLength; } file_t;
typedef struct { int fd; char buffer[16384]; int have; file_t *pending; size_t sent, total; int zerocopySends; int pipe[2]; size_t inPipe; } conn_t;

static file_t files[1024];
static int fileCount, memfd, mode, listenFD;

static file_t *find(const char *path, int length) {
    for (int i = 0; i < fileCount; i++)
        if ((int)strlen(files[i].path) == length && memcmp(files[i].path, path, length) == 0) return &files[i];
    return NULL;
}

/* Sends what is left of the pending response: 1 when done, 0 on EAGAIN, -1 on error. */
static int sendPending(conn_t *c) {
    file_t *f = c->pending;
    while (c->sent < c->total) {
        ssize_t n;
        if (mode == VMSPLICE && c->sent >= (size_t)f->headLength) {
            size_t body = c->sent - f->headLength;
            if (c->inPipe == 0) {
                size_t want = f->length - body;
                if (want > 65536) want = 65536;
                struct iovec v = {f->memory + body, want};
                ssize_t put = vmsplice(c->pipe[1], &v, 1, 0);
                if (put < 0) return -1;
                c->inPipe = (size_t)put;
            }
            int more = body + c->inPipe < f->length;
            n = splice(c->pipe[0], NULL, c->fd, NULL, c->inPipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK | (more ? SPLICE_F_MORE : 0));
            if (n > 0) c->inPipe -= (size_t)n;
        } else if (mode == SENDFILE || mode == VMSPLICE) {
            if (c->sent < (size_t)f->headLength) {
                n = send(c->fd, f->head + c->sent, f->headLength - c->sent, MSG_NOSIGNAL | MSG_MORE);
            } else {
                off_t offset = f->offset + (off_t)(c->sent - f->headLength);
                n = sendfile(c->fd, memfd, &offset, f->length - (c->sent - f->headLength));
            }
        } else {
            struct iovec v[2];
            int k = 0;
            if (c->sent < (size_t)f->headLength) {
                v[k++] = (struct iovec){f->head + c->sent, f->headLength - c->sent};
                v[k++] = (struct iovec){f->memory, f->length};
            } else {
                v[k++] = (struct iovec){f->memory + (c->sent - f->headLength), f->length - (c->sent - f->headLength)};
            }
            struct msghdr m = {.msg_iov = v, .msg_iovlen = k};
            n = sendmsg(c->fd, &m, MSG_NOSIGNAL | (mode == ZEROCOPY ? MSG_ZEROCOPY : 0));
            if (n > 0 && mode == ZEROCOPY) c->zerocopySends++;
        }
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        c->sent += (size_t)n;
    }
    c->pending = NULL;
    return 1;
}

/* Reads (and discards) MSG_ZEROCOPY completions. */
static void drainErrorQueue(conn_t *c) {
    char control[512];
    struct msghdr m = {.msg_control = control};
    for (;;) {
        m.msg_controllen = sizeof control;
        if (recvmsg(c->fd, &m, MSG_ERRQUEUE) < 0) break;
    }
    c->zerocopySends = 0;
}

static void closeConnection(conn_t *c) {
    close(c->fd);
    if (mode == VMSPLICE) { close(c->pipe[0]); close(c->pipe[1]); }
    free(c);
}

static void *loop(void *unused) {
    (void)unused;
    int epfd = epoll_create1(0);
    struct epoll_event listenEvent = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = NULL};
    epoll_ctl(epfd, EPOLL_CTL_ADD, listenFD, &listenEvent);
    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(epfd, events, 256, -1);
        for (int i = 0; i < n; i++) {
            conn_t *c = events[i].data.ptr;
            if (!c) {
                for (;;) {
                    int fd = accept4(listenFD, NULL, NULL, SOCK_NONBLOCK);
                    if (fd < 0) break;
                    int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    if (mode == ZEROCOPY) setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one);
                    conn_t *fresh = calloc(1, sizeof *fresh);
                    fresh->fd = fd;
                    if (mode == VMSPLICE && pipe2(fresh->pipe, O_NONBLOCK | O_CLOEXEC)) { perror("pipe2"); exit(1); }
                    struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.ptr = fresh};
                    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
                }
                continue;
            }
            if ((events[i].events & EPOLLERR) && mode == ZEROCOPY) drainErrorQueue(c);
            if (c->pending) {
                int r = sendPending(c);
                if (r < 0) { closeConnection(c); continue; }
                if (r == 0) continue;
            }
            int dead = 0;
            while (!dead && !c->pending) {
                ssize_t got = read(c->fd, c->buffer + c->have, sizeof c->buffer - c->have);
                if (got == 0 || (got < 0 && errno != EAGAIN)) { dead = 1; break; }
                if (got < 0) break;
                c->have += (int)got;
                for (;;) {
                    char *end = memmem(c->buffer, c->have, "\r\n\r\n", 4);
                    if (!end) break;
                    char *space = memchr(c->buffer, ' ', end - c->buffer);
                    char *space2 = space ? memchr(space + 1, ' ', end - space - 1) : NULL;
                    file_t *f = space2 ? find(space + 1, (int)(space2 - space - 1)) : NULL;
                    int used = (int)(end + 4 - c->buffer);
                    memmove(c->buffer, end + 4, c->have - used);
                    c->have -= used;
                    if (!f) { dead = 1; break; }
                    c->pending = f;
                    c->sent = 0;
                    c->total = f->headLength + f->length;
                    int r = sendPending(c);
                    if (r < 0) { dead = 1; break; }
                    if (r == 0) break;
                }
            }
            if (dead) { closeConnection(c); continue; }
            if (mode == ZEROCOPY && c->zerocopySends > 64) drainErrorQueue(c);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: bodypath DIR PORT writev|sendfile|zerocopy|vmsplice\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    const char *dir = argv[1];
    static const char *names[] = {[WRITEV] = "writev", [SENDFILE] = "sendfile", [ZEROCOPY] = "zerocopy", [VMSPLICE] = "vmsplice"};
    mode = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++) if (!strcmp(argv[3], names[i])) mode = i;
    if (mode < 0) { fprintf(stderr, "bodypath: unknown mode %s (writev, sendfile, zerocopy or vmsplice)\n", argv[3]); return 2; }
    memfd = memfd_create("frames", MFD_CLOEXEC);
    off_t offset = 0;
    char command[512];
    snprintf(command, sizeof command, "cd '%s' && find . -type f | sort", dir);
    FILE *list = popen(command, "r");
    char line[512];
    while (fileCount < 1024 && fgets(line, sizeof line, list)) {
        line[strcspn(line, "\n")] = 0;
        file_t *f = &files[fileCount++];
        snprintf(f->path, sizeof f->path, "%s", line + 1);
        char full[1024];
        snprintf(full, sizeof full, "%s%s", dir, f->path);
        FILE *in = fopen(full, "rb");
        fseek(in, 0, SEEK_END);
        f->length = (size_t)ftell(in);
        fseek(in, 0, SEEK_SET);
        f->memory = aligned_alloc(4096, (f->length + 4095) & ~(size_t)4095);
        if (fread(f->memory, 1, f->length, in) != f->length) return 1;
        fclose(in);
        f->offset = offset;
        if (pwrite(memfd, f->memory, f->length, offset) != (ssize_t)f->length) return 1;
        offset += (off_t)((f->length + 4095) & ~(size_t)4095);
        f->headLength = snprintf(f->head, sizeof f->head, "HTTP/1.1 200 OK\r\nServer: bodypath\r\nContent-Type: image/png\r\n"
                                 "Content-Length: %zu\r\nETag: \"f-0123456789abcdef0123456789abcdef-1-z1\"\r\n\r\n", f->length);
    }
    pclose(list);
    if (mode == VMSPLICE) {
        unsigned char *mapping = mmap(NULL, (size_t)offset, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
        if (mapping == MAP_FAILED) { perror("mmap"); return 1; }
        for (int i = 0; i < fileCount; i++) files[i].memory = mapping + files[i].offset;
    }
    listenFD = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(listenFD, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[2])), .sin_addr.s_addr = htonl(0x7f000001)};
    if (bind(listenFD, (struct sockaddr *)&address, sizeof address) || listen(listenFD, 4096)) { perror("bind"); return 1; }
    fprintf(stderr, "bodypath: %d files, %s\n", fileCount, argv[3]);
    pthread_t second;
    pthread_create(&second, NULL, loop, NULL);
    loop(NULL);
    return 0;
}
