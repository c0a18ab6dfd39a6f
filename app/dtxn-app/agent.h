/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_APP_AGENT_H
#define DTXN_APP_AGENT_H

/**
 * @file
 * The cluster agent of a CN (agent.c; doc/guides/cluster.md, "Recovery"):
 * two extra coordinators per CN. The heartbeat (APP_AGENT_BEAT) bumps the
 * CN's lease every beat and does nothing else, so that a long recovery
 * never lets its own CN's lease expire. The watcher (APP_AGENT_WATCH)
 * reads every CN's lease every beat and, on the designated survivor (the
 * lowest live CN), recovers each CN whose lease expired
 * (dtxn_coord_recover()) and marks it recovered. The same coroutines
 * serve the simulator, the embedded run and a --role cn process.
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_stats.h"
#include "dtxn_txn.h"

/** One recovery an agent ran. */
struct app_agent_rec {
	struct dtxn_recovery rec;  /**< in: dead CN, gids; out: the work */
	uint16_t by_node;          /**< fabric node id of the CN that recovered it */
	uint32_t inc;              /**< the incarnation recovered */
	uint64_t detect_ns;        /**< dtxn_now_ns() when its lease was found expired */
	uint64_t fence_ns;         /**< dtxn_now_ns() when its lease was taken away (fencing), 0: not fenced */
	bool unsettled;            /**< recovered, its counters not settled yet (struct app_agent.recovered) */
	int rc;                    /**< dtxn_coord_recover()'s return */
};

struct app_conf;

/** Coordinators of an agent, per CN. */
#define APP_AGENT_COORDS 2

/** The agent of one CN. Filled by the caller before the run (conf), by the agent after. */
struct app_agent {
	/* conf */
	uint64_t beat_ns;          /**< heartbeat and poll period */
	uint64_t lease_ns;         /**< a lease expires after this long without a beat */
	uint32_t gids_per_cn;      /**< benchmark coordinators per CN: CN j has gids [j * this, ..) */
	/**
	 * Self-fencing (--role cn; doc/guides/cluster.md "Self-fencing"): the
	 * heartbeat renews @c gate (dtxn_lease_renew()), which the CN's
	 * workers hold their mutating batches on; the watcher fences a dead
	 * CN (dtxn_lease_fence()) and waits a lease before it recovers it.
	 * false: plain beats, no wait (one process: no CN runs on alone).
	 */
	bool fencing;
	uint64_t guard_ns;         /**< fencing: WRs leave at most lease - this after a renewal */
	struct dtxn_lease_gate gate; /**< fencing: this CN's lease (inc set by the caller) */
	/**
	 * Optional: the time by which every WR a dead node posted has taken
	 * effect: the watcher waits for it before it recovers the node, as
	 * the RNIC goes on executing what the dead CN gave it, then calls it
	 * again: done when the time returned has passed. The simulator:
	 * dtxn_sim_node_drained_ns(); --role cn on shm: the dead process's
	 * WRs are applied in the call (dtxn_fabric_drain_node(): shm's WRs
	 * are executed by the posting process's poller, which died), 0; a
	 * process still being torn down (SIGKILL pending): 1 ms from now; a
	 * fenced process that lives (stopped, or descheduled past its lease)
	 * is SIGKILLed first (cn_drain_dead(), processes of one host). @c inc:
	 * the dead incarnation (its lease word's). NULL: at once.
	 */
	uint64_t (*drained_ns)(void *arg, uint16_t node, uint32_t inc);
	void *drained_arg;
	/**
	 * Optional: called by the watcher after each recovery it ran, before
	 * it marks the CN recovered (--role cn: app_cn_settle_dead() settles
	 * the dead process's benchmark counters in shared memory); -EAGAIN:
	 * not yet (a fenced process still lives), called again every beat
	 * and by app_agent_settle(). NULL: none.
	 */
	int (*recovered)(void *arg, const struct dtxn_recovery *rec);
	void *recovered_arg;
	/**
	 * Optional: called by the watcher right after it fenced a CN in the
	 * lease area, before it waits a lease and recovers it: the MNs'
	 * side of the fence (dtxn_fabric_fence_node(): on ucx the MN
	 * processes cut the dead CN's connections, so its late WRs change
	 * nothing). Blocks the watcher's lcore for the exchange (control
	 * path, a few ms). NULL: none.
	 */
	int (*fence_mns)(void *arg, uint16_t node);
	void *fence_arg;
	/**
	 * --role cn: set by the main lcore before the run, cleared once the
	 * cluster is closed (app_cn_done()): after this CN's run stops, its
	 * heartbeat and watcher go on while it is set, so that this CN is not
	 * taken for dead while it waits for its peers, and a peer that dies
	 * meanwhile (an announced restart killed again) is still recovered.
	 * 0: they end with the run.
	 */
	uint32_t linger;
	uint32_t ended;            /**< agent coroutines that returned (atomic), up to APP_AGENT_COORDS */
	/* results */
	unsigned n_recs;
	struct app_agent_rec recs[DTXN_MAX_NODES];
	int error;                 /**< first lease WR or recovery error, 0 if none */
	uint64_t beat;             /**< the CN's heartbeat count (dtxn_lease_beat()) */
	uint64_t fenced_ns;        /**< fencing: dtxn_now_ns() when the beat found this CN fenced, 0: never */
	/* the watcher's own absences (struct dtxn_lease_view.period_ns), not
	 * counted against any CN: late polls, and their excess summed, ns */
	uint32_t watch_gaps;
	uint64_t unwatched_ns;
	uint64_t beat_gap_max_ns;  /**< the longest time between two beats' posts (a stalled lcore) */
	uint64_t beat_last_ns;     /**< dtxn_now_ns() of the last beat's post, 0: none yet */
};

