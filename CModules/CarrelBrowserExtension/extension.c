/*
 * carrel-browser's web process extension: the SEB headers on every request
 * and the SEB JavaScript API in every frame, before the page's own scripts.
 * See include/carrel_browser_extension.h.
 */
#include <webkit/webkit-web-process-extension.h>
#include <string.h>

static char *config_key;
static char *browser_exam_key;
static char *app_version;
static gboolean send_browser_exam_key;

/* SHA-256(url without its fragment + key), lowercase hex; g_free it. */
static char *url_hash(const char *url, const char *key)
{
	const char *fragment = strchr(url, '#');
	gsize length = fragment ? (gsize)(fragment - url) : strlen(url);
	GChecksum *checksum = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(checksum, (const guchar *)url, (gssize)length);
	g_checksum_update(checksum, (const guchar *)key, (gssize)strlen(key));
	char *hex = g_strdup(g_checksum_get_string(checksum));
	g_checksum_free(checksum);
	return hex;
}

static gboolean on_send_request(WebKitWebPage *page, WebKitURIRequest *request, WebKitURIResponse *redirected,
                                gpointer data)
{
	(void)page, (void)redirected, (void)data;
	const char *uri = webkit_uri_request_get_uri(request);
	if (!uri || !(g_str_has_prefix(uri, "http://") || g_str_has_prefix(uri, "https://")))
		return FALSE;
	SoupMessageHeaders *headers = webkit_uri_request_get_http_headers(request);
	if (!headers)
		return FALSE;
	char *hash = url_hash(uri, config_key);
	soup_message_headers_replace(headers, "X-SafeExamBrowser-ConfigKeyHash", hash);
	g_free(hash);
	if (send_browser_exam_key) {
		hash = url_hash(uri, browser_exam_key);
		soup_message_headers_replace(headers, "X-SafeExamBrowser-RequestHash", hash);
		g_free(hash);
	}
	return FALSE; /* FALSE: send it */
}

static void on_page_created(WebKitWebProcessExtension *extension, WebKitWebPage *page, gpointer data)
{
	(void)extension, (void)data;
	g_signal_connect(page, "send-request", G_CALLBACK(on_send_request), NULL);
}

/* The native half of the API: both hashes for the page's URL, space-separated.
 * Reachable only from the closure below, never from page scripts. */
static char *keys_for_url(const char *url, gpointer data)
{
	(void)data;
	if (!url)
		url = "";
	char *config = url_hash(url, config_key);
	char *exam = url_hash(url, browser_exam_key);
	char *both = g_strconcat(config, " ", exam, NULL);
	g_free(config);
	g_free(exam);
	return both;
}

/* window.SafeExamBrowser: read-only, computed for the document's URL when
 * first read and again at updateKeys(callback), as SEB's API does. */
static const char api_script[] =
	"(function (keysForURL, version) {\n"
	"  'use strict';\n"
	"  var state = null;\n"
	"  function refresh() { state = String(keysForURL(String(window.location.href))).split(' '); }\n"
	"  var security = {};\n"
	"  Object.defineProperty(security, 'configKey', { get: function () { if (!state) refresh(); return state[0]; }, enumerable: true });\n"
	"  Object.defineProperty(security, 'browserExamKey', { get: function () { if (!state) refresh(); return state[1]; }, enumerable: true });\n"
	"  Object.defineProperty(security, 'appVersion', { value: version, enumerable: true });\n"
	"  Object.defineProperty(security, 'updateKeys', { value: function (callback) {\n"
	"    refresh();\n"
	"    if (typeof callback === 'function') callback();\n"
	"  }, enumerable: true });\n"
	"  Object.freeze(security);\n"
	"  var api = Object.freeze({ version: version, security: security });\n"
	"  Object.defineProperty(window, 'SafeExamBrowser', { value: api, writable: false, configurable: false, enumerable: false });\n"
	"})";

static void on_window_object_cleared(WebKitScriptWorld *world, WebKitWebPage *page, WebKitFrame *frame, gpointer data)
{
	(void)page, (void)data;
	JSCContext *context = webkit_frame_get_js_context_for_script_world(frame, world);
	JSCValue *native = jsc_value_new_function(context, NULL, G_CALLBACK(keys_for_url), NULL, NULL, G_TYPE_STRING, 1,
	                                          G_TYPE_STRING);
	JSCValue *install = jsc_context_evaluate(context, api_script, -1);
	if (install && jsc_value_is_function(install)) {
		JSCValue *result = jsc_value_function_call(install, JSC_TYPE_VALUE, native, G_TYPE_STRING, app_version,
		                                           G_TYPE_NONE);
		g_clear_object(&result);
	} else {
		g_warning("carrel-browser: could not define window.SafeExamBrowser");
	}
	g_clear_object(&install);
	g_clear_object(&native);
	g_object_unref(context);
}

G_MODULE_EXPORT void webkit_web_process_extension_initialize_with_user_data(WebKitWebProcessExtension *extension,
                                                                            const GVariant *user_data)
{
	if (!user_data || !g_variant_is_of_type((GVariant *)user_data, G_VARIANT_TYPE("(sssb)"))) {
		g_warning("carrel-browser: the web process extension got no keys; SEB headers and API are off");
		return;
	}
	g_variant_get((GVariant *)user_data, "(sssb)", &config_key, &browser_exam_key, &app_version,
	              &send_browser_exam_key);
	g_signal_connect(extension, "page-created", G_CALLBACK(on_page_created), NULL);
	g_signal_connect(webkit_script_world_get_default(), "window-object-cleared",
	                 G_CALLBACK(on_window_object_cleared), NULL);
}
