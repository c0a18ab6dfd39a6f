# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by the dtxn-app suites.
package require json

# EAL arguments for one in-process run on the two cores CI has. Each run
# gets its own file prefix so that runs never share DPDK runtime files.
proc eal_args {{mem 1024} {lcores 0-1}} {
    global eal_seq
    incr eal_seq
    return [list --no-pci --no-huge -m $mem -l $lcores --file-prefix dtxn_tcl_[pid]_$eal_seq]
}

# Runs dtxn-app; returns a dict: code, stdout, stderr.
proc dtxn {eal args} {
    set out [file join [::tcltest::temporaryDirectory] dtxn.stdout.[pid]]
    set err [file join [::tcltest::temporaryDirectory] dtxn.stderr.[pid]]
    set code 0
    if {[catch {exec $::dtxn_app {*}$eal -- {*}$args >$out 2>$err} msg opts]} {
        set ec [dict get $opts -errorcode]
        if {[lindex $ec 0] eq "CHILDSTATUS"} {
            set code [lindex $ec 2]
        } else {
            set code -1
        }
    }
    set r [dict create code $code stdout [slurp $out] stderr [slurp $err]]
    file delete $out $err
    eal_cleanup $eal
    return $r
}

# DPDK's runtime directory of a run's --file-prefix (its config and
# fbarray files, 6-50 MB with --no-huge): the EAL leaves it behind at
# exit, and a suite runs hundreds of prefixes. Removed after each run.
proc eal_runtime_dir {prefix} {
    if {[exec id -u] == 0} { return /var/run/dpdk/$prefix }
    if {[info exists ::env(XDG_RUNTIME_DIR)]} { return $::env(XDG_RUNTIME_DIR)/dpdk/$prefix }
    return /tmp/dpdk/$prefix
}

proc eal_cleanup {eal} {
    set i [lsearch -exact $eal --file-prefix]
    if {$i < 0} { return }
    set prefix [lindex $eal [expr {$i + 1}]]
    # only the suites' own one-run prefixes: never a running cluster's
    if {[string match dtxn_tcl_* $prefix] || [string match dtxn-lone-* $prefix]} {
        file delete -force [eal_runtime_dir $prefix]
    }
}

proc slurp {path} {
    if {![file exists $path]} { return "" }
    set f [open $path r]
    set s [read $f]
    close $f
    return $s
}

# Parses a JSON report file into a dict.
proc report {path} {
    return [::json::json2dict [slurp $path]]
}

proc tmpfile {name} {
    return [file join [::tcltest::temporaryDirectory] $name.[pid]]
}

# Non-empty lines of a string.
proc lines {s} {
    set r {}
    foreach l [split $s \n] {
        if {[string trim $l] ne ""} { lappend r $l }
    }
    return $r
}

# The check named $name in a report: its "ok" value, or "missing". A
# failed check prints its detail (the CI log keeps no report files).
proc check_ok {rep name} {
    foreach c [dict get $rep checks] {
        if {[dict get $c name] ne $name} { continue }
        if {[dict get $c ok]} { return 1 }
        puts "check $name failed: [dict get $c detail]"
        return 0
    }
    return missing
}

# Sum of a report's aborts over every reason.
proc total_aborts {rep} {
    set n 0
    dict for {k v} [dict get $rep aborts] { incr n $v }
    return $n
}

# The entry of the "types" list named $name.
proc type_entry {rep name} {
    foreach t [dict get $rep types] {
        if {[dict get $t name] eq $name} { return $t }
    }
    return {}
}

# A report's overall "ok" as 1 or 0.
proc report_ok {rep} {
    return [expr {[dict get $rep ok] ? 1 : 0}]
}

# Runs dtxn-app expecting a usage error: returns {code stderr-lines matches}
# where matches is 1 if the last stderr line matches $pattern (tpcc, tatp).
proc usage_error {pattern eal args} {
    set r [dtxn $eal {*}$args]
    set err [lines [dict get $r stderr]]
    set m [regexp -- $pattern [lindex $err end]]
    if {!$m || [llength $err] != 1} { puts "stderr was: [dict get $r stderr]" }
    return [list [dict get $r code] [llength $err] $m]
}

# Names of a report's checks that failed (empty when all hold).
proc failed_checks {rep} {
    set f {}
    foreach c [dict get $rep checks] {
        if {![dict get $c ok]} { lappend f [dict get $c name] }
    }
    return $f
}
