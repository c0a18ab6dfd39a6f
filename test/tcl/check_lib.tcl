# SPDX-License-Identifier: BSD-3-Clause
# Helpers of the suites that run checked histories (correctness.test,
# sanitize.test): the registered protocols and their isolation levels,
# and one checked run that must be clean.

# Registered protocols, from the usage text.
proc registered_protocols {} {
    set usage [exec $::dtxn_app --help]
    if {![regexp -line {^protocols: (.*)$} $usage -> names]} {
        error "no 'protocols:' line in dtxn-app --help"
    }
    set r {}
    foreach p [split $names ,] { lappend r [string trim $p] }
    return $r
}

# Isolation levels @p proto accepts (a tiny run each; a refusal says so).
proc supported_isolations {proto} {
    set r {}
    foreach iso {sr si} {
        set res [dtxn [eal_args 256] --protocol $proto --isolation $iso --bench kvs \
                     --keys 1000 --txns 10 --live 0]
        if {[dict get $res code] == 0} {
            lappend r $iso
        } elseif {![string match "*does not support*" [dict get $res stderr]]} {
            error "$proto/$iso: [dict get $res stderr]"
        }
    }
    return $r
}

# Application invariants an isolation level does not preserve: SI allows
# write skew, so writeskew's x + y >= 0 may break under SI (the checker
# still must find no G-SI cycle).
set ::level_allows {sr {} si {writeskew_constraint}}

# The checks of a JSON report that did not pass, but those @p iso allows.
proc failed_checks {rep {iso sr}} {
    set bad {}
    foreach c [dict get $rep checks] {
        if {![dict get $c ok] && [dict get $c name] ni [dict get $::level_allows $iso]} {
            lappend bad "[dict get $c name]: [dict get $c detail]"
        }
    }
    return $bad
}

# One checked run that must be clean; returns {} or what went wrong.
# A sanitizer's finding (build-asan) is named by its first line: the run
# may have written its report before the finding (e.g. at teardown).
proc clean_run {proto iso bench extra {runargs {--duration 1}}} {
    set out [tmpfile corr_[pid]_$proto$iso$bench.json]
    set r [dtxn [eal_args] --protocol $proto --isolation $iso --bench $bench {*}$extra \
               {*}$runargs --live 0 --check history --out $out]
    set problems {}
    if {[regexp -line {^.*(?:ERROR: \w+Sanitizer|runtime error: ).*$} [dict get $r stderr] found]} {
        lappend problems "sanitizer: [string trim $found]"
    }
    if {![file exists $out]} {
        return [lappend problems \
                    "exit [dict get $r code], no report: [lindex [lines [dict get $r stderr]] end]"]
    }
    set rep [report $out]
    file delete $out
    # a failing check exits 1 (failed_checks lists it unless allowed);
    # a non-zero exit with every check passing is a failure of its own
    if {[dict get $r code] != 0 && [report_ok $rep]} {
        lappend problems "exit [dict get $r code]: [lindex [lines [dict get $r stderr]] end]"
    }
    if {[dict get $rep committed] == 0} { lappend problems "nothing committed" }
    set names {}
    foreach c [dict get $rep checks] { lappend names [dict get $c name] }
    set cycle [expr {$iso eq "si" ? "history_G-SI" : "history_G2"}]
    foreach need [list history_G0 history_G1a history_G1b history_G1c $cycle history_garbage] {
        if {$need ni $names} { lappend problems "no $need check" }
    }
    return [concat $problems [failed_checks $rep $iso]]
}