/**
 * The longest gap of agent @p a's heartbeat, ns: between two beats' posts,
 * or from the last one to now when that gap is longer (a CN fenced while
 * paused: its worker's write is refused before the agent beats again).
 * Thread-safe (atomic reads); any lcore.
 */
uint64_t app_agent_beat_gap_ns(const struct app_agent *a);

/**
 * Sets agent @p a up for a run of @p c (--lease-ms: beats every lease / 5)
 * whose CNs run @p gids_per_cn benchmark coordinators each, and creates its
 * two coordinators on worker @p w (created for APP_AGENT_COORDS more
 * coordinators than the benchmark's), gids @p gid and @p gid + 1.
 * @return APP_EXIT_OK, or APP_EXIT_FAIL after one line.
 */
int app_agent_create(const struct app_conf *c, struct dtxn_worker *w, uint32_t gid,
		     uint32_t gids_per_cn, struct app_agent *a);

/**
 * The recovery pass (recovery_pass.c; doc/guides/cluster.md, "The
 * recovery pass"): recovers now, on coordinator @p c, every CN of
 * @p which (fabric node bits; none may be @p c's own CN), as the
 * designated survivor's watcher does, without waiting for a lease to
 * expire (the caller knows their processes are gone): one lease poll for
 * each one's incarnation, then per CN the drain (@p a's drained_ns, if
 * set), dtxn_coord_recover() with every CN of @p dead | @p which known
 * dead, @p a's recovered callback and its state word RECOVERED. The
 * records land in @p a (recs, n_recs) as the watcher's do. @p a->fencing
 * must be false: no fence and no lease's wait (for a process that may
 * still run; these are gone).
 * Coordinator's coroutine; yields.
 * @return 0, or the first error of the lease poll, dtxn_coord_recover()
 *   (-EINVAL for @p c's own CN) or dtxn_lease_mark_recovered();
 *   -ENOSPC when @p a has no room for another record.
 */
int app_agent_recover_now(struct dtxn_coord *c, struct app_agent *a, uint64_t dead,
			  uint64_t which);

/**
 * What recovery @p rec decided of the transaction open on a dead
 * coordinator @p co (whose memory the caller can still read: the
 * simulator's, or a killed process's in shared hugepages).
 * @return 1 if @p rec lists it in struct dtxn_recovery.visible, -1 if in
 *   struct dtxn_recovery.undone, 0 if in neither, if @p rec is NULL or
 *   if no transaction is open on @p co.
 */
int app_agent_txn_verdict(const struct dtxn_coord *co, const struct dtxn_recovery *rec);

/**
 * Whether a dead coordinator's transaction stays committed after its CN's
 * recovery: @p co has a transaction open that recovery @p rec (NULL:
 * none) lists as visible, or that it does not list as undone and that
 * its protocol had decided (dtxn_txn.decided: its commit posted whole,
 * which an RNIC may still have refused once the CN's lease ran out).
 * @return true if so; false if not, or if no transaction is open on @p co.
 */
bool app_agent_txn_kept(const struct dtxn_coord *co, const struct dtxn_recovery *rec);

/**
 * Settles what @p a's recoveries left unsettled (struct app_agent.recovered
 * returned -EAGAIN: the fenced process still lived). Main lcore after the
 * run, or the watcher. @return how many are still unsettled.
 */
unsigned app_agent_settle(struct app_agent *a);

/** dtxn_coord_fn of an agent's heartbeat; @p arg is its struct app_agent. */
void app_agent_beat(struct dtxn_coord *c, void *arg);

/** dtxn_coord_fn of an agent's watcher (detection, recovery); @p arg is its struct app_agent. */
void app_agent_watch(struct dtxn_coord *c, void *arg);

/**
 * Fills report section "recovery" (agent_report.c) from the agents of a
 * run's @p n_cn CNs (fabric nodes n_mn ..) that began at @p t0_ns, the
 * fault of @p c (--fault, --lease-ms) and the survivors' interval series
 * @p surv (NULL: no timeline figures).
 */
void app_agent_report(const struct app_conf *c, const struct app_agent *agents, unsigned n_cn,
		      uint16_t n_mn, uint64_t t0_ns, const struct dtxn_series *surv,
		      struct dtxn_report_recovery *out);

#endif /* DTXN_APP_AGENT_H */
