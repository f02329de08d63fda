/*
 * tlsconn: bench/perf's new-connection load generator. Each of -c threads loops until -t seconds have passed:
 * a new TCP connection, with TCP_NODELAY set or not (-n), a full TLS 1.3 handshake (no session reuse, but session
 * tickets accepted as curl accepts them, so a server sends them as it would to an agent) presenting the client
 * certificate, one HTTP/1.1 request with "Connection: close", the response read to its Content-Length,
 * then close. It exists because no stock C generator here does both: ab sends headers (If-None-Match) but never sets
 * TCP_NODELAY, openssl s_time sets it but sends no headers. One program for both client kinds keeps the TCP_NODELAY
 * call the only difference between them.
 *
 * Prints one line: connections=N ok=N errors=N wrong_status=N seconds=S handshake_p50_us=… first_byte_p50_us=…
 * first_byte_p99_us=… where "first byte" is the time from the request's write to the first byte of the answer
 * (what a Nagle client waits for when the server sends nothing after the handshake) and the first error, if any.
 * The server is not authenticated: a benchmark on loopback, against servers this harness started.
 *
 * Herd mode (-a AGENTS): instead of -c threads looping, AGENTS agents start at an even pace over -r SECONDS, each in
 * its own thread (an open loop: a slow server does not slow the arrivals), and each does what one
 * `rudder agent update` does after a new generation: a new connection for the first request (-u, -H, -s: the
 * common library with its current ETag, 304), then a new connection for the second (-U, -V, -S: its policies with
 * the previous generation's ETag, 200 and the archive), as rudder-client runs one curl process per request. An
 * update's latency runs from its scheduled start to the second answer's last byte, so time spent waiting in the
 * server's accept queue or for a SYN retransmission counts. Every socket has 60 s send and receive timeouts. Prints
 * a second line: herd agents=N updates_ok=N update_errors=N completion_seconds=S update_p50_us=… update_p99_us=…
 * update_max_us=… connect_p99_us=… connect_max_us=… connect_errors=N (connect: SYN to established, of the
 * connections that got there; connect_errors: those that did not, e.g. after the 60 s timeout). Each agent connects
 * from its own loopback address (agent i from 127.1.0.0 + i + 1: Linux answers the whole of 127/8), as real agents
 * each have theirs, so a server can tell an agent's second connection from a newer agent's first.
 *
 * Build: gcc -O2 -o tlsconn tlsconn.c -lssl -lcrypto -lpthread -lm
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 2000000

/* One kind of request: its bytes and the status it must get. */
struct exchange {
    char request[4096];
    int expected_status;
};

static SSL_CTX *ctx;
static struct sockaddr_in address;
static int nodelay;
static struct exchange first_exchange = {.expected_status = 200}, second_exchange = {.expected_status = 200};
static double deadline;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long connections, ok, errors, wrong_status, samples;
static double *handshake_us, *first_byte_us, *connect_us;
static char first_error[256];
/* Herd mode. */
static long agents, updates_ok, update_errors, connect_errors;
static double spread = 10, herd_start, last_end;
static double *update_us;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double percentile(double *values, long n, double p);

static void fail(const char *what) {
    pthread_mutex_lock(&lock);
    errors++;
    if (!first_error[0]) {
        unsigned long e = ERR_peek_last_error();
        snprintf(first_error, sizeof first_error, "%s%s%s", what, e ? ": " : "", e ? ERR_reason_error_string(e) : "");
        for (char *c = first_error; *c; c++) {
            if (*c == ' ') *c = '_';
        }
    }
    pthread_mutex_unlock(&lock);
    ERR_clear_error();
}

