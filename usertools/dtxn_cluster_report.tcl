# SPDX-License-Identifier: BSD-3-Clause
#
# The cluster report of `dtxn-cluster run` (doc/guides/cluster.md): merges
# the JSON reports of every CN process (doc/guides/report.md) into one,
# with the fault timeline built from each CN's --series-out file. Sourced
# by usertools/dtxn-cluster; pure Tcl + tcllib json.
#
#   cluster_merge NODES FAULTS CHECK  -> the merged report as a JSON text
#
# NODES: a list of dicts {name cnJ rc STATUS json PATH series PATH history
# PATH killed 0|1 fenced 0|1 ended_s S} (fenced: paused, found itself
# fenced and exited 4; ended_s: when the process ended, s after the CNs
# began; -1 unknown); FAULTS: a list of dicts {node cnJ kind
# kill|restart|pause t SECONDS t_unix_ns NS}; CHECK: a dict {rc N text TEXT} of dtxn-check
# over every CN's history (rc -1: not run).

package require json
package require json::write

namespace eval ::report {}

# Reads a file; "" if it does not exist.
proc ::report::slurp {path} {
    if {$path eq "" || [catch {open $path r} f]} { return "" }
    set s [read $f]
    close $f
    return $s
}

# ---- histograms: {count sum min max buckets {upper count ...}} -------

proc ::report::hist_empty {} {
    return [dict create count 0 sum 0 min 0 max 0 buckets [dict create]]
}

proc ::report::hist_add {h j} {
    if {![dict exists $j count] || [dict get $j count] == 0} { return $h }
    set b [dict get $h buckets]
    foreach pair [dict get $j buckets] {
        lassign $pair upper n
        dict incr b $upper $n
    }
    if {[dict get $h count] == 0 || [dict get $j min_ns] < [dict get $h min]} {
        dict set h min [dict get $j min_ns]
    }
    if {[dict get $j max_ns] > [dict get $h max]} { dict set h max [dict get $j max_ns] }
    dict set h count [expr {[dict get $h count] + [dict get $j count]}]
    dict set h sum [expr {[dict get $h sum] + [dict get $j sum_ns]}]
    dict set h buckets $b
    return $h
}

# Percentile p (0..100) in ns, as dtxn_hist_percentile(): the first bucket
# where the running count reaches ceil(p/100 * count), clamped to [min, max].
proc ::report::hist_pct {h p} {
    set n [dict get $h count]
    if {$n == 0} { return 0 }
    set x [expr {$p * $n / 100.0}]
    set rank [expr {max(1, min($n, wide(ceil($x - $x * 1e-12))))}]
    set seen 0
    foreach upper [lsort -integer [dict keys [dict get $h buckets]]] {
        incr seen [dict get $h buckets $upper]
        if {$seen >= $rank} {
            return [expr {max([dict get $h min], min($upper, [dict get $h max]))}]
        }
    }
    return [dict get $h max]
}

proc ::report::num {v} {
    if {![string is double -strict $v]} { return 0 }
    return [format %.6g $v]
}

proc ::report::rc_json {rc} {
    return [expr {[string is integer -strict $rc] ? $rc : "null"}]
}

proc ::report::hist_latency_json {h} {
    set n [dict get $h count]
    set mean [expr {$n ? double([dict get $h sum]) / $n : 0.0}]
    return [json::write object \
        p50 [num [expr {[hist_pct $h 50] / 1e3}]] \
        p99 [num [expr {[hist_pct $h 99] / 1e3}]] \
        p999 [num [expr {[hist_pct $h 99.9] / 1e3}]] \
        mean [num [expr {$mean / 1e3}]] \
        min [num [expr {[dict get $h min] / 1e3}]] \
        max [num [expr {[dict get $h max] / 1e3}]]]
}

proc ::report::hist_json {h} {
    set b {}
    foreach upper [lsort -integer [dict keys [dict get $h buckets]]] {
        lappend b [json::write array $upper [dict get $h buckets $upper]]
    }
    return [json::write object count [dict get $h count] sum_ns [dict get $h sum] \
        min_ns [dict get $h min] max_ns [dict get $h max] buckets [json::write array {*}$b]]
}

