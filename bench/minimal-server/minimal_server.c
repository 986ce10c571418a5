/*
 * A minimal, fast MCP server for the client benchmarks (`cargo xtask
 * bench-compare`): newline-delimited JSON-RPC on stdin/stdout, one tool,
 * `echo`, which returns its `message` argument as text.
 *
 * It is deliberately not a general JSON parser: it finds the members it
 * needs (`id`, `method`, `protocolVersion`, `message`) by scanning the
 * request line, which is enough for the requests MCP clients send and keeps
 * the server's own cost per call at a few microseconds, so the client's
 * cost is what a benchmark against it shows.
 *
 * All complete lines read in one read(2) are answered with one write(2),
 * so pipelined requests are answered in batches.
 *
 * Usage: minimal-server [--init-delay-ms N] [--http PORT] [--revision R]
 *   --init-delay-ms N  sleep N ms (without using CPU) before answering
 *                      `initialize`, like a server that loads something
 *                      slow on start-up; at 2026-07-28, where there is no
 *                      handshake, before answering the first modern
 *                      request instead.
 *   --http PORT        serve streamable HTTP on 127.0.0.1:PORT, path /mcp,
 *                      instead of stdio: every POSTed request is answered
 *                      with one `application/json` response (202 for
 *                      notifications), GET is 405 (no server stream),
 *                      DELETE ends nothing and answers 200. One thread,
 *                      poll(2) over keep-alive connections, TCP_NODELAY and
 *                      TCP_QUICKACK.
 *   --revision R       the newest revision served: `2025-11-25` (the
 *                      default) or `2026-07-28`. At 2025-11-25 the server
 *                      knows no `server/discover` (-32601, so a client that
 *                      probes falls back to `initialize`) and answers
 *                      `initialize` with the version asked for if it knows
 *                      it, else 2025-11-25. At 2026-07-28 it also answers
 *                      `server/discover` (supportedVersions 2026-07-28 and
 *                      2025-11-25) and serves requests without a handshake:
 *                      a request whose `_meta` carries
 *                      `io.modelcontextprotocol/protocolVersion` is answered
 *                      statelessly (results with `resultType`, listings with
 *                      `ttlMs`/`cacheScope`, the server's identity in each
 *                      result's `_meta`; an unknown revision gets
 *                      UnsupportedProtocolVersion, -32022); over HTTP such
 *                      a request gets no session id, and an unknown method
 *                      404. `initialize` keeps working for older clients.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *out;
static size_t out_len, out_cap;

static void emit(const char *bytes, size_t len) {
    if (out_len + len > out_cap) {
        size_t cap = out_cap ? out_cap : 65536;
        while (cap < out_len + len) cap *= 2;
        out = realloc(out, cap);
        if (!out) exit(2);
        out_cap = cap;
    }
    memcpy(out + out_len, bytes, len);
    out_len += len;
}

static void emits(const char *s) { emit(s, strlen(s)); }

static void flush_out(void) {
    size_t done = 0;
    while (done < out_len) {
        ssize_t n = write(1, out + done, out_len - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            exit(0);
        }
        done += (size_t)n;
    }
    out_len = 0;
}

/* Finds `"key"` followed by optional spaces and a colon; returns the first
 * character of the value, or NULL. */
static const char *member(const char *line, const char *end, const char *key) {
    size_t key_len = strlen(key);
    for (const char *p = line; p + key_len + 2 < end; p++) {
        if (*p != '"' || memcmp(p + 1, key, key_len) != 0 || p[key_len + 1] != '"') continue;
        const char *q = p + key_len + 2;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (q < end && *q == ':') {
            q++;
            while (q < end && (*q == ' ' || *q == '\t')) q++;
            return q;
        }
    }
    return NULL;
}

