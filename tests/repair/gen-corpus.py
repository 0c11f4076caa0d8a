#!/usr/bin/env python3
# gen-corpus.py: writes tests/repair/corpus.ndjson, the repair corpus (one
# case a line: {"kind", "in", "want"} or {"kind", "in", "refuse": true},
# optional "schema" ("envelope" or a schema object) and "close": true).
# The cases are ours, written by hand below or made by putting one slip
# into documents of our own; run it again after editing it:
#   python3 tests/repair/gen-corpus.py > tests/repair/corpus.ndjson
import json
import sys

cases = []


def ok(kind, text, want, **kw):
    c = {"kind": kind, "in": text, "want": want}
    c.update(kw)
    cases.append(c)


def no(kind, text, **kw):
    c = {"kind": kind, "in": text, "refuse": True}
    c.update(kw)
    cases.append(c)


ENV = {"saop": "1.0", "turn_index": 3, "agent_role": "developer",
       "thought": "Read the file first.", "action": {"tool": "read_file",
       "parameters": {"path": "src/main.c"}}}
ENV_NULL = {"saop": "1.0", "turn_index": 0, "agent_role": "reviewer",
            "thought": "All good.", "action": None}

# ---- Hand-written cases, by repair. ----
ok("bom", "\ufeff{\"a\": 1}", {"a": 1})
ok("bom", "\ufeff[1, 2,]", [1, 2])
ok("think_block", "<think>The user wants JSON.</think>\n{\"a\": 1}", {"a": 1})
ok("think_block", "<think>Maybe {\"a\": 2}? No.</think>{\"a\": 1}", {"a": 1})
ok("think_block", "  <reasoning>step 1, step 2</reasoning>\n[1, 2]", [1, 2])
ok("think_block", "<thinking>hmm</thinking>\n```json\n{\"a\": true}\n```", {"a": True})
ok("think_block", "<think>\n\n</think>\n\n{\"ok\": \"yes\"}", {"ok": "yes"})
no("think_block", "<think>never closed {\"a\": 1}")
ok("code_fence", "```json\n{\"a\": 1}\n```", {"a": 1})
ok("code_fence", "```\n[1, 2, 3]\n```", [1, 2, 3])
ok("code_fence", "~~~json\n{\"a\": \"b\"}\n~~~", {"a": "b"})
ok("code_fence", "```JSON\n{\"x\": null}\n```\n", {"x": None})
ok("code_fence", "Here:\n```json\n{\"a\": 1,}\n```\nDone.", {"a": 1})
ok("code_fence", "```python\nprint(1)\n```\n```json\n{\"a\": 1}\n```", {"a": 1})
ok("code_fence", "```sh\nls -l\n```\nthen\n```json\n[\"x\"]\n```", ["x"])
ok("code_fence", "```json\n{'a': True}\n```", {"a": True})
no("code_fence", "```json\n{\"a\": 1}\n```\nor\n```json\n{\"a\": 2}\n```")
no("code_fence", "```json\n{\"a\": 1\n```\n```json\n{\"a\": 2}\n```")
no("code_fence", "```json\n{\"a\": [1, 2\n```\n```json\n[3]\n```")
ok("prose", "Sure! Here is the answer: {\"a\": [1, 2]} Hope it helps.", {"a": [1, 2]})
ok("prose", "{\"a\": 1}\nThat is all.", {"a": 1})
ok("prose", "The result is [1, 2, 3].", [1, 2, 3])
ok("prose", "Answer:\n\n{\"city\": \"Paris\"}\n\nLet me know.", {"city": "Paris"})
no("prose", "Use {curly} braces: {'a': True}")
# Where saop-detect(1) finds the JSON (a '{' or '[' that begins a line or
# follows ": ", complete), saop-validate reads it: prose holding quotes
# before it is prose (one rule of where the JSON starts: detect's).
ok("prose", "He said \"yes\": {\"a\": 1}", {"a": 1})
no("prose", "First {\"a\": 1} and then {\"a\": 2}.")
no("prose", "See [1] and {\"a\": 2}.")
no("prose", "Try {\"a\": 1, \"b\" oops} or {\"a\": 2}.")
ok("surplus_bracket", "{\"key\": \"value\"}, \"key2\": \"value2\"}", {"key": "value", "key2": "value2"})
no("prose", "\"a\": {\"b\": 1}")
ok("concatenated_values", "{\"a\": 1}, {\"b\": 2}", [{"a": 1}, {"b": 2}])
ok("bare_text", "Paris.", "Paris.")
no("prose", "I cannot do that [yet].")
no("prose", "")
no("prose", "   \n  ")
ok("jsonp", "callback({\"a\": 1});", {"a": 1})
ok("jsonp", "jQuery123({\"a\": [1, 2]})", {"a": [1, 2]})
ok("jsonp", "window.cb ( [1, 2] ) ;", [1, 2])
ok("jsonp", "f({'a': None})", {"a": None})
ok("comment", "// answer\n{\"a\": 1 /* one */, \"b\": 2} // end", {"a": 1, "b": 2})
ok("comment", "{\"a\": 1, # the first\n\"b\": 2}", {"a": 1, "b": 2})
ok("comment", "# header\n[1, 2]", [1, 2])
ok("comment", "{\"url\": \"http://x.org/a\" // the site\n}", {"url": "http://x.org/a"})
ok("comment", "[1, /* two */ 2]", [1, 2])
ok("comment", "{\"s\": \"it's True, , }\", // note\n}", {"s": "it's True, , }"})
no("comment", "{\"a\": 1 /* never closed }")
ok("trailing_comma", "{\"a\": [1, 2, ], \"b\": 3,}", {"a": [1, 2], "b": 3})
ok("trailing_comma", "[1,\n]", [1])
ok("trailing_comma", "{\"a\": {\"b\": 1,},}", {"a": {"b": 1}})
ok("trailing_comma", "[[1,], [2,],]", [[1], [2]])
ok("extra_comma", "[1,,2]", [1, 2])
ok("extra_comma", "[,1]", [1])
ok("extra_comma", "{,\"a\": 1}", {"a": 1})
ok("extra_comma", "{\"a\": 1,, \"b\": 2}", {"a": 1, "b": 2})
ok("extra_comma", "[1,,,]", [1])
no("extra_comma", "{\"a\": ,}")
no("extra_comma", "{\"a\": 1,: 2}")
ok("missing_comma", "[{\"a\": 1}\n{\"a\": 2}]", [{"a": 1}, {"a": 2}])
ok("missing_comma", "[\"a\" \"b\"]", ["a", "b"])
ok("missing_comma", "{\"a\": 1\n\"b\": 2}", {"a": 1, "b": 2})
ok("missing_comma", "{\"a\": \"x\" \"b\": \"y\"}", {"a": "x", "b": "y"})
ok("missing_comma", "[1 2 3]", [1, 2, 3])
ok("missing_comma", "{\"a\": [1] \"b\": {}}", {"a": [1], "b": {}})
ok("missing_comma", "{\"a\": true b: 2}", {"a": True, "b": 2})
ok("missing_comma", "[[1] [2]]", [[1], [2]])
no("missing_comma", "[1 apples]")
ok("missing_colon", "{\"a\" 1}", {"a": 1})
ok("missing_colon", "{\"a\" \"b\"}", {"a": "b"})
ok("missing_colon", "{\"a\" [1], \"b\" {\"c\" null}}", {"a": [1], "b": {"c": None}})
no("missing_colon", "{\"a\" , 1}")
ok("single_quotes", "{'a': 'say \"hi\"', 'b': 'it\\'s'}", {"a": "say \"hi\"", "b": "it's"})
ok("single_quotes", "['a', 'b']", ["a", "b"])
ok("single_quotes", "{'a': 'b'}", {"a": "b"})
ok("single_quotes", "{'a': 'it's'}", {"a": "it's"})
ok("single_quotes", "{'msg': 'don't panic', 'n': 1}", {"msg": "don't panic", "n": 1})
ok("typographic_quotes", "{\u201ca\u201d: \u201cb\u201d}", {"a": "b"})
ok("typographic_quotes", "{\"a\": \u201chello world\u201d}", {"a": "hello world"})
ok("typographic_quotes", "[\u2018x\u2019, \u2018y\u2019]", ["x", "y"])
ok("typographic_quotes", "{\u201ca\u201d: 1, \u201cb\u201d: [\u201cc\u201d]}", {"a": 1, "b": ["c"]})
ok("typographic_quotes", "{\"q\": \u201che said \"no\"\u201d}", {"q": "he said \"no\""})
ok("backticks", "{\"a\": `b`}", {"a": "b"})
ok("backticks", "{`a`: `multi\nline`}", {"a": "multi\nline"})
ok("backticks", "[`x`, \"y\"]", ["x", "y"])
ok("missing_closing_quote", "{\"a\": \"x, \"b\": 2}", {"a": "x", "b": 2})
ok("missing_closing_quote", "{\"name\": \"John}", {"name": "John"})
ok("missing_closing_quote", "[\"a, \"b\"]", ["a", "b"])
ok("missing_closing_quote", "{\"a\": \"hello\n\"b\": 1}", {"a": "hello", "b": 1})
ok("missing_closing_quote", "{\"a\": \"one\n}", {"a": "one"})
ok("missing_closing_quote", "{\"a\": 1, \"b\": \"two]}", {"a": 1, "b": "two]"})
ok("missing_closing_quote", "[\"x\", \"y]", ["x", "y"])
no("missing_closing_quote", "{\"k\": \"v ,\"l\": \"w\"}")
no("comment", "[\",\"]//gamma\\n\",77.0,49.25]")
ok("comment", "[1] // the \"a\" field", [1])
ok("missing_opening_quote", "{\"a\": x\"}", {"a": "x"})
ok("missing_opening_quote", "{a\": 1}", {"a": 1})
ok("missing_opening_quote", "{\"a\": hello world\", \"b\": 2}", {"a": "hello world", "b": 2})
ok("unescaped_quote", "{\"t\": \"say \"hi\" now\"}", {"t": "say \"hi\" now"})
# A quote read inside before ',' (or ':' ']' '}' '[' '{', a literal, a
# number) is a string's end unless the schema anchors the string: refused
# with no schema (the envelope takes it: schema_anchor below).
no("unescaped_quote", "{\"thought\": \"He said \"go\", then left\", \"n\": 1}")
ok("unescaped_quote", "[\"a \"quoted\" word\"]", ["a \"quoted\" word"])
ok("unescaped_quote", "{\"a\": \"5\" screen\"}", {"a": "5\" screen"})
ok("unescaped_quote", "{\"title\": \"The \"Best\" One\", \"year\": 2020}", {"title": "The \"Best\" One", "year": 2020})
no("unescaped_quote", "{\"q\": \"\"quoted\"\"}")
ok("missing_opening_quote", "[\"value1\" value2\", \"value3\"]", ["value1", "value2", "value3"])
ok("unescaped_quote", "[\"a 24\" screen\", \"b\"]", ["a 24\" screen", "b"])
ok("unquoted_key", "{a: 1, $b_2: {c: []}}", {"a": 1, "$b_2": {"c": []}})
ok("unquoted_key", "{name: \"x\", age: 3}", {"name": "x", "age": 3})
ok("unquoted_key", "{_id: null}", {"_id": None})
no("unquoted_key", "{a b: 1}")
no("unquoted_key", "{1a: 1}")
ok("unquoted_string", "{\"a\": hello world}", {"a": "hello world"})
ok("unquoted_string", "{\"a\": Truth}", {"a": "Truth"})
ok("unquoted_string", "{\"status\": pending, \"n\": 2}", {"status": "pending", "n": 2})
ok("unquoted_string", "{\"url\": http://example.com/x}", {"url": "http://example.com/x"})
ok("unquoted_string", "[red, green, blue]", ["red", "green", "blue"])
ok("unquoted_string", "{\"a\": caf\u00e9 au lait}", {"a": "caf\u00e9 au lait"})
ok("unquoted_string", "{\"a\": some text   }", {"a": "some text"})
no("unquoted_string", "{\"a\": tru}")
no("unquoted_string", "{\"a\": nul}")
no("unquoted_string", "{\"a\": fals, \"b\": 1}")
no("unquoted_string", "{\"a\": b: c}")
no("unquoted_string", "{\"a\": x {y}}")
ok("bare_text", "hello world", "hello world")
ok("python_literal", "{\"a\": True, \"b\": False, \"c\": None}", {"a": True, "b": False, "c": None})
ok("python_literal", "[True, None]", [True, None])
ok("python_literal", "{'a': {'b': [1, 2, None]}, 'c': False}", {"a": {"b": [1, 2, None]}, "c": False})
ok("python_literal", "{'x': 'a\\x41b', 'y': 'it\\'s'}", {"x": "aAb", "y": "it's"})
ok("python_literal", "[{'k': \"it's\"}, {'k': 'no'}]", [{"k": "it's"}, {"k": "no"}])
ok("literal_case", "{\"a\": TRUE, \"b\": FALSE, \"c\": NULL}", {"a": True, "b": False, "c": None})
ok("literal_case", "[Null, tRUE]", [None, True])
ok("literal_case", "{\"a\": none}", {"a": None})
ok("not_json_value", "{\"a\": NaN}", {"a": None})
ok("not_json_value", "[Infinity, -Infinity]", [None, None])
ok("not_json_value", "{\"a\": undefined, \"b\": 1}", {"a": None, "b": 1})
ok("invalid_escape", "{\"a\": \"\\x41\"}", {"a": "A"})
ok("invalid_escape", "{\"a\": \"it\\'s\"}", {"a": "it's"})
ok("invalid_escape", "[\"\\x41\\x42\\u0043\"]", ["ABC"])
no("invalid_escape", "{\"a\": \"\\q\"}")
no("invalid_escape", "{\"a\": \"\\u12\"}")
no("invalid_escape", "{\"a\": \"\\x4\"}")
ok("number_form", "[.5]", [0.5])
ok("number_form", "[+1]", [1])
ok("number_form", "[1.]", [1.0])
ok("number_form", "{\"a\": -.25}", {"a": -0.25})
ok("number_form", "{\"a\": +3.5e2}", {"a": 350.0})
ok("ellipsis", "[1, 2, 3, ...]", [1, 2, 3])
ok("ellipsis", "{\"a\": 2, \"b\": 3, ...}", {"a": 2, "b": 3})
ok("ellipsis", "[..., 7, 8]", [7, 8])
ok("ellipsis", "[1, /* more */ ...]", [1])
ok("ellipsis", "[1, ... 2]", [1, 2])
ok("trailing_comma", "{\"a\": 2},", {"a": 2})
ok("trailing_comma", "[1, 2], ", [1, 2])
ok("jsonp", "callback_1(2);", 2)
ok("jsonp", "cb(\"x\")", "x")
ok("unquoted_key", "{2: \"b\", 10: [1]}", {"2": "b", "10": [1]})
no("unquoted_key", "{2a: 1}")
ok("typographic_quotes", "\u201cfoo\u201d", "foo")
ok("missing_closing_quote", "{\"key:\"value\"}", {"key": "value"})
ok("unquoted_string", "[01]", ["01"])
no("number_form", "[0x10]")
ok("unquoted_string", "[1.2.3]", ["1.2.3"])
ok("unquoted_string", "{\"date\": 2024-10-18T18:35:22Z}", {"date": "2024-10-18T18:35:22Z"})
ok("unquoted_string", "{\"id\": 57eeeeb1-450b-482c-81b9-4be77e95dee2, \"n\": 1}", {"id": "57eeeeb1-450b-482c-81b9-4be77e95dee2", "n": 1})
ok("unquoted_string", "[1/3, 2]", ["1/3", 2])
ok("number_form", "[1_000]", [1000])
no("number_form", "[12 apples]")
no("missing_colon", "{\"a\"\"b\"}")
ok("number_form", "[1e]", [1])
ok("control_character", "{\"a\": \"line 1\nline 2\tend\"}", {"a": "line 1\nline 2\tend"})
ok("control_character", "[\"a\u0001b\"]", ["a\u0001b"])
ok("control_character", "{\"poem\": \"roses\nare red\"}", {"poem": "roses\nare red"})
ok("unicode_space", "{\u00a0\"a\":\u00a01}", {"a": 1})
ok("unicode_space", "[1,\u20282]", [1, 2])
ok("unicode_space", "{\"a\":\u30001,\u2003\"b\": 2}", {"a": 1, "b": 2})
ok("unicode_space", "{\"a\": \"\u00a0keep\u00a0\",}", {"a": "\u00a0keep\u00a0"})
ok("mismatched_bracket", "{\"a\": [1}", {"a": [1]})
ok("mismatched_bracket", "[1, 2}", [1, 2])
ok("mismatched_bracket", "{\"a\": 1]", {"a": 1})
ok("mismatched_bracket", "[{\"a\": 1]", [{"a": 1}])
ok("mismatched_bracket", "{\"a\": [1, 2}, \"b\": 3}", {"a": [1, 2], "b": 3})
ok("surplus_bracket", "{\"a\": 1}}", {"a": 1})
ok("surplus_bracket", "[1, 2]]]", [1, 2])
ok("surplus_bracket", "{\"a\": {\"b\": 1}}}\n", {"a": {"b": 1}})
no("surplus_bracket", "{\"a\": 1}}, \"b\": 2}")
ok("string_concatenation", "{\"a\": \"x\" + \"y\"}", {"a": "xy"})
ok("string_concatenation", "[\"long \" +\n \"text\"]", ["long text"])
ok("string_concatenation", "{\"a\": \"1\" + \"2\" + \"3\"}", {"a": "123"})
no("string_concatenation", "{\"a\": \"x\" + 1}")
ok("concatenated_values", "{\"a\": 1}{\"a\": 1}", {"a": 1})
ok("concatenated_values", "{\"a\": 1}\n{\"a\": 1}\n", {"a": 1})
no("concatenated_values", "{\"a\": 1}{\"b\": 2}")
no("concatenated_values", "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}")
no("concatenated_values", "[1][2]")