# ---- the fault timeline ------------------------------------------------

# A --series-out file: {t0_ns interval_s {t_s commits ...}}; {} if absent.
proc ::report::series_read {path} {
    set text [slurp $path]
    set lines [split $text \n]
    set head [lindex $lines 0]
    if {[llength $head] != 5 || [lindex $head 0] ne "dtxn-series"} { return {} }
    set pts {}
    foreach l [lrange $lines 1 end] {
        if {[llength $l] == 6 && [string is double -strict [lindex $l 0]]} {
            lappend pts [lindex $l 0] [lindex $l 2]
        }
    }
    return [list [lindex $head 3] [lindex $head 4] $pts]
}

# Committed txns of the whole cluster in bins of @bin_s from @from_s to
# @to_s around a fault at @fault_ns (wall clock, ns): each CN interval's
# commits land in the bin holding its end. Returns the counts, in order.
proc ::report::bins {series fault_ns from_s to_s bin_s} {
    set nb [expr {int(round(($to_s - $from_s) / $bin_s))}]
    set bin [lrepeat $nb 0]
    foreach s $series {
        lassign $s t0 iv pts
        foreach {t c} $pts {
            set rel [expr {($t0 - $fault_ns) / 1e9 + $t}]
            set i [expr {int(floor(($rel - $from_s) / $bin_s - 1e-9))}]
            if {$i >= 0 && $i < $nb} { lset bin $i [expr {[lindex $bin $i] + $c}] }
        }
    }
    return $bin
}

# A restart's rejoin, from the restarted process's series @s: started_s
# (its run began: the lease taken, workers built), first_commit_s (the end
# of its first interval with a commit), s after the restart at @fault_ns
# (wall clock, ns); null without a series.
proc ::report::rejoin {s fault_ns} {
    if {$s eq ""} { return null }
    lassign $s t0 iv pts
    set first -1
    foreach {t c} $pts {
        if {$c > 0} { set first [expr {($t0 - $fault_ns) / 1e9 + $t}]; break }
    }
    return [json::write object started_s [num [expr {($t0 - $fault_ns) / 1e9}]] \
        first_commit_s [num $first]]
}

# The timeline of a fault: a JSON array of {t (s from the fault, the bin's
# end), committed_tps}.
proc ::report::timeline {series fault_ns from_s to_s bin_s} {
    set out {}
    set i 0
    foreach n [bins $series $fault_ns $from_s $to_s $bin_s] {
        incr i
        lappend out [json::write object t [num [expr {$from_s + $i * $bin_s}]] \
            committed_tps [num [expr {$n / $bin_s}]]]
    }
    return [json::write array {*}$out]
}

# Before/after figures of a fault from the same bins: the mean txn/s over
# the 0.5 s before it, and the first time after it from which the next
# 100 ms commit >= 90% of that rate (-1: never within 3 s). A window's mean,
# not each 10 ms bin: on a shared host a bin can be empty because a CN
# was descheduled, with nothing wrong in the protocol.
proc ::report::recovery {series fault_ns bin_s} {
    set from -0.5
    set bin [bins $series $fault_ns $from 3.0 $bin_s]
    set nb [llength $bin]
    set nbefore [expr {int(round(-$from / $bin_s))}]
    set before [expr {[tcl::mathop::+ 0 {*}[lrange $bin 0 [expr {$nbefore - 1}]]] / (-$from)}]
    set run [expr {max(1, int(round(0.1 / $bin_s)))}]
    for {set i $nbefore} {$i + $run <= $nb} {incr i} {
        set sum [tcl::mathop::+ 0 {*}[lrange $bin $i [expr {$i + $run - 1}]]]
        if {$sum / ($run * $bin_s) >= 0.9 * $before} {
            return [list $before [expr {($i - $nbefore) * $bin_s}]]
        }
    }
    return [list $before -1]
}

# ---- the merged report -------------------------------------------------

proc ::report::sum_into {var key j} {
    upvar $var d
    if {[dict exists $j $key]} { dict incr d $key [dict get $j $key] }
}


