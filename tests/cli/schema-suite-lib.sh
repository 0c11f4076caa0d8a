#!/bin/sh
# JSON-Schema-Test-Suite (draft2020-12 and draft7, not optional/) through
# libsaop in this process: every test, each validated with and without
# error collection.  Fails when a draft's pass rate falls below its bar.
. "$top_srcdir/tests/cli/lib.sh"
suite="$corpora/JSON-Schema-Test-Suite"
# The bars: the pass rates reached when this test was written.
schema-suite -v -m 100 "$suite" draft2020-12
schema-suite -v -m 100 "$suite" draft7