/* The extent of a JSON scalar or string value starting at `value`. */
static size_t value_len(const char *value, const char *end) {
    const char *p = value;
    if (*p == '"') {
        for (p++; p < end; p++) {
            if (*p == '\\') { p++; continue; }
            if (*p == '"') return (size_t)(p + 1 - value);
        }
        return 0;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ') p++;
    return (size_t)(p - value);
}

static int init_delay_ms;

/* Serves 2026-07-28 as well (`--revision 2026-07-28`). */
static int modern_mode;

#define MODERN_VERSION "2026-07-28"
#define VERSION_KEY "io.modelcontextprotocol/protocolVersion"
/* What every modern result carries besides its own members. */
#define MODERN_TAIL ",\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"minimal-server\",\"version\":\"1.0.0\"}}"

/* Set by answer(): the request was a modern one (its `_meta` named a
 * revision) and, for HTTP, whether its method was unknown. */
static int answered_modern, answered_unknown;

static int is_known_legacy(const char *version, size_t len) {
    static const char *known[] = {"\"2025-11-25\"", "\"2025-06-18\"", "\"2025-03-26\"", "\"2024-11-05\""};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (len == strlen(known[i]) && memcmp(version, known[i], len) == 0) return 1;
    return 0;
}

static void answer(const char *line, const char *end) {
    answered_modern = answered_unknown = 0;
    const char *id = member(line, end, "id");
    const char *method = member(line, end, "method");
    if (!id || !method) return; /* notifications and responses */
    size_t id_len = value_len(id, end);
    size_t method_len = value_len(method, end);
    if (!id_len || !method_len) return;

    emits("{\"jsonrpc\":\"2.0\",\"id\":");
    emit(id, id_len);
#define IS(name) (method_len == sizeof(name) + 1 && memcmp(method + 1, name, sizeof(name) - 1) == 0)
    const char *revision = modern_mode ? member(line, end, VERSION_KEY) : NULL;
    if (revision) {
        size_t revision_len = value_len(revision, end);
        answered_modern = 1;
        if (revision_len != sizeof(MODERN_VERSION) + 1 || memcmp(revision + 1, MODERN_VERSION, sizeof(MODERN_VERSION) - 1) != 0) {
            emits(",\"error\":{\"code\":-32022,\"message\":\"unsupported protocol version\","
                  "\"data\":{\"supported\":[\"" MODERN_VERSION "\",\"2025-11-25\"],\"requested\":");
            if (*revision == '"') emit(revision, revision_len);
            else emits("null");
            emits("}}}\n");
            return;
        }
    }
    static int started;
    if (revision && !started && init_delay_ms > 0) {
        struct timespec delay = {init_delay_ms / 1000, (long)(init_delay_ms % 1000) * 1000000L};
        while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {}
    }
    if (revision) started = 1;
    const char *tail = revision ? MODERN_TAIL : "";
    if (IS("tools/call")) {
        const char *message = member(line, end, "message");
        emits(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
        if (message && *message == '"') emit(message, value_len(message, end));
        else emits("\"\"");
        emits("}]");
        emits(tail);
        emits("}}\n");
    } else if (modern_mode && IS("server/discover")) {
        emits(",\"result\":{\"supportedVersions\":[\"" MODERN_VERSION "\",\"2025-11-25\"],"
              "\"capabilities\":{\"tools\":{}},\"ttlMs\":0,\"cacheScope\":\"public\"" MODERN_TAIL "}}\n");
    } else if (IS("initialize")) {
        if (init_delay_ms > 0) {
            struct timespec delay = {init_delay_ms / 1000, (long)(init_delay_ms % 1000) * 1000000L};
            while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {}
        }
        /* The version asked for if it has a handshake and is known, else
         * the newest with one (a newer client then decides). */
        const char *version = member(line, end, "protocolVersion");
        size_t version_len = version ? value_len(version, end) : 0;
        emits(",\"result\":{\"protocolVersion\":");
        if (version && *version == '"' && is_known_legacy(version, version_len)) emit(version, version_len);
        else emits("\"2025-11-25\"");
        emits(",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"minimal-server\",\"version\":\"1.0.0\"}}}\n");
    } else if (IS("tools/list")) {
        emits(",\"result\":{\"tools\":[{\"name\":\"echo\",\"description\":\"Echoes back the input\","
              "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
              "\"description\":\"Message to echo\"}},\"required\":[\"message\"]}}]");
        if (revision) emits(",\"ttlMs\":0,\"cacheScope\":\"public\"");
        emits(tail);
        emits("}}\n");
    } else if (IS("ping")) {
        emits(",\"result\":{}}\n");
    } else {
        answered_unknown = 1;
        emits(",\"error\":{\"code\":-32601,\"message\":\"method not found\"}}\n");
    }
#undef IS
}

struct conn {
    int fd;
    char *in;
    size_t in_len, in_cap;
    char *pending;
    size_t pending_len, pending_cap;
};

static void conn_append(struct conn *c, const char *bytes, size_t len) {
    if (c->pending_len + len > c->pending_cap) {
        size_t cap = c->pending_cap ? c->pending_cap : 16384;
        while (cap < c->pending_len + len) cap *= 2;
        c->pending = realloc(c->pending, cap);
        if (!c->pending) exit(2);
        c->pending_cap = cap;
    }
    memcpy(c->pending + c->pending_len, bytes, len);
    c->pending_len += len;
}

/* Case-insensitive search for a header's value within the head. */
static const char *header(const char *head, const char *end, const char *name) {
    size_t name_len = strlen(name);
    for (const char *p = head; p + name_len + 1 < end; p++) {
        if ((p == head || p[-1] == '\n') && strncasecmp(p, name, name_len) == 0 && p[name_len] == ':') {
            p += name_len + 1;
            while (p < end && *p == ' ') p++;
            return p;
        }
    }
    return NULL;
}

/* Answers every complete request in the connection's buffer; returns -1
 * when the connection must close. */
static int serve_requests(struct conn *c) {
    size_t start = 0;
    for (;;) {
        char *head = c->in + start;
        size_t avail = c->in_len - start;
        char *head_end = NULL;
        for (size_t i = 3; i < avail; i++) {
            if (head[i] == '\n' && head[i - 1] == '\r' && head[i - 2] == '\n' && head[i - 3] == '\r') {
                head_end = head + i + 1;
                break;
            }
        }
        if (!head_end) break;
        const char *length_value = header(head, head_end, "content-length");
        size_t body_len = length_value ? (size_t)strtoul(length_value, NULL, 10) : 0;
        if ((size_t)(head_end - head) + body_len > avail) break;
        char *body = head_end;
        char reply_head[256];
        if (strncmp(head, "POST ", 5) == 0) {
            out_len = 0;
            int is_initialize = member(body, body + body_len, "method") &&
                                memmem(body, body_len, "\"initialize\"", 12) != NULL;
            answer(body, body + body_len);
            if (out_len == 0) {
                const char *accepted = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
                conn_append(c, accepted, strlen(accepted));
            } else {
                /* Modern requests are stateless: no session id, and an
                 * unknown method is a 404 (the spec's Protocol Version
                 * Header section). */
                const char *status = answered_modern && answered_unknown ? "404 Not Found" : "200 OK";
                int n = snprintf(reply_head, sizeof reply_head,
                                 "HTTP/1.1 %s\r\ncontent-type: application/json\r\n%scontent-length: %zu\r\n\r\n",
                                 status, is_initialize ? "mcp-session-id: bench-session\r\n" : "", out_len - 1);
                conn_append(c, reply_head, (size_t)n);
                conn_append(c, out, out_len - 1);
            }
        } else if (strncmp(head, "DELETE ", 7) == 0) {
            const char *ok = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
            conn_append(c, ok, strlen(ok));
        } else {
            const char *no = "HTTP/1.1 405 Method Not Allowed\r\nallow: POST, DELETE\r\ncontent-length: 0\r\n\r\n";
            conn_append(c, no, strlen(no));
        }
        start += (size_t)(head_end - head) + body_len;
    }
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    return 0;
}

static int serve_http(int port) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 128) != 0) {
        perror("minimal-server: listen");
        return 1;
    }
    fcntl(listener, F_SETFL, O_NONBLOCK);
    size_t count = 0, cap = 16;
    struct conn *conns = calloc(cap, sizeof *conns);
    struct pollfd *fds = calloc(cap + 1, sizeof *fds);
    if (!conns || !fds) return 2;
    for (;;) {
        fds[0].fd = listener;
        fds[0].events = POLLIN;
        for (size_t i = 0; i < count; i++) {
            fds[i + 1].fd = conns[i].fd;
            fds[i + 1].events = POLLIN | (conns[i].pending_len ? POLLOUT : 0);
            fds[i + 1].revents = 0;
        }
        if (poll(fds, count + 1, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        for (size_t i = count; i-- > 0;) {
            struct conn *c = &conns[i];
            int dead = 0;
            if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (c->in_cap - c->in_len < 65536) {
                    c->in_cap = c->in_cap * 2 + 65536;
                    c->in = realloc(c->in, c->in_cap);
                    if (!c->in) return 2;
                }
                ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
                if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) dead = 1;
                else if (n > 0) {
                    /* ACK at once: a client that writes head and body
                     * separately would otherwise wait for a delayed ACK. */
                    setsockopt(c->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
                    c->in_len += (size_t)n;
                    serve_requests(c);
                }
            }
            if (!dead && c->pending_len) {
                ssize_t n = write(c->fd, c->pending, c->pending_len);
                if (n < 0 && errno != EAGAIN && errno != EINTR) dead = 1;
                else if (n > 0) {
                    memmove(c->pending, c->pending + n, c->pending_len - (size_t)n);
                    c->pending_len -= (size_t)n;
                }
            }
            if (dead) {
                close(c->fd);
                free(c->in);
                free(c->pending);
                conns[i] = conns[--count];
            }
        }
        if (fds[0].revents & POLLIN) {
            int fd;
            while ((fd = accept(listener, NULL, NULL)) >= 0) {
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fcntl(fd, F_SETFL, O_NONBLOCK);
                if (count == cap) {
                    cap *= 2;
                    conns = realloc(conns, cap * sizeof *conns);
                    fds = realloc(fds, (cap + 1) * sizeof *fds);
                    if (!conns || !fds) return 2;
                }
                conns[count++] = (struct conn){.fd = fd};
            }
        }
    }
}

