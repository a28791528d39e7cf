/* prctl is variadic, and struct ucred needs _GNU_SOURCE: neither reaches Swift. */
#define _GNU_SOURCE
#include "CarrelShim.h"

#include <sys/prctl.h>
#include <sys/socket.h>

bool carrel_become_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

int carrel_socket_peer_pid(int fd) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    return credentials.pid;
}
