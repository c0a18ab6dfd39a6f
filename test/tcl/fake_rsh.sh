#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ssh's way with a remote command, into a network namespace of this host
# (tcl-netns's template for dtxn-cluster's ssh path, where no sshd runs):
#   fake_rsh.sh HOST WORD...   the words joined by blanks, one string for
#                              the remote shell, as ssh sends them
host=$1
shift
exec ip netns exec "$host" sh -c "$*"
