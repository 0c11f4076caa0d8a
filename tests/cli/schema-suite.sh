#!/bin/sh
# JSON-Schema-Test-Suite through saop-validate as users run it, one process
# per test: "saop-validate -R -q --no-retry --ref-dir
# http://localhost:1234/=DIR --schema SCHEMA < INSTANCE" exits 0 when the
# instance is valid, 1 when it is not.  Every required test of draft2020-12
# and draft7 (2,226 processes: about 15 s of CPU; schema-suite-lib.sh runs
# the same tests in one process).
. "$top_srcdir/tests/cli/lib.sh"
prog=$(command -v saop-validate) || skip "saop-validate is not built"
# In a shared build src/saop-validate is libtool's shell wrapper, which
# costs a shell per case (4 times the time): run the binary it wraps.
dir=$(dirname "$prog")
if [ -x "$dir/.libs/saop-validate" ] && [ -d "${top_builddir:-}/lib/.libs" ]
then
	prog="$dir/.libs/saop-validate"
	LD_LIBRARY_PATH="$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export LD_LIBRARY_PATH
fi
suite="$corpora/JSON-Schema-Test-Suite"
# The bars: the pass rates reached when this test was written.
schema-suite -v -m 100 -p "$prog" "$suite" draft2020-12
schema-suite -v -m 100 -p "$prog" "$suite" draft7
