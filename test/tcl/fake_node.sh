#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A stand-in for dtxn-app --role mn|cn in tcl-netns's launcher rows (the
# launcher's mechanics across hosts without a fabric between them): it
# prints what it was started with (its namespace, pid, EAL arguments, the
# environment), makes its DPDK runtime folder as the EAL would, and
#  - as an MN prints the ready line and waits for SIGTERM;
#  - as a CN writes its --series-out header and, every 20 ms for
#    --duration S, the count of DROP rules in its namespace's iptables
#    (--partition), then exits 0 without a report.
node=""
trap 'echo "fake: $node TERM"; exit 0' TERM
prefix=""
nopci=0
mem=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case "$1" in
    --file-prefix) prefix=$2; shift ;;
    --no-pci) nopci=1 ;;
    -m) mem=$2; shift ;;
    esac
    shift
done
shift
role=""; series=""; duration=1
while [ $# -gt 0 ]; do
    case "$1" in
    --role) role=$2; shift ;;
    --node) node=$2; shift ;;
    --series-out) series=$2; shift ;;
    --duration) duration=$2; shift ;;
    esac
    shift
done
ns=$(ip netns identify $$ 2>/dev/null)
echo "fake: node=$node pid=$$ netns=$ns prefix=$prefix nopci=$nopci mem=$mem ucx_tls=${UCX_TLS:-}"
rt=/var/run/dpdk
[ "$(id -u)" -eq 0 ] || rt=${XDG_RUNTIME_DIR:-/tmp}/dpdk
mkdir -p "$rt/$prefix" && touch "$rt/$prefix/config"
if [ "$role" = mn ]; then
    echo "dtxn: $node ready: fake"
    while :; do sleep 0.05; done
fi
[ -n "$series" ] && echo "dtxn-series 1 $node $(date +%s%N) 0.010000" > "$series"
end=$(( $(date +%s%N) + $(echo "$duration" | awk '{ printf "%d", $1 * 1000000000 }') ))
while [ "$(date +%s%N)" -lt "$end" ]; do
    echo "fake: drop $(iptables -w -S 2>/dev/null | grep -c DROP) at $(date +%s%N)"
    sleep 0.02
done
echo "fake: $node done"
exit 0
