/* The lockdown: carrel_assessment_manager_v1 bound on the app's own
 * connection, its announced features and lock state, and the bookkeeping
 * that lets the app destroy things from inside its callbacks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

struct global_finder {
	bool found;
	uint32_t name;
	uint32_t version;
};

static void handle_global(void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                          uint32_t version)
{
	(void)registry;
	struct global_finder *finder = data;
	if (strcmp(interface, carrel_assessment_manager_v1_interface.name) == 0) {
		finder->found = true;
		finder->name = name;
		finder->version = version;
	}
}

static void handle_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
	(void)data, (void)registry, (void)name;
}

static const struct wl_registry_listener registry_listener = {
	.global = handle_global,
	.global_remove = handle_global_remove,
};

static void handle_feature(void *data, struct carrel_assessment_manager_v1 *manager, uint32_t feature,
                           uint32_t enforcement)
{
	(void)manager;
	struct carrel_assessment *lockdown = data;
	/* Features of later versions are not ours to configure. */
	if (feature >= CARREL_ASSESSMENT_FEATURE_COUNT)
		return;
	if (!lockdown->features_announced) {
		for (int i = 0; i < CARREL_ASSESSMENT_FEATURE_COUNT; i++)
			lockdown->announced[i] = CARREL_ASSESSMENT_ENFORCEMENT_NOT_ANNOUNCED;
		lockdown->features_announced = true;
	}
	/* An enforcement this side does not know is read as the app's job: the safe side. */
	lockdown->announced[feature] = enforcement == CARREL_ASSESSMENT_MANAGER_V1_ENFORCEMENT_COMPOSITOR
	                                       ? CARREL_ASSESSMENT_ENFORCEMENT_COMPOSITOR
	                                       : CARREL_ASSESSMENT_ENFORCEMENT_CLIENT;
}

static void handle_lock_state(void *data, struct carrel_assessment_manager_v1 *manager, uint32_t state)
{
	(void)manager;
	struct carrel_assessment *lockdown = data;
	/* Any value but inactive means something holds the lock. */
	lockdown->announced_lock_state = state == CARREL_ASSESSMENT_MANAGER_V1_LOCK_STATE_INACTIVE
	                                         ? CARREL_ASSESSMENT_LOCK_INACTIVE
	                                         : CARREL_ASSESSMENT_LOCK_ACTIVE;
}

static void handle_done(void *data, struct carrel_assessment_manager_v1 *manager)
{
	(void)manager;
	struct carrel_assessment *lockdown = data;
	if (lockdown->features_announced) {
		memcpy(lockdown->enforcement, lockdown->announced, sizeof lockdown->enforcement);
		lockdown->features_announced = false;
	}
	if (lockdown->announced_lock_state < 0)
		return;
	enum carrel_assessment_lock_state state = (enum carrel_assessment_lock_state)lockdown->announced_lock_state;
	lockdown->announced_lock_state = -1;
	if (state == lockdown->lock_state)
		return;
	lockdown->lock_state = state;
	if (lockdown->lock_state_callback) {
		lockdown_enter(lockdown);
		lockdown->lock_state_callback(lockdown->lock_state_data, lockdown, state);
		lockdown_leave(lockdown);
	}
}

static const struct carrel_assessment_manager_v1_listener manager_listener = {
	.feature = handle_feature,
	.lock_state = handle_lock_state,
	.done = handle_done,
};

static struct carrel_assessment *fail(enum carrel_assessment_error *error, enum carrel_assessment_error code)
{
	if (error)
		*error = code;
	return NULL;
}

