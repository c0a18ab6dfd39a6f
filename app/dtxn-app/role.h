/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_APP_ROLE_H
#define DTXN_APP_ROLE_H

/**
 * @file
 * One node per process (--role mn|cn on --fabric shm; doc/guides/cluster.md).
 *
 * The processes of one cluster are DPDK primary + secondaries sharing one
 * --file-prefix (main.c). Besides the fabric's objects (drivers/fabric/shm)
 * they share the control block, the memzone "dtxn_ctl": who serves which
 * node (pid), each node's state, the run's description every process must
 * agree on (the catalog check), and what each CN hands to the invariant
 * check at the end. It is control path only: no coordinator reads it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "dtxn_plock.h"

#include "dtxn_fabric.h"
#include "app.h"

struct dtxn_bench;
struct dtxn_bench_ctx;
struct dtxn_recovery;

#define APP_CTL_MAGIC UINT64_C(0x6474786e63746c31) /* "dtxnctl1" */
#define APP_CTL_DESC_MAX 1024

/** A node's state in the control block. */
enum app_node_state {
	APP_NODE_FREE = 0,   /**< no process serves it */
	APP_NODE_STARTING,   /**< claimed, loading (MN) or connecting (CN) */
	APP_NODE_READY,      /**< MN: region loaded and published; CN: workers built */
	APP_NODE_DONE,       /**< CN: run over, its share of the check handed over */
};

/** Worker lcores a node's telemetry shows. */
#define APP_TEL_LCORES 16

/**
 * A process's live figures for DPDK telemetry (telemetry.c): written by
 * its main lcore while it runs (relaxed stores, cumulative counters), read
 * by the telemetry thread of whichever process serves the socket.
 */
struct app_tel {
	uint32_t n_lcores;    /**< entries of lc[] */
	struct app_tel_lcore {
		uint32_t lcore;
		uint64_t committed, attempted, aborts;
	} lc[APP_TEL_LCORES];
	uint64_t mn_ops[DTXN_MAX_NODES];    /**< verbs posted to each MN, every opcode */
	uint64_t peer_msgs[DTXN_MAX_NODES]; /**< SENDs to each peer CN, by node id */
};

/** Most worker lcores of one CN process whose counters its slot shows. */
#define APP_CN_MAX_WORKERS APP_TEL_LCORES

/** One node's slot. */
struct app_ctl_node {
	int32_t pid;          /**< the process serving it, 0: none */
	uint32_t state;       /**< enum app_node_state */
	int64_t acc[4];       /**< CN: sum of its coordinators' dtxn_bench_ctx.acc[] */
	uint64_t committed;   /**< CN: committed transactions (the checker's report) */
	struct app_tel tel;   /**< CN: live figures (telemetry.c) */
	/**
	 * CN: its coordinators' benchmark contexts, per worker (app_cn_publish()):
	 * rte_malloc memory, i.e. shared hugepages mapped at the same address in
	 * every process of the cluster, which the coordinators update as they
	 * go (dtxn_bench_ctx.acc[], .pending: plain local stores). They outlive
	 * a SIGKILL, so the survivors settle them (app_cn_settle_dead()).
	 */
	uint32_t n_live;
	uint32_t live_n[APP_CN_MAX_WORKERS];       /**< contexts of live[w] */
	struct dtxn_bench_ctx *live[APP_CN_MAX_WORKERS];
	uint32_t settled;     /**< CN: 1 once a survivor recovered it and settled its contexts */
	/**
	 * CN: the incarnation of the process serving it: 0 for the first, one
	 * more each time a process claims the node after its predecessor died
	 * and was recovered (a restart; doc/guides/cluster.md "Rejoin").
	 * Kept across claims, as is acc_prev.
	 */
	uint32_t incarnation;
	/** CN: the benchmark counters of its earlier, dead and settled incarnations */
	int64_t acc_prev[4];
};

