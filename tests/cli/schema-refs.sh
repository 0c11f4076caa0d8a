#!/bin/sh
# saop-validate --schema: how $id and $ref URIs resolve (issue 25:
# lib/schema.c): dot segments (./ ../ /./ /../), a network-path
# reference, a base with no path, a pointer with percent-encoded bytes
# (hex in either case), file: URIs (with a host part, with a query),
# --ref-dir (one slash or two after the URI); and the schema errors, each
# 78 before any record is read: one $id naming two schemas, a file that
# is not there, a file that is not JSON (its line and column), a URI
# nothing maps to.  A $schema naming a metaschema that cannot be read is
# taken as 2020-12.
. "$top_srcdir/tests/cli/lib.sh"

cd "$tmp"
cat >s1.json <<'JSON'
{"$id": "http://x.test/a/b/root.json", "type": "object",
 "properties": {
   "dots": {"$ref": "http://x.test/a/b/./../c/item.json"},
   "rel": {"$ref": "../c/item.json"},
   "net": {"$ref": "//other.test/d.json"},
   "hex": {"$ref": "#/$defs/%7bk%7D"},
   "up": {"$ref": "../../e/./f/../g.json"},
   "arr": {"$ref": "http://bare.test/i.json"}
 },
 "$defs": {
   "item": {"$id": "../c/item.json", "type": "integer"},
   "d": {"$id": "http://other.test/d.json", "type": "string"},
   "{k}": {"type": "boolean"},
   "g": {"$id": "http://x.test/e/g.json", "type": "null"},
   "bare": {"$id": "http://bare.test", "$defs": {"i": {"$id": "i.json",
     "type": "array"}}}
 }
}
JSON
v() {
	saop-validate --no-retry "$@"
}
printf '%s\n' '{"task_id":"t","raw":"{\"dots\":1,\"rel\":2,\"net\":\"s\",\"hex\":true,\"up\":null,\"arr\":[]}"}' \
    '{"task_id":"t","raw":"{\"dots\":\"x\",\"rel\":\"y\",\"net\":3,\"hex\":4,\"up\":5,\"arr\":{}}"}' |
    expect_status 1 v --schema s1.json >out 2>err
sed -n 1p out >r1
jqf '.state == "OK"' r1
sed -n 2p out >r2
# Each property checked against the subschema its $ref resolves to.
jqf '.state == "INVALID" and ([.validate.errors[] | [.path, .message]] ==
    [["/dots", "/dots: expected integer, got string"],
     ["/rel", "/rel: expected integer, got string"],
     ["/net", "/net: expected string, got integer"],
     ["/hex", "/hex: expected boolean, got integer"],
     ["/up", "/up: expected null, got integer"],
     ["/arr", "/arr: expected array, got object"]])' r2

# file: URIs and --ref-dir.
echo '{"type": "integer"}' >item.json
for r in "file://$tmp/item.json" "file:$tmp/item.json?q=1" \
    "http://dir.test/item.json" "http://dir.test//item.json"; do
	jq -n --arg r "$r" '{"$ref": $r}' >r.json
	printf '%s\n' '{"task_id":"t","raw":"1"}' '{"task_id":"t","raw":"\"a\""}' |
	    expect_status 1 v --ref-dir "http://dir.test=$tmp" --schema r.json >out
	[ "$(jq -r .state out | tr '\n' ' ')" = "OK INVALID " ] ||
	    fail "$r: $(cat out)"
done

# Schema errors: 78, named, no record read.
cat >two.json <<'JSON'
{"$defs": {"a": {"$id": "http://t.test/x.json", "type": "string"},
 "b": {"$id": "http://t.test/x.json", "type": "integer"}}}
JSON
echo '{"type": ' >broken.json
for c in "two.json|saop-validate: /\$defs/b/\$id: 'http://t.test/x.json' names two schemas" \
    "file://$tmp/none.json|saop-validate: /\$ref: cannot read schema file $tmp/none.json: unable to open $tmp/none.json: No such file or directory" \
    "file://$tmp/broken.json|saop-validate: /\$ref: schema file $tmp/broken.json, line 2, column 0: unexpected token near end of file" \
    "http://nowhere.test/x.json|saop-validate: /\$ref: cannot resolve 'http://nowhere.test/x.json': no schema has that URI and no ref dir maps it to a folder"; do
	r=${c%%|*} want=${c#*|}
	case $r in
	*.json) [ -f "$r" ] && cp "$r" s.json || jq -n --arg r "$r" '{"$ref": $r}' >s.json ;;
	esac
	printf '%s\n' '{"task_id":"t","raw":"1"}' |
	    expect_status 78 v --schema s.json >out 2>err
	grep -q -x -F "$want" err || fail "$r: $(cat err)"
	[ ! -s out ] || fail "$r: a record written: $(cat out)"
done

# A metaschema that cannot be read: the schema is read as 2020-12.
echo '{"$schema": "http://custom.test/meta#", "type": "integer"}' >cs.json
printf '%s\n' '{"task_id":"t","raw":"1"}' '{"task_id":"t","raw":"\"a\""}' |
    expect_status 1 v --schema cs.json >out 2>/dev/null
[ "$(jq -r .state out | tr '\n' ' ')" = "OK INVALID " ] || fail "custom: $(cat out)"
exit 0
