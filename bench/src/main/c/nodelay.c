/*
 * LD_PRELOAD shim for bench/warmup: sets TCP_NODELAY on every TCP socket a program connects, as an agent's curl
 * does. ab does not set it, and a TLS 1.3 client that leaves Nagle on can hold its request until the server's
 * delayed ACK (about 40 ms per connection with Conscrypt, issue 23): the new-connection curve would then measure that
 * stall instead of the server's warm-up.
 *
 *   cc -shared -fPIC -O2 -o nodelay.so nodelay.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    static connect_fn real_connect;
    if (!real_connect) {
        real_connect = (connect_fn) dlsym(RTLD_NEXT, "connect");
    }
    if (address && (address->sa_family == AF_INET || address->sa_family == AF_INET6)) {
        int type = 0;
        socklen_t size = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 && type == SOCK_STREAM) {
            int on = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        }
    }
    return real_connect(fd, address, length);
}