/** The control block (memzone "dtxn_ctl"). */
struct app_ctl {
	uint64_t magic;                    /**< APP_CTL_MAGIC once initialised */
	dtxn_plock_t lock;                 /**< a plock (dtxn_plock.h): a holder killed inside is taken over */
	char version[64];                  /**< dtxn version of the first process */
	char desc[APP_CTL_DESC_MAX];       /**< the run every process must agree on */
	uint32_t checker_taken;            /**< CN index + 1 of the one that checks the invariants (app_cn_checker()), 0: none yet */
	uint32_t checked;                  /**< 1 once the checker wrote its report (app_cn_checked()) */
	/**
	 * 1 once a CN ended its run and found every CN DONE or gone, under
	 * @c lock (app_cn_done()): the invariant check is about to read the
	 * slots, so no restart may claim a node any more (app_role_claim()).
	 */
	uint32_t closed;
	/**
	 * Announced restarts (doc/guides/cluster.md, "Announced restarts"),
	 * bit J for cnJ, under @c lock: set from --announce-restart by the
	 * process that creates the block (mn0 under dtxn-cluster run, before
	 * any CN starts); a restart's claim of cnJ (a claim of a node claimed
	 * before: @c cn_claimed) clears its bit, and so does a CN process of
	 * cnJ whose claim is refused (it exits). While a bit is
	 * set the CNs' end of run waits (app_cn_done()), up to
	 * --connect-timeout; then the CN that closes the cluster moves it to
	 * @c restart_missed, which the invariant check reports.
	 */
	uint64_t restart_pending;
	uint64_t restart_missed;          /**< announced restarts that did not claim their node in time */
	uint64_t cn_claimed;              /**< CNs claimed at least once (bit J), under @c lock */
	struct app_ctl_node mn[DTXN_MAX_NODES];
	struct app_ctl_node cn[DTXN_MAX_NODES];
};

/**
 * Attaches to (or creates) the control block and claims this process's
 * node (--node), after checking that the version and the run description
 * (bench, protocol, options, counts) match the cluster's. A CN whose
 * previous process died is a restart: the claim waits (10 ms sleeps, up to
 * --connect-timeout) until a survivor has recovered and settled the dead
 * one (app_cn_settle_dead()), never running two incarnations at once, then
 * takes the next incarnation and keeps the dead one's counters (acc_prev).
 * The process that creates the block writes --announce-restart into it
 * (restart_pending); a restart's claim of its node clears its announcement,
 * and so does a refused CN claim (that process exits).
 *
 * @return the block, or NULL after one line (exit status in @p rc:
 *   APP_EXIT_USAGE for a mismatch or a node already served by a live
 *   process, APP_EXIT_UNREACHABLE for a restart whose predecessor nobody
 *   recovered in time, APP_EXIT_FAIL when out of memory).
 */
struct app_ctl *app_role_claim(const struct app_conf *c, int *rc);

/**
 * The recovery pass (recovery_pass.c): attaches to the cluster's control
 * block without claiming a node, after checking the version and the run
 * description as a claim does. Plain loads; no lock.
 * @return the block, or NULL after one line (exit status in @p rc:
 *   APP_EXIT_UNREACHABLE when no cluster made it, APP_EXIT_USAGE for a
 *   mismatch).
 */
struct app_ctl *app_role_attach(const struct app_conf *c, int *rc);

/**
 * The run every process of a cluster must agree on (what shapes the
 * catalog and the layout of MN memory, and what the CNs split between
 * them), as one line into @p buf (@p len bytes, truncated): the control
 * block's catalog check on shm, the connect digest on ucx.
 */
void app_role_desc(const struct app_conf *c, char *buf, size_t len);

/** @return this process's slot in @p ctl. */
struct app_ctl_node *app_role_self(const struct app_conf *c, struct app_ctl *ctl);

/**
 * Waits, sleeping 10 ms at a time, until every slot of @p nodes (@p n of
 * them, named @p kind: "mn" or "cn") has at least @p state, up to
 * --connect-timeout. A slot whose process died counts as not there.
 * @return 0, or -1 after one line naming the first missing node.
 */
int app_role_wait(const struct app_conf *c, struct app_ctl_node *nodes, unsigned n,
		  const char *kind, enum app_node_state state, const char *what);

/**
 * Waits, sleeping 10 ms at a time, until every slot of @p nodes is DONE
 * or its process is gone (a killed CN), up to --connect-timeout.
 * @return 0, or -1 after one line naming the first node still running.
 */