# ---- Valid JSON: nothing to repair, the value as it is. ----
for v in [{"a": [1, 2.5e3, -0, True, False, None], "b": {}}, [], "just a string",
          42, {"k": "\u00e9\n\"q\""}, ENV, ENV_NULL,
          {"url": "http://example.com/*x*/", "c": "// no"},
          {"s": "it's True, None of 'this' , }"}, [[[[]]]]]:
    ok("valid", json.dumps(v), v)
ok("valid", "  [ ]  \n", [])

# ---- One slip in documents of our own. ----
DOCS = [
    {"name": "Ada", "age": 36, "langs": ["en", "fr"]},
    {"city": "Paris", "pop": 2100000, "capital": True},
    {"items": [{"id": 1, "ok": True}, {"id": 2, "ok": False}]},
    {"a": None, "b": "text with spaces", "c": -1.5},
    {"nested": {"deep": {"deeper": [1, 2, 3]}}, "flag": False},
    ENV, ENV_NULL,
    {"title": "Notes", "tags": ["x", "y"], "count": 0},
    {"q": "What is 2+2?", "a": "4"},
    {"list": [1, 2, 3, 4, 5], "empty": {}, "none": []},
]


def py_repr(v):
    if v is True:
        return "True"
    if v is False:
        return "False"
    if v is None:
        return "None"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(py_repr(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(repr(k) + ": " + py_repr(x) for k, x in v.items()) + "}"
    return json.dumps(v)


def unquoted_keys(v):
    if isinstance(v, list):
        return "[" + ", ".join(unquoted_keys(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(k + ": " + unquoted_keys(x) for k, x in v.items()) + "}"
    return json.dumps(v)


def pretty_trailing(v, ind=0):
    pad = "  " * (ind + 1)
    if isinstance(v, list) and v:
        return "[\n" + "".join(pad + pretty_trailing(x, ind + 1) + ",\n" for x in v) + "  " * ind + "]"
    if isinstance(v, dict) and v:
        return "{\n" + "".join(pad + json.dumps(k) + ": " + pretty_trailing(x, ind + 1) + ",\n" for k, x in v.items()) + "  " * ind + "}"
    return json.dumps(v)


def no_commas_lines(v):
    # Members on their own lines, the commas between them left out.
    if isinstance(v, dict) and v:
        return "{\n" + "\n".join("  " + json.dumps(k) + ": " + json.dumps(x) for k, x in v.items()) + "\n}"
    return None


for i, d in enumerate(DOCS):
    j = json.dumps(d)
    ok("slip:code_fence", "```json\n" + json.dumps(d, indent=2) + "\n```", d)
    ok("slip:prose", "Here is the JSON you asked for:\n" + j + "\nLet me know if you need more.", d)
    ok("slip:think_block", "<think>Let me write it.</think>\n" + j, d)
    ok("slip:trailing_comma", pretty_trailing(d), d)
    ok("slip:python_repr", py_repr(d), d)
    ok("slip:unquoted_key", unquoted_keys(d), d)
    ok("slip:comment", "// the answer\n" + j + " // end", d)
    ok("slip:bom", "\ufeff" + j, d)
    ok("slip:jsonp", "callback(" + j + ");", d)
    ok("slip:unicode_space", j.replace(", ", ",\u00a0"), d)
    m = no_commas_lines(d)
    if m is not None:
        ok("slip:missing_comma", m, d)
    ok("slip:surplus_bracket", j + "}", d)
    ok("slip:missing_colon", j.replace("\": ", "\" ", 1), d)
    ok("slip:extra_comma", j.replace(", ", ",, ", 1) if ", " in j else j, d)
    ok("slip:literal_case", j.replace("true", "TRUE").replace("null", "Null").replace("false", "False"), d)
    k = j.find("\", \"")
    if k > 0:
        ok("slip:missing_closing_quote", j[:k] + j[k + 1:], d)
    ok("slip:single_quotes", "{" + ", ".join("'%s': %s" % (a, json.dumps(b)) for a, b in d.items()) + "}", d)

# ---- Ambiguous: no single reading, refused. ----
no("ambiguous", "{\"a\": \"x\", \"b\": \"y\"}{\"a\": \"z\"}")
ok("missing_closing_quote", "[\"a, \"b\", \"c\"]", ["a", "b", "c"])
no("ambiguous", "{\"a\": 1} {\"a\": 2}")
no("ambiguous", "Option A: {\"x\": 1}\nOption B: {\"x\": 2}")
no("ambiguous", "```json\n[1]\n```\n```json\n[2]\n```")
no("ambiguous", "{\"a\": 1, \"b\": }")
no("ambiguous", "{\"a\": [1, 2, 3}, 4]}")
no("ambiguous", "{\"a\" \"b\" \"c\"}")
no("ambiguous", "{\"a\": 5 apples}")
no("ambiguous", "{{\"a\": 1}}")
no("ambiguous", "[1, 2")
no("ambiguous", "{\"a\": \"cut")
no("ambiguous", "{\"saop\": \"1.0\", \"action\": {\"tool\": \"x\", \"parameters\": {}}, \"thought\": \"abc")
no("ambiguous", "{\"a\":")
no("ambiguous", "{\"a\": 0x1F}")
ok("unquoted_string", "{\"a\": 012}", {"a": "012"})
no("ambiguous", "{\"a\": \"\\z\"}")
no("ambiguous", "<think>only thinking</think>")
no("ambiguous", "<think>{\"a\": 1}")
no("ambiguous", "The answer is 42.")
no("ambiguous", "{\"a\": 1 \"b\" 2 3}")
ok("surplus_bracket", "[{\"a\": 1}, {\"b\": 2}]]]}", [{"a": 1}, {"b": 2}])
ok("mismatched_bracket", "{\"a\": [}", {"a": []})
no("ambiguous", "{\"a\": {\"b\": [1, {\"c\": }]}}")
ok("mismatched_bracket", "{]", {})
ok("mismatched_bracket", "[}", [])
ok("mismatched_bracket", "{\"a\": 1, \"b\": [}", {"a": 1, "b": []})
no("ambiguous", "{\"a\": \"x\" + }")
no("ambiguous", "f(1, 2)")
ok("surplus_bracket", "{\"a\": 1}, \"b\": 2}", {"a": 1, "b": 2})
ok("surplus_bracket", "{\"key1\": \"v\"}, \"key2\": \"w\", \"key3\": [1]}", {"key1": "v", "key2": "w", "key3": [1]})
ok("surplus_bracket", "{\"a\": {\"b\": 1}}, c: 2}", {"a": {"b": 1}, "c": 2})
no("surplus_bracket", "{\"a\": {\"b\": 1}, \"c\": 2}}, \"d\": 3}")
no("surplus_bracket", "[{\"a\": 1}, \"b\": 2}]")
no("surplus_bracket", "{\"a\": 1}, \"b\": 2")
no("surplus_bracket", "{\"a\": 1}, \"b\" 2}")
no("ambiguous", "'just a string' and more")
no("ambiguous", "{\"saop\": \"1.0\", \"turn_index\": 0,: \"thought\": \"x\"}")

# ---- Guided by the schema. ----
ARR = {"type": "array", "items": {"type": "object", "required": ["id"]}}
OBJ = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
ok("schema_choice", "{\"id\": 1}\n{\"id\": 2}", [{"id": 1}, {"id": 2}], schema=ARR)
ok("schema_choice", "{\"id\": 1}{\"note\": \"x\"}", {"id": 1}, schema=OBJ)
ok("schema_choice", "{\"note\": \"x\"}\n{\"id\": 7}", {"id": 7}, schema=OBJ)
no("schema_choice", "{\"id\": 1}{\"id\": 2}", schema=OBJ)
no("schema_choice", "{\"a\": 1}{\"b\": 2}", schema={"type": "object"})
ok("schema_choice", json.dumps(ENV) + json.dumps({"note": 1}), ENV, schema="envelope")
ok("schema_choice", json.dumps({"note": 1}) + "\n" + json.dumps(ENV_NULL), ENV_NULL, schema="envelope")
no("schema_choice", json.dumps(ENV) + json.dumps(ENV_NULL), schema="envelope")
ok("schema_choice", "[1, 2]\n[3]", [[1, 2], [3]], schema={"type": "array", "items": {"type": "array"}})
ok("schema_choice", "[1, 2]\n[3]", [3], schema={"type": "array", "maxItems": 1, "items": {"type": "integer"}})
ok("schema_choice", "{\"a\": 1}\n{\"b\": \"x\"}", {"b": "x"}, schema={"type": "object", "required": ["b"]})
ok("schema_choice", "{\"a\": \"1\"}{\"a\": 1}", {"a": 1}, schema={"type": "object", "properties": {"a": {"type": "integer"}}})
ok("schema_choice", "<think>draft {\"id\": \"x\"}</think>{\"id\": 3}{\"id\": \"y\"}", {"id": 3}, schema=OBJ)
ENV_Q = dict(ENV_NULL, thought="He said \"go\", then left")
ok("schema_anchor", "{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"reviewer\", \"thought\": \"He said \"go\", then left\", \"action\": null}", ENV_Q, schema="envelope")
ENV_Q2 = dict(ENV_NULL, thought="I read \"a\", \"b\": and more")
no("schema_anchor", "{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"reviewer\", \"thought\": \"I read \"a\", \"b\": and more\", \"action\": null}", schema="envelope")
ok("schema_anchor", "{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"reviewer\", \"thought\": \"say \"hi\" now\", \"action\": null,}", dict(ENV_NULL, thought="say \"hi\" now"), schema="envelope")
ok("schema_anchor", "```json\n{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"reviewer\", \"thought\": \"the \"x\" flag\", \"action\": null}\n```", dict(ENV_NULL, thought="the \"x\" flag"), schema="envelope")

# ---- Python tuples, MongoDB shell wrappers, leading zeros, stringified
# JSON, one bare word a line. ----
ok("python_tuple", "{\"t\": (1, 2)}", {"t": [1, 2]})
ok("python_tuple", "(\"a\", \"b\", \"c\")", ["a", "b", "c"])
ok("python_tuple", "((1, 2), (3, 4))", [[1, 2], [3, 4]])
ok("python_tuple", "{\"empty\": ()}", {"empty": []})
ok("python_tuple", "{'p': (1,)}", {"p": [1]})
ok("python_tuple", "{'p': ('x', None, True)}", {"p": ["x", None, True]})
ok("python_tuple", "{\"group\": (1)}", {"group": 1})
ok("python_tuple", "(\"x\")", "x")
ok("python_tuple", "[(1, 2), (3, 4),]", [[1, 2], [3, 4]])
ok("python_tuple", "{'pairs': [('a', 1), ('b', 2)]}", {"pairs": [["a", 1], ["b", 2]]})
no("python_tuple", "{\"t\": (1, 2]}")
no("python_tuple", "{\"t\": [1, 2)}")
no("python_tuple", "{\"t\": (1, 2}")
no("python_tuple", "{\"t\": (1", close=True)
ok("python_tuple", "{\"t\": (1, 2", {"t": [1, 2]}, close=True)
ok("shell_wrapper", "{\"_id\": ObjectId(\"5f1d7a\")}", {"_id": "5f1d7a"})
ok("shell_wrapper", "{\"n\": NumberLong(12), \"at\": ISODate(\"2024-01-02T03:04:05Z\")}", {"n": 12, "at": "2024-01-02T03:04:05Z"})
ok("shell_wrapper", "[NumberInt(3), NumberDecimal(\"1.50\"), UUID(\"0e4f\")]", [3, "1.50", "0e4f"])
ok("shell_wrapper", "{\"n\": NumberLong( \"9007199254740993\" )}", {"n": "9007199254740993"})
ok("shell_wrapper", "{\"_id\": ObjectId('ab12')}", {"_id": "ab12"})
no("shell_wrapper", "{\"_id\": ObjectId()}")
no("shell_wrapper", "{\"_id\": ObjectId(\"a\", \"b\")}")
no("shell_wrapper", "{\"_id\": ObjectId(\"a\" \"b\")}")
no("shell_wrapper", "{\"_id\": ObjectId(\"a\"}")
no("shell_wrapper", "{\"_id\": Timestamp(1, 2)}")
ok("unquoted_string", "{\"d\": new Date(0)}", {"d": "new Date(0)"})
ok("unquoted_string", "{\"zip\": 01234}", {"zip": "01234"})
ok("unquoted_string", "[0789, 000789, 001.2]", ["0789", "000789", "001.2"])
ok("unquoted_string", "{value: -007}", {"value": "-007"})
ok("unquoted_string", "[0, 0.5, 10]", [0, 0.5, 10])
ok("bare_text", "0789", "0789")
no("unquoted_string", "[0x1F]")
ok("stringified_json", "{\\\"a\\\": 1, \\\"b\\\": \\\"x\\\"}", {"a": 1, "b": "x"})
ok("stringified_json", "\\\"hello \\\\\\\"world\\\\\\\"\\\"", "hello \"world\"")
ok("stringified_json", "[\\\"a\\\", \\\"b\\\"]", ["a", "b"])
ok("stringified_json", "{\\\"a\\\":\\n  [1, 2],\\n \\\"b\\\": \\\"caf\\u00e9\\\"}", {"a": [1, 2], "b": "caf\u00e9"})
ok("stringified_json", "{\\\"path\\\": \\\"C:\\\\\\\\tmp\\\"}", {"path": "C:\\tmp"})
no("stringified_json", "{\\\"a\\\": \\\"\\u0022\\\"}")
no("stringified_json", "{\\\"a\\\": \\\"x\\q\\\"}")
no("stringified_json", "\\\"cut\\")
ok("missing_comma", "{\"array\": [\na\nb\n]}", {"array": ["a", "b"]})
ok("missing_comma", "[red, green\nblue]", ["red", "green", "blue"])
ok("missing_comma", "[\n  \"a\"\n  b\n]", ["a", "b"])
ok("unquoted_string", "[red green]", ["red green"])
ok("number_form", "{\"value\": 82_461_110}", {"value": 82461110})
ok("number_form", "[1_000.5, 2_0e1_0]", [1000.5, 20e10])
no("number_form", "[1__0]")
no("number_form", "[1_]")
no("number_form", "[0_1]")
ok("closed", "{\n  \"firstName\": \"John\"\n  lastName: Smith", {"firstName": "John", "lastName": "Smith"}, close=True)
ok("closed", "[truee", ["truee"], close=True)
ok("closed", "{\"a\": some words  ", {"a": "some words"}, close=True)
no("closed", "{\"a\": some words")
no("closed", "{\"a\": tr", close=False)
# The schema anchors strings during the search: a string ends only where a
# key the schema knows (or the closing brace) follows.
ENV_PRE = "{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"reviewer\", \"thought\": \""
for t in ["the \"x\", \"y\" flags", "say \"hi\", then \"bye\"", "he said \"}\" there", "x\", \"y", "a \"quoted\" word, and \"another\""]:
    # Without the schema: a lone quote counts twice and a quote after a
    # comma that starts no key is inside, so these have one reading too.
    # Without the schema: a quote read inside before a ',' is a string's
    # end, unless the schema anchors the string, so only the one whose
    # quotes stand between words has one reading.
    plain = no if t != "a \"quoted\" word, and \"another\"" else (lambda kind, text: ok(kind, text, dict(ENV_NULL, thought=t)))
    ok("schema_anchor", ENV_PRE + t + "\", \"action\": null}", dict(ENV_NULL, thought=t), schema="envelope")
    ok("schema_anchor", ENV_PRE + t + "\", \"action\": {\"tool\": \"sh\", \"parameters\": {\"cmd\": \"ls\"}}}", dict(ENV_NULL, thought=t, action={"tool": "sh", "parameters": {"cmd": "ls"}}), schema="envelope")
    plain("schema_anchor", ENV_PRE + t + "\", \"action\": null}")
no("schema_anchor", ENV_PRE + "use \"a\": yes\", \"action\": null}", schema="envelope")
no("schema_anchor", ENV_PRE + "a \"b\" c, \"extra\": \"d\", \"action\": null}", schema="envelope")
ok("schema_anchor", ENV_PRE + "x, y, \"action\": null}", dict(ENV_NULL, thought="x, y"), schema="envelope")
ok("schema_anchor", ENV_PRE + "x, y, \"action\": null}", dict(ENV_NULL, thought="x, y"))
no("schema_anchor", ENV_PRE + "x, y: z, \"action\": null}")
# A comma in a string that no member or item could follow was not its end.
ok("missing_closing_quote", "{\"a\": \"b,c,\"d\": \"e\"}", {"a": "b,c", "d": "e"})
ok("missing_closing_quote", "{\"a\": \"Hello, world, \"b\": 1}", {"a": "Hello, world", "b": 1})
no("missing_closing_quote", "[\"one, two, \"three\"]")
no("missing_closing_quote", "{\"a\": \"x, y: 2, \"b\": 1}")
ok("missing_closing_quote", "[\"a, \"b\", c]", ["a", "b", "c"])
no("missing_closing_quote", "[\"a, 2, \"b\"]")
# The examples of saop-validate(1), REPAIRS.
ok("python_tuple", "{\"p\": (1, 2), \"q\": (3,), \"r\": (4)}", {"p": [1, 2], "q": [3], "r": 4})
ok("shell_wrapper", "{\"_id\": ObjectId(\"5f1d\")}", {"_id": "5f1d"})
ok("stringified_json", "{\\\"a\\\": \\\"b\\\"}", {"a": "b"})
ok("missing_comma", "[red\n green]", ["red", "green"])
ok("unquoted_string", "{\"zip\": 01234}", {"zip": "01234"})
ok("number_form", "[1_000]", [1000])
ok("schema_anchor", ENV_PRE + "the \"x\", \"y\" flags\", \"action\": null}", dict(ENV_NULL, thought="the \"x\", \"y\" flags"), schema="envelope")
# NDJSON of scalars: one value a line, as concatenated_values (the schema picks).
ok("concatenated_values", "1\n2\n3", [1, 2, 3], schema={"type": "array"})
ok("concatenated_values", "\"a\"\n{\"b\": 1}", {"b": 1}, schema={"type": "object"})
ok("concatenated_values", "3\n\"x\"\nnull", "x", schema={"type": "string"})
ok("concatenated_values", "true\ntrue", True)
ok("concatenated_values", "1\n2\n3", [1, 2, 3])
no("concatenated_values", "1 2", schema={"type": "array"})
no("concatenated_values", "\"a\"\n\"b\"", schema={"type": "string"})
# A bare value ends before the next member when its comma is missing.
ok("unquoted_string", "{\"key\":value \"key2\":\"value2\" }", {"key": "value", "key2": "value2"})
ok("unquoted_string", "{\"a\": some words \"b\": 1}", {"a": "some words", "b": 1})
ok("unquoted_string", "{\"a\": x \"b\" : [1]}", {"a": "x", "b": [1]})
no("unquoted_string", "{\"a\": x \"b\"}")
no("unquoted_string", "[a \"b\": 1]")
no("unquoted_string", "{\"k\"e\"y\": \"value\"}")
no("unquoted_string", "{\"a\": 1, b c \"d\": 2}")

# ---- top: the top level of a document (concatenated values, bare text,
# indented fences). ----
# Several values with no schema: an array of all of them, as jq -s reads them.
ok("concatenated_values", "1,2,3", [1, 2, 3])
ok("concatenated_values", "1, 2, 3,", [1, 2, 3])
ok("concatenated_values", "\"a\", \"b\"", ["a", "b"])
ok("concatenated_values", "'x',\n'y'", ["x", "y"])
ok("concatenated_values", "1\n\"two\"\nnull", [1, "two", None])
ok("concatenated_values", "{\"a\": 1}[1, 2]", [{"a": 1}, [1, 2]])
ok("concatenated_values", "[1, 2]\n{\"a\": 1}", [[1, 2], {"a": 1}])
ok("concatenated_values", "{\"a\": 1},\n{\"a\": 2},\n{\"a\": 3}", [{"a": 1}, {"a": 2}, {"a": 3}])
ok("concatenated_values", "[1], [2]", [[1], [2]])
ok("concatenated_values", "{\"a\": 1}\n2\n{\"b\": 3}", [{"a": 1}, 2, {"b": 3}])
ok("concatenated_values", "{'a': True}, {'a': None}", [{"a": True}, {"a": None}])
ok("concatenated_values", "[1][1]", [1])
# Empty objects and arrays among them carry nothing: dropped.
ok("empty_value", "[]{\"a\": 1}", {"a": 1})
ok("empty_value", "{\"a\": 1}, {}", {"a": 1})
ok("empty_value", "{\"a\": 1}\n[]\n[2]", [{"a": 1}, [2]])
ok("empty_value", "[ ], 5, { }", 5)
# Two objects or two arrays with no comma between: a list, or a second
# answer that replaces the first?  Not guessed.
no("concatenated_values", "[{\"a\": 1}][{\"a\": 2}]")
no("concatenated_values", "{\"a\": 1}\n{\"a\": 2}")
no("concatenated_values", "{\"a\": 1}[]{\"a\": 2}")
no("concatenated_values", "[]{}")
no("concatenated_values", "[] , {}")
# Items of a container that closed too soon, a call with two arguments.
no("concatenated_values", "1, 2]")
no("concatenated_values", "{\"a\": [1, 2}, 3]}")
no("concatenated_values", "{\"a\": 1}, 2}")
no("jsonp", "f(1, 2)")
no("concatenated_values", "1 2 3")
# With a schema, each value and the array of all go to it: the one that fits.
ok("concatenated_values", "{\"a\": 1}{\"b\": 2}", {"b": 2}, schema={"type": "object", "required": ["b"]})
ok("concatenated_values", "[1]\n[2, 3]", [[1], [2, 3]], schema={"type": "array", "items": {"type": "array"}})
ok("concatenated_values", "1, 2, 3", [1, 2, 3], schema={"type": "array"})
ok("concatenated_values", "\"x\", 7", 7, schema={"type": "integer"})
no("concatenated_values", "1, 2, 3", schema={"type": "integer"})
ok("concatenated_values", "{\"a\": 1}, []", {"a": 1}, schema={"type": "object"})
ok("concatenated_values", "[\"x\"]\n" + json.dumps(ENV_NULL), ENV_NULL, schema="envelope")
# One line of bare text with nothing JSON-like in it: one string, every byte.
ok("bare_text", "abc", "abc")
ok("bare_text", "  She said: no way \n", "She said: no way")
ok("bare_text", "https://example.com/a?b=c", "https://example.com/a?b=c")
ok("bare_text", "ES2020", "ES2020")
ok("bare_text", "0.0.1", "0.0.1")
ok("bare_text", "000789", "000789")
ok("bare_text", "-05", "-05")
ok("bare_text", "2e3.4", "2e3.4")
ok("bare_text", "00.", "00.")
ok("bare_text", "nullifiable", "nullifiable")
ok("bare_text", "Trueble", "Trueble")
ok("bare_text", "false_value", "false_value")
ok("bare_text", "e", "e")
ok("bare_text", "caf\u00e9 cr\u00e8me", "caf\u00e9 cr\u00e8me")
ok("bare_text", "tab\there", "tab\there")
ok("bare_text", "C:\\temp\\x", "C:\\temp\\x")
ok("bare_text", "<think>x</think>\nDone", "Done")
ok("bare_text", "hello world", "hello world", close=True)
# A value in prose, several values, a cut value, a comma, a newline,
# something JSON-like: no.
no("bare_text", "The answer is 42.")
no("bare_text", "foo 2 bar")
no("bare_text", "It is true")
no("bare_text", "-1 apples")
no("bare_text", "true false")
no("bare_text", "tru")
no("bare_text", "Nul")
no("bare_text", "1e")
ok("closed", "1e", 1, close=True)
no("bare_text", "a,b")
no("bare_text", "Yes, I agree")
no("bare_text", "a\nb")
no("bare_text", "line one\nline two")
no("bare_text", "-")
no("bare_text", "...")
no("bare_text", "/[a-z]_/")
no("bare_text", "call(x)")
no("bare_text", "# Title")
no("bare_text", "// note")
no("bare_text", "```json")
no("bare_text", "\u201cquoted")
no("bare_text", "it's")
# With a schema, bare text is a string only when a string fits it:
# saop-validate's envelope never takes one (a syntax error, as before).
ok("bare_text", "hello", "hello", schema={"type": "string"})
ok("bare_text", "0789", "0789", schema={"type": "string", "pattern": "^[0-9]+$"})
no("bare_text", "hello", schema={"type": "object"})
no("bare_text", "I am not sure what to do.", schema="envelope")
no("bare_text", "abc", schema={"type": "string", "maxLength": 2})
# Fences in a text indented as a whole (quoted in code, pasted from a log).
ok("code_fence", "\n    Here it is:\n\n    ```json\n    (1, 2)\n    ```\n    ", [1, 2])
ok("code_fence", "        ```json\n        {\"a\": 1}\n        ```", {"a": 1})
ok("code_fence", "  Result:\n  ```\n  [1,\n   2]\n  ```\n", [1, 2])
no("code_fence", "Text:\n        ```json\n        {\"a\": 1\n        ```")
# Several fenced blocks that read: with white space only between them,
# several values; with prose between (or?), the schema picks, else no.
ok("concatenated_values", "```json\n{\"a\": 1}\n```\n\n```json\n[1]\n```", [{"a": 1}, [1]])
ok("concatenated_values", "```json\n[1]\n```\n```json\n[1]\n```", [1])
no("concatenated_values", "```json\n{\"a\": 1}\n```\n```json\n{\"b\": 1}\n```")
no("concatenated_values", "```json\n{\"a\": 1}\n```\nor\n```json\n[1]\n```")
no("concatenated_values", "```json\n{\"a\": 1}\n```\n```sh\nls\n```\n```json\n[1]\n```")
ok("concatenated_values", "Example:\n```json\n{\"a\": 1}\n```\nAnswer:\n```json\n{\"b\": 1}\n```", {"b": 1}, schema={"type": "object", "required": ["b"]})
ok("concatenated_values", "For example:\n```json\n{\"saop\": \"1.0\"}\n```\nMy turn:\n```json\n" + json.dumps(ENV_NULL) + "\n```", ENV_NULL, schema="envelope")
no("concatenated_values", "```json\n{\"a\": 1}\n```\nor\n```json\n[1]\n```", schema={"type": "array"})
no("concatenated_values", "```json\n{\"a\": 1}\n```\nor\n```json\n{\"a\": 2}\n```", schema={"type": "object"})

# ---- quo: strings and quotes without a schema. ----
# A doubled opening quote; "" before a ',' ':' '}' ']' or a quote stays
# an empty string, and ""x"" (a quoted word or doubled quotes?) is refused.
ok("doubled_quote", "{\"key\": \"\"value\"}", {"key": "value"})
ok("doubled_quote", "{\"\" key\": \"val\"}", {" key": "val"})
ok("doubled_quote", "['a', ''b']", ["a", "b"])
ok("doubled_quote", "{\"a\": \"\"x y\", \"b\": 1}", {"a": "x y", "b": 1})
ok("doubled_quote", "{\"\" key\":\"val\"", {" key": "val"}, close=True)
ok("trailing_comma", "{\"a\": \"\", \"b\": 1,}", {"a": "", "b": 1})
no("doubled_quote", "{\"a\": \"\"b\"\"}")
no("doubled_quote", "[\"\"x\"\", 1]")
# A key's closing quote missing before its ':'.
ok("missing_closing_quote", "{\"key:value}", {"key": "value"})
ok("missing_closing_quote", "{\"a:\"b\", \"c\": 1}", {"a": "b", "c": 1})
ok("missing_closing_quote", "{\"a:1, \"b\": 2}", {"a": 1, "b": 2})
ok("trailing_comma", "{\"a:b\": 1,}", {"a:b": 1})
no("missing_closing_quote", "{\"a :\"b\"}")
# Spaces before a '}' or ']' are the layout's, not the string's.
ok("missing_closing_quote", "[\"abc  ]", ["abc"])
ok("missing_closing_quote", "{\"a\": \"fox. }", {"a": "fox."})
ok("missing_closing_quote", "{\"a\": \"x  \", \"b\": \"y }", {"a": "x  ", "b": "y"})
no("missing_closing_quote", "[\"x\", \"y \n]")
no("missing_closing_quote", "[\"abc\t]")
no("missing_closing_quote", "{\"a\": \"x , \"b\": 1}")
# After a ',' in an object, a quote that starts no key is inside.
ok("unescaped_quote", "{\"c\": \"lorem, \"ipsum\" sic\"}", {"c": "lorem, \"ipsum\" sic"})
ok("unescaped_quote", "{\"comment\": \"a, \"b\" c \"d\". E\", \"n\": 1}", {"comment": "a, \"b\" c \"d\". E", "n": 1})
no("unescaped_quote", "[\"x, \"y\" z\"]")
# A lone quote counts twice; it is taken only in a string that is the
# whole answer (no other reading ends it elsewhere), and there, before a
# bracket, only where the schema asks for a string.
ok("missing_closing_quote", "[\"hello,\"world\"]", ["hello", "world"])
ok("unescaped_quote", "\"a (b) ((c\") d)\"", "a (b) ((c\") d)")
no("unescaped_quote", "\"the list [1, 2\"] more\"")
no("unescaped_quote", "\"the set {a, b\"} more\" \n")
ok("unescaped_quote", "\"the list [1, 2\"] more\"", "the list [1, 2\"] more", schema={"type": "string"})
no("unescaped_quote", "\"the list [1, 2\"] more\"", schema={})
no("unescaped_quote", "{\"key\": \"v\"alue\"}")
no("unescaped_quote", "{\"key\": \"v\"alue\", \"key2\": \"value2\"}")
no("unescaped_quote", "{\"t\": \"he said \"no\", \"b\": 1}")
no("unescaped_quote", "\"hello +\n \" world\"")
no("unescaped_quote", "\"a\" \"b\"")
no("unescaped_quote", "[\"a\"b\", \"c\"]")
# A word and its closing quote after a string in an array: the next item,
# its comma and opening quote missing.
ok("missing_opening_quote", "[\"a\", \"b\" c\"]", ["a", "b", "c"])
ok("missing_opening_quote", "{\"x\": [\"Lorem\", \"sed\" tempor\" ], \"y\": 1}", {"x": ["Lorem", "sed", "tempor"], "y": 1})
no("missing_opening_quote", "[\"consectetur\" comment]")
# In an object, a value whose opening quote is missing runs over ',' to
# its closing quote (a ',' there would have to start a member).
ok("missing_opening_quote", "{\"lorem\": ipsum, sic, datum.\",}", {"lorem": "ipsum, sic, datum."})
ok("missing_opening_quote", "{\"a\": x, y\", \"b\": 1}", {"a": "x, y", "b": 1})
ok("missing_opening_quote", "{\"a\": x, \"b\": y\"}", {"a": "x", "b": "y"})
ok("missing_opening_quote", "{\"a\": x, y: z\"}", {"a": "x", "y": "z"})
no("missing_opening_quote", "{\"a\": x, y: 1, z\"}")
# Quotes read inside, then the closing quote missing: only before the
# brackets that end the text (nothing else can end the string there).
# (Trailing off in an ellipsis, the text may go on: where it ends is in
# doubt, unless the schema anchors it.)
no("missing_closing_quote", "{\"key\": \"lorem ipsum ... \"sic \" tamet. ...}")
ok("missing_closing_quote", "{\"key\": \"lorem ipsum ... \"sic \" tamet. ...}", {"key": "lorem ipsum ... \"sic \" tamet. ..."}, schema={"type": "object", "properties": {"key": {"type": "string"}}})
ok("missing_closing_quote", "[{\"a\": \"say \"hi\" there}]", [{"a": "say \"hi\" there"}])
ok("missing_closing_quote", "{\"a\": {\"b\": \"x \"y\" z}  }  ", {"a": {"b": "x \"y\" z"}})
no("missing_closing_quote", "{\"a\": \"x \"y\" z, \"b\": 1}")
no("missing_closing_quote", "{\"a\": \"b\", \"c\": \"d \"e\"}")
no("missing_closing_quote", "{\"a\": \"x \"y z}")
# A block comment after the ',' where a string's closing quote is missing.
ok("missing_closing_quote", "[\"abc,/*x*/\"def\"]", ["abc", "def"])
ok("missing_closing_quote", "{\"a\": \"b,/* c */\"d\": 1}", {"a": "b", "d": 1})
no("missing_closing_quote", "[\"a,/* x */ /* y */ 2]")
no("missing_closing_quote", "[\"abc,/*x \"def\"]")
# A fence's closing ``` right after the bracket: the end of the text.
ok("missing_closing_quote", "{\"key\": \"value}```", {"key": "value"})
ok("missing_closing_quote", "{\"a\": \"b}```\n", {"a": "b"})
no("missing_closing_quote", "{\"key\": \"value}``` more")
# The examples of saop-validate(1) for these rules.
ok("missing_closing_quote", "{\"a\": \"x \"y\" z}", {"a": "x \"y\" z"})
ok("missing_closing_quote", "[\"a,/*x*/\"b\"]", ["a", "b"])
ok("missing_closing_quote", "{\"a\": \"b}```", {"a": "b"})
ok("doubled_quote", "{\"a\": \"\"b\"}", {"a": "b"})
ok("missing_closing_quote", "{\"a:\"b\"}", {"a": "b"})
ok("missing_closing_quote", "[\"abc  ]", ["abc"])
ok("missing_opening_quote", "{\"a\": x, y\"}", {"a": "x, y"})
ok("missing_opening_quote", "[\"a\" b\", \"c\"]", ["a", "b", "c"])
ok("unescaped_quote", "{\"c\": \"x, \"y\" z\"}", {"c": "x, \"y\" z"})
ok("missing_closing_quote", "[\"a, \"b\"]", ["a", "b"])
no("unescaped_quote", "\"a [1\"] b\"")
ok("unescaped_quote", "\"a [1\"] b\"", "a [1\"] b", schema={"type": "string"})
ok("unescaped_quote", "\"a (b\") c\"", "a (b\") c")

# ---- Strings that swallow structure (issue 31): a quote read inside
# next to structure, or a string's end in doubt, stands only where the
# schema anchors the string (names its key and asks a string for it); {}
# asks for nothing.  Real answers and their kin (spacing, the character
# after the quote, nesting). ----
SWALLOW = [
    "{ \"key\": [\"arrayvalue\"], [\"arrayvalue1\"], [\"arrayvalue2\"], \"key3\": \"value3\" }",
    "{\"key\": [\"a\"],[\"b\"], \"k\": 1}",
    "{\"key\": {\"in\": [\"a\"], [\"b\"]}, \"k\": 1}",
    "[[\"r1a\", \"r1b\", \"r1c\"], [\"r2a\", \"r2b\", \"r2c\"], \"r3a\", \"r3b\", \"r3c\"], [\"r4a\", \"r4b\", \"r4c\"]]",
    "[[\"a\", \"b\"],\n [\"c\", \"d\"],\n \"e\", \"f\"],\n [\"g\"]]",
    "{\"value_1\": true, SHOULD_NOT_EXIST \"value_2\": \"data\" AAAA }",
    "{\"b\": \"xxxxx\" true}",
    "{\"b\": \"xxxxx\"  null}",
    "{\"b\": \"xxxxx\" 12}",
    "{\"b\": \"xxxxx\" -3, \"c\": 1}",
    "{\"b\": \"xxxxx\" false }",
    "{\n\"a\": \"\n```{}```\n\"\n\",\n'b': \"x\",\n}",
    "{\"a\": \"hello\n\"\n\",}",
    "{\"a\": \"hello \" \",}",
    "[\"abc+/*comment*/\"def\"]",
    "{\"key\": \"value} \"tail}",
    "{\"key\": \"value] \"tail}",
    "{\"name\": \" role\" { \"\", \"age\": 30}",
    "{\"name\": \"x\" [ \"\", \"age\": 30}",
    "{\"name\": \"x\" : \"y\"}",
    "{\n\"response\": \"Hello Looks like .. , but not ...}\n",
    "{\"a\": \"and so on\u2026}",
]
for t in SWALLOW:
    no("swallowed_structure", t)
    no("swallowed_structure", t, schema={})
no("swallowed_structure", "I could not find any data for that query.", schema={})
no("swallowed_structure", "I could not find any data for that query.", schema={"type": ["string", "object"]})
ok("swallowed_structure", "I could not find any data for that query.", "I could not find any data for that query.", schema={"type": "string"})
# The schema anchors the string: it names the key and asks a string for it.
STR_B = {"type": "object", "properties": {"b": {"type": "string"}, "c": {"type": "integer"}}}
ok("swallowed_structure", "{\"b\": \"he said \"go\", then left\", \"c\": 1}", {"b": "he said \"go\", then left", "c": 1}, schema=STR_B)
no("swallowed_structure", "{\"b\": \"he said \"go\", then left\", \"c\": 1}", schema={"type": "object", "properties": {"b": {}, "c": {"type": "integer"}}})
no("swallowed_structure", "{\"b\": [\"he said \"go\", then left\"], \"c\": 1}", schema={"type": "object", "properties": {"b": {"type": "array"}, "c": {"type": "integer"}}})
# Quotes between words are prose: taken with no schema.
ok("swallowed_structure", "{\"b\": \"he said \"go\" then left\", \"c\": 1}", {"b": "he said \"go\" then left", "c": 1})
ok("swallowed_structure", "{\"b\": \"he said \"go\" then left\", \"c\": 1}", {"b": "he said \"go\" then left", "c": 1}, schema={})

# ---- Two starts of the JSON (issue 31, item 3): the JSON where
# saop-detect(1) finds it, after prose holding quoted words, with or
# without a remark after it, with or without a fence. ----
ENV_R = dict(ENV_NULL, agent_role="researcher", thought="x")
ENV_R_TEXT = json.dumps(ENV_R)
PRE_Q = "Sure, here's an example of a JSON response for the \"Contact Form\" page:\n"
ok("prose", PRE_Q + ENV_R_TEXT + "\nHope this helps!", ENV_R, schema="envelope")
ok("prose", PRE_Q + ENV_R_TEXT, ENV_R, schema="envelope")
ok("prose", PRE_Q + ENV_R_TEXT + "\n", ENV_R)
ok("prose", PRE_Q + "```json\n" + ENV_R_TEXT + "\n```\nHope this helps!", ENV_R, schema="envelope")
ok("prose", PRE_Q + "```json\n" + ENV_R_TEXT + "\n```", ENV_R, schema="envelope")
ok("prose", "<think>The \"form\" wants it.</think>\n" + PRE_Q + ENV_R_TEXT + "\nDone.", ENV_R, schema="envelope")
ok("prose", "The 'a' and \"b\" keys:\n[1, \"two\"]\nThat is \"all\".", [1, "two"])
# Not where detect finds JSON (no '{' beginning a line or after ": "), or
# not complete there: the prose rule, which refuses a quote in prose.
no("prose", "He said \"yes\" and {\"a\": 1}")
no("prose", PRE_Q + "{\"a\": 1} or {\"a\": 2}")

# ---- lead: Python sets; bracketed parts glued to a bare word. ----
ok("python_set", "{'key1', 'key2'}", ["key1", "key2"])
ok("python_set", "{'a', 'b', 'c'}", ["a", "b", "c"])
ok("python_set", "{\"a\", \"b\", \"c\"}", ["a", "b", "c"])
ok("python_set", "{1, 2, 3}", [1, 2, 3])
ok("python_set", "{1, 2}", [1, 2])
ok("python_set", "{'x', 2.5, -1}", ["x", 2.5, -1])
ok("python_set", "{\"tags\": {'red', 'blue'}}", {"tags": ["red", "blue"]})
ok("python_set", "[{'a', 'b'}, {'c', 'd'}]", [["a", "b"], ["c", "d"]])
ok("python_set", "{'a', 'b'}", ["a", "b"], close=True)
ok("python_set", "{'a', 'b'}", ["a", "b"], schema={"type": "array"})
no("python_set", "{'a'}")
no("python_set", "{\"a\", \"b\"}")
no("python_set", "{\"a\", 1}")
no("python_set", "{'a', 'b'")
no("python_set", "{'a', 'b': 1}")
no("python_set", "{'it\"s', 'b'}")
no("python_set", "{'a\\n', 'b'}")
no("python_set", "{01, 2}")
no("python_set", "{'a', b}")
ok("unquoted_string", "{text:words{words in brackets}}", {"text": "words{words in brackets}"})
ok("unquoted_string", "{text:words{words in brackets}m}", {"text": "words{words in brackets}m"})
ok("unquoted_string", "{\"a\": f[x] and g[y], \"b\": 1}", {"a": "f[x] and g[y]", "b": 1})
ok("unquoted_string", "[word[1], 2]", ["word[1]", 2])
no("unquoted_string", "{\"a\": f{x: 1}}")
no("unquoted_string", "{\"a\": f{\"x\": 1}}")
no("unquoted_string", "{\"a\": word {b}}")
no("unquoted_string", "{\"a\": f{x\n}}")
no("unquoted_string", "{\"a\": f{x]}")

# ---- --close: cut answers closed locally. ----
ok("closed", "{\"a\": \"cut", {"a": "cut"}, close=True)
ok("closed", "{\"a\": [1, 2", {"a": [1, 2]}, close=True)
ok("closed", "{\"a\": 1, \"b\":", {"a": 1}, close=True)
ok("closed", "{\"a\": 1, \"b\"", {"a": 1}, close=True)
ok("closed", "{\"a\": 1,", {"a": 1}, close=True)
ok("closed", "[1, 2, 3", [1, 2, 3], close=True)
ok("closed", "[true, fal", [True, False], close=True)
ok("closed", "[1, -", [1], close=True)
ok("closed", "{\"a\": {\"b\": {\"c\": \"deep", {"a": {"b": {"c": "deep"}}}, close=True)
ok("closed", "```json\n{\"a\": \"cut in a fence", {"a": "cut in a fence"}, close=True)
ok("closed", "Here you go: {\"a\": [1, 2", {"a": [1, 2]}, close=True)
ok("closed", "{'a': 'single quoted, cut", {"a": "single quoted, cut"}, close=True)
ok("closed", "{\"a\": 1,, \"b\": [1,", {"a": 1, "b": [1]}, close=True)
ok("closed", "{\"a\": \"x\\u00", {"a": "x"}, close=True)
ok("closed", "{\"a\": True, \"b\": \"y", {"a": True, "b": "y"}, close=True)
ok("closed", json.dumps(ENV_NULL)[:-1], ENV_NULL, close=True)
ok("closed", "{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"reviewer\", \"action\": null, \"thought\": \"I think", dict(ENV_NULL, thought="I think"), close=True)
ok("closed", "{\"a\": 1}", {"a": 1}, close=True)
ok("closed", "{\"a\": 1,}", {"a": 1}, close=True)
no("closed", "{\"a\": \"cut")
no("closed", "{\"action\": {\"tool\": \"sh\", \"parameters\": {\"cmd\": \"rm -rf /tmp/x", close=True)
no("closed", "{\"thought\": \"x\", \"action\": {\"tool\": \"sh\", \"parameters\": {\"cmd\": \"ls", close=True)
no("closed", "{\"arguments\": \"{\\\"cmd\\\": \\\"ls", close=True)
no("closed", "[{\"function\": {\"name\": \"f\", \"x\": [1", close=True)
no("closed", "", close=True)
no("closed", "-", close=True)
no("closed", "Just prose, no JSON", close=True)

# ---- str helper: structure, comments and numbers inside a document. ----
# A key and its colon first in an array: the '{' of a one-member object.
ok("missing_bracket", "[\"key\":\"value\"]", [{"key": "value"}])
ok("missing_bracket", "[ \"key\" : [1, 2] ]", [{"key": [1, 2]}])
ok("missing_bracket", "[\"key\":\"value\"}]", [{"key": "value"}])
ok("missing_bracket", "{'k': ['a': {'b': 1}]}", {"k": [{"a": {"b": 1}}]})
no("missing_bracket", "[\"a\": 1, \"b\": 2]")
no("missing_bracket", "[\"a\": 1 \"b\": 2]")
no("missing_bracket", "[1, \"a\": 2]")
no("missing_bracket", "[{\"a\": 1}, \"b\": 2]")
# An object in an array closed by the next '{' (its '}' missing).
ok("missing_bracket", "[{\"i\":1{\"i\":2}]", [{"i": 1}, {"i": 2}])
ok("missing_bracket", "[{\"i\":1,{\"i\":2}]", [{"i": 1}, {"i": 2}])
ok("missing_bracket", "[\n  {\"a\": \"x\", \"b\": [1]\n  {\"a\": \"y\", \"b\": []}\n]", [{"a": "x", "b": [1]}, {"a": "y", "b": []}])
no("missing_bracket", "[{{]", close=True)
no("missing_bracket", "[{{\"a\": 1}]")
no("number_form", "2e\n")
no("missing_bracket", "{\"a\": 1 {\"b\": 2}}")
# A doubled closing bracket that no open container takes is surplus.
ok("surplus_bracket", "[{\"key\":\"value\"}},{\"key\":\"value\"}]", [{"key": "value"}, {"key": "value"}])
ok("surplus_bracket", "{\"key\": \"value\"}, \"key2\" \"value2\"}", {"key": "value", "key2": "value2"})
ok("mismatched_bracket", "[[1, 2}, 3]", [[1, 2], 3])
ok("surplus_bracket", "[{\"a\": [1]}}]", [{"a": [1]}])
# A pair of braces around a fenced block (in brackets: an array?).
ok("surplus_bracket", "{```\n{\"a\":\"b\"}\n```}", {"a": "b"})
ok("surplus_bracket", "{```json\n{\"a\":\"b\"}\n```}", {"a": "b"})
ok("surplus_bracket", " { ```json\n[1, 2]\n``` } ", [1, 2])
no("surplus_bracket", "[```json\n{\"a\":\"b\"}\n```]")
# A stray word before a key is dropped; after a value it is not.
ok("stray_word", "{\"value_1\": true, COMMENT \"value_2\": \"data\"}", {"value_1": True, "value_2": "data"})
ok("stray_word", "{NOTE 'a': 1}", {"a": 1})
no("stray_word", "{\"value_1\": true, SHOULD_NOT_EXIST \"value_2\": \"data\" AAAA }")
no("stray_word", "{\"name\": \"John\" Smith}")
no("stray_word", "{\"a\": 1, true \"b\": 2}")
no("stray_word", "{\"a\": 1, two words \"b\": 2}")
# A dangling exponent is dropped.
ok("number_form", "{\"key\": 1e }", {"key": 1})
ok("number_form", "[2e+]", [2])
ok("number_form", "[2E-, 3]", [2, 3])
ok("number_form", "[2e,", [2], close=True)
ok("number_form", "[2e ", [2], close=True)
no("number_form", "[2e+x]")
no("number_form", "[-e5]")
no("number_form", "[2e -3]")
no("number_form", "[2e 3]")
# With close: a cut sign, a cut block comment, a closing fence after the cut.
ok("closed", "[- ", [], close=True)
ok("closed", "{\"a\": 1, \"b\": -  ", {"a": 1}, close=True)
ok("comment", "{ \"key\": \"value\" /* comment", {"key": "value"}, close=True)
no("comment", "{ \"key\": \"value\" /* comment")
no("comment", "{\"a\": 1 /* note \"b\": 2", close=True)
ok("code_fence", "{\"key\": \"value, value2\"```", {"key": "value, value2"}, close=True)
ok("code_fence", "{\"a\": [1, 2```\n", {"a": [1, 2]}, close=True)
no("code_fence", "{\"a\": [1, 2```")
# A line comment that took in JSON: the newline may be missing (no).
no("comment", "{ \"key\": { \"key2\": \"value2\" // comment }, \"key3\": \"value3\" }", close=True)
no("comment", "{ \"key\": { \"key2\": \"value2\" # comment }, \"key3\": \"value3\" }", close=True)
# A cut string ending in '+': the string's or a concatenation's?
no("string_concatenation", "\"hello +", close=True)
no("string_concatenation", "[\"hello +]", close=True)

for c in cases:
    sys.stdout.write(json.dumps(c, ensure_ascii=False) + "\n")
sys.stderr.write("%d cases\n" % len(cases))
