#define _GNU_SOURCE
#include "fd_passing.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* Room for a handful of descriptors: a request carries at most one, and
 * anything beyond what the caller takes is closed, not leaked. */
#define CARREL_MAX_PASSED 8

ssize_t carrel_send_with_fd(int sock, const void *data, size_t length, int fd) {
    struct iovec iov = { .iov_base = (void *)data, .iov_len = length };
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        message.msg_control = control.buffer;
        message.msg_controllen = sizeof control.buffer;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    return sendmsg(sock, &message, MSG_NOSIGNAL);
}

ssize_t carrel_receive_with_fds(int sock, void *data, size_t length, int *fds, int max_fds, int *fd_count) {
    struct iovec iov = { .iov_base = data, .iov_len = length };
    union {
        char buffer[CMSG_SPACE(sizeof(int) * CARREL_MAX_PASSED)];
        struct cmsghdr align;
    } control;
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = control.buffer, .msg_controllen = sizeof control.buffer };
    *fd_count = 0;
    ssize_t received = recvmsg(sock, &message, MSG_CMSG_CLOEXEC);
    if (received < 0) return received;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*fd_count < max_fds) fds[(*fd_count)++] = fd;
            else close(fd);
        }
    }
    return received;
}