int app_role_wait_done(const struct app_conf *c, struct app_ctl_node *nodes, unsigned n,
		       const char *kind);

/** Releases this process's slot (exit). */
void app_role_release(const struct app_conf *c, struct app_ctl *ctl);

/**
 * Fabric configuration of this process: n_mn, n_cn; on shm the
 * multi-process masks and a CN's incarnation (from its slot in @p ctl,
 * claimed); on mlx5 (@p rdma, which must outlive the open) the node
 * addresses and this process's node as the one it serves.
 */
void app_role_fabric_conf(const struct app_conf *c, struct app_ctl *ctl,
			  struct dtxn_fabric_conf *fc, struct dtxn_fabric_rdma_conf *rdma);

/** @return the cluster file's name without folder and ".ini" (main.c;
 * the default --file-prefix is "dtxn-" and this). */
const char *app_cluster_name(const struct app_conf *c);

/**
 * @return true if @p n's process died during its run (STARTING or READY,
 * its pid no longer lives, and not this process): a CN a survivor may
 * recover, and a restart may take over once it is settled.
 */
bool app_role_slot_dead(const struct app_ctl_node *n);


/** @return true for --role mn or cn. */
bool app_role_split(const struct app_conf *c);

/**
 * @return true for --role mn|cn on --fabric shm: the processes share one
 * host's DPDK memory and the control block (DPDK multi-process). On
 * --fabric mlx5 each process is its own DPDK primary, possibly on its own
 * host: its control block is its own, so nothing waits on the others'
 * slots; the fabric connects the nodes (doc/guides/mlx5.md).
 */
bool app_role_shared(const struct app_conf *c);

/*
 * DPDK telemetry (telemetry.c; doc/guides/cluster.md, "Watching a live
 * node"): /dtxn/info, /dtxn/stats, /dtxn/fabric, /dtxn/rpc.
 */

/**
 * Registers the /dtxn/ commands with rte_telemetry (once per process;
 * main lcore, after rte_eal_init()). Each takes an optional node name
 * ("/dtxn/stats,cn1"): with a control block (@p ctl, --role mn|cn) it
 * answers for any node of the cluster from its slot, so the one socket
 * DPDK 22.11 serves (the primary process's) shows every process; without
 * (--role all) it answers for this process. @p c must outlive the process's
 * telemetry (it is the process's configuration).
 * @return 0 or -errno of rte_telemetry_register_cmd().
 */
int app_telemetry_register(const struct app_conf *c, struct app_ctl *ctl);

/** @return where this process publishes its live figures: its slot's, or a process-local one. */
struct app_tel *app_telemetry_self(const struct app_conf *c, struct app_ctl *ctl);

/** --role mn: allocate, load and publish one MN, wait for SIGTERM/SIGINT. @return APP_EXIT_*. */
int app_run_mn(const struct app_conf *c);

/* role_cn.c: the steps of a CN process around its run (run.c) */
struct dtxn_db;

/**
 * Makes the catalog, claims --node, waits for every MN to be READY,
 * attaches to their regions (@p n_workers: this CN's workers, for the
 * memory check). @return APP_EXIT_*: APP_EXIT_UNREACHABLE after one line
 * when an MN is not READY within --connect-timeout. @p db and @p f are set
 * as soon as made (free them with app_release()).
 */
int app_cn_connect(const struct app_conf *c, struct dtxn_bench *b, unsigned n_workers,
		   struct app_ctl **ctl, struct dtxn_db **db, struct dtxn_fabric **f);

/** Marks this CN READY (workers built) and waits for every peer CN.
 * @return APP_EXIT_OK, or APP_EXIT_UNREACHABLE after one line. */
int app_cn_start(const struct app_conf *c, struct app_ctl *ctl);

/**
 * After the run: hands this CN's bench counters (the sum over @p ctxs) to
 * its slot, marks it DONE and waits (10 ms sleeps) until every CN is DONE
 * or its process is gone and no announced restart is pending (struct
 * app_ctl.restart_pending); then closes the cluster to restarts (struct
 * app_ctl.closed, under its lock, so a restart either claimed its node
 * before, and is waited for, or is refused). A peer still running after
 * --connect-timeout + --warmup + --duration is not waited for, nor is an
 * announced restart that has not claimed its node --connect-timeout after
 * every CN was done or gone: the CN that closes the cluster then moves it
 * to restart_missed, with one line (the cluster is closed anyway). With
 * agents (--lease-ms), a CN whose process died during its run is waited
 * for until a survivor's agent (which goes on after the run: struct
 * app_agent.linger) has recovered and settled it, within the same bound.
 * Main lcore.
 */
