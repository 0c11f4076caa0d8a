#!/usr/bin/env python3
"""standin-llm.py: a model stand-in that carries on from what it is shown.

usage: standin-llm.py --answers FILE --port-file FILE [--chars N]
                      [--resend] [--first-turn] [--no-usage] [--log FILE]
                      [--max-seconds S] [--host 127.0.0.1]

It knows the whole intended answers (--answers: one JSON string per line,
each the full text a model would write) and behaves like a real model
under max_tokens: it finds the partial output in the request, picks the
answer that begins with it, and answers with at most N characters (code
points, --chars, default 400) of what follows; finish "length" while the
answer goes on, "stop" at its end.  It listens on a free port of HOST and
writes the port to --port-file once it listens; it stops by itself after
--max-seconds (default 120).  Python 3 standard library only.

Where it finds the partial output (what saop-resume sends):
  prefill   the last message is the assistant's: its text is the partial
            output (trailing white space stripped, as the client sends it)
  user      the last user message holds "Your partial output so far:"
            followed by the partial output, to the end of the message
  tail      the last user message holds "Last valid token: T" and maybe
            "Your output after it so far:" followed by R: the answer's
            text T + R is looked for; the first place it occurs counts
            (tests use answers where it occurs once)

--first-turn: a request that shows no partial output (an agent's first
call, what saop-suspend sends) starts the first answer, as form "first";
without it such a request gets a 400.

--resend: when the partial output ends inside a string, send that string
again from its opening quote (then the next N characters after the
partial output), as a model that restarts the open token does.

--manner M: how it carries on (one manner, honestly otherwise):
  exact             from the cut (the default)
  repeat:K          the last K characters of the partial output again
  restart           the open token again from its start (a string from
                    its quote, a number or literal from its first byte)
  restart-noquote   an open string again without its quote
  blank             two blank lines first
(--resend is restart for strings only.)  A request that asks once more
after an answer read two ways ("Your last continuation could be read two
ways", after the last valid token; the partial output still ends the
turn) is answered in the same manner.

Wire formats: the request's path says which: .../chat/completions answers
as OpenAI chat completions, .../messages as Anthropic Messages; SSE
(chunked) when the body says "stream": true, one JSON body otherwise.
Usage: prompt tokens = request body bytes // 4, completion tokens =
ceil(text bytes / 4); --no-usage reports none.

The log (--log): one JSON line per request: {"n", "wire", "form"
("prefill", "user", "tail"), "partial_bytes", "at" (character offset in
the answer where the reply starts), "text" (the reply), "text_bytes",
"turn_bytes" (bytes of the resume turns: the last user message and the
assistant prefill), "prompt_tokens", "completion_tokens" (null with
--no-usage), "finish"}.  A request it cannot place gets a 400 and a log
line with "error".
"""
import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PARTIAL_LABEL = "\n\nYour partial output so far:\n\n"
AGAIN_LABEL = "\n\nYour last continuation could be read two ways."
TAIL_LABEL = "\n\nYour output after it so far:\n\n"
TOKEN_LABEL = "\n\nLast valid token: "


