# A stand-in for the front door of Amazon OpenSearch Service, for tests on a machine without AWS: every
# request's AWS Signature Version 4 is checked with botocore (AWS's own Python implementation, independent
# of the JavaScript signers near-dup uses), and its x-amz-content-sha256 against the body as received; a
# request that passes goes on to a real cluster as one user (as the service maps an IAM identity to a
# role), one that fails is answered 403 as AWS answers it. GET /__sigv4/stats (unsigned) tells what was
# checked: counts, the failures' reasons, and each request's method and path.
#
# Usage: python sigv4_check.py --upstream URL [--ca FILE] --region R --service es|aoss
# The credentials to check against come from NDSIG_ACCESS_KEY_ID, NDSIG_SECRET_ACCESS_KEY, NDSIG_SESSION_TOKEN;
# the upstream user from NDSIG_UPSTREAM_USER and NDSIG_UPSTREAM_PASSWORD. Prints "listening PORT" when ready.
import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AUTH = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$")


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.checked = 0
        self.failed = 0
        self.failures = []
        self.requests = []

    def record(self, method, path, reason):
        with self.lock:
            self.checked += 1
            self.requests.append(f"{method} {path}")
            if reason:
                self.failed += 1
                if len(self.failures) < 20:
                    self.failures.append(f"{method} {path}: {reason}")

    def snapshot(self):
        with self.lock:
            return {"checked": self.checked, "failed": self.failed, "failures": list(self.failures), "requests": list(self.requests)}


def check_signature(settings, method, raw_path, headers, body):
    """None when the request is signed right for these credentials, region and service; else why not."""
    match = AUTH.match(headers.get("authorization", ""))
    if not match:
        return "no AWS4-HMAC-SHA256 Authorization header"
    key_id, day, region, service, signed_names, signature = match.groups()
    if key_id != settings.key_id:
        return f"signed with access key {key_id}"
    if (region, service) != (settings.region, settings.service):
        return f"signed for {region}/{service}"
    names = signed_names.split(";")
    for needed in ("host", "x-amz-date", "x-amz-content-sha256"):
        if needed not in names:
            return f"{needed} is not signed"
    if headers.get("x-amz-content-sha256") != hashlib.sha256(body).hexdigest():
        return "x-amz-content-sha256 is not the SHA-256 of the body received"
    if not headers.get("x-amz-date", "").startswith(day):
        return "x-amz-date is not the credential scope's day"
    path, _, query = raw_path.partition("?")
    request = AWSRequest(method=method, url=f"http://{headers['host']}{path}", data=body, params=parse_qsl(query, keep_blank_values=True))
    for name in names:
        request.headers[name] = headers.get(name, "")
    request.context["timestamp"] = headers["x-amz-date"]
    auth = SigV4Auth(Credentials(settings.key_id, settings.secret, settings.token), service, region)
    canonical = auth.canonical_request(request)
    expected = auth.signature(auth.string_to_sign(request, canonical), request)
    if expected != signature:
        return "signature does not match (canonical request as botocore reads it: " + canonical.replace("\n", "\\n")[:600] + ")"
    return None


def make_handler(settings, stats):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def body(self):
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("content-length") or 0))

        def answer(self, status, payload, content_type="application/json"):
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def handle_any(self):
            body = self.body()
            if self.path == "/__sigv4/stats":
                return self.answer(200, stats.snapshot())
            headers = {k.lower(): v for k, v in self.headers.items()}
            reason = check_signature(settings, self.command, self.path, headers, body)
            stats.record(self.command, self.path, reason)
            if reason:
                return self.answer(403, {"message": f"The request signature we calculated does not match the signature you provided ({reason})"})
            self.forward(body, headers)

        def forward(self, body, headers):
            target = urlsplit(settings.upstream)
            if target.scheme == "https":
                context = ssl.create_default_context(cafile=settings.ca)
                connection = http.client.HTTPSConnection(target.hostname, target.port, context=context, timeout=120)
            else:
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
            sent = {k: v for k, v in headers.items() if k not in ("authorization", "host", "connection", "transfer-encoding") and not k.startswith("x-amz-")}
            sent["content-length"] = str(len(body))
            if settings.user:
                sent["authorization"] = "Basic " + base64.b64encode(f"{settings.user}:{settings.password}".encode()).decode()
            connection.request(self.command, self.path, body=body if body or self.command not in ("GET", "HEAD") else None, headers=sent)
            response = connection.getresponse()
            data = response.read()
            connection.close()
            self.answer(response.status, data, response.getheader("content-type", "application/json"))

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--ca")
    parser.add_argument("--region", required=True)
    parser.add_argument("--service", required=True)
    settings = parser.parse_args()
    settings.key_id = os.environ["NDSIG_ACCESS_KEY_ID"]
    settings.secret = os.environ["NDSIG_SECRET_ACCESS_KEY"]
    settings.token = os.environ.get("NDSIG_SESSION_TOKEN") or None
    settings.user = os.environ.get("NDSIG_UPSTREAM_USER")
    settings.password = os.environ.get("NDSIG_UPSTREAM_PASSWORD")
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(settings, Stats()))
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
