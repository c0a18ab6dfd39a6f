/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Library diagnostics (issue 11: one line per error, always). Unless the
 * user asks for logs (--log-level), everything DPDK and dtxn's libraries
 * log through rte_log from EAL start to the end of the run goes to a
 * bounded buffer instead of the terminal: app_err() folds the last of it
 * into its one line ("...: no memory (EAL: ...)"), a run that succeeds
 * shows it at the end, a failed one drops it (its one line said why), so
 * a failure never spills hundreds of teardown lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_log.h>

#include "app.h"

/** Captured text kept (the newest), bytes. */
#define APP_LOG_KEEP 16384

static struct {
	FILE *stream;
	char buf[APP_LOG_KEEP];
	size_t len;            /* bytes in buf */
	uint64_t dropped;      /* lines that did not fit */
	char last[256];        /* the newest non-empty line not yet folded */
} g_log;

static ssize_t
log_write(void *cookie, const char *data, size_t size)
{
	size_t n = size;

	RTE_SET_USED(cookie);
	/* keep the newest APP_LOG_KEEP bytes, whole lines, counting the rest */
	if (g_log.len + n > sizeof(g_log.buf)) {
		size_t cut = g_log.len + n - sizeof(g_log.buf);
		char *nl;

		if (cut >= g_log.len) {
			g_log.dropped += g_log.len > 0;
			g_log.len = 0;
		} else {
			nl = memchr(g_log.buf + cut, '\n', g_log.len - cut);
			cut = nl != NULL ? (size_t)(nl - g_log.buf) + 1 : g_log.len;
			for (size_t i = 0; i < cut; i++)
				g_log.dropped += g_log.buf[i] == '\n';
			memmove(g_log.buf, g_log.buf + cut, g_log.len - cut);
			g_log.len -= cut;
		}
	}
	if (n <= sizeof(g_log.buf) - g_log.len) {
		memcpy(g_log.buf + g_log.len, data, n);
		g_log.len += n;
	}
	/* the newest error line, without its newline, for app_err() */
	if (rte_log_cur_msg_loglevel() > (int)RTE_LOG_ERR)
		return (ssize_t)size;
	while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == ' '))
		n--;
	if (n > 0)
		snprintf(g_log.last, sizeof(g_log.last), "%.*s", (int)n, data);
	return (ssize_t)size;
}

int
app_log_capture(void)
{
	cookie_io_functions_t io = { .write = log_write };

	g_log.stream = fopencookie(NULL, "w", io);
	if (g_log.stream == NULL)
		return -1;
	setvbuf(g_log.stream, NULL, _IOLBF, 0);
	return rte_openlog_stream(g_log.stream);
}

void
app_log_release(bool show)
{
	if (g_log.stream == NULL)
		return;
	fflush(g_log.stream);
	rte_openlog_stream(NULL);
	fclose(g_log.stream);
	g_log.stream = NULL;
	if (show && g_log.len > 0) {
		if (g_log.dropped > 0)
			fprintf(stderr, "(%" PRIu64 " earlier library log lines not shown)\n",
				g_log.dropped);
		fwrite(g_log.buf, 1, g_log.len, stderr);
	}
	g_log.len = 0;
}

size_t
app_log_take_last(char *buf, size_t len)
{
	size_t n;

	if (g_log.stream != NULL)
		fflush(g_log.stream);
	n = strlen(g_log.last);
	if (len > 0)
		snprintf(buf, len, "%s", g_log.last);
	g_log.last[0] = '\0';
	return n;
}
