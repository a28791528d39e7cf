#ifndef CARREL_SHIM_LOG_INTERNAL_H
#define CARREL_SHIM_LOG_INTERNAL_H

/* Logs through wlroots' logger with a printf format (defined in bridge.c),
 * for the guards' own messages; Swift uses carrel_log with a preformatted line. */
void carrel_vlog(int importance, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
