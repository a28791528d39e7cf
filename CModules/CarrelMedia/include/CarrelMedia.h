#ifndef CARREL_MEDIA_H
#define CARREL_MEDIA_H

// The media restriction provider's D-Bus side, over sd-bus (libsystemd):
// pauses MPRIS players (org.mpris.MediaPlayer2.* names) on a session bus.
// Every call is bounded by the timeout given at connect.

#include <stddef.h>
#include <stdint.h>

typedef struct carrel_media carrel_media;

/// Connects to the bus at `address` (a D-Bus address such as
/// "unix:path=/run/user/1000/bus") without waiting for the bus daemon: the
/// authentication and Hello go on as `carrel_media_process` runs, and calls
/// made meanwhile (asynchronous ones) are queued until the bus is ready.
/// NULL on failure (no socket there), with `err` filled.
carrel_media *carrel_media_connect(const char *address, uint64_t timeout_usec, char *err, size_t errlen);

/// Sends org.mpris.MediaPlayer2.Player.Pause to every player (`all` != 0)
/// or to those whose PlaybackStatus is "Playing" (`all` == 0). Returns how
/// many were paused, or -1 with `err` filled (the first failure; the other
/// players are still paused). `paused` receives their names, comma-separated.
int carrel_media_pause(carrel_media *media, int all, char *paused, size_t pausedlen, char *err, size_t errlen);

/// `carrel_media_pause` without waiting: the calls go out asynchronously
/// (each bounded by the timeout given at connect) and their answers are
/// handled by `carrel_media_process`, which the caller runs when the
/// connection's fd is readable and at `carrel_media_next_timeout_usec`.
/// 0, or -1 with `err` filled (not connected, or a run is under way).
int carrel_media_pause_start(carrel_media *media, int all, char *err, size_t errlen);
/// Once the run started last has every answer: 1 (all paused) or -1 (`err`:
/// the first failure), with `paused` filled as by `carrel_media_pause`, and
/// the run is over; 0 while answers are still out or when none was started.
int carrel_media_pause_take(carrel_media *media, char *paused, size_t pausedlen, char *err, size_t errlen);
/// Whether a run is under way (started and not yet taken).
int carrel_media_pause_running(carrel_media *media);
/// Microseconds until a call out times out (0: already), or UINT64_MAX when none is out.
uint64_t carrel_media_next_timeout_usec(carrel_media *media);
/// Subscribes to PropertiesChanged of MPRIS players: after
/// `carrel_media_process`, `carrel_media_take_playing` says whether one
/// reported PlaybackStatus "Playing" since the last call. 0 or -1 with `err`.
/// Without waiting: the bus daemon's answer comes through
/// `carrel_media_process`, and a refusal through `carrel_media_watch_problem`.
int carrel_media_watch(carrel_media *media, char *err, size_t errlen);
/// -1 with `err` filled once the bus daemon refused the watch; 0 otherwise.
int carrel_media_watch_problem(carrel_media *media, char *err, size_t errlen);
/// Whether the bus daemon has authenticated the connection and answered its Hello.
int carrel_media_ready(carrel_media *media);
/// Whether the connection has something to write once its fd is writable
/// (while connecting, or with a full socket buffer).
int carrel_media_wants_write(carrel_media *media);

/// The connection's fd, to watch for readability in an event loop.
int carrel_media_fd(carrel_media *media);

/// Handles every message waiting on the connection; -1 if it broke.
int carrel_media_process(carrel_media *media);

/// Whether a player started playing since the last call (and resets it).
int carrel_media_take_playing(carrel_media *media);

/// Whether the connection is still up.
int carrel_media_connected(carrel_media *media);

void carrel_media_close(carrel_media *media);

/// statfs(2)'s f_type of `path` into `type` (the network provider checks
/// /sys/fs/cgroup is cgroup2); 0, or -1 with errno set.
int carrel_fs_type(const char *path, unsigned long *type);

#endif
