/* The web process extension API; only CarrelBrowserExtension (C) uses it. */
#include <webkit/webkit-web-process-extension.h>