/* One connection with one exchange, from source (or any address when 0); returns 0 when answered as expected. */
static int one(const struct exchange *exchange, in_addr_t source) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        fail("socket");
        return -1;
    }
    if (nodelay) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (source != 0) {
        struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = source};
        if (bind(fd, (struct sockaddr *) &local, sizeof local) != 0) {
            close(fd);
            fail("bind");
            return -1;
        }
    }
    if (agents > 0) {
        /* A herd waits long, but not forever: connect() also gives up after the send timeout. */
        struct timeval timeout = {.tv_sec = 60};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    }
    double start = now();
    if (connect(fd, (struct sockaddr *) &address, sizeof address) != 0) {
        close(fd);
        fail("connect");
        pthread_mutex_lock(&lock);
        connect_errors++;
        pthread_mutex_unlock(&lock);
        return -1;
    }
    double connected = now();
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    int result = -1;
    if (SSL_connect(ssl) != 1) {
        fail("handshake");
        goto done;
    }
    double handshaken = now();
    size_t length = strlen(exchange->request);
    if (SSL_write(ssl, exchange->request, (int) length) != (int) length) {
        fail("write");
        goto done;
    }
    double sent = now();
    char buffer[16384];
    size_t have = 0;
    double first = 0;
    long content_length = 0, body = 0;
    int header_done = 0, status = 0;
    for (;;) {
        /* Until the header is complete it accumulates in the buffer; after it, the body is only counted. */
        char *into = header_done ? buffer : buffer + have;
        int room = header_done ? (int) sizeof buffer - 1 : (int) (sizeof buffer - 1 - have);
        if (room <= 0) {
            fail("header too long");
            goto done;
        }
        int n = SSL_read(ssl, into, room);
        if (n <= 0) {
            break;
        }
        if (first == 0) {
            first = now();
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
                    }
                }
                body = (long) (have - (size_t) (end + 4 - buffer));
            }
        }
        if (header_done && body >= content_length) {
            break;
        }
    }
    if (!header_done || body < content_length) {
        fail("short response");
        goto done;
    }
    pthread_mutex_lock(&lock);
    connections++;
    if (status == exchange->expected_status) {
        ok++;
        result = 0;
    } else {
        wrong_status++;
    }
    if (samples < MAX_SAMPLES) {
        handshake_us[samples] = (handshaken - start) * 1e6;
        first_byte_us[samples] = (first - sent) * 1e6;
        connect_us[samples] = (connected - start) * 1e6;
        samples++;
    }
    pthread_mutex_unlock(&lock);
done:
    SSL_free(ssl);
    close(fd);
    return result;
}

/* The exchange's request: a GET of path, with one extra header line if any, closing the connection after it. */
static void format_request(struct exchange *exchange, const char *path, const char *header) {
    snprintf(exchange->request, sizeof exchange->request, "GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: tlsconn"
             "\r\n%s%sConnection: close\r\n\r\n", path, header ? header : "", header ? "\r\n" : "");
}

static void *worker(void *unused) {
    (void) unused;
    while (now() < deadline) {
        one(&first_exchange, 0);
    }
    return NULL;
}

