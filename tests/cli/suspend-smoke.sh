#!/bin/sh
# scripts/smoke-network-suspension, loopback variant: the server is killed
# mid-answer and comes back; the turn is paused, then completed.
. "$top_srcdir/tests/cli/lib.sh"
"$top_srcdir/scripts/smoke-network-suspension" loopback
