/*
 * carrel-browser's web process extension: the SEB headers on every request,
 * the SEB JavaScript API in every frame, before the page's own scripts, and,
 * when the configuration filters content, the URL filter on every request.
 * See include/carrel_browser_extension.h.
 */
#include <webkit/webkit-web-process-extension.h>
#include <string.h>
#include <unistd.h>

static char *config_key;
static char *browser_exam_key;
static char *app_version;
static gboolean send_browser_exam_key;

/* The URL filter's rules as carrel-browser decided them (CarrelSEB's
 * URLFilter.orderedRules): block rules, then allow rules, each a regular
 * expression in the dialect ICU and PCRE read alike. The first that matches
 * decides; what none matches is blocked. Nothing here interprets SEB's
 * rules: the browser wrote these patterns and decides navigations with
 * the very same ones. */
struct filter_rule {
	GRegex *regex;
	gboolean allow;
};
static gboolean filter_content;
static struct filter_rule *filter_rules;
static gsize filter_rule_count;
/* A pattern GRegex would not take: every request is blocked (fail closed).
 * carrel-browser compiles each one with GRegex before it starts, so this
 * does not happen unless the two disagree. */
static gboolean filter_broken;

/* One line on standard output, as carrel-browser prints its own, written at once. */
static void say(const char *what, const char *uri)
{
	char *line = g_strdup_printf("carrel-browser: %s %s\n", what, uri);
	ssize_t ignored = write(STDOUT_FILENO, line, strlen(line));
	(void)ignored;
	g_free(line);
}

/* Whether a request for `uri` may leave, when content is filtered. */
static gboolean request_allowed(const char *uri)
{
	if (g_str_has_prefix(uri, "http://") || g_str_has_prefix(uri, "https://")) {
		if (filter_broken)
			return FALSE;
		for (gsize i = 0; i < filter_rule_count; i++) {
			if (g_regex_match(filter_rules[i].regex, uri, 0, NULL))
				return filter_rules[i].allow;
		}
		return FALSE;
	}
	/* A page's own content, which no request fetches (as the browser allows for navigations). */
	return g_str_has_prefix(uri, "data:") || g_str_has_prefix(uri, "blob:") || g_str_has_prefix(uri, "about:");
}

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
	if (filter_content && !(uri && request_allowed(uri))) {
		say("blocked request", uri ? uri : "(no URL)");
		return TRUE; /* TRUE: cancel it; it never leaves the machine */
	}
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

static void read_filter(GVariantIter *rules)
{
	filter_rule_count = g_variant_iter_n_children(rules);
	filter_rules = g_new0(struct filter_rule, filter_rule_count);
	gboolean allow;
	const char *pattern;
	for (gsize i = 0; g_variant_iter_next(rules, "(b&s)", &allow, &pattern); i++) {
		GError *error = NULL;
		filter_rules[i].allow = allow;
		filter_rules[i].regex = g_regex_new(pattern, G_REGEX_CASELESS, 0, &error);
		if (!filter_rules[i].regex) {
			g_warning("carrel-browser: the URL filter's pattern %s does not compile (%s); every request is blocked",
			          pattern, error->message);
			g_error_free(error);
			filter_broken = TRUE;
		}
	}
}

G_MODULE_EXPORT void webkit_web_process_extension_initialize_with_user_data(WebKitWebProcessExtension *extension,
                                                                            const GVariant *user_data)
{
	GVariantIter *rules = NULL;
	if (!user_data || !g_variant_is_of_type((GVariant *)user_data, G_VARIANT_TYPE("(sssbba(bs))"))) {
		/* Without the tuple the page would get no keys, and no content filter
		 * the configuration may ask for: nothing is sent at all. */
		g_warning("carrel-browser: the web process extension got no keys or filter; every request is blocked");
		filter_content = TRUE;
		filter_broken = TRUE;
		g_signal_connect(extension, "page-created", G_CALLBACK(on_page_created), NULL);
		return;
	}
	g_variant_get((GVariant *)user_data, "(sssbba(bs))", &config_key, &browser_exam_key, &app_version,
	              &send_browser_exam_key, &filter_content, &rules);
	read_filter(rules);
	g_variant_iter_free(rules);
	g_signal_connect(extension, "page-created", G_CALLBACK(on_page_created), NULL);
	g_signal_connect(webkit_script_world_get_default(), "window-object-cleared",
	                 G_CALLBACK(on_window_object_cleared), NULL);
}
