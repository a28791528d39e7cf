/* Counting the wl_shm_pool objects each client holds, so Carrel can refuse a
 * client that hoards them (the limit is Core's; this only counts and asks). */
#include "CarrelShim.h"

#include <stdlib.h>
#include <string.h>

/* One account per client. libwayland emits a client's destroy signal before it
 * destroys the client's resources, so an account outlives its client until
 * its last pool is gone; whichever of the two comes last frees it. */
struct carrel_shm_account {
    struct wl_client *client;
    uint32_t pools;
    bool client_gone;
    struct wl_listener resource_created;
    struct wl_listener client_destroy;
};

struct carrel_shm_pool_link {
    struct carrel_shm_account *account;
    struct wl_listener destroy;
};

static struct {
    struct wl_listener client_created;
    carrel_shm_pool_admit admit;
    void *context;
} carrel_shm_accounting;

static void carrel_shm_account_release(struct carrel_shm_account *account) {
    if (account->client_gone && account->pools == 0) {
        free(account);
    }
}

static void carrel_shm_pool_destroyed(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_shm_pool_link *link = wl_container_of(listener, link, destroy);
    wl_list_remove(&link->destroy.link);
    struct carrel_shm_account *account = link->account;
    free(link);
    account->pools--;
    carrel_shm_account_release(account);
}

static void carrel_shm_resource_created(struct wl_listener *listener, void *data) {
    struct carrel_shm_account *account = wl_container_of(listener, account, resource_created);
    struct wl_resource *resource = data;
    if (strcmp(wl_resource_get_class(resource), "wl_shm_pool") != 0) {
        return;
    }
    struct carrel_shm_pool_link *link = calloc(1, sizeof(*link));
    if (link == NULL) {
        wl_client_post_no_memory(account->client);
        return;
    }
    link->account = account;
    link->destroy.notify = carrel_shm_pool_destroyed;
    wl_resource_add_destroy_listener(resource, &link->destroy);
    account->pools++;
    carrel_shm_accounting.admit(carrel_shm_accounting.context, account->client, account->pools);
}

static void carrel_shm_client_destroyed(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_shm_account *account = wl_container_of(listener, account, client_destroy);
    wl_list_remove(&account->resource_created.link);
    wl_list_remove(&account->client_destroy.link);
    account->client_gone = true;
    carrel_shm_account_release(account);
}

static void carrel_shm_client_created(struct wl_listener *listener, void *data) {
    (void)listener;
    struct wl_client *client = data;
    struct carrel_shm_account *account = calloc(1, sizeof(*account));
    if (account == NULL) {
        wl_client_post_no_memory(client);
        return;
    }
    account->client = client;
    account->resource_created.notify = carrel_shm_resource_created;
    wl_client_add_resource_created_listener(client, &account->resource_created);
    account->client_destroy.notify = carrel_shm_client_destroyed;
    wl_client_add_destroy_listener(client, &account->client_destroy);
}

void carrel_install_shm_pool_accounting(struct wl_display *display, carrel_shm_pool_admit admit, void *context) {
    carrel_shm_accounting.admit = admit;
    carrel_shm_accounting.context = context;
    carrel_shm_accounting.client_created.notify = carrel_shm_client_created;
    wl_display_add_client_created_listener(display, &carrel_shm_accounting.client_created);
}
