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
 * Build: gcc -O2 -o tlsconn tlsconn.c -lssl -lcrypto -lpthread
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 2000000

static SSL_CTX *ctx;
static struct sockaddr_in address;
static int nodelay;
static int expected_status = 200;
static char request[4096];
static double deadline;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long connections, ok, errors, wrong_status, samples;
static double *handshake_us, *first_byte_us;
static char first_error[256];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

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

/* One connection; returns 0 on success. */
static int one(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        fail("socket");
        return -1;
    }
    if (nodelay) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    double start = now();
    if (connect(fd, (struct sockaddr *) &address, sizeof address) != 0) {
        close(fd);
        fail("connect");
        return -1;
    }
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    int result = -1;
    if (SSL_connect(ssl) != 1) {
        fail("handshake");
        goto done;
    }
    double handshaken = now();
    size_t length = strlen(request);
    if (SSL_write(ssl, request, (int) length) != (int) length) {
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
    if (status == expected_status) {
        ok++;
    } else {
        wrong_status++;
    }
    if (samples < MAX_SAMPLES) {
        handshake_us[samples] = (handshaken - start) * 1e6;
        first_byte_us[samples] = (first - sent) * 1e6;
        samples++;
    }
    pthread_mutex_unlock(&lock);
    result = 0;
done:
    SSL_free(ssl);
    close(fd);
    return result;
}

static void *worker(void *unused) {
    (void) unused;
    while (now() < deadline) {
        one();
    }
    return NULL;
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
    long i = (long) (p / 100.0 * (double) n);
    return values[i >= n ? n - 1 : i];
}

int main(int argc, char **argv) {
    int port = 0, threads = 1;
    double seconds = 5;
    const char *certificate = NULL, *key = NULL, *path = "/", *header = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "p:c:t:nC:K:u:H:s:")) != -1) {
        switch (opt) {
            case 'p': port = atoi(optarg); break;
            case 'c': threads = atoi(optarg); break;
            case 't': seconds = atof(optarg); break;
            case 'n': nodelay = 1; break;
            case 'C': certificate = optarg; break;
            case 'K': key = optarg; break;
            case 'u': path = optarg; break;
            case 'H': header = optarg; break;
            case 's': expected_status = atoi(optarg); break;
            default:
                fprintf(stderr, "usage: tlsconn -p PORT [-c THREADS] [-t SECONDS] [-n] [-C CERT -K KEY] [-u PATH]"
                                " [-H 'Name: value'] [-s STATUS]\n");
                return 2;
        }
    }
    if (port <= 0 || threads <= 0) {
        fprintf(stderr, "tlsconn: -p PORT and -c THREADS > 0 needed\n");
        return 2;
    }
    snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: tlsconn\r\n%s%s"
             "Connection: close\r\n\r\n", path, header ? header : "", header ? "\r\n" : "");
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
    double start = now();
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
