#!/usr/bin/env python3
"""fake-llm.py: a scripted LLM endpoint on loopback, for saop's tests.

usage: fake-llm.py --script FILE --port-file FILE [--log FILE]
                   [--fixtures DIR] [--key KEY | --key-env VAR]
                   [--exhausted fail|repeat]
                   [--max-seconds S] [--host 127.0.0.1]
                   [--tls-cert PEM --tls-key PEM]

It listens on HOST, port 0 (a free port), writes the port to --port-file
(whole, by rename) once it listens, and serves one step of --script per
request, in order (see "match").  When the steps run out it answers 500 "script
exhausted" (--exhausted fail, the default: an extra call shows up as a
failure) or repeats the last step (--exhausted repeat).  It stops by itself
after --max-seconds (default 120).  With --tls-cert and --tls-key it
serves HTTPS (a test's self-signed certificate, to check that the client
verifies it).  Python 3 standard library only.

The wire format follows the request's path: .../chat/completions answers
as OpenAI chat completions, .../messages as Anthropic Messages, .../responses
as OpenAI Responses, .../models/M:generateContent and
:streamGenerateContent as Gemini, .../api/chat and .../api/generate as
Ollama native NDJSON.  It answers SSE (chunked
Transfer-Encoding) when the request body says "stream": true and one JSON
body (Content-Length) otherwise; a step's "mode" overrides that.

The script: one JSON object per line; blank lines and lines starting with
'#' are skipped.  Every key is optional:

  "text": "..."        the reply text (default ""); streamed in pieces of
                       "split" characters (default 4)
  "finish": "length"   neutral finish reason: stop (default), length,
                       tool_calls; mapped to the wire (Anthropic: end_turn,
                       max_tokens, tool_use; Ollama done_reason); any other
                       string is sent as it is.  null: the stream ends
                       cleanly with no finish reason at all (no
                       finish_reason, no [DONE], no message_stop, no done)
  "tool": {"name": "f", "arguments": "{\"a\":1}"}
                       also answer one tool call (arguments streamed in
                       pieces like the text)
  "usage": [P, C]      prompt and completion tokens (default [7, pieces])
  "status": 429        status code (default 200); with no "body", a body
                       in the provider's error format is made up
  "error_type": "..."  the error type of that made-up body (default from
                       the status: rate_limit_error, overloaded_error...)
  "message": "..."     its message
  "body": {...}|"..."  the raw response body (an object is JSON-encoded)
  "type": "text/html"  the Content-Type of "body" (default application/json)
  "headers": {"x-should-retry": "false"}   extra response headers
  "retry_after": 2     adds Retry-After: 2
  "delay_ms": 500      wait before the status line
  "drip_ms": 50        wait between SSE events / NDJSON lines
  "comments": 3        SSE: send that many ": keep-alive" comment lines
                       (and padding) first
  "stream_error": {"type": "overloaded_error", "message": "Overloaded"}
                       SSE/NDJSON: after the text, an error inside the 200
                       stream (Anthropic event: error, an OpenAI chunk with a
                       top-level "error", an Ollama {"error": ...} line)
  "cut": 40, "how": "reset"|"close"
                       stop after 40 bytes of the body, then reset the
                       connection (RST, the default) or close it (FIN)
  "refuse": true       read the request and close without answering
  "chunks": "random", "seed": 7
                       serve the body (a fixture, or "body") in pieces cut
                       at random offsets (SSE and NDJSON: chunks of 1 to
                       40 bytes, from that seed)
  "framing": "close"   no Content-Length and no chunks: the body ends when
                       the server closes the connection (with "cut" and
                       "how": "close", a FIN in the middle of an event)
  "fixture": "openai-chat-length.sse"
                       serve that file of --fixtures (default: the
                       recorded answers, tests/fixtures/llm; or an
                       absolute path) raw, with its status
                       and headers from STEM.headers.json when present
                       (Content-Type from the extension otherwise);
                       "headers_from": "x.headers.json" takes them from
                       that file of --fixtures instead
  "mode": "sse"|"json"|"ndjson"   answer in this form whatever was asked
  "check_key": false   do not answer 401 to a wrong key for this step
  "match": "..."       serve this step only to a request whose body (the
                       bytes as sent) contains this string; a request
                       gets the first step not served yet that it
                       matches, so that programs calling at the same
                       time (the stages of a pipeline) each get theirs

With --key (or --key-env VAR: the key read from $VAR, so that it stays off
argv), a request whose key (Authorization: Bearer, x-api-key or
x-goog-api-key; a key= in the query is an error: 400) is
not KEY gets a 401 in the provider's format (unless the step says
"check_key": false); the key itself is never logged.

The log (--log): one JSON line per request, in order:
  {"n": 1, "method": "POST", "path": "/v1/messages",
   "headers": {lower-cased names; authorization / x-api-key /
               x-goog-api-key / x-amz-security-token replaced by
               "<sha256:first 12 hex of the key>", after "Bearer "
               for authorization (an AWS SigV4 authorization keeps
               its form: only the Signature= value is hashed)},
   "key": "ok" | "wrong" | "missing" | "unchecked",
   "body": the parsed JSON body (or the text when it is not JSON),
   "step": the step number served (from 1; 0 when exhausted)}
"""
import argparse
import hashlib
import json
import os
import random
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANTHROPIC_FINISH = {"stop": "end_turn", "length": "max_tokens",
                    "tool_calls": "tool_use"}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error",
               429: "rate_limit_error", 500: "api_error",
               503: "overloaded_error", 529: "overloaded_error"}
GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
                 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS",
                 "tool_calls": "STOP", "refusal": "SAFETY"}
RESPONSES_INCOMPLETE = {"length": "max_output_tokens",
                        "refusal": "content_filter"}
CTYPES = {".sse": "text/event-stream", ".ndjson": "application/x-ndjson",
          ".json": "application/json", ".html": "text/html",
          ".es": "application/vnd.amazon.eventstream"}


class Script:
    """The steps, served in order under a lock."""

    def __init__(self, path, exhausted):
        self.steps = []
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    step = json.loads(line)
                except ValueError as exc:
                    sys.exit("fake-llm: %s:%d: %s" % (path, lineno, exc))
                if not isinstance(step, dict):
                    sys.exit("fake-llm: %s:%d: a step is a JSON object"
                             % (path, lineno))
                self.steps.append(step)
        self.exhausted = exhausted
        self.served = [False] * len(self.steps)
        self.lock = threading.Lock()
        self.count = 0

    def take(self, text):
        """The first step not served yet whose "match" (if any) occurs
        in text, the request body as sent."""
        with self.lock:
            self.count += 1
            n = self.count
            for i, step in enumerate(self.steps):
                if self.served[i]:
                    continue
                m = step.get("match")
                if m is not None and m not in text:
                    continue
                self.served[i] = True
                return n, i + 1, step
            if self.exhausted == "repeat" and self.steps:
                return n, len(self.steps), self.steps[-1]
            return n, 0, None


def pieces(text, size):
    size = max(1, int(size))
    return [text[i:i + size] for i in range(0, len(text), size)] or []