# Adds one CN report's "waits" (report.md) to the sums @p w: every mean
# weighted by the commits it is over (exact for the means over all
# commits); the tail is each CN's own slowest 1%, weighted by its
# tail_commits (not the cluster's slowest 1%: an approximation, said in
# cluster.md), its bound the lowest of the CNs'.
proc ::report::waits_add {w j} {
    set c [dict get $j commits]
    set tc [dict get $j tail_commits]
    dict incr w commits $c
    dict incr w tail_commits $tc
    dict set w lat [expr {[dict get $w lat] + [dict get $j latency_mean_us] * $c}]
    dict set w tail_lat [expr {[dict get $w tail_lat] + [dict get $j tail_latency_mean_us] * $tc}]
    set m [dict get $j tail_min_us]
    if {[dict get $w tail_min] eq "" || $m < [dict get $w tail_min]} { dict set w tail_min $m }
    set ks [dict get $w kinds]
    dict for {k v} [dict get $j kinds] {
        lassign [expr {[dict exists $ks $k] ? [dict get $ks $k] : {0.0 0.0}}] mean tail
        dict set ks $k [list [expr {$mean + [dict get $v mean_us] * $c}] \
                            [expr {$tail + [dict get $v tail_us] * $tc}]]
    }
    dict set w kinds $ks
    return $w
}

# The merged "waits" as key/value words for json::write object (none when nothing committed).
proc ::report::waits_json {w} {
    set c [dict get $w commits]
    set tc [dict get $w tail_commits]
    if {$c == 0} { return {} }
    set tl [expr {$tc ? [dict get $w tail_lat] / $tc : 0.0}]
    set kj {}
    dict for {k v} [dict get $w kinds] {
        lassign $v mean tail
        set tu [expr {$tc ? $tail / $tc : 0.0}]
        lappend kj $k [json::write object mean_us [num [expr {$mean / $c}]] tail_us [num $tu] \
                           tail_share [num [expr {$tl > 0 ? $tu / $tl : 0.0}]]]
    }
    return [list waits [json::write object commits $c tail_commits $tc \
        tail_min_us [num [dict get $w tail_min]] latency_mean_us [num [expr {[dict get $w lat] / $c}]] \
        tail_latency_mean_us [num $tl] kinds [json::write object {*}$kj]]]
}

# A merged type's MN verbs and bytes per commit (report.md "types"), as
# key/value words; none when no CN's report had them.
proc ::report::type_verbs_json {e} {
    set c [dict get $e verb_commits]
    if {[dict size [dict get $e verbs]] == 0} { return {} }
    set vj {}
    dict for {op v} [dict get $e verbs] { lappend vj $op [num [expr {$c ? $v / $c : 0.0}]] }
    return [list verbs_per_commit [json::write object {*}$vj] \
        bytes_per_commit [num [expr {$c ? [dict get $e bytes] / $c : 0.0}]]]
}

# The recovery pass's report @j (recovery.json): its "recovery_pass"
# section for the cluster report, as JSON.
proc ::report::pass_json {pass j} {
    set cns {}
    set names {}
    if {$j ne "" && [dict exists $j recovery cns]} {
        foreach r [dict get $j recovery cns] {
            lappend names [dict get $r node]
            lappend cns [json::write object node [json::write string [dict get $r node]] \
                as [json::write string [dict get $r detected_by]] ok [dict get $r ok] \
                txns_in_flight [dict get $r txns_in_flight] rolled_back [dict get $r rolled_back] \
                rolled_forward [dict get $r rolled_forward] locks_released [dict get $r locks_released]]
        }
    }
    return [json::write object reason [json::write string [dict get $pass reason]] \
        exit_status [rc_json [dict get $pass rc]] \
        report [expr {$j ne "" ? [json::write string [dict get $pass json]] : "null"}] \
        recovered [llength $cns] recovered_cns [json::write array {*}[lmap n $names {json::write string $n}]] \
        cns [json::write array {*}$cns]]
}

