/*
 * fleetagents: bench/fleet's load generator, a fleet of Rudder agents talking to one policy server as the real ones
 * do. It replays a schedule written by the Java orchestrator (which decides when each node runs, from its run
 * interval and splay) so the server sees what a fleet sends it: many short HTTPS connections, one per request, as
 * rudder-client runs one curl process per request (bin/rudder-client, agent-update, report.sh, do-inventory):
 *
 *   policy update (the node's own client certificate and key):
 *     GET /common/policies-library-linux.tar.bz2   If-None-Match: <the node's ETag of its last 200>, if any
 *     GET /policies/<node_id>/rules/rudder.tar.bz2  the same, with the node's own ETag; 200 (new ETag) or 304
 *     A failed download stops the update; it is tried again at the next one, the ETag staying the old one.
 *   report (no client certificate, HTTP Basic rudder:rudder):
 *     PUT /reports/<ISO 8601>@<node_id>.log.gz, --report-bytes of pseudo-random bytes, 2xx. A report that fails
 *     stays in the node's reports/ready and is sent again (same name, oldest first, each on its own connection) at
 *     its next run, as Rudder's send_rudder_report does for each file it finds there.
 *   inventory (no client certificate, HTTP Basic rudder:rudder), stopping at the first failure:
 *     GET /uuid (200), PUT /inventory-updates/<node_id>_<ISO 8601>.ocs.gz (--inventory-bytes), then .ocs.sign
 *     (2048 bytes), each 2xx.
 *
 * A run is a policy update then the report(s), in one worker; it fails if any of its requests fails (an agent runs
 * its cached policies and reports even when its update failed). Every connection: a new TCP connection, from the node's own
 * loopback address (127.1.0.0 + index + 1: one client address per node, as each node is its own host), with
 * TCP_NODELAY (curl sets it) and 60 s send and receive timeouts (connect() gives up after the send timeout), a full
 * TLS 1.3 handshake (no session reuse, tickets accepted as curl accepts them), the server's public key checked
 * against the node's pin as curl --pinnedpubkey does ("sha256//" + base64 of the SHA-256 of the certificate's DER
 * SubjectPublicKeyInfo, several pins separated by ';'), one HTTP/1.1 request with "Connection: close", the answer
 * read to its Content-Length (to the close without one), then close.
 *
 * Open loop bounded by --threads: each worker takes the next schedule entry, sleeps until its time and does it. When
 * all workers are busy an entry starts late; its requests' latency counts from its scheduled time, and each output
 * line carries both times. Lines "update <node_index>" on stdin (the orchestrator publishing a new generation for
 * a node) are done as soon as possible by a separate pool of --update-threads workers, scheduled when read.
 *
 * Usage: fleetagents --nodes FILE --schedule FILE --out FILE [--threads 512] [--update-threads 16] [--prime]
 *                    [--duration SECONDS] [--report-bytes 16384] [--inventory-bytes 204800] [--grace SECONDS]
 *                    [--user USER:PASSWORD]
 *
 * Inputs: --nodes, TSV "index node_id host(IPv4) port pem_path pin" (pem_path: the private key, PKCS#8 or
 * traditional, then the certificate; files shared by several nodes are loaded once); --schedule, TSV sorted by
 * time "t_ms node_index kind", kind run or inventory, t_ms from the start. With --prime every node first does one
 * policy update (kinds prime-common and prime-policies) as fast as the workers go, to hold its ETags as agents in
 * steady state do. The start is then now + 1 s, printed on stdout as start_epoch_ms=<ms since the epoch>.
 *
 * Output (--out, one line per request as they finish, flushed every second):
 *   sched_ms start_ms connected_ms handshake_ms end_ms node_index kind status bytes new_etag error
 * times in ms since the epoch with 3 decimals (CLOCK_REALTIME at the start, then CLOCK_MONOTONIC, so durations are
 * exact), 0.000 for a phase not reached (connected_ms after a failed connect, handshake_ms after a failed handshake);
 * kind: prime-common, prime-policies, common, policies, report, uuid, inventory, inventory-sign, update-common,
 * update-policies; status: the HTTP status, 0 when none was read; bytes: response body bytes read; new_etag: 1 when
 * a 200 changed the node's saved ETag and it had one; error: "-" or a token (connect, timeout, tls, pin, status, io)
 * then a detail, without tabs. stderr: every 10 s "t=… done=… failed=… inflight=… late_p99_ms=…" (lateness of the
 * schedule entries started in those 10 s; "prime …" lines while priming). stdout at the end: "summary runs=…
 * runs_failed=… inventories=… inventories_failed=… updates=… updates_failed=… requests=… request_errors=…
 * primes=… primes_failed=…". The end: every entry scheduled before --duration done (entries start late when every
 * worker is busy, but none is dropped), or
 * SIGTERM/SIGINT: no new entry starts, the ones in flight get --grace seconds (default 5), then everything
 * recorded is written and the exit status is 0.
 *
 * The server is not authenticated other than by its pin (curl --insecure --pinnedpubkey): loopback, a server this
 * harness started.
 *
 * Build: gcc -O2 -o fleetagents fleetagents.c -lssl -lcrypto -lpthread -lm
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define SIGN_BYTES 2048
#define LOCK_STRIPES 1024

enum kind {
    K_PRIME_COMMON, K_PRIME_POLICIES, K_COMMON, K_POLICIES, K_REPORT, K_UUID, K_INVENTORY, K_INVENTORY_SIGN,
    K_UPDATE_COMMON, K_UPDATE_POLICIES
};
static const char *kind_names[] = {
    "prime-common", "prime-policies", "common", "policies", "report", "uuid", "inventory", "inventory-sign",
    "update-common", "update-policies"
};

/* A report kept in the node's reports/ready: its name's timestamp. */
struct report {
    char stamp[32];
    struct report *next;
};