void app_cn_done(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_bench_ctx *const *ctxs,
		 unsigned n);

/**
 * Who checks the invariants for the cluster, once every CN is DONE or
 * gone (after app_cn_done()): the lowest CN whose slot is DONE, i.e. cn0
 * unless it died before the end, then the lowest survivor. The first
 * process that finds itself the one claims the control block's
 * checker_taken, so a CN that stopped waiting for a slow peer
 * (--connect-timeout) never makes a second checker. Plain loads and one
 * CAS on the control block. Main lcore.
 * @return the checker's CN index (0 for cn0), or -1 if no CN is DONE.
 */
int app_cn_checker(const struct app_conf *c, struct app_ctl *ctl);

/**
 * A CN that is not the checker (@p checker, from app_cn_checker()) waits
 * until the checker has written its report (app_cn_checked()). If the
 * checker's process is gone first (killed after it handed its counters
 * over, before or during its check), the lowest CN that is DONE and alive
 * claims checker_taken from it with one CAS (one line): no invariant goes
 * unchecked because the checker died. Main lcore; sleeps 10 ms between
 * looks, as long as a live checker takes.
 * @return the checker's CN index: this CN's own when it took over.
 */
int app_cn_checker_wait(const struct app_conf *c, struct app_ctl *ctl, int checker);

/** The checker wrote its report: its peers waiting in app_cn_checker_wait() may go. */
void app_cn_checked(struct app_ctl *ctl);

/**
 * The peer CNs that never handed over their counters (killed before
 * DONE) and were not settled by a recovery (app_cn_settle_dead()): their names, ", "-separated, into @p names (@p len bytes).
 * @return how many.
 */
unsigned app_cn_lost_peers(const struct app_conf *c, struct app_ctl *ctl, char *names, size_t len);

/** As app_cn_lost_peers(), the CNs served by a restarted process
 * (incarnation > 0: their dead incarnations' counters are in acc_prev),
 * this one included. */
unsigned app_cn_restarted_peers(const struct app_conf *c, struct app_ctl *ctl, char *names,
				size_t len);

/** As app_cn_lost_peers(), the CNs whose announced restart did not claim
 * its node in time (struct app_ctl.restart_missed), this one included. */
unsigned app_cn_missed_restarts(const struct app_conf *c, struct app_ctl *ctl, char *names,
				size_t len);

/** As app_cn_lost_peers(), the peer CNs that were killed and whose
 * counters a recovery settled (they count in the invariants). */
unsigned app_cn_settled_peers(const struct app_conf *c, struct app_ctl *ctl, char *names,
			      size_t len);

/**
 * --role cn, from the main lcore while the run goes (off the data path;
 * one kill(pid, 0) per MN): is every MN process still there?
 * @return -1, or the index of an MN whose process is gone (its slot's
 *   pid no longer lives, or the slot was released).
 */
int app_cn_dead_mn(const struct app_conf *c, const struct app_ctl *ctl);

/**
 * Publishes worker @p w's benchmark contexts (@p ctx, @p n of them,
 * rte_malloc memory that outlives the process) in this CN's slot, so that
 * a survivor can settle them if this process is killed. Before READY.
 * @return 0, or -ENOSPC after one line when @p w >= APP_CN_MAX_WORKERS.
 */
int app_cn_publish(const struct app_conf *c, struct app_ctl *ctl, unsigned w,
		   struct dtxn_bench_ctx *ctx, unsigned n);

/**
 * A survivor's agent recovered dead CN @p rec->dead_cn (struct
 * app_agent.recovered): settles the dead process's benchmark contexts in
 * shared memory as the recovery decided (a commit in flight that the
 * recovery kept, app_agent_txn_kept(), is counted; one it rolled back is
 * not), then marks the slot settled, after which its counters are final.
 * A fenced CN whose process still lives (paused: it stops when it runs
 * again and reads its fence) is not settled yet: its contexts may still
 * change until it is gone. Only plain loads and stores on the control
 * block and the dead CN's contexts; no fabric op. Idempotent.
 * Coordinator's lcore, or the main lcore after the run.
 * @return 0 (settled), or -EAGAIN (its process lives: call again later).
 */
