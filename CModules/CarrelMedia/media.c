// MPRIS pausing over sd-bus; see CarrelMedia.h.
#include "CarrelMedia.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <systemd/sd-bus.h>

#define MPRIS_PREFIX "org.mpris.MediaPlayer2."
#define MPRIS_PATH "/org/mpris/MediaPlayer2"
#define MPRIS_PLAYER "org.mpris.MediaPlayer2.Player"

/* A pause run started by carrel_media_pause_start: the calls still out,
 * the first failure and the players paused so far. */
struct call;

struct pause_run {
    /* Every call context of the run, freed with it (a call's callback may
     * never run: the bus closed with it out). */
    struct call *calls;
    int all;
    int pending;
    int failed;
    int finished;
    char err[512];
    char paused[1024];
};

struct carrel_media {
    sd_bus *bus;
    sd_bus_slot *match;
    int playing_seen;
    /* The bus daemon refused the watch's AddMatch (sent without waiting):
     * why, or empty while it has not (or has not answered yet). */
    char watch_err[512];
    /* The run whose answers are still coming (NULL: none); freed by
     * carrel_media_pause_take or carrel_media_close. */
    struct pause_run *run;
};

static void set_error(char *err, size_t errlen, const char *what, int r, const sd_bus_error *e) {
    if (!err || errlen == 0) return;
    if (e && sd_bus_error_is_set(e))
        snprintf(err, errlen, "%s: %s (%s)", what, e->message ? e->message : "", e->name);
    else
        snprintf(err, errlen, "%s: %s", what, strerror(r < 0 ? -r : r));
}

carrel_media *carrel_media_connect(const char *address, uint64_t timeout_usec, char *err, size_t errlen) {
    if (!address || !*address) {
        set_error(err, errlen, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)", ENOENT, NULL);
        return NULL;
    }
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) { set_error(err, errlen, "sd_bus_new", r, NULL); return NULL; }
    if ((r = sd_bus_set_address(bus, address)) < 0 ||
        (r = sd_bus_set_bus_client(bus, 1)) < 0 ||
        (r = sd_bus_set_method_call_timeout(bus, timeout_usec)) < 0 ||
        (r = sd_bus_start(bus)) < 0) {
        set_error(err, errlen, "could not connect to the session bus", r, NULL);
        sd_bus_unref(bus);
        return NULL;
    }
    carrel_media *media = calloc(1, sizeof *media);
    if (!media) { sd_bus_unref(bus); set_error(err, errlen, "calloc", ENOMEM, NULL); return NULL; }
    media->bus = bus;
    return media;
}

int carrel_media_connected(carrel_media *media) {
    return media && sd_bus_is_open(media->bus) > 0;
}

static int is_playing(sd_bus *bus, const char *name, char *err, size_t errlen) {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    char *status = NULL;
    int r = sd_bus_get_property_string(bus, name, MPRIS_PATH, MPRIS_PLAYER, "PlaybackStatus", &e, &status);
    if (r < 0) {
        char what[300];
        snprintf(what, sizeof what, "could not read the PlaybackStatus of %s", name);
        set_error(err, errlen, what, r, &e);
        sd_bus_error_free(&e);
        return -1;
    }
    int playing = strcmp(status, "Playing") == 0;
    free(status);
    return playing;
}

int carrel_media_pause(carrel_media *media, int all, char *paused, size_t pausedlen, char *err, size_t errlen) {
    if (paused && pausedlen) paused[0] = 0;
    if (!carrel_media_connected(media)) {
        set_error(err, errlen, "the session bus connection is closed", ECONNRESET, NULL);
        return -1;
    }
    sd_bus *bus = media->bus;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "ListNames", &e, &reply, "");
    if (r < 0) {
        set_error(err, errlen, "could not list the names on the session bus", r, &e);
        sd_bus_error_free(&e);
        return -1;
    }
    char **names = NULL;
    r = sd_bus_message_read_strv(reply, &names);
    sd_bus_message_unref(reply);
    if (r < 0) { set_error(err, errlen, "could not read the bus's names", r, NULL); return -1; }

    int count = 0, failed = 0;
    for (char **name = names; name && *name; name++) {
        if (strncmp(*name, MPRIS_PREFIX, strlen(MPRIS_PREFIX)) != 0) continue;
        if (!all) {
            int playing = is_playing(bus, *name, failed ? NULL : err, errlen);
            if (playing < 0) { failed = 1; continue; }
            if (!playing) continue;
        }
        r = sd_bus_call_method(bus, *name, MPRIS_PATH, MPRIS_PLAYER, "Pause", &e, NULL, "");
        if (r < 0) {
            if (!failed) {
                char what[300];
                snprintf(what, sizeof what, "%s did not pause", *name);
                set_error(err, errlen, what, r, &e);
            }
            sd_bus_error_free(&e);
            failed = 1;
            continue;
        }
        count++;
        if (paused && pausedlen) {
            size_t used = strlen(paused);
            snprintf(paused + used, pausedlen - used, "%s%s", used ? "," : "", *name);
        }
    }
    for (char **name = names; name && *name; name++) free(*name);
    free(names);
    return failed ? -1 : count;
}

