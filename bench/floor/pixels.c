// The pixel work of compositing a 1279x719 XRGB client on a 1280x720 output,
// done alone, one frame per output period: a floor under a compositor's CPU
// for bench/run's "redrawn every frame" figure on this machine.
//
//   pixels copy|blend PERIOD_MS SECONDS
//
// copy:  one PIXMAN_OP_SRC copy of the client's pixels (Carrel's frame with
//        pixman, CModules/CarrelShim/scene_frame.c).
// blend: the damage cleared to black, then the client drawn over it with OVER,
//        a solid mask and the identity transform (wlroots 0.15's scene, which
//        cage 0.1.4 draws with).
//
// The buffers are shared memory, as a client's wl_shm pool and the output's
// buffers are, two of each used in turn. One frame per period, not back to
// back: between a compositor's frames other work runs and the pixels leave
// the caches, and a copy from memory costs two to three times one from cache
// on this kind of machine. Prints the process's CPU per second of the window
// and per frame; a period far shorter than a frame takes (0.001) runs them
// back to back.
#define _GNU_SOURCE
#include <errno.h>
#include <pixman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { CLIENT_W = 1279, CLIENT_H = 719, OUTPUT_W = 1280, OUTPUT_H = 720 };

static void *shared_pixels(size_t bytes, unsigned char fill) {
    int fd = memfd_create("pixels", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        fprintf(stderr, "pixels: shared memory: %s\n", strerror(errno));
        exit(1);
    }
    void *data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (data == MAP_FAILED) {
        fprintf(stderr, "pixels: mmap: %s\n", strerror(errno));
        exit(1);
    }
    memset(data, fill, bytes);
    return data;
}

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "copy") != 0 && strcmp(argv[1], "blend") != 0) ||
        atof(argv[2]) <= 0 || atof(argv[3]) <= 0) {
        fprintf(stderr, "usage: pixels copy|blend PERIOD_MS SECONDS\n");
        return 2;
    }
    const int blend = strcmp(argv[1], "blend") == 0;
    const long period_ns = (long)(atof(argv[2]) * 1e6);
    const double window = atof(argv[3]);

    pixman_image_t *client[2], *output[2];
    for (int i = 0; i < 2; i++) {
        client[i] = pixman_image_create_bits_no_clear(PIXMAN_x8r8g8b8, CLIENT_W, CLIENT_H,
            shared_pixels((size_t)CLIENT_W * CLIENT_H * 4, (unsigned char)(0x40 + i)), CLIENT_W * 4);
        output[i] = pixman_image_create_bits_no_clear(PIXMAN_x8r8g8b8, OUTPUT_W, OUTPUT_H,
            shared_pixels((size_t)OUTPUT_W * OUTPUT_H * 4, 0), OUTPUT_W * 4);
    }
    pixman_color_t black = {0, 0, 0, 0xffff}, opaque = {0xffff, 0xffff, 0xffff, 0xffff};
    pixman_image_t *clear = pixman_image_create_solid_fill(&black);
    pixman_image_t *mask = pixman_image_create_solid_fill(&opaque);
    pixman_transform_t identity;
    pixman_transform_init_identity(&identity);

    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double cpu0 = 0, wall0 = 0;
    long frames = 0;
    const long warmup = 10;
    for (long frame = 0;; frame++) {
        if (frame == warmup) {
            cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
            wall0 = seconds(CLOCK_MONOTONIC);
        } else if (frame > warmup && seconds(CLOCK_MONOTONIC) - wall0 >= window) {
            break;
        }
        pixman_image_t *source = client[frame % 2], *target = output[frame % 2];
        if (blend) {
            pixman_image_composite32(PIXMAN_OP_SRC, clear, NULL, target, 0, 0, 0, 0, 0, 0, CLIENT_W, CLIENT_H);
            pixman_image_set_transform(source, &identity);
            pixman_image_composite32(PIXMAN_OP_OVER, source, mask, target, 0, 0, 0, 0, 0, 0, CLIENT_W, CLIENT_H);
            pixman_image_set_transform(source, NULL);
        } else {
            pixman_image_composite32(PIXMAN_OP_SRC, source, NULL, target, 0, 0, 0, 0, 0, 0, CLIENT_W, CLIENT_H);
        }
        if (frame >= warmup) {
            frames++;
        }
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
        }
    }
    double wall = seconds(CLOCK_MONOTONIC) - wall0, cpu_ms = (seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0) * 1e3;
    printf("cpu_ms_per_s %.3f frames %ld cpu_ms_per_frame %.3f\n", cpu_ms / wall, frames, cpu_ms / (double)frames);
    return 0;
}