int app_cn_settle_dead(const struct app_conf *c, struct app_ctl *ctl,
		       const struct dtxn_recovery *rec);

/**
 * Fills @p out (room for --cn entries) with one finished context per CN
 * whose counters are final, for the invariant check: per peer CN handed
 * over (DONE), or killed and settled by its recovery (summed from its
 * published contexts), each with its dead incarnations' (acc_prev); and,
 * when this process is a restart (incarnation > 0), one with this CN's own
 * dead incarnations' counters (its live coordinators are the caller's).
 * A peer that died unsettled gets none (app_cn_lost_peers()). Main lcore,
 * after app_cn_done(). @return how many.
 */
unsigned app_cn_peer_ctxs(const struct app_conf *c, struct app_ctl *ctl, struct dtxn_bench *b,
			  struct dtxn_bench_ctx *out);

/*
 * The CNs' control plane (doc/guides/cluster.md, "The control plane over
 * the fabric"): the start barrier, each CN's benchmark counters for the
 * invariant check and who checks. ctl.c is the interface the run code
 * (run.c) calls in both cases; it hands each call to the shm control
 * block (--control shared: role_cn.c, app_cn_*()) or to MN 0's control
 * area (--control fabric: ctl_fabric.c, app_cf_*()), which needs no
 * memory shared between processes: one-sided WRs from the CN's main
 * lcore on its own QP to MN 0, so the same code serves shm processes,
 * mlx5 and ucx.
 */

struct dtxn_db;
struct dtxn_report;
struct app_cf;

/** A CN process's control plane (ctl.c). Zeroed: not open. */
struct app_cp {
	const struct app_conf *c;
	struct app_ctl *ctl;   /**< this process's control block (claims, slot, telemetry) */
	struct app_cf *cf;     /**< --control fabric: MN 0's control area; NULL: the shm block */
};

/**
 * Opens @p cp for CN process @p c (--role cn) whose control block is
 * @p ctl (app_role_claim()): with --control fabric, a CQ and a QP from
 * fabric node @p node (this CN) to MN 0 on the calling lcore, after the
 * workers' QPs (so their pairing is unchanged). Main lcore, before the run.
 * @return APP_EXIT_OK, or APP_EXIT_FAIL after one line.
 */
int app_cp_open(struct app_cp *cp, const struct app_conf *c, struct app_ctl *ctl,
		struct dtxn_db *db, struct dtxn_fabric *f, uint16_t node);

/** Frees what app_cp_open() made (its QP before the fabric closes). Zeroed @p cp: no-op. */
void app_cp_close(struct app_cp *cp);

/**
 * Marks this CN READY and waits at the start barrier until every CN has
 * arrived (up to --connect-timeout), so the CNs start the measured
 * interval (and the warm-up) together. A restart (incarnation > 0) does
 * not wait for its peers; with --control fabric it claims its node in
 * MN 0's control area first (app_cf_rejoin(): it waits until its dead
 * incarnation was recovered and settled). Main lcore (sleeps).
 * @return APP_EXIT_OK, or APP_EXIT_UNREACHABLE after one line naming the
 *   CNs that did not arrive, or the MN 0 that could not be reached, or
 *   (a restart) a predecessor nobody settled in time or a run already
 *   being checked.
 */
int app_cp_start(struct app_cp *cp);

/**
 * During the run, now and then (main lcore): with --control fabric,
 * settles the dead peers this CN's agents recovered (app_cf_poll()), so
 * that a restart of one rejoins without waiting for the end of this CN's
 * run. --control shared: no-op (app_cn_settle_dead() settles at once).
 */
void app_cp_poll(struct app_cp *cp);

/**
 * After the run: hands this CN's benchmark counters (the sum over
 * @p ctxs, @p n of them; @p committed: its committed transactions, for
 * the checker's report) to the check and waits until every CN handed
 * its own over or is gone (app_cn_done(); fabric: app_cf_done()). Main
 * lcore (sleeps); the workers keep polling meanwhile.
 * @return APP_EXIT_OK, or APP_EXIT_UNREACHABLE after one line (MN 0 lost).
 */
