#!/bin/sh
# scripts/smoke-network-suspension, netns variant: a real link (a veth
# pair into a network namespace, the server inside) is cut mid-answer and
# restored.  Needs root and ip netns; elsewhere it skips (77) saying why.
. "$top_srcdir/tests/cli/lib.sh"
"$kit/netns-link.sh" check || skip "no network namespaces here (needs root and ip netns); CI runs this as root"
"$top_srcdir/scripts/smoke-network-suspension" netns
