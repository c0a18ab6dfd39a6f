/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a process of this host still runs (dtxn_plock.h): the liveness
 * check behind a plock's takeover and the cluster's dead-slot detection.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_plock.h"

bool
dtxn_proc_alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Whether /proc/PID/status (@p f) shows SIGKILL pending in @p field ("ShdPnd:" or "SigPnd:"). */
static bool
proc_kill_pending(FILE *f, const char *field)
{
	char line[128];
	size_t n = strlen(field);

	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, n) == 0)
			return (strtoull(line + n, NULL, 16) >> (SIGKILL - 1)) & 1;
	return false;
}

enum dtxn_proc_state
dtxn_proc_state(int32_t pid)
{
	char path[64], buf[512], state = 0;
	enum dtxn_proc_state ps = DTXN_PROC_LIVE;
	const char *rp;
	size_t n;
	FILE *f;

	if (!dtxn_proc_alive(pid))
		return DTXN_PROC_GONE;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return errno == ENOENT ? DTXN_PROC_GONE : DTXN_PROC_LIVE;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')' (comm may hold one) */
	rp = strrchr(buf, ')');
	if (rp != NULL && rp[1] == ' ')
		state = rp[2];
	if (state == 'Z' || state == 'X' || state == 'x')
		return DTXN_PROC_GONE; /* no thread left: it executes nothing more */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return errno == ENOENT ? DTXN_PROC_GONE : DTXN_PROC_LIVE;
	if (proc_kill_pending(f, "ShdPnd:") || proc_kill_pending(f, "SigPnd:"))
		ps = DTXN_PROC_DYING;
	fclose(f);
	return ps;
}