/* One asynchronous call's context: the run it counts in and the player's name. */
struct call {
    struct call *next;
    struct pause_run *run;
    char name[256];
};

static struct call *new_call(struct pause_run *run, const char *name) {
    struct call *call = calloc(1, sizeof *call);
    if (!call) return NULL;
    call->run = run;
    snprintf(call->name, sizeof call->name, "%s", name);
    call->next = run->calls;
    run->calls = call;
    return call;
}

static void free_run(struct pause_run *run) {
    if (!run) return;
    for (struct call *call = run->calls, *next; call; call = next) {
        next = call->next;
        free(call);
    }
    free(run);
}

static void run_fail(struct pause_run *run, const char *what, const sd_bus_error *e) {
    if (run->failed) return;
    run->failed = 1;
    if (e && sd_bus_error_is_set(e))
        snprintf(run->err, sizeof run->err, "%s: %s (%s)", what, e->message ? e->message : "", e->name);
    else
        snprintf(run->err, sizeof run->err, "%s", what);
}

static void run_settle(struct pause_run *run) {
    if (run->pending == 0) run->finished = 1;
}

static int on_pause_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    struct call *call = userdata;
    struct pause_run *run = call->run;
    run->pending--;
    if (sd_bus_message_is_method_error(m, NULL)) {
        char what[300];
        snprintf(what, sizeof what, "%s did not pause", call->name);
        run_fail(run, what, sd_bus_message_get_error(m));
    } else {
        size_t used = strlen(run->paused);
        snprintf(run->paused + used, sizeof run->paused - used, "%s%s", used ? "," : "", call->name);
    }
    run_settle(run);
    return 0;
}

/* Sends Pause to call->name. */
static void send_pause(sd_bus *bus, struct call *call) {
    int r = sd_bus_call_method_async(bus, NULL, call->name, MPRIS_PATH, MPRIS_PLAYER, "Pause", on_pause_reply, call, "");
    if (r < 0) {
        char what[300];
        snprintf(what, sizeof what, "could not ask %s to pause (%s)", call->name, strerror(-r));
        run_fail(call->run, what, NULL);
        return;
    }
    call->run->pending++;
}

static int on_status_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    struct call *call = userdata;
    struct pause_run *run = call->run;
    run->pending--;
    const char *status = NULL;
    if (sd_bus_message_is_method_error(m, NULL)) {
        char what[300];
        snprintf(what, sizeof what, "could not read the PlaybackStatus of %s", call->name);
        run_fail(run, what, sd_bus_message_get_error(m));
    } else if (sd_bus_message_read(m, "v", "s", &status) < 0) {
        char what[300];
        snprintf(what, sizeof what, "%s answered its PlaybackStatus with something other than a string", call->name);
        run_fail(run, what, NULL);
    } else if (strcmp(status, "Playing") == 0) {
        struct call *pause = new_call(run, call->name);
        if (pause) send_pause(sd_bus_message_get_bus(m), pause);
        else run_fail(run, "out of memory", NULL);
    }
    run_settle(run);
    return 0;
}

static int on_names_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    struct call *call = userdata;
    struct pause_run *run = call->run;
    sd_bus *bus = sd_bus_message_get_bus(m);
    run->pending--;
    char **names = NULL;
    if (sd_bus_message_is_method_error(m, NULL)) {
        run_fail(run, "could not list the names on the session bus", sd_bus_message_get_error(m));
    } else if (sd_bus_message_read_strv(m, &names) < 0) {
        run_fail(run, "could not read the bus's names", NULL);
    }
    for (char **name = names; name && *name; name++) {
        if (strncmp(*name, MPRIS_PREFIX, strlen(MPRIS_PREFIX)) != 0 || strlen(*name) >= sizeof call->name) continue;
        struct call *player = new_call(run, *name);
        if (!player) { run_fail(run, "out of memory", NULL); break; }
        if (run->all) {
            send_pause(bus, player);
            continue;
        }
        int r = sd_bus_call_method_async(bus, NULL, *name, MPRIS_PATH, "org.freedesktop.DBus.Properties", "Get",
                                         on_status_reply, player, "ss", MPRIS_PLAYER, "PlaybackStatus");
        if (r < 0) {
            char what[300];
            snprintf(what, sizeof what, "could not ask %s for its PlaybackStatus (%s)", *name, strerror(-r));
            run_fail(run, what, NULL);
            continue;
        }
        run->pending++;
    }
    for (char **name = names; name && *name; name++) free(*name);
    free(names);
    run_settle(run);
    return 0;
}