int app_cp_done(struct app_cp *cp, struct dtxn_bench_ctx *const *ctxs, unsigned n,
		uint64_t committed);

/**
 * Who checks the invariants for the cluster (after app_cp_done()): the
 * lowest CN that handed its counters over, claimed once.
 * @return its CN index, or -1 if none did.
 */
int app_cp_checker(struct app_cp *cp);

/**
 * app_cn_checker_wait() on the shm control block; across hosts (the
 * fabric's control area) it returns @p checker at once: a checker that
 * dies there leaves the invariants unchecked (a failed check, not a
 * silent pass).
 */
int app_cp_checker_wait(struct app_cp *cp, int checker);

/** app_cn_checked() on the shm control block; nothing across hosts. */
void app_cp_checked(struct app_cp *cp);

/**
 * The checker's side: one finished context per peer CN whose counters
 * are final into @p out (room for --cn; with --control fabric a
 * restarted CN's context holds its dead incarnations' counters too, and
 * this CN's own dead incarnations have one), and the report's account of
 * which CNs' counters are included (checks "cluster_counters",
 * "announced_restart") into @p rep. With --control fabric, also makes
 * every MN region this process does not map readable for the check (a
 * local copy READ whole, dtxn_fabric_mn_mirror()). Main lcore.
 * @return how many contexts, or -1 after one line when an MN region could
 *   not be read (the check cannot run).
 */
int app_cp_counters(struct app_cp *cp, struct dtxn_bench *b, struct dtxn_bench_ctx *out,
		    struct dtxn_report *rep);

/*
 * ctl_fabric.c: the control plane over the fabric. The control area is
 * DTXN_STORE_CTL_BYTES at dtxn_store_ctl_raddr(cat, 0) on MN 0 (lib/store
 * places it after the lease area), zeroed by the MN 0 role after its load
 * (app_cf_area_init()). Its layout, in 8-byte words (offsets in bytes):
 *
 *   0    magic     APP_CF_MAGIC: written by MN 0 after zeroing the area,
 *                  once its region is loaded; no CN writes before it
 *   8    arrived   bit J: cnJ is at the start barrier (FAA 1 << J)
 *   16   done      bit J: cnJ's slot holds its final counters (FAA 1 << J,
 *                  posted after the slot's WRITE on the same QP, so RC
 *                  order makes the slot visible first)
 *   24   checker   CN index + 1 of the CN that checks the invariants
 *                  (CAS 0 -> J + 1 by the lowest CN in done)
 *   32   pending   bit J: a restart of cnJ is announced (--announce-restart,
 *                  written by MN 0 with the magic) and has not claimed
 *                  its node yet (its claim FAAs the bit away); the CNs'
 *                  end of run waits for it (app_cf_done())
 *   40   desc      the digest of the run MN 0 was loaded for
 *                  (app_cf_desc_digest()), written by MN 0 with the
 *                  magic: the recovery pass compares its own
 *   48.. 255       reserved, zero
 *   256 + J * 128  cnJ's slot (APP_CF_SLOT_BYTES):
 *        +0  state (enum app_node_state), +8 incarnation,
 *        +16 committed transactions, +24 acc[0..3] (the sum of its
 *        coordinators' dtxn_bench_ctx.acc[]), +56 coordinators summed;
 *        +64 settled: 0, or APP_CF_SETTLED_BY + K when cnK's recovery
 *        of the dead cnJ wrote the slot from cnJ's coordinators' commit
 *        records (doc/guides/cluster.md, "Counters of a dead CN");
 *        words 0..8 are what a hand-over or a settlement WRITEs;
 *        +72 the incarnation serving cnJ (APP_CF_SLOT_INC) and +80
 *        acc_prev[0..3] (APP_CF_SLOT_PREV: the counters of its dead,
 *        settled incarnations), both WRITTEn by a restart's claim
 *        (app_cf_rejoin()); +112.. reserved, zero
 *
 * Then, on EVERY MN (same offset), lib/store's commit-record slots
 * (dtxn_store_crec_raddr(cat, mn, gid): one per coordinator, struct
 * dtxn_bench_record), zeroed by each MN role before its load
 * (app_cf_crec_init()); a decisive batch writes the record to every MN
 * it touches, and a dead CN's counters are settled from the newest one
 * (ctl_fabric.c, cf_settle_one()).
 */

