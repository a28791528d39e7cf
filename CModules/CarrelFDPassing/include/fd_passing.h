#ifndef CARREL_FD_PASSING_H
#define CARREL_FD_PASSING_H

#include <stddef.h>
#include <sys/types.h>

/* Sends `length` bytes on the Unix socket `sock`, with `fd` attached
 * (SCM_RIGHTS) unless it is negative. Returns what sendmsg returns. */
ssize_t carrel_send_with_fd(int sock, const void *data, size_t length, int fd);

/* Receives up to `length` bytes from `sock`; file descriptors that came with
 * them (close-on-exec) are stored in `fds`, at most `max_fds`, their count in
 * `*fd_count` (more than that are closed). Returns what recvmsg returns. */
ssize_t carrel_receive_with_fds(int sock, void *data, size_t length, int *fds, int max_fds, int *fd_count);

#endif
