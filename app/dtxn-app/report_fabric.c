/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric driver's own counters for the report (section
 * "fabric_driver", doc/guides/report.md): on --fabric ucx what
 * dtxn_ucx_stats_get() counts (doc/guides/ucx.md); on --fabric mlx5 what
 * dtxn_mlx5_stats_get() counts (doc/guides/mlx5.md). The emulating
 * drivers have none beyond the per-MN verbs.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dtxn_stats.h"
#include "app.h"
#ifdef DTXN_HAVE_MLX5DV
#include "dtxn_fabric_mlx5.h"
#endif
#ifdef DTXN_HAVE_UCX
#include "dtxn_fabric_ucx.h"
#endif

#if defined(DTXN_HAVE_MLX5DV) || defined(DTXN_HAVE_UCX)
static void
kv_u64(struct dtxn_report_driver *d, const char *key, uint64_t v)
{
	if (d->n < DTXN_REPORT_MAX_DRIVER_KV)
		d->kv[d->n++] = (struct dtxn_report_kv){ .key = key, .u64 = v };
}

#endif
#ifdef DTXN_HAVE_MLX5DV
static void
kv_str(struct dtxn_report_driver *d, const char *key, const char *v)
{
	if (d->n < DTXN_REPORT_MAX_DRIVER_KV)
		d->kv[d->n++] = (struct dtxn_report_kv){ .key = key, .str = v };
}
#endif

#ifdef DTXN_HAVE_UCX
/* --fabric ucx: what the driver counts (doc/guides/ucx.md). */
static bool
report_ucx(const struct dtxn_fabric *f, struct dtxn_report_driver *d)
{
	struct dtxn_ucx_stats s;

	if (dtxn_ucx_stats_get(f, &s) != 0)
		return false;
	d->name = "ucx";
	kv_u64(d, "fences", s.fences);
	kv_u64(d, "flushes", s.flushes);
	kv_u64(d, "mcas_loop_cas", s.mcas_loop_cas);
	kv_u64(d, "dropped_sends", s.dropped);
	kv_u64(d, "ctl_wakeups", s.wakeups);
	kv_u64(d, "verb_msgs", s.verb_msgs);
	kv_u64(d, "verbs_in_msgs", s.verbs_in_msgs);
	kv_u64(d, "verb_msgs_refused", s.verb_refused);
	return true;
}
#endif

bool
app_report_fabric_driver(const struct dtxn_fabric *f, struct dtxn_report_driver *d,
			 char *dev, size_t dev_len)
{
	memset(d, 0, sizeof(*d));
#ifdef DTXN_HAVE_UCX
	if (report_ucx(f, d))
		return true;
#endif
#ifdef DTXN_HAVE_MLX5DV
	struct dtxn_mlx5_stats s;

	if (dtxn_mlx5_stats_get(f, &s) != 0)
		return false;
	snprintf(dev, dev_len, "%s port %u", s.dev, s.port);
	d->name = "mlx5";
	kv_str(d, "device", dev);
	kv_str(d, "masked_cas", s.masked_cas_raw ? "raw WQE" : "CAS loop");
	kv_str(d, "timestamp_words", s.dm ? "device memory" : "host memory");
	kv_u64(d, "max_inline", s.max_inline);
	kv_u64(d, "doorbells", s.doorbells);
	kv_u64(d, "wrs", s.wrs);
	kv_u64(d, "inline_wrs", s.inline_wrs);
	kv_u64(d, "signaled", s.signaled);
	kv_u64(d, "mcas_raw", s.mcas_raw);
	kv_u64(d, "mcas_loop", s.mcas_loop);
	kv_u64(d, "mcas_loop_cas", s.mcas_loop_cas);
	kv_u64(d, "bounced", s.bounced);
	return true;
#else
	(void)f;
	(void)dev;
	(void)dev_len;
	return false;
#endif
}