int main(int argc, char **argv) {
    int http_port = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--init-delay-ms") == 0 && i + 1 < argc) {
            init_delay_ms = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
            http_port = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--revision") == 0 && i + 1 < argc) {
            const char *revision = argv[++i];
            if (strcmp(revision, MODERN_VERSION) == 0) modern_mode = 1;
            else if (strcmp(revision, "2025-11-25") != 0) {
                fprintf(stderr, "minimal-server: unknown revision %s (2025-11-25, 2026-07-28)\n", revision);
                return 2;
            }
        } else {
            fprintf(stderr, "minimal-server: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (http_port) return serve_http(http_port);
    size_t cap = 1 << 16, len = 0;
    char *in = malloc(cap);
    if (!in) return 2;
    for (;;) {
        if (len == cap) {
            cap *= 2;
            in = realloc(in, cap);
            if (!in) return 2;
        }
        ssize_t n = read(0, in + len, cap - len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (n == 0) return 0;
        len += (size_t)n;
        char *start = in, *stop = in + len, *nl;
        while ((nl = memchr(start, '\n', (size_t)(stop - start))) != NULL) {
            answer(start, nl);
            start = nl + 1;
        }
        flush_out();
        len = (size_t)(stop - start);
        memmove(in, start, len);
    }
}
