# SPDX-License-Identifier: BSD-3-Clause
#
# The cluster file (config/cluster/*.ini) as the launchers read it:
# usertools/dtxn-cluster and usertools/dtxn-netns (doc/guides/cluster.md,
# "The cluster file" and "Across hosts"). dtxn-app reads the same file in
# C (app/dtxn-app/role_conf.c, cluster.c); this reader checks what the
# launchers need before anything starts.
#
#   ::clusterfile::read FILE
#       a dict: file, fabric ([cluster] fabric, default shm), rsh (the
#       [cluster] rsh template, "" for this host), mns and cns (lists of
#       node names, sorted), nodes (name -> dict lcores addr host; addr
#       and host "" when not given). Bad input raises an error whose
#       message is the one line to print (errorcode DTXN_CLUSTER_FILE).

namespace eval ::clusterfile {}

proc ::clusterfile::fail {msg} {
    return -code error -errorcode DTXN_CLUSTER_FILE $msg
}

proc ::clusterfile::read {file} {
    if {[catch {open $file r} f]} { fail "$file: cannot read: $f" }
    set section ""
    set nodes [dict create]
    set keys [dict create]
    set n 0
    set err ""
    while {[gets $f line] >= 0} {
        incr n
        # rte_cfgfile's comments: from ';' to the end of the line
        set line [string trim [lindex [split $line {;}] 0]]
        if {$line eq "" || [string index $line 0] eq "#"} { continue }
        if {[regexp {^\[(.*)\]$} $line -> section]} { continue }
        if {![regexp {^([^=]+?)\s*=\s*(.*)$} $line -> key value]} { continue }
        if {$section eq "cluster"} {
            dict set keys $key [list $value $n]
            continue
        }
        if {$section ne "nodes"} { continue }
        if {![regexp {^(mn|cn)[0-9]+$} $key]} {
            set err "$file:$n: \[nodes\] $key: not a node name (mnI or cnJ)"
            break
        }
        # "mn0 = 0@0" or "mn0 = lcores=0@0 addr=IP:port host=NAME"
        set node [dict create lcores "" addr "" host "" line $n]
        set i 0
        foreach w [regexp -all -inline {\S+} $value] {
            if {$i == 0 && [string first = $w] < 0} {
                set k lcores
                set v $w
            } elseif {![regexp {^(lcores|addr|host)=(.+)$} $w -> k v] || [dict get $node $k] ne ""} {
                set err "$file:$n: \[nodes\] $key: '$w' is not lcores=LIST, addr=IPv4:port or host=NAME, each once"
                break
            }
            if {$k eq "addr" && ![addr_ok $v]} {
                set err "$file:$n: \[nodes\] $key: address '$v': expected IPv4:port (e.g. addr=10.77.0.1:18515)"
                break
            }
            if {$k eq "host" && ![regexp {^[A-Za-z0-9._][A-Za-z0-9._-]{0,62}$} $v]} {
                set err "$file:$n: \[nodes\] $key: host '$v': expected a host or namespace name (letters, digits, '.', '_', '-')"
                break
            }
            dict set node $k $v
            incr i
        }
        if {$err ne ""} { break }
        if {[dict get $node lcores] eq ""} {
            set err "$file:$n: \[nodes\] $key: no lcores (e.g. '$key = lcores=0 addr=10.77.0.1:18515 host=dtxn-$key')"
            break
        }
        if {[dict exists $nodes $key]} {
            set err "$file:$n: \[nodes\] $key: named twice"
            break
        }
        dict set nodes $key $node
    }
    close $f
    if {$err ne ""} { fail $err }
    set mns [lsort -dictionary [lsearch -all -inline [dict keys $nodes] mn*]]
    set cns [lsort -dictionary [lsearch -all -inline [dict keys $nodes] cn*]]
    if {[llength $mns] == 0 || [llength $cns] == 0} {
        fail "$file: no \[nodes\] section with MNs and CNs (see config/cluster/local.ini)"
    }
    # two nodes at one address
    set at [dict create]
    foreach name [concat $mns $cns] {
        set a [dict get $nodes $name addr]
        if {$a eq ""} { continue }
        if {[dict exists $at $a]} {
            fail "$file:[dict get $nodes $name line]: \[nodes\] $name: address $a is already [dict get $at $a]'s"
        }
        dict set at $a $name
    }
    # the remote shell: a template with {host}, and a host for every node
    set rsh ""
    if {[dict exists $keys rsh]} {
        lassign [dict get $keys rsh] rsh line
        set rsh [string trim $rsh]
        if {[string first "{host}" $rsh] < 0} {
            fail "$file:$line: \[cluster\] rsh '$rsh': the template has no {host} (e.g. 'ssh {host}' or 'ip netns exec {host}')"
        }
        foreach name [concat $mns $cns] {
            if {[dict get $nodes $name host] eq ""} {
                fail "$file:[dict get $nodes $name line]: \[nodes\] $name: no host= (the \[cluster\] rsh template '$rsh' starts every node on its host)"
            }
        }
    }
    set fabric shm
    if {[dict exists $keys fabric]} { set fabric [string trim [lindex [dict get $keys fabric] 0]] }
    return [dict create file $file fabric $fabric rsh $rsh mns $mns cns $cns nodes $nodes]
}

# IPv4:port, each octet 0-255, port 1-65535 (dtxn_fabric_addr_parse's rule)
proc ::clusterfile::addr_ok {a} {
    if {![regexp {^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3}):([0-9]{1,5})$} $a -> o1 o2 o3 o4 port]} {
        return 0
    }
    foreach o [list $o1 $o2 $o3 $o4] {
        if {[scan $o %d] > 255} { return 0 }
    }
    set p [scan $port %d]
    return [expr {$p >= 1 && $p <= 65535}]
}

# The IPv4 part of a node's addr= ("" if none).
proc ::clusterfile::ip {cl name} {
    return [lindex [split [dict get $cl nodes $name addr] :] 0]
}