struct node {
    char *id;
    struct sockaddr_in address;
    struct sockaddr_in source; /* its own loopback address, as each node is its own host */
    char host_header[64];
    X509 *certificate;
    EVP_PKEY *key;
    char *pin;
    /* Guarded by the node's stripe of node_locks. */
    char *etag[2]; /* 0: common, 1: policies */
    struct report *ready; /* oldest first */
};

/* One schedule entry. */
struct entry {
    int64_t t_ms;
    int32_t node;
    char inventory;
};

/* What one request did, as written to the output. */
struct record {
    double sched, start, connected, handshaken, end;
    int status;
    long bytes;
    int new_etag;
    char error[160];
};

static SSL_CTX *ctx;
static struct node *nodes;
static long node_count; /* highest index + 1 */
static char *node_present;
static struct entry *schedule;
static long schedule_count;
static atomic_long next_entry, next_prime;
static pthread_mutex_t node_locks[LOCK_STRIPES];
static long report_bytes = 16384, inventory_bytes = 204800;
static unsigned char *payload;
static double duration = -1, grace = 5;
/* "Authorization: Basic …\r\n" of --user, rudder:rudder by default (Rudder's DAVUSER and DAVPW). */
static char authorization[512] = "Authorization: Basic cnVkZGVyOnJ1ZGRlcg==\r\n";

/* Clock: realtime at the program's start, then monotonic, so durations are exact and times comparable. */
static double realtime0_ms, mono0;
static double start_mono; /* the schedule's t = 0 */

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_int stopping;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond;

/* Counters, under stats_lock. */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static long runs, runs_failed, inventories, inventories_failed, updates, updates_failed, requests, request_errors,
        primes, primes_failed, inflight;
static double *late_window;
static long late_count, late_capacity;

/* Updates asked on stdin, a FIFO under update_lock. */
struct update {
    int32_t node;
    double sched;
    struct update *next;
};
static struct update *update_head, *update_tail;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t update_cond;
static int updates_closed;

static double mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Milliseconds since the epoch, of a monotonic time. */
static double epoch_ms(double monotonic) {
    return realtime0_ms + (monotonic - mono0) * 1000.0;
}

static pthread_mutex_t *node_lock(long index) {
    return &node_locks[index % LOCK_STRIPES];
}

/* Sleeps until the monotonic time when; returns early (nonzero) when stopping. */
static int sleep_until(double when) {
    pthread_mutex_lock(&stop_lock);
    while (!stopping && mono() < when) {
        struct timespec t = {.tv_sec = (time_t) when, .tv_nsec = (long) ((when - (double) (time_t) when) * 1e9)};
        pthread_cond_timedwait(&stop_cond, &stop_lock, &t);
    }
    int stop = stopping;
    pthread_mutex_unlock(&stop_lock);
    return stop;
}

static void set_error(struct record *r, const char *token, const char *detail) {
    snprintf(r->error, sizeof r->error, "%s%s%s", token, detail && detail[0] ? " " : "", detail ? detail : "");
    for (char *c = r->error; *c; c++) {
        if (*c == '\t' || *c == '\n' || *c == '\r') {
            *c = ' ';
        }
    }
}

/* The token and detail of a failed SSL call. */
static void ssl_error(struct record *r, SSL *ssl, int result, const char *what) {
    int e = SSL_get_error(ssl, result);
    unsigned long queued = ERR_peek_last_error();
    char detail[128];
    /* A socket timeout (SO_RCVTIMEO, SO_SNDTIMEO): EAGAIN, which OpenSSL takes for a retry on a blocking socket. */
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE
        || (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK))) {
        set_error(r, "timeout", what);
    } else if (e == SSL_ERROR_SYSCALL || (e == SSL_ERROR_SSL && queued == 0)) {
        snprintf(detail, sizeof detail, "%s: %s", what, errno ? strerror(errno) : "connection closed");
        set_error(r, strcmp(what, "handshake") == 0 ? "tls" : "io", detail);
    } else if (e == SSL_ERROR_ZERO_RETURN) {
        snprintf(detail, sizeof detail, "%s: connection closed", what);
        set_error(r, "io", detail);
    } else {
        const char *reason = queued ? ERR_reason_error_string(queued) : NULL;
        snprintf(detail, sizeof detail, "%s: %s", what, reason ? reason : "ssl error");
        set_error(r, strcmp(what, "handshake") == 0 ? "tls" : "io", detail);
    }
    ERR_clear_error();
}