CARREL_PUBLIC struct carrel_assessment *carrel_assessment_create(struct wl_display *display,
                                                                 struct wl_event_queue *queue,
                                                                 enum carrel_assessment_error *error)
{
	if (!display)
		return fail(error, CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	struct carrel_assessment *lockdown = calloc(1, sizeof *lockdown);
	if (!lockdown)
		return fail(error, CARREL_ASSESSMENT_ERROR_NO_MEMORY);
	lockdown->display = display;
	lockdown->references = 1;
	lockdown->announced_lock_state = -1;
	wl_list_init(&lockdown->sessions);
	for (int i = 0; i < CARREL_ASSESSMENT_FEATURE_COUNT; i++)
		lockdown->enforcement[i] = CARREL_ASSESSMENT_ENFORCEMENT_NOT_ANNOUNCED;

	/* A private queue, so these roundtrips dispatch only our own events and
	 * never run the toolkit's handlers behind its back. */
	enum carrel_assessment_error code = CARREL_ASSESSMENT_ERROR_CONNECTION;
	struct wl_event_queue *private_queue = wl_display_create_queue(display);
	struct wl_display *wrapper = private_queue ? wl_proxy_create_wrapper(display) : NULL;
	struct wl_registry *registry = NULL;
	if (!wrapper)
		goto out;
	wl_proxy_set_queue((struct wl_proxy *)wrapper, private_queue);
	registry = wl_display_get_registry(wrapper);
	wl_proxy_wrapper_destroy(wrapper);
	if (!registry)
		goto out;
	struct global_finder finder = {0};
	wl_registry_add_listener(registry, &registry_listener, &finder);
	if (wl_display_roundtrip_queue(display, private_queue) < 0)
		goto out;
	if (!finder.found) {
		code = CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE;
		goto out;
	}
	lockdown->version = finder.version < CARREL_ASSESSMENT_PROTOCOL_VERSION ? finder.version
	                                                                         : CARREL_ASSESSMENT_PROTOCOL_VERSION;
	/* The new proxy inherits the registry's private queue. */
	lockdown->manager = wl_registry_bind(registry, finder.name, &carrel_assessment_manager_v1_interface,
	                                     lockdown->version);
	if (!lockdown->manager)
		goto out;
	carrel_assessment_manager_v1_add_listener(lockdown->manager, &manager_listener, lockdown);
	/* The compositor answers the bind with features, lock_state and done. */
	if (wl_display_roundtrip_queue(display, private_queue) < 0)
		goto out;
	/* From now on the manager and the sessions made through it are
	 * dispatched where the app dispatches. */
	wl_proxy_set_queue((struct wl_proxy *)lockdown->manager, queue);
	code = CARREL_ASSESSMENT_OK;
out:
	if (registry)
		wl_registry_destroy(registry);
	if (code != CARREL_ASSESSMENT_OK && lockdown->manager) {
		carrel_assessment_manager_v1_destroy(lockdown->manager);
		lockdown->manager = NULL;
	}
	if (private_queue)
		wl_event_queue_destroy(private_queue);
	if (code != CARREL_ASSESSMENT_OK) {
		free(lockdown);
		return fail(error, code);
	}
	if (error)
		*error = CARREL_ASSESSMENT_OK;
	return lockdown;
}

CARREL_PUBLIC void carrel_assessment_destroy(struct carrel_assessment *lockdown)
{
	if (!lockdown || !lockdown->manager)
		return;
	/* Destroying the manager does not end sessions: they keep the lockdown
	 * (and the display) until they are destroyed. */
	carrel_assessment_manager_v1_destroy(lockdown->manager);
	lockdown->manager = NULL;
	lockdown->lock_state_callback = NULL;
	lockdown_flush(lockdown);
	lockdown_unref(lockdown);
}

CARREL_PUBLIC uint32_t carrel_assessment_get_version(const struct carrel_assessment *lockdown)
{
	return lockdown ? lockdown->version : 0;
}

CARREL_PUBLIC enum carrel_assessment_enforcement carrel_assessment_get_enforcement(
	const struct carrel_assessment *lockdown, enum carrel_assessment_feature feature)
{
	if (!lockdown || (unsigned)feature >= CARREL_ASSESSMENT_FEATURE_COUNT)
		return CARREL_ASSESSMENT_ENFORCEMENT_NOT_ANNOUNCED;
	return lockdown->enforcement[feature];
}

CARREL_PUBLIC enum carrel_assessment_lock_state carrel_assessment_get_lock_state(const struct carrel_assessment *lockdown)
{
	return lockdown ? lockdown->lock_state : CARREL_ASSESSMENT_LOCK_INACTIVE;
}

CARREL_PUBLIC void carrel_assessment_set_lock_state_callback(struct carrel_assessment *lockdown,
                                                             carrel_assessment_lock_state_fn callback, void *data)
{
	if (!lockdown)
		return;
	lockdown->lock_state_callback = callback;
	lockdown->lock_state_data = data;
}

CARREL_PUBLIC bool carrel_assessment_supports_multiple_participants(const struct carrel_assessment *lockdown)
{
	return lockdown && lockdown->version >= 2;
}

CARREL_PUBLIC void carrel_assessment_connection_failed(struct carrel_assessment *lockdown)
{
	if (!lockdown)
		return;
	const char *reason = strerror(wl_display_get_error(lockdown->display) ? wl_display_get_error(lockdown->display) : EPIPE);
	char message[256];
	snprintf(message, sizeof message, "the connection to the compositor failed: %s", reason);
	lockdown_enter(lockdown);
	struct carrel_assessment_session *session;
	wl_list_for_each(session, &lockdown->sessions, link)
		session_connection_lost(session, message);
	lockdown_leave(lockdown);
}

void lockdown_flush(struct carrel_assessment *lockdown)
{
	/* A full socket (EAGAIN) is flushed by the app's next dispatch; a dead
	 * connection shows up there too. */
	wl_display_flush(lockdown->display);
}

static void sweep(struct carrel_assessment *lockdown)
{
	struct carrel_assessment_session *session, *next;
	wl_list_for_each_safe(session, next, &lockdown->sessions, link) {
		if (session->destroyed) {
			wl_list_remove(&session->link);
			session_free(session);
			lockdown->references--;
		}
	}
	if (lockdown->references == 0)
		free(lockdown);
}

void lockdown_enter(struct carrel_assessment *lockdown)
{
	lockdown->delivering++;
}

void lockdown_leave(struct carrel_assessment *lockdown)
{
	if (--lockdown->delivering == 0)
		sweep(lockdown);
}

void lockdown_unref(struct carrel_assessment *lockdown)
{
	lockdown->references--;
	if (lockdown->delivering == 0 && lockdown->references == 0)
		free(lockdown);
}