# PASS: "" or a dict {rc json reason} of the recovery pass (dtxn-cluster's
# recovery_pass): when no CN checked the invariants, its report's checks
# are the cluster's, and the report says so ("recovery_pass").
proc ::report::cluster_merge {nodes faults check {pass ""}} {
    set reps {}
    set series {}
    set surv_series {} ;# the CNs not killed: a kill's recovery is theirs
    set by_name [dict create] ;# each node's (or restart's) series, by its tag
    set recs {}        ;# dead CN -> {by detected_wall_ns recovered_wall_ns its report entry}
    set node_json {}
    set committed 0
    set tps 0.0
    set seconds 0.0
    set totals [dict create attempted 0 rollbacks 0 false_aborts 0]
    set aborts [dict create]
    set lat [hist_empty]
    set types {}
    set waits [dict create commits 0 tail_commits 0 lat 0.0 tail_lat 0.0 tail_min {} kinds {}]
    set fabric [dict create]
    set cn_msgs 0
    set checker ""
    set inv {}
    foreach n $nodes {
        set name [dict get $n name]
        set s [series_read [dict get $n series]]
        dict set by_name $name $s
        if {$s ne ""} {
            lappend series $s
            if {![dict get $n killed] && ![dict get $n fenced]} { lappend surv_series $s }
        }
        set text [slurp [dict get $n json]]
        set hist_lines 0
        foreach l [split [slurp [dict get $n history]] \n] {
            if {[string match {C *} $l]} { incr hist_lines }
        }
        if {$text eq ""} {
            lappend node_json [json::write object node [json::write string $name] \
                exit_status [rc_json [dict get $n rc]] killed [expr {[dict get $n killed] ? "true" : "false"}] \
                fenced [expr {[dict get $n fenced] ? "true" : "false"}] \
                ended_s [num [dict get $n ended_s]] report null history_committed $hist_lines]
            continue
        }
        set j [json::json2dict $text]
        lappend reps $j
        if {$s ne "" && [dict exists $j recovery cns]} {
            # on the wall clock: the series' t0 is this CN's run start, as the report's times
            foreach r [dict get $j recovery cns] {
                dict set recs [dict get $r node] [list $name \
                    [expr {[lindex $s 0] + [dict get $r detected_ms] * 1e6}] \
                    [expr {[lindex $s 0] + [dict get $r recovered_ms] * 1e6}] $r]
            }
        }
        incr committed [dict get $j committed]
        set tps [expr {$tps + [dict get $j committed_tps]}]
        set seconds [expr {max($seconds, [dict get $j seconds])}]
        sum_into totals attempted $j
        sum_into totals rollbacks $j
        sum_into totals false_aborts $j
        dict for {k v} [dict get $j aborts] { dict incr aborts $k $v }
        if {[dict exists $j latency_hist]} { set lat [hist_add $lat [dict get $j latency_hist]] }
        foreach t [dict get $j types] {
            set tn [dict get $t name]
            if {![dict exists $types $tn]} {
                dict set types $tn [dict create committed 0 attempted 0 rollbacks 0 false_aborts 0 aborts {} hist [hist_empty] \
                    verbs {} verb_commits 0 bytes 0.0]
            }
            set e [dict get $types $tn]
            foreach k {committed attempted rollbacks} { dict incr e $k [dict get $t $k] }
            sum_into e false_aborts $t
            set ab [dict get $e aborts]
            dict for {k v} [dict get $t aborts] { dict incr ab $k $v }
            dict set e aborts $ab
            if {[dict exists $t latency_hist]} { dict set e hist [hist_add [dict get $e hist] [dict get $t latency_hist]] }
            # MN verbs and bytes per commit: each CN's, weighted by its commits
            if {[dict exists $t verbs_per_commit]} {
                set c [dict get $t committed]
                set vs [dict get $e verbs]
                dict for {op v} [dict get $t verbs_per_commit] {
                    dict set vs $op [expr {([dict exists $vs $op] ? [dict get $vs $op] : 0.0) + $v * $c}]
                }
                dict set e verbs $vs
                dict incr e verb_commits $c
                dict set e bytes [expr {[dict get $e bytes] + [dict get $t bytes_per_commit] * $c}]
            }
            dict set types $tn $e
        }
        if {[dict exists $j waits commits]} { set waits [waits_add $waits [dict get $j waits]] }
        foreach m [dict get $j fabric] {
            set mn [dict get $m mn]
            foreach what {ops bytes} {
                dict for {op v} [dict get $m $what] { dict update fabric $mn f { dict incr f $what.$op $v } }
            }
        }
        if {[dict exists $j cn_messages total]} { incr cn_msgs [dict get $j cn_messages total] }
        set own_checks {}
        foreach c [dict get $j checks] {
            if {![string match history_* [dict get $c name]]} { lappend own_checks $c }
        }
        if {[llength $own_checks] > 0 && $checker eq ""} {
            set checker $name
            set inv $own_checks
        }
        lappend node_json [json::write object node [json::write string $name] \
            exit_status [rc_json [dict get $n rc]] killed false \
            fenced [expr {[dict get $n fenced] ? "true" : "false"}] ended_s [num [dict get $n ended_s]] \
            report [json::write string [dict get $n json]] \
            committed [dict get $j committed] committed_tps [num [dict get $j committed_tps]] \
            history_committed $hist_lines]
    }
    set pass_j ""
    if {$pass ne ""} {
        set text [slurp [dict get $pass json]]
        if {$text ne "" && ![catch {json::json2dict $text} pj]} { set pass_j $pj }
        if {$pass_j ne "" && $checker eq ""} {
            set checker "the recovery pass"
            foreach c [dict get $pass_j checks] {
                if {![string match history_* [dict get $c name]]} { lappend inv $c }
            }
            if {[llength $inv] == 0} { set checker "" }
        }
    }
    set first [expr {[llength $reps] ? [lindex $reps 0] : {}}]
    # verbs per committed txn, recomputed from the summed per-MN counters
    set ops [dict create]
    set bytes 0
    set fab_json {}
    foreach mn [lsort -integer [dict keys $fabric]] {
        set o {}
        set b {}
        dict for {k v} [dict get $fabric $mn] {
            lassign [split $k .] what op
            if {$what eq "ops"} { lappend o $op $v; dict incr ops $op $v } else { lappend b $op $v; incr bytes $v }
        }
        lappend fab_json [json::write object mn $mn ops [json::write object {*}$o] bytes [json::write object {*}$b]]
    }
    set verbs {}
    set total 0
    set verb_names {}
    if {$first ne ""} {
        foreach k [dict keys [dict get $first verbs_per_txn]] {
            if {$k ni {mn_atomics total}} { lappend verb_names $k }
        }
    }
    foreach op $verb_names {
        set v [expr {[dict exists $ops $op] ? [dict get $ops $op] : 0}]
        incr total $v
        lappend verbs $op [num [expr {$committed ? double($v) / $committed : 0}]]
    }
    set atom 0
    foreach op {cas faa masked_cas} { if {[dict exists $ops $op]} { incr atom [dict get $ops $op] } }
    lappend verbs mn_atomics [num [expr {$committed ? double($atom) / $committed : 0}]]
    lappend verbs total [num [expr {$committed ? double($total) / $committed : 0}]]
    # types
    set type_json {}
    dict for {tn e} $types {
        set ab 0
        set abj {}
        dict for {k v} [dict get $e aborts] { incr ab $v; lappend abj $k $v }
        lappend type_json [json::write object name [json::write string $tn] \
            committed [dict get $e committed] attempted [dict get $e attempted] \
            rollbacks [dict get $e rollbacks] \
            abort_rate [num [expr {[dict get $e attempted] ? double($ab) / [dict get $e attempted] : 0}]] \
            false_aborts [dict get $e false_aborts] \
            false_abort_share [num [expr {$ab ? double([dict get $e false_aborts]) / $ab : 0}]] \
            aborts [json::write object {*}$abj] latency_us [hist_latency_json [dict get $e hist]] \
            latency_hist [hist_json [dict get $e hist]] {*}[type_verbs_json $e]]
    }
    set ab 0
    set abj {}
    dict for {k v} $aborts { incr ab $v; lappend abj $k $v }
    # checks: the invariants once (the CN that checked them, after every CN
    # stopped), the history of every CN as one (dtxn-check)
    set checks {}
    set ok 1
    foreach c $inv {
        set cok [expr {[dict get $c ok] ? 1 : 0}]
        if {!$cok} { set ok 0 }
        lappend checks [json::write object name [json::write string [dict get $c name]] \
            ok [expr {$cok ? "true" : "false"}] \
            detail [json::write string "[dict get $c detail] (checked by $checker over MN memory after every CN stopped)"]]
    }
    if {$checker eq ""} {
        set ok 0
        set why "no CN report carries them (the checking CN died or failed)"
        if {$pass ne ""} { append why "; the recovery pass wrote no report (exit status [dict get $pass rc])" }
        lappend checks [json::write object name [json::write string invariants] ok false \
            detail [json::write string "not checked: $why"]]
    }
    if {[dict get $check rc] >= 0} {
        set hok [expr {[dict get $check rc] == 0}]
        if {!$hok} { set ok 0 }
        set line [lindex [lsearch -inline -all [split [dict get $check text] \n] {result:*}] end]
        lappend checks [json::write object name [json::write string history_merged] \
            ok [expr {$hok ? "true" : "false"}] \
            detail [json::write string "dtxn-check over every CN's history as one: $line"]]
    }
    foreach n $nodes {
        if {![dict get $n killed] && ![dict get $n fenced] && [dict get $n rc] ne "0"} { set ok 0 }
    }
    # faults
    set fault_json {}
    foreach f $faults {
        set fns [dict get $f t_unix_ns]
        lassign [recovery $series $fns 0.01] before back
        lassign [recovery $surv_series $fns 0.01] sbefore sback
        set rj null
        if {[dict get $f kind] in {kill pause partition} && [dict exists $recs [dict get $f node]]} {
            lassign [dict get $recs [dict get $f node]] by det done r
            set rj [json::write object by [json::write string $by] \
                detect_ms [num [expr {($det - $fns) / 1e6}]] \
                recovery_ms [num [expr {($done - $det) / 1e6}]] \
                txns_in_flight [dict get $r txns_in_flight] rolled_back [dict get $r rolled_back] \
                rolled_forward [dict get $r rolled_forward] locks_released [dict get $r locks_released]]
        }
        set rejoin null
        if {[dict get $f kind] eq "restart"} {
            set rejoin [rejoin [dict get $by_name [dict get $f node].restart] $fns]
        }
        lappend fault_json [json::write object node [json::write string [dict get $f node]] \
            kind [json::write string [dict get $f kind]] t [num [dict get $f t]] rejoin $rejoin \
            before_tps [num $before] back_to_90_s [num $sback] \
            cluster_back_to_90_s [num $back] survivors_before_tps [num $sbefore] recovery $rj \
            timeline [timeline $series $fns -0.2 1.0 0.01]]
    }
    set config "{}"
    if {$first ne ""} {
        set cfg {}
        dict for {k v} [dict get $first config] {
            if {$k ni {node}} { lappend cfg $k [json::write string $v] }
        }
        lappend cfg processes [json::write string "[llength $nodes] CNs"]
        set config [json::write object {*}$cfg]
    }
    set att [dict get $totals attempted]
    return [json::write object \
        dtxn_version [json::write string [expr {$first ne "" ? [dict get $first dtxn_version] : ""}]] \
        cluster true config $config seconds [num $seconds] committed $committed \
        attempted $att rollbacks [dict get $totals rollbacks] \
        committed_tps [num $tps] abort_rate [num [expr {$att ? double($ab) / $att : 0}]] \
        false_aborts [dict get $totals false_aborts] \
        false_abort_share [num [expr {$ab ? double([dict get $totals false_aborts]) / $ab : 0}]] \
        aborts [json::write object {*}$abj] latency_us [hist_latency_json $lat] \
        latency_hist [hist_json $lat] types [json::write array {*}$type_json] \
        {*}[waits_json $waits] verbs_per_txn [json::write object {*}$verbs] \
        bytes_per_txn [num [expr {$committed ? double($bytes) / $committed : 0}]] \
        cn_msgs_per_txn [num [expr {$committed ? double($cn_msgs) / $committed : 0}]] \
        fabric [json::write array {*}$fab_json] nodes [json::write array {*}$node_json] \
        faults [json::write array {*}$fault_json] checks [json::write array {*}$checks] \
        {*}[expr {$pass ne "" ? [list recovery_pass [pass_json $pass $pass_j]] : {}}] \
        ok [expr {$ok ? "true" : "false"}]]
}