def key_hash(value):
    return "<sha256:%s>" % hashlib.sha256(value.encode()).hexdigest()[:12]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    # ---- plumbing ----

    def wire(self):
        p = self.path.split("?")[0]
        if p.endswith("/messages"):
            return "anthropic"
        if p.endswith("/responses"):
            return "responses"
        if p.endswith(":generateContent") or \
                p.endswith(":streamGenerateContent"):
            return "gemini"
        if p.endswith("/api/chat") or p.endswith("/api/generate"):
            return "ollama"
        return "openai"

    def send_raw(self, data):
        """Send body bytes, honouring the step's cut; False once cut."""
        if self.cut is not None:
            left = self.cut - self.sent
            if left <= 0:
                return False
            if len(data) > left:
                data = data[:left]
            self.wfile.write(data)
            self.wfile.flush()
            self.sent += len(data)
            if self.sent >= self.cut:
                self.do_cut()
                return False
            return True
        self.wfile.write(data)
        self.wfile.flush()
        self.sent += len(data)
        return True

    def do_cut(self):
        how = self.step.get("how", "reset")
        if how == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        self.close_connection = True
        self.cutdone = True
        if how != "reset":
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.connection.close()

    def chunk(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not data:
            return True
        if self.step.get("framing") == "close":
            return self.send_raw(data)
        if self.step.get("chunks") == "random":
            rng = self.rng
            while data:
                n = rng.randint(1, 40)
                piece, data = data[:n], data[n:]
                if not self.send_raw(b"%x\r\n%s\r\n" % (len(piece),
                                                          piece)):
                    return False
            return True
        return self.send_raw(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunks(self):
        """The end of a chunked body (nothing when the close frames it)."""
        if self.step.get("framing") == "close":
            return True
        return self.send_raw(b"0\r\n\r\n")

    def start(self, status, ctype, length=None, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if self.step.get("framing") == "close":
            pass
        elif length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        for k, v in (extra or {}).items():
            self.send_header(k, str(v))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

    def step_headers(self):
        h = dict(self.step.get("headers", {}))
        if "retry_after" in self.step:
            h["Retry-After"] = str(self.step["retry_after"])
        return h

    def send_whole(self, status, ctype, body, extra=None):
        if isinstance(body, str):
            body = body.encode("utf-8")
        if self.step.get("chunks") == "random":
            self.start(status, ctype, None, extra)
            if self.chunk(body):
                self.end_chunks()
            return
        self.start(status, ctype, len(body), extra)
        self.send_raw(body)

    # ---- the request ----

    def do_GET(self):
        self.do_POST()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = raw.decode("utf-8", "replace")
        num, stepno, step = self.server.script.take(
            raw.decode("utf-8", "replace"))
        self.step = step or {}
        self.rng = random.Random(self.step.get("seed", 1))
        self.cut = self.step.get("cut")
        self.sent = 0
        self.cutdone = False
        keystate = self.check_key()
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            if k == "authorization" and v.startswith("Bearer "):
                v = "Bearer " + key_hash(v[7:])
            elif k == "authorization" and v.startswith("AWS4-HMAC-SHA256 "):
                # AWS SigV4: its form kept, the signature hashed.
                head, sep, sig = v.partition("Signature=")
                v = head + sep + key_hash(sig) if sep else key_hash(v)
            elif k in ("authorization", "x-api-key", "x-goog-api-key",
                       "x-amz-security-token"):
                v = key_hash(v)
            headers[k] = v
        self.server.record({"n": num, "method": self.command,
                            "path": self.path, "headers": headers,
                            "key": keystate, "body": body, "step": stepno})
        if step is None:
            self.send_error_body(500, "api_error", "script exhausted")
            return
        if self.step.get("delay_ms"):
            time.sleep(self.step["delay_ms"] / 1000.0)
        if self.step.get("refuse"):
            self.close_connection = True
            self.connection.close()
            return
        if keystate == "wrong" or keystate == "missing":
            if self.step.get("check_key", True):
                self.send_error_body(401, "authentication_error",
                                     "invalid x-api-key")
                return
        self.stream = isinstance(body, dict) and body.get("stream") is True
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def check_key(self):
        want = self.server.key
        if want is None:
            return "unchecked"
        got = self.headers.get("x-api-key")
        if got is None:
            got = self.headers.get("x-goog-api-key")
        if got is None:
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                got = auth[7:]
        if got is None:
            return "missing"
        return "ok" if got == want else "wrong"

    def send_error_body(self, status, etype, message):
        w = self.wire()
        if w == "anthropic":
            b = {"type": "error", "error": {"type": etype,
                                            "message": message}}
        elif w == "gemini":
            b = {"error": {"code": status, "message": message,
                           "status": GEMINI_STATUS.get(status, "UNKNOWN")}}
        elif w == "ollama":
            b = {"error": message}
        else:
            b = {"error": {"message": message, "type": etype,
                           "code": etype if status == 429 else None}}
        self.send_whole(status, "application/json", json.dumps(b),
                        self.step_headers() if self.step else None)

    def answer(self):
        s = self.step
        if "fixture" in s:
            return self.serve_fixture(s["fixture"])
        status = s.get("status", 200)
        if "body" in s:
            b = s["body"]
            if not isinstance(b, str):
                b = json.dumps(b)
            return self.send_whole(status, s.get("type", "application/json"),
                                   b, self.step_headers())
        if status != 200:
            return self.send_error_body(
                status, s.get("error_type", ERROR_TYPES.get(status,
                                                           "api_error")),
                s.get("message", "fake error %d" % status))
        mode = s.get("mode")
        w = self.wire()
        if w == "gemini":
            # Gemini streams by its URL (alt=sse), not by the body.
            self.stream = ":streamGenerateContent" in self.path
            if "key=" in self.path.split("?", 1)[-1]:
                return self.send_error_body(400, "INVALID_ARGUMENT",
                                            "the key is in the URL")
        if mode is None:
            mode = ("ndjson" if w == "ollama" else "sse") if self.stream \
                else "json"
        if mode == "json":
            return self.send_whole(200, "application/json",
                                   json.dumps(self.whole(w)),
                                   self.step_headers())
        if mode == "ndjson":
            return self.send_ndjson()
        return self.send_sse(w)

    def serve_fixture(self, name):
        path = os.path.join(self.server.fixtures, name)
        if os.path.isabs(name):
            path = name
        with open(path, "rb") as f:
            data = f.read()
        stem, ext = os.path.splitext(path)
        status = self.step.get("status", 200)
        extra = {}
        ctype = CTYPES.get(ext, "application/octet-stream")
        hpath = stem + ".headers.json"
        if "headers_from" in self.step:
            hpath = os.path.join(self.server.fixtures,
                                 self.step["headers_from"])
        if os.path.exists(hpath):
            with open(hpath, encoding="utf-8") as f:
                meta = json.load(f)
            status = meta.get("status", status)
            for k, v in meta.get("headers", {}).items():
                if k.lower() in ("content-length", "transfer-encoding",
                                 "connection", "content-encoding",
                                 "date", "server"):
                    continue
                if k.lower() == "content-type":
                    ctype = v
                else:
                    extra[k] = v
        extra.update(self.step_headers())
        if ext == ".sse" or ext == ".ndjson":
            self.start(status, ctype, None, extra)
            for line in data.splitlines(True):
                if not self.chunk(line):
                    return
                if self.step.get("drip_ms"):
                    time.sleep(self.step["drip_ms"] / 1000.0)
            self.end_chunks()
        else:
            self.send_whole(status, ctype, data, extra)

    # ---- the wire formats ----

    def finish_reason(self):
        return self.step.get("finish", "stop")

    def usage(self, npieces):
        u = self.step.get("usage", [7, npieces])
        return u[0], u[1]

    def whole(self, w):
        s = self.step
        text = s.get("text", "")
        fin = self.finish_reason()
        tool = s.get("tool")
        p, c = self.usage(max(1, len(pieces(text, s.get("split", 4)))))
        if w == "anthropic":
            content = []
            if text:
                content.append({"type": "text", "text": text})
            if tool:
                try:
                    inp = json.loads(tool.get("arguments", "{}"))
                except ValueError:
                    inp = {}
                content.append({"type": "tool_use", "id": "toolu_fake1",
                                "name": tool.get("name", "f"),
                                "input": inp})
            return {"id": "msg_fake", "type": "message",
                    "role": "assistant", "model": self.model(),
                    "content": content,
                    "stop_reason": ANTHROPIC_FINISH.get(fin, fin),
                    "stop_sequence": None,
                    "usage": {"input_tokens": p, "output_tokens": c}}
        if w == "responses":
            out = []
            if text:
                out.append({"type": "message", "id": "msg_fake",
                            "status": "completed", "role": "assistant",
                            "content": [{"type": "output_text",
                                         "text": text, "annotations": []}]})
            if tool:
                out.append({"type": "function_call", "id": "fc_fake",
                            "call_id": "call_fake1",
                            "name": tool.get("name", "f"),
                            "arguments": tool.get("arguments", ""),
                            "status": "completed"})
            return self.responses_obj(fin, out, p, c)
        if w == "gemini":
            return self.gemini_chunk(text, tool, fin, p, c)
        if w == "ollama":
            o = {"model": self.model(), "created_at": "2026-01-01T00:00:00Z",
                 "message": {"role": "assistant", "content": text},
                 "done": fin is not None, "prompt_eval_count": p,
                 "eval_count": c}
            if fin is not None:
                o["done_reason"] = fin
            return o
        msg = {"role": "assistant", "content": text if text or not tool
               else None}
        if tool:
            msg["tool_calls"] = [{"id": "call_fake1", "type": "function",
                                  "function": {
                                      "name": tool.get("name", "f"),
                                      "arguments": tool.get("arguments",
                                                            "")}}]
        return {"id": "chatcmpl-fake", "object": "chat.completion",
                "created": 1700000000, "model": self.model(),
                "choices": [{"index": 0, "message": msg,
                             "finish_reason": fin}],
                "usage": {"prompt_tokens": p, "completion_tokens": c,
                          "total_tokens": p + c}}

    def model(self):
        return "fake-model"

    def event(self, data, name=None):
        out = ""
        if name:
            out += "event: %s\n" % name
        out += "data: %s\n\n" % (data if isinstance(data, str)
                                 else json.dumps(data))
        ok = self.chunk(out)
        if ok and self.step.get("drip_ms"):
            time.sleep(self.step["drip_ms"] / 1000.0)
        return ok

    def send_sse(self, w):
        s = self.step
        text = s.get("text", "")
        fin = self.finish_reason()
        tool = s.get("tool")
        parts = pieces(text, s.get("split", 4))
        p, c = self.usage(max(1, len(parts)))
        self.start(200, "text/event-stream", None, self.step_headers())
        for _ in range(int(s.get("comments", 0))):
            if not self.chunk(": keep-alive\n\n"):
                return
        if w == "anthropic":
            ok = self.sse_anthropic(parts, fin, tool, p, c)
        elif w == "responses":
            ok = self.sse_responses(parts, fin, tool, p, c)
        elif w == "gemini":
            ok = self.sse_gemini(parts, fin, tool, p, c)
        else:
            ok = self.sse_openai(parts, fin, tool, p, c)
        if ok:
            self.end_chunks()

    def sse_openai(self, parts, fin, tool, p, c):
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                "created": 1700000000, "model": self.model()}

        def ch(delta, finish=None, **kw):
            d = dict(base)
            d["choices"] = [{"index": 0, "delta": delta,
                             "finish_reason": finish}]
            d.update(kw)
            return self.event(d)

        if not ch({"role": "assistant", "content": ""}):
            return False
        for x in parts:
            if not ch({"content": x}):
                return False
        if tool:
            if not ch({"tool_calls": [{"index": 0, "id": "call_fake1",
                                       "type": "function",
                                       "function": {"name": tool.get(
                                           "name", "f"),
                                           "arguments": ""}}]}):
                return False
            for x in pieces(tool.get("arguments", ""),
                            self.step.get("split", 4)):
                if not ch({"tool_calls": [{"index": 0,
                                           "function": {"arguments": x}}]}):
                    return False
        err = self.step.get("stream_error")
        if err is not None:
            d = dict(base)
            d["error"] = {"code": err.get("code", err.get("type")),
                          "message": err.get("message", "error")}
            d["choices"] = [{"index": 0, "delta": {"content": ""},
                             "finish_reason": "error"}]
            if not self.event(d):
                return False
            return self.event("[DONE]")
        if fin is None:
            return True
        if not ch({}, fin):
            return False
        d = dict(base)
        d["choices"] = []
        d["usage"] = {"prompt_tokens": p, "completion_tokens": c,
                      "total_tokens": p + c}
        if not self.event(d):
            return False
        return self.event("[DONE]")

    def sse_anthropic(self, parts, fin, tool, p, c):
        ev = self.event
        if not ev({"type": "message_start", "message": {
                "id": "msg_fake", "type": "message", "role": "assistant",
                "model": self.model(), "content": [], "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": p, "output_tokens": 1}}},
                "message_start"):
            return False
        if not ev({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}},
                  "content_block_start"):
            return False
        if not ev({"type": "ping"}, "ping"):
            return False
        for x in parts:
            if not ev({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": x}},
                      "content_block_delta"):
                return False
        if not ev({"type": "content_block_stop", "index": 0},
                  "content_block_stop"):
            return False
        if tool:
            if not ev({"type": "content_block_start", "index": 1,
                       "content_block": {"type": "tool_use",
                                         "id": "toolu_fake1",
                                         "name": tool.get("name", "f"),
                                         "input": {}}},
                      "content_block_start"):
                return False
            for x in pieces(tool.get("arguments", ""),
                            self.step.get("split", 4)):
                if not ev({"type": "content_block_delta", "index": 1,
                           "delta": {"type": "input_json_delta",
                                     "partial_json": x}},
                          "content_block_delta"):
                    return False
            if not ev({"type": "content_block_stop", "index": 1},
                      "content_block_stop"):
                return False
        err = self.step.get("stream_error")
        if err is not None:
            return ev({"type": "error", "error": {
                "type": err.get("type", "overloaded_error"),
                "message": err.get("message", "Overloaded")}}, "error")
        if fin is None:
            return True
        if not ev({"type": "message_delta",
                   "delta": {"stop_reason": ANTHROPIC_FINISH.get(fin, fin),
                             "stop_sequence": None},
                   "usage": {"output_tokens": c}}, "message_delta"):
            return False
        return ev({"type": "message_stop"}, "message_stop")

    def responses_obj(self, fin, output, p, c):
        status = "completed"
        inc = None
        if fin is None:
            status = "in_progress"
        elif fin not in ("stop", "tool_calls"):
            status = "incomplete"
            inc = {"reason": RESPONSES_INCOMPLETE.get(fin, fin)}
        return {"id": "resp_fake", "object": "response",
                "created_at": 1700000000, "status": status,
                "error": None, "incomplete_details": inc,
                "model": self.model(), "output": output,
                "usage": {"input_tokens": p, "output_tokens": c,
                          "total_tokens": p + c}}

    def sse_responses(self, parts, fin, tool, p, c):
        ev = self.event

        def e(o):
            return ev(o, o["type"])

        if not e({"type": "response.created",
                  "response": self.responses_obj(None, [], p, c)}):
            return False
        n = 0
        if parts:
            if not e({"type": "response.output_item.added",
                      "output_index": 0, "item": {
                          "type": "message", "id": "msg_fake",
                          "status": "in_progress", "role": "assistant",
                          "content": []}}):
                return False
            for x in parts:
                if not e({"type": "response.output_text.delta",
                          "item_id": "msg_fake", "output_index": 0,
                          "content_index": 0, "delta": x}):
                    return False
            n = 1
        if tool:
            if not e({"type": "response.output_item.added",
                      "output_index": n, "item": {
                          "type": "function_call", "id": "fc_fake",
                          "call_id": "call_fake1",
                          "name": tool.get("name", "f"), "arguments": "",
                          "status": "in_progress"}}):
                return False
            for x in pieces(tool.get("arguments", ""),
                            self.step.get("split", 4)):
                if not e({"type": "response.function_call_arguments.delta",
                          "item_id": "fc_fake", "output_index": n,
                          "delta": x}):
                    return False
        err = self.step.get("stream_error")
        if err is not None:
            return e({"type": "error",
                      "code": err.get("code", err.get("type")),
                      "message": err.get("message", "error"),
                      "param": None})
        if fin is None:
            return True
        kind = "response.completed" if fin in ("stop", "tool_calls") \
            else "response.incomplete"
        return e({"type": kind, "response": self.responses_obj(
            fin, [], p, c)})

    def gemini_chunk(self, text, tool, fin, p, c):
        parts = []
        if text:
            parts.append({"text": text})
        if tool:
            try:
                args = json.loads(tool.get("arguments", "{}"))
            except ValueError:
                args = {}
            parts.append({"functionCall": {"name": tool.get("name", "f"),
                                           "args": args}})
        cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if fin is not None:
            cand["finishReason"] = GEMINI_FINISH.get(fin, fin)
        o = {"candidates": [cand], "modelVersion": self.model(),
             "responseId": "fake"}
        if fin is not None:
            o["usageMetadata"] = {"promptTokenCount": p,
                                  "candidatesTokenCount": c,
                                  "totalTokenCount": p + c}
        return o

    def sse_gemini(self, parts, fin, tool, p, c):
        for i, x in enumerate(parts):
            last = i == len(parts) - 1 and not tool
            if not self.event(self.gemini_chunk(x, None,
                                                fin if last else None,
                                                p, c)):
                return False
        err = self.step.get("stream_error")
        if err is not None:
            return self.event({"error": {
                "code": err.get("code", 503),
                "message": err.get("message", "error"),
                "status": err.get("type", "UNAVAILABLE")}})
        if tool:
            return self.event(self.gemini_chunk("", tool, fin, p, c))
        if not parts:
            return self.event(self.gemini_chunk("", None, fin, p, c))
        return True

    def send_ndjson(self):
        s = self.step
        text = s.get("text", "")
        fin = self.finish_reason()
        parts = pieces(text, s.get("split", 4))
        p, c = self.usage(max(1, len(parts)))
        self.start(200, "application/x-ndjson", None, self.step_headers())
        for x in parts:
            line = {"model": self.model(),
                    "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": x},
                    "done": False}
            if not self.chunk(json.dumps(line) + "\n"):
                return
            if s.get("drip_ms"):
                time.sleep(s["drip_ms"] / 1000.0)
        err = s.get("stream_error")
        if err is not None:
            if not self.chunk(json.dumps({"error": err.get(
                    "message", "error")}) + "\n"):
                return
        elif fin is not None:
            last = {"model": self.model(),
                    "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": ""},
                    "done": True, "done_reason": fin,
                    "prompt_eval_count": p, "eval_count": c}
            if not self.chunk(json.dumps(last) + "\n"):
                return
        self.end_chunks()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def record(self, obj):
        if self.log is None:
            return
        with self.loglock:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(obj, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description="scripted fake LLM endpoint")
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--fixtures",
                    default=os.path.join(os.path.dirname(
                        os.path.abspath(__file__)), "fixtures", "llm"))
    ap.add_argument("--key")
    ap.add_argument("--key-env", metavar="VAR",
                    help="read the key from environment variable VAR")
    ap.add_argument("--exhausted", choices=("fail", "repeat"),
                    default="fail")
    ap.add_argument("--max-seconds", type=float, default=120)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--tls-cert", help="serve HTTPS with this PEM chain")
    ap.add_argument("--tls-key", help="the PEM key of --tls-cert")
    a = ap.parse_args()
    srv = Server((a.host, 0), Handler)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.script = Script(a.script, a.exhausted)
    srv.fixtures = a.fixtures
    srv.key = os.environ.get(a.key_env) if a.key_env else a.key
    srv.log = a.log
    srv.loglock = threading.Lock()
    if a.log:
        open(a.log, "a").close()
    tmpf = a.port_file + ".t"
    with open(tmpf, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmpf, a.port_file)
    timer = threading.Timer(a.max_seconds, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
