#ifndef CARREL_SHIM_PROCESS_H
#define CARREL_SHIM_PROCESS_H

#include <stdbool.h>

/// Makes Carrel the child subreaper of everything it starts (prctl
/// PR_SET_CHILD_SUBREAPER): a process that leaves its program's tree by a
/// double fork becomes Carrel's child, not init's, so it is still known and
/// can be ended. False (errno set) when the kernel refuses.
bool carrel_become_child_subreaper(void);

/// The pid of the process at the other end of the Unix socket `fd`
/// (SO_PEERCRED, as it was at connect); -1 (errno set) when it cannot be read.
int carrel_socket_peer_pid(int fd);

#endif
