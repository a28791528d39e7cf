#define _GNU_SOURCE
#include "CarrelClientShim.h"

#include <sys/mman.h>
#include <unistd.h>

int carrel_client_shm_create(size_t size) {
    int fd = memfd_create("carrel-client-shm", MFD_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    if (ftruncate(fd, (off_t)size) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}