/** Control area word 0 once MN 0 loaded and zeroed it ("dtxnctfa"). */
#define APP_CF_MAGIC UINT64_C(0x6474786e63746661)
#define APP_CF_OFF_MAGIC 0
#define APP_CF_OFF_ARRIVED 8
#define APP_CF_OFF_DONE 16
#define APP_CF_OFF_CHECKER 24
#define APP_CF_OFF_PENDING 32
#define APP_CF_OFF_DESC 40
#define APP_CF_HDR_BYTES 256
#define APP_CF_SLOT_BYTES 128
/** A slot's words (8 B each) that app_cf_done() writes. */
#define APP_CF_SLOT_WORDS 9
/** The slot word that says who settled it (0: the CN itself handed it over). */
#define APP_CF_SLOT_SETTLED 8
/** APP_CF_SLOT_SETTLED's value base: + K for cnK. */
#define APP_CF_SETTLED_BY UINT64_C(0x5e7700000000)
/** The slot word of the incarnation serving the CN (a restart's claim writes it). */
#define APP_CF_SLOT_INC 9
/** The slot's first word of acc_prev[0..3]: the CN's dead incarnations' counters. */
#define APP_CF_SLOT_PREV 10

/**
 * Every MN role (--node mnI), once its region is open and before its load
 * (which publishes the region, dtxn_fabric_publish()): zeroes the
 * commit-record slots of every coordinator in its region
 * (dtxn_store_crec_raddr(cat, I, 0..n_logs-1)), so that no CN's record
 * can be overwritten by it. Whatever --control says (a few KiB). Other
 * roles: no-op. MN CPU.
 * @return 0, or -ENXIO (its region not mapped here, or not laid out).
 */
int app_cf_crec_init(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f);

/**
 * MN 0 role, after its load and before it is READY: zeroes the control
 * area in its region, writes the announced restarts (--announce-restart)
 * into its pending word, then APP_CF_MAGIC. Other MNs: no-op. MN CPU.
 * @return 0, or -ENXIO (MN 0's region not mapped here).
 */
int app_cf_area_init(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f);

/** app_cp_open()'s fabric half. @return the control plane, or NULL after one line. */
struct app_cf *app_cf_open(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f,
			   uint16_t node);

/** Destroys @p cf's QP and CQ and frees it (and any region copies). NULL: no-op. */
void app_cf_close(struct app_cf *cf);

/**
 * The start barrier: waits (READ every APP_CF_POLL_US) until MN 0 wrote
 * the magic, FAAs this CN's bit into arrived, waits until every CN's bit
 * is there; both up to --connect-timeout from the call. Main lcore.
 * @return 0; -ETIMEDOUT after one line naming the missing CNs (or MN 0,
 *   not loaded); -EIO after one line (a WR to MN 0 failed: MN 0 lost).
 */
int app_cf_start(struct app_cf *cf);

/**
 * A restarted CN's claim of its node in the control area (incarnation
 * @p inc > 0, as the MNs admitted it: dtxn_ucx_incarnation();
 * doc/guides/cluster.md, "Across hosts"): waits (READ every few ms, up
 * to --connect-timeout) until a survivor has recovered the dead
 * incarnation and settled its slot (APP_CF_SLOT_SETTLED set, done bit
 * J), so that this process's commit records never meet the dead one's
 * before they were read; then WRITEs the slot's incarnation and
 * acc_prev (its earlier acc_prev plus the settled counters), and FAAs
 * its done bit and its announcement (pending) away, in one chain. Main
 * lcore, before the workers run.
 * @return 0; -ETIMEDOUT after one line (nobody settled it in time);
 *   -EALREADY after one line (the invariant check was claimed: too late
 *   to rejoin; or the previous process ended its run normally: the MNs
 *   served a run already); -EIO after one line (MN 0 lost).
 */
int app_cf_rejoin(struct app_cf *cf, uint32_t inc);

