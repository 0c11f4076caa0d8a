#!/usr/bin/env python3
"""sigv4-ref.py: AWS Signature Version 4 written apart from lib/llm-sigv4.c,
for tests/unit/check_sigv4 to check it against.

    sigv4-ref.py [--botocore] METHOD URL AMZ_DATE REGION SERVICE ID SECRET
        TOKEN|- BODY

prints the Authorization header's value of the request: URL is as sent
(its path percent-encoded once, as on the wire), the headers signed are
host, x-amz-date and x-amz-security-token (when TOKEN is not "-").  It is
built from AWS's documentation ("Create a signed AWS API request": the
canonical URI is each path segment URI-encoded twice for all services
but S3) with Python's hashlib, hmac and urllib.parse alone.  With
--botocore it asks botocore's SigV4Auth instead (its clock set to
AMZ_DATE), and exits 77 when botocore is not installed.
"""
import hashlib
import hmac
import sys
import urllib.parse


def quote(s, safe):
    """s percent-encoded, every byte but the unreserved and safe."""
    return urllib.parse.quote(s, safe=safe)


def ours(method, url, amz_date, region, service, key_id, secret, token,
         body):
    """The Authorization header, from the documentation."""
    u = urllib.parse.urlsplit(url)
    host = u.hostname
    if u.port is not None and not (u.scheme == "https" and u.port == 443) \
            and not (u.scheme == "http" and u.port == 80):
        host = "%s:%d" % (host, u.port)
    # The path as sent, encoded once more: '%' becomes '%25'.
    path = quote(u.path or "/", "/~")
    params = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
    query = "&".join("%s=%s" % (quote(k, "~"), quote(v, "~"))
                     for k, v in sorted(params))
    headers = {"host": host, "x-amz-date": amz_date}
    if token is not None:
        headers["x-amz-security-token"] = token
    names = sorted(headers)
    canonical = "\n".join([
        method, path, query,
        "".join("%s:%s\n" % (n, headers[n].strip()) for n in names),
        ";".join(names),
        hashlib.sha256(body).hexdigest()])
    date = amz_date[:8]
    scope = "%s/%s/%s/aws4_request" % (date, region, service)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    return "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, " \
        "Signature=%s" % (key_id, scope, ";".join(names), sig)


def botocore_s(method, url, amz_date, region, service, key_id, secret,
               token, body):
    """The Authorization header as botocore's SigV4Auth makes it."""
    import datetime
    try:
        import botocore.auth
        import botocore.awsrequest
        import botocore.credentials
    except ImportError:
        sys.exit(77)
    when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *a, **k: when
    req = botocore.awsrequest.AWSRequest(method=method, url=url, data=body)
    cred = botocore.credentials.Credentials(key_id, secret, token)
    botocore.auth.SigV4Auth(cred, service, region).add_auth(req)
    return req.headers["Authorization"]


def main():
    args = sys.argv[1:]
    use_botocore = args[:1] == ["--botocore"]
    if use_botocore:
        args = args[1:]
    if len(args) != 9:
        sys.exit(__doc__)
    method, url, amz_date, region, service, key_id, secret, token, body = \
        args
    token = None if token == "-" else token
    f = botocore_s if use_botocore else ours
    print(f(method, url, amz_date, region, service, key_id, secret, token,
            body.encode()))


main()