def text_of(content):
    """The text of a message's content: a string or text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content
                       if isinstance(b, dict))
    return ""


def open_token_start(s):
    """Where the string, number or literal that s ends inside starts, or
    None when s ends between tokens."""
    q = open_string_start(s)
    if q is not None:
        return q
    i = len(s)
    while i > 0 and (s[i - 1].isalnum() or s[i - 1] in "+-."):
        i -= 1
    return i if i < len(s) else None


def open_string_start(s):
    """Where the string that s ends inside opens, or None."""
    in_str, esc, start = False, False, None
    for i, c in enumerate(s):
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str, start = True, i
    return start if in_str else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "standin-llm/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def chunk(self, data):
        data = data.encode("utf-8")
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def event(self, obj, name=None):
        out = "event: %s\n" % name if name else ""
        out += "data: %s\n\n" % (obj if isinstance(obj, str)
                                 else json.dumps(obj))
        self.chunk(out)

    def reply(self, status, obj):
        body = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def place(self, body):
        """(form, partial shown, where the reply starts, answer) or an
        error string."""
        msgs = body.get("messages") or []
        if not msgs:
            return "no messages"
        last = msgs[-1]
        answers = self.server.answers
        if last.get("role") == "assistant":
            form, partial = "prefill", text_of(last.get("content"))
            user = text_of(msgs[-2].get("content")) if len(msgs) > 1 else ""
        else:
            user = text_of(last.get("content"))
            if PARTIAL_LABEL in user:
                form = "user"
                partial = user.split(PARTIAL_LABEL, 1)[1]
            elif TOKEN_LABEL in user:
                form = "tail"
                rest = user.split(TOKEN_LABEL, 1)[1]
                tok, _, after = rest.partition(TAIL_LABEL)
                # Asked once more: the note comes after the token.
                tok = tok.split(AGAIN_LABEL, 1)[0]
                tail = tok + after
                for a in answers:
                    i = a.find(tail)
                    if i >= 0:
                        return form, tail, i + len(tail), a, user, ""
                return "tail %r is in no answer" % tail[-80:]
            elif self.server.first_turn:
                form, partial = "first", ""
            else:
                return "no partial output in the request"
        for a in answers:
            if a.startswith(partial):
                return form, partial, len(partial), a, user, \
                    last.get("content") if form == "prefill" else ""
        return "%s: no answer begins with %r" % (form, partial[-80:])

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        wire = "anthropic" if self.path.split("?")[0].endswith(
            "/messages") else "openai"
        with self.server.lock:
            self.server.n += 1
            num = self.server.n
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = {}
        placed = self.place(body) if isinstance(body, dict) else "not JSON"
        if isinstance(placed, str):
            self.server.record({"n": num, "wire": wire, "error": placed})
            self.reply(400, {"error": {"type": "invalid_request_error",
                                       "message": placed}})
            return
        form, partial, at, answer, user, prefill = placed
        start, lead = at, ""
        manner = self.server.manner
        if self.server.resend and form != "tail":
            q = open_string_start(partial)
            if q is not None:
                start = q
        elif form != "tail" and manner.startswith("repeat:"):
            start = max(0, at - int(manner.split(":", 1)[1]))
        elif form != "tail" and manner in ("restart", "restart-noquote"):
            q = open_token_start(partial)
            if q is not None and (manner == "restart" or
                                  partial[q] == '"'):
                start = q + (manner == "restart-noquote")
        elif manner == "blank":
            lead = "\n\n"
        end = min(len(answer), at + self.server.chars)
        text = lead + answer[start:end]
        fin = "length" if end < len(answer) else "stop"
        tb = len(text.encode("utf-8"))
        if self.server.usage:
            p, c = len(raw) // 4, (tb + 3) // 4
        else:
            p = c = None
        self.server.record({
            "n": num, "wire": wire, "form": form,
            "partial_bytes": len(partial.encode("utf-8")), "at": at,
            "text": text, "text_bytes": tb,
            "turn_bytes": len(user.encode("utf-8")) +
            len(text_of(prefill).encode("utf-8")),
            "prompt_tokens": p, "completion_tokens": c, "finish": fin})
        if body.get("stream") is True:
            self.sse(wire, text, fin, p, c)
        else:
            self.whole(wire, text, fin, p, c)

    def whole(self, wire, text, fin, p, c):
        if wire == "anthropic":
            obj = {"id": "msg_standin", "type": "message",
                   "role": "assistant", "model": "standin",
                   "content": [{"type": "text", "text": text}],
                   "stop_reason": "max_tokens" if fin == "length"
                   else "end_turn", "stop_sequence": None}
            if p is not None:
                obj["usage"] = {"input_tokens": p, "output_tokens": c}
        else:
            obj = {"id": "chatcmpl-standin", "object": "chat.completion",
                   "model": "standin",
                   "choices": [{"index": 0, "message": {
                       "role": "assistant", "content": text},
                       "finish_reason": fin}]}
            if p is not None:
                obj["usage"] = {"prompt_tokens": p, "completion_tokens": c,
                                "total_tokens": p + c}
        self.reply(200, obj)

    def sse(self, wire, text, fin, p, c):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        parts = [text[i:i + 16] for i in range(0, len(text), 16)]
        if wire == "anthropic":
            start = {"id": "msg_standin", "type": "message",
                     "role": "assistant", "model": "standin",
                     "content": [], "stop_reason": None,
                     "stop_sequence": None}
            if p is not None:
                start["usage"] = {"input_tokens": p, "output_tokens": 1}
            self.event({"type": "message_start", "message": start},
                       "message_start")
            self.event({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}},
                       "content_block_start")
            for x in parts:
                self.event({"type": "content_block_delta", "index": 0,
                            "delta": {"type": "text_delta", "text": x}},
                           "content_block_delta")
            self.event({"type": "content_block_stop", "index": 0},
                       "content_block_stop")
            delta = {"type": "message_delta",
                     "delta": {"stop_reason": "max_tokens"
                               if fin == "length" else "end_turn",
                               "stop_sequence": None}}
            if c is not None:
                delta["usage"] = {"output_tokens": c}
            self.event(delta, "message_delta")
            self.event({"type": "message_stop"}, "message_stop")
        else:
            base = {"id": "chatcmpl-standin",
                    "object": "chat.completion.chunk", "model": "standin"}

            def ch(delta, finish=None):
                d = dict(base)
                d["choices"] = [{"index": 0, "delta": delta,
                                 "finish_reason": finish}]
                self.event(d)
            ch({"role": "assistant", "content": ""})
            for x in parts:
                ch({"content": x})
            ch({}, fin)
            if p is not None:
                d = dict(base)
                d["choices"] = []
                d["usage"] = {"prompt_tokens": p, "completion_tokens": c,
                              "total_tokens": p + c}
                self.event(d)
            self.event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def record(self, obj):
        if self.log is None:
            return
        with self.lock:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(obj, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description="a model stand-in")
    ap.add_argument("--answers", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--chars", type=int, default=400)
    ap.add_argument("--resend", action="store_true")
    ap.add_argument("--first-turn", action="store_true")
    ap.add_argument("--manner", default="exact")
    ap.add_argument("--no-usage", action="store_true")
    ap.add_argument("--log")
    ap.add_argument("--max-seconds", type=float, default=120)
    ap.add_argument("--host", default="127.0.0.1")
    a = ap.parse_args()
    srv = Server((a.host, 0), Handler)
    with open(a.answers, encoding="utf-8") as f:
        srv.answers = [json.loads(x) for x in f if x.strip()]
    srv.chars = a.chars
    srv.resend = a.resend
    srv.first_turn = a.first_turn
    srv.manner = a.manner
    srv.usage = not a.no_usage
    srv.log = a.log
    srv.lock = threading.Lock()
    srv.n = 0
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