/**
 * A restarted CN process (--control fabric) that will not serve its node
 * (refused after its fabric opened): FAAs its announcement (pending bit)
 * away in MN 0's control area, on a QP of its own from fabric node
 * @p node, so that the survivors do not wait for it (as
 * role_announce_withdraw() on the shm block). Main lcore.
 * @return 0 (withdrawn, or nothing to withdraw), or -EIO after one line.
 */
int app_cf_withdraw(const struct app_conf *c, struct dtxn_db *db, struct dtxn_fabric *f,
		    uint16_t node);

/**
 * While the run goes on: settles the dead CNs this CN's agents recovered
 * since the last call (their counters from their commit records, into
 * their slots), so that a restart of one waits no longer than its
 * recovery (app_cf_rejoin()). Main lcore.
 * @return 0, or -EIO after one line (MN 0 lost: app_cf_done() tries again).
 */
int app_cf_poll(struct app_cf *cf);

/**
 * WRITEs this CN's slot (DONE, @p committed, @p acc) and FAAs its done
 * bit, then waits (READ every few ms) until every CN is done or gone (its
 * lease state word, with agents: recovered, fenced or left, of the
 * incarnation its slot names) and no announced restart is pending (up to
 * --connect-timeout after the rest is done), up to --connect-timeout +
 * --warmup + --duration. Main lcore.
 * @return 0 (a CN still running at the bound is named, one line, and left
 *   out); -EIO after one line (MN 0 lost).
 */
int app_cf_done(struct app_cf *cf, const int64_t acc[4], uint64_t committed, uint64_t n_ctx);

/**
 * Keeps the verdict of a recovery this CN's agent ran (struct
 * app_agent.recovered, on the watcher's lcore), so that app_cf_done()
 * settles the dead CN's counters from its coordinators' commit records
 * and hands them over in its slot before this CN's own. @return 0.
 */
int app_cf_note_recovery(struct app_cf *cf, const struct dtxn_recovery *rec);

/**
 * The digest of the run @p c describes (app_role_desc() with the dtxn
 * version, as ucx's connect digest takes it): its length in bits 32..63,
 * its CRC-32C (rte_hash_crc()) in bits 0..31. What MN 0 writes at
 * APP_CF_OFF_DESC and the recovery pass compares. Pure; any thread.
 */
uint64_t app_cf_desc_digest(const struct app_conf *c);

/**
 * The recovery pass's account of the cluster over the fabric (--control
 * fabric; recovery_pass.c, doc/guides/cluster.md "The recovery pass"),
 * on @p cf (opened for a conf whose node_idx is --cn: no CN of the run):
 * READs MN 0's control area (its magic, and the run's digest, which must
 * be this process's) and, with agents (--lease-ms), every CN's lease
 * state word and heartbeat. The CNs to recover are those that did not
 * hand their counters over (done bit clear) and whose lease state is
 * ALIVE or FENCED; one that a survivor marked RECOVERED (or that LEFT)
 * without its counters settled is named in one line and left out (the
 * recovery's verdict died with that survivor: cluster_counters then
 * names it). If any of them is ALIVE it watches their heartbeats for one
 * lease (a live process beats every lease / 5), unless @p watched (the
 * caller watched every CN's already). Main lcore; sleeps.
 * @param dead out: bit J for cnJ to recover.
 * @return APP_EXIT_OK; APP_EXIT_USAGE after one line (a digest of
 *   another run; a heartbeat that moved: a CN process lives);
 *   APP_EXIT_UNREACHABLE after one line (MN 0 not loaded, or lost).
 */
int app_cf_pass_dead(struct app_cf *cf, bool watched, uint64_t *dead);

/**
 * As app_cn_checker(), from the control area (one READ, at most one CAS):
 * the lowest CN in done that handed its own counters over (a slot a
 * recoverer settled is a dead CN's). @return the CN index or -1.
 */
int app_cf_checker(struct app_cf *cf);

/** As app_cp_counters() for --control fabric. */
int app_cf_counters(struct app_cf *cf, struct dtxn_bench *b, struct dtxn_bench_ctx *out,
		    struct dtxn_report *rep);

#endif /* DTXN_APP_ROLE_H */
