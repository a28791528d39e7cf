// MPRIS pausing over sd-bus; see CarrelMedia.h.
#include "CarrelMedia.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <systemd/sd-bus.h>

#define MPRIS_PREFIX "org.mpris.MediaPlayer2."
#define MPRIS_PATH "/org/mpris/MediaPlayer2"
#define MPRIS_PLAYER "org.mpris.MediaPlayer2.Player"

struct carrel_media {
    sd_bus *bus;
    sd_bus_slot *match;
    int playing_seen;
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

int carrel_media_watch(carrel_media *media, char *err, size_t errlen) {
    int r = sd_bus_match_signal(media->bus, &media->match, NULL, MPRIS_PATH, "org.freedesktop.DBus.Properties",
                                "PropertiesChanged", on_properties_changed, media);
    if (r < 0) { set_error(err, errlen, "could not watch the players' PropertiesChanged", r, NULL); return -1; }
    return 0;
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
    sd_bus_flush_close_unref(media->bus);
    free(media);
}

int carrel_fs_type(const char *path, unsigned long *type) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *type = (unsigned long)info.f_type;
    return 0;
}
