#!/bin/sh
# The record's members, one list: lib/record.c's table of names (the only
# place a member is named), saop(7)'s "The record on the pipe" (its .It Li
# entries), saop.h's enum saop_record_member, and a getter and a setter
# for each in saop.h name the same members, in the same order.
. "$top_srcdir/tests/cli/lib.sh"
src="$top_srcdir/lib/record.c"
hdr="$top_srcdir/lib/saop.h"
page="$top_srcdir/man/saop.7"

# record.c: [SAOP_RECORD_X] = "name", in the table's order.
sed -n '/^static const char \*const member_names\[/,/^};/p' "$src" |
    sed -n 's/^[[:space:]]*\[SAOP_RECORD_\([A-Z_]*\)\] = "\([a-z_]*\)",$/\1 \2/p' \
    >"$tmp/table"
# The enum: its members, without the count.
sed -n '/^enum saop_record_member {/,/^};/p' "$hdr" |
    sed -n 's/^[[:space:]]*SAOP_RECORD_\([A-Z_]*\).*/\1/p' |
    grep -vx MEMBERS >"$tmp/enum"
# The page: every Li on an .It line of the section, in order.
sed -n '/^\.Ss The record on the pipe$/,/^\.Ss /p' "$page" |
    sed -n 's/^\.It //p' |
    awk '{ for (i = 1; i < NF; i++) if ($i == "Li") print $(i + 1) }' \
    >"$tmp/page"

n=$(wc -l <"$tmp/table")
[ "$n" -ge 19 ] || fail "only $n members read from record.c's table"
[ "$(wc -l <"$tmp/page")" -ge 19 ] || fail "only $(wc -l <"$tmp/page") members read from saop(7)"
cut -d' ' -f2 "$tmp/table" >"$tmp/names"
diff -u "$tmp/page" "$tmp/names" >"$tmp/diff" ||
	fail "saop(7)'s record members (-) and record.c's table (+) differ:
$(cat "$tmp/diff")"
# Each table entry: its enum constant is its name in capitals.
while read -r k name; do
	[ "$k" = "$(printf '%s' "$name" | tr a-z A-Z)" ] ||
		fail "record.c: SAOP_RECORD_$k is named \"$name\""
done <"$tmp/table"
cut -d' ' -f1 "$tmp/table" >"$tmp/keys"
diff -u "$tmp/enum" "$tmp/keys" >"$tmp/diff" ||
	fail "saop.h's enum saop_record_member (-) and record.c's table (+) differ:
$(cat "$tmp/diff")"
# A getter and a setter each (detect's getter: saop_record_detect() is
# the scan, so saop_record_detect_info()).
while read -r name; do
	get=saop_record_$name
	[ "$name" = detect ] && get=saop_record_detect_info
	grep -q "[ *]$get(const json_t \*rec" "$hdr" ||
		fail "saop.h: no getter $get() for the member $name"
	grep -q "^int saop_record_set_$name(json_t \*rec" "$hdr" ||
		fail "saop.h: no setter saop_record_set_$name() for the member $name"
done <"$tmp/names"
exit 0
