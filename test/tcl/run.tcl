# SPDX-License-Identifier: BSD-3-Clause
# Runs one tcltest suite against a dtxn-app binary:
#   tclsh run.tcl SUITE.test /path/to/dtxn-app
#   DTXN_TEST_MATCH='cluster-ford cluster-mn-*' tclsh run.tcl ...   (a subset)
# Exits with the number of failed tests (tcltest's cleanupTests exits 0
# even after failures), and prints "N passed, N failed" last.
package require tcltest 2
namespace import ::tcltest::*

if {[llength $argv] != 2} {
    puts stderr "usage: tclsh run.tcl SUITE.test DTXN_APP"
    exit 2
}
lassign $argv suite ::dtxn_app
set ::tcldir [file dirname [file normalize [info script]]]
source [file join $::tcldir lib.tcl]

# temporary files go to a directory of this run's own, never the cwd
set ::tmproot [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] \
    dtxn_tcl_[pid]_[clock clicks]]
file mkdir $::tmproot
configure -verbose {pass error} -tmpdir $::tmproot
# DTXN_TEST_MATCH="pattern ...": run only the tests whose names match (tcltest -match)
if {[info exists ::env(DTXN_TEST_MATCH)]} { configure -match $::env(DTXN_TEST_MATCH) }
source $suite

set passed $::tcltest::numTests(Passed)
set failed $::tcltest::numTests(Failed)
# DTXN_TEST_KEEP=1 keeps a copy of the run's files (logs, reports) for a
# post-mortem: cleanupTests deletes what the tests created in its tmpdir
if {[info exists ::env(DTXN_TEST_KEEP)]} {
    file copy -force $::tmproot $::tmproot.kept
    puts "kept $::tmproot.kept"
}
cleanupTests 1
file delete -force $::tmproot
puts "$passed passed, $failed failed"
exit [expr {$failed > 0 ? 1 : 0}]