/* Whether the server certificate's public key matches the pin list ("sha256//…;sha256//…"). */
static int pin_matches(SSL *ssl, const char *pins, char *seen, size_t seen_size) {
    X509 *certificate = SSL_get1_peer_certificate(ssl);
    if (certificate == NULL) {
        snprintf(seen, seen_size, "no server certificate");
        return 0;
    }
    unsigned char *der = NULL;
    int length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der);
    X509_free(certificate);
    if (length <= 0) {
        snprintf(seen, seen_size, "no public key");
        return 0;
    }
    unsigned char digest[32];
    unsigned int digest_length = 0;
    EVP_Digest(der, (size_t) length, digest, &digest_length, EVP_sha256(), NULL);
    OPENSSL_free(der);
    char encoded[64];
    EVP_EncodeBlock((unsigned char *) encoded, digest, (int) digest_length);
    snprintf(seen, seen_size, "sha256//%s", encoded);
    size_t n = strlen(seen);
    for (const char *p = pins; p && *p;) {
        const char *end = strchr(p, ';');
        size_t l = end ? (size_t) (end - p) : strlen(p);
        if (l == n && strncmp(p, seen, n) == 0) {
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/*
 * One request on a new connection: head (the request line and headers, without the final empty line's CRLF
 * after Connection: close which this adds), body_length bytes of payload, the answer read. Fills r (but not
 * sched); returns the HTTP status (0 on failure). With etag, the answer's ETag header is copied there.
 */
static int exchange(struct node *node, int client_certificate, const char *head, long body_length,
                    struct record *r, char *etag, size_t etag_size) {
    r->start = mono();
    r->connected = r->handshaken = 0;
    r->status = 0;
    r->bytes = 0;
    strcpy(r->error, "-");
    if (etag) {
        etag[0] = 0;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        set_error(r, "connect", strerror(errno));
        r->end = mono();
        return 0;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval timeout = {.tv_sec = 60};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (bind(fd, (struct sockaddr *) &node->source, sizeof node->source) != 0) {
        set_error(r, "connect", strerror(errno));
        close(fd);
        r->end = mono();
        return 0;
    }
    if (connect(fd, (struct sockaddr *) &node->address, sizeof node->address) != 0) {
        int e = errno;
        set_error(r, e == EINPROGRESS || e == EAGAIN || e == ETIMEDOUT ? "timeout" : "connect",
                  e == EINPROGRESS || e == EAGAIN ? "connect" : strerror(e));
        close(fd);
        r->end = mono();
        return 0;
    }
    r->connected = mono();
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (client_certificate && (SSL_use_certificate(ssl, node->certificate) != 1
                               || SSL_use_PrivateKey(ssl, node->key) != 1)) {
        set_error(r, "tls", "client certificate or key refused");
        ERR_clear_error();
        goto done;
    }
    errno = 0;
    int result = SSL_connect(ssl);
    if (result != 1) {
        ssl_error(r, ssl, result, "handshake");
        goto done;
    }
    r->handshaken = mono();
    char seen[80];
    if (!pin_matches(ssl, node->pin, seen, sizeof seen)) {
        set_error(r, "pin", seen);
        goto done;
    }
    char request[2048];
    int length = snprintf(request, sizeof request, "%sHost: %s\r\nUser-Agent: fleetagents\r\nAccept: */*\r\n"
                          "Connection: close\r\n\r\n", head, node->host_header);
    errno = 0;
    result = SSL_write(ssl, request, length);
    int write_failed = 0;
    if (result != length) {
        ssl_error(r, ssl, result, "write");
        goto done;
    }
    for (long sent = 0; sent < body_length;) {
        int chunk = (int) (body_length - sent > 16384 ? 16384 : body_length - sent);
        errno = 0;
        result = SSL_write(ssl, payload + sent, chunk);
        if (result <= 0) {
            /* The server may have answered early (401, 413) and closed: that answer is the better error. */
            ssl_error(r, ssl, result, "write");
            write_failed = 1;
            break;
        }
        sent += result;
    }
    char buffer[16384];
    size_t have = 0;
    long content_length = -1, body = 0;
    int header_done = 0, status = 0, closed = 0;
    for (;;) {
        char *into = header_done ? buffer : buffer + have;
        int room = header_done ? (int) sizeof buffer - 1 : (int) (sizeof buffer - 1 - have);
        if (room <= 0) {
            set_error(r, "io", "response header too long");
            goto done;
        }
        errno = 0;
        int n = SSL_read(ssl, into, room);
        if (n <= 0) {
            int e = SSL_get_error(ssl, n);
            if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
                closed = 1;
            } else if (!write_failed) {
                ssl_error(r, ssl, n, "read");
                r->status = status;
                r->bytes = body;
                goto done;
            }
            ERR_clear_error();
            break;
        }
        if (header_done) {
            body += n;
        } else {
            have += (size_t) n;
            buffer[have] = 0;
            char *end = strstr(buffer, "\r\n\r\n");
            if (end) {
                header_done = 1;
                sscanf(buffer, "HTTP/%*s %d", &status);
                for (char *line = strstr(buffer, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
                    if (strncasecmp(line + 2, "Content-Length:", 15) == 0) {
                        content_length = atol(line + 17);
                    } else if (etag && strncasecmp(line + 2, "ETag:", 5) == 0) {
                        const char *v = line + 7;
                        while (*v == ' ' || *v == '\t') {
                            v++;
                        }
                        size_t l = strcspn(v, "\r");
                        if (l >= etag_size) {
                            l = etag_size - 1;
                        }
                        memcpy(etag, v, l);
                        etag[l] = 0;
                    }
                }
                if (content_length < 0 && (status == 304 || status == 204 || (status >= 100 && status < 200))) {
                    content_length = 0;
                }
                body = (long) (have - (size_t) (end + 4 - buffer));
            }
        }
        if (header_done && content_length >= 0 && body >= content_length) {
            break;
        }
    }
    r->status = status;
    r->bytes = body;
    if (!header_done) {
        if (!write_failed) {
            set_error(r, "io", closed ? "closed before the response header" : "no response header");
        }
        r->status = 0;
        goto done;
    }
    if (content_length >= 0 && body < content_length) {
        char detail[96];
        snprintf(detail, sizeof detail, "closed after %ld of %ld body bytes", body, content_length);
        set_error(r, "io", detail);
        goto done;
    }
    strcpy(r->error, "-"); /* a complete answer, even after a failed write */
done:
    SSL_free(ssl);
    close(fd);
    r->end = mono();
    return strcmp(r->error, "-") == 0 ? r->status : 0;
}

/* Writes one output line and counts the request; returns whether it failed. */
static int record(const struct record *r, long node, enum kind kind) {
    int failed = strcmp(r->error, "-") != 0;
    char line[512];
    int n = snprintf(line, sizeof line, "%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%ld\t%s\t%d\t%ld\t%d\t%s\n",
                     epoch_ms(r->sched), epoch_ms(r->start), r->connected ? epoch_ms(r->connected) : 0,
                     r->handshaken ? epoch_ms(r->handshaken) : 0, epoch_ms(r->end), node, kind_names[kind],
                     r->status, r->bytes, r->new_etag, r->error);
    pthread_mutex_lock(&out_lock);
    fwrite(line, 1, (size_t) n, out);
    pthread_mutex_unlock(&out_lock);
    pthread_mutex_lock(&stats_lock);
    requests++;
    request_errors += failed;
    pthread_mutex_unlock(&stats_lock);
    return failed;
}

/* Checks the status; on a wrong one, the error. Returns whether the request failed. */
static int expect(struct record *r, int ok) {
    if (strcmp(r->error, "-") == 0 && !ok) {
        char detail[32];
        snprintf(detail, sizeof detail, "%d", r->status);
        set_error(r, "status", detail);
    }
    return strcmp(r->error, "-") != 0;
}

/* One policy download: resource 0 (common) or 1 (policies). Returns whether it failed. */
static int download(long index, int resource, enum kind kind, double sched) {
    struct node *node = &nodes[index];
    char old[256] = "";
    pthread_mutex_lock(node_lock(index));
    if (node->etag[resource]) {
        snprintf(old, sizeof old, "%s", node->etag[resource]);
    }
    pthread_mutex_unlock(node_lock(index));
    char head[1024], condition[300] = "";
    if (old[0]) {
        snprintf(condition, sizeof condition, "If-None-Match: %s\r\n", old);
    }
    if (resource == 0) {
        snprintf(head, sizeof head, "GET /common/policies-library-linux.tar.bz2 HTTP/1.1\r\n%s", condition);
    } else {
        snprintf(head, sizeof head, "GET /policies/%s/rules/rudder.tar.bz2 HTTP/1.1\r\n%s", node->id, condition);
    }
    struct record r = {.sched = sched};
    char etag[256];
    exchange(node, 1, head, 0, &r, etag, sizeof etag);
    r.new_etag = 0;
    if (strcmp(r.error, "-") == 0 && r.status == 200 && etag[0]) {
        pthread_mutex_lock(node_lock(index));
        char *saved = node->etag[resource];
        if (saved == NULL || strcmp(saved, etag) != 0) {
            r.new_etag = saved != NULL;
            free(saved);
            node->etag[resource] = strdup(etag);
        }
        pthread_mutex_unlock(node_lock(index));
    }
    expect(&r, r.status == 200 || r.status == 304);
    return record(&r, index, kind);
}

/* A policy update: the common library then the node's policies, stopping at a failure. Returns whether failed. */
static int policy_update(long index, enum kind common, double sched) {
    return download(index, 0, common, sched) || download(index, 1, (enum kind) (common + 1), sched);
}

static void iso8601(double monotonic, char *into, size_t size) {
    time_t seconds = (time_t) (epoch_ms(monotonic) / 1000.0);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    strftime(into, size, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
}

static int put(long index, const char *path, long length, enum kind kind, double sched) {
    char head[1024];
    snprintf(head, sizeof head, "PUT %s HTTP/1.1\r\n%sContent-Length: %ld\r\n", path, authorization, length);
    struct record r = {.sched = sched};
    exchange(&nodes[index], 0, head, length, &r, NULL, 0);
    expect(&r, r.status >= 200 && r.status < 300);
    return record(&r, index, kind);
}

/* A run: the policy update, then every report in reports/ready, this run's last. Returns whether it failed. */
static int run(long index, double sched) {
    struct node *node = &nodes[index];
    int failed = policy_update(index, K_COMMON, sched);
    struct report *mine = malloc(sizeof *mine);
    iso8601(sched, mine->stamp, sizeof mine->stamp);
    mine->next = NULL;
    /* Take the node's ready reports; the ones that fail go back, before any a concurrent run left. */
    pthread_mutex_lock(node_lock(index));
    struct report *ready = node->ready;
    node->ready = NULL;
    pthread_mutex_unlock(node_lock(index));
    struct report **tail = &ready;
    while (*tail) {
        tail = &(*tail)->next;
    }
    *tail = mine;
    struct report *kept = NULL, **kept_tail = &kept;
    for (struct report *report = ready, *next; report; report = next) {
        next = report->next;
        char path[512];
        snprintf(path, sizeof path, "/reports/%s@%s.log.gz", report->stamp, node->id);
        if (put(index, path, report_bytes, K_REPORT, sched)) {
            failed = 1;
            report->next = NULL;
            *kept_tail = report;
            kept_tail = &report->next;
        } else {
            free(report);
        }
    }
    if (kept) {
        pthread_mutex_lock(node_lock(index));
        *kept_tail = node->ready;
        node->ready = kept;
        pthread_mutex_unlock(node_lock(index));
    }
    return failed;
}

/* An inventory: GET /uuid, then the inventory and its signature, stopping at a failure. */
static int inventory(long index, double sched) {
    struct node *node = &nodes[index];
    struct record r = {.sched = sched};
    char head[600];
    snprintf(head, sizeof head, "GET /uuid HTTP/1.1\r\n%s", authorization);
    exchange(node, 0, head, 0, &r, NULL, 0);
    expect(&r, r.status == 200);
    if (record(&r, index, K_UUID)) {
        return 1;
    }
    char stamp[32], path[512];
    iso8601(sched, stamp, sizeof stamp);
    snprintf(path, sizeof path, "/inventory-updates/%s_%s.ocs.gz", node->id, stamp);
    if (put(index, path, inventory_bytes, K_INVENTORY, sched)) {
        return 1;
    }
    snprintf(path, sizeof path, "/inventory-updates/%s_%s.ocs.sign", node->id, stamp);
    return put(index, path, SIGN_BYTES, K_INVENTORY_SIGN, sched);
}

static void count(long *done, long *failed_count, int failed) {
    pthread_mutex_lock(&stats_lock);
    (*done)++;
    *failed_count += failed;
    inflight--;
    pthread_mutex_unlock(&stats_lock);
}

static void *prime_worker(void *unused) {
    (void) unused;
    for (;;) {
        long i = atomic_fetch_add(&next_prime, 1);
        if (i >= node_count || stopping) {
            return NULL;
        }
        if (!node_present[i]) {
            continue;
        }
        pthread_mutex_lock(&stats_lock);
        inflight++;
        pthread_mutex_unlock(&stats_lock);
        int failed = policy_update(i, K_PRIME_COMMON, mono());
        count(&primes, &primes_failed, failed);
    }
}

static void *schedule_worker(void *unused) {
    (void) unused;
    for (;;) {
        if (stopping) {
            return NULL;
        }
        long i = atomic_fetch_add(&next_entry, 1);
        if (i >= schedule_count) {
            return NULL;
        }
        const struct entry *e = &schedule[i];
        double sched = start_mono + (double) e->t_ms / 1000.0;
        /* Every entry scheduled before the end is done, however late it starts (an agent whose run is late still
           runs): dropping late entries would hide the runs an overloaded server delays past the end. */
        if (duration >= 0 && (double) e->t_ms >= duration * 1000.0) {
            /* Sorted: no later entry is taken either. */
            atomic_store(&next_entry, schedule_count);
            return NULL;
        }
        if (sleep_until(sched)) {
            return NULL;
        }
        double late = (mono() - sched) * 1000.0;
        pthread_mutex_lock(&stats_lock);
        inflight++;
        if (late_count == late_capacity) {
            late_capacity = late_capacity ? late_capacity * 2 : 65536;
            late_window = realloc(late_window, (size_t) late_capacity * sizeof *late_window);
        }
        late_window[late_count++] = late;
        pthread_mutex_unlock(&stats_lock);
        if (e->inventory) {
            int failed = inventory(e->node, sched);
            count(&inventories, &inventories_failed, failed);
        } else {
            int failed = run(e->node, sched);
            count(&runs, &runs_failed, failed);
        }
    }
}

static void *update_worker(void *unused) {
    (void) unused;
    for (;;) {
        pthread_mutex_lock(&update_lock);
        while (update_head == NULL && !updates_closed && !stopping) {
            pthread_cond_wait(&update_cond, &update_lock);
        }
        struct update *u = stopping ? NULL : update_head;
        if (u) {
            update_head = u->next;
            if (update_head == NULL) {
                update_tail = NULL;
            }
        }
        pthread_mutex_unlock(&update_lock);
        if (u == NULL) {
            return NULL;
        }
        pthread_mutex_lock(&stats_lock);
        inflight++;
        pthread_mutex_unlock(&stats_lock);
        int failed = policy_update(u->node, K_UPDATE_COMMON, u->sched);
        count(&updates, &updates_failed, failed);
        free(u);
    }
}

static void *stdin_reader(void *unused) {
    (void) unused;
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        double read_at = mono();
        long index;
        if (sscanf(line, "update %ld", &index) != 1 || index < 0 || index >= node_count || !node_present[index]) {
            fprintf(stderr, "fleetagents: ignoring stdin line: %s", line);
            continue;
        }
        struct update *u = malloc(sizeof *u);
        u->node = (int32_t) index;
        u->sched = read_at;
        u->next = NULL;
        pthread_mutex_lock(&update_lock);
        if (update_tail) {
            update_tail->next = u;
        } else {
            update_head = u;
        }
        update_tail = u;
        pthread_cond_signal(&update_cond);
        pthread_mutex_unlock(&update_lock);
    }
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Nearest rank; sorts values. */
static double percentile(double *values, long n, double p) {
    if (n == 0) {
        return 0;
    }
    qsort(values, (size_t) n, sizeof *values, compare);
    long i = (long) ceil(p / 100.0 * (double) n) - 1;
    return values[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void progress(int priming) {
    pthread_mutex_lock(&stats_lock);
    if (priming) {
        fprintf(stderr, "prime t=%.0f primed=%ld failed=%ld inflight=%ld\n", mono() - mono0, primes, primes_failed,
                inflight);
    } else {
        double p99 = percentile(late_window, late_count, 99);
        late_count = 0;
        fprintf(stderr, "t=%.0f done=%ld failed=%ld inflight=%ld late_p99_ms=%.0f\n", mono() - start_mono,
                runs + inventories + updates, runs_failed + inventories_failed + updates_failed, inflight, p99);
    }
    pthread_mutex_unlock(&stats_lock);
}

struct pool {
    pthread_t *ids;
    int count;
    atomic_int finished;
};

struct pool_start {
    void *(*body)(void *);
    struct pool *pool;
};

static void *pool_thread(void *argument) {
    struct pool_start *s = argument;
    s->body(NULL);
    atomic_fetch_add(&s->pool->finished, 1);
    return NULL;
}

static int start_pool(struct pool *pool, int count, struct pool_start *s) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    pool->ids = calloc((size_t) count, sizeof *pool->ids);
    pool->count = 0;
    atomic_store(&pool->finished, 0);
    s->pool = pool;
    for (int i = 0; i < count; i++) {
        if (pthread_create(&pool->ids[i], &attributes, pool_thread, s) != 0) {
            fprintf(stderr, "fleetagents: started only %d of %d threads\n", i, count);
            break;
        }
        pool->count++;
    }
    pthread_attr_destroy(&attributes);
    return pool->count > 0 ? 0 : -1;
}

static void flush_out(void) {
    pthread_mutex_lock(&out_lock);
    fflush(out);
    pthread_mutex_unlock(&out_lock);
}

static void stop_everything(void) {
    pthread_mutex_lock(&stop_lock);
    atomic_store(&stopping, 1);
    pthread_cond_broadcast(&stop_cond);
    pthread_mutex_unlock(&stop_lock);
    pthread_mutex_lock(&update_lock);
    pthread_cond_broadcast(&update_cond);
    pthread_mutex_unlock(&update_lock);
}

/*
 * Waits for a pool to finish, flushing the output every second and printing progress every 10 s; returns 1 when a
 * signal came (then the pool's threads are left running for at most --grace seconds, and never joined).
 */
static int wait_pool(struct pool *pool, sigset_t *signals, int priming, double *next_progress) {
    int signalled = 0;
    double give_up = 0;
    while (atomic_load(&pool->finished) < pool->count) {
        struct timespec second = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
        int s = sigtimedwait(signals, NULL, &second);
        if (s == SIGTERM || s == SIGINT) {
            if (!signalled) {
                signalled = 1;
                give_up = mono() + grace;
                stop_everything();
            }
        }
        if (signalled) {
            pthread_mutex_lock(&stats_lock);
            long busy = inflight;
            pthread_mutex_unlock(&stats_lock);
            if (busy == 0 || mono() >= give_up) {
                return 1;
            }
        }
        flush_out();
        if (mono() >= *next_progress) {
            progress(priming);
            *next_progress += 10;
        }
    }
    for (int i = 0; i < pool->count; i++) {
        pthread_join(pool->ids[i], NULL);
    }
    return signalled;
}

static char *field(char **cursor) {
    char *f = strsep(cursor, "\t\n\r");
    return f && *f ? f : NULL;
}

struct credential {
    char *path;
    X509 *certificate;
    EVP_PKEY *key;
};

static int load_nodes(const char *file) {
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        perror(file);
        return -1;
    }
    long capacity = 1024, cache_size = 1 << 18;
    nodes = calloc((size_t) capacity, sizeof *nodes);
    struct credential *cache = calloc((size_t) cache_size, sizeof *cache);
    char line[8192];
    long number = 0, loaded = 0, files = 0;
    while (fgets(line, sizeof line, f)) {
        number++;
        char *cursor = line, *index_s = field(&cursor), *id = field(&cursor), *host = field(&cursor),
                *port = field(&cursor), *pem = field(&cursor), *pin = field(&cursor);
        if (index_s == NULL) {
            continue;
        }
        long index = atol(index_s);
        struct in_addr ip;
        if (pin == NULL || index < 0 || index > 100000000 || inet_pton(AF_INET, host, &ip) != 1 || atoi(port) <= 0) {
            fprintf(stderr, "fleetagents: %s:%ld: want index node_id host(IPv4) port pem_path pin\n", file, number);
            return -1;
        }
        if (index >= capacity) {
            long grown = capacity;
            while (index >= grown) {
                grown *= 2;
            }
            nodes = realloc(nodes, (size_t) grown * sizeof *nodes);
            memset(nodes + capacity, 0, (size_t) (grown - capacity) * sizeof *nodes);
            capacity = grown;
        }
        struct node *node = &nodes[index];
        if (node->id) {
            fprintf(stderr, "fleetagents: %s:%ld: index %ld twice\n", file, number, index);
            return -1;
        }
        node->id = strdup(id);
        node->pin = strdup(pin);
        node->address.sin_family = AF_INET;
        node->address.sin_port = htons((unsigned short) atoi(port));
        node->address.sin_addr = ip;
        /* 127.1.0.1 for node 0, then one address per node: the server's per-address limits and logs see one
           client per node, and no address runs out of ephemeral ports. */
        node->source.sin_family = AF_INET;
        node->source.sin_port = 0;
        node->source.sin_addr.s_addr = htonl((127u << 24) + (1u << 16) + (uint32_t) index + 1);
        if (atoi(port) == 443) {
            snprintf(node->host_header, sizeof node->host_header, "%s", host);
        } else {
            snprintf(node->host_header, sizeof node->host_header, "%s:%s", host, port);
        }
        /* The credential cache: open addressing on the path's hash. */
        unsigned long h = 5381;
        for (const char *c = pem; *c; c++) {
            h = h * 33 + (unsigned char) *c;
        }
        struct credential *slot = &cache[h & (unsigned long) (cache_size - 1)];
        while (slot->path && strcmp(slot->path, pem) != 0) {
            slot = slot + 1 == cache + cache_size ? cache : slot + 1;
        }
        if (slot->path == NULL) {
            if (files >= cache_size / 2) {
                fprintf(stderr, "fleetagents: more than %ld key files\n", cache_size / 2);
                return -1;
            }
            BIO *bio = BIO_new_file(pem, "r");
            EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
            BIO_free(bio);
            bio = BIO_new_file(pem, "r");
            X509 *certificate = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
            BIO_free(bio);
            if (key == NULL || certificate == NULL || X509_check_private_key(certificate, key) != 1) {
                fprintf(stderr, "fleetagents: %s:%ld: %s: want a private key and its certificate\n", file, number,
                        pem);
                ERR_print_errors_fp(stderr);
                return -1;
            }
            slot->path = strdup(pem);
            slot->key = key;
            slot->certificate = certificate;
            files++;
        }
        node->certificate = slot->certificate;
        node->key = slot->key;
        if (index >= node_count) {
            node_count = index + 1;
        }
        loaded++;
    }
    fclose(f);
    node_present = calloc((size_t) node_count + 1, 1);
    for (long i = 0; i < node_count; i++) {
        node_present[i] = nodes[i].id != NULL;
    }
    for (long i = 0; i < cache_size; i++) {
        free(cache[i].path);
    }
    free(cache);
    fprintf(stderr, "fleetagents: %ld nodes, %ld key files\n", loaded, files);
    return loaded > 0 ? 0 : -1;
}

static int load_schedule(const char *file) {
    FILE *f = fopen(file, "r");
    if (f == NULL) {
        perror(file);
        return -1;
    }
    long capacity = 1 << 16, number = 0;
    schedule = malloc((size_t) capacity * sizeof *schedule);
    char line[256];
    int64_t previous = INT64_MIN;
    while (fgets(line, sizeof line, f)) {
        number++;
        char *cursor = line, *t = field(&cursor), *index_s = field(&cursor), *kind = field(&cursor);
        if (t == NULL) {
            continue;
        }
        long index = index_s ? atol(index_s) : -1;
        if (kind == NULL || (strcmp(kind, "run") != 0 && strcmp(kind, "inventory") != 0) || index < 0
            || index >= node_count || !node_present[index]) {
            fprintf(stderr, "fleetagents: %s:%ld: want t_ms node_index run|inventory, of a known node\n", file,
                    number);
            return -1;
        }
        int64_t t_ms = atoll(t);
        if (t_ms < previous) {
            fprintf(stderr, "fleetagents: %s:%ld: not sorted by time\n", file, number);
            return -1;
        }
        previous = t_ms;
        if (schedule_count == capacity) {
            capacity *= 2;
            schedule = realloc(schedule, (size_t) capacity * sizeof *schedule);
        }
        schedule[schedule_count++] = (struct entry) {t_ms, (int32_t) index, kind[0] == 'i'};
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    const char *nodes_file = NULL, *schedule_file = NULL, *out_file = NULL;
    int threads = 512, update_threads = 16, prime = 0;
    static struct option options[] = {
        {"nodes", required_argument, 0, 'n'}, {"schedule", required_argument, 0, 's'},
        {"out", required_argument, 0, 'o'}, {"threads", required_argument, 0, 't'},
        {"update-threads", required_argument, 0, 'u'}, {"prime", no_argument, 0, 'p'},
        {"duration", required_argument, 0, 'd'}, {"report-bytes", required_argument, 0, 'r'},
        {"inventory-bytes", required_argument, 0, 'i'}, {"grace", required_argument, 0, 'g'},
        {"user", required_argument, 0, 'U'}, {0, 0, 0, 0}
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
            case 'n': nodes_file = optarg; break;
            case 's': schedule_file = optarg; break;
            case 'o': out_file = optarg; break;
            case 't': threads = atoi(optarg); break;
            case 'u': update_threads = atoi(optarg); break;
            case 'p': prime = 1; break;
            case 'd': duration = atof(optarg); break;
            case 'r': report_bytes = atol(optarg); break;
            case 'i': inventory_bytes = atol(optarg); break;
            case 'g': grace = atof(optarg); break;
            case 'U': {
                char encoded[400];
                if (strlen(optarg) > 250) {
                    fprintf(stderr, "fleetagents: --user too long\n");
                    return 2;
                }
                EVP_EncodeBlock((unsigned char *) encoded, (const unsigned char *) optarg, (int) strlen(optarg));
                snprintf(authorization, sizeof authorization, "Authorization: Basic %s\r\n", encoded);
                break;
            }
            default:
                fprintf(stderr, "usage: fleetagents --nodes FILE --schedule FILE --out FILE [--threads 512]"
                                " [--update-threads 16] [--prime] [--duration SECONDS] [--report-bytes 16384]"
                                " [--inventory-bytes 204800] [--grace 5] [--user rudder:rudder]\n");
                return 2;
        }
    }
    if (nodes_file == NULL || schedule_file == NULL || out_file == NULL || threads <= 0 || update_threads <= 0
        || report_bytes < 0 || inventory_bytes < 0) {
        fprintf(stderr, "fleetagents: --nodes, --schedule and --out needed, --threads and --update-threads > 0\n");
        return 2;
    }
    /* The signals are taken by the main thread only (sigtimedwait); every thread inherits this mask. */
    signal(SIGPIPE, SIG_IGN);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    mono0 = mono();
    realtime0_ms = rt.tv_sec * 1000.0 + rt.tv_nsec / 1e6;
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&stop_cond, &monotonic);
    pthread_cond_init(&update_cond, NULL);
    for (int i = 0; i < LOCK_STRIPES; i++) {
        pthread_mutex_init(&node_locks[i], NULL);
    }
    if (load_nodes(nodes_file) != 0 || load_schedule(schedule_file) != 0) {
        return 2;
    }
    long largest = report_bytes > inventory_bytes ? report_bytes : inventory_bytes;
    if (largest < SIGN_BYTES) {
        largest = SIGN_BYTES;
    }
    payload = malloc((size_t) largest + 1);
    RAND_bytes(payload, (int) (largest > INT32_MAX ? INT32_MAX : largest));
    out = fopen(out_file, "w");
    if (out == NULL) {
        perror(out_file);
        return 2;
    }
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);

    pthread_t reader;
    pthread_create(&reader, NULL, stdin_reader, NULL);
    pthread_detach(reader);
    struct pool updaters, workers;
    struct pool_start update_start = {update_worker, NULL}, prime_start = {prime_worker, NULL},
            schedule_start = {schedule_worker, NULL};
    if (start_pool(&updaters, update_threads, &update_start) != 0) {
        return 2;
    }
    int signalled = 0;
    double next_progress = mono() + 10;
    if (prime) {
        if (start_pool(&workers, threads, &prime_start) != 0) {
            return 2;
        }
        signalled = wait_pool(&workers, &signals, 1, &next_progress);
        pthread_mutex_lock(&stats_lock);
        fprintf(stderr, "fleetagents: primed %ld nodes in %.1f s, %ld failed\n", primes, mono() - mono0,
                primes_failed);
        pthread_mutex_unlock(&stats_lock);
    }
    if (!signalled) {
        start_mono = mono() + 1;
        printf("start_epoch_ms=%.0f\n", epoch_ms(start_mono));
        fflush(stdout);
        next_progress = start_mono + 10;
        if (start_pool(&workers, threads, &schedule_start) != 0) {
            return 2;
        }
        signalled = wait_pool(&workers, &signals, 0, &next_progress);
    }
    if (!signalled) {
        /* The schedule is done: the updates already asked for are done too, then the pool ends. */
        pthread_mutex_lock(&update_lock);
        updates_closed = 1;
        pthread_cond_broadcast(&update_cond);
        pthread_mutex_unlock(&update_lock);
        wait_pool(&updaters, &signals, 0, &next_progress);
    }
    pthread_mutex_lock(&out_lock);
    fflush(out);
    pthread_mutex_lock(&stats_lock);
    printf("summary runs=%ld runs_failed=%ld inventories=%ld inventories_failed=%ld updates=%ld updates_failed=%ld"
           " requests=%ld request_errors=%ld primes=%ld primes_failed=%ld\n", runs, runs_failed, inventories,
           inventories_failed, updates, updates_failed, requests, request_errors, primes, primes_failed);
    fflush(stdout);
    fflush(stderr);
    /* Threads may still be in OpenSSL after a signal's grace: no exit handlers, no cleanup under them. */
    _exit(0);
}