/* One agent's update; its argument is its index, which sets its scheduled start. */
static void *agent(void *argument) {
    long index = (long) (intptr_t) argument;
    double scheduled = herd_start + spread * (double) index / (double) agents;
    in_addr_t source = htonl((in_addr_t) ((127u << 24) | (1u << 16)) + (in_addr_t) index + 1);
    int failed = one(&first_exchange, source) != 0 || one(&second_exchange, source) != 0;
    double end = now();
    pthread_mutex_lock(&lock);
    if (failed) {
        update_errors++;
    } else {
        update_us[updates_ok++] = (end - scheduled) * 1e6;
    }
    if (end > last_end) {
        last_end = end;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void sleep_until(double when) {
    double wait = when - now();
    if (wait > 0) {
        struct timespec t = {.tv_sec = (time_t) wait, .tv_nsec = (long) ((wait - (double) (time_t) wait) * 1e9)};
        nanosleep(&t, NULL);
    }
}

/* Herd mode: starts the agents on schedule, waits for them all, prints the herd line. */
static int herd(void) {
    update_us = malloc((size_t) agents * sizeof *update_us);
    pthread_t *ids = calloc((size_t) agents, sizeof *ids);
    char *started = calloc((size_t) agents, 1);
    if (update_us == NULL || ids == NULL || started == NULL) {
        fprintf(stderr, "tlsconn: out of memory for %ld agents\n", agents);
        return 1;
    }
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    herd_start = now();
    for (long i = 0; i < agents; i++) {
        sleep_until(herd_start + spread * (double) i / (double) agents);
        if (pthread_create(&ids[i], &attributes, agent, (void *) (intptr_t) i) != 0) {
            /* Counted as a failed update; the others go on, and are all joined before anything is read. */
            pthread_mutex_lock(&lock);
            update_errors++;
            if (!first_error[0]) {
                snprintf(first_error, sizeof first_error, "cannot_start_agent_thread");
            }
            pthread_mutex_unlock(&lock);
            ids[i] = 0;
            started[i] = 0;
            continue;
        }
        started[i] = 1;
    }
    for (long i = 0; i < agents; i++) {
        if (started[i]) {
            pthread_join(ids[i], NULL);
        }
    }
    printf("herd agents=%ld updates_ok=%ld update_errors=%ld completion_seconds=%.3f update_p50_us=%.0f"
           " update_p99_us=%.0f update_max_us=%.0f", agents, updates_ok, update_errors, last_end - herd_start,
           percentile(update_us, updates_ok, 50), percentile(update_us, updates_ok, 99),
           percentile(update_us, updates_ok, 100));
    printf(" connect_p99_us=%.0f connect_max_us=%.0f connect_errors=%ld\n", percentile(connect_us, samples, 99),
           percentile(connect_us, samples, 100), connect_errors);
    return 0;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double percentile(double *values, long n, double p) {
    if (n == 0) {
        return -1;
    }
    qsort(values, (size_t) n, sizeof *values, compare);
    /* Nearest rank: the smallest value with at least p % of the values at or below it. */
    long i = (long) ceil(p / 100.0 * (double) n) - 1;
    return values[i < 0 ? 0 : i >= n ? n - 1 : i];
}

int main(int argc, char **argv) {
    int port = 0, threads = 1;
    double seconds = 5;
    const char *certificate = NULL, *key = NULL, *path = "/", *header = NULL, *path2 = NULL, *header2 = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "p:c:t:nC:K:u:H:s:a:r:U:V:S:")) != -1) {
        switch (opt) {
            case 'p': port = atoi(optarg); break;
            case 'c': threads = atoi(optarg); break;
            case 't': seconds = atof(optarg); break;
            case 'n': nodelay = 1; break;
            case 'C': certificate = optarg; break;
            case 'K': key = optarg; break;
            case 'u': path = optarg; break;
            case 'H': header = optarg; break;
            case 's': first_exchange.expected_status = atoi(optarg); break;
            case 'a': agents = atol(optarg); break;
            case 'r': spread = atof(optarg); break;
            case 'U': path2 = optarg; break;
            case 'V': header2 = optarg; break;
            case 'S': second_exchange.expected_status = atoi(optarg); break;
            default:
                fprintf(stderr, "usage: tlsconn -p PORT [-c THREADS] [-t SECONDS] [-n] [-C CERT -K KEY] [-u PATH]"
                                " [-H 'Name: value'] [-s STATUS]\n"
                                "       tlsconn -p PORT -a AGENTS [-r SECONDS] [-n] [-C CERT -K KEY] -u PATH"
                                " [-H 'Name: value'] [-s STATUS] -U PATH [-V 'Name: value'] [-S STATUS]\n");
                return 2;
        }
    }
    if (port <= 0 || threads <= 0) {
        fprintf(stderr, "tlsconn: -p PORT and -c THREADS > 0 needed\n");
        return 2;
    }
    if (agents < 0 || (agents > 0 && (path2 == NULL || spread <= 0))) {
        fprintf(stderr, "tlsconn: herd mode needs -a AGENTS > 0, -U PATH and -r SECONDS > 0\n");
        return 2;
    }
    format_request(&first_exchange, path, header);
    if (path2) {
        format_request(&second_exchange, path2, header2);
    }
    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    if (certificate && (SSL_CTX_use_certificate_chain_file(ctx, certificate) != 1
                        || SSL_CTX_use_PrivateKey_file(ctx, key ? key : certificate, SSL_FILETYPE_PEM) != 1)) {
        ERR_print_errors_fp(stderr);
        return 2;
    }
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short) port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    handshake_us = malloc(MAX_SAMPLES * sizeof *handshake_us);
    first_byte_us = malloc(MAX_SAMPLES * sizeof *first_byte_us);
    connect_us = malloc(MAX_SAMPLES * sizeof *connect_us);
    double start = now();
    if (agents > 0) {
        int status = herd();
        double elapsed = now() - start;
        printf("connections=%ld ok=%ld errors=%ld wrong_status=%ld seconds=%.3f handshake_p50_us=%.0f"
               " first_byte_p50_us=%.0f first_byte_p99_us=%.0f first_error=%s\n", connections, ok, errors,
               wrong_status, elapsed, percentile(handshake_us, samples, 50), percentile(first_byte_us, samples, 50),
               percentile(first_byte_us, samples, 99), first_error[0] ? first_error : "none");
        return status;
    }
    deadline = start + seconds;
    pthread_t *ids = calloc((size_t) threads, sizeof *ids);
    for (int i = 0; i < threads; i++) {
        pthread_create(&ids[i], NULL, worker, NULL);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
    }
    double elapsed = now() - start;
    printf("connections=%ld ok=%ld errors=%ld wrong_status=%ld seconds=%.3f handshake_p50_us=%.0f"
           " first_byte_p50_us=%.0f first_byte_p99_us=%.0f first_error=%s\n", connections, ok, errors, wrong_status,
           elapsed, percentile(handshake_us, samples, 50), percentile(first_byte_us, samples, 50),
           percentile(first_byte_us, samples, 99), first_error[0] ? first_error : "none");
    return 0;
}
