/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --fault cnJ[,cnK...]@SECONDS, --fault-drop and --lease-ms
 * (doc/guides/cluster.md, "Recovery"; doc/guides/sim.md): which CNs a
 * simulated run kills, when, and what of their posted WRs is lost; the CN lists of
 * --fault and --announce-restart (app_cn_list_parse()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_txn.h"
#include "app.h"

bool
app_agents_on(const struct app_conf *c)
{
	return c->fault[0] != '\0' || c->lease_auto ||
	       (app_conf_given(c, "lease_ms") && c->lease_ms > 0);
}

void
app_lease_default(struct app_conf *c)
{
	c->lease_auto = false;
	if (app_conf_given(c, "lease_ms") || c->fault[0] != '\0' ||
	    (strcmp(c->role, "mn") != 0 && strcmp(c->role, "cn") != 0))
		return;
	/* a protocol that cannot recover a dead CN (FORD published, Scythe's
	 * CAS locks, CREST local without parallel commit) runs without: a
	 * dead CN then fails the run's checks, as before */
	if (!dtxn_protocol_can_recover(c->protocol, c->cc_opts))
		return;
	c->lease_ms = APP_LEASE_MS_PROCESSES;
	c->lease_auto = true;
}

unsigned
app_agent_coords(const struct app_conf *c)
{
	return app_agents_on(c) ? (unsigned)c->cn * 2u /* APP_AGENT_COORDS, agent.h */ : 0u;
}

/* One "cnJ" of the list into @p mask; 0 or -1 after one line. */
static int
cn_list_node(const struct app_conf *c, const char *opt, const char *val, const char *s,
	     size_t len, uint64_t *mask)
{
	char *end;
	unsigned long j;

	if (len < 3 || strncmp(s, "cn", 2) != 0 || s[2] < '0' || s[2] > '9') {
		app_err("--%s %s: '%.*s' is not a CN name (cn0, cn1, ...)", opt, val, (int)len, s);
		return -1;
	}
	errno = 0;
	j = strtoul(s + 2, &end, 10);
	if (end != s + len || errno != 0 || j >= c->cn) {
		app_err("--%s %s: '%.*s' is not a CN of this run (cn0 .. cn%" PRIu64 ")", opt, val,
			(int)len, s, c->cn - 1);
		return -1;
	}
	if (c->mn + j >= DTXN_MASK_NODES) {
		/* recovery's node masks and the CN masks are 64 bits */
		app_err("--%s %s: cn%lu is node %" PRIu64 "; only CNs below node %u can be named",
			opt, val, j, c->mn + j, DTXN_MASK_NODES);
		return -1;
	}
	if (*mask & (UINT64_C(1) << j)) {
		app_err("--%s %s: cn%lu is named twice", opt, val, j);
		return -1;
	}
	*mask |= UINT64_C(1) << j;
	return 0;
}

int
app_cn_list_parse(const struct app_conf *c, const char *opt, const char *val, const char *list,
		  const char *end, uint64_t *mask)
{
	for (const char *p = list; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma != NULL ? comma : end;

		if (cn_list_node(c, opt, val, p, (size_t)(e - p), mask) != 0)
			return -1;
		p = comma != NULL ? comma + 1 : end;
		if (comma != NULL && p == end) {
			app_err("--%s %s: a CN name is missing after the last ','", opt, val);
			return -1;
		}
	}
	return 0;
}

uint32_t
app_fault_debug_flags(const struct app_conf *c)
{
	if (strcmp(c->debug_crash_after, "backup-visible") == 0)
		return DTXN_DEBUG_CRASH_MID_COMMIT;
	return strcmp(c->debug_crash_after, "unlocked") == 0 ? DTXN_DEBUG_CRASH_UNLOCKED : 0;
}

/* --debug-crash-after: a known point, with --fault, that the protocol implements. */
static int
fault_crash_validate(const struct app_conf *c)
{
	int iso = dtxn_isolation_parse(c->isolation);

	if (c->debug_crash_after[0] == '\0' || strcmp(c->debug_crash_after, "none") == 0)
		return 0;
	if (app_fault_debug_flags(c) == 0) {
		app_err("--debug-crash-after: unknown point '%s' (none, backup-visible, unlocked)",
			c->debug_crash_after);
		return -1;
	}
	if (c->fault_mask == 0) {
		app_err("--debug-crash-after %s: only with --fault (it crashes a txn of the CNs --fault kills)",
			c->debug_crash_after);
		return -1;
	}
	if (iso >= 0 && dtxn_cc_weaken_supported(c->protocol, (enum dtxn_isolation)iso,
						 app_fault_debug_flags(c), NULL, 0) != 1) {
		app_err("--debug-crash-after %s: protocol %s has no such crash point (lotus has)",
			c->debug_crash_after, c->protocol);
		return -1;
	}
	return 0;
}

int
app_fault_validate(struct app_conf *c)
{
	const char *at;
	char *end;
	double t;

	c->fault_mask = 0;
	c->fault_at_s = 0;
	if (app_conf_given(c, "lease_ms") && c->lease_ms > 0 && c->lease_ms < 0.1) {
		app_err("--lease-ms %g: at least 0.1, or 0 (failure detection off)", c->lease_ms);
		return -1;
	}
	if (c->fault[0] != '\0' && app_conf_given(c, "lease_ms") && c->lease_ms == 0) {
		app_err("--fault %s: needs failure detection, which --lease-ms 0 turns off", c->fault);
		return -1;
	}
	if (c->fault[0] == '\0' && c->fault_drop > 0) {
		app_err("--fault-drop %g: only with --fault (it drops the posted WRs of the CNs --fault kills)",
			c->fault_drop);
		return -1;
	}
	if (c->fault[0] == '\0')
		return fault_crash_validate(c);
	if (strcmp(c->fabric, "sim") != 0) {
		app_err("--fault: only with --fabric sim (other fabrics: dtxn-cluster --kill)");
		return -1;
	}
	at = strchr(c->fault, '@');
	if (at == NULL || at == c->fault) {
		app_err("--fault %s: expected CNs@SECONDS, e.g. cn1,cn2@0.05", c->fault);
		return -1;
	}
	if (app_cn_list_parse(c, "fault", c->fault, c->fault, at, &c->fault_mask) != 0)
		return -1;
	errno = 0;
	t = strtod(at + 1, &end);
	if (at[1] == '\0' || *end != '\0' || errno != 0 || !(t > 0)) {
		app_err("--fault %s: '%s' is not a positive number of seconds", c->fault, at + 1);
		return -1;
	}
	if (c->txns == 0 && t >= c->warmup_s + c->duration_s) {
		app_err("--fault %s: %g s is not within the run (--warmup + --duration = %g s)",
			c->fault, t, c->warmup_s + c->duration_s);
		return -1;
	}
	if (__builtin_popcountll(c->fault_mask) >= (int)c->cn) {
		app_err("--fault %s: every CN would die; leave one to recover the others",
			c->fault);
		return -1;
	}
	c->fault_at_s = t;
	return fault_crash_validate(c);
}
