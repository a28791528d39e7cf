/*
 * carrel-browser's web process extension. WebKit loads it into every web
 * process; carrel-browser hands it, as initialization data, the tuple
 * (config key, browser exam key, app version, send browser exam key header,
 * filter every request, [(allow, regular expression)]): GVariant "(sssbba(bs))".
 *
 * It adds X-SafeExamBrowser-ConfigKeyHash (and X-SafeExamBrowser-RequestHash)
 * to every http(s) request, and defines window.SafeExamBrowser before any of
 * a page's scripts run. Page scripts see only per-URL hashes, never the keys.
 * When the configuration filters every request (SEB's
 * URLFilterEnableContentFilter), it cancels each request the rules do not
 * allow before it is sent: the first rule whose pattern matches the URL
 * decides, none matching blocks; data:, blob: and about: pass, other
 * schemes do not.
 */
#ifndef CARREL_BROWSER_EXTENSION_H
#define CARREL_BROWSER_EXTENSION_H
/* The entry point WebKit looks up; nothing else is exported. */
#endif