int carrel_media_pause_start(carrel_media *media, int all, char *err, size_t errlen) {
    if (media->run) {
        set_error(err, errlen, "a pause is already under way", EBUSY, NULL);
        return -1;
    }
    if (!carrel_media_connected(media)) {
        set_error(err, errlen, "the session bus connection is closed", ECONNRESET, NULL);
        return -1;
    }
    struct pause_run *run = calloc(1, sizeof *run);
    struct call *call = run ? new_call(run, "org.freedesktop.DBus") : NULL;
    if (!call) {
        free_run(run);
        set_error(err, errlen, "calloc", ENOMEM, NULL);
        return -1;
    }
    run->all = all;
    int r = sd_bus_call_method_async(media->bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "ListNames", on_names_reply, call, "");
    if (r < 0) {
        free_run(run);
        set_error(err, errlen, "could not list the names on the session bus", r, NULL);
        return -1;
    }
    run->pending = 1;
    media->run = run;
    return 0;
}

int carrel_media_pause_take(carrel_media *media, char *paused, size_t pausedlen, char *err, size_t errlen) {
    struct pause_run *run = media->run;
    if (!run || !run->finished) return 0;
    media->run = NULL;
    if (paused && pausedlen) snprintf(paused, pausedlen, "%s", run->paused);
    int failed = run->failed;
    if (failed && err && errlen) snprintf(err, errlen, "%s", run->err);
    free_run(run);
    return failed ? -1 : 1;
}

int carrel_media_pause_running(carrel_media *media) {
    return media && media->run != NULL;
}

uint64_t carrel_media_next_timeout_usec(carrel_media *media) {
    uint64_t at = UINT64_MAX;
    if (!media || sd_bus_get_timeout(media->bus, &at) < 0 || at == UINT64_MAX) return UINT64_MAX;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_usec = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    return at > now_usec ? at - now_usec : 0;
}

// PropertiesChanged(s interface, a{sv} changed, as invalidated): notes a
// PlaybackStatus of "Playing"; the pause itself happens outside the callback.
static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    carrel_media *media = userdata;
    const char *interface = NULL;
    if (sd_bus_message_read(m, "s", &interface) < 0 || strcmp(interface, MPRIS_PLAYER) != 0) return 0;
    if (sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sv}") < 0) return 0;
    while (sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sv") > 0) {
        const char *key = NULL;
        if (sd_bus_message_read(m, "s", &key) < 0) return 0;
        if (strcmp(key, "PlaybackStatus") == 0) {
            const char *value = NULL;
            if (sd_bus_message_read(m, "v", "s", &value) >= 0 && value && strcmp(value, "Playing") == 0)
                media->playing_seen = 1;
        } else if (sd_bus_message_skip(m, "v") < 0) {
            return 0;
        }
        if (sd_bus_message_exit_container(m) < 0) return 0;
    }
    return 0;
}

/* The bus daemon's answer to the watch's AddMatch: a refusal is kept for
 * carrel_media_watch_problem (the daemon answers in order, so it is in
 * before the answer to any call sent after the watch). */
static int on_match_installed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    carrel_media *media = userdata;
    if (sd_bus_message_is_method_error(m, NULL))
        set_error(media->watch_err, sizeof media->watch_err, "could not watch the players' PropertiesChanged", EIO,
                  sd_bus_message_get_error(m));
    return 0;
}

int carrel_media_watch(carrel_media *media, char *err, size_t errlen) {
    /* Asynchronous: the synchronous AddMatch would wait for the bus
     * daemon's answer (and, on a connection just made, its authentication
     * and Hello) on the caller's thread. */
    int r = sd_bus_match_signal_async(media->bus, &media->match, NULL, MPRIS_PATH, "org.freedesktop.DBus.Properties",
                                      "PropertiesChanged", on_properties_changed, on_match_installed, media);
    if (r < 0) { set_error(err, errlen, "could not watch the players' PropertiesChanged", r, NULL); return -1; }
    return 0;
}

int carrel_media_watch_problem(carrel_media *media, char *err, size_t errlen) {
    if (!media->watch_err[0]) return 0;
    if (err && errlen) snprintf(err, errlen, "%s", media->watch_err);
    return -1;
}

int carrel_media_ready(carrel_media *media) { return media && sd_bus_is_ready(media->bus) > 0; }

int carrel_media_wants_write(carrel_media *media) {
    int events = sd_bus_get_events(media->bus);
    return events > 0 && (events & POLLOUT) != 0;
}

int carrel_media_fd(carrel_media *media) { return sd_bus_get_fd(media->bus); }

int carrel_media_process(carrel_media *media) {
    int r;
    while ((r = sd_bus_process(media->bus, NULL)) > 0) {}
    return r < 0 ? -1 : 0;
}

int carrel_media_take_playing(carrel_media *media) {
    int seen = media->playing_seen;
    media->playing_seen = 0;
    return seen;
}

void carrel_media_close(carrel_media *media) {
    if (!media) return;
    sd_bus_slot_unref(media->match);
    /* Closing the bus drops the calls still out, callbacks and all; then
     * their contexts can go with the run. A bus the daemon has not let in
     * yet is not flushed: sd_bus_flush would wait for the daemon first. */
    if (sd_bus_is_ready(media->bus) > 0)
        sd_bus_flush_close_unref(media->bus);
    else
        sd_bus_close_unref(media->bus);
    free_run(media->run);
    free(media);
}

int carrel_fs_type(const char *path, unsigned long *type) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *type = (unsigned long)info.f_type;
    return 0;
}
